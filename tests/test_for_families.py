"""For families: the answers a parent needs first (is the strike on today, are schools
open, meals, where to ask) from the campaign file, at the top of the page in both
languages, in the morning briefing on strike days and in /strike status; and dates that
carry their year when it is not the current one."""

from __future__ import annotations

import dataclasses
from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

from bot import i18n
from bot.briefings.compose import compose_briefing
from bot.clock import FixedClock
from bot.commands import CommandContext
from bot.config import FamiliesSection
from bot.messages.families import family_answers
from bot.models import CampaignKind, Status, Subscription, Update, UpdateState, UpdateText, Urgency
from bot.store import Store
from tests.strike_week import strike_week
from tests.support import CAMPAIGN, FRIDAY, MEMBER, plugin_ctx, shipped_config
from tests.web_support import client_for, parse_html, web_context

FAMILIES = FamiliesSection(
    schools_open=True,
    schools={"en": "Substitutes keep every school open.", "es": "Suplentes mantienen abiertas "
             "todas las escuelas."},
    meals={"en": "Breakfast and lunch as usual."},
    ask={"en": "Your school's office.", "es": "La oficina de tu escuela."},
).to_families(CampaignKind.SCHOOL)  # fmt: skip
WITH_FAMILIES = dataclasses.replace(CAMPAIGN, families=FAMILIES)


def update(status: Status) -> Update:
    return Update(
        1, status, Urgency.URGENT, {"en": UpdateText("Strike on")}, "x", FRIDAY,
        UpdateState.PUBLISHED, published_at=FRIDAY,
    )  # fmt: skip


def test_the_shipped_campaign_answers_families_from_the_seed() -> None:
    campaign = shipped_config().to_campaign()
    assert campaign.families is not None and campaign.families.questions[0].verdict is True
    answers = dict(family_answers(campaign, update(Status.STRIKE_ON), FRIDAY, "es"))
    assert answers["¿Hay huelga hoy?"] == "Sí: día 5 de la huelga."
    assert answers["¿Están abiertas las escuelas?"].startswith(
        "Sí, las escuelas están abiertas. El LAUSD mantiene abiertas todas las escuelas"
    )
    assert "utla.net" in answers["¿Preguntas?"]


def test_answers_follow_the_status_and_fall_back_to_the_first_language() -> None:
    on = family_answers(WITH_FAMILIES, update(Status.STRIKE_ON), FRIDAY, "es")
    assert on == [
        ("¿Hay huelga hoy?", "Sí: día 5 de la huelga."),
        ("¿Están abiertas las escuelas?",
         "Sí, las escuelas están abiertas. Suplentes mantienen abiertas todas las escuelas."),
        ("Comidas", "Breakfast and lunch as usual. (en inglés)"),  # the English one, marked
        ("¿Preguntas?", "La oficina de tu escuela."),
    ]  # fmt: skip
    suspended = family_answers(WITH_FAMILIES, update(Status.STRIKE_SUSPENDED), FRIDAY, "en")
    assert suspended[0] == ("Is the strike on today?", "No. Strike suspended.")
    assert family_answers(CAMPAIGN, None, FRIDAY, "en") == []  # nothing to say yet


async def test_the_page_answers_parents_first_in_their_language(
    sqlite_store: Store, clock: FixedClock
) -> None:
    ctx = web_context(sqlite_store, clock, campaign=WITH_FAMILIES)
    await strike_week(sqlite_store, clock, ctx.admin)
    async with client_for(ctx) as client:
        english = parse_html(await (await client.get("/")).text())
        spanish = parse_html(await (await client.get("/es/")).text())
    for doc, title, first in (
        (english, "For families", ("Is the strike on today?", "Yes: day 5 of the strike.")),
        (spanish, "Para las familias", ("¿Hay huelga hoy?", "Sí: día 5 de la huelga.")),
    ):
        main = doc.one("main")
        sections = [n for n in main.children if not isinstance(n, str) and n.tag == "section"]
        # The status, then what happens next (in a phone's first screen), then the families'
        # answers: before anything else.
        assert [s.attrs["class"].split()[0] for s in sections[:3]] == ["status", "next", "families"]
        box = doc.one("section", class_="families")
        assert box.one("h2").text() == title
        pairs = [(d.one("dt").text(), d.one("dd").text()) for d in box.one("dl").all("div")]
        assert pairs[0] == first and len(pairs) == 4


def test_briefings_and_status_carry_the_families_answers() -> None:
    sub = Subscription(1, "discord", "g", "c", "es", timezone="America/Los_Angeles")
    message = compose_briefing(WITH_FAMILIES, sub, update(Status.STRIKE_ON), (), (), (), FRIDAY)
    lines = message.body.split("\n")
    assert lines[0] == "Día 5 de la huelga"
    assert lines[1] == (
        "¿Están abiertas las escuelas? Sí, las escuelas están abiertas. Suplentes mantienen "
        "abiertas todas las escuelas."
    )
    assert "¿Preguntas? La oficina de tu escuela." in lines
    over = compose_briefing(WITH_FAMILIES, sub, update(Status.STRIKE_OVER), (), (), (), FRIDAY)
    assert "escuelas" not in over.body  # only on strike days


async def test_strike_status_command_gives_the_families_answers(
    sqlite_store: Store, clock: FixedClock
) -> None:
    ctx = plugin_ctx("console", sqlite_store, clock, campaign=WITH_FAMILIES)
    await strike_week(sqlite_store, clock, ctx.admin)
    reply = await ctx.commands.status(CommandContext("discord", MEMBER, "g", "c", locale="es"))
    fields = {f.name: f.value for f in reply.message.fields}
    assert fields["¿Están abiertas las escuelas?"].startswith("Sí, las escuelas están abiertas.")
    assert fields["Comidas"] == "Breakfast and lunch as usual. (en inglés)"
    assert fields["¿Preguntas?"] == "La oficina de tu escuela."


def test_dates_carry_the_year_only_when_it_is_not_the_current_one() -> None:
    day = date(2019, 1, 21)
    assert i18n.format_date(day, "en", date(2019, 6, 1)) == "Monday, January 21"
    assert i18n.format_date(day, "en", date(2026, 6, 1)) == "Monday, January 21, 2019"
    assert i18n.format_date(day, "es", date(2026, 6, 1)) == "lunes, 21 de enero de 2019"
    moment = datetime(2019, 1, 21, 14, tzinfo=UTC).astimezone(ZoneInfo("America/Los_Angeles"))
    assert i18n.format_datetime(moment, "en", date(2020, 1, 1)) == (
        "Monday, January 21, 2019, 6:00 AM PST"
    )


async def test_a_page_read_years_later_dates_its_updates(
    sqlite_store: Store, clock: FixedClock
) -> None:
    ctx = web_context(sqlite_store, clock)
    await strike_week(sqlite_store, clock, ctx.admin)
    async with client_for(ctx) as client:
        now = parse_html(await (await client.get("/")).text())
        clock.now = datetime(2026, 11, 30, 17, tzinfo=UTC)
        later = parse_html(await (await client.get("/")).text())
    assert "Monday, January 21, 6:00 AM PST" in now.one("section", class_="next").text()
    assert "Monday, January 21, 2019, 6:00 AM PST" in later.one("section", class_="next").text()
    assert (
        "Last updated Friday, January 18, 2019, 9:30 AM PST"
        in later.one("section", class_="status").text()
    )


async def test_strike_timeline_read_years_later_dates_its_updates(
    sqlite_store: Store, clock: FixedClock
) -> None:
    ctx = plugin_ctx("console", sqlite_store, clock)
    await strike_week(sqlite_store, clock, ctx.admin)
    asker = CommandContext("discord", MEMBER, "g", "c", timezone="America/Los_Angeles")
    same_year = await ctx.commands.timeline(asker, 1)
    clock.now = datetime(2026, 11, 30, 17, tzinfo=UTC)
    later = await ctx.commands.timeline(asker, 1)
    assert "· Friday, January 18, 9:15 AM PST ·" in same_year.message.fields[0].name
    assert "Friday, January 18, 2019, 9:15 AM PST" in later.message.fields[0].name
