"""Which outbox rows an admin action creates, and when each may go out: pure functions.

Urgent updates go out at once; routine and important ones wait out a channel's quiet hours.
An embargoed update's rows are due at its publish time. Rows for channels that take events
(`bot.delivery.events`, webhook endpoints) carry their document in `payload["event"]`: the same
actions, so an event waits for its update's POST like any follow-up.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from bot.models import DeliveryAction, Subscription, Update, Urgency
from bot.store.repo import NewDelivery


def release_time(sub: Subscription, urgency: Urgency, due: datetime) -> datetime:
    """The first moment at or after `due` when this channel may receive `urgency`."""
    quiet = sub.quiet_hours
    if quiet is None or urgency is Urgency.URGENT:
        return due
    zone = ZoneInfo(sub.timezone)
    local = due.astimezone(zone)
    if not quiet.contains(local.time().replace(tzinfo=None)):
        return due
    end = local.replace(hour=quiet.end.hour, minute=quiet.end.minute, second=0, microsecond=0)
    if end <= local:
        end = (local + timedelta(days=1)).replace(
            hour=quiet.end.hour, minute=quiet.end.minute, second=0, microsecond=0
        )
    # Re-resolve through the zone so a DST change inside quiet hours lands on the wall time.
    return end.replace(tzinfo=None).replace(tzinfo=zone).astimezone(due.tzinfo)


def dedupe_key(action: DeliveryAction, update_id: int, sub_id: int, revision: int = 0) -> str:
    if action in (DeliveryAction.EDIT, DeliveryAction.CORRECTION):
        return f"{action}:u{update_id}:r{revision}:s{sub_id}"
    return f"{action}:u{update_id}:s{sub_id}"


def wants(sub: Subscription, update: Update) -> bool:
    return sub.broken_reason is None and update.urgency in sub.urgencies


def split_by_audience(
    subs: Iterable[Subscription], event_platforms: Collection[str]
) -> tuple[list[Subscription], list[Subscription]]:
    """(channels that take messages for people, channels that take events for machines)."""
    people: list[Subscription] = []
    machines: list[Subscription] = []
    for sub in subs:
        (machines if sub.platform in event_platforms else people).append(sub)
    return people, machines


def _payload(event: Mapping[str, Any] | None) -> Mapping[str, object] | None:
    return None if event is None else {"event": dict(event)}


def plan_posts(
    update: Update,
    subs: Iterable[Subscription],
    now: datetime,
    *,
    event: Mapping[str, Any] | None = None,
) -> list[NewDelivery]:
    """One POST row per interested channel, due at the embargo time or now (carrying
    `event` for channels that take events)."""
    due = max(update.published_at or now, now)
    return [
        NewDelivery(
            dedupe_key=dedupe_key(DeliveryAction.POST, update.id, sub.id),
            subscription_id=sub.id,
            platform=sub.platform,
            action=DeliveryAction.POST,
            not_before=release_time(sub, update.urgency, due),
            update_id=update.id,
            revision=update.revision,
            payload=_payload(event),
        )
        for sub in subs
        if wants(sub, update)
    ]


def plan_followups(
    update: Update,
    action: DeliveryAction,
    subs: Iterable[Subscription],
    now: datetime,
    *,
    event: Mapping[str, Any] | None = None,
) -> list[NewDelivery]:
    """EDIT / CORRECTION / RETRACT rows for the channels that hold (or will hold) a copy.

    Edits in place notify nobody and go at once; a visible correction note respects quiet
    hours like the update it corrects.
    """
    rows = []
    for sub in subs:
        due = now
        if action is DeliveryAction.CORRECTION:
            due = release_time(sub, update.urgency, now)
        rows.append(
            NewDelivery(
                dedupe_key=dedupe_key(action, update.id, sub.id, update.revision),
                subscription_id=sub.id,
                platform=sub.platform,
                action=action,
                not_before=due,
                update_id=update.id,
                revision=update.revision,
                payload=_payload(event),
            )
        )
    return rows


def plan_events(
    event: Mapping[str, Any], subs: Iterable[Subscription], now: datetime, *, key: str
) -> list[NewDelivery]:
    """One EVENT row per working channel that takes events (a change with no update: a
    demand changed, a test). `key` names the change, so planning it twice queues it once."""
    return [
        NewDelivery(
            dedupe_key=f"event:{key}:s{sub.id}",
            subscription_id=sub.id,
            platform=sub.platform,
            action=DeliveryAction.EVENT,
            not_before=now,
            payload=_payload(event),
        )
        for sub in subs
        if sub.broken_reason is None
    ]
