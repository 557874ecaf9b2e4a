"""The WhatsApp plugin through Twilio, against the fake Twilio on 127.0.0.1 that enforces
the 24-hour window and checks templates: families join by writing first (never before),
get free-form messages within the window and approved templates outside it, a missing or
unapproved template stops with a sentence for admins, a message that meets 63016 goes again
as the template (once), STOP and its Spanish forms forget the number, questions are
answered as in chat, unsigned webhooks are refused, and `strikebot doctor` checks it all."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from adapters.twilio.whatsapp import plugin
from bot.audiences import Sites, read_sites_csv
from bot.clock import FixedClock
from bot.editorial.admin import Draft
from bot.models import Audience, Contact, DeliveryState, Status, UpdateText, Urgency
from bot.plugins import DoctorRequest, Verdict
from bot.store import Store
from tests.fakes.twilio import ACCOUNT_SID, AUTH_TOKEN, FakeTwilio, Fault, signed_request
from tests.family_support import WHATSAPP_FROM, Families, families
from tests.support import ADMIN, ADMINS, CAMPAIGN, campaign_config

ROOT = Path(__file__).resolve().parent.parent
ROSA = "+12135550123"
UPDATE_EN = "{{1}}: {{2}}. {{3}} More: {{4}}"
UPDATE_ES = "{{1}}: {{2}}. {{3}} Más: {{4}}"
INBOUND = f"{CAMPAIGN.public_url}/whatsapp/inbound"


@asynccontextmanager
async def whatsapp(
    store: Store, clock: FixedClock, *, es_status: str = "approved", **section: Any
) -> AsyncIterator[tuple[Families, FakeTwilio]]:
    async with FakeTwilio(clock=clock, retry_after=0.01) as twilio:
        en = twilio.add_content(UPDATE_EN, name="strike_update_en")
        es = twilio.add_content(UPDATE_ES, es_status, name="strike_update_es")
        templates = {"update": {"content": {"en": en, "es": es}}}
        config = campaign_config(
            CAMPAIGN,
            whatsapp={"sender_name": "UTLA", "templates": templates, **section},
        )
        async with families(store, clock, twilio=twilio, whatsapp=True, config=config) as f:
            yield f, twilio


def urgent(headline: str, body: str = "Picket lines at every school from 6:30 AM") -> Draft:
    return Draft(Status.STRIKE_ON, {"en": UpdateText(headline, body)}, Urgency.URGENT)


def both(headline: str, titular: str) -> Draft:
    return Draft(
        Status.STRIKE_ON,
        {"en": UpdateText(headline, "Details on the page"), "es": UpdateText(titular, "Más")},
        Urgency.URGENT,
    )


async def joined(f: Families, word: str = "JOIN", number: str = ROSA) -> str:
    status, reply = await f.whatsapp_in(number, word, f"SM-join-{number}-{word}")
    assert status == 200 and "<Message>" in reply
    return reply


async def posts(store: Store) -> list[tuple[DeliveryState, str | None]]:
    async with store.read() as tx:
        rows = await tx.list_deliveries(limit=None)
    return [(d.state, d.last_error) for d in rows if d.platform == "whatsapp" and d.update_id]


# -- joining ---------------------------------------------------------------------------


async def test_a_family_joins_by_writing_first_and_nobody_else_is_written_to(
    sqlite_store: Store, clock: FixedClock
) -> None:
    async with whatsapp(sqlite_store, clock) as (f, twilio):
        await f.admin.post(ADMIN, urgent("Strike is on"))
        await f.drain()
        assert twilio.texts == []  # no one wrote: no one is written to
        reply = await joined(f, "Unirse")
        assert "recibirás noticias urgentes sobre la huelga aquí en WhatsApp" in reply
        person = await f.signups.find(ROSA, Contact.WHATSAPP)
        assert person is not None and person.confirmed and person.language == "es"
        # The number is not a texting number: signing up on WhatsApp is not signing up by SMS.
        assert await f.signups.find(ROSA, Contact.PHONE) is None


async def test_join_roosevelt_on_whatsapp_follows_that_school_as_a_text_does(
    sqlite_store: Store, clock: FixedClock
) -> None:
    csv = (ROOT / "config" / "lausd-sites.csv").read_text(encoding="utf-8")
    await Sites(sqlite_store, ADMINS, clock).import_file(
        ADMIN, read_sites_csv(csv, ("en", "es"), "en")
    )
    async with whatsapp(sqlite_store, clock) as (f, twilio):
        await joined(f, "JOIN ROOSEVELT")
        for audience, headline in (
            (Audience.of(["venice"]), "Venice: rally at noon"),
            (Audience.of(["roosevelt"]), "Roosevelt: breakfast at 7"),
        ):
            draft = urgent(headline)
            await f.admin.post(ADMIN, replace(draft, audience=audience))
        await f.drain()
        sent = [t.body for t in twilio.texts if t.to.endswith(ROSA)]
        assert any("Roosevelt: breakfast at 7" in body for body in sent), sent
        assert not any("Venice" in body for body in sent)


async def test_the_page_offers_click_to_chat_in_each_language(
    sqlite_store: Store, clock: FixedClock
) -> None:
    async with whatsapp(sqlite_store, clock) as (f, _):
        offer = f.signups.offers[Contact.WHATSAPP]
        assert not offer.by_form  # the form never asks for a WhatsApp number
        assert offer.invites["en"].url == "https://wa.me/12135550199?text=JOIN"
        assert offer.invites["es"].url == "https://wa.me/12135550199?text=UNIRSE"
        assert offer.invites["es"].label == "Recibe las noticias por WhatsApp"


# -- the 24-hour window ------------------------------------------------------------------


async def test_inside_the_window_an_update_goes_free_form(
    sqlite_store: Store, clock: FixedClock
) -> None:
    async with whatsapp(sqlite_store, clock) as (f, twilio):
        await joined(f)
        clock.advance(hours=3)
        await f.admin.post(ADMIN, urgent("Strike is on"))
        await f.drain()
        [message] = twilio.whatsapp(ROSA)
        assert message.content_sid == ""
        assert message.body.startswith("*UTLA: URGENT: Strike is on*\nPicket lines")
        assert message.sender == f"whatsapp:{WHATSAPP_FROM}"
        assert await f.callbacks() == [204]
        assert await posts(sqlite_store) == [(DeliveryState.SENT, None)]


async def test_outside_the_window_an_update_goes_as_the_approved_template(
    sqlite_store: Store, clock: FixedClock
) -> None:
    async with whatsapp(sqlite_store, clock) as (f, twilio):
        await joined(f)
        clock.advance(hours=30)
        await f.admin.post(ADMIN, urgent("Strike is on", "Picket lines\nat every school"))
        await f.drain()
        [message] = twilio.whatsapp(ROSA)
        assert message.content_sid != ""
        assert message.body == (
            "UTLA: URGENT: Strike is on. Picket lines at every school More: "
            f"{CAMPAIGN.public_url}/updates/1"
        )
        await f.callbacks()
        assert [t.delivered for t in twilio.texts] == [True]


@pytest.mark.parametrize("fault", [Fault.LOSE_ANSWER, Fault.TRUNCATED_JSON])
async def test_a_template_whose_answer_was_lost_is_found_at_twilio_not_sent_twice(
    sqlite_store: Store, clock: FixedClock, fault: Fault
) -> None:
    """Outside the window the message Twilio lists is the template filled in, not our words:
    it is found by the values we filled it with."""
    async with whatsapp(sqlite_store, clock) as (f, twilio):
        await joined(f)
        clock.advance(hours=30)
        twilio.fail(fault)
        await f.admin.post(ADMIN, urgent("Strike is on"))
        await f.drain()
        [message] = twilio.whatsapp(ROSA)
        assert message.content_sid != "" and twilio.lists >= 1
        assert await posts(sqlite_store) == [(DeliveryState.SENT, None)]


async def test_a_free_form_message_that_meets_63016_goes_again_as_the_template_once(
    sqlite_store: Store, clock: FixedClock
) -> None:
    """The window closed while the message waited (here: WhatsApp heard Rosa earlier than
    the bot recorded): Twilio accepts the free-form message, then fails it with 63016."""
    async with whatsapp(sqlite_store, clock) as (f, twilio):
        await joined(f)
        clock.advance(hours=22)
        twilio.heard[ROSA] -= timedelta(hours=3)
        await f.admin.post(ADMIN, urgent("Strike is on"))
        await f.drain()
        assert [t.error for t in twilio.texts] == ["63016"]
        assert twilio.whatsapp(ROSA) == []
        assert await f.callbacks() == [204]
        await f.drain()
        [message] = twilio.whatsapp(ROSA)
        assert message.content_sid != "" and "Strike is on" in message.body
        await f.callbacks()
        await f.drain()
        assert len(twilio.whatsapp(ROSA)) == 1  # nothing twice
        assert await posts(sqlite_store) == [(DeliveryState.SENT, None)]
        async with sqlite_store.read() as tx:
            receipts = await tx.receipt_counts()
        assert receipts == {("whatsapp", "delivered"): 1}
        assert f.whatsapp is not None and f.whatsapp.health()["sent_again_outside_window"] == 1


async def test_a_missing_template_stops_the_copy_with_a_sentence_for_admins(
    sqlite_store: Store, clock: FixedClock
) -> None:
    async with FakeTwilio(clock=clock) as twilio:
        config = campaign_config(CAMPAIGN, whatsapp={"sender_name": "UTLA"})
        async with families(sqlite_store, clock, twilio=twilio, whatsapp=True, config=config) as f:
            await joined(f, "UNIRSE")
            clock.advance(days=2)
            await f.admin.post(ADMIN, both("Strike is on", "Huelga"))
            await f.drain()
            [(state, error)] = await posts(sqlite_store)
            assert state is DeliveryState.DEAD and error is not None
            assert "names none for update messages in es" in error
            assert '[whatsapp.templates.update] content.es = "HX..."' in error
            assert twilio.texts == []


async def test_a_template_not_approved_stops_the_copy_with_a_sentence_for_admins(
    sqlite_store: Store, clock: FixedClock
) -> None:
    async with whatsapp(sqlite_store, clock, es_status="pending") as (f, twilio):
        await joined(f, "UNIRSE")
        clock.advance(days=2)
        await f.admin.post(ADMIN, both("Strike is on", "Huelga"))
        await f.drain()
        [(state, error)] = await posts(sqlite_store)
        assert state is DeliveryState.DEAD and error is not None
        assert "is pending at WhatsApp, not approved" in error
        assert "strikebot deliveries retry" in error
        assert twilio.texts == []


async def test_a_retraction_is_a_new_message(sqlite_store: Store, clock: FixedClock) -> None:
    async with whatsapp(sqlite_store, clock) as (f, twilio):
        await joined(f)
        posted = await f.admin.post(ADMIN, urgent("Rally moved"))
        await f.drain()
        await f.admin.retract(ADMIN, posted.id, reason="Wrong place")
        await f.drain()
        bodies = [t.body for t in twilio.whatsapp(ROSA)]
        assert len(bodies) == 2 and "Wrong place" in bodies[1]
        assert bodies[1].startswith("*UTLA: RETRACTED: Rally moved*")


# -- messages from families --------------------------------------------------------------


@pytest.mark.parametrize("word", ["STOP", "parar", "Baja", " Stop. "])
async def test_stop_and_its_spanish_forms_forget_the_number(
    sqlite_store: Store, clock: FixedClock, word: str
) -> None:
    async with whatsapp(sqlite_store, clock) as (f, _):
        await joined(f)
        status, reply = await f.whatsapp_in(ROSA, word, "SM-stop")
        assert status == 200 and "<Message>" in reply
        assert await f.signups.find(ROSA, Contact.WHATSAPP) is None


@pytest.mark.parametrize("question", ["End of the strike, when?", "Cancel the rally today?"])
async def test_a_question_changes_nothing_and_gets_the_menu(
    sqlite_store: Store, clock: FixedClock, question: str
) -> None:
    async with whatsapp(sqlite_store, clock) as (f, _):
        await joined(f)
        status, reply = await f.whatsapp_in(ROSA, question, "SM-q")
        assert status == 200 and "Send STATUS for the latest" in reply
        assert await f.signups.find(ROSA, Contact.WHATSAPP) is not None


async def test_estado_is_answered_as_chat_answers_it(
    sqlite_store: Store, clock: FixedClock
) -> None:
    from tests.strike_week import strike_week

    async with whatsapp(sqlite_store, clock) as (f, _):
        await strike_week(sqlite_store, clock, f.admin)
        await joined(f, "UNIRSE")
        status, reply = await f.whatsapp_in(ROSA, "ESTADO", "SM-estado")
        assert status == 200
        assert "En huelga" in reply and "Día 5 de la huelga" in reply
        assert reply.split("</Message>")[0].endswith("https://strike.example.org/es/")


async def test_unsigned_and_forged_webhooks_are_refused(
    sqlite_store: Store, clock: FixedClock
) -> None:
    async with whatsapp(sqlite_store, clock) as (f, twilio):
        params = twilio.whatsapp_in(ROSA, "JOIN", "SM-forged")
        unsigned = await f.client.post("/whatsapp/inbound", data=params)
        assert unsigned.status == 403
        forged, _ = await signed_request(f.server, INBOUND, params, token="not-the-token")
        assert forged == 403
        callback = await f.client.post("/whatsapp/status/abc", data={"MessageStatus": "failed"})
        assert callback.status == 403
        assert await f.signups.find(ROSA, Contact.WHATSAPP) is None
        assert f.whatsapp is not None and f.whatsapp.health()["refused_unsigned_webhooks"] == 3


# -- strikebot doctor -----------------------------------------------------------------------


async def test_doctor_checks_the_login_and_every_template(
    sqlite_store: Store, clock: FixedClock
) -> None:
    async with FakeTwilio(clock=clock) as twilio:
        approved = twilio.add_content(UPDATE_EN, name="strike_update_en")
        pending = twilio.add_content(UPDATE_ES, "rejected", name="strike_update_es")
        unknown = "HX" + "f" * 32
        config = campaign_config(
            CAMPAIGN,
            whatsapp={"templates": {
                "update": {"content": {"en": approved, "es": pending}},
                "briefing": {"content": {"en": unknown}},
            }},
        )  # fmt: skip
        env = {
            "TWILIO_ACCOUNT_SID": ACCOUNT_SID,
            "TWILIO_AUTH_TOKEN": AUTH_TOKEN,
            "TWILIO_WHATSAPP_FROM": WHATSAPP_FROM,
            "TWILIO_API_BASE": twilio.url,
            "TWILIO_CONTENT_API_BASE": twilio.url,
        }
        settings = plugin.settings.from_env(env)
        section = config.plugin_config("whatsapp").section
        assert plugin.doctor is not None
        checks = await plugin.doctor(DoctorRequest(settings, section, None, CAMPAIGN, ()))
        found = {c.subject: (c.verdict, c.detail) for c in checks}
        assert found["credentials"][0] is Verdict.OK
        assert found["template update (en)"] == (Verdict.OK, "strike_update_en is approved")
        verdict, detail = found["template update (es)"]
        assert verdict is Verdict.FAIL and "rejected at WhatsApp" in detail
        assert found["template briefing (en)"][0] is Verdict.FAIL
        assert "no template for briefing messages in es" in found["template briefing (es)"][1]
        bad = plugin.settings.from_env(env | {"TWILIO_AUTH_TOKEN": "wrong"})
        [refused] = await plugin.doctor(DoctorRequest(bad, section, None, CAMPAIGN, ()))
        assert refused.verdict is Verdict.FAIL and "refused the account's login" in refused.detail


async def test_prefs_and_help_on_whatsapp_send_the_persons_preferences_link(
    sqlite_store: Store, clock: FixedClock
) -> None:
    """As a text's: PREFS (AJUSTES) answers with the link to the person's preferences page,
    HELP ends with it; a number not signed up gets no link."""
    import re

    link = re.compile(r"https://strike\.example\.org((?:/es)?/p/[A-Za-z0-9_-]{20})")
    async with whatsapp(sqlite_store, clock) as (f, _twilio):
        _, stranger = await f.whatsapp_in(ROSA, "PREFS", "SM-p0")
        assert link.search(stranger) is None and "JOIN" in stranger
        await joined(f, "UNIRSE")
        _, reply = await f.whatsapp_in(ROSA, "AJUSTES", "SM-p1")
        found = link.search(reply)
        assert found is not None and found.group(1).startswith("/es/p/"), reply
        _, helped = await f.whatsapp_in(ROSA, "HELP", "SM-p2")
        assert found.group(1) in helped
        page = await f.client.get(found.group(1))
        assert page.status == 200 and 'lang="es"' in await page.text()
