"""A briefing's "public page" link points at the status page in the briefing's language,
which lives at / for the campaign's first language and under /<lang>/ for the others."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, time

from bot.briefings import compose_briefing
from bot.messages import update_url
from bot.models import Subscription
from tests.support import CAMPAIGN

SUB = Subscription(
    id=1,
    platform="discord",
    workspace="g1",
    channel="c1",
    language="en",
    briefing_time=time(7, 0),
    timezone="America/Los_Angeles",
)
SAT_7AM = datetime(2019, 1, 19, 15, 0, tzinfo=UTC)


def _page(campaign_languages: tuple[str, ...], language: str) -> str:
    campaign = replace(CAMPAIGN, languages=campaign_languages)
    sub = replace(SUB, language=language)
    return compose_briefing(campaign, sub, None, (), (), (), SAT_7AM).url or ""


def test_english_first_campaign_links_english_to_root_and_spanish_to_es() -> None:
    assert _page(("en", "es"), "en") == "https://strike.example.org/"
    assert _page(("en", "es"), "es") == "https://strike.example.org/es/"


def test_spanish_first_campaign_links_english_under_en() -> None:
    # The Spanish page is / here; an English briefing must not send people to it.
    assert _page(("es", "en"), "es") == "https://strike.example.org/"
    assert _page(("es", "en"), "en") == "https://strike.example.org/en/"


def test_page_link_agrees_with_the_update_links() -> None:
    from tests.test_briefings import THU_UPDATE

    for languages in (("en", "es"), ("es", "en")):
        campaign = replace(CAMPAIGN, languages=languages)
        for language in languages:
            page = _page(languages, language)
            assert update_url(THU_UPDATE, campaign, language) == f"{page}updates/2"
