"""`DiscordAdapter`: the Discord side of strikebot, behind `bot.ports.Adapter`.

Two independent halves:
- outbound (`send` / `edit` / `delete`): REST only, through `RestSender`, so the
  dispatcher delivers whether or not the gateway is connected;
- inbound, two ways that can run together:
  - the Interactions Endpoint URL (`POST /discord/interactions`, with DISCORD_PUBLIC_KEY):
    any instance answers any interaction (`adapters.discord._http_interactions`);
  - the gateway: one instance at a time holds each shard's session (a lock in the store,
    `bot.ports.shard_lock_key`, taken by a background election every `election_seconds`).
    The holder logs a `StrikeClient` in, syncs the command tree to the configured guilds,
    and keeps the gateway connected; discord.py resumes dropped sessions, and if the client
    itself dies (e.g. Discord unreachable at start, or /gateway/bot answering 5xx) a new one
    is built after a backoff that doubles with each failure in a row, with jitter, up to
    minutes (`gateway_retry_delay`); only a session that came up resets it. When
    the holder dies its lock goes with its connection and a standby connects instead.
  Either way each interaction is claimed in the store before it is handled, so it is handled
  once however many sessions or requests bring it. Drafts live in the store; handlers and
  health live here, so they survive rebuilt clients.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Callable, Mapping
from datetime import datetime

import discord
from aiohttp import web

from adapters.discord._client import GatewayHealth, StrikeClient
from adapters.discord._endpoints import EndpointOverride
from adapters.discord._http_interactions import INTERACTIONS_PATH, InteractionsEndpoint
from adapters.discord._interactions import Handlers
from adapters.discord._outbound import RestSender, mark
from adapters.discord._posting import DraftButton
from adapters.discord._render import render_embeds
from adapters.discord._settings import (
    NAME,
    DiscordDelivery,
    DiscordSection,
    DiscordSettings,
)
from adapters.discord._tree import CatalogueDescriptions, build_group
from bot.ports import (
    ChannelRef,
    ConfigError,
    Leadership,
    OutboundMessage,
    Pacing,
    PluginContext,
)

log = logging.getLogger("strikebot.discord")

RETRY_BASE = 1.0  # seconds before logging in again after the first failure
RETRY_CAP = 240.0  # the longest wait before jitter (up to half as long again: 6 minutes)
STOP_WAIT = 0.5


def gateway_retry_delay(failures: int, rng: random.Random) -> float:
    """Seconds before logging in again after `failures` failed tries in a row: 1, 2, 4...
    up to `RETRY_CAP`, each made up to half as long again at random, so that many bots
    (or instances) cut off together do not come back together."""
    base = min(RETRY_CAP, RETRY_BASE * float(2 ** max(failures - 1, 0)))
    return base * rng.uniform(1.0, 1.5)


def build_client(
    handlers: Handlers,
    health: GatewayHealth,
    *,
    gateway_override: bool,
    guild_ready_timeout: float = 2.0,
    shard_ids: list[int] | None = None,
    shard_count: int | None = None,
) -> StrikeClient:
    """A client with the `/strike` tree and the preview buttons registered, handling each
    interaction once across sessions and instances."""
    shards: dict[str, object] = {}
    if shard_ids is not None:
        shards = {"shard_ids": shard_ids, "shard_count": shard_count}
    client = StrikeClient(
        health,
        gateway_override=gateway_override,
        guild_ready_timeout=guild_ready_timeout,
        **shards,
    )
    client.handle_interactions_once(handlers)
    client.handlers = handlers
    client.tree.handlers = handlers
    client.tree.add_command(build_group(handlers, handlers.ctx.campaign.languages))
    client.add_dynamic_items(DraftButton)
    return client


async def sync_commands(
    client: StrikeClient, guild_ids: list[str], *, global_: bool = False
) -> dict[str, str]:
    """Push the command tree: to each guild (instant) and, on request, globally (Discord
    may take up to an hour to show global changes). Returns where → "synced" or the error."""
    await client.tree.set_translator(CatalogueDescriptions())
    results: dict[str, str] = {}
    targets: list[discord.Object | None] = [discord.Object(int(g)) for g in guild_ids]
    if global_:
        targets.append(None)
    for guild in targets:
        where = "global" if guild is None else str(guild.id)
        try:
            if guild is not None:
                client.tree.copy_global_to(guild=guild)
            commands = await client.tree.sync(guild=guild)
            results[where] = f"synced {len(commands)} command(s)"
        except discord.Forbidden:
            results[where] = (
                "missing access: invite the bot to this server with the applications.commands "
                "scope (docs/platforms.md, Discord)"
            )
        except discord.HTTPException as exc:
            results[where] = f"failed ({exc.status} {exc.text or ''})".strip()
        log.info("Discord command sync %s: %s", where, results[where])
    return results


class DiscordAdapter:
    """Slash commands and deliveries on Discord. Built by `strikebot run` (through the
    plugin) when DISCORD_TOKEN is set."""

    platform = NAME

    def __init__(
        self,
        ctx: PluginContext,
        *,
        pacing: Pacing | None = None,
        request_timeout: float = 25.0,
        defer_after: float = 1.5,
        guild_ready_timeout: float = 2.0,
        election_seconds: float = 1.0,
        answer_within: float = 2.5,
        rng: random.Random | None = None,
    ) -> None:
        settings = ctx.settings_as(DiscordSettings)
        if settings.token is None:
            raise ConfigError(
                "DISCORD_TOKEN is not set. Put the bot token from the Discord Developer Portal "
                "in DISCORD_TOKEN (docs/platforms.md, Discord)."
            )
        token = settings.token.get_secret_value()
        self._token = token
        self.ctx = ctx
        self.commands = ctx.commands
        self.section = ctx.section_as(DiscordSection)
        self._endpoints = EndpointOverride(settings.api_base, settings.gateway_url)
        self._health = GatewayHealth(clock=ctx.clock)
        try:
            self._shards = settings.shards()
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        self._shard_count = settings.shard_count
        self.election_seconds = election_seconds
        self.handlers = Handlers(ctx, defer_after=defer_after)
        delivery = ctx.delivery_as(DiscordDelivery)
        self._pacing = pacing or delivery.pacing()
        self._rest = RestSender(
            token,
            request_timeout=request_timeout,
            global_per_second=self._pacing.global_per_second,
            global_limit=delivery.discord_global_limit,
            burst=self._pacing.burst,
        )
        self._guild_ready_timeout = guild_ready_timeout
        self._last_rendered: tuple[OutboundMessage, list[discord.Embed]] | None = None
        self.client: StrikeClient | None = None
        self.holding: tuple[int, ...] | None = None  # the shards whose session runs here
        # Each shard's lock (None: all shards as one unit), while the election runs.
        self.gateway_locks: dict[int | None, Leadership] = {}
        self._task: asyncio.Task[None] | None = None
        self._login: asyncio.Task[None] | None = None
        self._gateway: asyncio.Task[None] | None = None
        self._gateway_stop = asyncio.Event()
        self._stop_requested = asyncio.Event()
        self._rng = rng or random.Random()
        self.endpoint: InteractionsEndpoint | None = None
        if settings.public_key:
            try:
                self.endpoint = InteractionsEndpoint(
                    settings.public_key,
                    self.handlers,
                    self._build_client(),
                    answer_within=answer_within,
                )
            except ValueError as exc:
                raise ConfigError(str(exc)) from None

    # ------------------------------------------------------------------ Adapter

    @property
    def pacing(self) -> Pacing:
        return self._pacing

    @property
    def call_timeout(self) -> float:
        """`send` and `edit` give up after this long themselves (`RestSender`'s request
        timeout, then a `TransientDeliveryError` in doubt): the dispatcher sets no second
        timer around them (`bot.plugins.outbound.call_timeout`)."""
        return self._rest.request_timeout

    def mount(self, app: web.Application) -> None:
        """Add POST /discord/interactions to the bot's web server (with DISCORD_PUBLIC_KEY)."""
        if self.endpoint is None:
            log.info("DISCORD_PUBLIC_KEY is not set; %s is not served", INTERACTIONS_PATH)
            return
        self.endpoint.mount(app)

    async def start(self) -> None:
        """Point discord.py at the configured endpoints; run for the gateway's lock (and
        the gateway while holding it) in the background."""
        self._endpoints.apply()
        self._stop_requested.clear()
        self._health.state = "connecting"
        self._task = asyncio.create_task(self._lead(), name="discord-gateway-lease")
        if self.endpoint is not None:
            # Log the endpoint's client in now, so the first interaction need not wait for it.
            self._login = asyncio.create_task(self._endpoint_login(), name="discord-endpoint")

    async def _endpoint_login(self) -> None:
        assert self.endpoint is not None
        try:
            await self.endpoint.client.login_once()
        except Exception as exc:  # tried again with the first interaction
            log.warning("the Interactions Endpoint could not log in yet (%s)", exc)

    async def stop(self) -> None:
        """Close the gateway, let the background task wind down, close the REST session."""
        self._stop_requested.set()
        if self._login is not None:
            self._login.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._login
            self._login = None
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        await self._stop_gateway()
        if self.endpoint is not None:
            await self.endpoint.close()
            if not self.endpoint.client.is_closed():
                await self.endpoint.client.close()
        await self._rest.close()
        self._health.state = "stopped"
        self._health.shards_ready.clear()
        self._health.changed()
        self._endpoints.restore()

    async def send(
        self, channel: ChannelRef, message: OutboundMessage, *, idempotency_key: str
    ) -> str:
        return await self._rest.send(channel.channel, self._embeds(message), nonce=idempotency_key)

    def _embeds(self, message: OutboundMessage) -> list[discord.Embed]:
        """The message's embeds; a fan-out hands over one message object for many channels,
        rendered once."""
        last = self._last_rendered
        if last is not None and last[0] is message:
            return last[1]
        embeds = render_embeds([message])
        self._last_rendered = (message, embeds)
        return embeds

    async def find_sent(
        self,
        channel: ChannelRef,
        idempotency_key: str,
        message: OutboundMessage,
        *,
        since: datetime,
    ) -> str | None:
        """The message a send of `idempotency_key` created, found among the channel's recent
        messages by the marker its link carries (see `adapters.discord._outbound`)."""
        embeds = mark(render_embeds([message]), idempotency_key)
        return await self._rest.find(channel.channel, idempotency_key, embeds, since=since)

    async def edit(self, channel: ChannelRef, message_id: str, message: OutboundMessage) -> None:
        await self._rest.edit(channel.channel, message_id, render_embeds([message]))

    async def delete(self, channel: ChannelRef, message_id: str) -> None:
        await self._rest.delete(channel.channel, message_id)

    def health(self) -> Mapping[str, object]:
        if self.client is not None:
            self.client.refresh_latency()
        return self._health.snapshot()

    async def wait_health(
        self, check: Callable[[Mapping[str, object]], bool], within: float = 10.0
    ) -> None:
        """Wait until `check(health())` holds: the CLI and tests wait for a state this way."""
        await self._health.wait_until(check, within)

    # ------------------------------------------------------------------ the gateway

    def _build_client(self, shard_ids: list[int] | None = None) -> StrikeClient:
        client = build_client(
            self.handlers,
            self._health,
            gateway_override=self._endpoints.endpoints.gateway is not None,
            guild_ready_timeout=self._guild_ready_timeout,
            shard_ids=shard_ids,
            shard_count=self._shard_count if shard_ids is not None else None,
        )
        client._login_token = self._token
        return client

    async def _lead(self) -> None:
        """Hold the lock of each shard this instance may run (all of them as one unit when
        DISCORD_SHARD_IDS is not set), and run the gateway for the shards held."""
        units: tuple[int | None, ...] = self._shards if self._shards is not None else (None,)
        leads = self.gateway_locks = {
            unit: self.ctx.leadership(-1 if unit is None else unit) for unit in units
        }
        held: set[int | None] = set()
        try:
            while not self._stop_requested.is_set():
                for unit, lead in leads.items():
                    try:
                        ok = await (lead.still_held() if unit in held else lead.acquire())
                    except Exception:
                        log.exception("the Discord gateway election failed; trying again")
                        ok = False
                    if ok:
                        held.add(unit)
                    elif unit in held:
                        held.discard(unit)
                        log.warning("lost the Discord gateway lock for shard %s", unit)
                wanted = None if not held else tuple(sorted(u for u in held if u is not None))
                if wanted != self.holding:
                    await self._stop_gateway()
                    if held:
                        self._start_gateway(wanted)
                    else:
                        self._health.state = "standby"
                        self._health.changed()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop_requested.wait(), self.election_seconds)
        finally:
            for lead in leads.values():
                with contextlib.suppress(Exception):
                    await lead.release()

    def _start_gateway(self, shards: tuple[int, ...] | None) -> None:
        self.holding = shards
        self._gateway_stop.clear()
        log.info(
            "this instance now holds the Discord gateway (%s)",
            "all shards" if not shards else "shards " + ",".join(map(str, shards)),
        )
        self._health.state = "connecting"
        self._gateway = asyncio.create_task(
            self._run(list(shards) if shards else None), name="discord-gateway"
        )

    async def _stop_gateway(self) -> None:
        self.holding = None
        self._gateway_stop.set()
        if self.client is not None and not self.client.is_closed():
            await self.client.close()
        if self._gateway is not None:
            # Usually it ends by itself now; while Discord is unreachable it may be in
            # discord.py's reconnect backoff, which is safe to cancel once the client is closed.
            done, _ = await asyncio.wait({self._gateway}, timeout=STOP_WAIT)
            if not done:
                self._gateway.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._gateway
            self._gateway = None
        self._health.shards_ready.clear()

    async def _run(self, shard_ids: list[int] | None) -> None:
        failures = 0
        stop = self._gateway_stop
        while not stop.is_set():
            client = self._build_client(shard_ids)
            self.client = client
            fatal: str | None = None
            connects = self._health.connects
            failed: str | None = None
            try:
                await client.login(self._token)
                results = await sync_commands(client, self.section.guild_ids)
                self._health.guild_sync.update(results)
                self._health.changed()
                await client.connect(reconnect=True)
            except discord.LoginFailure:
                fatal = (
                    "Discord refused DISCORD_TOKEN. Copy the bot token again from the Developer "
                    "Portal (Bot → Reset Token) and restart."
                )
            except discord.PrivilegedIntentsRequired:  # pragma: no cover - we ask for none
                fatal = "Discord refused the gateway intents; strikebot needs only Guilds."
            except Exception as exc:
                if not stop.is_set():
                    failed = self._health.last_error = f"{type(exc).__name__}: {exc}"
            finally:
                if not client.is_closed():
                    await client.close()
            if fatal is not None:
                self._fail(fatal)
                return
            if stop.is_set():
                return
            self._health.state = "reconnecting"
            self._health.shards_ready.clear()
            self._health.changed()
            # Only a session that came up starts the count again: a login that works while
            # /gateway/bot answers 5xx is still a failure (it used to log in every second).
            failures = 1 if self._health.connects > connects else failures + 1
            delay = gateway_retry_delay(failures, self._rng)
            if failed is not None:
                log.warning(
                    "Discord gateway failed (%s); logging in again in %.0fs (failure %d in a row)",
                    failed,
                    delay,
                    failures,
                )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), delay)

    def _fail(self, reason: str) -> None:
        self._health.state = "failed"
        self._health.last_error = reason
        self._health.changed()
        log.error("%s Slash commands are off; deliveries are retried.", reason)
