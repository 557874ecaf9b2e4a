"""The gateway side: an `AutoShardedClient` that reports its connection state.

discord.py resumes dropped sessions and re-identifies invalidated ones by itself. What we add:
`DISCORD_GATEWAY_URL` honoured for the first connection too (discord.py would otherwise use
the URL `/gateway/bot` returns), and a `GatewayHealth` that outlives any one client object,
updated from the shard events and shown on `/healthz`.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands

from bot.ports import Clock, utcnow

if TYPE_CHECKING:
    from adapters.discord._interactions import Handlers

log = logging.getLogger("strikebot.discord")


@dataclass(slots=True)
class GatewayHealth:
    """What `/healthz` shows for Discord. Owned by the adapter, so it survives reconnects and
    rebuilt clients."""

    clock: Clock = utcnow
    state: str = "starting"  # starting | connecting | connected | reconnecting | stopped | failed
    shard_count: int | None = None
    shards_ready: set[int] = field(default_factory=set)
    connects: int = 0
    resumes: int = 0
    disconnects: int = 0
    last_disconnect: datetime | None = None
    last_error: str | None = None
    latency: float | None = None
    guild_sync: dict[str, str] = field(default_factory=dict)  # guild id -> "synced" | error
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    def changed(self) -> None:
        """Call after any change: wakes `wait_until`."""
        self._changed.set()

    async def wait_until(self, check: Callable[[dict[str, object]], bool], within: float) -> None:
        """Wait until `check(snapshot())` holds (for tests and the CLI), at most `within` s."""
        async with asyncio.timeout(within):
            while True:
                self._changed.clear()
                if check(self.snapshot()):
                    return
                await self._changed.wait()

    def snapshot(self) -> dict[str, object]:
        connected = bool(self.shard_count) and len(self.shards_ready) >= (self.shard_count or 0)
        return {
            "connected": connected and self.state == "connected",
            "state": self.state,
            "shards": self.shard_count,
            "shards_connected": len(self.shards_ready),
            "latency_ms": None if self.latency is None else round(self.latency * 1000, 1),
            "connects": self.connects,
            "resumes": self.resumes,
            "disconnects": self.disconnects,
            "last_disconnect": None
            if self.last_disconnect is None
            else self.last_disconnect.isoformat(),
            "last_error": self.last_error,
            "guild_sync": dict(self.guild_sync),
        }


class StrikeTree(app_commands.CommandTree[discord.Client]):
    """Errors a handler did not turn into a reply still get one sentence back."""

    handlers: Handlers | None = None

    async def on_error(
        self, interaction: discord.Interaction[discord.Client], error: app_commands.AppCommandError
    ) -> None:
        if self.handlers is not None:
            await self.handlers.unexpected(interaction, error)
        else:  # pragma: no cover - handlers are attached before the client connects
            await super().on_error(interaction, error)


# Events whose failure to parse must still end the session (discord.py reconnects): without
# READY or RESUMED there is no session to keep.
_SESSION_EVENTS = frozenset({"READY", "RESUMED"})


def _guard_parsers(parsers: dict[str, Any]) -> None:
    """An event discord.py cannot read (an interaction whose channel id is not a number, say)
    raises inside the gateway's receive loop and drops the connection, with every reply in
    flight. Each parser is wrapped so such an event is logged and dropped instead."""
    for event, parse in list(parsers.items()):
        if event in _SESSION_EVENTS:
            continue

        def guarded(data: Any, *, _parse: Any = parse, _event: str = event) -> None:
            try:
                _parse(data)
            except (ValueError, TypeError, KeyError, AttributeError) as exc:
                log.warning(
                    "Discord sent a %s event that could not be read (%s: %s); it was dropped "
                    "and the gateway stays connected",
                    _event,
                    type(exc).__name__,
                    exc,
                )

        parsers[event] = guarded


class StrikeClient(discord.AutoShardedClient):
    """discord.py's sharded client with our tree, our health board and gateway override."""

    handlers: Handlers | None = None

    def __init__(
        self,
        health: GatewayHealth,
        *,
        gateway_override: bool,
        **options: Any,
    ) -> None:
        intents = discord.Intents.none()
        intents.guilds = True  # roles and channels for admin checks; not privileged
        super().__init__(
            intents=intents,
            allowed_mentions=discord.AllowedMentions.none(),
            **options,
        )
        self.health = health
        self.gateway_override = gateway_override
        self.tree = StrikeTree(self)
        _guard_parsers(self._connection.parsers)
        self._login_token: str | None = None
        self._logged_in = False
        self._login_lock = asyncio.Lock()
        self._once_tasks: set[asyncio.Task[None]] = set()

    async def login(self, token: str) -> None:
        await super().login(token)
        self._logged_in = True

    async def close(self) -> None:
        if not hasattr(self, "_AutoShardedClient__queue"):
            # Never connected (the Interactions Endpoint's REST-only client, or a client
            # stopped while logging in): discord.py's close would fail on its missing queue.
            await self.http.close()
            return
        await super().close()

    async def login_once(self, token: str | None = None) -> None:
        """Log in (REST only, no gateway) unless already logged in: the Interactions
        Endpoint URL needs the application's id and an HTTP session, nothing more."""
        if token is not None:
            self._login_token = token
        if self._logged_in:
            return
        async with self._login_lock:
            if not self._logged_in:
                assert self._login_token is not None, "login_once needs the token once"
                await self.login(self._login_token)

    def handle_interactions_once(self, handlers: Handlers) -> None:
        """Claim each INTERACTION_CREATE in the store before discord.py handles it: Discord
        gives it to every session identified for the shard (a takeover's overlap, a second
        instance), and only the first claim across instances handles it."""
        state = self._connection
        parse = state.parsers["INTERACTION_CREATE"]

        async def once(data: Any) -> None:
            if await handlers.claim(data):
                await handlers.restore_modal(state, data)
                parse(data)
            else:
                log.info("Discord interaction %s was handled elsewhere", data.get("id"))

        def claiming(data: Any) -> None:
            task = asyncio.get_running_loop().create_task(once(data))
            self._once_tasks.add(task)
            task.add_done_callback(self._once_tasks.discard)

        state.parsers["INTERACTION_CREATE"] = claiming

    async def launch_shards(self) -> None:
        if self.gateway_override and self.shard_count is None:
            # Ask how many shards to run, but connect to DISCORD_GATEWAY_URL
            # (DiscordWebSocket.DEFAULT_GATEWAY), as discord.py does when the count is given.
            shards, _url, _limits = await self.http.get_bot_gateway()
            self.shard_count = shards
        await super().launch_shards()

    def _latency(self) -> float | None:
        value = self.latency
        return None if math.isnan(value) or math.isinf(value) else value

    # -- shard events (discord.py dispatches these by name) --

    async def on_shard_connect(self, shard_id: int) -> None:
        """READY arrived: the shard is connected (guilds may still be loading)."""
        self.health.shard_count = self.shard_count
        self.health.connects += 1
        self.health.shards_ready.add(shard_id)
        self._settle()

    async def on_shard_ready(self, shard_id: int) -> None:
        self.health.shard_count = self.shard_count
        self.health.shards_ready.add(shard_id)
        self._settle()

    async def on_shard_resumed(self, shard_id: int) -> None:
        self.health.resumes += 1
        self.health.state = (
            "connected" if self.health.state == "reconnecting" else self.health.state
        )
        self.health.shards_ready.add(shard_id)
        self._settle()

    async def on_shard_disconnect(self, shard_id: int) -> None:
        if self.is_closed():
            return
        if shard_id in self.health.shards_ready or self.health.state == "connected":
            self.health.disconnects += 1
            self.health.last_disconnect = self.health.clock()
        self.health.shards_ready.discard(shard_id)
        self.health.state = "reconnecting"
        self.health.changed()
        log.warning("Discord gateway shard %s disconnected; reconnecting", shard_id)

    async def on_ready(self) -> None:
        self._settle()
        log.info(
            "Discord gateway ready: %s shard(s), %d guild(s)", self.shard_count, len(self.guilds)
        )

    def _settle(self) -> None:
        count = self.shard_count or 1
        if len(self.health.shards_ready) >= count:
            self.health.state = "connected"
        self.health.latency = self._latency()
        self.health.changed()

    def refresh_latency(self) -> None:
        if not self.is_closed():
            self.health.latency = self._latency()
