"""Which outbox rows an admin action creates, and when each may go out: pure functions.

Urgent updates go out at once; routine and important ones wait out a channel's quiet hours.
An embargoed update's rows are due at its publish time.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
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


def plan_posts(update: Update, subs: Iterable[Subscription], now: datetime) -> list[NewDelivery]:
    """One POST row per interested channel, due at the embargo time or now."""
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
        )
        for sub in subs
        if wants(sub, update)
    ]


def plan_followups(
    update: Update,
    action: DeliveryAction,
    subs: Iterable[Subscription],
    now: datetime,
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
            )
        )
    return rows
