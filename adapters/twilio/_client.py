"""Twilio's Messages API over aiohttp, for texts and WhatsApp alike, with its failures sorted
into what the dispatcher does.

    POST {base}/2010-04-01/Accounts/{sid}/Messages.json   To, From | MessagingServiceSid,
         StatusCallback, Body | ContentSid + ContentVariables          -> {"sid"}
    GET  {base}/2010-04-01/Accounts/{sid}/Messages.json   To, PageSize -> {"messages"}
    GET  {base}/2010-04-01/Accounts/{sid}.json            the account (`strikebot doctor`)

- 429 (Twilio's 20429, too many requests or concurrency): retried after `Retry-After`
  (one second if absent), pausing every message: the limit is the account's.
- 5xx, with a JSON, HTML or plain-text body, a dropped connection or no answer: retried.
  When the request went out and no readable answer came back (a timeout, a dropped
  connection, a 2xx cut short), Twilio may have created the message: the failure is in
  doubt, and before sending again the dispatcher asks `find`, which looks for it among the
  messages to that number (newest first, back to when the delivery was queued) by its
  words. Twilio's Message resource carries no key of ours (not the status callback URL), so
  the words are the marker: two deliveries with the very same words to one number in that
  span would be taken for one.
- 400 with a code the plugin names (`refusals`: a number that opted out or cannot receive,
  a template Twilio does not know) raises that `Refused`; other 4xx (a bad login, a bad
  sender) are the account's problem: retried and logged, so admins see them once fixed,
  and nothing is lost.

Nothing here logs a phone number: errors carry Twilio's code and a short reason only.
"""

from __future__ import annotations

import base64
import json
import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlencode

import aiohttp

from bot.ports import TransientDeliveryError

PAGE_SIZE = 50  # messages per page of Twilio's list, newest first
CLOCK_SKEW = timedelta(minutes=5)  # our clock and Twilio's may disagree by this much
OPTED_OUT = 21610  # the person texted STOP to the carrier


class Refused(Exception):
    """Twilio refused one message for a reason the plugin names by its code."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


class NumberRefused(Refused):
    """Twilio will not send to this number: it opted out (`opted_out`) or cannot receive."""

    @property
    def opted_out(self) -> bool:
        return self.code == OPTED_OUT


@dataclass(frozen=True, slots=True)
class Sender:
    """Who sends: a number, or a messaging service (which picks among its numbers); its
    addresses carry `channel` ("whatsapp:"), as do the people's it sends to."""

    number: str | None = None
    messaging_service: str | None = None
    channel: str = ""

    def fields(self) -> dict[str, str]:
        if self.messaging_service:
            return {"MessagingServiceSid": self.messaging_service}
        assert self.number is not None
        return {"From": f"{self.channel}{self.number}"}

    def sent(self, message: Mapping[str, Any]) -> bool:
        """Whether a message in Twilio's list was sent by this sender."""
        if self.messaging_service:
            return message.get("messaging_service_sid") == self.messaging_service
        return message.get("from") == f"{self.channel}{self.number}"


class TwilioClient:
    """One account's Messages API for one plugin; `noun` is what its errors call a message
    ("text"), `refusals` the codes that refuse one message and what they raise."""

    def __init__(
        self,
        base: str,
        account_sid: str,
        auth_token: str,
        *,
        timeout: float,
        platform: str,
        noun: str = "message",
        refusals: Mapping[int, type[Refused]] | None = None,
    ) -> None:
        self.base = base.rstrip("/")
        self.account = f"{self.base}/2010-04-01/Accounts/{account_sid}"
        basic = base64.b64encode(f"{account_sid}:{auth_token}".encode()).decode()
        self._headers = {"Authorization": f"Basic {basic}"}
        self._timeout = aiohttp.ClientTimeout(total=timeout)
        self._session: aiohttp.ClientSession | None = None
        self.refusals, self.noun = refusals or {}, noun
        self.log = logging.getLogger(f"strikebot.{platform}")
        self.doubt = f"; it may have taken the {noun}, which is looked for before it is sent again"

    def session(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession(headers=self._headers, timeout=self._timeout)
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def send(
        self, to: str, sender: Sender, status_callback: str, content: Mapping[str, str]
    ) -> str:
        """Create one message to `to` (E.164) with `content` (Body, or a template's fields);
        returns its SID. Raises a `Refused` or `TransientDeliveryError` (in doubt when Twilio
        may have created it all the same)."""
        form = {"To": f"{sender.channel}{to}", "StatusCallback": status_callback}
        form |= sender.fields() | dict(content)
        status, text, retry_after = await self._call("POST", f"{self.account}/Messages.json", form)
        data = json_object(text)
        if 200 <= status < 300:
            sid = data.get("sid") if data else None
            if not isinstance(sid, str) or not sid:
                raise TransientDeliveryError(
                    f"Twilio answered {status} without a message SID{self.doubt}", in_doubt=True
                )
            return sid
        code = data.get("code") if data else None
        message = str(data.get("message", "")) if data else _snippet(text)
        reason = f"Twilio answered {status}" + (f" (error {code})" if code else "")
        reason += f": {_snippet(message)}" if message else ""
        if status == 429:
            raise TransientDeliveryError(reason, retry_after=_seconds(retry_after), is_global=True)
        if isinstance(code, int) and code in self.refusals:
            raise self.refusals[code](code, reason)
        if 400 <= status < 500:
            self.log.error("Twilio refused a %s for a reason of the account: %s", self.noun, reason)
        raise TransientDeliveryError(reason)

    async def find(
        self, to: str, sender: Sender, ours: Callable[[str], bool], *, since: datetime
    ) -> str | None:
        """The SID of the newest message to `to` from `sender`, created since `since` (less
        `CLOCK_SKEW`), whose body is `ours`; None when there is none. Raises
        `TransientDeliveryError` when Twilio does not answer (the caller asks again later
        rather than risk sending twice)."""
        query = urlencode({"To": f"{sender.channel}{to}", "PageSize": PAGE_SIZE})
        url, oldest = f"{self.account}/Messages.json?{query}", since - CLOCK_SKEW
        for _ in range(5):
            status, text, retry_after = await self._call("GET", url)
            data = json_object(text)
            if status != 200 or data is None or not isinstance(data.get("messages"), list):
                raise TransientDeliveryError(
                    f"Twilio's list of messages answered {status}; looking again later",
                    retry_after=_seconds(retry_after) if status == 429 else None,
                    is_global=status == 429,
                )
            for message in data["messages"]:
                if not isinstance(message, dict):
                    continue
                created = _date(message.get("date_created"))
                if created is not None and created < oldest:
                    return None  # newest first: nothing older can be ours
                sid = message.get("sid")
                if (
                    message.get("direction") == "outbound-api"
                    and sender.sent(message)
                    and isinstance(sid, str)
                    and ours(str(message.get("body") or ""))
                ):
                    return sid
            following = data.get("next_page_uri")
            if not isinstance(following, str) or not following:
                return None
            url = self.base + following
        return None

    async def account_info(self) -> tuple[int, dict[str, Any] | None]:
        """(HTTP status, the account resource) of reading the account: 200 when the login
        works. Raises aiohttp's errors when Twilio cannot be reached."""
        async with self.session().get(f"{self.account}.json") as answer:
            return answer.status, json_object(await answer.text(errors="replace"))

    async def _call(
        self, method: str, url: str, data: dict[str, str] | None = None
    ) -> tuple[int, str, str | None]:
        """(status, body text, Retry-After). A request that may have reached Twilio and got
        no answer raises `TransientDeliveryError` in doubt; one that never left (no
        connection), or only asked, not in doubt."""
        try:
            async with self.session().request(method, url, data=data) as response:
                text = await response.text(errors="replace")
                return response.status, text, response.headers.get("Retry-After")
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            reason = f"Twilio did not answer: {type(exc).__name__}"
            if method != "POST" or isinstance(exc, aiohttp.ClientConnectorError):
                raise TransientDeliveryError(reason) from None
            raise TransientDeliveryError(reason + self.doubt, in_doubt=True) from None


def _date(value: object) -> datetime | None:
    """Twilio's dates (RFC 2822: "Fri, 18 Jan 2019 18:00:00 +0000")."""
    try:
        return parsedate_to_datetime(value) if isinstance(value, str) and value else None
    except (TypeError, ValueError, IndexError):
        return None


def json_object(text: str) -> dict[str, Any] | None:
    """`text` as a JSON object, or None when it is not one (an HTML page, a cut answer)."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _snippet(text: str) -> str:
    """A short, one-line excerpt of a body (an HTML error page, a proxy's message)."""
    plain = re.sub(r"<[^>]*>", " ", text)
    plain = re.sub(r"\+?\d[\d\s().-]{7,}\d", "<number>", plain)  # never echo a number
    return " ".join(plain.split())[:120]


def _seconds(value: str | None) -> float:
    try:
        return min(max(float(value or 1.0), 0.0), 3600.0)
    except ValueError:
        return 1.0
