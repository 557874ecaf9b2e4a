"""A fake Slack on 127.0.0.1 that the real slack-sdk / slack-bolt talk to in tests.

What it serves:
- The Web API methods strikebot calls (`/api/<method>`, JSON, form or query arguments,
  token in `Authorization: Bearer`), answering with Slack's documented response shapes:
  auth.test, chat.postMessage / update / delete / postEphemeral, views.open / update / push,
  users.info, usergroups.users.list, apps.connections.open, conversations.info. Every
  response carries the token's scopes in `x-oauth-scopes`, as Slack's do; a method needing
  a scope the app lacks answers `missing_scope` with `needed` and `provided`.
- Private channels: invisible to a bot that was not invited (`channel_not_found`, as Slack
  answers); a public channel takes posts from a non-member only with `chat:write.public`.
- Slack's limits, refused the way Slack refuses them: more than 50 blocks, a section over
  3000 characters, a header over 150, more than 10 fields, text over 40,000 characters
  (`invalid_blocks` / `msg_too_long`); modal titles over 24 characters, options over 75...
  (`invalid_arguments`).
- Channel states (`channel_not_found`, `not_in_channel`, `is_archived`) and injectable
  failures: rate limits (HTTP 429, `Retry-After`, `{"ok": false, "error": "ratelimited"}`),
  5xx pages, hung requests, any error code, any raw body (a proxy's plain text, cut JSON).
- `response_url`s (usable 5 times, like Slack's) and a Socket Mode WebSocket that sends
  envelopes and records the client's acks by `envelope_id`.
- `pings()`: the mentions Slack *would* turn into notifications in what was posted.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode

from aiohttp import WSMsgType, web

from tests.fakes._server import serve

MAX_BLOCKS = 50
# The adapter's answer budget in tests not about it (those pass a short one): Slack's own 2 s
# would turn a slow moment on a loaded CI machine into "working on it".
UNRACED_BUDGET = 30.0
# The bot scopes config/slack-manifest.yml asks for.
DEFAULT_SCOPES = ("commands", "chat:write", "chat:write.public", "users:read",
                  "usergroups:read", "channels:read", "groups:read", "channels:history",
                  "groups:history")  # fmt: skip
MAX_MODAL_BLOCKS = 100
MAX_SECTION_TEXT = 3000
MAX_FIELD_TEXT = 2000
MAX_FIELDS = 10
MAX_HEADER_TEXT = 150
MAX_CONTEXT_ELEMENTS = 10
MAX_TEXT = 40_000
MAX_VIEW_TITLE = 24
MAX_OPTION_TEXT = 75
MAX_OPTION_VALUE = 150
MAX_OPTIONS = 100
MAX_PRIVATE_METADATA = 3000
MAX_INPUT_LENGTH = 3000
RESPONSE_URL_USES = 5

BLOCK_TYPES = {"section", "header", "context", "divider", "actions", "input", "image", "rich_text"}

# Slack's own parsing of message text: these become notifications unless escaped.
_ANGLE_MENTION = re.compile(r"<(!channel|!here|!everyone|!subteam\^[A-Z0-9]+|@[UW][A-Z0-9]+)[^>]*>")
_PLAIN_BROADCAST = re.compile(r"(?<![\w\u200b])@(channel|here|everyone)\b")


@dataclass(slots=True)
class Call:
    """One Web API request as the fake received it."""

    method: str
    args: dict[str, Any]
    token: str | None
    status: int = 200
    error: str | None = None


@dataclass(slots=True)
class Failure:
    """An injected failure for `method` (optionally only for one channel)."""

    method: str
    error: str | None
    status: int
    retry_after: int | None
    times: int | None
    channel: str | None
    hang: bool
    raw: tuple[str, str] | None = None  # (Content-Type, body): an answer that is not Slack's
    reset: bool = False  # drop the connection without an answer
    lose_answer: bool = False  # carry the call out, then drop the connection unanswered


@dataclass(slots=True)
class Channel:
    id: str
    name: str
    member: bool = True
    archived: bool = False
    messages: list[dict[str, Any]] = field(default_factory=list)
    private: bool = False


class FakeSlack:
    """`async with FakeSlack() as slack:` then point the client at `slack.api_url`."""

    def __init__(
        self,
        *,
        bot_token: str = "xoxb-test-token",  # noqa: S107 (a fake's token, not a secret)
        app_token: str = "xapp-test-token",  # noqa: S107 (same)
        team_id: str = "T0STRIKE",
        team_name: str = "UTLA Members",
        bot_user_id: str = "U0BOT",
        bot_id: str = "B0BOT",
        app_id: str = "A0STRIKE",
    ) -> None:
        self.bot_token = bot_token
        self.app_token = app_token
        self.team_id = team_id
        self.team_name = team_name
        self.bot_user_id = bot_user_id
        self.bot_id = bot_id
        self.app_id = app_id
        self.calls: list[Call] = []
        self.channels: dict[str, Channel] = {}
        self.users: dict[str, dict[str, Any]] = {}
        self.usergroups: dict[str, list[str]] = {}
        self.views: dict[str, dict[str, Any]] = {}
        self.ephemerals: list[dict[str, Any]] = []
        self.responses: dict[str, list[dict[str, Any]]] = {}
        self.acks: dict[str, dict[str, Any]] = {}
        self.failures: list[Failure] = []
        # The bot token's scopes (config/slack-manifest.yml) for the methods that check them.
        self.scopes: set[str] = set(DEFAULT_SCOPES)
        self.connections = 0
        self._counter = itertools.count(1)
        self._runner: web.AppRunner | None = None
        self._port = 0
        self._closing = asyncio.Event()
        self._sockets: list[web.WebSocketResponse] = []
        self._socket_ready = asyncio.Event()
        self._connected = asyncio.Condition()
        self._ack_waiters: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._posted = asyncio.Event()

    # ------------------------------------------------------------------ lifecycle

    async def __aenter__(self) -> FakeSlack:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        app = web.Application()
        app.router.add_route("*", "/api/{method}", self._api)
        app.router.add_post("/response/{token}", self._response_url)
        app.router.add_get("/link/", self._socket)
        self._runner, self._port = await serve(app, access_log=None)

    async def close(self) -> None:
        self._closing.set()
        for ws in list(self._sockets):
            await ws.close()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    @property
    def api_url(self) -> str:
        """What `AsyncWebClient(base_url=...)` / `SLACK_API_URL` takes (trailing slash)."""
        return f"{self.base_url}/api/"

    # ------------------------------------------------------------------ world state

    def add_channel(
        self,
        channel_id: str,
        name: str = "",
        *,
        member: bool = True,
        archived: bool = False,
        private: bool = False,
    ) -> Channel:
        channel = Channel(channel_id, name or channel_id.lower(), member, archived, private=private)
        self.channels[channel_id] = channel
        return channel

    def add_user(
        self,
        user_id: str,
        name: str = "",
        *,
        locale: str = "en-US",
        tz: str = "America/Los_Angeles",
    ) -> None:
        self.users[user_id] = {
            "id": user_id,
            "team_id": self.team_id,
            "name": name or user_id.lower(),
            "deleted": False,
            "real_name": name or user_id,
            "tz": tz,
            "tz_label": "Pacific Standard Time",
            "tz_offset": -28800,
            "locale": locale,
            "is_admin": False,
            "is_bot": False,
            "updated": 1502138686,
            "profile": {"real_name": name or user_id, "display_name": name or user_id},
        }

    def add_usergroup(self, group_id: str, members: list[str]) -> None:
        self.usergroups[group_id] = list(members)

    def messages(self, channel_id: str) -> list[dict[str, Any]]:
        """Messages currently in a channel (deleted ones removed), oldest first."""
        return [m for m in self.channels[channel_id].messages if not m.get("deleted")]

    async def wait_for_message(self, channel_id: str, within: float = 5.0) -> list[dict[str, Any]]:
        """Until a message is in the channel (posted by anyone); its messages."""
        async with asyncio.timeout(within):
            while True:
                self._posted.clear()
                if self.messages(channel_id):
                    return self.messages(channel_id)
                await self._posted.wait()

    def calls_to(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method == method]

    # ------------------------------------------------------------------ failures

    def fail(
        self,
        method: str,
        error: str | None = None,
        *,
        status: int = 200,
        retry_after: int | None = None,
        times: int | None = 1,
        channel: str | None = None,
        hang: bool = False,
        raw: tuple[str, str] | None = None,
        reset: bool = False,
        lose_answer: bool = False,
    ) -> None:
        """The next `times` calls (None: all) to `method` fail with `error` / `status`, or
        with `raw` = (Content-Type, body): a proxy's plain-text 503, JSON cut short...; with
        `hang` they never answer, with `reset` the connection is dropped unanswered, with
        `lose_answer` the call is carried out and then the connection dropped unanswered."""
        self.failures.append(
            Failure(
                method, error, status, retry_after, times, channel, hang, raw, reset, lose_answer
            )
        )

    def rate_limit(self, method: str, retry_after: int = 30, *, times: int | None = 1) -> None:
        self.fail(method, "ratelimited", status=429, retry_after=retry_after, times=times)

    def server_error(self, method: str, status: int = 503, *, times: int | None = 1) -> None:
        self.fail(method, None, status=status, times=times)

    def hang(self, method: str, *, times: int | None = 1) -> None:
        """Calls to `method` never answer (until the fake closes): the client times out."""
        self.fail(method, None, times=times, hang=True)

    def _injected(self, method: str, args: Mapping[str, Any]) -> Failure | None:
        for failure in self.failures:
            if failure.method != method or failure.times == 0:
                continue
            if failure.channel is not None and args.get("channel") != failure.channel:
                continue
            if failure.times is not None:
                failure.times -= 1
            return failure
        return None

    # ------------------------------------------------------------------ Web API

    async def _api(self, request: web.Request) -> web.StreamResponse:
        method = request.match_info["method"]
        args = await _arguments(request)
        token = _bearer(request) or args.pop("token", None)
        call = Call(method, args, token)
        self.calls.append(call)
        failure = self._injected(method, args)
        lose_answer = failure is not None and failure.lose_answer
        if failure is not None and not lose_answer:
            if failure.hang:
                await self._closing.wait()
                raise web.HTTPServiceUnavailable()
            if failure.reset:
                if request.transport is not None:
                    request.transport.abort()
                return web.Response(status=500)
            call.status, call.error = failure.status, failure.error
            headers = {}
            if failure.retry_after is not None:
                headers["Retry-After"] = str(failure.retry_after)
            if failure.raw is not None:
                content_type, text = failure.raw
                return web.Response(
                    status=failure.status,
                    body=text.encode(),
                    headers={**headers, "Content-Type": content_type},
                )
            if failure.error is None:
                return web.Response(
                    status=failure.status,
                    text="<html><body><h1>Service Unavailable</h1></body></html>",
                    content_type="text/html",
                    headers=headers,
                )
            return web.json_response(
                {"ok": False, "error": failure.error}, status=failure.status, headers=headers
            )
        expected = self.app_token if method == "apps.connections.open" else self.bot_token
        if token is None:
            return self._error(call, "not_authed")
        if token != expected:
            return self._error(call, "invalid_auth")
        handler = getattr(self, "_m_" + method.replace(".", "_"), None)
        if handler is None:
            return self._error(call, "unknown_method")
        body: dict[str, Any] = handler(call, args)
        if not body.get("ok"):
            call.error = str(body.get("error"))
        if lose_answer and request.transport is not None:
            request.transport.abort()  # carried out; the answer never leaves
            return web.Response(status=500)
        return web.json_response(
            body,
            headers={
                "X-Slack-Req-Id": f"req{next(self._counter)}",
                "x-oauth-scopes": ",".join(sorted(self.scopes)),
            },
        )

    def _error(self, call: Call, error: str, **extra: Any) -> web.Response:
        call.error = error
        return web.json_response({"ok": False, "error": error, **extra})

    def _ts(self) -> str:
        n = next(self._counter)
        return f"{1547834400 + n}.{n:06d}"

    def _m_auth_test(self, call: Call, args: dict[str, Any]) -> dict[str, Any]:
        return {
            "ok": True,
            "url": "https://utla-members.slack.com/",
            "team": self.team_name,
            "user": "strikebot",
            "team_id": self.team_id,
            "user_id": self.bot_user_id,
            "bot_id": self.bot_id,
            "is_enterprise_install": False,
        }

    def _channel_error(self, channel_id: str | None) -> str | None:
        channel = self.channels.get(channel_id or "")
        if channel is None or (channel.private and not channel.member):
            return "channel_not_found"
        if channel.archived:
            return "is_archived"
        if not channel.member and (channel.private or "chat:write.public" not in self.scopes):
            return "not_in_channel"
        return None

    def _m_conversations_info(self, call: Call, args: dict[str, Any]) -> dict[str, Any]:
        channel = self.channels.get(args.get("channel") or "")
        needed = "groups:read" if channel is not None and channel.private else "channels:read"
        if needed not in self.scopes:
            return {"ok": False, "error": "missing_scope", "needed": needed,
                    "provided": ",".join(sorted(self.scopes))}  # fmt: skip
        if channel is None or (channel.private and not channel.member):
            return {"ok": False, "error": "channel_not_found"}
        return {
            "ok": True,
            "channel": {
                "id": channel.id,
                "name": channel.name,
                "is_channel": not channel.private,
                "is_group": channel.private,
                "is_private": channel.private,
                "is_archived": channel.archived,
                "is_member": channel.member,
                "created": 1547000000,
            },
        }

    def _m_chat_postMessage(self, call: Call, args: dict[str, Any]) -> dict[str, Any]:
        error = self._channel_error(args.get("channel")) or message_error(args)
        if error is not None:
            return {"ok": False, "error": error, **_block_errors(args)}
        channel = self.channels[args["channel"]]
        ts = self._ts()
        message = _message(args, ts, self.bot_id, self.app_id)
        channel.messages.append(message)
        self._posted.set()
        return {"ok": True, "channel": channel.id, "ts": ts, "message": _public(message)}

    def _m_conversations_history(self, call: Call, args: dict[str, Any]) -> dict[str, Any]:
        """Newest first, from `oldest`; metadata only with `include_all_metadata`. Needs
        the history scope, as Slack does (`missing_scope` without it)."""
        if "channels:history" not in self.scopes:
            return {"ok": False, "error": "missing_scope", "needed": "channels:history"}
        error = self._channel_error(args.get("channel"))
        if error is not None:
            return {"ok": False, "error": error}
        channel = self.channels[args["channel"]]
        oldest = float(args.get("oldest") or 0)
        with_metadata = str(args.get("include_all_metadata", "")).lower() in ("true", "1")
        limit = int(args.get("limit") or 100)
        messages = [
            {k: v for k, v in _public(m).items() if with_metadata or k != "metadata"}
            for m in reversed(channel.messages)
            if float(m["ts"]) > oldest and not m.get("deleted")
        ]
        return {"ok": True, "messages": messages[:limit], "has_more": len(messages) > limit}

    def _m_chat_update(self, call: Call, args: dict[str, Any]) -> dict[str, Any]:
        error = self._channel_error(args.get("channel")) or message_error(args)
        if error is not None:
            return {"ok": False, "error": error, **_block_errors(args)}
        channel = self.channels[args["channel"]]
        for i, old in enumerate(channel.messages):
            if old["ts"] == args.get("ts") and not old.get("deleted"):
                new = _message(args, old["ts"], self.bot_id, self.app_id)
                new["edited"] = {"user": self.bot_user_id, "ts": self._ts()}
                new["history"] = [*old.get("history", []), _public(old)]
                channel.messages[i] = new
                return {
                    "ok": True,
                    "channel": channel.id,
                    "ts": old["ts"],
                    "text": new.get("text", ""),
                    "message": _public(new),
                }
        return {"ok": False, "error": "message_not_found"}

    def _m_chat_delete(self, call: Call, args: dict[str, Any]) -> dict[str, Any]:
        error = self._channel_error(args.get("channel"))
        if error is not None:
            return {"ok": False, "error": error}
        for message in self.channels[args["channel"]].messages:
            if message["ts"] == args.get("ts") and not message.get("deleted"):
                message["deleted"] = True
                return {"ok": True, "channel": args["channel"], "ts": message["ts"]}
        return {"ok": False, "error": "message_not_found"}

    def _m_chat_postEphemeral(self, call: Call, args: dict[str, Any]) -> dict[str, Any]:
        error = self._channel_error(args.get("channel")) or message_error(args)
        if error is not None:
            return {"ok": False, "error": error}
        if args.get("user") not in self.users:
            return {"ok": False, "error": "user_not_in_channel"}
        ts = self._ts()
        self.ephemerals.append({**args, "message_ts": ts})
        return {"ok": True, "message_ts": ts}

    def _m_users_info(self, call: Call, args: dict[str, Any]) -> dict[str, Any]:
        user = self.users.get(str(args.get("user")))
        if user is None:
            return {"ok": False, "error": "user_not_found"}
        shown = dict(user)
        if str(args.get("include_locale", "")).lower() not in ("true", "1"):
            shown.pop("locale", None)
        return {"ok": True, "user": shown}

    def _m_usergroups_users_list(self, call: Call, args: dict[str, Any]) -> dict[str, Any]:
        members = self.usergroups.get(str(args.get("usergroup")))
        if members is None:
            return {"ok": False, "error": "no_such_subteam"}
        return {"ok": True, "users": list(members)}

    def _m_views_open(self, call: Call, args: dict[str, Any]) -> dict[str, Any]:
        if not args.get("trigger_id"):
            return {"ok": False, "error": "invalid_arguments"}
        return self._store_view(args.get("view"), None)

    def _m_views_push(self, call: Call, args: dict[str, Any]) -> dict[str, Any]:
        return self._m_views_open(call, args)

    def _m_views_update(self, call: Call, args: dict[str, Any]) -> dict[str, Any]:
        view_id = args.get("view_id")
        if view_id not in self.views:
            return {"ok": False, "error": "not_found"}
        return self._store_view(args.get("view"), view_id)

    def _store_view(self, raw: Any, view_id: str | None) -> dict[str, Any]:
        view = json.loads(raw) if isinstance(raw, str) else raw
        if not isinstance(view, dict):
            return {"ok": False, "error": "invalid_arguments"}
        problems = view_errors(view)
        if problems:
            return {
                "ok": False,
                "error": "invalid_arguments",
                "response_metadata": {"messages": [f"[ERROR] {p}" for p in problems]},
            }
        view_id = view_id or f"V{next(self._counter):08d}"
        stored = {
            "id": view_id,
            "team_id": self.team_id,
            "type": view.get("type", "modal"),
            "blocks": view.get("blocks", []),
            "private_metadata": view.get("private_metadata", ""),
            "callback_id": view.get("callback_id", ""),
            "state": {"values": {}},
            "hash": f"{next(self._counter)}.abcdef",
            "title": view.get("title"),
            "submit": view.get("submit"),
            "close": view.get("close"),
            "clear_on_close": bool(view.get("clear_on_close", False)),
            "notify_on_close": bool(view.get("notify_on_close", False)),
            "previous_view_id": None,
            "root_view_id": view_id,
            "app_id": self.app_id,
            "external_id": view.get("external_id", ""),
            "app_installed_team_id": self.team_id,
            "bot_id": self.bot_id,
        }
        self.views[view_id] = stored
        return {"ok": True, "view": stored}

    def _m_apps_connections_open(self, call: Call, args: dict[str, Any]) -> dict[str, Any]:
        ticket = next(self._counter)
        return {
            "ok": True,
            "url": f"ws://127.0.0.1:{self._port}/link/?ticket={ticket}&app_id={self.app_id}",
        }

    # ------------------------------------------------------------------ response_url

    def response_url(self) -> str:
        """A fresh response_url for one slash command or interaction."""
        token = f"r{next(self._counter)}"
        self.responses[token] = []
        return f"{self.base_url}/response/{token}"

    def responses_to(self, url: str) -> list[dict[str, Any]]:
        return self.responses[url.rsplit("/", 1)[-1]]

    async def wait_for_responses(
        self, url: str, count: int = 1, within: float = 5.0
    ) -> list[dict[str, Any]]:
        """Until `count` messages came to a response_url; those messages."""
        async with asyncio.timeout(within):
            while True:
                self._posted.clear()
                if len(self.responses_to(url)) >= count:
                    return self.responses_to(url)
                await self._posted.wait()

    async def _response_url(self, request: web.Request) -> web.Response:
        token = request.match_info["token"]
        if token not in self.responses:
            return web.json_response({"ok": False, "error": "invalid_url"}, status=404)
        if len(self.responses[token]) >= RESPONSE_URL_USES:
            return web.json_response({"ok": False, "error": "used_url"}, status=404)
        body = await request.json()
        error = message_error(body)
        if error is not None:
            return web.json_response({"ok": False, "error": error}, status=400)
        self.responses[token].append(body)
        self._posted.set()
        return web.json_response({"ok": True})

    # ------------------------------------------------------------------ Socket Mode

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        self._sockets.append(ws)
        async with self._connected:
            self.connections += 1
            self._connected.notify_all()
        await ws.send_json(
            {
                "type": "hello",
                "num_connections": len(self._sockets),
                "debug_info": {
                    "host": "applink-fake",
                    "build_number": 1,
                    "approximate_connection_time": 18060,
                },
                "connection_info": {"app_id": self.app_id},
            }
        )
        self._socket_ready.set()
        try:
            async for message in ws:
                if message.type != WSMsgType.TEXT:
                    continue
                ack = json.loads(message.data)
                envelope_id = ack.get("envelope_id")
                if not envelope_id:
                    continue
                self.acks[envelope_id] = ack
                waiter = self._ack_waiters.pop(envelope_id, None)
                if waiter is not None and not waiter.done():
                    waiter.set_result(ack)
        finally:
            self._sockets.remove(ws)
            if not self._sockets:
                self._socket_ready.clear()
        return ws

    async def wait_connected(self, within: float = 5.0) -> None:
        await asyncio.wait_for(self._socket_ready.wait(), within)

    async def wait_connections(self, count: int, within: float = 5.0) -> None:
        """Until the app has opened `count` WebSocket connections in all (reconnects count)."""
        async with self._connected:
            await asyncio.wait_for(
                self._connected.wait_for(lambda: self.connections >= count), within
            )

    async def send_envelope(
        self,
        envelope_type: str,
        payload: Mapping[str, Any],
        *,
        envelope_id: str | None = None,
        retry_attempt: int | None = None,
        retry_reason: str | None = None,
    ) -> str:
        """Send one envelope (slash_commands, interactive, events_api) to the connected app."""
        await self.wait_connected()
        envelope_id = envelope_id or f"env-{next(self._counter)}"
        envelope: dict[str, Any] = {
            "envelope_id": envelope_id,
            "type": envelope_type,
            "payload": dict(payload),
            "accepts_response_payload": envelope_type != "events_api",
        }
        if retry_attempt is not None:
            envelope["retry_attempt"] = retry_attempt
            envelope["retry_reason"] = retry_reason or "timeout"
        loop = asyncio.get_running_loop()
        self._ack_waiters[envelope_id] = loop.create_future()
        await self._sockets[-1].send_json(envelope)
        return envelope_id

    async def wait_ack(self, envelope_id: str, within: float = 5.0) -> dict[str, Any]:
        """The client's ack for `envelope_id` ({"envelope_id": ..., "payload": {...}})."""
        if envelope_id in self.acks:
            return self.acks[envelope_id]
        waiter = self._ack_waiters.get(envelope_id)
        if waiter is None:
            raise KeyError(f"no envelope {envelope_id!r} was sent")
        return await asyncio.wait_for(asyncio.shield(waiter), within)

    async def request_reconnect(self) -> None:
        """Slack's `disconnect` message: the client should open a new connection."""
        for ws in list(self._sockets):
            await ws.send_json(
                {"type": "disconnect", "reason": "refresh_requested", "debug_info": {}}
            )

    # ------------------------------------------------------------------ what Slack shows

    def pings(self) -> list[str]:
        """Mentions Slack would turn into notifications in every posted or updated message."""
        found: list[str] = []
        for channel in self.channels.values():
            for message in channel.messages:
                found += live_mentions(message)
        for response in itertools.chain.from_iterable(self.responses.values()):
            found += live_mentions(response)
        return found


# ---------------------------------------------------------------------- validation


def message_error(args: Mapping[str, Any]) -> str | None:
    """The error Slack gives for a message's text and blocks, or None if Slack takes it."""
    blocks = _blocks_arg(args.get("blocks"))
    text = args.get("text") or ""
    if blocks is None:
        return "invalid_blocks_format"
    if not text and not blocks:
        return "no_text"
    if len(text) > MAX_TEXT:
        return "msg_too_long"
    if block_errors(blocks, MAX_BLOCKS):
        return "invalid_blocks"
    return None


def _block_errors(args: Mapping[str, Any]) -> dict[str, Any]:
    blocks = _blocks_arg(args.get("blocks"))
    problems = block_errors(blocks or [], MAX_BLOCKS)
    if not problems:
        return {}
    return {
        "errors": problems,
        "response_metadata": {"messages": [f"[ERROR] {p}" for p in problems]},
    }


def _text_len(obj: Any) -> int:
    """Characters of a text object; blank text counts as none (Slack refuses it)."""
    if not isinstance(obj, dict) or not str(obj.get("text", "")).strip():
        return 0
    return len(obj["text"])


def block_errors(blocks: list[Any], max_blocks: int) -> list[str]:
    """Problems Slack would report for `blocks` (json-pointer style, like Slack's own)."""
    problems: list[str] = []
    if len(blocks) > max_blocks:
        problems.append(f"must provide less than {max_blocks + 1} items [json-pointer:/blocks]")
    for i, block in enumerate(blocks):
        where = f"[json-pointer:/blocks/{i}"
        if not isinstance(block, dict) or block.get("type") not in BLOCK_TYPES:
            problems.append(f"unsupported type {where}/type]")
            continue
        kind = block["type"]
        if kind == "header":
            text = block.get("text") or {}
            if text.get("type") != "plain_text":
                problems.append(f"must be plain_text {where}/text/type]")
            if not 0 < _text_len(text) <= MAX_HEADER_TEXT:
                problems.append(f"must be less than {MAX_HEADER_TEXT + 1} characters {where}/text]")
        elif kind == "section":
            text, fields = block.get("text"), block.get("fields")
            if text is None and not fields:
                problems.append(f"must provide text or fields {where}]")
            accessory = block.get("accessory")
            if accessory is not None and accessory.get("type") == "multi_external_select":
                problems += _external_errors(accessory, f"{where}/accessory")
            elif accessory is not None and accessory.get("type") != "button":
                problems.append(f"unsupported accessory {where}/accessory/type]")
            if text is not None and not 0 < _text_len(text) <= MAX_SECTION_TEXT:
                problems.append(
                    f"must be less than {MAX_SECTION_TEXT + 1} characters {where}/text/text]"
                )
            if fields:
                if len(fields) > MAX_FIELDS:
                    problems.append(
                        f"must provide less than {MAX_FIELDS + 1} items {where}/fields]"
                    )
                for j, f in enumerate(fields):
                    if not 0 < _text_len(f) <= MAX_FIELD_TEXT:
                        problems.append(
                            f"must be less than {MAX_FIELD_TEXT + 1} characters "
                            f"{where}/fields/{j}/text]"
                        )
        elif kind == "context":
            elements = block.get("elements") or []
            if not 0 < len(elements) <= MAX_CONTEXT_ELEMENTS:
                problems.append(f"must provide 1 to {MAX_CONTEXT_ELEMENTS} items {where}/elements]")
            for j, element in enumerate(elements):
                if element.get("type") in ("mrkdwn", "plain_text") and not (
                    0 < _text_len(element) <= MAX_SECTION_TEXT
                ):
                    problems.append(f"must be 1 to 3000 characters {where}/elements/{j}/text]")
        elif kind == "input":
            problems += _input_errors(block, where)
    return problems


def _input_errors(block: dict[str, Any], where: str) -> list[str]:
    problems: list[str] = []
    if not block.get("block_id"):
        problems.append(f"input blocks need a block_id here {where}/block_id]")
    element = block.get("element") or {}
    label = block.get("label") or {}
    if not 0 < _text_len(label) <= 2000:
        problems.append(f"must be 1 to 2000 characters {where}/label]")
    kind = element.get("type")
    if kind == "plain_text_input":
        max_length = element.get("max_length", MAX_INPUT_LENGTH)
        if max_length > MAX_INPUT_LENGTH:
            problems.append(f"must be at most {MAX_INPUT_LENGTH} {where}/element/max_length]")
        if len(element.get("initial_value", "")) > max_length:
            problems.append(f"longer than max_length {where}/element/initial_value]")
    elif kind in ("static_select", "checkboxes", "radio_buttons"):
        options = element.get("options") or []
        if not 0 < len(options) <= MAX_OPTIONS:
            problems.append(f"must provide 1 to {MAX_OPTIONS} options {where}/element/options]")
        for j, option in enumerate(options):
            if not 0 < _text_len(option.get("text")) <= MAX_OPTION_TEXT:
                problems.append(
                    f"must be less than {MAX_OPTION_TEXT + 1} characters "
                    f"{where}/element/options/{j}/text]"
                )
            if not 0 < len(option.get("value", "")) <= MAX_OPTION_VALUE:
                problems.append(f"bad option value {where}/element/options/{j}/value]")
        initial = element.get("initial_option") or element.get("initial_options")
        if isinstance(initial, dict):
            initial = [initial]
        for chosen in initial or []:
            if chosen not in options:
                problems.append(f"initial option is not one of the options {where}/element]")
    elif kind == "multi_static_select":
        # Options or option groups (each a label of at most 75 characters and 1 to 100
        # options), at most 100 groups: Slack's block kit reference for select menus.
        groups = element.get("option_groups")
        if groups is not None and "options" in element:
            problems.append(f"give options or option_groups, not both {where}/element]")
        if groups is not None and not 0 < len(groups) <= MAX_OPTIONS:
            problems.append(f"must provide 1 to {MAX_OPTIONS} option_groups {where}/element]")
        for g, group in enumerate(groups if groups is not None else [element]):
            if groups is not None and not 0 < _text_len(group.get("label")) <= MAX_OPTION_TEXT:
                problems.append(f"bad label {where}/element/option_groups/{g}/label]")
            options = group.get("options") or []
            if not 0 < len(options) <= MAX_OPTIONS:
                problems.append(f"must provide 1 to {MAX_OPTIONS} options {where}/element]")
            for option in options:
                if not 0 < _text_len(option.get("text")) <= MAX_OPTION_TEXT:
                    problems.append(f"bad option text {where}/element]")
                if not 0 < len(option.get("value", "")) <= MAX_OPTION_VALUE:
                    problems.append(f"bad option value {where}/element]")
    elif kind == "multi_external_select":
        problems += _external_errors(element, f"{where}/element")
    elif kind not in ("datetimepicker", "datepicker", "timepicker", "conversations_select"):
        problems.append(f"unsupported element {where}/element/type]")
    return problems


def _external_errors(element: Mapping[str, Any], where: str) -> list[str]:
    """A multi_external_select's problems: its options come from the app's options
    requests, so it holds only the chosen ones."""
    problems: list[str] = []
    if not element.get("action_id"):
        problems.append(f"an external select needs an action_id {where}]")
    if "options" in element or "option_groups" in element:
        problems.append(f"an external select has no options of its own {where}]")
    if not 0 <= element.get("min_query_length", 3) <= 255:
        problems.append(f"bad min_query_length {where}]")
    initial = element.get("initial_options") or []
    if len(initial) > MAX_OPTIONS:
        problems.append(f"at most {MAX_OPTIONS} initial_options {where}]")
    return problems + [f"{p} {where}/initial_options]" for p in _option_errors(initial)]


def _option_errors(options: list[Any]) -> list[str]:
    problems: list[str] = []
    for option in options:
        text = option.get("text") or {}
        if text.get("type") != "plain_text" or not 0 < _text_len(text) <= MAX_OPTION_TEXT:
            problems.append("an option's text must be plain_text of 1 to 75 characters")
        if not 0 < len(str(option.get("value", ""))) <= MAX_OPTION_VALUE:
            problems.append("an option's value must be 1 to 150 characters")
    return problems


def options_errors(answer: Mapping[str, Any]) -> list[str]:
    """What Slack would refuse in the answer to an options request (block_suggestion):
    `options` or `option_groups` (each a label and options), at most 100 in all."""
    if ("options" in answer) == ("option_groups" in answer):
        return ["answer with options or option_groups (one of them)"]
    if "options" in answer:
        options = answer["options"]
        problems = [] if len(options) <= MAX_OPTIONS else ["more than 100 options"]
        return problems + _option_errors(options)
    groups = answer["option_groups"]
    problems = [] if 0 < len(groups) <= MAX_OPTIONS else ["1 to 100 option_groups"]
    if sum(len(g.get("options") or []) for g in groups) > MAX_OPTIONS:
        problems.append("more than 100 options in all")
    for group in groups:
        label = group.get("label") or {}
        if label.get("type") != "plain_text" or not 0 < _text_len(label) <= MAX_OPTION_TEXT:
            problems.append("an option group's label must be plain_text of 1 to 75 characters")
        if not group.get("options"):
            problems.append("an option group needs options")
        problems += _option_errors(group.get("options") or [])
    return problems


def view_errors(view: Mapping[str, Any]) -> list[str]:
    """What Slack's views.open / response_action would refuse in a modal view."""
    problems: list[str] = []
    if view.get("type") != "modal":
        problems.append("view.type must be modal")
    for key in ("title", "submit", "close"):
        text = view.get(key)
        if text is None:
            if key == "title":
                problems.append("view.title is required")
            continue
        if text.get("type") != "plain_text" or not 0 < _text_len(text) <= MAX_VIEW_TITLE:
            problems.append(f"view.{key} must be plain_text of 1 to {MAX_VIEW_TITLE} characters")
    blocks = view.get("blocks") or []
    if any(b.get("type") == "input" for b in blocks) and view.get("submit") is None:
        problems.append("view.submit is required when the view has input blocks")
    if len(view.get("private_metadata", "")) > MAX_PRIVATE_METADATA:
        problems.append(f"view.private_metadata must be at most {MAX_PRIVATE_METADATA} characters")
    block_ids = [b.get("block_id") for b in blocks if b.get("block_id")]
    if len(block_ids) != len(set(block_ids)):
        problems.append("view.blocks have duplicate block_ids")
    problems += block_errors(blocks, MAX_MODAL_BLOCKS)
    return problems


def live_mentions(message: Mapping[str, Any]) -> list[str]:
    """The notifications Slack would send for a message: `<!here>`, `<@U1>`... in its text and
    mrkdwn (unless escaped), and plain @channel/@here when parse=full or link_names is on."""
    link_names = str(message.get("link_names", "")).lower() in ("1", "true") or (
        message.get("parse") == "full"
    )
    texts: list[tuple[str, bool]] = [(message.get("text") or "", link_names)]
    for block in _blocks_arg(message.get("blocks")) or []:
        texts += list(_mrkdwn_texts(block))
    found: list[str] = []
    for text, parse_plain in texts:
        found += [m.group(0) for m in _ANGLE_MENTION.finditer(text)]
        if parse_plain:
            found += [m.group(0) for m in _PLAIN_BROADCAST.finditer(text)]
    return found


def _mrkdwn_texts(obj: Any) -> list[tuple[str, bool]]:
    """(text, parses plain @here) for every mrkdwn text object inside a block."""
    found: list[tuple[str, bool]] = []
    if isinstance(obj, dict):
        if obj.get("type") == "mrkdwn" and isinstance(obj.get("text"), str):
            found.append((obj["text"], not obj.get("verbatim", False)))
        for value in obj.values():
            if isinstance(value, dict | list):
                found += _mrkdwn_texts(value)
    elif isinstance(obj, list):
        for value in obj:
            found += _mrkdwn_texts(value)
    return found


# ---------------------------------------------------------------------- helpers


async def _arguments(request: web.Request) -> dict[str, Any]:
    args: dict[str, Any] = dict(request.query)
    if request.method != "POST" or not request.can_read_body:
        return args
    raw = await request.text()
    if request.content_type == "application/json":
        if raw:
            args.update(json.loads(raw))
    else:
        args.update(dict(parse_qsl(raw, keep_blank_values=True)))
    return args


def _bearer(request: web.Request) -> str | None:
    header = request.headers.get("Authorization", "")
    return header.removeprefix("Bearer ").strip() or None if header.startswith("Bearer ") else None


def _blocks_arg(raw: Any) -> list[Any] | None:
    """Blocks as a list whether sent as JSON or as a form field; None if not parseable."""
    if raw is None or raw == "":
        return []
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError:
            return None
    return raw if isinstance(raw, list) else None


def _message(args: Mapping[str, Any], ts: str, bot_id: str, app_id: str) -> dict[str, Any]:
    return {
        "type": "message",
        "subtype": "bot_message",
        "text": args.get("text") or "",
        "blocks": _blocks_arg(args.get("blocks")) or [],
        "ts": ts,
        "bot_id": bot_id,
        "app_id": app_id,
        "metadata": args.get("metadata"),
        # How it was sent, so tests can check mentions stay inert.
        "parse": args.get("parse"),
        "link_names": args.get("link_names"),
        "unfurl_links": args.get("unfurl_links"),
    }


def _public(message: Mapping[str, Any]) -> dict[str, Any]:
    return {
        k: v
        for k, v in message.items()
        if k not in ("parse", "link_names", "unfurl_links", "history", "deleted")
    }


# ---------------------------------------------------------------------- Slack's requests
# What Slack sends to the bot, built from the documented payloads in tests/payloads/slack/.

PAYLOADS = Path(__file__).resolve().parent.parent / "payloads" / "slack"
_triggers = itertools.count(1)


def payload(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((PAYLOADS / f"{name}.json").read_text(encoding="utf-8"))
    return data


def new_trigger_id() -> str:
    n = next(_triggers)
    return f"{13345224609 + n}.738474920.{n:032x}"


def slash_command(
    slack: FakeSlack,
    text: str,
    *,
    user: str = "U0MEMBER",
    user_name: str | None = None,
    channel: str = "C0GENERAL",
    trigger_id: str | None = None,
) -> dict[str, str]:
    """The fields of one `/strike <text>` invocation, with a response_url on the fake.
    `user_name` defaults to the name the fake knows for `user`."""
    body = payload("slash_command")
    body.update(
        text=text,
        user_id=user,
        user_name=user_name or slack.users.get(user, {}).get("name", user.lower()),
        channel_id=channel,
        team_id=slack.team_id,
        api_app_id=slack.app_id,
        response_url=slack.response_url(),
        trigger_id=trigger_id or new_trigger_id(),
    )
    return {k: str(v) for k, v in body.items()}


def view_submission(
    view: Mapping[str, Any],
    values: Mapping[str, Mapping[str, Any]],
    *,
    user: str = "U0ADMIN",
    user_name: str | None = None,
) -> dict[str, Any]:
    """A person pressing the submit button of `view` after typing `values`
    (block_id → element state, see `typed`, `chosen`, `ticked`, `picked_at`)."""
    body = payload("view_submission")
    name = user_name or user.lower()
    body["user"].update(id=user, username=name, name=name)
    body["trigger_id"] = new_trigger_id()
    body["view"] = {
        **body["view"],
        **{k: v for k, v in view.items() if k != "state"},
        "id": view.get("id") or f"V{next(_triggers):08d}",
        "state": {"values": {block: {"value": dict(state)} for block, state in values.items()}},
    }
    return body


def block_suggestion(
    view: Mapping[str, Any], block_id: str, value: str, *, user: str = "U0ADMIN"
) -> dict[str, Any]:
    """Someone typing `value` into the external select in `block_id` of `view` (a modal,
    or a message: an ephemeral one, as a response_url carried it)."""
    [block] = [b for b in view.get("blocks", []) if b.get("block_id") == block_id]
    element = block.get("element") or block["accessory"]
    body = payload("block_suggestion")
    body["user"].update(id=user, username=user.lower(), name=user.lower())
    body.update(action_id=element["action_id"], block_id=block_id, value=value)
    if view.get("type") == "modal":
        body["view"] = {**body["view"], **{k: v for k, v in view.items() if k != "state"}}
    else:
        del body["view"]
        body["container"] = {"type": "message", "message_ts": "1548261231.000200",
                             "channel_id": "C0GENERAL", "is_ephemeral": True}  # fmt: skip
    return body


def block_action(
    slack: FakeSlack,
    message: Mapping[str, Any],
    block_id: str,
    selected: list[Mapping[str, Any]],
    *,
    user: str = "U0ADMIN",
    channel: str = "C0GENERAL",
) -> dict[str, Any]:
    """Someone changing the multi_external_select in `block_id` of an ephemeral `message`
    (as a response_url carried it) to the options `selected`."""
    [block] = [b for b in message.get("blocks", []) if b.get("block_id") == block_id]
    element = block.get("accessory") or block["element"]
    body = payload("block_actions")
    name = slack.users.get(user, {}).get("name", user.lower())
    body["user"].update(id=user, username=name, name=name)
    body["channel"]["id"] = channel
    body["container"]["channel_id"] = channel
    body["trigger_id"] = new_trigger_id()
    body["response_url"] = slack.response_url()
    body["actions"] = [
        {
            "type": element["type"],
            "action_id": element["action_id"],
            "block_id": block_id,
            "selected_options": [dict(o) for o in selected],
            "action_ts": "1548261231.000200",
        }
    ]
    return body


def picked(*options: Mapping[str, Any]) -> dict[str, Any]:
    """The options chosen in a multi_external_select (as Slack echoes them)."""
    return {"type": "multi_external_select", "selected_options": [dict(o) for o in options]}


def typed(text: str | None) -> dict[str, Any]:
    return {"type": "plain_text_input", "value": text}


def chosen(view: Mapping[str, Any], block_id: str, value: str) -> dict[str, Any]:
    """The option with `value` from the static_select in `block_id` (as Slack echoes it)."""
    for block in view.get("blocks", []):
        if block.get("block_id") == block_id:
            for option in block["element"]["options"]:
                if option["value"] == value:
                    return {"type": "static_select", "selected_option": option}
    raise KeyError(f"no option {value!r} in block {block_id!r}")


def ticked(*values: str) -> dict[str, Any]:
    return {
        "type": "checkboxes",
        "selected_options": [
            {"text": {"type": "plain_text", "text": v}, "value": v} for v in values
        ],
    }


def picked_at(unix_seconds: int | None) -> dict[str, Any]:
    return {"type": "datetimepicker", "selected_date_time": unix_seconds}


def sign(secret: str, body: str, timestamp: int) -> dict[str, str]:
    """Slack's request signature headers for `body` sent at `timestamp`."""
    base = f"v0:{timestamp}:{body}".encode()
    digest = hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()
    return {
        "X-Slack-Request-Timestamp": str(timestamp),
        "X-Slack-Signature": f"v0={digest}",
        "Content-Type": "application/x-www-form-urlencoded",
    }


def form_body(fields: Mapping[str, str]) -> str:
    return urlencode(fields)


def interaction_body(body: Mapping[str, Any]) -> str:
    return urlencode({"payload": json.dumps(body)})


# ---------------------------------------------------------------------- the bot under test
# strikebot's Slack adapter wired to a store and the fake, serving HTTP mode on 127.0.0.1.

SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"  # Slack's documented example secret


def bot_config(mode: str = "http", **sections: Any) -> Any:
    """A campaign file like tests.support.CAMPAIGN's, with the Slack admins of tests.support."""
    from bot.config import parse_config
    from tests.support import CAMPAIGN

    raw: dict[str, Any] = {
        "campaign": {
            "slug": CAMPAIGN.slug,
            "union": CAMPAIGN.union,
            "employer": CAMPAIGN.employer,
            "start_date": CAMPAIGN.start_date,
            "strike_start": CAMPAIGN.strike_start,
            "timezone": CAMPAIGN.timezone,
            "languages": list(CAMPAIGN.languages),
            "public_url": CAMPAIGN.public_url,
        },
        "admins": {"slack": {"user_ids": ["U0ADMIN"], "usergroup_ids": ["S0COMMS"]}},
        "slack": {"mode": mode},
        **sections,
    }
    return parse_config(raw)


@dataclass(slots=True)
class Response:
    status: int
    text: str

    def json(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.text)
        return data


class SlackBot:
    """`async with SlackBot(store, clock, slack) as bot:` — the adapter started against the
    fake; in HTTP mode `/slack/events` is served at `bot.events_url`."""

    def __init__(
        self,
        store: Any,
        clock: Any,
        slack: FakeSlack,
        *,
        mode: str = "http",
        budget: float = UNRACED_BUDGET,
        require_approval: bool = False,
        request_timeout: float = 5.0,
        env: Mapping[str, str] | None = None,
        monotonic: Any = None,
    ) -> None:
        self.store, self.clock, self.slack, self.mode = store, clock, slack, mode
        self.monotonic = monotonic  # the adapter's clock for Retry-After (None: real time)
        self.request_timeout = request_timeout
        self.env = dict(env or {})
        self.budget = budget
        self.require_approval = require_approval
        self._runner: web.AppRunner | None = None
        self._http: Any = None
        self.events_url = ""

    async def __aenter__(self) -> SlackBot:
        import aiohttp

        from adapters.slack import SlackAdapter, plugin
        from bot.config import Settings
        from bot.editorial.admin import Admin
        from bot.runtime.context import plugin_context

        env = {
            "SLACK_BOT_TOKEN": self.slack.bot_token,
            "SLACK_API_URL": self.slack.api_url,
            "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        }
        if self.mode == "socket":
            env["SLACK_APP_TOKEN"] = self.slack.app_token
        self.settings = Settings.from_env({**env, **self.env})
        self.config = bot_config(self.mode)
        campaign = self.config.to_campaign()
        if self.require_approval:
            from dataclasses import replace

            campaign = replace(campaign, require_approval=True)
        self.admin = Admin(self.store, campaign, self.config.to_admins(), self.clock)
        self.ctx = plugin_context(
            plugin, self.settings, self.config, store=self.store, admin=self.admin,
            clock=self.clock,
        )  # fmt: skip
        self.commands = self.ctx.commands
        timing = {} if self.monotonic is None else {"monotonic": self.monotonic}
        self.adapter = SlackAdapter(
            self.ctx, budget=self.budget, request_timeout=self.request_timeout, **timing
        )
        app = web.Application()
        self.adapter.mount(app)
        self._runner, port = await serve(app, access_log=None)
        self.events_url = f"http://127.0.0.1:{port}/slack/events"
        self._http = aiohttp.ClientSession()
        try:
            await self.adapter.start()
        except BaseException:
            await self._http.close()
            await self._runner.cleanup()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.adapter.stop()
        if self._http is not None:
            await self._http.close()
        if self._runner is not None:
            await self._runner.cleanup()

    async def post_signed(
        self,
        body: str,
        *,
        timestamp: int | None = None,
        secret: str = SIGNING_SECRET,
        headers: Mapping[str, str] | None = None,
    ) -> Response:
        import time

        stamp = int(time.time()) if timestamp is None else timestamp
        sent = {**sign(secret, body, stamp), **(headers or {})}
        async with self._http.post(self.events_url, data=body, headers=sent) as response:
            return Response(response.status, await response.text())

    async def command(self, text: str, **kwargs: Any) -> Response:
        """`/strike <text>` through HTTP mode; kwargs as `slash_command`."""
        return await self.post_signed(form_body(slash_command(self.slack, text, **kwargs)))

    async def suggest(self, view: Mapping[str, Any], block_id: str, value: str) -> Response:
        """Type `value` into the external select in `block_id` through HTTP mode."""
        return await self.post_signed(interaction_body(block_suggestion(view, block_id, value)))

    async def act(self, body: Mapping[str, Any]) -> Response:
        """Send a block_actions interaction (`block_action`) through HTTP mode."""
        return await self.post_signed(interaction_body(body))

    async def submit(
        self,
        view: Mapping[str, Any],
        values: Mapping[str, Mapping[str, Any]],
        **kwargs: Any,
    ) -> Response:
        """Press the submit button of `view` through HTTP mode (by U0ADMIN unless `user`)."""
        user = kwargs.setdefault("user", "U0ADMIN")
        kwargs.setdefault("user_name", self.slack.users.get(user, {}).get("name"))
        return await self.post_signed(interaction_body(view_submission(view, values, **kwargs)))
