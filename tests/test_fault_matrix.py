"""Issue 11's fault matrix: every installed delivery plugin, through its real client library
against its fake, meets every failure shape its platform has (`tests/faults.py`), once, on
one send; the dispatcher must retry it and deliver it exactly once, record the right error,
pause what the platform asked to pause, and never crash.

Time: the dispatcher's pacing runs on `VirtualTime`, the outbox on a `FixedClock`; between
the two passes both move on ten minutes, past any Retry-After or backoff. Only hangs cost
real time (each adapter's own request timeout, `fault_rigs.REQUEST_TIMEOUT`).
"""

from __future__ import annotations

import logging
import random
import re
from pathlib import Path

import pytest

from bot.clock import FixedClock
from bot.config import DeliverySection
from bot.delivery.dispatcher import Dispatcher, Timings
from bot.editorial.admin import Draft
from bot.models import DeliveryAction, DeliveryState, Status, UpdateText, Urgency
from bot.plugins import installed_plugins
from bot.plugins.admins import CLI_ACTOR
from bot.store import Store
from tests.fault_rigs import HANG_TIMEOUT, HEADLINE, PATIENT, RIGS, Rig
from tests.faults import EXPECTED, NOT_APPLICABLE, NOT_THERE, Cell, How, Shape, render
from tests.support import ROOT
from tests.virtual_time import VirtualTime

CELLS = [(platform, shape) for platform, cells in EXPECTED.items() for shape in cells]


def test_every_installed_delivery_plugin_is_in_the_matrix() -> None:
    delivering = {
        name for name, plugin in installed_plugins().items() if plugin.delivers or plugin.events
    }
    assert delivering == set(EXPECTED) | set(NOT_APPLICABLE)
    assert set(RIGS) == set(EXPECTED)
    for platform, cells in EXPECTED.items():
        # Every shape is either checked or said not to exist on that platform.
        assert set(cells) | set(NOT_THERE.get(platform, {})) == set(Shape), platform


def test_docs_faults_md_is_the_matrix() -> None:
    assert (ROOT / "docs" / "faults.md").read_text(encoding="utf-8") == render(), (
        "docs/faults.md is out of date: python -m tests.faults > docs/faults.md"
    )


@pytest.mark.parametrize(("platform", "shape"), CELLS, ids=[f"{p}-{s.name}" for p, s in CELLS])
async def test_a_fault_is_retried_and_delivered_exactly_once(
    platform: str,
    shape: Shape,
    sqlite_store: Store,
    clock: FixedClock,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    expected = EXPECTED[platform][shape]
    timeout = HANG_TIMEOUT if shape is Shape.HANG else PATIENT
    vt = VirtualTime()
    async with RIGS[platform](sqlite_store, clock, tmp_path, timeout, vt) as rig:
        dispatcher = Dispatcher(
            rig.store,
            {rig.platform: rig.adapter},
            rig.admin.campaign,
            clock,
            settings=DeliverySection(max_attempts=5),
            worker_id="fault-matrix",
            rng=random.Random(11),
            monotonic=vt,
            sleep=vt.sleep,
            # inline_retry_limit=0: every retry goes back to the queue: observable
            timings=Timings(inline_retry_limit=0.0, send_timeout=10.0),
        )
        rig.inject(shape)
        update = await rig.admin.post(
            CLI_ACTOR,
            Draft(
                Status.STRIKE_ON, {"en": UpdateText(HEADLINE, "Picket at 6:30.")}, Urgency.URGENT
            ),
        )
        with caplog.at_level(logging.INFO, logger="strikebot.dispatcher"):
            await dispatcher.drain()
            first = await post_row(rig, update.id)
            paused = pauses(dispatcher, rig, first.subscription_id)

            clock.advance(minutes=10)
            vt.advance(600)
            await dispatcher.drain()
            final = await post_row(rig, update.id)

        observed = describe(first, paused)
        import os

        if os.environ.get("FAULTS_OBSERVE"):
            print(
                "OBSERVED", platform, shape.name, observed, final.state, rig.copies(), rig.sends()
            )
            return
        assert observed_matches(observed, expected), (platform, shape, observed)
        assert final.state is DeliveryState.SENT, final
        assert rig.copies() == expected.copies, "lost or doubled"
        if expected.copies > 1 and rig.ids is not None:  # e-mail's window: one Message-ID
            assert len(set(rig.ids())) == 1
        crashed = [r for r in caplog.records if "crashed" in r.getMessage()]
        assert crashed == []


# An edit is the same whether it is done once or twice: a lost answer to one is a timeout.
EDITS = [
    (p, s)
    for p, s in CELLS
    if p in ("discord", "slack", "telegram") and s is not Shape.ACCEPTED_LOST
]


@pytest.mark.parametrize(("platform", "shape"), EDITS, ids=[f"{p}-{s.name}" for p, s in EDITS])
async def test_a_fault_on_the_retraction_never_leaves_the_copy_standing(
    platform: str,
    shape: Shape,
    sqlite_store: Store,
    clock: FixedClock,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Issue 11's first finding was a copy left unretracted. Here the copy is up, and the
    edit that retracts it meets the fault: the retraction is retried until the copy reads as
    retracted, in place (one message), and nothing crashes."""
    timeout = HANG_TIMEOUT if shape is Shape.HANG else PATIENT
    vt = VirtualTime()
    async with RIGS[platform](sqlite_store, clock, tmp_path, timeout, vt) as rig:
        assert rig.inject_edit and rig.retracted and rig.unmet
        dispatcher = Dispatcher(
            rig.store,
            {rig.platform: rig.adapter},
            rig.admin.campaign,
            clock,
            settings=DeliverySection(max_attempts=5),
            worker_id="fault-matrix",
            rng=random.Random(11),
            monotonic=vt,
            sleep=vt.sleep,
            timings=Timings(inline_retry_limit=0.0, send_timeout=10.0),
        )
        update = await rig.admin.post(
            CLI_ACTOR,
            Draft(
                Status.STRIKE_ON, {"en": UpdateText(HEADLINE, "Picket at 6:30.")}, Urgency.URGENT
            ),
        )
        await dispatcher.drain()
        assert rig.copies() == 1 and not rig.retracted()
        rig.inject_edit(shape)
        await rig.admin.retract(CLI_ACTOR, update.id, reason="Posted by mistake")
        with caplog.at_level(logging.INFO, logger="strikebot.dispatcher"):
            for _ in range(3):  # at most a few passes, ten minutes apart
                await dispatcher.drain()
                if rig.retracted():
                    break
                clock.advance(minutes=10)
                vt.advance(600)
        assert rig.unmet() == 0, "the edit never met the fault"
        assert rig.retracted(), "the copy is still standing"
        assert rig.copies() == 1
        async with rig.store.read() as tx:
            rows = await tx.list_deliveries(update_id=update.id, limit=None)
        (retract,) = [r for r in rows if r.action is DeliveryAction.RETRACT]
        assert retract.state is DeliveryState.SENT
        assert [r for r in caplog.records if "crashed" in r.getMessage()] == []


async def post_row(rig: Rig, update_id: int):  # type: ignore[no-untyped-def]
    async with rig.store.read() as tx:
        rows = await tx.list_deliveries(update_id=update_id, limit=None)
    (row,) = [r for r in rows if r.action is DeliveryAction.POST and r.platform == rig.platform]
    return row


def pauses(dispatcher: Dispatcher, rig: Rig, subscription_id: int) -> tuple[bool, bool]:
    """(this channel paused, the whole platform paused) on the dispatcher's pacer now."""
    pacer = dispatcher.pacer(rig.platform)
    now = dispatcher.monotonic()
    channel_paused = any(b.paused(now) for b in pacer.channel_buckets())
    return channel_paused, pacer.global_bucket.paused(now)


def describe(row, paused: tuple[bool, bool]) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    if row.state is DeliveryState.SENT:
        return (str(How.LIBRARY), "")
    assert row.state is DeliveryState.PENDING and row.attempts == 1, row
    channel, everything = paused
    how = How.PAUSED_ALL if everything else How.PAUSED if channel else How.QUEUED
    return (str(how), row.last_error or "")


def observed_matches(observed: tuple[str, str], expected: Cell) -> bool:
    how, error = observed
    if how != str(expected.how):
        return False
    return re.search(expected.error, error) is not None if expected.error else error == ""
