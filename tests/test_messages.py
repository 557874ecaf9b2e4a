from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.discord import LIMITS as DISCORD_LIMITS
from adapters.slack import LIMITS as SLACK_LIMITS
from bot.clock import FixedClock
from bot.editorial.admin import Admin, Draft
from bot.messages.compose import (
    correction_message,
    fit,
    fit_message,
    neutralize_mentions,
    notice_message,
    retraction_message,
    split,
    update_message,
    update_url,
)
from bot.models import Revision, Status, Update, UpdateState, UpdateText, Urgency
from bot.plugins import installed_plugins
from bot.ports import Field, MessageKind, OutboundMessage
from bot.store import Store
from tests.support import ADMIN, ADMINS, CAMPAIGN

POSTED = datetime(2019, 1, 14, 14, 0, tzinfo=UTC)  # Monday 6:00 AM in Los Angeles
RALLY = datetime(2019, 1, 18, 18, 0, tzinfo=UTC)  # Friday 10:00 AM in Los Angeles


def make_update(**changes: object) -> Update:
    base = Update(
        id=7,
        status=Status.STRIKE_ON,
        urgency=Urgency.URGENT,
        texts={
            "en": UpdateText("The strike is on", "Picket lines at 6:30 AM.", "Rally at City Hall"),
            "es": UpdateText(
                "La huelga comenzó", "Piquetes a las 6:30.", "Manifestación en el ayuntamiento"
            ),
        },
        author="discord:1001 (Arlene)",
        created_at=POSTED,
        state=UpdateState.PUBLISHED,
        next_step_at=RALLY,
        published_at=POSTED,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


# Anything that pings: Discord's broadcasts and <@…> forms, Slack's <!…> and <@…> forms.
PING = re.compile(r"@(everyone|here|channel)\b|<[@!]", re.IGNORECASE)


def test_update_message_carries_everything_a_member_needs() -> None:
    message = update_message(make_update(), "en", CAMPAIGN)
    assert message.kind is MessageKind.UPDATE
    assert message.title == "The strike is on"
    assert message.body == "Picket lines at 6:30 AM."
    assert message.status is Status.STRIKE_ON
    assert message.status_label == "On strike"
    assert message.urgency is Urgency.URGENT
    assert [(f.name, f.value) for f in message.fields] == [
        ("Next step", "Rally at City Hall"),
        ("When", "Friday, January 18, 10:00 AM PST"),
    ]
    assert message.url == "https://strike.example.org/updates/7"
    assert [link.url for link in message.links] == ["https://strike.example.org/updates/7"]
    assert message.footer == "Update #7 · posted Monday, January 14, 6:00 AM PST"
    assert not message.retracted
    # Round-trips through the JSON the dispatcher stores for briefings and notices.
    assert OutboundMessage.from_json(message.to_json()) == message


def test_update_message_in_spanish_and_in_the_channel_time_zone() -> None:
    message = update_message(make_update(), "es-MX", CAMPAIGN, timezone="America/New_York")
    assert message.language == "es"
    assert message.title == "La huelga comenzó"
    assert message.status_label == "En huelga"
    assert [(f.name, f.value) for f in message.fields] == [
        ("Próximo paso", "Manifestación en el ayuntamiento"),
        ("Cuándo", "viernes, 18 de enero, 13:00 EST"),
    ]
    assert message.footer == "Actualización #7 · publicada el lunes, 14 de enero, 9:00 EST"


def test_spanish_channel_gets_english_text_when_no_translation_but_spanish_labels() -> None:
    update = make_update(texts={"en": UpdateText("Talks resume Saturday")}, next_step_at=None)
    message = update_message(update, "es", CAMPAIGN)
    assert message.title == "Talks resume Saturday (en inglés)"  # marked for the reader
    assert message.status_label == "En huelga"
    assert message.fields == ()
    assert message.footer.startswith("Actualización #7")


def test_unknown_time_zone_falls_back_to_the_campaign_zone() -> None:
    for bad in ("Mars/Olympus", "America", "", "../etc/passwd"):
        message = update_message(make_update(), "en", CAMPAIGN, timezone=bad)
        assert message.fields[1].value == "Friday, January 18, 10:00 AM PST"


def test_edited_update_says_so_in_the_footer() -> None:
    message = update_message(make_update(revision=3), "en", CAMPAIGN)
    assert message.footer.endswith(" · edited")
    assert update_message(make_update(revision=3), "es", CAMPAIGN).footer.endswith(" · editada")


def test_retracted_update_renders_as_the_retraction_with_its_reason() -> None:
    update = make_update(
        state=UpdateState.RETRACTED,
        retracted_at=RALLY,
        retraction_reason="Posted before the vote count was final",
    )
    for message in (
        update_message(update, "en", CAMPAIGN),
        retraction_message(update, "en", CAMPAIGN),
    ):
        assert message.kind is MessageKind.RETRACTION
        assert message.retracted
        assert message.title == "RETRACTED: The strike is on"
        assert "Posted before the vote count was final" in message.body
        assert "Friday, January 18, 10:00 AM PST" in message.body
        assert message.status_label == "Retracted"
        # The original stays readable (adapters strike it through), it is not the body.
        assert "Picket lines" not in message.body
        assert [f.value for f in message.fields] == ["The strike is on\nPicket lines at 6:30 AM."]
    spanish = update_message(update, "es", CAMPAIGN)
    assert spanish.title == "RETIRADA: La huelga comenzó"
    assert "Motivo: Posted before the vote count was final" in spanish.body


def test_correction_note_is_short_visible_and_links_to_the_update() -> None:
    update = make_update(
        revision=2,
        revisions=(
            Revision(
                number=1,
                texts={"en": UpdateText("The strike is on")},
                status=Status.STRIKE_ON,
                urgency=Urgency.URGENT,
                next_step_at=None,
                editor="discord:1001",
                reason="The rally is at 10, not 9",
                created_at=RALLY,
            ),
        ),
    )
    message = correction_message(update, "en", CAMPAIGN)
    assert message.kind is MessageKind.CORRECTION
    assert message.title == "Correction: The strike is on"
    assert message.body == "Update #7 has been corrected.\nWhat changed: The rally is at 10, not 9"
    assert message.url == "https://strike.example.org/updates/7"
    assert message.links[0].url == message.url
    spanish = correction_message(update, "es", CAMPAIGN)
    assert spanish.title == "Corrección: La huelga comenzó"
    assert spanish.body.startswith("La actualización #7 fue corregida.")


def test_notice_message_is_plain_and_inert() -> None:
    message = notice_message("Channel broken @here", "Missing access <@&42>", "es-ES")
    assert message.kind is MessageKind.NOTICE
    assert message.language == "es"
    assert not PING.search(message.title + message.body)


@pytest.mark.parametrize(
    "text",
    [
        "@everyone the strike is on",
        "ping @here now",
        "@EVERYONE shouting",
        "hello <@123456789>",
        "nick form <@!123456789>",
        "role <@&456>",
        "slack <!channel> and <!here> and <!everyone>",
        "group <!subteam^S0123|@comms>",
        "slack user <@U0ADMIN>",
    ],
)
def test_mentions_are_neutralised(text: str) -> None:
    inert = neutralize_mentions(text)
    assert not PING.search(inert)
    assert inert.replace("\u200b", "") == text  # only zero-width spaces were added
    assert neutralize_mentions(inert) == inert


@pytest.mark.parametrize("text", ["@everyones", "@here_now", "x@everyone1", "@channelwide"])
def test_broadcast_mentions_glued_to_more_letters_are_neutralised(text: str) -> None:
    # discord.utils.escape_mentions treats these as @everyone / @here: so do we.
    inert = neutralize_mentions(text)
    assert "@\u200b" in inert
    assert inert.replace("\u200b", "") == text


def test_update_text_with_mentions_pings_nobody() -> None:
    update = make_update(
        texts={"en": UpdateText("@everyone strike!", "<@&2002> <!here> @here", "<@1001> rally")}
    )
    message = update_message(update, "en", CAMPAIGN)
    rendered = [message.title, message.body, *(f.value for f in message.fields)]
    assert not any(PING.search(part) for part in rendered)


@settings(max_examples=150, deadline=None)
@given(st.text())
def test_neutralised_text_never_pings(text: str) -> None:
    inert = neutralize_mentions(text)
    assert not PING.search(inert)
    assert inert.replace("\u200b", "") == text.replace("\u200b", "")


def test_fit_trims_at_a_word_boundary_with_a_link_to_the_full_text() -> None:
    text = "Teachers ask for a 6.5% raise retroactive to 2017 and smaller classes."
    url = "https://strike.example.org/updates/7"
    fitted = fit(text, 60, url, "en")
    assert len(fitted) <= 60
    assert fitted == "Teachers… full text: https://strike.example.org/updates/7"
    assert fit(text, 60, url, "es").endswith("… texto completo: " + url)
    assert fit(text, len(text), url, "en") == text
    assert fit(text, 20, None, "en") == "Teachers ask for a…"


@settings(max_examples=150, deadline=None)
@given(
    st.text(min_size=0, max_size=400),
    st.integers(min_value=0, max_value=300),
    st.sampled_from([None, "https://strike.example.org/updates/1"]),
)
def test_fit_never_exceeds_the_limit_and_keeps_a_prefix(
    text: str, limit: int, url: str | None
) -> None:
    fitted = fit(text, limit, url, "en")
    assert len(fitted) <= limit
    if len(text) <= limit:
        assert fitted == text
    else:
        kept = fitted.split("…")[0] if "…" in fitted else fitted
        assert text.startswith(kept)


@settings(max_examples=150, deadline=None)
@given(st.text(min_size=0, max_size=600), st.integers(min_value=1, max_value=120))
def test_split_pieces_fit_and_lose_nothing_but_whitespace(text: str, limit: int) -> None:
    pieces = split(text, limit)
    assert all(0 < len(piece) <= limit for piece in pieces)
    squash = re.compile(r"\s+")
    assert squash.sub("", "".join(pieces)) == squash.sub("", text)


def test_split_prefers_paragraphs() -> None:
    text = "First paragraph here.\n\nSecond paragraph, a bit longer than the first."
    assert split(text, 50) == [
        "First paragraph here.",
        "Second paragraph, a bit longer than the first.",
    ]
    with pytest.raises(ValueError, match="at least 1"):
        split(text, 0)


def test_many_long_fields_stay_inside_the_message_total() -> None:
    fields = tuple(Field(f"Demand {i}", "x " * 600) for i in range(25))
    message = replace(update_message(make_update(), "en", CAMPAIGN), fields=fields)
    for limits in (DISCORD_LIMITS, SLACK_LIMITS):
        fitted = fit_message(message, limits)
        total = (
            len(fitted.title)
            + len(fitted.body)
            + len(fitted.footer)
            + len(fitted.status_label)
            + sum(len(f.name) + len(f.value) for f in fitted.fields)
        )
        assert total <= limits.total
        assert fitted.fields  # the first ones are kept
        assert all(len(f.value) <= limits.field_value for f in fitted.fields)


def test_a_10000_character_body_fits_every_platform() -> None:
    body = " ".join(f"word{i}" for i in range(1700))[:10_000]
    assert len(body) == 10_000
    update = make_update(texts={"en": UpdateText("Long update", body, "Next")})
    message = update_message(update, "en", CAMPAIGN)
    every = [p.limits for p in installed_plugins().values() if p.limits is not None]
    assert DISCORD_LIMITS in every and SLACK_LIMITS in every
    for limits in every:
        fitted = fit_message(message, limits)
        assert len(fitted.body) <= limits.body
        if limits.body < len(body):
            assert fitted.body.endswith("full text: https://strike.example.org/updates/7")
        else:
            assert fitted.body == message.body
        total = (
            len(fitted.title)
            + len(fitted.body)
            + len(fitted.footer)
            + len(fitted.status_label)
            + sum(len(f.name) + len(f.value) for f in fitted.fields)
        )
        assert total <= limits.total
        assert fitted.fields == message.fields  # short fields are untouched
    # As plain 2000-character Discord messages, it goes out in pieces, none rejected.
    pieces = split(body, 2000)
    assert len(pieces) == 6
    assert all(len(p) <= 2000 for p in pieces)


# ------------------------------------------------------------ links in the reader's language
# Every message links to the update's page in the reader's language.


async def test_spanish_messages_link_to_the_spanish_page(
    sqlite_store: Store, clock: FixedClock
) -> None:
    admin = Admin(sqlite_store, CAMPAIGN, ADMINS, clock)
    update = await admin.post(
        ADMIN,
        Draft(
            Status.STRIKE_ON,
            {"en": UpdateText("On strike"), "es": UpdateText("En huelga")},
        ),
    )
    base = CAMPAIGN.public_url
    assert update_url(update, CAMPAIGN) == f"{base}/updates/{update.id}"
    assert update_message(update, "en", CAMPAIGN).url == f"{base}/updates/{update.id}"
    assert update_message(update, "es-MX", CAMPAIGN).url == f"{base}/es/updates/{update.id}"
    assert correction_message(update, "es", CAMPAIGN).url == f"{base}/es/updates/{update.id}"


def test_a_translation_without_body_or_next_step_falls_back_to_the_original() -> None:
    from datetime import UTC, datetime

    from bot.models import Update, UpdateState, Urgency

    update = Update(
        id=1,
        status=Status.STRIKE_ON,
        urgency=Urgency.URGENT,
        texts={
            "en": UpdateText("Strike resumes Monday", "Picket at 6:30 AM.", "Rally at noon"),
            "es": UpdateText("La huelga se reanuda el lunes"),
        },
        author="cli",
        created_at=datetime(2019, 1, 18, tzinfo=UTC),
        state=UpdateState.PUBLISHED,
    )
    spanish = update.text("es")
    assert spanish.headline == "La huelga se reanuda el lunes"
    assert spanish.body == "Picket at 6:30 AM."
    assert spanish.next_step == "Rally at noon"
    assert update.text("en").body == "Picket at 6:30 AM."
    assert update.text("fr") == update.texts["en"]


async def test_the_main_language_is_stored_first_whatever_order_it_was_written_in(
    sqlite_store: Store, clock: FixedClock
) -> None:
    admin = Admin(sqlite_store, CAMPAIGN, ADMINS, clock)
    update = await admin.post(
        ADMIN,
        Draft(
            Status.STRIKE_ON,
            {"es": UpdateText("En huelga"), "en": UpdateText("On strike", "Picket at 6.")},
        ),
    )
    assert list(update.texts) == ["en", "es"]
    assert update.text("es").body == "Picket at 6."
