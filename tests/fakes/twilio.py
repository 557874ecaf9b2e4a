"""A fake Twilio on 127.0.0.1: the Messages REST API, and webhooks signed as Twilio signs them.

    POST /2010-04-01/Accounts/{AccountSid}/Messages.json   (HTTP Basic: SID, auth token)
         To, Body, From | MessagingServiceSid, StatusCallback  -> 201 {"sid": "SM...", ...}
    GET  /2010-04-01/Accounts/{AccountSid}.json   -> {"sid", "status", "type", ...}
         (`account_status`: active, suspended, closed; `account_type`: Full or Trial)
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

WhatsApp through the same API (`To`/`From` are `whatsapp:+1...`), as Twilio runs it:
- the 24-hour window is enforced: a free-form `Body` to a number that has not written in
  the last 24 hours (by the fake's `clock`) is accepted (201, queued) and then fails with
  63016, as Twilio reports it in the status callback, and the person gets nothing;
- a template (`ContentSid`, `ContentVariables` as a JSON object of "1", "2"... to one-line
  values) must name a content the fake holds (else 400 21655) with well-formed variables
  (else 400 21656); outside the window it must be approved at WhatsApp (else 63016 too);
- the Content API answers `GET /v1/Content/{sid}/ApprovalRequests` with the approval status
  (`contents`, set with `add_content`), and `GET /2010-04-01/Accounts/{sid}.json` checks the
  login, for `strikebot doctor`;
- `whatsapp_in(...)` is an inbound WhatsApp message's parameters and opens the window;
  `send_callbacks(server)` posts every pending status callback (delivered, or failed 63016).
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from email.utils import format_datetime
from enum import StrEnum
from typing import Any
from urllib.parse import urlencode, urlsplit

import aiohttp
from aiohttp import web
from twilio.request_validator import RequestValidator

from bot.clock import utcnow
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


WINDOW = timedelta(hours=24)


@dataclass(slots=True)
class Text:
    sid: str
    to: str
    body: str
    sender: str
    status_callback: str
    status: str = "queued"
    content_sid: str = ""  # a WhatsApp template's, when one was sent
    error: str = ""  # the error its status callback will carry
    called_back: bool = False
    created: datetime = field(default_factory=lambda: datetime.now(UTC))
    sent: datetime | None = None
    messaging_service: str | None = None

    def resource(self) -> dict[str, Any]:
        """As Twilio's Message resource reads (the fields the adapter may look at)."""
        return {
            "sid": self.sid,
            "account_sid": ACCOUNT_SID,
            "to": self.to,
            "from": self.sender if self.sender.startswith(("+", "whatsapp:")) else FROM,
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

    @property
    def delivered(self) -> bool:
        return not self.error


@dataclass(slots=True)
class Content:
    """A content template: its body with {{1}}... and WhatsApp's verdict on it."""

    body: str
    status: str = "approved"  # approved | pending | rejected | paused | disabled
    name: str = "strike_update"


@dataclass(slots=True)
class FakeTwilio:
    retry_after: float = 2.0
    texts: list[Text] = field(default_factory=list)
    requests: int = 0
    opted_out: set[str] = field(default_factory=set)
    landlines: set[str] = field(default_factory=set)
    faults: deque[Fault] = field(default_factory=deque)
    account_status: str = "active"
    account_type: str = "Full"
    clock: Callable[[], datetime] = utcnow
    contents: dict[str, Content] = field(default_factory=dict)
    heard: dict[str, datetime] = field(default_factory=dict)  # whatsapp number -> last wrote
    list_faults: deque[Fault] = field(default_factory=deque)
    lists: int = 0  # Messages list requests answered
    url: str = ""
    _runner: web.AppRunner | None = None
    _ids: Any = field(default_factory=lambda: itertools.count(1))
    _closing: asyncio.Event = field(default_factory=asyncio.Event)

    async def __aenter__(self) -> FakeTwilio:
        app = web.Application()
        app.router.add_post("/2010-04-01/Accounts/{sid}/Messages.json", self._create)
        app.router.add_get("/2010-04-01/Accounts/{sid}.json", self._account)
        app.router.add_get("/v1/Content/{sid}/ApprovalRequests", self._approval)
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

    def add_content(self, body: str, status: str = "approved", name: str = "") -> str:
        """A content template; returns its SID (HX...)."""
        sid = f"HX{next(self._ids):032x}"
        self.contents[sid] = Content(body, status, name or f"strike_{len(self.contents)}")
        return sid

    def whatsapp(self, number: str) -> list[Text]:
        """What reached `number` on WhatsApp (delivered only)."""
        return [t for t in self.texts if t.to == f"whatsapp:{number}" and t.delivered]

    def whatsapp_in(self, sender: str, body: str, sid: str, *, to: str = FROM) -> dict[str, str]:
        """An inbound WhatsApp message's parameters; the sender's window opens now."""
        self.heard[sender] = self.clock()
        params = inbound(f"whatsapp:{sender}", body, sid, to=f"whatsapp:{to}")
        params |= {"ProfileName": "Rosa", "WaId": sender.lstrip("+")}
        return params

    async def send_callbacks(self, server: str) -> list[int]:
        """Post the status callback of every WhatsApp message not called back yet."""
        statuses = []
        for text in [t for t in self.texts if t.to.startswith("whatsapp:") and not t.called_back]:
            text.called_back = True
            if not text.status_callback:
                continue
            status = "failed" if text.error else "delivered"
            statuses.append(
                await self.callback(text.sid, status, text.error or None, server=server)
            )
        return statuses

    async def _account(self, request: web.Request) -> web.Response:
        if request.match_info["sid"] != ACCOUNT_SID or not _authorized(request):
            return _json(401, {"code": 20003, "message": "Authenticate", "status": 401})
        return _json(200, {
            "sid": ACCOUNT_SID, "friendly_name": "UTLA", "status": self.account_status,
            "type": self.account_type,
        })  # fmt: skip

    async def _approval(self, request: web.Request) -> web.Response:
        if not _authorized(request):
            return _json(401, {"code": 20003, "message": "Authenticate", "status": 401})
        sid = request.match_info["sid"]
        content = self.contents.get(sid)
        if content is None:
            return _json(404, {"code": 20404, "message": "The requested resource was not found",
                               "status": 404})  # fmt: skip
        verdict = {"status": content.status, "name": content.name, "category": "UTILITY"}
        if content.status == "rejected":
            verdict["rejection_reason"] = "The template's content is not allowed."
        return _json(200, {"sid": sid, "account_sid": ACCOUNT_SID, "whatsapp": verdict})

    def _whatsapp(
        self, to: str, form: Any, status_callback: str
    ) -> tuple[web.Response | None, Text | None]:
        """A WhatsApp message, as Twilio takes it: (an error answer, or the Text to keep)."""
        number = to.removeprefix("whatsapp:")
        sender = str(form.get("From") or form.get("MessagingServiceSid") or "")
        opened = self.heard.get(number)
        inside = opened is not None and self.clock() - opened < WINDOW
        content_sid = str(form.get("ContentSid", ""))
        sid = f"SM{next(self._ids):032x}"
        if content_sid:
            content = self.contents.get(content_sid)
            if content is None:
                return _json(400, {"code": 21655, "message": "The ContentSid is Invalid"}), None
            try:
                variables = json.loads(str(form.get("ContentVariables") or "{}"))
            except ValueError:
                variables = None
            if not isinstance(variables, dict) or not all(
                isinstance(v, str) and v.strip() and not re.search(r"[\n\t]| {5,}", v)
                for v in variables.values()
            ):
                return _json(400, {"code": 21656, "message": "The ContentVariables Parameter "
                                   "is invalid"}), None  # fmt: skip
            body = re.sub(
                r"\{\{(\d+)\}\}", lambda m: str(variables.get(m.group(1), "")), content.body
            )
            error = "" if inside or content.status == "approved" else "63016"
            return None, Text(sid, to, body, sender, status_callback, content_sid=content_sid,
                              error=error)  # fmt: skip
        body = str(form.get("Body", ""))
        if not body.strip():
            return _json(400, {"code": 21619, "message": "A text message body or media urls "
                               "must be specified."}), None  # fmt: skip
        if len(body) > 1600:
            return _json(400, {"code": 21617, "message": "The concatenated message body "
                               "exceeds the 1600 character limit."}), None  # fmt: skip
        return None, Text(sid, to, body, sender, status_callback, error="" if inside else "63016")

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
        if to.startswith("whatsapp:"):
            if not re.fullmatch(r"whatsapp:\+[1-9]\d{6,14}", to) or not (
                sender.startswith("whatsapp:") or sender.startswith("MG")
            ):
                return _json(400, {"code": 63007, "message": "Twilio could not find a Channel "
                                   "with the specified From address"})  # fmt: skip
            refused, made = self._whatsapp(to, form, str(form.get("StatusCallback", "")))
            if refused is not None:
                return refused
            assert made is not None
            self.texts.append(made)
            return self._created(request, lost, {"sid": made.sid, "status": "queued", "to": to})
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
        return self._created(request, lost, text.resource())

    def _created(
        self, request: web.Request, lost: Fault | None, answer: dict[str, Any]
    ) -> web.Response:
        """The answer to a created message: whole, cut short, or lost on the way."""
        if lost is Fault.TRUNCATED_JSON:
            return web.Response(status=201, text='{"sid": "SM0000', content_type="application/json")
        if lost is Fault.LOSE_ANSWER:
            assert request.transport is not None
            request.transport.abort()  # created; the 201 never leaves
            return web.Response(status=201)
        return _json(201, answer)

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
