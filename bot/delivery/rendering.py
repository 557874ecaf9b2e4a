"""What a claimed row sends, decided just before it is sent (`Renderer.plan`): a message, an
edit, an event, or nothing (skip, later, dead); each update's message rendered once."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bot.clock import Clock
from bot.delivery.planning import release_time
from bot.messages.compose import correction_message, retraction_message, update_message
from bot.models import (
    Campaign,
    Delivery,
    DeliveryAction,
    DeliveryState,
    Platform,
    Subscription,
    Update,
    UpdateState,
)
from bot.plugins.outbound import Adapter, OutboundMessage, edits_in_place
from bot.store import Store
from bot.store import outbox_queries as q

FOLLOW_UPS = frozenset({DeliveryAction.EDIT, DeliveryAction.CORRECTION, DeliveryAction.RETRACT})


@dataclass(frozen=True, slots=True)
class Send:
    message: OutboundMessage


@dataclass(frozen=True, slots=True)
class Edit:
    message_id: str
    message: OutboundMessage


@dataclass(frozen=True, slots=True)
class SendEvent:
    event: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Skip:
    reason: str


@dataclass(frozen=True, slots=True)
class Later:
    not_before: datetime


@dataclass(frozen=True, slots=True)
class Dead:
    reason: str


Call = Send | Edit | SendEvent  # a plan that calls the platform
Plan = Call | Skip | Later | Dead


class Renderer:
    """Plans rows against the store's current view, with two caches: each (update revision,
    language, zone) rendered once, and each update's state re-read at most every `ttl`."""

    def __init__(
        self,
        store: Store,
        adapters: Mapping[Platform, Adapter],
        campaign: Campaign,
        clock: Clock,
        ttl: float,
    ) -> None:
        self.store = store
        self.adapters = adapters
        self.campaign = campaign
        self.clock = clock
        self.ttl = ttl
        self._states: dict[int, tuple[float, asyncio.Future[str | None]]] = {}
        self._rendered: dict[tuple[int, int, bool, str, str | None], OutboundMessage] = {}

    async def plan(
        self,
        delivery: Delivery,
        sub: Subscription,
        update: Update | None,
        post: Delivery | None = None,
    ) -> Plan:
        """Render what this row sends; a row carrying an event sends that instead, once the
        same checks found something to send."""
        event = (delivery.payload or {}).get("event")
        if delivery.action is DeliveryAction.EVENT:
            if not isinstance(event, Mapping):
                return Dead("the delivery carries no event to send (payload['event'])")
            return SendEvent(event)
        plan = await self._plan_message(delivery, sub, update, post)
        if isinstance(event, Mapping) and isinstance(plan, Send | Edit):
            return SendEvent(event)
        return plan

    async def _plan_message(
        self,
        delivery: Delivery,
        sub: Subscription,
        update: Update | None,
        post: Delivery | None = None,
    ) -> Plan:
        """Render what this row sends. `update` and a follow-up's `post` were read with the
        claim; a POST not yet settled then is read again here."""
        action = delivery.action
        language, zone = sub.language, sub.timezone
        if action is DeliveryAction.POST:
            if update is None:
                return Skip("the update no longer exists")
            state = await self._state(update.id)
            if state == UpdateState.RETRACTED and delivery.attempts > 0:
                # In doubt: the copy may be up. Same key, rendered as the retraction; the
                # RETRACT row that waits for this one then edits whatever message it names.
                async with self.store.read() as tx:
                    current = await tx.get_update(update.id, self.clock())
                if current is not None and current.retracted:
                    message = retraction_message(current, language, self.campaign, timezone=zone)
                    return Send(message)
            if state != UpdateState.PUBLISHED:
                return Skip("the update was withdrawn before it reached this channel")
            if update.published_at is not None and update.published_at > self.clock():
                return Later(update.published_at)
            return Send(self._update_message(update, language, zone))
        if action in (DeliveryAction.BRIEFING, DeliveryAction.NOTICE, DeliveryAction.CONFIRM):
            raw = (delivery.payload or {}).get("message")
            if not isinstance(raw, Mapping):
                return Dead("the delivery carries no message to send (payload['message'])")
            return Send(OutboundMessage.from_json(raw))
        if action in FOLLOW_UPS and delivery.update_id is not None:
            now = self.clock()
            current = update
            if post is None or post.state is not DeliveryState.SENT or current is None:
                async with self.store.read() as tx:
                    post = await q.find_post(tx, delivery.update_id, sub.id)
                    current = await tx.get_update(delivery.update_id, now)
            if current is None:
                return Skip("the update no longer exists")
            if not current.retracted and await self._state(current.id) == str(
                UpdateState.RETRACTED
            ):
                # Retracted since the claim: an edit must not undo the retraction.
                async with self.store.read() as tx:
                    current = await tx.get_update(delivery.update_id, now)
                if current is None:
                    return Skip("the update no longer exists")
            if post is not None and post.state is DeliveryState.PENDING:
                return Later(now)  # claimable again once the POST settles
            if post is None or post.state is not DeliveryState.SENT:
                return Skip(f"nothing to {action}: the update never reached this channel")
            if not post.platform_message_id:
                return Skip(f"nothing to {action}: the post recorded no message id")
            if not edits_in_place(self.adapters.get(delivery.platform)):
                return self._plan_new_message(action, current, sub, now)
            if action is DeliveryAction.RETRACT:
                message = retraction_message(current, language, self.campaign, timezone=zone)
                return Edit(post.platform_message_id, message)
            if action is DeliveryAction.EDIT:
                message = update_message(current, language, self.campaign, timezone=zone)
                return Edit(post.platform_message_id, message)
            if current.retracted:
                return Skip("the update was retracted; its retraction replaces the correction")
            return Send(correction_message(current, language, self.campaign, timezone=zone))
        return Dead(f"cannot deliver a {action} row (update {delivery.update_id})")

    def _update_message(self, update: Update, language: str, zone: str | None) -> OutboundMessage:
        """`update_message`, rendered once per (update revision, language, zone): a fan-out
        to 10,000 channels renders a handful of messages, and hands the adapter the same
        object each time (which lets it reuse its own rendering)."""
        key = (update.id, update.revision, update.retracted, language, zone)
        message = self._rendered.get(key)
        if message is None:
            if len(self._rendered) >= 256:
                self._rendered.clear()
            message = update_message(update, language, self.campaign, timezone=zone)
            self._rendered[key] = message
        return message

    def _plan_new_message(
        self, action: DeliveryAction, current: Update, sub: Subscription, now: datetime
    ) -> Plan:
        """A follow-up on a platform whose messages cannot change: a retraction or a
        correction is a new short message (which, like any new message, waits out the
        channel's quiet hours unless urgent); a silent edit has nothing to send."""
        language, zone = sub.language, sub.timezone
        if action is DeliveryAction.EDIT:
            return Skip("this platform cannot change a sent message; its link shows the edit")
        if action is DeliveryAction.RETRACT:
            release = release_time(sub, current.urgency, now)
            if release > now:
                return Later(release)
            return Send(retraction_message(current, language, self.campaign, timezone=zone))
        if current.retracted:
            return Skip("the update was retracted; its retraction replaces the correction")
        return Send(correction_message(current, language, self.campaign, timezone=zone))

    async def _state(self, update_id: int) -> str | None:
        """The update's stored state, re-read at most once every `ttl` (one read shared by
        every copy waiting for it): a retraction during a fan-out stops the POSTs not yet
        sent."""
        cached = self._states.get(update_id)
        if cached is None or time.monotonic() - cached[0] >= self.ttl:
            read = self.store.transact(lambda tx: q.state_of_update(tx, update_id), write=False)
            cached = (time.monotonic(), asyncio.ensure_future(read))
            self._states[update_id] = cached
        return await asyncio.shield(cached[1])
