"""Claims and leases: looking for the next due row per platform, leasing due rows with what
they render (one read per update, not per row), renewing the leases held, giving them back."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.clock import Clock
from bot.delivery.leadership import Leadership
from bot.delivery.rendering import FOLLOW_UPS
from bot.models import Delivery, DeliveryAction, Platform, Subscription, Update
from bot.plugins.outbound import Adapter, edits_in_place
from bot.store import Store, Tx
from bot.store import outbox_queries as q

log = logging.getLogger("strikebot.dispatcher")

# Follow-ups that change a copy in place rather than post anything new.
IN_PLACE = frozenset({DeliveryAction.EDIT, DeliveryAction.RETRACT})


@dataclass(frozen=True, slots=True)
class Claimed:
    """A leased row with what was read for it: its channel (None: unsubscribed since), its
    update, and a follow-up's POST."""

    delivery: Delivery
    sub: Subscription | None
    update: Update | None
    post: Delivery | None


async def look(
    store: Store, platforms: list[str], now: datetime, *, count_depth: bool
) -> tuple[dict[str, datetime], dict[str, int] | None]:
    """When each platform's next row falls due (or its next lease lapses), and the queue's
    depth per platform when asked."""

    async def read(tx: Tx) -> tuple[dict[str, datetime], dict[str, int] | None]:
        due = await q.next_due_by_platform(tx, platforms=platforms, now=now)
        return due, await q.pending_counts(tx) if count_depth else None

    return await store.transact(read, write=False)


async def claim(
    store: Store,
    adapters: Mapping[Platform, Adapter],
    leads: Mapping[Platform, Leadership],
    *,
    worker: str,
    room: Mapping[Platform, int],
    now: datetime,
    lease_until: datetime,
) -> tuple[list[Claimed], list[Platform]]:
    """Lease up to `room` due rows per platform, in one transaction; returns them, and the
    platforms whose lock was found lost (nothing claimed for those)."""

    async def run(tx: Tx) -> tuple[list[Claimed], list[Platform]]:
        claimed: list[Delivery] = []
        lost: list[Platform] = []
        for platform, limit in room.items():
            lead = leads.get(platform)
            if lead is not None and not await lead.confirm(tx.conn):
                lost.append(platform)  # another instance may hold it now: claim nothing
                continue
            claimed += await q.claim(
                tx,
                worker=worker,
                platform=str(platform),
                now=now,
                lease_until=lease_until,
                limit=limit,
            )
        if not claimed:
            return [], lost
        # A copy already posted keeps receiving edits and its retraction after its
        # channel unsubscribes (`holders`): misinformation must not stay up uncorrected.
        subs, holders = await q.subscriptions_and_holders(tx, {d.subscription_id for d in claimed})
        # One read per update and one per update's POSTs for the whole round, not per
        # channel: a 10,000-channel edit costs a handful of queries, as a post does.
        updates: dict[int, Update] = {}
        for update_id in {d.update_id for d in claimed if d.update_id}:
            if (update := await tx.get_update(update_id, now)) is not None:
                updates[update_id] = update
        posts = await q.find_posts(
            tx,
            {
                (d.update_id, d.subscription_id)
                for d in claimed
                if d.action in FOLLOW_UPS and d.update_id is not None
            },
        )
        rows = []
        for d in claimed:
            pool = holders if reaches_unsubscribed(d, adapters.get(d.platform)) else subs
            key = None if d.update_id is None else (d.update_id, d.subscription_id)
            rows.append(
                Claimed(
                    d,
                    pool.get(d.subscription_id),
                    None if d.update_id is None else updates.get(d.update_id),
                    None if key is None else posts.get(key),
                )
            )
        return rows, lost

    return await store.transact(run)


def reaches_unsubscribed(delivery: Delivery, adapter: Adapter | None) -> bool:
    """An edit or retraction changes a copy in place even in a channel that unsubscribed
    since; a sign-up's confirmation goes to a person not yet subscribed. A platform that
    cannot edit sends new messages instead, and those respect unsubscribing."""
    if delivery.action is DeliveryAction.CONFIRM:
        return True
    return delivery.action in IN_PLACE and edits_in_place(adapter)


async def keep_leases(
    store: Store, clock: Clock, *, worker: str, lease: float, held: Callable[[], list[str]]
) -> None:
    """Renew the leases of the rows `held()` names every third of a lease, until cancelled."""
    while True:
        await asyncio.sleep(lease / 3)
        ids = held()
        if not ids:
            continue
        try:
            until = clock() + timedelta(seconds=lease)
            async with store.write() as tx:
                await q.renew(tx, worker=worker, ids=ids, lease_until=until)
        except Exception:
            log.exception("renewing %d leases failed; will try again", len(ids))


async def give_back(store: Store, clock: Clock, *, worker: str, unrecorded: set[str]) -> int:
    """Release every lease `worker` holds; rows sent but not recorded (`unrecorded`) go back
    in doubt, so the next attempt looks for the copy first and counts the attempt made.
    Returns how many rows not yet sent were released."""
    async with store.write() as tx:
        if unrecorded:
            await q.release(tx, worker=worker, ids=unrecorded, in_doubt=True, now=clock())
        return await q.release(tx, worker=worker)
