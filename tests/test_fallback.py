"""One fallback rule for every field a reader sees: the reader's language where it is
written, else the campaign's main language, marked "(en inglés)" — for updates, demands
field by field, reasons, briefings, chat answers, the page and the feeds."""

from __future__ import annotations

from datetime import timedelta

import pytest

from bot.briefings.compose import compose_briefing
from bot.clock import FixedClock
from bot.commands import CommandContext, Commands, Reply
from bot.editorial.admin import Admin, Draft
from bot.editorial.demands import DemandWording
from bot.i18n.sentences import say
from bot.messages.compose import update_message
from bot.messages.fallback import mark, shown
from bot.metrics import Metrics
from bot.models import Demand, DemandStatus, Platform, Status, Subscription, UpdateText, Urgency
from bot.store import Store
from tests.support import ADMIN, ADMINS, CAMPAIGN, FRIDAY, MEMBER
from tests.web_support import client_for, parse_html, web_context

OFFER = "One nurse for every five patients"
ASK = "A nurse in every school, written into the contract"
IN_ENGLISH = "(en inglés)"


def text_of(reply: Reply) -> str:
    m = reply.message
    return "\n".join([m.title, m.body, *(f"{f.name}: {f.value}" for f in m.fields)])


async def _campaign_with_a_half_translated_demand(store: Store, clock: FixedClock) -> Admin:
    """A demand whose title is in Spanish too, but whose ask and offer are English only."""
    admin = Admin(store, CAMPAIGN, ADMINS, clock)
    await admin.add_demand(
        ADMIN,
        "nurses",
        {
            "en": DemandWording(title="A nurse in every school", union_position=ASK),
            "es": DemandWording(title="Una enfermera en cada escuela"),
        },
    )
    await admin.record_demand(
        ADMIN,
        "nurses",
        status=DemandStatus.OFFER_ON_TABLE,
        offer={"en": OFFER},
        source="district letter",
    )
    await admin.post(
        ADMIN,
        Draft(
            Status.STRIKE_ON,
            {
                "en": UpdateText("The strike is on", "Picket lines at 6:30 AM at every site."),
                "es": UpdateText("Comienza la huelga"),  # the body is not translated yet
            },
            Urgency.URGENT,
        ),
    )
    return admin


def test_the_rule_marks_a_text_shown_in_another_language_in_the_readers_words() -> None:
    assert shown({"en": OFFER}, "es", "en") == f"{OFFER} {IN_ENGLISH}"
    assert shown({"en": OFFER, "es": "Una enfermera"}, "es", "en") == "Una enfermera"
    assert shown({"en": OFFER}, "en", "en") == OFFER
    assert shown({"es": "Solo en español"}, "en", "es") == "Solo en español (in Spanish)"
    assert mark("", "en", "es") == ""


def test_a_demand_falls_back_field_by_field() -> None:
    from bot.models import DemandText

    demand = Demand(
        "nurses",
        1,
        DemandStatus.OPEN,
        {"en": DemandText("Nurses", "Sum", ASK, OFFER, ("fact",)), "es": DemandText("Enfermeras")},
        FRIDAY,
    )
    text = demand.text("es")
    assert (text.title, text.union_position, text.employer_offer) == ("Enfermeras", ASK, OFFER)
    assert text.facts == ("fact",)


async def test_chat_shows_the_english_offer_marked_instead_of_no_offer(
    sqlite_store: Store, clock: FixedClock
) -> None:
    admin = await _campaign_with_a_half_translated_demand(sqlite_store, clock)
    commands = Commands(sqlite_store, CAMPAIGN, admin, clock, metrics=Metrics())
    asker = CommandContext(Platform("discord"), MEMBER, "g", "c", locale="es-ES")
    for reply in (await commands.demands(asker), await commands.demand(asker, "nurses")):
        text = text_of(reply)
        assert f"{OFFER} {IN_ENGLISH}" in text
        assert f"{ASK} {IN_ENGLISH}" in text
        assert say("es", "no_offer") not in text
        assert say("es", "nothing_there") not in text
        assert "Una enfermera en cada escuela" in text  # the Spanish title, unmarked


async def test_an_update_body_written_only_in_english_is_shown_marked(
    sqlite_store: Store, clock: FixedClock
) -> None:
    admin = await _campaign_with_a_half_translated_demand(sqlite_store, clock)
    async with sqlite_store.read() as tx:
        update = await tx.latest_update(clock())
    assert update is not None
    message = update_message(update, "es", admin.campaign)
    assert message.title == "Comienza la huelga"
    assert message.body == f"Picket lines at 6:30 AM at every site. {IN_ENGLISH}"


async def test_a_briefing_shows_the_current_offer_it_announced(
    sqlite_store: Store, clock: FixedClock
) -> None:
    await _campaign_with_a_half_translated_demand(sqlite_store, clock)
    now = clock() + timedelta(hours=1)
    async with sqlite_store.read() as tx:
        latest = await tx.latest_update(now)
        demands = await tx.list_demands(with_history=False)
        events = await tx.demand_events_since(now - timedelta(days=1))
    sub = Subscription(1, "discord", "g", "c", "es", timezone="America/Los_Angeles")
    recent = [latest] if latest else []
    briefing = compose_briefing(
        CAMPAIGN, sub, latest, recent, demands, events, now, since=now - timedelta(days=1)
    )
    everything = briefing.body + "\n" + "\n".join(f.value for f in briefing.fields)
    assert f"{OFFER} {IN_ENGLISH}" in everything  # in the changes and in the table
    assert "ninguna todavía" not in everything.lower()  # "Current offer: none yet"


@pytest.mark.parametrize("path", ["/es/"])
async def test_the_spanish_page_shows_the_english_offer_marked_not_a_dash(
    sqlite_store: Store, clock: FixedClock, path: str
) -> None:
    await _campaign_with_a_half_translated_demand(sqlite_store, clock)
    async with client_for(web_context(sqlite_store, clock)) as client:
        page = parse_html(await (await client.get(path)).text())
    row = page.one("tr", id="demand-nurses")
    cells = [td.text() for td in row.all("td")]
    assert f"{ASK} {IN_ENGLISH}" in cells[0]
    assert f"{OFFER} {IN_ENGLISH}" in cells[1]


async def test_the_spanish_feed_shows_the_english_body_marked(
    sqlite_store: Store, clock: FixedClock
) -> None:
    await _campaign_with_a_half_translated_demand(sqlite_store, clock)
    async with client_for(web_context(sqlite_store, clock)) as client:
        feed = await (await client.get("/es/feed.atom")).text()
    assert "Picket lines at 6:30 AM at every site. (en inglés)" in feed
