"""Twilio's Messages API over aiohttp, with its failures sorted into what the dispatcher does.

    POST {base}/2010-04-01/Accounts/{sid}/Messages.json   To, From | MessagingServiceSid,
                                                          Body, StatusCallback  -> {"sid"}

- 429 (Twilio's 20429, too many requests or concurrency): retried after `Retry-After`
  (one second if absent), pausing every text: the limit is the account's.
- 5xx, with a JSON, HTML or plain-text body, a dropped connection or no answer: retried.
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
from typing import Any

import aiohttp

from bot.ports import TransientDeliveryError

log = logging.getLogger("strikebot.sms")

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


class TwilioClient:
    def __init__(
        self, base: str, account_sid: str, auth_token: str, *, timeout: float = 20.0
    ) -> None:
        self.url = f"{base.rstrip('/')}/2010-04-01/Accounts/{account_sid}/Messages.json"
        basic = base64.b64encode(f"{account_sid}:{auth_token}".encode()).decode()
        self._headers = {"Authorization": f"Basic {basic}"}
        self._timeout = aiohttp.ClientTimeout(total=timeout)
        self._session: aiohttp.ClientSession | None = None

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def send(self, to: str, body: str, sender: Sender, status_callback: str) -> str:
        """Send one text; returns its SID. Raises `NumberRefused` or `TransientDeliveryError`."""
        if self._session is None:
            self._session = aiohttp.ClientSession(headers=self._headers, timeout=self._timeout)
        form = {"To": to, "Body": body, "StatusCallback": status_callback, **sender.fields()}
        try:
            async with self._session.post(self.url, data=form) as response:
                text = await response.text(errors="replace")
                status = response.status
                retry_after = response.headers.get("Retry-After")
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            raise TransientDeliveryError(f"Twilio did not answer: {type(exc).__name__}") from None
        data = _json(text)
        if 200 <= status < 300:
            sid = data.get("sid") if data else None
            if not isinstance(sid, str) or not sid:
                raise TransientDeliveryError(f"Twilio answered {status} without a message SID")
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
