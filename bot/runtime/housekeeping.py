"""What the store forgets once nobody needs it: the ids of handled chat events (kept a day
so a platform's retry is recognised), drafts abandoned in a form, and web desk sign-in
links and sessions that ended (`bot.people.sign_in`). One task per process;
several instances each running it only delete the same rows."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import timedelta

from bot.clock import Clock
from bot.people.sign_in import SignInLimits, forget_old_access
from bot.store import Store

log = logging.getLogger(__name__)

KEEP = timedelta(days=1)
EVERY = 3600.0  # seconds between rounds


async def forget_old(store: Store, clock: Clock) -> None:
    """One round: forget handled-event ids and drafts older than `KEEP`, and the web desk's
    old sign-in links and ended sessions."""
    now = clock()
    cutoff = now - KEEP
    async with store.write() as tx:
        await tx.forget_events_before(cutoff)
        await tx.forget_drafts(cutoff)
    await forget_old_access(store, now, SignInLimits())


async def keep_house(store: Store, clock: Clock, stop: asyncio.Event) -> None:
    """Run a round every `EVERY` seconds until `stop` is set; a failed round is logged and
    tried again at the next."""
    while not stop.is_set():
        try:
            await forget_old(store, clock)
        except Exception:
            log.exception("forgetting old handled events and drafts failed; trying again later")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), EVERY)
