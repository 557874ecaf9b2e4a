"""Twilio's Messages API over aiohttp, with its failures sorted into what the dispatcher does.

    POST {base}/2010-04-01/Accounts/{sid}/Messages.json   To, From | MessagingServiceSid,
                                                          Body, StatusCallback  -> {"sid"}
    GET  {base}/2010-04-01/Accounts/{sid}/Messages.json   To, PageSize -> {"messages"}

- 429 (Twilio's 20429, too many requests or concurrency): retried after `Retry-After`
  (one second if absent), pausing every text: the limit is the account's.
- 5xx, with a JSON, HTML or plain-text body, a dropped connection or no answer: retried.
  When the request went out and no readable answer came back (a timeout, a dropped
  connection, a 2xx cut short), Twilio may have created the message: the failure is in
  doubt, and before sending again the dispatcher asks `find`, which looks for it among the
  messages to that number (newest first, back to when the delivery was queued) by its
  text. Twilio's Message resource carries no key of ours (not the status callback URL), so
  the text is the marker: two deliveries with the very same words to one number in that
  span would be taken for one.
- 400 with a code about the number: 21610 (the person texted STOP to the carrier),
  21211/21614/21612/21408/21265 (not a valid, mobile or reachable number): permanent for
  this person (`NumberRefused`). Other 4xx (a bad login, a bad sender) are the account's
  problem: retried and logged, so admins see them once fixed, and nothing is lost.

Nothing here logs a phone number: errors carry Twilio's code and a short reason only.
"""

from __future__ import annotations

import base64
import json
import logging
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlencode

import aiohttp

from bot.ports import TransientDeliveryError

log = logging.getLogger("strikebot.sms")

PAGE_SIZE = 50  # messages per page of Twilio's list, newest first
CLOCK_SKEW = timedelta(minutes=5)  # our clock and Twilio's may disagree by this much
OPTED_OUT = 21610
BAD_NUMBER = frozenset({21211, 21265, 21408, 21612, 21614})


class NumberRefused(Exception):
    """Twilio will not send to this number: it opted out (`opted_out`) or cannot receive."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason

    @property
    def opted_out(self) -> bool:
        return self.code == OPTED_OUT


@dataclass(frozen=True, slots=True)
class Sender:
    """Who texts: a number, or a messaging service (which picks among its numbers)."""

    number: str | None = None
    messaging_service: str | None = None

    def fields(self) -> dict[str, str]:
        if self.messaging_service:
            return {"MessagingServiceSid": self.messaging_service}
        assert self.number is not None
        return {"From": self.number}

    def sent(self, message: dict[str, Any]) -> bool:
        """Whether a message in Twilio's list was sent by this sender."""
        if self.messaging_service:
            return message.get("messaging_service_sid") == self.messaging_service
        return message.get("from") == self.number


class TwilioClient:
    def __init__(
        self, base: str, account_sid: str, auth_token: str, *, timeout: float = 20.0
    ) -> None:
        self.base = base.rstrip("/")
        self.url = f"{self.base}/2010-04-01/Accounts/{account_sid}/Messages.json"
        basic = base64.b64encode(f"{account_sid}:{auth_token}".encode()).decode()
        self._headers = {"Authorization": f"Basic {basic}"}
        self._timeout = aiohttp.ClientTimeout(total=timeout)
        self._session: aiohttp.ClientSession | None = None

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def send(self, to: str, body: str, sender: Sender, status_callback: str) -> str:
        """Send one text; returns its SID. Raises `NumberRefused` or `TransientDeliveryError`
        (in doubt when Twilio may have created it all the same)."""
        form = {"To": to, "Body": body, "StatusCallback": status_callback, **sender.fields()}
        status, text, retry_after = await self._call("POST", self.url, data=form)
        data = _json(text)
        if 200 <= status < 300:
            sid = data.get("sid") if data else None
            if not isinstance(sid, str) or not sid:
                raise TransientDeliveryError(
                    f"Twilio answered {status} without a message SID; it may have taken the "
                    "text, which is looked for before it is sent again",
                    in_doubt=True,
                )
            return sid
        code = data.get("code") if data else None
        message = str(data.get("message", "")) if data else _snippet(text)
        reason = f"Twilio answered {status}" + (f" (error {code})" if code else "")
        reason += f": {_snippet(message)}" if message else ""
        if status == 429:
            wait = _seconds(retry_after)
            raise TransientDeliveryError(reason, retry_after=wait, is_global=True)
        if isinstance(code, int) and (code == OPTED_OUT or code in BAD_NUMBER):
            raise NumberRefused(code, reason)
        if 400 <= status < 500:
            log.error("Twilio refused a text for a reason of the account: %s", reason)
        raise TransientDeliveryError(reason)

    async def find(
        self, to: str, body: str, sender: Sender, *, since: datetime, pages: int = 5
    ) -> str | None:
        """The SID of a message Twilio created to `to` with this `body` since `since` (less
        `CLOCK_SKEW`), from `sender`; None when there is none. Raises
        `TransientDeliveryError` when Twilio does not answer (the caller asks again later
        rather than risk sending twice)."""
        wanted = _comparable(body)
        url: str | None = f"{self.url}?{urlencode({'To': to, 'PageSize': PAGE_SIZE})}"
        oldest = since - CLOCK_SKEW
        for _ in range(pages):
            assert url is not None
            status, text, retry_after = await self._call("GET", url)
            data = _json(text)
            if status != 200 or data is None or not isinstance(data.get("messages"), list):
                wait = _seconds(retry_after) if status == 429 else None
                raise TransientDeliveryError(
                    f"Twilio's list of messages answered {status}; looking again later",
                    retry_after=wait,
                    is_global=status == 429,
                )
            for message in data["messages"]:
                if not isinstance(message, dict):
                    continue
                created = _date(message.get("date_created"))
                if created is not None and created < oldest:
                    return None  # newest first: nothing older can be ours
                if (
                    message.get("direction") == "outbound-api"
                    and sender.sent(message)
                    and _comparable(str(message.get("body") or "")) == wanted
                    and isinstance(message.get("sid"), str)
                ):
                    return str(message["sid"])
            following = data.get("next_page_uri")
            if not isinstance(following, str) or not following:
                return None
            url = self.base + following
        return None

    async def _call(
        self, method: str, url: str, *, data: dict[str, str] | None = None
    ) -> tuple[int, str, str | None]:
        """(status, body text, Retry-After). A request that may have reached Twilio and got
        no answer raises `TransientDeliveryError` in doubt; one that never left (no
        connection) not in doubt."""
        if self._session is None:
            self._session = aiohttp.ClientSession(headers=self._headers, timeout=self._timeout)
        try:
            async with self._session.request(method, url, data=data) as response:
                text = await response.text(errors="replace")
                return response.status, text, response.headers.get("Retry-After")
        except aiohttp.ClientConnectorError as exc:
            raise TransientDeliveryError(f"Twilio did not answer: {type(exc).__name__}") from None
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            if method != "POST":
                raise TransientDeliveryError(
                    f"Twilio did not answer: {type(exc).__name__}"
                ) from None
            raise TransientDeliveryError(
                f"Twilio did not answer: {type(exc).__name__}; it may have taken the text, "
                "which is looked for before it is sent again",
                in_doubt=True,
            ) from None


def _comparable(body: str) -> str:
    """A text as compared with what Twilio lists: its words, with the characters a messaging
    service's Smart Encoding may swap for GSM-7 ones (curly quotes, dashes, "…") folded,
    and the spacing ignored."""
    folded = body.translate(_SMART)
    return " ".join(folded.split())


_SMART = str.maketrans(
    {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-",
     "\u2026": "...", "\u00a0": " "}
)  # fmt: skip


def _date(value: object) -> datetime | None:
    """Twilio's dates (RFC 2822: "Fri, 18 Jan 2019 18:00:00 +0000")."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None


def _json(text: str) -> dict[str, Any] | None:
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
