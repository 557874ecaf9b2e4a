"""`WebhookAdapter`: delivers events (`bot.delivery.events`) to webhook endpoints, signed.

The dispatcher hands it an event document (`send_event`) for every update published,
edited, corrected or retracted and every demand change, and a composed message (`send`) for
a morning briefing or an admin notice, which it turns into an event. The delivery id is the
`webhook-id`, the same on every retry.

Failures. A receiver that answers anything but 2xx, or not at all, is retried on a schedule
anchored at the moment it started failing (5 s, 30 s, 2 min, 5 min, 30 min, 1 h, 2 h, 4 h,
8 h, then every 12 h), shared by every instance and every event waiting for it: all of an
endpoint's events go together when it is due. After `[webhooks] disable_after_hours` (48 by
default) of failing without one success the endpoint is disabled: the dispatcher parks the
event, pauses the subscription and tells the admins. A 410 Gone disables it at once, as the
Standard Webhooks specification suggests, and so does an address the campaign does not
allow (a name pointed at a private address after it was added).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from adapters.webhooks._sending import Outcome, Sender
from bot.ports import (
    ChannelRef,
    OutboundMessage,
    Pacing,
    PermanentDeliveryError,
    PluginContext,
    TransientDeliveryError,
    WebhookEndpoint,
    events,
)

log = logging.getLogger("strikebot.webhooks")

NAME = "webhooks"
# Seconds between tries, counted from when the endpoint started failing; the last repeats.
SCHEDULE = (5, 30, 120, 300, 1800, 3600, 7200, 14400, 28800, 43200)
PACING = Pacing(global_per_second=50.0, per_channel_per_second=5.0, burst=5, max_in_flight=16)


def next_try(failing_since: datetime, now: datetime) -> float:
    """Seconds from `now` to the next point of the schedule after it."""
    elapsed = (now - failing_since).total_seconds()
    point = 0.0
    step = 0
    while point <= elapsed:
        point += SCHEDULE[min(step, len(SCHEDULE) - 1)]
        step += 1
    return max(point - elapsed, 1.0)


def body_of(event: Mapping[str, Any]) -> bytes:
    """The exact bytes posted (and signed): compact JSON, UTF-8."""
    return json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode()


class WebhookAdapter:
    """`bot.ports.Adapter` and `bot.ports.EventSink` for webhook endpoints."""

    platform = NAME

    def __init__(self, ctx: PluginContext, *, sender: Sender | None = None) -> None:
        self.ctx = ctx
        self.policy = ctx.webhook_policy
        self.sender = sender or Sender(self.policy)
        self._sent = 0
        self._failed = 0
        self._last_error: str | None = None

    @property
    def pacing(self) -> Pacing:
        return PACING

    async def start(self) -> None:
        await self.sender.open()

    async def stop(self) -> None:
        await self.sender.close()

    def health(self) -> Mapping[str, object]:
        state: dict[str, object] = {"connected": True, "sent": self._sent, "failed": self._failed}
        if self._last_error:
            state["last_error"] = self._last_error
        return state

    # ------------------------------------------------------------------ delivering

    async def send_event(
        self, channel: ChannelRef, event: Mapping[str, Any], *, idempotency_key: str
    ) -> str:
        endpoint = await self._endpoint(channel)
        now = self.ctx.clock()
        outcome = await self.sender.post(
            endpoint.url, endpoint.secret, idempotency_key, body_of(event)
        )
        if outcome.ok:
            self._sent += 1
            await self.ctx.webhooks.answered(endpoint.id)
            return f"http-{outcome.status}"
        self._failed += 1
        self._last_error = f"#{endpoint.id}: {outcome.detail}"
        raise await self._failure(endpoint, outcome, now)

    async def send(
        self, channel: ChannelRef, message: OutboundMessage, *, idempotency_key: str
    ) -> str:
        """A briefing or an admin notice (composed per channel) goes out as an event."""
        event = events.message_event(message, self.ctx.campaign, self.ctx.clock())
        return await self.send_event(channel, event, idempotency_key=idempotency_key)

    async def edit(self, channel: ChannelRef, message_id: str, message: OutboundMessage) -> None:
        # Endpoints receive an event for every change; there is no message to change.
        raise PermanentDeliveryError("webhook endpoints take events, not message edits")

    async def delete(self, channel: ChannelRef, message_id: str) -> None:
        raise PermanentDeliveryError("webhook endpoints take events, not message deletions")

    # ------------------------------------------------------------------ helpers

    async def _endpoint(self, channel: ChannelRef) -> WebhookEndpoint:
        endpoint = await self.ctx.webhooks.receiver(channel.workspace, channel.channel)
        if endpoint is None:
            raise PermanentDeliveryError(
                "this webhook endpoint was removed; add it again with `strikebot webhooks add`"
            )
        return endpoint

    async def _failure(
        self, endpoint: WebhookEndpoint, outcome: Outcome, now: datetime
    ) -> PermanentDeliveryError | TransientDeliveryError:
        """Record the failure; disable the endpoint (a permanent error) or say when to retry."""
        since, disable = await self.ctx.webhooks.failed(
            endpoint.id, outcome.detail, for_good=outcome.gone or outcome.refused
        )
        hours = (now - since).total_seconds() / 3600
        where = f"webhook #{endpoint.id} ({endpoint.url})"
        if outcome.gone:
            reason = f"{where} answered 410 Gone, asking to be removed: disabled"
        elif outcome.refused:
            reason = f"{where} is not allowed now ({outcome.detail}): disabled"
        elif disable:
            reason = (
                f"{where} has failed since {since:%Y-%m-%d %H:%M} UTC ({hours:.0f} h; last: "
                f"{outcome.detail}): disabled. Fix the receiver, then run "
                f"`strikebot webhooks enable {endpoint.id}`"
            )
        else:
            wait = outcome.retry_after if outcome.retry_after is not None else next_try(since, now)
            log.info(
                "webhook #%s failed (%s); next try in %.0f s", endpoint.id, outcome.detail, wait
            )
            return TransientDeliveryError(f"{where}: {outcome.detail}", retry_after=wait)
        log.warning("%s", reason)
        return PermanentDeliveryError(reason)


def retry_at(failing_since: datetime, now: datetime) -> datetime:
    """When the next try falls due (for listings)."""
    return now + timedelta(seconds=next_try(failing_since, now))
