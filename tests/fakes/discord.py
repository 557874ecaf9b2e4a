"""A fake Discord on 127.0.0.1 that the REAL discord.py talks to.

REST (`/api/v10/...`): login (`/users/@me`, `/oauth2/applications/@me`), `/gateway/bot`,
what `strikebot doctor` reads (`GET /channels/{id}`, `/guilds/{id}`, `/guilds/{id}/members/
{bot}`), permissions computed as Discord does (server roles, then channel overwrites: a
channel without View Channel answers 403 Missing Access, one without Send Messages refuses
posts with 403 Missing Permissions; `deny()` sets an overwrite),
command sync (global and guild `PUT .../commands`), channel messages (create with
`enforce_nonce` dedupe, edit, delete), interaction callbacks and the webhook routes used
after a deferral. Every bot request counts against a global per-token limit (a sliding
one-second window) and channel-message routes against per-channel buckets; both answer
429 exactly as Discord does (JSON body with `retry_after` and `global`, `Retry-After`,
`X-RateLimit-*` and a `Via` header, without which discord.py assumes a Cloudflare ban).
JSON goes out with `Content-Type: application/json` and no charset, as discord.py expects.

Gateway (`/gateway`, JSON text frames): HELLO, heartbeat ACK, IDENTIFY → READY (+
GUILD_CREATE), RESUME → replay of missed events + RESUMED, unknown session → INVALID_SESSION.
`send_interaction()` dispatches INTERACTION_CREATE to the shard owning the guild;
`drop_gateway()` closes every socket (with a close code, or abruptly).

Faults: `inject()` answers matching requests with a status (403/404/429/5xx), holds them
past the client's timeout ("timeout"), carries them out and then holds the answer ("lost":
a message posted whose answer never arrives) or cuts the connection ("reset"). `inject(429,
is_global=True)` is a global 429 (`X-RateLimit-Global: true`, `"global": true`, `Via`);
`inject(status, raw=(content_type, body))` answers with a body that is not Discord's JSON
(a proxy's HTML or plain-text page, JSON cut short). Channels can be
forbidden (403 Missing Access) or missing (404 Unknown Channel). An interaction answered
more than `interaction_deadline` seconds after dispatch gets Discord's 10062 Unknown
interaction.

Run standalone (the fan-out benchmark does): `python -m tests.fakes.discord --global-rate 500`;
it prints `READY <api base> <gateway url> <public key>` and serves `/_fake/stats`,
`/_fake/reset`, and for the scale-out benchmark `/_fake/interaction` (send one over the
gateway or to an Interactions Endpoint URL), `/_fake/interactions`, `/_fake/messages` and
`/_fake/sessions`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import hashlib
import itertools
import json
import math
import re
import secrets
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import aiohttp
from aiohttp import WSMsgType, web
from nacl.signing import SigningKey

from tests.fakes._server import serve

API_VERSION = 10
DISCORD_EPOCH_MS = 1_420_070_400_000
PAYLOADS = Path(__file__).resolve().parent.parent / "payloads" / "discord"
T = TypeVar("T")

# Interaction callback types (Discord's documented InteractionResponseType values).
PONG, CHANNEL_MESSAGE, DEFERRED_CHANNEL_MESSAGE, DEFERRED_UPDATE, UPDATE_MESSAGE = 1, 4, 5, 6, 7
AUTOCOMPLETE_RESULT, MODAL = 8, 9
EPHEMERAL_FLAG = 1 << 6
LOST = object()  # an injected fault: the request is carried out, its answer never comes

# Permission bits (Discord's documented values) the fake enforces.
ADMINISTRATOR, VIEW_CHANNEL, SEND_MESSAGES = 1 << 3, 1 << 10, 1 << 11
EMBED_LINKS, READ_MESSAGE_HISTORY = 1 << 14, 1 << 16
ALL_PERMISSIONS = (1 << 53) - 1
# What @everyone may do in a new server's channels, roughly: see, talk, embed, read history.
EVERYONE_DEFAULT = VIEW_CHANNEL | SEND_MESSAGES | EMBED_LINKS | READ_MESSAGE_HISTORY | (1 << 6)


def load_payload(name: str) -> dict[str, Any]:
    """A captured payload from tests/payloads/discord/<name>.json (a fresh copy)."""
    data: dict[str, Any] = json.loads((PAYLOADS / f"{name}.json").read_text(encoding="utf-8"))
    return data


def json_response(
    data: Any, status: int = 200, headers: Mapping[str, str] | None = None
) -> web.Response:
    """JSON with `Content-Type: application/json` exactly: discord.py compares the header."""
    all_headers = {"Content-Type": "application/json", **(headers or {})}
    return web.Response(status=status, body=json.dumps(data).encode(), headers=all_headers)


def error(status: int, message: str, code: int = 0) -> web.Response:
    return json_response({"message": message, "code": code}, status)


@dataclass
class FakeMessage:
    id: str
    channel_id: str
    content: str
    embeds: list[dict[str, Any]]
    nonce: str | None
    allowed_mentions: dict[str, Any] | None
    payload: dict[str, Any]
    created_at: float
    edits: list[dict[str, Any]] = field(default_factory=list)
    deleted: bool = False

    def to_json(self, bot_user: Mapping[str, Any]) -> dict[str, Any]:
        return message_object(
            self.id, self.channel_id, bot_user, content=self.content, embeds=self.embeds,
            nonce=self.nonce, edited=bool(self.edits),
        )  # fmt: skip


@dataclass
class Reply:
    """One thing the bot did in answer to an interaction."""

    interaction_id: str
    kind: str  # "callback" | "edit_original" | "followup" | "delete_original"
    type: int | None  # callback type for kind == "callback"
    data: dict[str, Any]
    after: float  # seconds since the interaction was dispatched

    @property
    def embeds(self) -> list[dict[str, Any]]:
        embeds: list[dict[str, Any]] = self.data.get("embeds") or []
        return embeds

    @property
    def ephemeral(self) -> bool:
        return bool(int(self.data.get("flags") or 0) & EPHEMERAL_FLAG)

    @property
    def text(self) -> str:
        """Everything a person would read: content, embed titles, descriptions and fields."""
        parts = [str(self.data.get("content") or "")]
        for embed in self.embeds:
            parts.append(str(embed.get("title", "")))
            parts.append(str(embed.get("description", "")))
            for f in embed.get("fields", []):
                parts.append(f"{f.get('name', '')}\n{f.get('value', '')}")
            parts.append(str((embed.get("footer") or {}).get("text", "")))
        return "\n".join(p for p in parts if p)


@dataclass
class Injection:
    status: int | str  # an HTTP status, "timeout" or "reset"
    route: str | None  # "POST /channels/{channel_id}/messages"; None = any bot route
    channel_id: str | None
    times: int
    retry_after: float
    body: dict[str, Any] | None
    is_global: bool = False
    raw: tuple[str, bytes] | None = None  # (Content-Type, body) instead of Discord's JSON


@dataclass
class RateLimited:
    at: float  # monotonic
    scope: str  # "global" | "user"
    route: str


@dataclass
class _Interaction:
    id: str
    token: str
    payload: dict[str, Any]
    dispatched_at: float
    acknowledged: bool = False
    original: dict[str, Any] | None = None
    over_http: bool = False
    body: bytes = b""  # what was POSTed to the Interactions Endpoint URL


@dataclass
class _Session:
    id: str
    shard: tuple[int, int]
    seq: int = 0
    frames: list[dict[str, Any]] = field(default_factory=list)
    ws: web.WebSocketResponse | None = None


@dataclass
class _Route:
    method: str
    template: str
    pattern: re.Pattern[str]
    handler: Callable[[web.Request, dict[str, str]], Awaitable[web.StreamResponse]]
    bot_auth: bool  # needs "Authorization: Bot <token>" and counts against the global limit
    bucket: tuple[int, float] | None  # (limit, window seconds) per major parameter


def _compile(template: str) -> re.Pattern[str]:
    regex = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(template))
    return re.compile(f"^/api/v{API_VERSION}{regex}$")


EMBED_LIMITS = {
    "title": 256,
    "description": 4096,
    "fields": 25,
    "field_name": 256,
    "field_value": 1024,
    "footer": 2048,
    "author": 256,
    "total": 6000,
    "embeds": 10,
}


def invalid_form(body: Mapping[str, Any]) -> str | None:
    """Why Discord would answer 400 Invalid Form Body (50035) to this message, if it would."""
    content = body.get("content") or ""
    if len(content) > 2000:
        return "content: Must be 2000 or fewer in length."
    embeds = body.get("embeds") or []
    if len(embeds) > EMBED_LIMITS["embeds"]:
        return "embeds: Must be 10 or fewer in length."
    total = 0
    for i, embed in enumerate(embeds):
        parts = {
            "title": embed.get("title") or "",
            "description": embed.get("description") or "",
            "footer": (embed.get("footer") or {}).get("text") or "",
            "author": (embed.get("author") or {}).get("name") or "",
        }
        for name, text in parts.items():
            if len(text) > EMBED_LIMITS[name]:
                return f"embeds.{i}.{name}: Must be {EMBED_LIMITS[name]} or fewer in length."
            total += len(text)
        fields = embed.get("fields") or []
        if len(fields) > EMBED_LIMITS["fields"]:
            return f"embeds.{i}.fields: Must be 25 or fewer in length."
        for j, f in enumerate(fields):
            if not f.get("name") or not f.get("value"):
                return f"embeds.{i}.fields.{j}: This field is required"
            if len(f["name"]) > EMBED_LIMITS["field_name"]:
                return f"embeds.{i}.fields.{j}.name: Must be 256 or fewer in length."
            if len(f["value"]) > EMBED_LIMITS["field_value"]:
                return f"embeds.{i}.fields.{j}.value: Must be 1024 or fewer in length."
            total += len(f["name"]) + len(f["value"])
    if total > EMBED_LIMITS["total"]:
        return "embeds: Embed size exceeds maximum size of 6000"
    return None


def message_object(
    message_id: str,
    channel_id: str,
    author: Mapping[str, Any],
    *,
    content: str = "",
    embeds: list[dict[str, Any]] | None = None,
    nonce: str | None = None,
    flags: int = 0,
    edited: bool = False,
    components: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A message as Discord returns it (the fields discord.py reads)."""
    now = datetime.now(UTC).isoformat()
    return {
        "id": message_id,
        "channel_id": channel_id,
        "author": dict(author),
        "content": content,
        "timestamp": now,
        "edited_timestamp": now if edited else None,
        "tts": False,
        "mention_everyone": False,
        "mentions": [],
        "mention_roles": [],
        "attachments": [],
        "embeds": embeds or [],
        "pinned": False,
        "type": 0,
        "flags": flags,
        "components": components or [],
        "nonce": nonce,
    }


class FakeDiscord:
    """One fake Discord (REST + gateway) for one bot token. Use as `async with FakeDiscord()`."""

    def __init__(
        self,
        *,
        token: str = "fake-bot-token",  # noqa: S107 (a fake token)
        application_id: str = "900000000000000001",
        bot_user_id: str = "900000000000000001",
        guild_ids: tuple[str, ...] = ("700000000000000001",),
        shard_count: int = 1,
        global_per_second: float | None = 50.0,
        per_channel_limit: int = 5,
        per_channel_window: float = 5.0,
        latency: float = 0.0,
        nonce_window: float = 300.0,
        interaction_deadline: float = 3.0,
        heartbeat_interval_ms: int = 41_250,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        # The application's key pair: Discord signs what it POSTs to the Interactions
        # Endpoint URL; the bot checks with the public key (DISCORD_PUBLIC_KEY).
        self.signing_key = SigningKey.generate()
        self.token = token
        self.application_id = application_id
        self.guild_ids = guild_ids
        self.shard_count = shard_count
        self.global_per_second = global_per_second
        self.per_channel_limit = per_channel_limit
        self.per_channel_window = per_channel_window
        self.latency = latency
        self.nonce_window = nonce_window
        self.interaction_deadline = interaction_deadline
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.host = host
        self.port = port
        self.bot_user: dict[str, Any] = {
            "id": bot_user_id,
            "username": "strikebot",
            "discriminator": "0",
            "global_name": "Strike Bot",
            "avatar": None,
            "bot": True,
            "flags": 0,
            "public_flags": 0,
            "verified": True,
            "mfa_enabled": False,
        }
        # -- what happened (tests read these) --
        self.messages: dict[str, FakeMessage] = {}
        self.commands: dict[str | None, list[dict[str, Any]]] = {}
        self.replies: dict[str, list[Reply]] = {}
        self.rate_limited: list[RateLimited] = []
        self.requests: list[tuple[float, str, str, int]] = []  # (at, method, path, status)
        self.nonce_hits = 0
        self.http_statuses: dict[str, int] = {}  # interaction id -> the endpoint's status
        self.http_failures: dict[str, str] = {}  # interaction id -> why no answer came
        self._tasks: set[asyncio.Future[None]] = set()
        self.identifies = 0
        self.resumes = 0
        self.heartbeats = 0
        self.first_message_post_at: float | None = None
        # -- faults --
        self.gateway_open = True  # False: the gateway answers 503 (Discord's gateway is down)
        self.forbidden_channels: set[str] = set()
        self.no_history_channels: set[str] = set()  # the bot lacks Read Message History
        self.history_reads = 0
        self.stalls: list[tuple[float, float]] = []  # (monotonic s, seconds late)
        self.missing_channels: set[str] = set()
        # -- permissions, as Discord computes them (roles, then channel overwrites) --
        self.bot_public = False
        self.guild_roles: dict[str, list[dict[str, Any]]] = {
            guild_id: [{"id": guild_id, "name": "@everyone", "position": 0,
                        "permissions": str(EVERYONE_DEFAULT)}]
            for guild_id in guild_ids
        }  # fmt: skip
        self.bot_roles: dict[str, list[str]] = {guild_id: [] for guild_id in guild_ids}
        self.channel_overwrites: dict[str, list[dict[str, Any]]] = {}
        self.channel_guilds: dict[str, str] = {}  # channel id -> guild id (default: the first)
        self._injections: list[Injection] = []
        # -- internals --
        self._ids = itertools.count(1)
        self._global_window: deque[float] = deque()
        self._buckets: dict[str, tuple[float, int]] = {}
        self._nonces: dict[tuple[str, str], tuple[str, float]] = {}
        self._interactions: dict[str, _Interaction] = {}
        self._by_token: dict[str, _Interaction] = {}
        self._sessions: dict[str, _Session] = {}
        self._sockets: dict[web.WebSocketResponse, web.Request] = {}
        self._changed = asyncio.Event()
        self._closing = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self._routes = self._route_table()

    # ------------------------------------------------------------------ lifecycle

    async def __aenter__(self) -> FakeDiscord:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/gateway", self._gateway)
        app.router.add_get("/_fake/stats", self._stats)
        app.router.add_post("/_fake/reset", self._reset)
        app.router.add_post("/_fake/interaction", self._control_interaction)
        app.router.add_post("/_fake/replay", self._control_replay)
        app.router.add_get("/_fake/interactions", self._control_interactions)
        app.router.add_get("/_fake/messages", self._control_messages)
        app.router.add_get("/_fake/counts", self._control_counts)
        app.router.add_get("/_fake/requests", self._control_requests)
        app.router.add_get("/_fake/sessions", self._control_sessions)
        app.router.add_route("*", "/api/{tail:.*}", self._api)
        self._runner, self.port = await serve(
            app, host=self.host, port=self.port, handle_signals=False, shutdown_timeout=0.5
        )

    async def close(self) -> None:
        self._closing.set()
        for task in list(self._tasks):
            task.cancel()
        for ws in list(self._sockets):
            with contextlib.suppress(Exception):
                await ws.close(code=1001)
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    @property
    def public_key(self) -> str:
        """The application's public key, as the Developer Portal shows it (hex)."""
        return bytes(self.signing_key.verify_key).hex()

    def sign(self, body: bytes, timestamp: str | None = None) -> dict[str, str]:
        """Discord's signature headers for a request to the Interactions Endpoint URL."""
        timestamp = timestamp or str(int(time.time()))
        signed = self.signing_key.sign(timestamp.encode() + body)
        return {
            "X-Signature-Ed25519": signed.signature.hex(),
            "X-Signature-Timestamp": timestamp,
            "Content-Type": "application/json",
        }

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def api_base(self) -> str:
        """What DISCORD_API_BASE is set to (discord.py's `Route.BASE`)."""
        return f"{self.base_url}/api/v{API_VERSION}"

    @property
    def gateway_url(self) -> str:
        """What DISCORD_GATEWAY_URL is set to."""
        return f"ws://{self.host}:{self.port}/gateway"

    # ------------------------------------------------------------------ test helpers

    def snowflake(self) -> str:
        ms = int(time.time() * 1000) - DISCORD_EPOCH_MS
        return str((ms << 22) | (next(self._ids) & 0x3FFFFF))

    def notify(self) -> None:
        self._changed.set()

    async def wait_for(self, check: Callable[[], T | None], within: float = 5.0) -> T:
        """Wait until `check()` returns something truthy (re-checked on every change)."""
        async with asyncio.timeout(within):
            while True:
                self._changed.clear()
                result = check()
                if result:
                    return result
                await self._changed.wait()

    def inject(
        self,
        status: int | str,
        *,
        route: str | None = "POST /channels/{channel_id}/messages",
        channel_id: str | None = None,
        times: int = 1,
        retry_after: float = 0.05,
        body: dict[str, Any] | None = None,
        is_global: bool = False,
        raw: tuple[str, bytes] | None = None,
    ) -> None:
        """Answer the next `times` matching bot requests with a fault."""
        self._injections.append(
            Injection(status, route, channel_id, times, retry_after, body, is_global, raw)
        )

    def unmet_injections(self) -> int:
        """How many injected faults no request has met yet."""
        return sum(max(injection.times, 0) for injection in self._injections)

    def channel_messages(
        self, channel_id: str, *, include_deleted: bool = False
    ) -> list[FakeMessage]:
        return [
            m
            for m in self.messages.values()
            if m.channel_id == channel_id and (include_deleted or not m.deleted)
        ]

    def original_message(self, interaction_id: str) -> dict[str, Any]:
        """The message the bot's reply to an interaction became (with its components)."""
        original = self._interactions[interaction_id].original
        assert original is not None, "the bot has not answered with a message"
        return dict(original)

    def connected_sessions(self) -> int:
        return sum(1 for s in self._sessions.values() if s.ws is not None and not s.ws.closed)

    async def wait_connected(self, sessions: int | None = None, within: float = 5.0) -> None:
        want = sessions or self.shard_count
        await self.wait_for(lambda: self.connected_sessions() >= want, within)

    async def send_interaction(self, payload: Mapping[str, Any], *, buffered: bool = False) -> str:
        """Dispatch INTERACTION_CREATE (a fresh id and token each time); returns the id.

        `buffered`: do not wait for a live connection; a dropped session gets it on RESUME."""
        data = json.loads(json.dumps(payload))
        data["id"] = self.snowflake()
        data["token"] = "itok_" + secrets.token_hex(16)
        data["application_id"] = self.application_id
        interaction = _Interaction(data["id"], data["token"], data, time.monotonic())
        self._interactions[interaction.id] = interaction
        self._by_token[interaction.token] = interaction
        await self.dispatch(
            "INTERACTION_CREATE", data, guild_id=data.get("guild_id"), buffered=buffered
        )
        return interaction.id

    async def post_interaction(self, payload: Mapping[str, Any], url: str) -> str:
        """Send an interaction to the Interactions Endpoint URL `url`, as Discord does: a
        signed POST whose response is the first answer (within `interaction_deadline`).
        Returns the id at once; the answer is recorded like a callback when it comes."""
        data = json.loads(json.dumps(payload))
        data["id"] = self.snowflake()
        data["token"] = "itok_" + secrets.token_hex(16)
        data["application_id"] = self.application_id
        body = json.dumps(data).encode()
        interaction = _Interaction(
            data["id"], data["token"], data, time.monotonic(), over_http=True, body=body
        )
        self._interactions[interaction.id] = interaction
        self._by_token[interaction.token] = interaction
        self._spawn(self._deliver_http(interaction, url))
        return interaction.id

    async def replay_interaction(self, interaction_id: str, url: str) -> int:
        """POST an interaction already sent over HTTP again, signed afresh (a retry, or an
        attacker replaying a captured request). Returns the status the bot answered."""
        interaction = self._interactions[interaction_id]
        status, _ = await self._post_signed(url, interaction.body)
        return status

    async def _post_signed(self, url: str, body: bytes) -> tuple[int, bytes]:
        timeout = aiohttp.ClientTimeout(total=self.interaction_deadline)
        async with (
            aiohttp.ClientSession(timeout=timeout) as session,
            session.post(url, data=body, headers=self.sign(body)) as response,
        ):
            return response.status, await response.read()

    async def _deliver_http(self, interaction: _Interaction, url: str) -> None:
        try:
            status, raw = await self._post_signed(url, interaction.body)
        except (aiohttp.ClientError, TimeoutError) as exc:
            self.http_failures[interaction.id] = f"{type(exc).__name__}"
            self.notify()
            return
        self.http_statuses[interaction.id] = status
        if status == 200:
            try:
                answer = json.loads(raw)
            except ValueError:
                answer = None
            if isinstance(answer, dict):
                self._acknowledge(interaction, answer)
            else:
                self.http_failures[interaction.id] = "not JSON"
        self.notify()

    def _spawn(self, coro: Awaitable[None]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def wait_reply(
        self, interaction_id: str, *, count: int = 1, kind: str | None = None, within: float = 5.0
    ) -> list[Reply]:
        """The first `count` replies (optionally of one kind) to an interaction."""

        def ready() -> list[Reply] | None:
            got = [r for r in self.replies.get(interaction_id, []) if kind in (None, r.kind)]
            return got[:count] if len(got) >= count else None

        return await self.wait_for(ready, within)

    async def dispatch(
        self,
        event: str,
        data: dict[str, Any],
        *,
        guild_id: str | None = None,
        buffered: bool = False,
    ) -> None:
        """Send a DISPATCH to EVERY session identified for the shard owning `guild_id`
        (shard 0 for DMs), as Discord does: two instances connected to one shard both get
        each event.

        Waits for a session of that shard to be connected, unless `buffered`: then sessions
        get it even while dropped, and it is replayed on RESUME, as Discord does."""
        shard_id = (int(guild_id) >> 22) % self.shard_count if guild_id else 0

        def sessions() -> list[_Session]:
            return [
                s
                for s in self._sessions.values()
                if s.shard[0] == shard_id and (buffered or (s.ws is not None and not s.ws.closed))
            ]

        for target in await self.wait_for(sessions):
            await self._send_dispatch(target, event, data)

    async def drop_gateway(self, code: int | None = 4000) -> None:
        """Close every gateway socket: with `code`, or cut the TCP connection when None."""
        for ws, request in list(self._sockets.items()):
            if code is None:
                if request.transport is not None:
                    request.transport.close()
            else:
                with contextlib.suppress(Exception):
                    await ws.close(code=code)
        self.notify()

    def invalidate_sessions(self) -> None:
        """Forget every session, so the next RESUME gets INVALID_SESSION."""
        self._sessions.clear()

    def stats(self) -> dict[str, Any]:
        start = self.first_message_post_at
        per_channel = Counter(m.channel_id for m in self.messages.values() if not m.deleted)
        return {
            "requests": len(self.requests),
            "messages": sum(per_channel.values()),
            "channels": len(per_channel),
            "channels_with_duplicates": sum(1 for n in per_channel.values() if n > 1),
            "nonce_hits": self.nonce_hits,
            "first_message_post_at": start,
            "rate_limited": [
                {
                    "after_first_post": None if start is None else r.at - start,
                    "scope": r.scope,
                    "route": r.route,
                }
                for r in self.rate_limited
            ],
        }

    def reset_counters(self) -> None:
        self.messages.clear()
        self.rate_limited.clear()
        self.requests.clear()
        self.nonce_hits = 0
        self.first_message_post_at = None
        self._global_window.clear()
        self._buckets.clear()
        self._nonces.clear()

    # ------------------------------------------------------------------ REST plumbing

    def _route_table(self) -> list[_Route]:
        channel_bucket = (self.per_channel_limit, self.per_channel_window)
        table: list[tuple[str, str, Any, bool, tuple[int, float] | None]] = [
            ("GET", "/users/@me", self._me, True, None),
            ("GET", "/oauth2/applications/@me", self._application, True, None),
            ("GET", "/applications/@me", self._application, True, None),
            ("GET", "/gateway", self._gateway_info, False, None),
            ("GET", "/gateway/bot", self._gateway_bot, True, None),
            ("PUT", "/applications/{application_id}/commands", self._put_commands, True, None),
            ("GET", "/applications/{application_id}/commands", self._get_commands, True, None),
            ("PUT", "/applications/{application_id}/guilds/{guild_id}/commands",
             self._put_commands, True, None),
            ("GET", "/applications/{application_id}/guilds/{guild_id}/commands",
             self._get_commands, True, None),
            ("GET", "/channels/{channel_id}", self._get_channel, True, None),
            ("GET", "/guilds/{guild_id}", self._get_guild, True, None),
            ("GET", "/guilds/{guild_id}/members/{user_id}", self._get_member, True, None),
            ("POST", "/channels/{channel_id}/messages", self._create_message, True,
             channel_bucket),
            ("GET", "/channels/{channel_id}/messages", self._list_messages, True, None),
            ("PATCH", "/channels/{channel_id}/messages/{message_id}", self._edit_message, True,
             channel_bucket),
            ("DELETE", "/channels/{channel_id}/messages/{message_id}", self._delete_message,
             True, channel_bucket),
            ("POST", "/interactions/{interaction_id}/{token}/callback", self._callback, False,
             None),
            ("PATCH", "/webhooks/{application_id}/{token}/messages/@original",
             self._edit_original, False, None),
            ("GET", "/webhooks/{application_id}/{token}/messages/@original",
             self._get_original, False, None),
            ("DELETE", "/webhooks/{application_id}/{token}/messages/@original",
             self._delete_original, False, None),
            ("POST", "/webhooks/{application_id}/{token}", self._followup, False, None),
        ]  # fmt: skip
        return [
            _Route(method, template, _compile(template), handler, auth, bucket)
            for method, template, handler, auth, bucket in table
        ]

    async def _api(self, request: web.Request) -> web.StreamResponse:
        response = await self._api_inner(request)
        self.requests.append((time.monotonic(), request.method, request.path, response.status))
        self.notify()
        return response

    async def _api_inner(self, request: web.Request) -> web.StreamResponse:
        for route in self._routes:
            if route.method != request.method:
                continue
            match = route.pattern.match(request.path)
            if match is None:
                continue
            params = match.groupdict()
            key = f"{route.method} {route.template}"
            if route.bot_auth and request.headers.get("Authorization") != f"Bot {self.token}":
                return error(401, "401: Unauthorized")
            is_post = key == "POST /channels/{channel_id}/messages"
            if is_post and self.first_message_post_at is None:
                self.first_message_post_at = time.monotonic()
            injected = await self._injected(request, key, params)
            if injected is LOST:
                # Discord did it, but the answer never arrives (a cut connection, a timeout).
                await route.handler(request, params)
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(30):
                        await self._closing.wait()
                return error(504, "held past the client's timeout")
            if isinstance(injected, web.StreamResponse):
                return injected
            if route.bot_auth and self.global_per_second is not None:
                limited = self._global_limit(key)
                if limited is not None:
                    return limited
            headers: dict[str, str] = {}
            if route.bucket is not None:
                major = params.get("channel_id", "")
                limited_or_headers = self._bucket(key, major, *route.bucket)
                if isinstance(limited_or_headers, web.Response):
                    return limited_or_headers
                headers = limited_or_headers
            if self.latency > 0:
                await asyncio.sleep(self.latency)
            response = await route.handler(request, params)
            response.headers.update(headers)
            return response
        return error(404, "404: Not Found")

    async def _injected(
        self, request: web.Request, key: str, params: Mapping[str, str]
    ) -> web.StreamResponse | object | None:
        for injection in self._injections:
            if injection.times <= 0:
                continue
            if injection.route is not None and injection.route != key:
                continue
            if injection.channel_id is not None and injection.channel_id != params.get(
                "channel_id"
            ):
                continue
            injection.times -= 1
            if injection.status == "lost":
                return LOST
            if injection.status == "timeout":
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(30):
                        await self._closing.wait()
                return error(504, "held past the client's timeout")
            if injection.status == "reset":
                if request.transport is not None:
                    request.transport.close()
                return web.Response(status=500)
            status = int(injection.status)
            if injection.raw is not None:
                content_type, raw = injection.raw
                return web.Response(status=status, body=raw, headers={"Content-Type": content_type})
            if status == 429:
                scope = "global" if injection.is_global else "user"
                self.rate_limited.append(RateLimited(time.monotonic(), scope, key))
                return self._too_many(injection.retry_after, is_global=injection.is_global)
            body = injection.body or {
                403: {"message": "Missing Access", "code": 50001},
                404: {"message": "Unknown Channel", "code": 10003},
            }.get(status, {"message": f"{status}: injected", "code": 0})
            return json_response(body, status)
        return None

    def _too_many(
        self, retry_after: float, *, is_global: bool, headers: Mapping[str, str] | None = None
    ) -> web.Response:
        retry_after = max(round(retry_after, 3), 0.001)
        all_headers = {
            "Retry-After": str(max(1, math.ceil(retry_after))),
            "Via": "1.1 google",
            "X-RateLimit-Scope": "global" if is_global else "user",
            **(headers or {}),
        }
        if is_global:
            all_headers["X-RateLimit-Global"] = "true"
        body = {
            "message": "You are being rate limited.",
            "retry_after": retry_after,
            "global": is_global,
            "code": 0,
        }
        return json_response(body, 429, all_headers)

    def _global_limit(self, key: str) -> web.Response | None:
        assert self.global_per_second is not None
        now = time.monotonic()
        window = self._global_window
        while window and window[0] <= now - 1.0:
            window.popleft()
        if len(window) >= self.global_per_second:
            self.rate_limited.append(RateLimited(now, "global", key))
            return self._too_many(window[0] + 1.0 - now, is_global=True)
        window.append(now)
        return None

    def _bucket(
        self, key: str, major: str, limit: int, period: float
    ) -> web.Response | dict[str, str]:
        now = time.monotonic()
        bucket_key = f"{key}:{major}"
        started, used = self._buckets.get(bucket_key, (now, 0))
        if now >= started + period:
            started, used = now, 0
        # Rounded up to the millisecond, as Discord does: a client waiting exactly this long
        # never arrives before the window has really reset.
        reset_after = math.ceil((started + period - now) * 1000) / 1000
        bucket_hash = hashlib.sha1(key.encode()).hexdigest()[:16]  # noqa: S324 (an id, not security)
        headers = {
            "X-RateLimit-Limit": str(limit),
            "X-RateLimit-Reset": f"{time.time() + reset_after:.3f}",
            "X-RateLimit-Reset-After": f"{reset_after:.3f}",
            "X-RateLimit-Bucket": bucket_hash,
        }
        if used >= limit:
            self.rate_limited.append(RateLimited(now, "user", key))
            return self._too_many(reset_after, is_global=False, headers=headers | {
                "X-RateLimit-Remaining": "0"})  # fmt: skip
        used += 1
        self._buckets[bucket_key] = (started, used)
        headers["X-RateLimit-Remaining"] = str(limit - used)
        return headers

    # ------------------------------------------------------------------ REST routes

    async def _me(self, request: web.Request, params: dict[str, str]) -> web.StreamResponse:
        return json_response(self.bot_user)

    async def _application(
        self, request: web.Request, params: dict[str, str]
    ) -> web.StreamResponse:
        return json_response(
            {
                "id": self.application_id,
                "name": "strikebot",
                "icon": None,
                "description": "Strike updates",
                "summary": "",
                "bot_public": self.bot_public,
                "bot_require_code_grant": False,
                "owner": {**self.bot_user, "id": "900000000000000099", "bot": False},
                "verify_key": self.public_key,
                "flags": 0,
                "team": None,
                "rpc_origins": [],
            }
        )

    async def _gateway_info(
        self, request: web.Request, params: dict[str, str]
    ) -> web.StreamResponse:
        return json_response({"url": self.gateway_url})

    async def _gateway_bot(
        self, request: web.Request, params: dict[str, str]
    ) -> web.StreamResponse:
        return json_response(
            {
                "url": self.gateway_url,
                "shards": self.shard_count,
                "session_start_limit": {
                    "total": 1000,
                    "remaining": 999,
                    "reset_after": 14_400_000,
                    "max_concurrency": 1,
                },
            }
        )

    async def _put_commands(
        self, request: web.Request, params: dict[str, str]
    ) -> web.StreamResponse:
        if params["application_id"] != self.application_id:
            return error(403, "Missing Access", 50001)
        guild_id = params.get("guild_id")
        commands = await request.json()
        stored = []
        for command in commands:
            stored.append(
                {
                    "id": self.snowflake(),
                    "application_id": self.application_id,
                    "version": self.snowflake(),
                    "default_member_permissions": None,
                    "type": 1,
                    "nsfw": False,
                    **({"guild_id": guild_id} if guild_id else {}),
                    **command,
                }
            )
        self.commands[guild_id] = stored
        return json_response(stored)

    async def _get_commands(
        self, request: web.Request, params: dict[str, str]
    ) -> web.StreamResponse:
        return json_response(self.commands.get(params.get("guild_id"), []))

    def _channel_fault(self, channel_id: str, *, posting: bool = False) -> web.Response | None:
        if channel_id in self.missing_channels:
            return error(404, "Unknown Channel", 10003)
        allowed = self.bot_permissions(channel_id)
        if channel_id in self.forbidden_channels or not allowed & VIEW_CHANNEL:
            return error(403, "Missing Access", 50001)
        if posting and not allowed & SEND_MESSAGES:
            return error(403, "Missing Permissions", 50013)
        return None

    # ------------------------------------------------------------------ permissions

    def guild_of(self, channel_id: str) -> str:
        return self.channel_guilds.get(channel_id, self.guild_ids[0])

    def deny(self, channel_id: str, permissions: int, *, target: str | None = None) -> None:
        """Deny `permissions` in a channel to @everyone (or to a role or member id)."""
        guild_id = self.guild_of(channel_id)
        who = target or guild_id
        overwrites = self.channel_overwrites.setdefault(channel_id, [])
        overwrites.append({"id": who, "type": 0 if who == guild_id else 1, "allow": "0",
                           "deny": str(permissions)})  # fmt: skip

    def bot_permissions(self, channel_id: str) -> int:
        """The bot's permissions in a channel: Discord's documented computation."""
        guild_id = self.guild_of(channel_id)
        roles = {r["id"]: int(r["permissions"]) for r in self.guild_roles.get(guild_id, [])}
        mine = self.bot_roles.get(guild_id, [])
        allowed = roles.get(guild_id, 0)
        for role_id in mine:
            allowed |= roles.get(role_id, 0)
        if allowed & ADMINISTRATOR:
            return ALL_PERMISSIONS
        overwrites = {o["id"]: o for o in self.channel_overwrites.get(channel_id, [])}
        everyone = overwrites.get(guild_id)
        if everyone:
            allowed = (allowed & ~int(everyone["deny"])) | int(everyone["allow"])
        deny = allow = 0
        for role_id in mine:
            if role_id in overwrites:
                deny |= int(overwrites[role_id]["deny"])
                allow |= int(overwrites[role_id]["allow"])
        allowed = (allowed & ~deny) | allow
        member = overwrites.get(self.bot_user["id"])
        if member:
            allowed = (allowed & ~int(member["deny"])) | int(member["allow"])
        return allowed

    async def _get_channel(
        self, request: web.Request, params: dict[str, str]
    ) -> web.StreamResponse:
        channel_id = params["channel_id"]
        fault = self._channel_fault(channel_id)
        if fault is not None:
            return fault
        return json_response(
            {
                "id": channel_id,
                "type": 0,
                "guild_id": self.guild_of(channel_id),
                "name": f"channel-{channel_id[-4:]}",
                "position": 0,
                "permission_overwrites": self.channel_overwrites.get(channel_id, []),
                "nsfw": False,
                "parent_id": None,
            }
        )

    async def _get_guild(self, request: web.Request, params: dict[str, str]) -> web.StreamResponse:
        guild_id = params["guild_id"]
        if guild_id not in self.guild_ids:
            return error(403, "Missing Access", 50001)  # the bot is not in that server
        return json_response(
            {
                "id": guild_id,
                "name": f"Server {guild_id[-4:]}",
                "owner_id": "900000000000000099",
                "roles": self.guild_roles.get(guild_id, []),
                "features": [],
            }
        )

    async def _get_member(self, request: web.Request, params: dict[str, str]) -> web.StreamResponse:
        guild_id, user_id = params["guild_id"], params["user_id"]
        if guild_id not in self.guild_ids:
            return error(403, "Missing Access", 50001)
        if user_id != self.bot_user["id"]:
            return error(404, "Unknown Member", 10007)
        return json_response(
            {
                "user": self.bot_user,
                "roles": self.bot_roles.get(guild_id, []),
                "joined_at": "2019-01-01T00:00:00+00:00",
                "deaf": False,
                "mute": False,
                "flags": 0,
            }
        )

    async def _create_message(
        self, request: web.Request, params: dict[str, str]
    ) -> web.StreamResponse:
        channel_id = params["channel_id"]
        fault = self._channel_fault(channel_id, posting=True)
        if fault is not None:
            return fault
        body = await request.json()
        problem = invalid_form(body)
        if problem is not None:
            return error(400, f"Invalid Form Body ({problem})", 50035)
        nonce = body.get("nonce")
        now = time.monotonic()
        if nonce is not None and len(str(nonce)) > 25:
            return error(400, "Invalid Form Body (nonce: Must be 25 or fewer in length.)", 50035)
        if nonce is not None and body.get("enforce_nonce"):
            seen = self._nonces.get((channel_id, str(nonce)))
            if seen is not None and now - seen[1] < self.nonce_window:
                self.nonce_hits += 1
                return json_response(self.messages[seen[0]].to_json(self.bot_user))
        message = FakeMessage(
            id=self.snowflake(),
            channel_id=channel_id,
            content=body.get("content") or "",
            embeds=body.get("embeds") or [],
            nonce=None if nonce is None else str(nonce),
            allowed_mentions=body.get("allowed_mentions"),
            payload=body,
            created_at=now,
        )
        self.messages[message.id] = message
        if nonce is not None:
            self._nonces[(channel_id, str(nonce))] = (message.id, now)
        return json_response(message.to_json(self.bot_user))

    async def _list_messages(
        self, request: web.Request, params: dict[str, str]
    ) -> web.StreamResponse:
        """GET a channel's messages (newest first; `after`, `before`, `limit` 1-100). Like
        Discord, a stored message does not carry the nonce it was sent with."""
        channel_id = params["channel_id"]
        fault = self._channel_fault(channel_id)
        if fault is not None:
            return fault
        if channel_id in self.no_history_channels:
            return error(403, "Missing Access", 50001)
        try:
            limit = int(request.query.get("limit", "50"))
            after = int(request.query.get("after", "0"))
            before = int(request.query.get("before", str(1 << 63)))
        except ValueError:
            return error(400, "Invalid Form Body (limit, after, before)", 50035)
        if not 1 <= limit <= 100:
            return error(400, "Invalid Form Body (limit: between 1 and 100)", 50035)
        found = sorted(
            (m for m in self.channel_messages(channel_id) if after < int(m.id) < before),
            key=lambda m: int(m.id),
        )
        # With `after`, Discord returns the oldest `limit` after it (newest first).
        chosen = found[:limit] if "after" in request.query else found[-limit:]
        self.history_reads += 1
        return json_response(
            [
                {k: v for k, v in m.to_json(self.bot_user).items() if k != "nonce"}
                for m in reversed(chosen)
            ]
        )

    async def _edit_message(
        self, request: web.Request, params: dict[str, str]
    ) -> web.StreamResponse:
        fault = self._channel_fault(params["channel_id"])
        if fault is not None:
            return fault
        message = self.messages.get(params["message_id"])
        if message is None or message.deleted or message.channel_id != params["channel_id"]:
            return error(404, "Unknown Message", 10008)
        body = await request.json()
        problem = invalid_form(body)
        if problem is not None:
            return error(400, f"Invalid Form Body ({problem})", 50035)
        message.edits.append(body)
        if "content" in body:
            message.content = body["content"] or ""
        if "embeds" in body:
            message.embeds = body["embeds"] or []
        return json_response(message.to_json(self.bot_user))

    async def _delete_message(
        self, request: web.Request, params: dict[str, str]
    ) -> web.StreamResponse:
        fault = self._channel_fault(params["channel_id"])
        if fault is not None:
            return fault
        message = self.messages.get(params["message_id"])
        if message is None or message.deleted or message.channel_id != params["channel_id"]:
            return error(404, "Unknown Message", 10008)
        message.deleted = True
        return web.Response(status=204)

    # -- interactions --

    def _record(self, interaction: _Interaction, kind: str, type_: int | None, data: Any) -> None:
        reply = Reply(
            interaction.id,
            kind,
            type_,
            data if isinstance(data, dict) else {},
            time.monotonic() - interaction.dispatched_at,
        )
        self.replies.setdefault(interaction.id, []).append(reply)

    async def _json_or_form(self, request: web.Request) -> dict[str, Any]:
        if request.content_type.startswith("multipart/"):
            form = await request.post()
            raw = form.get("payload_json")
            return json.loads(str(raw)) if raw is not None else {}
        if not request.can_read_body:
            return {}
        data: dict[str, Any] = await request.json()
        return data

    async def _callback(self, request: web.Request, params: dict[str, str]) -> web.StreamResponse:
        interaction = self._interactions.get(params["interaction_id"])
        if interaction is None or interaction.token != params["token"]:
            return error(404, "Unknown interaction", 10062)
        if interaction.over_http:
            # Discord takes an HTTP interaction's first answer from its request's response.
            return error(400, "Interaction has already been acknowledged.", 40060)
        return self._acknowledge(interaction, await self._json_or_form(request))

    def _acknowledge(self, interaction: _Interaction, body: Mapping[str, Any]) -> web.Response:
        """The interaction's first answer (a callback, or the response to Discord's request
        to the Interactions Endpoint URL)."""
        if time.monotonic() - interaction.dispatched_at > self.interaction_deadline:
            return error(404, "Unknown interaction", 10062)
        if interaction.acknowledged:
            return error(400, "Interaction has already been acknowledged.", 40060)
        try:
            type_ = int(body["type"])
        except (KeyError, TypeError, ValueError):
            return error(400, "Invalid Form Body (type)", 50035)
        data = body.get("data") or {}
        problem = invalid_form(data)
        if problem is not None:
            return error(400, f"Invalid Form Body ({problem})", 50035)
        interaction.acknowledged = True
        self._record(interaction, "callback", type_, data)
        response: dict[str, Any] = {
            "interaction": {
                "id": interaction.id,
                "type": interaction.payload["type"],
                "response_message_loading": type_ == DEFERRED_CHANNEL_MESSAGE,
                "response_message_ephemeral": bool(int(data.get("flags") or 0) & EPHEMERAL_FLAG),
            }
        }
        if type_ in (CHANNEL_MESSAGE, DEFERRED_CHANNEL_MESSAGE, UPDATE_MESSAGE):
            original = message_object(
                self.snowflake(),
                str(interaction.payload.get("channel_id", "0")),
                self.bot_user,
                content=data.get("content") or "",
                embeds=data.get("embeds"),
                flags=int(data.get("flags") or 0),
                components=data.get("components"),
            )
            interaction.original = original
            response["interaction"]["response_message_id"] = original["id"]
            response["resource"] = {"type": type_, "message": original}
        else:
            response["resource"] = {"type": type_}
        return json_response(response)

    def _interaction_for(self, params: Mapping[str, str]) -> _Interaction | None:
        interaction = self._by_token.get(params["token"])
        if interaction is None or params["application_id"] != self.application_id:
            return None
        return interaction

    async def _edit_original(
        self, request: web.Request, params: dict[str, str]
    ) -> web.StreamResponse:
        interaction = self._interaction_for(params)
        if interaction is None or not interaction.acknowledged:
            return error(404, "Unknown Webhook", 10015)
        body = await self._json_or_form(request)
        problem = invalid_form(body)
        if problem is not None:
            return error(400, f"Invalid Form Body ({problem})", 50035)
        self._record(interaction, "edit_original", None, body)
        original = interaction.original or message_object(
            self.snowflake(), str(interaction.payload.get("channel_id", "0")), self.bot_user
        )
        if "content" in body:
            original["content"] = body["content"] or ""
        if "embeds" in body:
            original["embeds"] = body["embeds"] or []
        if "components" in body:
            original["components"] = body["components"] or []
        interaction.original = original
        return json_response(original)

    async def _get_original(
        self, request: web.Request, params: dict[str, str]
    ) -> web.StreamResponse:
        interaction = self._interaction_for(params)
        if interaction is None or interaction.original is None:
            return error(404, "Unknown Message", 10008)
        return json_response(interaction.original)

    async def _delete_original(
        self, request: web.Request, params: dict[str, str]
    ) -> web.StreamResponse:
        interaction = self._interaction_for(params)
        if interaction is None or interaction.original is None:
            return error(404, "Unknown Message", 10008)
        self._record(interaction, "delete_original", None, {})
        interaction.original = None
        return web.Response(status=204)

    async def _followup(self, request: web.Request, params: dict[str, str]) -> web.StreamResponse:
        interaction = self._interaction_for(params)
        if interaction is None or not interaction.acknowledged:
            return error(404, "Unknown Webhook", 10015)
        body = await self._json_or_form(request)
        problem = invalid_form(body)
        if problem is not None:
            return error(400, f"Invalid Form Body ({problem})", 50035)
        self._record(interaction, "followup", None, body)
        message = message_object(
            self.snowflake(),
            str(interaction.payload.get("channel_id", "0")),
            self.bot_user,
            content=body.get("content") or "",
            embeds=body.get("embeds"),
            flags=int(body.get("flags") or 0),
        )
        return json_response(message)

    # ------------------------------------------------------------------ bench control

    async def _stats(self, request: web.Request) -> web.StreamResponse:
        return json_response(self.stats())

    async def _reset(self, request: web.Request) -> web.StreamResponse:
        self.reset_counters()
        return json_response({"ok": True})

    async def _control_interaction(self, request: web.Request) -> web.StreamResponse:
        """{"payload": ..., "url": optional}: an interaction over the gateway (to every
        session of its shard) or, with `url`, to that Interactions Endpoint URL."""
        body = await request.json()
        try:
            if body.get("url"):
                iid = await self.post_interaction(body["payload"], str(body["url"]))
            else:
                iid = await self.send_interaction(body["payload"])
        except TimeoutError:
            return error(503, "no gateway session is connected for that shard")
        return json_response({"id": iid})

    async def _control_replay(self, request: web.Request) -> web.StreamResponse:
        """{"id", "url"}: POST an interaction sent over HTTP again; answers the status."""
        body = await request.json()
        try:
            status = await self.replay_interaction(str(body["id"]), str(body["url"]))
        except (KeyError, aiohttp.ClientError, TimeoutError) as exc:
            return error(400, f"cannot replay: {type(exc).__name__}")
        return json_response({"status": status})

    async def _control_interactions(self, request: web.Request) -> web.StreamResponse:
        """Per interaction: how many times it was acknowledged, and the endpoint's status."""
        callbacks = Counter(
            iid
            for iid, replies in self.replies.items()
            for reply in replies
            if reply.kind == "callback"
        )
        already = Counter(
            path.split("/interactions/", 1)[1].split("/", 1)[0]
            for _, _, path, status in self.requests
            if path.endswith("/callback") and status == 400
        )
        return json_response(
            {
                "acknowledged": {iid: callbacks.get(iid, 0) for iid in self._interactions},
                "http_statuses": self.http_statuses,
                "http_failures": self.http_failures,
                "already_acknowledged": dict(already),
            }
        )

    async def _control_messages(self, request: web.Request) -> web.StreamResponse:
        """[channel id, first embed's title, created (monotonic s)] of every message."""
        return json_response(
            [
                [m.channel_id, (m.embeds[0].get("title") if m.embeds else m.content), m.created_at]
                for m in self.messages.values()
                if not m.deleted
            ]
        )

    async def _control_requests(self, request: web.Request) -> web.StreamResponse:
        """Every API request: [monotonic s, method, path, status] (for looking at pacing)."""
        return json_response([list(r) for r in self.requests])

    async def _control_counts(self, request: web.Request) -> web.StreamResponse:
        """How many messages carry each first-embed title (cheap enough to poll)."""
        return json_response(
            Counter(
                m.embeds[0].get("title") if m.embeds else m.content
                for m in self.messages.values()
                if not m.deleted
            )
        )

    async def watch_own_lag(self, every: float = 0.005) -> None:
        """Record when this process could not run for a while (its event loop woke late): the
        requests that arrived meanwhile are counted bunched. For reading a benchmark."""
        while True:
            before = time.monotonic()
            await asyncio.sleep(every)
            late = time.monotonic() - before - every
            if late > 0.02:
                self.stalls.append((before, late))

    async def _control_sessions(self, request: web.Request) -> web.StreamResponse:
        return json_response(
            {
                "stalls": self.stalls,
                "live": self.connected_sessions(),
                "identifies": self.identifies,
                "now": time.monotonic(),
                "rate_limited": len(self.rate_limited),
            }
        )

    # ------------------------------------------------------------------ gateway

    async def _gateway(self, request: web.Request) -> web.StreamResponse:
        if not self.gateway_open:
            return error(503, "gateway unavailable")
        ws = web.WebSocketResponse(autoping=True, max_msg_size=0)
        await ws.prepare(request)
        self._sockets[ws] = request
        self.notify()
        await self._send(ws, {"op": 10, "d": {"heartbeat_interval": self.heartbeat_interval_ms}})
        try:
            async for msg in ws:
                if msg.type is not WSMsgType.TEXT:
                    continue
                frame = json.loads(msg.data)
                op, data = frame.get("op"), frame.get("d")
                if op == 1:
                    self.heartbeats += 1
                    await self._send(ws, {"op": 11})
                elif op == 2:
                    await self._identify(ws, data)
                elif op == 6:
                    await self._resume(ws, data)
                # op 3 (presence), 4 (voice), 8 (request members) need no answer here.
        finally:
            self._sockets.pop(ws, None)
            for session in self._sessions.values():
                if session.ws is ws:
                    session.ws = None
            self.notify()
        return ws

    @staticmethod
    async def _send(ws: web.WebSocketResponse, frame: dict[str, Any]) -> None:
        frame = {"op": frame["op"], "d": frame.get("d"), "s": frame.get("s"), "t": frame.get("t")}
        with contextlib.suppress(ConnectionError, RuntimeError):
            await ws.send_str(json.dumps(frame))

    async def _send_dispatch(self, session: _Session, event: str, data: dict[str, Any]) -> None:
        session.seq += 1
        frame = {"op": 0, "t": event, "s": session.seq, "d": data}
        session.frames.append(frame)
        if session.ws is not None and not session.ws.closed:
            await self._send(session.ws, frame)

    async def _identify(self, ws: web.WebSocketResponse, data: dict[str, Any]) -> None:
        if data.get("token") != self.token:
            await ws.close(code=4004, message=b"Authentication failed.")
            return
        shard_id, shard_count = data.get("shard") or [0, 1]
        if shard_count != self.shard_count or not 0 <= shard_id < shard_count:
            await ws.close(code=4010, message=b"Invalid shard.")
            return
        self.identifies += 1
        session = _Session(id=secrets.token_hex(16), shard=(shard_id, shard_count), ws=ws)
        self._sessions[session.id] = session
        guilds = [g for g in self.guild_ids if (int(g) >> 22) % shard_count == shard_id]
        ready = load_payload("ready") | {
            "user": self.bot_user,
            "guilds": [{"id": g, "unavailable": True} for g in guilds],
            "session_id": session.id,
            "resume_gateway_url": self.gateway_url,
            "shard": [shard_id, shard_count],
        }
        ready["application"]["id"] = self.application_id
        await self._send_dispatch(session, "READY", ready)
        for guild_id in guilds:
            await self._send_dispatch(session, "GUILD_CREATE", self.guild_payload(guild_id))
        self.notify()

    def guild_payload(self, guild_id: str) -> dict[str, Any]:
        guild = load_payload("guild_create")
        guild["id"] = guild_id
        for channel in guild.get("channels", []):
            channel["guild_id"] = guild_id
        return guild

    async def _resume(self, ws: web.WebSocketResponse, data: dict[str, Any]) -> None:
        session = self._sessions.get(str(data.get("session_id")))
        if data.get("token") != self.token:
            await ws.close(code=4004, message=b"Authentication failed.")
            return
        if session is None:
            await self._send(ws, {"op": 9, "d": False})
            return
        self.resumes += 1
        session.ws = ws
        after = int(data.get("seq") or 0)
        for frame in session.frames:
            if frame["s"] > after:
                await self._send(ws, frame)
        await self._send_dispatch(session, "RESUMED", {})
        self.notify()


async def _serve(args: argparse.Namespace) -> None:
    fake = FakeDiscord(
        token=args.token,
        global_per_second=args.global_rate or None,
        per_channel_limit=args.per_channel_limit,
        per_channel_window=args.per_channel_window,
        latency=args.latency_ms / 1000,
        port=args.port,
        shard_count=args.shard_count,
    )
    async with fake:
        # A measuring instrument should not stall: collection pauses would bunch the
        # requests it counts and show 429s the client did not cause. What start-up loaded
        # is frozen; what a run adds (every message it keeps) would make each full
        # collection longer, so the collector stays off for the run (a benchmark's run
        # is short; its memory grows by what it records).
        gc.freeze()
        gc.disable()
        print(f"READY {fake.api_base} {fake.gateway_url} {fake.public_key}", flush=True)
        await fake.watch_own_lag()


def main() -> None:
    parser = argparse.ArgumentParser(description="A fake Discord for benchmarks (127.0.0.1).")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--token", default="fake-bot-token")
    parser.add_argument("--global-rate", type=float, default=50.0, help="requests/s; 0 = off")
    parser.add_argument("--per-channel-limit", type=int, default=5)
    parser.add_argument("--per-channel-window", type=float, default=5.0)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--shard-count", type=int, default=1)
    args = parser.parse_args()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(args))


if __name__ == "__main__":
    main()


# ---------------------------------------------------------------------- building interactions

GUILD_ID = "700000000000000001"
CHANNEL_ID = "700000000000000010"
COMMS_ROLE_ID = "700000000000000020"  # the admin role in the test config
MEMBER_ROLE_ID = "700000000000000030"
MANAGE_GUILD = 1 << 5


def interaction_payload(
    name: str,
    *,
    options: Mapping[str, Any] | None = None,
    roles: tuple[str, ...] | None = None,
    manage_guild: bool = False,
    locale: str = "en-US",
    user_id: str | None = None,
    channel_id: str | None = None,
) -> dict[str, Any]:
    """`/strike <name>` as Discord sends it, from the captured status command."""
    data = load_payload("interaction_command_status")
    data["data"]["options"][0]["name"] = name
    data["data"]["options"][0]["options"] = [
        {"name": key, "type": _option_type(value), "value": value}
        for key, value in (options or {}).items()
    ]
    return as_member(
        data,
        roles=roles,
        manage_guild=manage_guild,
        locale=locale,
        user_id=user_id,
        channel_id=channel_id,
    )


def autocomplete_payload(
    name: str,
    focused: str,
    value: str,
    *,
    options: Mapping[str, Any] | None = None,
    locale: str = "en-US",
    roles: tuple[str, ...] | None = None,
) -> dict[str, Any]:
    """A member typing `value` into option `focused` of `/strike <name>` (the other
    `options` already given), as Discord sends it for autocomplete."""
    data = load_payload("interaction_autocomplete_demand")
    sub = data["data"]["options"][0]
    sub["name"] = name
    sub["options"] = [
        {"name": key, "type": _option_type(given), "value": given}
        for key, given in (options or {}).items()
    ] + [{"name": focused, "type": 3, "value": value, "focused": True}]
    return as_member(data, roles=roles, locale=locale)


def _option_type(value: Any) -> int:
    if isinstance(value, bool):
        return 5
    if isinstance(value, int):
        return 4
    return 3


def as_member(
    payload: dict[str, Any],
    *,
    roles: tuple[str, ...] | None = None,
    manage_guild: bool = False,
    locale: str = "en-US",
    user_id: str | None = None,
    channel_id: str | None = None,
) -> dict[str, Any]:
    """The same interaction from another member (roles, permissions, locale, channel)."""
    data = json.loads(json.dumps(payload))
    member = data["member"]
    if roles is not None:
        member["roles"] = list(roles)
    permissions = int(member["permissions"])
    member["permissions"] = str(
        permissions | MANAGE_GUILD if manage_guild else permissions & ~MANAGE_GUILD
    )
    if user_id is not None:
        member["user"]["id"] = user_id
    if channel_id is not None:
        data["channel_id"] = channel_id
        data["channel"]["id"] = channel_id
    data["locale"] = locale
    shaped: dict[str, Any] = data
    return shaped


def modal_submit_payload(
    modal: Reply, values: Mapping[str, str | list[str]], *, like: Mapping[str, Any]
) -> dict[str, Any]:
    """The MODAL_SUBMIT a member sends after filling in the modal the bot opened (`modal` is
    the bot's type-9 callback); `like` is the interaction that opened it (same member)."""
    data = load_payload("interaction_modal_submit_post")
    for key in ("member", "locale", "channel", "channel_id", "guild_id", "guild"):
        data[key] = json.loads(json.dumps(like[key]))

    def answer(component: Mapping[str, Any]) -> dict[str, Any]:
        cid = component["custom_id"]
        out: dict[str, Any] = {"type": component["type"], "custom_id": cid}
        if "id" in component:
            out["id"] = component["id"]
        if component["type"] == 4:
            value = values.get(cid, "")
            out["value"] = value if isinstance(value, str) else value[0]
        else:
            value = values.get(cid, [])
            out["values"] = [value] if isinstance(value, str) else list(value)
        return out

    components = []
    for row in modal.data["components"]:
        if row["type"] == 18:
            components.append(
                {"type": 18, "id": row.get("id"), "component": answer(row["component"])}
            )
        elif row["type"] == 1:
            components.append({"type": 1, "components": [answer(c) for c in row["components"]]})
    data["data"] = {"custom_id": modal.data["custom_id"], "components": components}
    return data


def buttons(message: Mapping[str, Any]) -> dict[str, str]:
    """label -> custom_id of the buttons on a message (or on a reply's data)."""
    out: dict[str, str] = {}
    for row in message.get("components") or []:
        for component in row.get("components", []):
            if component.get("type") == 2 and "custom_id" in component:
                out[component.get("label", "")] = component["custom_id"]
    return out


def button_payload(
    message: Mapping[str, Any], custom_id: str, *, like: Mapping[str, Any]
) -> dict[str, Any]:
    """A click on a button of `message` by the member of interaction `like`."""
    data = load_payload("interaction_component_button")
    for key in ("member", "locale", "channel", "channel_id", "guild_id", "guild"):
        data[key] = json.loads(json.dumps(like[key]))
    data["data"]["custom_id"] = custom_id
    data["message"] = {**data["message"], **dict(message)}
    return data


# ---------------------------------------------------------------------- strikebot against it

ROOT = Path(__file__).resolve().parent.parent.parent


@dataclass
class DiscordBot:
    """A running DiscordAdapter (real discord.py) wired to a store and the fake."""

    fake: FakeDiscord
    store: Any  # bot.store.Store
    ctx: Any  # bot.context.PluginContext
    commands: Any  # bot.commands.Commands
    adapter: Any  # adapters.discord.DiscordAdapter
    clock: Any  # bot.clock.FixedClock


def bot_config(guild_ids: tuple[str, ...] = (GUILD_ID,)) -> Any:
    """The shipped campaign (config/strike.toml) with test admins and guilds."""
    from tests.support import shipped_config

    return shipped_config(
        admins={"discord": {"role_ids": [COMMS_ROLE_ID], "user_ids": []}},
        discord={"guild_ids": list(guild_ids)},
    )


@contextlib.asynccontextmanager
async def discord_bot(
    fake: FakeDiscord,
    database_url: str,
    clock: Any,
    *,
    connect: bool = True,
    token: str | None = None,
    env: Mapping[str, str] | None = None,
    **adapter_options: Any,
) -> Any:
    """Store (migrated, seeded) + Commands + DiscordAdapter started against `fake`."""
    from adapters.discord import DiscordAdapter, plugin
    from bot.config import Settings
    from bot.editorial.admin import Admin
    from bot.runtime.context import plugin_context
    from bot.runtime.seed import apply_seed
    from bot.store import Store

    config = bot_config(fake.guild_ids)
    settings = Settings.from_env(
        {
            "DISCORD_TOKEN": token or fake.token,
            "DISCORD_API_BASE": fake.api_base,
            "DISCORD_GATEWAY_URL": fake.gateway_url,
            "STRIKEBOT_DATABASE_URL": database_url,
            **(env or {}),
        }
    )
    async with Store.open(database_url) as store:
        await apply_seed(store, config, clock)
        campaign = config.to_campaign()
        admin = Admin(store, campaign, config.to_admins(), clock)
        ctx = plugin_context(plugin, settings, config, store=store, admin=admin, clock=clock)
        adapter_options.setdefault("guild_ready_timeout", 0)
        adapter = DiscordAdapter(ctx, **adapter_options)
        await adapter.start()
        try:
            if connect:
                await fake.wait_connected()
                await adapter.wait_health(lambda health: bool(health["connected"]))
            yield DiscordBot(fake, store, ctx, ctx.commands, adapter, clock)
        finally:
            await adapter.stop()
