"""Every HTTP surface under arbitrary input: no answer is ever a 5xx.

hypothesis throws paths (known routes with odd segments, and anything at all), query
strings, headers and bodies at the public pages and API, the admin API (with the token,
with a wrong one, without one), Slack's `/slack/events` (unsigned, and signed with the
real secret so the parsing behind the signature check is reached too), and every endpoint
another plugin adds: the sign-up form and confirmations, the admin webhooks API, e-mail's
one-click unsubscribe, Twilio's inbound texts and status callbacks, Telegram's webhook
(with the right secret token too, so its update parsing is reached) and Discord's
Interactions Endpoint URL (signed with the application's key too). The server is the
real app on 127.0.0.1 (tests/http_fuzz_support.py); hypothesis runs in a thread beside it
and sends each request through the server's own event loop.

Under CI=true the "ci" profile (tests/conftest.py) replays a fixed set of examples.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from yarl import URL

from bot.clock import FixedClock
from bot.store import Store
from tests.fakes.slack import SIGNING_SECRET, sign
from tests.http_fuzz_support import AUTH, Served, served

EXAMPLES = 250  # a few seconds on the CI machine
# What a client can put in a header at all (no control characters: no header injection).
HEADER_CHARS = st.characters(codec="latin-1", exclude_categories=["Cc"])

# Text that has broken parsers before: other scripts' digits ("²".isdigit() is true),
# NUL and control characters, surrogates, huge numbers, signs and exponents.
NASTY = st.sampled_from(
    ["²", "³", "١٢", "𝟗", "\x00", "%00", "\ud800", "-1", "+1", "1e9", "0x10", " 1", "1 ", "",
     "9" * 40, "NaN", "inf", "../", "%", "%zz", "🙂", "\u202e", "null", "[]", "{}"]
)  # fmt: skip
SEGMENT = st.one_of(NASTY, st.text(max_size=12), st.integers(-(2**70), 2**70).map(str))
PREFIXES = [
    "/", "/es/", "/updates", "/es/updates", "/updates/", "/es/updates/", "/feed.atom",
    "/calendar.ics", "/healthz", "/livez", "/readyz", "/metrics", "/api/v1/status",
    "/api/v1/updates", "/api/v1/updates/", "/api/v1/demands", "/api/v1/demands/",
    "/api/v1/openapi.json", "/api/v1/admin/updates", "/api/v1/admin/updates/",
    "/api/v1/admin/demands/", "/slack/events", "/static/",
    "/subscribe", "/es/subscribe", "/subscribe/confirm/", "/es/subscribe/confirm/",
    "/api/v1/admin/webhooks", "/api/v1/admin/webhooks/", "/email/unsubscribe/",
    "/sms/inbound", "/sms/status/", "/telegram/webhook", "/discord/interactions",
]  # fmt: skip
SUFFIXES = ["", "/retract", "/approve", "/enable", "/test", "/", "/x"]
QUERY_KEYS = st.one_of(st.sampled_from(["lang", "limit", "after", "page", ""]), st.text(max_size=6))

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20) | NASTY,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
FIELDS = ["status", "urgency", "texts", "reason", "correction", "next_step_at", "publish_at",
          "offer", "source", "note", "headline", "body", "en", "es"]  # fmt: skip
ADMIN_SHAPED = st.dictionaries(st.sampled_from(FIELDS), JSON_VALUES, max_size=6)


# Telegram's secret token is only known once the server runs; calls carry this mark and the
# sender puts the real one in its place.
TELEGRAM_SECRET_MARK = "<the secret token>"
DISCORD_SIGNED = "X-Strikebot-Test-Sign"  # the sender signs the body as Discord would
FORM = "application/x-www-form-urlencoded"
# A signed slash command whose ids are not numbers (issue 11 found it on the gateway).
ODD_COMMAND = json.dumps({
    "type": 2, "id": "1300000000000000001", "application_id": "1300000000000000002",
    "token": "itok_fuzz", "channel_id": "not-a-number",
    "guild_id": "g", "data": {"id": "d", "name": "strike", "type": 1,
                              "options": [{"name": "status", "type": 1}]},
    "member": {"user": {"id": "u", "username": "m"}, "roles": []},
}).encode()  # fmt: skip


@dataclass(frozen=True, slots=True)
class Call:
    method: str
    path: str  # already percent-encoded
    headers: dict[str, str]
    body: bytes


def _encode(segment: str) -> str:
    return quote(segment.encode("utf-8", "surrogatepass"), safe="")


@st.composite
def paths(draw: st.DrawFn) -> str:
    if draw(st.booleans()):
        prefix = draw(st.sampled_from(PREFIXES))
        middle = _encode(draw(SEGMENT)) if prefix.endswith("/") else ""
        return prefix + middle + draw(st.sampled_from(SUFFIXES))
    segments = draw(st.lists(SEGMENT, max_size=4))
    return "/" + "/".join(_encode(s) for s in segments)


@st.composite
def queries(draw: st.DrawFn) -> str:
    pairs = draw(st.lists(st.tuples(QUERY_KEYS, SEGMENT), max_size=3))
    if not pairs:
        return ""
    return "?" + "&".join(f"{_encode(k)}={_encode(v)}" for k, v in pairs)


@st.composite
def bodies(draw: st.DrawFn) -> tuple[bytes, str | None]:
    kind = draw(st.sampled_from(["empty", "bytes", "text", "json", "admin", "deep", "form"]))
    if kind == "empty":
        return b"", None
    if kind == "bytes":
        return draw(st.binary(max_size=64)), draw(st.sampled_from([None, "application/json"]))
    if kind == "text":
        text = draw(st.text(max_size=64))
        return text.encode("utf-8", "surrogatepass"), draw(st.sampled_from([None, "text/plain"]))
    if kind == "deep":
        depth = draw(st.integers(100, 5000))
        opener = draw(st.sampled_from(["[", '{"a":']))
        closer = "]" if opener == "[" else "}"
        return (opener * depth + "1" + closer * depth).encode(), "application/json"
    if kind == "form":
        names = ["payload", "command", "text", "x", "email", "phone", "language", "choice",
                 "From", "To", "Body", "MessageSid", "MessageStatus", "ErrorCode"]  # fmt: skip
        fields = draw(st.dictionaries(st.sampled_from(names), NASTY))
        form = "&".join(f"{_encode(k)}={_encode(v)}" for k, v in fields.items())
        return form.encode(), "application/x-www-form-urlencoded"
    value = draw(ADMIN_SHAPED if kind == "admin" else JSON_VALUES)
    text = json.dumps(value, ensure_ascii=draw(st.booleans()))
    return text.encode("utf-8", "surrogatepass"), "application/json"


@st.composite
def calls(draw: st.DrawFn) -> Call:
    method = draw(st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]))
    path = draw(paths()) + draw(queries())
    body, content_type = draw(bodies())
    headers: dict[str, str] = {}
    auth = draw(st.sampled_from(["none", "token", "wrong", "odd"]))
    if auth == "token":
        headers |= AUTH
    elif auth == "wrong":
        headers["Authorization"] = "Bearer not-the-token"
    elif auth == "odd":
        headers["Authorization"] = draw(st.text(alphabet=HEADER_CHARS))
    if content_type is not None:
        headers["Content-Type"] = content_type
    if draw(st.booleans()):
        headers["If-None-Match"] = draw(st.text(alphabet=HEADER_CHARS))
    telegram = draw(st.sampled_from(["none", "secret", "odd"]))
    if telegram == "secret":
        headers["X-Telegram-Bot-Api-Secret-Token"] = TELEGRAM_SECRET_MARK
    elif telegram == "odd":
        headers["X-Telegram-Bot-Api-Secret-Token"] = draw(st.text(alphabet=HEADER_CHARS))
    if draw(st.booleans()):
        headers["X-Twilio-Signature"] = draw(st.text(alphabet=HEADER_CHARS))
    discord = draw(st.sampled_from(["none", "signed", "odd"]))
    if discord == "signed":
        headers[DISCORD_SIGNED] = "yes"
    elif discord == "odd":
        headers["X-Signature-Ed25519"] = draw(st.text(alphabet="0123456789abcdefxyz"))
        headers["X-Signature-Timestamp"] = draw(NASTY.filter(lambda s: s.isprintable()))
    slack = draw(st.sampled_from(["none", "signed", "stale", "odd"]))
    if slack in ("signed", "stale"):
        stamp = int(time.time()) - (3600 if slack == "stale" else 0)
        text = body.decode("utf-8", "replace")
        headers |= {
            k: v for k, v in sign(SIGNING_SECRET, text, stamp).items() if k != "Content-Type"
        }
    elif slack == "odd":
        headers["X-Slack-Request-Timestamp"] = draw(NASTY.filter(lambda s: s.isprintable()))
        headers["X-Slack-Signature"] = "v0=" + draw(st.text(alphabet="0123456789abcdef"))
    return Call(method, path, headers, body)


def _sender(web: Served, loop: asyncio.AbstractEventLoop) -> Callable[[Call], tuple[int, str]]:
    base = str(web.client.make_url("")).rstrip("/")

    async def send(call: Call) -> tuple[int, str]:
        url = URL(base + call.path, encoded=True)
        headers = {
            k: web.telegram_secret if v == TELEGRAM_SECRET_MARK else v
            for k, v in call.headers.items()
            if k != DISCORD_SIGNED
        }
        if DISCORD_SIGNED in call.headers:
            headers |= {k: v for k, v in web.discord_sign(call.body).items() if k != "Content-Type"}
        async with web.client.session.request(
            call.method, url, headers=headers, data=call.body
        ) as response:
            return response.status, (await response.text(errors="replace"))[:300]

    def blocking(call: Call) -> tuple[int, str]:
        return asyncio.run_coroutine_threadsafe(send(call), loop).result(timeout=30)

    return blocking


async def test_no_request_gets_a_server_error(sqlite_store: Store, clock: FixedClock) -> None:
    async with served(sqlite_store, clock) as web:
        send = _sender(web, asyncio.get_running_loop())
        seen: list[Any] = []

        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )
        @given(call=calls())
        @example(call=Call("GET", "/api/v1/updates/%C2%B2", {}, b""))
        @example(call=Call("GET", "/api/v1/updates?after=%C2%B2", {}, b""))
        @example(call=Call("POST", "/api/v1/admin/updates/1/retract", AUTH, b"[" * 50_000))
        @example(call=Call("POST", "/slack/events", {"X-Slack-Request-Timestamp": "1e9"}, b"x"))
        @example(call=Call("POST", "/telegram/webhook", {"X-Telegram-Bot-Api-Secret-Token":
                           TELEGRAM_SECRET_MARK}, b"[]"))  # fmt: skip
        @example(call=Call("POST", "/telegram/webhook", {"X-Telegram-Bot-Api-Secret-Token":
                           TELEGRAM_SECRET_MARK}, b'{"update_id": "x", "message": 1}'))  # fmt: skip
        @example(call=Call("POST", "/sms/inbound", {"Content-Type": FORM}, b"From=%00&Body=JOIN"))
        @example(call=Call("POST", "/discord/interactions", {DISCORD_SIGNED: "yes"}, b"[]"))
        @example(call=Call("POST", "/discord/interactions", {DISCORD_SIGNED: "yes"}, ODD_COMMAND))
        def check(call: Call) -> None:
            status, text = send(call)
            seen.append(status)
            assert status < 500, f"{call.method} {call.path} -> {status}: {text}"

        await asyncio.to_thread(check)
        # The run reached past the front door: answers of many kinds came back.
        assert len(set(seen)) >= 5, sorted(set(seen))
