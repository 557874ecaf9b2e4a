"""OutboundMessage → embed: Discord's limits always hold, text stays literal, status colours."""

from __future__ import annotations

import discord
from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.discord import render_embed, render_embeds
from adapters.discord._render import RETRACTED_COLOUR, TOTAL_MAX
from bot import i18n
from bot.models import Status, Urgency
from bot.ports import Field, Link, MessageKind, OutboundMessage
from tests.fakes.discord import invalid_form

URL = "https://strike.example.org/updates/12"


def payload(embeds: list[discord.Embed]) -> dict[str, object]:
    return {"embeds": [e.to_dict() for e in embeds]}


def test_each_status_has_its_colour() -> None:
    for status in Status:
        embed = render_embed(OutboundMessage(title="x", status=status))
        assert embed.colour is not None and embed.colour.value == i18n.STATUS_COLOURS[status]


def test_urgent_updates_say_so_above_the_title() -> None:
    message = OutboundMessage(
        title="Strike starts Monday",
        status=Status.STRIKE_VOTE,
        status_label="Strike vote",
        urgency=Urgency.URGENT,
    )

    embed = render_embed(message)

    assert embed.author.name == "🔴 Urgent · Strike vote"


def test_markdown_in_plain_text_is_shown_literally_and_links_still_work() -> None:
    message = OutboundMessage(
        title="Pay *and* class size",
        body="Read __this__: https://strike.example.org/a_b_c",
        links=(Link("Status page", "https://strike.example.org/"),),
    )

    embed = render_embed(message)

    assert embed.title == "Pay \\*and\\* class size"
    assert embed.description is not None
    assert "\\_\\_this\\_\\_" in embed.description
    assert "https://strike.example.org/a_b_c" in embed.description
    assert embed.description.endswith("[Status page](https://strike.example.org/)")


def test_a_retraction_is_grey_and_strikes_the_withdrawn_text() -> None:
    message = OutboundMessage(
        title="RETRACTED: Strike Monday",
        kind=MessageKind.RETRACTION,
        retracted=True,
        fields=(Field("Original text (withdrawn)", "Strike Monday\n\nAll schools"),),
    )

    embed = render_embed(message)

    assert embed.colour is not None and embed.colour.value == RETRACTED_COLOUR
    assert embed.fields[0].value == "~~Strike Monday~~\n\n~~All schools~~"


def test_everything_oversized_is_cut_to_discords_limits_pointing_at_the_full_text() -> None:
    message = OutboundMessage(
        title="headline " * 60,
        body="body text " * 1500,
        fields=tuple(Field("name " * 80, "value " * 400) for _ in range(40)),
        footer="footer " * 500,
        url=URL,
    )

    embed = render_embed(message)

    assert invalid_form(payload([embed])) is None
    assert len(embed) <= TOTAL_MAX
    assert len(embed.fields) <= 25
    assert embed.description is not None and embed.description.endswith(f"full text: {URL}")


def test_several_messages_share_one_6000_character_budget() -> None:
    big = OutboundMessage(title="A", body="word " * 1000, url=URL)

    embeds = render_embeds([big, big, big, big])

    assert invalid_form(payload(embeds)) is None
    assert sum(len(e) for e in embeds) <= TOTAL_MAX


def test_a_later_messages_title_badge_and_footer_also_fit_what_is_left() -> None:
    big = OutboundMessage(title="A" * 256, body="word " * 1000, url=URL)  # ~4350 characters
    late = OutboundMessage(
        title="B" * 256, body="b", footer="F " * 1000, urgency=Urgency.URGENT, url=URL
    )

    embeds = render_embeds([big, late])

    assert invalid_form(payload(embeds)) is None
    assert sum(len(e) for e in embeds) <= TOTAL_MAX


_text = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=3000)


@settings(max_examples=60, deadline=None)
@given(
    title=_text,
    body=st.text(max_size=12000),
    fields=st.lists(st.tuples(_text, _text, st.booleans()), max_size=30),
    footer=_text,
    retracted=st.booleans(),
)
def test_any_message_renders_to_an_embed_discord_accepts(
    title: str,
    body: str,
    fields: list[tuple[str, str, bool]],
    footer: str,
    retracted: bool,
) -> None:
    message = OutboundMessage(
        title=title,
        body=body,
        fields=tuple(Field(n, v, i) for n, v, i in fields),
        footer=footer,
        url=URL,
        retracted=retracted,
    )

    embeds = render_embeds([message, message])

    assert invalid_form(payload(embeds)) is None
