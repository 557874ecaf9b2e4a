"""Telling admins about dead deliveries: a NOTICE to every admin channel
(`[delivery] admin_channels`) saying what could not be delivered where, and how to retry it.
The dispatcher queues these in the same transaction that parks the row as DEAD."""

from __future__ import annotations

import logging
from datetime import datetime

from bot import i18n
from bot.config import DeliverySection
from bot.messages.compose import notice_message
from bot.models import Delivery, DeliveryAction, Subscription
from bot.plugins.addresses import find_address
from bot.store import NewDelivery, Tx

log = logging.getLogger("strikebot.dispatcher")

_NOTICE_WORDS = i18n.Words("notices")


async def admin_subscriptions(tx: Tx, settings: DeliverySection) -> list[Subscription]:
    """The working subscriptions named by `[delivery] admin_channels`."""
    found = []
    for address in settings.admin_channels:
        parsed = find_address(address)
        if parsed is None:
            log.warning(
                "ignoring admin channel %r: write it as platform:workspace/channel", address
            )
            continue
        sub = await tx.find_subscription(parsed.platform, parsed.workspace, parsed.channel)
        if sub is not None and sub.broken_reason is None:
            found.append(sub)
    return found


def dead_delivery_notices(
    admin_subs: list[Subscription],
    delivery: Delivery,
    sub: Subscription,
    reason: str,
    broke: bool,
    now: datetime,
) -> list[NewDelivery]:
    """One NOTICE per admin channel (but the dead one's own) saying what died and how to retry.

    A notice that gave up says nothing more: with admin channels on a failing platform, each
    dead notice would queue notices to the others, which die in turn, multiplying while the
    outage lasts. A notice whose channel broke is still reported (broken channels get none)."""
    if delivery.action is DeliveryAction.NOTICE and not broke:
        return []
    rows = []
    for admin in admin_subs:
        if admin.id == sub.id:
            continue
        words = _NOTICE_WORDS[admin.language]
        kind = "update" if delivery.action is DeliveryAction.POST else str(delivery.action)
        what = words[kind].format(n=delivery.update_id)
        fill = {"address": sub.address, "what": what, "reason": reason, "id": delivery.id}
        title = words["broken_title" if broke else "failed_title"].format(**fill)
        body = words["broken_body" if broke else "failed_body"].format(**fill)
        message = notice_message(title, body, admin.language)
        rows.append(
            NewDelivery(
                dedupe_key=f"notice:dead:{delivery.id}:s{admin.id}",
                subscription_id=admin.id,
                platform=admin.platform,
                action=DeliveryAction.NOTICE,
                not_before=now,
                payload={"message": message.to_json()},
            )
        )
    return rows


async def queue_dead_notices(
    tx: Tx,
    settings: DeliverySection,
    delivery: Delivery,
    sub: Subscription,
    reason: str,
    broke: bool,
    now: datetime,
) -> None:
    """Queue the admin channels' notices that `delivery` (to `sub`) is dead."""
    admins = await admin_subscriptions(tx, settings)
    await tx.enqueue(dead_delivery_notices(admins, delivery, sub, reason, broke, now), now)
