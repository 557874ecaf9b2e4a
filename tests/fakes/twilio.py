"""A fake Twilio on 127.0.0.1: the Messages REST API, and webhooks signed as Twilio signs them.

    POST /2010-04-01/Accounts/{AccountSid}/Messages.json   (HTTP Basic: SID, auth token)
         To, Body, From | MessagingServiceSid, StatusCallback  -> 201 {"sid": "SM...", ...}
    GET  /2010-04-01/Accounts/{AccountSid}/Messages.json?To=&From=&DateSent>=&PageSize=
         -> {"messages": [...], "next_page_uri": ...}: newest first, as Twilio lists them;
         a message has no `date_sent` until it is sent, and no status callback URL

It behaves like Twilio at its worst where the adapter must cope:
- a wrong login gets 401 {"code": 20003}; a body over 1600 characters 400 {"code": 21617};
  a `To` that is not E.164 400 {"code": 21211};
- numbers scripted as opted out (the person texted STOP to the carrier) get 400
  {"code": 21610}; landlines 400 {"code": 21614};
- faults for the next requests, in order: 429 with Retry-After (Twilio's 20429), 500 with a
  JSON body, 502 with an HTML page, 503 with plain text, a hang (never answers), a reset;
  and the worst shape, a message created whose answer is lost: the 201 cut short, or the
  connection dropped after the message was created (`LOSE_ANSWER`).
- `fail_list(...)` makes the next Messages list requests fail the same ways.

`callback(sid, status, error, server=...)` posts the status callback Twilio would post for
a sent message, signed for the public URL it was given, to the bot's local address (as a
reverse proxy would pass it on). `signed_post` does the same for an inbound text.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import re
from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from email.utils import format_datetime
from enum import StrEnum
from typing import Any
from urllib.parse import urlencode, urlsplit

import aiohttp
from aiohttp import web
from twilio.request_validator import RequestValidator

from tests.fakes._server import serve

ACCOUNT_SID = "AC" + "0123456789abcdef" * 2
AUTH_TOKEN = "fake-twilio-auth-token-0123456789"
FROM = "+12135550100"


class Fault(StrEnum):
    RATE_LIMITED = "429"
    JSON_500 = "500-json"
    HTML_502 = "502-html"
    PLAIN_503 = "503-plain"
    HANG = "hang"
    RESET = "reset"
    TRUNCATED_JSON = "201-cut"  # created, but the answer is cut short
    LOSE_ANSWER = "201-lost"  # created, then the connection drops before the 201


@dataclass(slots=True)
class Text:
    sid: str
    to: str
    body: str
    sender: str
    status_callback: str
    status: str = "queued"
    created: datetime = field(default_factory=lambda: datetime.now(UTC))
    sent: datetime | None = None
    messaging_service: str | None = None

    def resource(self) -> dict[str, Any]:
        """As Twilio's Message resource reads (the fields the adapter may look at)."""
        return {
            "sid": self.sid,
            "account_sid": ACCOUNT_SID,
            "to": self.to,
            "from": self.sender if self.sender.startswith("+") else FROM,
            "messaging_service_sid": self.messaging_service,
            "body": self.body,
            "status": self.status,
            "direction": "outbound-api",
            "date_created": format_datetime(self.created, usegmt=True),
            "date_updated": format_datetime(self.created, usegmt=True),
            "date_sent": None if self.sent is None else format_datetime(self.sent, usegmt=True),
            "num_segments": "1",
            "error_code": None,
            "uri": f"/2010-04-01/Accounts/{ACCOUNT_SID}/Messages/{self.sid}.json",
        }


@dataclass(slots=True)
class FakeTwilio:
    retry_after: float = 2.0
    texts: list[Text] = field(default_factory=list)
    requests: int = 0
    opted_out: set[str] = field(default_factory=set)
    landlines: set[str] = field(default_factory=set)
    faults: deque[Fault] = field(default_factory=deque)
    list_faults: deque[Fault] = field(default_factory=deque)
    lists: int = 0  # Messages list requests answered
    url: str = ""
    _runner: web.AppRunner | None = None
    _ids: Any = field(default_factory=lambda: itertools.count(1))
    _closing: asyncio.Event = field(default_factory=asyncio.Event)

    async def __aenter__(self) -> FakeTwilio:
        app = web.Application()
        app.router.add_post("/2010-04-01/Accounts/{sid}/Messages.json", self._create)
        app.router.add_get("/2010-04-01/Accounts/{sid}/Messages.json", self._list)
        self._runner, port = await serve(app)
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._runner is not None
        self._closing.set()
        await self._runner.cleanup()

    def to(self, number: str) -> list[Text]:
        return [t for t in self.texts if t.to == number]

    def fail(self, *faults: Fault) -> None:
        self.faults.extend(faults)

    def fail_list(self, *faults: Fault) -> None:
        self.list_faults.extend(faults)

    async def _fault(self, fault: Fault, request: web.Request) -> web.StreamResponse | None:
        """The answer to a scripted fault; None to go on (a fault that comes after the work)."""
        if fault is Fault.RATE_LIMITED:
            return _json(
                429,
                {"code": 20429, "message": "Too Many Requests", "status": 429},
                {"Retry-After": f"{self.retry_after:g}"},
            )
        if fault is Fault.JSON_500:
            return _json(500, {"code": 20500, "message": "Internal Server Error"})
        if fault is Fault.HTML_502:
            return web.Response(
                status=502,
                text="<html><body><h1>502 Bad Gateway</h1></body></html>",
                content_type="text/html",
            )
        if fault is Fault.PLAIN_503:
            return web.Response(status=503, text="upstream connect error")
        if fault is Fault.HANG:  # until the test ends: the client must give up first
            await self._closing.wait()
            return web.Response(status=500)
        if fault is Fault.RESET:
            assert request.transport is not None
            request.transport.close()
            return web.Response(status=500)
        return None

    async def _list(self, request: web.Request) -> web.StreamResponse:
        if self.list_faults:
            answer = await self._fault(self.list_faults.popleft(), request)
            if answer is not None:
                return answer
        if request.match_info["sid"] != ACCOUNT_SID or not _authorized(request):
            return _json(401, {"code": 20003, "message": "Authenticate", "status": 401})
        self.lists += 1
        query = request.query
        newest = sorted(reversed(self.texts), key=lambda t: t.created, reverse=True)
        found = [t for t in newest if t.to == query.get("To", t.to)]
        if "From" in query:
            found = [t for t in found if t.resource()["from"] == query["From"]]
        after = query.get("DateSent>")
        if after:  # a date, as Twilio takes it: messages sent on or after it (unsent: none)
            day = date.fromisoformat(after[:10])
            found = [t for t in found if t.sent is not None and t.sent.date() >= day]
        size = min(int(query.get("PageSize", "50")), 1000)
        page = int(query.get("Page", "0"))
        chunk = found[page * size : (page + 1) * size]
        more = len(found) > (page + 1) * size
        base = f"/2010-04-01/Accounts/{ACCOUNT_SID}/Messages.json"
        params = {k: v for k, v in query.items() if k not in ("Page", "PageToken")}
        next_uri = f"{base}?{urlencode({**params, 'Page': page + 1})}" if more else None
        return _json(
            200,
            {
                "messages": [t.resource() for t in chunk],
                "page": page,
                "page_size": size,
                "next_page_uri": next_uri,
                "uri": request.path_qs,
            },
        )

    async def _create(self, request: web.Request) -> web.StreamResponse:
        self.requests += 1
        lost = None
        if self.faults:
            fault = self.faults.popleft()
            if fault in (Fault.TRUNCATED_JSON, Fault.LOSE_ANSWER):
                lost = fault  # the message is created first
            else:
                answer = await self._fault(fault, request)
                assert answer is not None
                return answer
        if request.match_info["sid"] != ACCOUNT_SID or not _authorized(request):
            return _json(401, {"code": 20003, "message": "Authenticate", "status": 401})
        form = await request.post()
        to, body = str(form.get("To", "")), str(form.get("Body", ""))
        sender = str(form.get("From") or form.get("MessagingServiceSid") or "")
        if not re.fullmatch(r"\+[1-9]\d{6,14}", to):
            return _json(400, {"code": 21211, "message": "The 'To' number is not valid."})
        if not sender:
            return _json(400, {"code": 21603, "message": "A 'From' phone number is required."})
        if len(body) > 1600:
            return _json(400, {"code": 21617, "message": "The concatenated message body "
                               "exceeds the 1600 character limit."})  # fmt: skip
        if to in self.opted_out:
            return _json(400, {"code": 21610, "message": "Attempt to send to unsubscribed "
                               "recipient"})  # fmt: skip
        if to in self.landlines:
            return _json(400, {"code": 21614, "message": "'To' number is not a valid mobile "
                               "number"})  # fmt: skip
        sid = f"SM{next(self._ids):032x}"
        service = str(form["MessagingServiceSid"]) if "MessagingServiceSid" in form else None
        text = Text(sid, to, body, sender, str(form.get("StatusCallback", "")))
        text.messaging_service = service
        self.texts.append(text)
        if lost is Fault.TRUNCATED_JSON:
            return web.Response(status=201, text='{"sid": "SM0000', content_type="application/json")
        if lost is Fault.LOSE_ANSWER:
            assert request.transport is not None
            request.transport.abort()  # created; the 201 never leaves
            return web.Response(status=201)
        return _json(201, text.resource())

    async def callback(
        self, sid: str, status: str, error: str | None = None, *, server: str
    ) -> int:
        """Post the status callback for text `sid` to the bot at `server` (its local base
        URL), signed for the public URL the text named. Returns the HTTP status."""
        text = next(t for t in self.texts if t.sid == sid)
        text.status = status
        if status in ("sent", "delivered") and text.sent is None:
            text.sent = datetime.now(UTC)
        params = {"MessageSid": sid, "MessageStatus": status, "AccountSid": ACCOUNT_SID}
        if error:
            params["ErrorCode"] = error
        return await signed_post(server, text.status_callback, params)


async def signed_post(
    server: str, public_url: str, params: dict[str, str], *, token: str = AUTH_TOKEN,
    signature: str | None = None,
) -> int:  # fmt: skip
    """POST `params` as Twilio would to `public_url`, delivered to `server` (the bot's local
    base URL), with `X-Twilio-Signature` computed with `token` (or the given `signature`)."""
    status, _ = await signed_request(server, public_url, params, token=token, signature=signature)
    return status


async def signed_request(
    server: str, public_url: str, params: dict[str, str], *, token: str = AUTH_TOKEN,
    signature: str | None = None,
) -> tuple[int, str]:  # fmt: skip
    """Like `signed_post`, returning (status, body text)."""
    sig = signature
    if sig is None:
        sig = RequestValidator(token).compute_signature(public_url, params)
    parts = urlsplit(public_url)
    local = server.rstrip("/") + parts.path + (f"?{parts.query}" if parts.query else "")
    async with (
        aiohttp.ClientSession() as session,
        session.post(local, data=params, headers={"X-Twilio-Signature": sig}) as response,
    ):
        return response.status, await response.text()


def inbound(sender: str, body: str, sid: str, *, to: str = FROM) -> dict[str, str]:
    """The parameters of an incoming text, as Twilio sends them to the number's webhook."""
    return {
        "MessageSid": sid,
        "AccountSid": ACCOUNT_SID,
        "From": sender,
        "To": to,
        "Body": body,
        "NumMedia": "0",
    }


def _authorized(request: web.Request) -> bool:
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    if scheme != "Basic":
        return False
    try:
        user, _, password = base64.b64decode(given).decode().partition(":")
    except ValueError:
        return False
    return user == ACCOUNT_SID and password == AUTH_TOKEN


def _json(status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> web.Response:
    return web.json_response(body, status=status, headers=headers)
