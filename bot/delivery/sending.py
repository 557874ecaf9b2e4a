"""The send loop of one claimed row: a pacing slot, the plan rendered at the last moment, the
platform called (after looking for a copy already posted when in doubt), the outcome recorded."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from datetime import timedelta

from bot.clock import Clock
from bot.delivery.marks import KeyedLocks, Marker
from bot.delivery.meters import Meter
from bot.delivery.pacing import Pacer, Paused, Sleep
from bot.delivery.rendering import Call, Edit, Later, Renderer, Send, SendEvent, Skip
from bot.delivery.retries import Outcomes
from bot.delivery.timings import Timings
from bot.errors import PermanentDeliveryError, TransientDeliveryError
from bot.models import Delivery, Platform, Subscription, Update
from bot.plugins.outbound import Adapter, ChannelRef, EventSink, FindsSent, call_timeout
from bot.store import outbox_queries as q

log = logging.getLogger("strikebot.dispatcher")


class Sender:
    """Sends claimed rows, one task each (`deliver`). `answered(delivery)` is called as soon
    as a send returns; `marker` must be set while rows are sent."""

    def __init__(
        self,
        adapters: Mapping[Platform, Adapter],
        pacer: Callable[[Platform], Pacer],
        renderer: Renderer,
        outcomes: Outcomes,
        meter: Meter,
        clock: Clock,
        timings: Timings,
        *,
        sleep: Sleep,
        answered: Callable[[Delivery], None],
    ) -> None:
        self.adapters = adapters
        self.pacer = pacer
        self.renderer = renderer
        self.outcomes = outcomes
        self.meter = meter
        self.clock = clock
        self.timings = timings
        self.sleep = sleep
        self.answered = answered
        self.marker: Marker | None = None
        self.locks = KeyedLocks()
        self.sending: set[asyncio.Task[None]] = set()  # on the wire: stop() waits for these
        self.marked: set[str] = set()  # rows whose SENT mark is committed
        self.unrecorded: set[str] = set()  # sent, the mark not committed: back in doubt

    async def deliver(
        self,
        delivery: Delivery,
        sub: Subscription | None,
        update: Update | None,
        post: Delivery | None = None,
    ) -> None:
        if sub is None:
            await self.outcomes.settle(
                delivery, Skip("the channel was unsubscribed before it was sent")
            )
            return
        if sub.broken_reason is not None:
            reason = f"the channel is paused after a failure: {sub.broken_reason}"
            await self.outcomes.settle(delivery, Skip(reason))
            return
        channel = ChannelRef(sub.workspace, sub.channel)
        adapter = self.adapters[delivery.platform]
        pacer = self.pacer(delivery.platform)
        attempts = delivery.attempts
        in_doubt = delivery.in_doubt_since is not None
        key = None if delivery.update_id is None else (delivery.update_id, sub.id)
        async with self.locks.hold(key):
            while True:
                try:
                    async with pacer.slot(channel, max_pause=self.timings.inline_retry_limit):
                        # Rendered at the last moment, so the copy is as current as it can be.
                        plan = await self.renderer.plan(delivery, sub, update, post)
                        post = None  # a retry of this row looks at the store afresh
                        if not isinstance(plan, Send | Edit | SendEvent):
                            await self.outcomes.settle(delivery, plan)
                            return
                        task = asyncio.current_task()
                        assert task is not None
                        self.sending.add(task)  # from here on, stop() waits for the outcome
                        try:
                            outcome = await self._attempt(
                                adapter, channel, delivery, sub, plan, in_doubt=in_doubt
                            )
                        except BaseException:
                            self.sending.discard(task)
                            raise
                    # Sent: its mark is recorded with others' after the send's place in
                    # flight is given back, so the wait for the commit holds no send slot.
                    if isinstance(outcome, asyncio.Future):
                        self.answered(delivery)
                        try:
                            await self._recorded(delivery, outcome)
                        finally:
                            self.sending.discard(task)
                        return
                    self.sending.discard(task)
                    failure = outcome
                except Paused as paused:
                    # A pause longer than a row may wait here (a long Retry-After): back to
                    # the queue until it ends, rather than holding the lease all along.
                    later = self.clock() + timedelta(seconds=paused.seconds)
                    await self.outcomes.settle(delivery, Later(later))
                    return
                if failure is None:
                    return
                attempts += 1
                in_doubt = in_doubt or failure.in_doubt
                wait = await self.outcomes.failed(delivery, sub, channel, pacer, failure, attempts)
                if wait is None:
                    return
                if wait > 0:
                    await self.sleep(wait)

    async def _attempt(
        self,
        adapter: Adapter,
        channel: ChannelRef,
        delivery: Delivery,
        sub: Subscription,
        plan: Call,
        *,
        in_doubt: bool = False,
    ) -> TransientDeliveryError | asyncio.Future[None] | None:
        """One try. Returns the failure, None when the row is settled (dead), or when sent
        the future of its SENT mark (see `_recorded`).

        A new message whose earlier attempt's outcome is unknown (`in_doubt`) is first
        looked for on the platform when the adapter can (`FindsSent`): found, it is recorded
        as sent instead of posted again."""
        looks = in_doubt and isinstance(plan, Send) and isinstance(adapter, FindsSent)
        bound = call_timeout(adapter)
        send_timeout = self.timings.send_timeout
        started = time.monotonic()
        try:
            if not looks and bound is not None and bound <= send_timeout:
                # The adapter's own timeout bounds the call: no second timer for it.
                message_id = await _call(adapter, channel, delivery, plan)
            else:
                async with asyncio.timeout(send_timeout):
                    found = None
                    if looks:
                        assert isinstance(adapter, FindsSent) and isinstance(plan, Send)
                        found = await adapter.find_sent(
                            channel, delivery.id, plan.message, since=delivery.created_at
                        )
                    if found is not None:
                        log.info(
                            "delivery %s was already posted (%s); recorded, not sent again",
                            delivery.id,
                            found,
                        )
                        self.meter.stats.found += 1
                        message_id = found
                    else:
                        message_id = await _call(adapter, channel, delivery, plan)
        except PermanentDeliveryError as exc:
            # A refused send means the channel is unusable; a refused edit may only mean
            # that one message was deleted, so the channel stays subscribed.
            await self.outcomes.park_dead(
                delivery,
                sub,
                exc.reason,
                breaks=not isinstance(plan, Edit),
                tell_admins=exc.tell_admins,
            )
            return None
        except TransientDeliveryError as exc:
            return exc
        except TimeoutError:
            return TransientDeliveryError(f"no answer within {send_timeout:g} s", in_doubt=True)
        except Exception as exc:
            log.warning(
                "sending %s raised %s; retrying", delivery.id, type(exc).__name__, exc_info=True
            )
            return TransientDeliveryError(f"{type(exc).__name__}: {exc}", in_doubt=True)
        assert self.marker is not None
        self.meter.timed(delivery.platform, time.monotonic() - started)
        log.debug("delivered %s (%s) as %s", delivery.id, delivery.action, message_id)
        return self.marker.mark(q.SentMark(delivery.id, str(message_id), self.clock()))

    async def _recorded(self, delivery: Delivery, marked: asyncio.Future[None]) -> None:
        """Wait for a sent row's mark to be committed. (The future is this row's alone:
        no shield needed; a cancelled one is skipped by the marker, the mark still made.)"""
        try:
            await marked
        except Exception:
            # The message exists but is not recorded: after the lease lapses the row is sent
            # again with the same idempotency key (a no-op on Discord).
            log.exception("delivery %s was sent but could not be recorded", delivery.id)
            self.unrecorded.add(delivery.id)
            return
        self.marked.add(delivery.id)
        self.meter.count(delivery.platform, "sent")


async def _call(adapter: Adapter, channel: ChannelRef, delivery: Delivery, plan: Call) -> str:
    """The adapter call `plan` asks for; returns the platform's message id."""
    if isinstance(plan, SendEvent):
        if not isinstance(adapter, EventSink):
            raise PermanentDeliveryError(f"{adapter.platform} cannot deliver events")
        return await adapter.send_event(channel, plan.event, idempotency_key=delivery.id)
    if isinstance(plan, Send):
        return await adapter.send(channel, plan.message, idempotency_key=delivery.id)
    await adapter.edit(channel, plan.message_id, plan.message)
    return plan.message_id
