"""Twilio's Messages API for WhatsApp, and its Content API's approvals, over aiohttp, with
the failures sorted into what the dispatcher does.

    POST {api}/2010-04-01/Accounts/{sid}/Messages.json
         To=whatsapp:+1..., From=whatsapp:+1... | MessagingServiceSid, StatusCallback,
         Body (free-form, within 24 hours of the person's last message)
         | ContentSid + ContentVariables (an approved template, any time)   -> {"sid"}
    GET  {content}/v1/Content/{HX...}/ApprovalRequests -> {"whatsapp": {"status": ...}}

- 429 (20429): retried after `Retry-After` for every message: the limit is the account's.
- 5xx with any body, a dropped connection, no answer: retried.
- 400 21655 / 21656 (the template's SID or variables are wrong): the campaign file's
  problem, said to admins (`TemplateRefused`); 63003 / 63024 (not a WhatsApp number): this
  person's (`NumberRefused`). Other 4xx (a bad login, a bad sender): retried and logged.
- 63016 (outside the 24-hour window) comes later, in the status callback: see `_adapter`.
- A message Twilio may have created with its answer lost (a 2xx without a SID, a dropped
  connection after the request went) is in doubt: `find` looks for it in Twilio's list of
  messages to the number before it is sent again.

Nothing here logs a phone number.
"""

from __future__ import annotations

import base64
import json
import logging
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlencode

import aiohttp

from bot.ports import TransientDeliveryError

log = logging.getLogger("strikebot.whatsapp")

NOT_WHATSAPP = frozenset({63003, 63024})
BAD_TEMPLATE = frozenset({21655, 21656})
APPROVAL_TTL = 600.0  # seconds an approval status is trusted before asking again
PAGE_SIZE = 50  # messages per page of Twilio's list, newest first
CLOCK_SKEW = timedelta(minutes=5)  # our clock and Twilio's may disagree by this much
IN_DOUBT = "; it may have taken the message, which is looked for before it is sent again"


class NumberRefused(Exception):
    """Twilio will not send to this number on WhatsApp (it is not on WhatsApp)."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


class TemplateRefused(Exception):
    """Twilio refused the template named (its SID or variables): fix the campaign file."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Approval:
    """What WhatsApp said about a template: "approved", "pending", "rejected", "paused",
    "disabled", or "unknown" (Twilio holds no such content)."""

    status: str
    name: str = ""
    reason: str = ""

    @property
    def approved(self) -> bool:
        return self.status == "approved"


class WhatsAppClient:
    def __init__(
        self, base: str, content_base: str, account_sid: str, auth_token: str, *, timeout: float
    ) -> None:
        self.account = f"{base.rstrip('/')}/2010-04-01/Accounts/{account_sid}"
        self.content = f"{content_base.rstrip('/')}/v1/Content"
        basic = base64.b64encode(f"{account_sid}:{auth_token}".encode()).decode()
        self._headers = {"Authorization": f"Basic {basic}"}
        self._timeout = aiohttp.ClientTimeout(total=timeout)
        self._session: aiohttp.ClientSession | None = None
        self._approvals: dict[str, tuple[float, Approval]] = {}

    def session(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession(headers=self._headers, timeout=self._timeout)
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def send(self, fields: Mapping[str, str]) -> str:
        """Create one message; returns its SID. Raises `NumberRefused`, `TemplateRefused` or
        `TransientDeliveryError`."""
        try:
            async with self.session().post(f"{self.account}/Messages.json", data=fields) as r:
                text = await r.text(errors="replace")
                status, retry_after = r.status, r.headers.get("Retry-After")
        except aiohttp.ClientConnectorError as exc:  # never reached Twilio
            raise TransientDeliveryError(f"Twilio did not answer: {type(exc).__name__}") from None
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            raise TransientDeliveryError(
                f"Twilio did not answer: {type(exc).__name__}{IN_DOUBT}", in_doubt=True
            ) from None
        data = _json(text)
        if 200 <= status < 300:
            sid = data.get("sid") if data else None
            if not isinstance(sid, str) or not sid:
                raise TransientDeliveryError(
                    f"Twilio answered {status} without a message SID{IN_DOUBT}", in_doubt=True
                )
            return sid
        code = data.get("code") if data else None
        message = str(data.get("message", "")) if data else _snippet(text)
        reason = f"Twilio answered {status}" + (f" (error {code})" if code else "")
        reason += f": {_snippet(message)}" if message else ""
        if status == 429:
            raise TransientDeliveryError(reason, retry_after=_seconds(retry_after), is_global=True)
        if isinstance(code, int) and code in NOT_WHATSAPP:
            raise NumberRefused(code, reason)
        if isinstance(code, int) and code in BAD_TEMPLATE:
            raise TemplateRefused(code, reason)
        if 400 <= status < 500:
            log.error("Twilio refused a WhatsApp message for a reason of the account: %s", reason)
        raise TransientDeliveryError(reason)

    async def find(
        self, to: str, sent: Callable[[Mapping[str, Any]], bool], *, since: datetime
    ) -> str | None:
        """The SID of the newest message to `to` (``whatsapp:+1...``) created since `since`
        (less `CLOCK_SKEW`) for which `sent(resource)` is true; None when there is none.
        Raises `TransientDeliveryError` when Twilio does not answer (looked for again later
        rather than risk sending twice)."""
        url = f"{self.account}/Messages.json?{urlencode({'To': to, 'PageSize': PAGE_SIZE})}"
        oldest, base = since - CLOCK_SKEW, self.account.split("/2010-04-01/")[0]
        for _ in range(5):
            try:
                async with self.session().get(url) as r:
                    text, status = await r.text(errors="replace"), r.status
            except (aiohttp.ClientError, TimeoutError, OSError) as exc:
                raise TransientDeliveryError(
                    f"Twilio did not answer: {type(exc).__name__}"
                ) from None
            data = _json(text)
            if status != 200 or data is None or not isinstance(data.get("messages"), list):
                raise TransientDeliveryError(
                    f"Twilio's list of messages answered {status}; looking again later",
                    is_global=status == 429,
                )
            for message in data["messages"]:
                if not isinstance(message, dict):
                    continue
                created = _date(message.get("date_created"))
                if created is not None and created < oldest:
                    return None  # newest first: nothing older can be ours
                if message.get("direction") == "outbound-api" and sent(message):
                    sid = message.get("sid")
                    return sid if isinstance(sid, str) else None
            following = data.get("next_page_uri")
            if not isinstance(following, str) or not following:
                return None
            url = base + following
        return None

    async def approval(self, content_sid: str) -> Approval | None:
        """WhatsApp's verdict on a template (cached for ten minutes), or None when the
        Content API cannot be asked now (the send goes ahead; Twilio will refuse it if it
        must)."""
        now = time.monotonic()
        known = self._approvals.get(content_sid)
        if known is not None and now - known[0] < APPROVAL_TTL:
            return known[1]
        found = await self.fetch_approval(content_sid)
        if found is not None:
            self._approvals[content_sid] = (now, found)
        return found

    async def fetch_approval(self, content_sid: str) -> Approval | None:
        url = f"{self.content}/{content_sid}/ApprovalRequests"
        try:
            async with self.session().get(url) as r:
                text, status = await r.text(errors="replace"), r.status
        except (aiohttp.ClientError, TimeoutError, OSError):
            return None
        if status == 404:
            return Approval("unknown")
        data = _json(text)
        verdict = data.get("whatsapp") if data and status == 200 else None
        if not isinstance(verdict, dict):
            return None
        return Approval(
            str(verdict.get("status") or "unknown").lower(),
            str(verdict.get("name") or ""),
            str(verdict.get("rejection_reason") or ""),
        )

    async def account_status(self) -> int | None:
        """The HTTP status of reading the account (200: the login works), or None."""
        try:
            async with self.session().get(f"{self.account}.json") as r:
                return r.status
        except (aiohttp.ClientError, TimeoutError, OSError):
            return None


def template_fields(content_sid: str, values: list[str]) -> dict[str, str]:
    """ContentSid and ContentVariables ({"1": ..., "2": ...}) for a template."""
    variables = {str(i): value for i, value in enumerate(values, start=1)}
    return {"ContentSid": content_sid, "ContentVariables": json.dumps(variables)}


def _date(value: object) -> datetime | None:
    """Twilio's dates (RFC 2822: "Fri, 18 Jan 2019 18:00:00 +0000")."""
    try:
        return parsedate_to_datetime(value) if isinstance(value, str) and value else None
    except (TypeError, ValueError, IndexError):
        return None


def _json(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _snippet(text: str) -> str:
    plain = re.sub(r"<[^>]*>", " ", text)
    plain = re.sub(r"\+?\d[\d\s().-]{7,}\d", "<number>", plain)  # never echo a number
    return " ".join(plain.split())[:120]


def _seconds(value: str | None) -> float:
    try:
        return min(max(float(value or 1.0), 0.0), 3600.0)
    except ValueError:
        return 1.0
