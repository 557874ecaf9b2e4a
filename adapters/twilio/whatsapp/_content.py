"""Twilio's Content API for WhatsApp's templates, over the Messages API client's session:
what WhatsApp said about each (`GET {content}/v1/Content/{HX...}/ApprovalRequests`), and
a template's fields for a send (ContentSid, ContentVariables).

- 400 21655 / 21656 to a send (the template's SID or variables are wrong): the campaign
  file's problem, said to admins (`TemplateRefused`); 63003 / 63024 (not a WhatsApp number):
  this person's (`NumberRefused`). The rest of a send's failures are sorted as texts' are
  (`adapters/twilio/_client.py`).
- 63016 (outside the 24-hour window) comes later, in the status callback: see `_adapter`.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

import aiohttp

from .._client import NumberRefused, Refused, TwilioClient, json_object

APPROVAL_TTL = 600.0  # seconds an approval status is trusted before asking again


class TemplateRefused(Refused):
    """Twilio refused the template named (its SID or variables): fix the campaign file."""


REFUSED: dict[int, type[Refused]] = {
    **dict.fromkeys((63003, 63024), NumberRefused),
    **dict.fromkeys((21655, 21656), TemplateRefused),
}


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


class Approvals:
    """WhatsApp's verdicts on templates, asked of the Content API through `client`."""

    def __init__(self, client: TwilioClient, content_base: str) -> None:
        self.client = client
        self.content = f"{content_base.rstrip('/')}/v1/Content"
        self._known: dict[str, tuple[float, Approval]] = {}

    async def approval(self, content_sid: str) -> Approval | None:
        """WhatsApp's verdict on a template (cached for ten minutes), or None when the
        Content API cannot be asked now (the send goes ahead; Twilio will refuse it if it
        must)."""
        now = time.monotonic()
        known = self._known.get(content_sid)
        if known is not None and now - known[0] < APPROVAL_TTL:
            return known[1]
        found = await self.fetch(content_sid)
        if found is not None:
            self._known[content_sid] = (now, found)
        return found

    async def fetch(self, content_sid: str) -> Approval | None:
        url = f"{self.content}/{content_sid}/ApprovalRequests"
        try:
            async with self.client.session().get(url) as r:
                text, status = await r.text(errors="replace"), r.status
        except (aiohttp.ClientError, TimeoutError, OSError):
            return None
        if status == 404:
            return Approval("unknown")
        data = json_object(text)
        verdict = data.get("whatsapp") if data and status == 200 else None
        if not isinstance(verdict, dict):
            return None
        return Approval(
            str(verdict.get("status") or "unknown").lower(),
            str(verdict.get("name") or ""),
            str(verdict.get("rejection_reason") or ""),
        )


def template_fields(content_sid: str, values: list[str]) -> dict[str, str]:
    """ContentSid and ContentVariables ({"1": ..., "2": ...}) for a template."""
    variables = {str(i): value for i, value in enumerate(values, start=1)}
    return {"ContentSid": content_sid, "ContentVariables": json.dumps(variables)}
