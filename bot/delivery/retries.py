"""What becomes of a row that was not simply sent: settled (cancelled, postponed, dead, with
what follows for its channel), or a transient failure retried with backoff and full jitter."""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from datetime import timedelta

from bot.clock import Clock
from bot.config import DeliverySection
from bot.delivery.meters import Meter
from bot.delivery.pacing import Pacer, backoff_delay
from bot.delivery.refusals import delivery_refused
from bot.delivery.rendering import Dead, Later, Skip
from bot.delivery.timings import Timings
from bot.errors import TransientDeliveryError
from bot.models import Delivery, DeliveryState, Subscription
from bot.plugins.outbound import ChannelRef
from bot.store import Store
from bot.store import outbox_queries as q

log = logging.getLogger("strikebot.dispatcher")


class Outcomes:
    """Records outcomes other than SENT for one dispatcher (`worker`)."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        settings: DeliverySection,
        timings: Timings,
        meter: Meter,
        *,
        worker: str,
        rng: random.Random,
        stopping: Callable[[], bool],
    ) -> None:
        self.store = store
        self.clock = clock
        self.settings = settings
        self.timings = timings
        self.meter = meter
        self.worker = worker
        self.rng = rng
        self.stopping = stopping

    async def settle(self, delivery: Delivery, plan: Skip | Later | Dead) -> None:
        """Finish a row that needs no send: nothing to do, not yet, or unsendable."""
        stats = self.meter.stats
        async with self.store.write() as tx:
            if isinstance(plan, Later):
                await q.postpone(
                    tx, worker=self.worker, delivery_id=delivery.id, not_before=plan.not_before
                )
                stats.postponed += 1
                return
            dead = isinstance(plan, Dead)
            if dead:
                log.error("delivery %s is unsendable: %s", delivery.id, plan.reason)
            await q.settle(
                tx,
                worker=self.worker,
                delivery_id=delivery.id,
                state=DeliveryState.DEAD if dead else DeliveryState.CANCELLED,
                reason=plan.reason,
            )
        if dead:
            self.meter.count(delivery.platform, "dead")
        else:
            stats.cancelled += 1
            log.info("delivery %s cancelled: %s", delivery.id, plan.reason)

    async def park_dead(
        self,
        delivery: Delivery,
        sub: Subscription,
        reason: str,
        *,
        breaks: bool,
        tell_admins: bool = True,
    ) -> None:
        """DEAD with its reason, and what follows for the channel (`bot.delivery.refusals`); admins
        are told unless the adapter said the failure is one person's (`tell_admins=False`)."""
        now = self.clock()
        async with self.store.write() as tx:
            settled = await q.settle(
                tx,
                worker=self.worker,
                delivery_id=delivery.id,
                state=DeliveryState.DEAD,
                reason=reason,
                count_attempt=True,
            )
            if not settled:
                log.warning("lost the lease on %s before recording: %s", delivery.id, reason)
                return
            await delivery_refused(
                tx,
                self.settings,
                delivery,
                sub,
                reason,
                breaks=breaks,
                tell_admins=tell_admins,
                now=now,
            )
        self.meter.count(delivery.platform, "dead")
        log.warning(
            "delivery %s (%s) to %s is dead: %s%s",
            delivery.id,
            delivery.action,
            sub.address,
            reason,
            "; channel paused" if breaks else "",
        )

    async def failed(
        self,
        delivery: Delivery,
        sub: Subscription,
        channel: ChannelRef,
        pacer: Pacer,
        failure: TransientDeliveryError,
        attempts: int,
    ) -> float | None:
        """Record a transient failure. Returns how long to wait before retrying here, or None
        when the caller is done with the row (dead, or back in the queue for later)."""
        if failure.retry_after is not None:
            if failure.is_global:
                pacer.pause_global(failure.retry_after)
            else:
                pacer.pause_channel(channel, failure.retry_after)
        if attempts >= self.settings.max_attempts:
            reason = f"gave up after {attempts} attempts; last error: {failure.reason}"
            await self.park_dead(delivery, sub, reason, breaks=False)
            return None
        t = self.timings
        if failure.retry_after is not None:
            delay = failure.retry_after
        else:
            delay = backoff_delay(attempts, self.rng, base=t.retry_base, cap=t.retry_cap)
        inline = delay <= t.inline_retry_limit and not self.stopping()
        now = self.clock()
        async with self.store.write() as tx:
            recorded = await q.record_failure(
                tx,
                worker=self.worker,
                delivery_id=delivery.id,
                reason=failure.reason,
                lease_until=now + timedelta(seconds=t.lease),
                retry_at=None if inline else now + timedelta(seconds=delay),
                in_doubt_since=now if failure.in_doubt else None,
            )
        if recorded is None:
            log.warning("lost the lease on %s; another dispatcher has it", delivery.id)
            return None
        self.meter.count(delivery.platform, "retried")
        log.info(
            "delivery %s to %s failed (%s); retry %d in %.2f s",
            delivery.id,
            sub.address,
            failure.reason,
            attempts,
            delay,
        )
        if not inline:
            self.meter.stats.postponed += 1
            return None
        # After a 429 the paused bucket makes the next acquire() wait; no extra sleep.
        return 0.0 if failure.retry_after is not None else delay
