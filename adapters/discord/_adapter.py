"""`DiscordAdapter`: the Discord side of strikebot, behind `bot.ports.Adapter`.

Two independent halves:
- outbound (`send` / `edit` / `delete`): REST only, through `RestSender`, so the
  dispatcher delivers whether or not the gateway is connected;
- inbound: a background task that logs a `StrikeClient` in, syncs the command tree to the
  configured guilds, and keeps the gateway connected. discord.py resumes dropped sessions;
  if the client itself dies (e.g. Discord unreachable at start), a new one is built after a
  backoff. Drafts, handlers and health live here, so they survive both.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping

import discord

from adapters.discord._client import GatewayHealth, StrikeClient
from adapters.discord._endpoints import EndpointOverride
from adapters.discord._interactions import Handlers
from adapters.discord._outbound import RestSender
from adapters.discord._posting import DraftButton, Drafts
from adapters.discord._render import render_embeds
from adapters.discord._settings import (
    NAME,
    DiscordDelivery,
    DiscordSection,
    DiscordSettings,
)
from adapters.discord._tree import CatalogueDescriptions, build_group
from bot.ports import ChannelRef, ConfigError, OutboundMessage, Pacing, PluginContext

log = logging.getLogger("strikebot.discord")

RETRY_CAP = 60.0
STOP_WAIT = 0.5


def build_client(
    handlers: Handlers,
    health: GatewayHealth,
    *,
    gateway_override: bool,
    guild_ready_timeout: float = 2.0,
) -> StrikeClient:
    """A client with the `/strike` tree and the preview buttons registered."""
    client = StrikeClient(
        health, gateway_override=gateway_override, guild_ready_timeout=guild_ready_timeout
    )
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
        self.drafts = Drafts()
        self.handlers = Handlers(ctx, self.drafts, defer_after=defer_after)
        delivery = ctx.delivery_as(DiscordDelivery)
        self._pacing = pacing or Pacing(
            global_per_second=delivery.discord_global_per_second,
            per_channel_per_second=delivery.discord_per_channel_per_second,
            burst=1,
            max_in_flight=64,
        )
        self._rest = RestSender(
            token,
            request_timeout=request_timeout,
            global_per_second=self._pacing.global_per_second,
        )
        self._guild_ready_timeout = guild_ready_timeout
        self.client: StrikeClient | None = None
        self._task: asyncio.Task[None] | None = None
        self._stop_requested = asyncio.Event()

    # ------------------------------------------------------------------ Adapter

    @property
    def pacing(self) -> Pacing:
        return self._pacing

    async def start(self) -> None:
        """Point discord.py at the configured endpoints and connect in the background."""
        self._endpoints.apply()
        self._stop_requested.clear()
        self._health.state = "connecting"
        self._task = asyncio.create_task(self._run(), name="discord-gateway")

    async def stop(self) -> None:
        """Close the gateway, let the background task wind down, close the REST session."""
        self._stop_requested.set()
        if self.client is not None and not self.client.is_closed():
            await self.client.close()
        if self._task is not None:
            # Usually it ends by itself now; while Discord is unreachable it may be in
            # discord.py's reconnect backoff, which is safe to cancel once the client is closed.
            done, _ = await asyncio.wait({self._task}, timeout=STOP_WAIT)
            if not done:
                self._task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._task
            self._task = None
        await self._rest.close()
        self._health.state = "stopped"
        self._health.shards_ready.clear()
        self._health.changed()
        self._endpoints.restore()

    async def send(
        self, channel: ChannelRef, message: OutboundMessage, *, idempotency_key: str
    ) -> str:
        return await self._rest.send(
            channel.channel, render_embeds([message]), nonce=idempotency_key
        )

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

    async def _run(self) -> None:
        delay = 1.0
        while not self._stop_requested.is_set():
            client = build_client(
                self.handlers,
                self._health,
                gateway_override=self._endpoints.endpoints.gateway is not None,
                guild_ready_timeout=self._guild_ready_timeout,
            )
            self.client = client
            fatal: str | None = None
            try:
                await client.login(self._token)
                results = await sync_commands(client, self.section.guild_ids)
                self._health.guild_sync.update(results)
                self._health.changed()
                delay = 1.0
                await client.connect(reconnect=True)
            except discord.LoginFailure:
                fatal = (
                    "Discord refused DISCORD_TOKEN. Copy the bot token again from the Developer "
                    "Portal (Bot → Reset Token) and restart."
                )
            except discord.PrivilegedIntentsRequired:  # pragma: no cover - we ask for none
                fatal = "Discord refused the gateway intents; strikebot needs only Guilds."
            except Exception as exc:
                if not self._stop_requested.is_set():
                    self._health.last_error = f"{type(exc).__name__}: {exc}"
                    log.warning("Discord gateway failed (%s); reconnecting in %.0fs", exc, delay)
            finally:
                if not client.is_closed():
                    await client.close()
            if fatal is not None:
                self._fail(fatal)
                return
            if self._stop_requested.is_set():
                return
            self._health.state = "reconnecting"
            self._health.shards_ready.clear()
            self._health.changed()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop_requested.wait(), delay)
            delay = min(delay * 2, RETRY_CAP)

    def _fail(self, reason: str) -> None:
        self._health.state = "failed"
        self._health.last_error = reason
        self._health.changed()
        log.error("%s Slash commands are off; deliveries are retried.", reason)
