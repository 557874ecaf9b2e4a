"""Atom feeds read back with feedparser, calendars with icalendar: the entries people follow."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import feedparser
import icalendar
import pytest

from adapters.web._feeds import calendar_events
from adapters.web._feeds import icalendar as render_calendar
from bot.clock import FixedClock
from bot.editorial.admin import Draft
from bot.models import Status, Update, UpdateState, UpdateText, Urgency
from bot.runtime.context import PluginContext
from bot.store import Store
from tests.strike_week import (
    CORRECTION_REASON,
    MISTAKEN_VOTE,
    MONDAY_6AM,
    RETRACTION_REASON,
    Week,
    la,
    strike_week,
)
from tests.support import ADMIN, CAMPAIGN
from tests.web_support import client_for, web_context


@pytest.fixture
async def runtime(store: Store, clock: FixedClock) -> PluginContext:
    return web_context(store, clock)


@pytest.fixture
async def timeline(runtime: PluginContext, clock: FixedClock) -> Week:
    return await strike_week(runtime.store, clock, runtime.admin)


async def fetch(runtime: PluginContext, path: str) -> tuple[bytes, str]:
    async with client_for(runtime) as client:
        response = await client.get(path)
        assert response.status == 200, path
        return await response.read(), response.headers["Content-Type"]


async def test_atom_feed_has_every_public_update(runtime: PluginContext, timeline: Week) -> None:
    body, content_type = await fetch(runtime, "/feed.atom")
    assert content_type == "application/atom+xml; charset=utf-8"
    feed = feedparser.parse(body)
    assert feed.bozo == 0, feed.get("bozo_exception")
    assert feed.version == "atom10"
    assert feed.feed.title == "United Teachers Los Angeles: strike updates"
    assert feed.feed.language == "en"
    assert feed.feed.updated_parsed[:5] == (2019, 1, 18, 17, 30)
    titles = [e.title for e in feed.entries]
    assert titles == [
        "Retracted: Deal reached!",
        "Day 5: no deal yet. The strike continues; talks go on through the weekend (Corrected)",
        "Day 4: only a third of students in class as talks resume",
        "The strike is on: 30,000 LA teachers walk out",
    ]
    retracted, friday, _, began = feed.entries
    assert friday.id == f"https://strike.example.org/updates/{timeline.friday.id}"
    assert friday.link == f"https://strike.example.org/updates/{timeline.friday.id}"
    assert friday.published_parsed[:5] == (2019, 1, 18, 17, 0)
    assert friday.updated_parsed[:5] == (2019, 1, 18, 17, 30)
    assert friday.tags[0].term == "strike_on"
    content = friday.content[0].value
    assert "If there is no deal, the strike resumes Monday, January 21 at 6:00 AM." in content
    assert CORRECTION_REASON in content
    assert "<del>" in retracted.content[0].value
    assert RETRACTION_REASON in retracted.content[0].value
    assert retracted.updated_parsed[:5] == (2019, 1, 18, 17, 20)  # when it was retracted
    assert "the first strike in the district in 30 years" in began.content[0].value


async def test_spanish_atom_feed(runtime: PluginContext, timeline: Week) -> None:
    body, _ = await fetch(runtime, "/es/feed.atom")
    feed = feedparser.parse(body)
    assert feed.bozo == 0
    assert feed.feed.language == "es"
    assert feed.feed.title == "United Teachers Los Angeles: noticias de la huelga"
    assert [e.title for e in feed.entries] == [
        "Retirada: ¡Hay acuerdo!",
        "Día 5: aún no hay acuerdo. La huelga continúa; se negocia todo el fin de semana "
        "(Corregida)",
        "Día 4: solo un tercio de los estudiantes en clase; se reanudan las negociaciones",
        "Comienza la huelga: 30,000 maestros de Los Ángeles salen a las calles",
    ]
    assert feed.entries[1].link == f"https://strike.example.org/es/updates/{timeline.friday.id}"


async def test_feeds_leave_out_unpublished_updates(
    runtime: PluginContext, clock: FixedClock, timeline: Week
) -> None:
    await runtime.admin.post(
        ADMIN,
        Draft(
            Status.STRIKE_SUSPENDED,
            {"en": UpdateText("Embargoed: strike suspended", next_step="Vote on Tuesday")},
            next_step_at=la(2019, 1, 22, 18),
        ),
        publish_at=la(2019, 1, 22, 9),
    )
    atom, _ = await fetch(runtime, "/feed.atom")
    ics, _ = await fetch(runtime, "/calendar.ics")
    assert len(feedparser.parse(atom).entries) == 4
    assert b"Embargoed" not in atom and b"Vote on Tuesday" not in ics


async def test_calendar_has_next_steps_and_cancels_retracted_ones(
    runtime: PluginContext, timeline: Week
) -> None:
    body, content_type = await fetch(runtime, "/calendar.ics")
    assert content_type == "text/calendar; charset=utf-8"
    assert body.endswith(b"\r\n") and all(len(line) <= 75 for line in body.split(b"\r\n"))
    calendar = icalendar.Calendar.from_ical(body)
    assert str(calendar["X-WR-CALNAME"]) == "United Teachers Los Angeles: strike calendar"
    events = calendar.walk("VEVENT")
    assert [e.decoded("DTSTART") for e in events] == [
        la(2019, 1, 14, 7), la(2019, 1, 18, 7), MISTAKEN_VOTE, MONDAY_6AM
    ]  # fmt: skip
    *_, vote, monday = events
    assert str(monday["SUMMARY"]) == (
        "If there is no deal, the strike resumes Monday, January 21 at 6:00 AM."
    )
    assert str(monday["STATUS"]) == "CONFIRMED"
    assert str(monday["URL"]) == f"https://strike.example.org/updates/{timeline.friday.id}"
    assert monday.decoded("DTSTART") - la(2019, 1, 18, 10) == timedelta(days=2, hours=20)
    assert "Day 5: no deal yet" in str(monday["DESCRIPTION"])
    assert str(vote["STATUS"]) == "CANCELLED"
    assert str(vote["SUMMARY"]) == "Retracted: Members vote on the agreement Saturday"
    assert RETRACTION_REASON in str(vote["DESCRIPTION"])
    assert str(vote["UID"]) != str(monday["UID"])


async def test_spanish_calendar(runtime: PluginContext, timeline: Week) -> None:
    body, _ = await fetch(runtime, "/es/calendar.ics")
    events = icalendar.Calendar.from_ical(body).walk("VEVENT")
    assert str(events[3]["SUMMARY"]) == (
        "Si no hay acuerdo, la huelga se reanuda el lunes 21 de enero a las 6:00."
    )
    assert str(events[2]["SUMMARY"]) == "Retirada: Los miembros votan el acuerdo el sábado"


async def test_a_later_update_describes_the_same_moment(
    runtime: PluginContext, clock: FixedClock, timeline: Week
) -> None:
    """Two updates naming Monday 6:00 make one event, worded by the newer one."""
    clock.advance(hours=2)
    await runtime.admin.post(
        ADMIN,
        Draft(
            Status.TALKS_SCHEDULED,
            {"en": UpdateText("Talks stall", next_step="Picket lines at 6:00 AM Monday")},
            Urgency.URGENT,
            next_step_at=MONDAY_6AM,
        ),
    )
    body, _ = await fetch(runtime, "/calendar.ics")
    events = icalendar.Calendar.from_ical(body).walk("VEVENT")
    monday = [e for e in events if e.decoded("DTSTART") == MONDAY_6AM]
    assert len(monday) == 1
    assert str(monday[0]["SUMMARY"]) == "Picket lines at 6:00 AM Monday"
    assert int(str(monday[0]["SEQUENCE"])) == 2  # one edit + one more update since first published


def test_calendar_text_survives_escaping_and_folding() -> None:
    tricky = "Rally; march, then picket — café \\ 日本語 " + "long " * 40 + "\nsecond line"
    at = datetime(2019, 1, 19, 20, 0, tzinfo=UTC)
    update = Update(
        id=7,
        status=Status.STRIKE_ON,
        urgency=Urgency.ROUTINE,
        texts={"en": UpdateText("Weekend action\x07", next_step=tricky)},
        author="t",
        created_at=at,
        state=UpdateState.PUBLISHED,
        next_step_at=at,
        published_at=at,
    )
    body = render_calendar(calendar_events([update]), CAMPAIGN, "en")
    assert all(len(line) <= 75 for line in body.split(b"\r\n"))
    event = icalendar.Calendar.from_ical(body).walk("VEVENT")[0]
    assert str(event["SUMMARY"]) == tricky
    assert str(event["DESCRIPTION"]).startswith("Weekend action\n\n")  # control char dropped
