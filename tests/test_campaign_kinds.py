"""Campaign-kind wording as data: what families are asked, a briefing's days and the statuses
with their labels come from the campaign file and the catalogues (a school campaign's are
today's), so a hospital or transit strike never reads like a school's."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from bot import i18n
from bot.clock import FixedClock
from bot.config import parse_config
from bot.editorial.admin import Admin, Draft
from bot.errors import ConfigError, InvalidInput
from bot.messages.compose import update_message
from bot.messages.families import family_answers
from bot.messages.kinds import statuses
from bot.models import Contact, Status, UpdateText
from bot.people.signups import Choice, Offer, signups_for
from bot.store import Store
from tests.support import ADMIN, ADMINS, FRIDAY, shipped_config


def hospital(**more: Any) -> dict[str, Any]:
    campaign = {
        "slug": "bay-nurses",
        "union": "Bay Nurses",
        "employer": "Bay General Hospital",
        "start_date": date(2026, 1, 5),
        "timezone": "America/Los_Angeles",
        "languages": ["en", "es"],
        "kind": "hospital",
    }
    return {"campaign": campaign, **more}


def test_lockout_and_strike_notice_are_statuses_with_labels_and_colours() -> None:
    for status in (Status.LOCKOUT, Status.STRIKE_NOTICE):
        assert status in statuses(shipped_config().to_campaign())
        assert status in i18n.STATUS_COLOURS
        assert i18n.status_label(status, "es") != i18n.status_label(status, "en")


def test_the_school_demo_keeps_todays_wording() -> None:
    campaign = shipped_config().to_campaign()
    answers = dict(family_answers(campaign, None, FRIDAY, "en"))
    assert answers["Are schools open?"].startswith("Yes, schools are open. LAUSD keeps")
    assert list(answers) == ["Are schools open?", "Meals", "Questions?"]
    assert campaign.briefing_days == frozenset(range(5))


def test_a_hospital_asks_its_own_questions_and_briefs_every_day() -> None:
    config = parse_config(
        hospital(families={"open": True, "answers": {"care": {"en": "Call your clinic."}}})
    )
    campaign = config.to_campaign()
    answers = dict(family_answers(campaign, None, FRIDAY, "es"))
    assert answers == {
        "¿Está abierto el hospital?": "Sí, el hospital está abierto.",
        "Citas y atención": "Call your clinic. (en inglés)",
    }
    assert campaign.briefing_days == frozenset(range(7))


def test_school_keys_in_a_hospital_campaign_are_refused_with_the_fix() -> None:
    with pytest.raises(ConfigError) as refused:
        parse_config(hospital(families={"schools": {"en": "Open"}}))
    assert "school campaign's key" in str(refused.value)
    assert "[families.answers] (open, care, ask)" in str(refused.value)
    with pytest.raises(ConfigError) as unknown:
        parse_config(hospital(families={"answers": {"meals": {"en": "x"}}}))
    assert "a hospital campaign's questions are open, care, ask" in str(unknown.value)


async def test_the_campaigns_statuses_and_labels_are_the_ones_offered(
    sqlite_store: Store, clock: FixedClock
) -> None:
    raw = hospital(status_labels={"strike_on": {"en": "Out", "es": "Enfermeras en huelga"}})
    raw["campaign"]["statuses"] = ["bargaining", "strike_on", "lockout"]
    config = parse_config(raw)
    campaign = config.to_campaign()
    admin = Admin(sqlite_store, campaign, ADMINS, clock)
    posted = await admin.post(ADMIN, Draft(Status.STRIKE_ON, {"en": UpdateText("Out")}))
    assert update_message(posted, "es", campaign).status_label == "Enfermeras en huelga"
    with pytest.raises(InvalidInput) as refused:
        await admin.post(ADMIN, Draft(Status.STRIKE_VOTE, {"en": UpdateText("Vote")}))
    assert "bargaining, strike_on, lockout" in refused.value.message


@pytest.mark.parametrize(("kind", "days"), [("school", range(5)), ("hospital", range(7))])
async def test_a_familys_briefing_comes_on_the_campaigns_days(
    sqlite_store: Store, clock: FixedClock, kind: str, days: range
) -> None:
    raw = hospital()
    raw["campaign"]["kind"] = kind
    config = parse_config(raw)
    signups = signups_for(sqlite_store, config, clock)
    confirmation = signups.confirmation_message(Contact.EMAIL, "t", "en", Choice.BRIEFING)
    expected = "on school days" if kind == "school" else "every day"
    assert expected in confirmation.body
    signups.offer(Offer(Contact.PHONE, "sms", countries=("US",)))
    await signups.join(
        Contact.PHONE, "+12135550123", language="en", via="text JOIN", choice=Choice.BRIEFING
    )
    async with sqlite_store.read() as tx:
        [sub] = await tx.list_subscriptions()
    assert sub.briefing_days == frozenset(days)
