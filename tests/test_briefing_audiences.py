"""Briefings per audience, on SQLite and PostgreSQL: an update for some sites or groups is in
the briefing of exactly the channels and people the delivery's rule sends it to (followers
of the site, of its group, of everything), composed once per language and distinct answer,
queued once; the preview says what differs per audience."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Any

import pytest
from sqlalchemy import select

from bot.audiences import Sites, read_sites_csv
from bot.briefings.overview import briefing_audiences, briefing_preview
from bot.briefings.runs import Due, Outcome, queue_briefings, queue_schedule, send_now
from bot.briefings.times import BriefingSlot, Schedule
from bot.clock import FixedClock
from bot.editorial.admin import Admin, Draft
from bot.models import EVERYONE, Audience, DeliveryAction, Status, Subscription, UpdateText
from bot.ports import OutboundMessage
from bot.store import Store
from bot.store import schema as t
from tests.support import ADMIN, ADMINS, CAMPAIGN, ROOT

SLOT = BriefingSlot(datetime(2019, 1, 19, 7, 0, tzinfo=UTC), date(2019, 1, 19))
NOW = SLOT.at + timedelta(seconds=1)
GRACE = timedelta(hours=2)
HEADLINES = {
    "everyone": "The strike continues",
    "roosevelt": "Roosevelt: breakfast at the north gate",
    "east": "East district rally at noon",
}
# channel -> (language, what it follows, the targeted headlines its briefing tells)
CHANNELS: dict[str, tuple[str, Audience, set[str]]] = {
    "everything": ("en", EVERYONE, {"roosevelt", "east"}),
    "roosevelt": ("en", Audience.of(["roosevelt"]), {"roosevelt", "east"}),
    "roosevelt-es": ("es", Audience.of(["roosevelt"]), {"roosevelt", "east"}),
    "east": ("en", Audience.of([], ["east"]), {"roosevelt", "east"}),
    "venice": ("en", Audience.of(["venice"]), set()),
    "west": ("en", Audience.of([], ["west"]), set()),
    "grant": ("en", Audience.of(["grant"]), set()),
    "venice-and-roosevelt": ("en", Audience.of(["venice", "roosevelt"]), {"roosevelt", "east"}),
}


@pytest.fixture
async def setup(store: Store, admin: Admin, clock: FixedClock) -> dict[str, int]:
    """The LAUSD sites, a channel per follow-set with a 07:00 UTC briefing, and three
    updates on Friday evening: for everyone, for Roosevelt, for the east district."""
    text = (ROOT / "config" / "lausd-sites.csv").read_text(encoding="utf-8")
    await Sites(store, ADMINS, clock).import_file(ADMIN, read_sites_csv(text, ("en", "es"), "en"))
    ids: dict[str, int] = {}
    for channel, (language, follows, _) in CHANNELS.items():
        sub = await admin.subscribe(
            ADMIN,
            Subscription(0, "console", "local", channel, language, briefing_time=time(7, 0),
                         timezone="UTC", follows=follows),
        )  # fmt: skip
        ids[channel] = sub.id
    for key, audience in (
        ("everyone", EVERYONE),
        ("roosevelt", Audience.of(["roosevelt"])),
        ("east", Audience.of([], ["east"])),
    ):
        clock.advance(minutes=10)
        draft = Draft(Status.STRIKE_ON, {"en": UpdateText(HEADLINES[key])}, audience=audience)
        ids[f"update:{key}"] = (await admin.post(ADMIN, draft)).id
    clock.now = NOW
    return ids


async def briefings(store: Store) -> dict[int, tuple[OutboundMessage, int | None]]:
    """Each channel's queued briefing (its own payload or the shared one it names)."""
    async with store.read() as tx:
        rows = (
            await tx.conn.execute(
                select(t.deliveries).where(t.deliveries.c.action == str(DeliveryAction.BRIEFING))
            )
        ).all()
        shared = {r.id: r.payload for r in await tx.conn.execute(select(t.shared_payloads))}
    found = {}
    for row in rows:
        payload: Any = row.payload if row.payload is not None else shared[row.shared_payload_id]
        found[row.subscription_id] = (
            OutboundMessage.from_json(payload["message"]),
            row.shared_payload_id,
        )
    return found


def told(message: OutboundMessage) -> set[str]:
    return {key for key, headline in HEADLINES.items() if headline in message.body}


async def recipients(store: Store, update_id: int) -> set[int]:
    async with store.read() as tx:
        rows = await tx.list_deliveries(update_id=update_id, limit=None)
    return {d.subscription_id for d in rows if d.action is DeliveryAction.POST}


def check(ids: dict[str, int], found: dict[int, tuple[OutboundMessage, int | None]]) -> None:
    assert set(found) == {ids[c] for c in CHANNELS}
    for channel, (language, _, expected) in CHANNELS.items():
        message, _ = found[ids[channel]]
        assert message.language == language
        assert told(message) == {"everyone", *expected}, channel


async def test_a_schedule_tells_each_audience_its_news_composed_once_per_answer(
    store: Store, setup: dict[str, int]
) -> None:
    schedule = Schedule.of(
        Subscription(0, "x", "x", "x", "en", briefing_time=time(7, 0), timezone="UTC")
    )
    assert schedule is not None
    outcomes = await queue_schedule(store, CAMPAIGN, schedule, SLOT, NOW, grace=GRACE, page_size=3)
    assert set(outcomes.values()) == {Outcome.QUEUED}
    found = await briefings(store)
    check(setup, found)
    # The briefing's rule is the delivery's: whose briefing tells the Roosevelt update got it.
    for key in ("roosevelt", "east"):
        telling = {i for i, (message, _) in found.items() if key in told(message)}
        assert telling == await recipients(store, setup[f"update:{key}"])
    # One composition per language and distinct answer (en: all, en: none; es: all), stored
    # once per run however many pages name it.
    assert len({shared for _, shared in found.values()}) == 3
    async with store.read() as tx:
        assert len((await tx.conn.execute(select(t.shared_payloads))).all()) == 3
    # Queued once: firing again queues nothing.
    again = await queue_schedule(store, CAMPAIGN, schedule, SLOT, NOW, grace=GRACE, page_size=3)
    assert set(again.values()) == {Outcome.DUPLICATE}
    assert len(await briefings(store)) == len(CHANNELS)


async def test_channels_queued_one_by_one_and_send_now_tell_their_audience_too(
    store: Store, admin: Admin, setup: dict[str, int]
) -> None:
    due = [Due(setup[c], SLOT) for c in CHANNELS]
    outcomes = await queue_briefings(store, CAMPAIGN, due, NOW, grace=GRACE)
    assert set(outcomes.values()) == {Outcome.QUEUED}
    found = await briefings(store)
    check(setup, found)
    assert all(shared is None for _, shared in found.values())  # their own payloads
    async with store.read() as tx:
        venice = await tx.get_subscription(setup["venice"])
        east = await tx.get_subscription(setup["east"])
    assert venice is not None and east is not None
    for sub, expected in ((venice, set()), (east, {"roosevelt", "east"})):
        delivery_id = await send_now(store, CAMPAIGN, sub, NOW, ADMIN)
        async with store.read() as tx:
            [row] = (
                await tx.conn.execute(select(t.deliveries).where(t.deliveries.c.id == delivery_id))
            ).all()
        assert told(OutboundMessage.from_json(row.payload["message"])) == {"everyone", *expected}


async def test_the_preview_says_what_differs_per_audience(
    store: Store, setup: dict[str, int]
) -> None:
    message = await briefing_preview(store, CAMPAIGN, NOW, "en", at=time(7, 0))
    assert told(message) == set(HEADLINES)  # a channel that follows everything
    lines = await briefing_audiences(store, CAMPAIGN, NOW, at=time(7, 0))
    assert [line.update.id for line in lines] == [setup["update:roosevelt"], setup["update:east"]]
    assert [line.reached for line in lines] == [5, 5]
    assert {line.scheduled for line in lines} == {len(CHANNELS)}
    assert lines[0].sentence("en", "en") == (
        "Only in the briefing of whoever follows Roosevelt High School or everything (5 of the "
        "8 with a briefing): Roosevelt: breakfast at the north gate"
    )
    assert (
        lines[1]
        .sentence("es", "en")
        .startswith(
            "Solo en el resumen de quien sigue Distrito Local Este o todo (5 de 8 con resumen): "
        )
    )
    # Nothing for some sites in the window: nothing differs.
    later = NOW + timedelta(days=2)
    assert await briefing_audiences(store, CAMPAIGN, later, at=time(7, 0)) == []
