"""What happens to a channel when the platform refuses a delivery for good.

The dispatcher decides *that* a delivery is dead (a permanent refusal, or too many failed
attempts); this use case decides what follows for the channel and who hears of it, in the
same transaction as the dead row:

- a refused *send* means the channel itself is unusable (no access, deleted, archived): the
  subscription is paused (`broken_reason`), its other queued copies are cancelled so
  nothing more goes there, the pause is audited, and the admins are told once;
- a refused edit, or a copy that gave up after its retries, leaves the channel as it is;
  the admins are told about that copy.

`strikebot deliveries retry` lifts the pause once the cause is fixed.
"""

from __future__ import annotations

from datetime import datetime

from bot.config import DeliverySection
from bot.delivery.notices import queue_dead_notices
from bot.models import Delivery, Subscription
from bot.store import Tx

ACTOR = "strikebot:dispatcher"


async def delivery_refused(
    tx: Tx,
    settings: DeliverySection,
    delivery: Delivery,
    sub: Subscription,
    reason: str,
    *,
    breaks: bool,
    tell_admins: bool = True,
    now: datetime,
) -> None:
    """Apply the policy above; `breaks`: the refusal says the channel is unusable;
    `tell_admins=False`: the platform says the failure is one person's (a bounced address),
    which admins see as counts, not as a notice each."""
    if breaks:
        current = await tx.get_subscription(sub.id)
        if current is None or current.broken_reason is not None:
            return  # already paused: the admins heard the first time
        await tx.mark_subscription_broken(sub.id, reason)
        cancelled = await tx.cancel_pending(subscription_id=sub.id)
        await tx.audit(
            now,
            ACTOR,
            "subscription.broken",
            f"subscription:{sub.id}",
            None,
            {"reason": reason, "delivery": delivery.id, "cancelled": cancelled},
        )
    if tell_admins:
        await queue_dead_notices(tx, settings, delivery, sub, reason, breaks, now)
