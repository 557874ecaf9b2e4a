"""What a plugin's factory receives: a narrow, frozen view of the running core.

    def create(ctx: PluginContext) -> MyAdapter:
        settings = ctx.settings_as(MySettings)       # its own environment settings
        return MyAdapter(ctx.commands, ctx.desk, settings)

Everything is handed in; nothing is global. The same context type serves `strikebot run`
and a plugin's own CLI commands (`plugin_context`). A plugin reads the store through
`reads()` only; `store` is the core's (a test says no adapter touches it).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import time
from typing import Any, TypeVar

from bot.audiences import Sites
from bot.channels.webhooks import AddressPolicy, Webhooks, parse_networks
from bot.clock import Clock
from bot.commands import Commands
from bot.config import DeliverySection, Settings, StrikeConfig, clients_for
from bot.delivery.dispatcher import Dispatcher
from bot.delivery.leadership import Leadership, leadership_for, shard_lock_key
from bot.editorial.admin import Admin
from bot.editorial.desk import Desk
from bot.editorial.reach import Reach, cost_sections, paces, reach
from bot.metrics import Metrics
from bot.models import Campaign, Update
from bot.network import Clients
from bot.people.preferences import Preferences
from bot.people.sign_in import SignIn
from bot.people.signups import SignUps, signups_for
from bot.plugins import AdminRule, Plugin, Plugins, PluginSettings, Section
from bot.plugins.admins import AdminList
from bot.plugins.outbound import Adapter, HealthBoard
from bot.runtime.board import Board
from bot.store import Store
from bot.store.content import PublicVersion, watch_public_version
from bot.store.health import StoreHealth, probe
from bot.store.reads import Reads

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class PluginContext:
    """One plugin's settings and sections, and the core parts it may use."""

    plugin: Plugin
    settings: PluginSettings
    section: Section | None
    delivery: Section | None
    admin_rule: AdminRule
    store: Store
    commands: Commands
    admin: Admin
    campaign: Campaign
    clock: Clock
    metrics: Metrics = field(default_factory=Metrics)
    health: HealthBoard = field(default_factory=HealthBoard)
    signups: SignUps | None = None  # people signing up for e-mail and text (bot.signups)

    @asynccontextmanager
    async def reads(self) -> AsyncIterator[Reads]:
        """One read-only transaction, through which a plugin reads the store (`Reads`)."""
        async with self.store.read() as tx:
            yield tx

    @property
    def public(self) -> PublicVersion:
        """The public content's version: what a cached page or feed depends on."""
        return self.store.public

    def watch_public(self, stop: asyncio.Event) -> Coroutine[Any, Any, None]:
        """Hear of public changes other processes commit until `stop` (the web plugin's)."""
        return watch_public_version(self.store, stop)

    async def store_health(self) -> StoreHealth:
        """Can the store be read, and written (`bot.store.health`)? For /healthz."""
        return await probe(self.store, self.clock)

    @property
    def desk(self) -> Desk:
        """The editorial desk every admin surface goes through (`bot.editorial.desk`)."""
        return self.commands.desk

    async def first_time(self, key: str) -> bool:
        """True the first time this plugin sees `key` (an event's id), for one instance
        only: a platform's retry, or one event handed to several sessions, is handled
        once. The ids are forgotten after a day (`bot.runtime.housekeeping`)."""
        async with self.store.write() as tx:
            return await tx.first_time_seen(self.plugin.name, key[:128], self.clock())

    @property
    def sites(self) -> Sites:
        """The campaign's sites and their news (`bot.audiences`)."""
        return Sites(self.store, self.admin.admins, self.clock, languages=self.campaign.languages)

    async def reach(self, update: Update) -> Reach:
        """How far `update` would go if posted now: chat channels, e-mails, text segments
        (for a preview; see `bot.editorial.reach`)."""
        return await reach(
            self.store,
            self.campaign,
            update,
            sections=self.commands.cost_sections,
            paces=self.commands.desk.paces,
        )

    @property
    def board(self) -> Board:
        """What the web desk's screens read beside the desk (`bot.runtime.board`)."""
        return Board(
            self.store,
            self.campaign,
            self.clock,
            self.desk.plugins,
            self.commands.cost_sections,
            self.signups,
            self.commands.default_briefing_time,
        )

    def sign_in(self) -> SignIn:
        """The web desk's door for this plugin's people (`bot.people.sign_in`): build it
        once, it counts each client's attempts in memory."""
        return SignIn(self.store, self.people, self.clock, platform=self.plugin.name)

    @property
    def preferences(self) -> Preferences:
        """A person's own preferences behind their signed link (`bot.people.preferences`)."""
        return Preferences(self.people)

    @property
    def people(self) -> SignUps:
        """The sign-up use cases shared by every plugin (one instance per process)."""
        if self.signups is None:
            raise RuntimeError("this plugin context was built without sign-ups")
        return self.signups

    webhook_policy: AddressPolicy = field(default_factory=AddressPolicy)
    # Whose X-Forwarded-For is believed (`[server] trusted_proxies`): who a web client is.
    clients: Clients = field(default_factory=Clients)
    delivery_settings: DeliverySection = field(default_factory=DeliverySection)

    def leadership(self, unit: int) -> Leadership:
        """The lock that makes one instance of all run this plugin's `unit` (a gateway
        shard): see `bot.delivery.leadership`."""
        return leadership_for(self.store, shard_lock_key(self.plugin.name, unit))

    def deliverer(self, adapter: Adapter, worker_id: str) -> Dispatcher:
        """A dispatcher for this plugin's deliveries only, run by a command of the plugin's
        own (`strikebot console` shows console deliveries as they go out)."""
        return Dispatcher(
            self.store,
            {self.plugin.name: adapter},
            self.campaign,
            self.clock,
            settings=self.delivery_settings,
            metrics=self.metrics,
            worker_id=worker_id,
        )

    @property
    def admins(self) -> AdminList:
        """Who is an admin, on every platform (an actor from this one is checked here)."""
        return self.admin.admins

    @property
    def webhooks(self) -> Webhooks:
        """The webhook endpoint use cases (`[webhooks]` in the campaign file applied)."""
        return Webhooks(self.store, self.campaign, self.admins, self.clock, self.webhook_policy)

    def settings_as(self, kind: type[T]) -> T:
        return _as(self.settings, kind, "settings")

    def section_as(self, kind: type[T]) -> T:
        return _as(self.section, kind, "section")

    def delivery_as(self, kind: type[T]) -> T:
        return _as(self.delivery, kind, "delivery section")

    def admin_rule_as(self, kind: type[T]) -> T:
        return _as(self.admin_rule, kind, "admin rule")


def _as(value: object, kind: type[T], what: str) -> T:
    if not isinstance(value, kind):
        raise TypeError(f"the plugin's {what} is a {type(value).__name__}, not {kind.__name__}")
    return value


def commands_for(
    config: StrikeConfig,
    store: Store,
    admin: Admin,
    clock: Clock,
    metrics: Metrics,
    plugins: Plugins | None = None,
) -> Commands:
    """The commands as every surface answers them, for this campaign file."""
    return Commands(
        store,
        admin.campaign,
        admin,
        clock,
        metrics=metrics,
        default_briefing_time=time.fromisoformat(config.briefings.default_time),
        cost_sections=cost_sections(config, plugins),
        paces=paces(config, plugins),
    )


def plugin_context(
    plugin: Plugin,
    settings: Settings,
    config: StrikeConfig,
    *,
    store: Store,
    admin: Admin,
    clock: Clock,
    metrics: Metrics | None = None,
    health: HealthBoard | None = None,
    commands: Commands | None = None,
    signups: SignUps | None = None,
) -> PluginContext:
    """The context for `plugin` from the loaded settings and campaign file."""
    parts = config.plugin_config(plugin.name)
    campaign = admin.campaign
    metrics = metrics or Metrics()
    if commands is None:
        commands = commands_for(config, store, admin, clock, metrics)
    return PluginContext(
        plugin=plugin,
        settings=settings.plugin(plugin),
        section=parts.section,
        delivery=parts.delivery,
        admin_rule=parts.admins,
        store=store,
        commands=commands,
        admin=admin,
        campaign=campaign,
        clock=clock,
        metrics=metrics,
        health=health or HealthBoard(),
        signups=signups or signups_for(store, config, clock),
        webhook_policy=AddressPolicy(
            allow_private=config.webhooks.allow_private,
            allowed_networks=parse_networks(config.webhooks.allowed_networks),
            disable_after_hours=config.webhooks.disable_after_hours,
        ),
        delivery_settings=config.delivery,
        clients=clients_for(settings, config),
    )
