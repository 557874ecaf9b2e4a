"""A half-translated catalogue: each sentence is said whole in one language (a template
translated with a phrase put in that is not falls back as a whole, and so does the
reverse); and `strikebot translations import` files a Tagalog catalogue under `tl`, the
code the campaign uses, not Babel's `fil_PH`, so the campaign then accepts it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po, write_po

from bot import i18n
from bot.briefings.compose import compose_briefing
from bot.clock import FixedClock
from bot.config import parse_config
from bot.models import Contact, Subscription
from bot.people.signups import Choice, signups_for
from bot.store import Store
from tests.support import CAMPAIGN, campaign_config
from tests.test_cli import Cli, cli, seeded_database

__all__ = ["cli", "seeded_database"]

URGENT_TL = "mga apurahang balita"


@pytest.fixture(autouse=True)
def fresh_catalogues() -> Iterator[None]:
    i18n.reload()
    yield
    i18n.reload()


def _catalogue(folder: Path, code: str, translations: dict[str, str]) -> None:
    """A catalogue translating only `translations` (context -> sentence)."""
    template = i18n.catalogues().template
    catalog = Catalog(locale=code, domain=i18n.DOMAIN)
    for message in template:
        if message.context in translations:
            catalog.add(message.id, translations[message.context], context=message.context)
    path = folder / code / "LC_MESSAGES" / f"{i18n.DOMAIN}.po"
    path.parent.mkdir(parents=True)
    with path.open("wb") as fp:
        write_po(fp, catalog)


def test_a_translated_phrase_in_an_untranslated_sentence_falls_back_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _catalogue(tmp_path, "tl", {"signups.urgent": URGENT_TL})
    monkeypatch.setenv(i18n.LOCALES_ENV, str(tmp_path))
    i18n.reload()
    said = i18n.say("tl", "signups.sms_body", union="UTLA", choice=i18n.phrase("signups.urgent"))
    assert URGENT_TL not in said
    assert said == i18n.say("en", "signups.sms_body", union="UTLA", choice="urgent news")


def test_a_translated_sentence_with_an_untranslated_phrase_falls_back_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _catalogue(tmp_path, "tl", {"families.no": "Hindi. {status}."})
    monkeypatch.setenv(i18n.LOCALES_ENV, str(tmp_path))
    i18n.reload()
    from bot.models import Status

    said = i18n.family_word("no", "tl", status=i18n.status_term(Status.STRIKE_SUSPENDED))
    assert said == "No. Strike suspended."  # not "Hindi. Strike suspended."


async def test_confirmations_and_briefings_never_mix_two_languages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sqlite_store: Store, clock: FixedClock
) -> None:
    _catalogue(tmp_path, "tl", {"signups.urgent": URGENT_TL, "briefings.day_of_strike": "Ika-{n}"})
    monkeypatch.setenv(i18n.LOCALES_ENV, str(tmp_path))
    i18n.reload()
    config = campaign_config(replace(CAMPAIGN, languages=("en", "tl")))
    signups = signups_for(sqlite_store, config, clock)
    for choice in Choice:
        for contact in (Contact.EMAIL, Contact.PHONE):
            body = signups.confirmation_message(contact, "token", "tl", choice).body
            assert URGENT_TL not in body, body  # the sentence around it is English
    sub = Subscription(1, "discord", "g", "c", "tl", timezone=CAMPAIGN.timezone)
    friday = datetime(2019, 1, 18, 15, 0, tzinfo=UTC)
    title = compose_briefing(config.to_campaign(), sub, None, [], [], [], friday).title
    english = i18n.format_date(date(2019, 1, 18), "en")
    assert title == f"Morning briefing — {english}"  # not "Morning briefing — Biyernes, ..."


def test_import_files_a_tagalog_catalogue_under_the_campaigns_code(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    exported = tmp_path / "tl.po"
    cli.ok("translations", "export", "tl", "-o", str(exported))
    with exported.open("rb") as fp:
        catalog = read_po(fp)
    assert catalog.locale_identifier == "tl"
    title = catalog.get("That didn't work", context="commands.error_title")
    assert title is not None
    title.string = "Hindi ito gumana"
    with exported.open("wb") as fp:
        write_po(fp, catalog)
    locales = tmp_path / "locales"
    cli.ok("translations", "import", str(exported), "--into", str(locales))
    assert (locales / "tl" / "LC_MESSAGES" / "strikebot.po").exists()
    assert not (locales / "fil_PH").exists()
    monkeypatch.setenv(i18n.LOCALES_ENV, str(locales))
    i18n.reload()
    assert i18n.text("tl", "commands.error_title") == "Hindi ito gumana"
    config = parse_config(
        {
            "campaign": {
                "slug": "nurses-2026",
                "union": "Nurses United",
                "employer": "City Hospital",
                "start_date": date(2026, 1, 5),
                "timezone": "America/Los_Angeles",
                "languages": ["en", "tl"],
            }
        }
    )
    assert config.to_campaign().languages == ("en", "tl")
