"""Rendering for Slack, checked against Slack's own rules as the fake applies them: limits,
escaping (mentions stay inert), retractions struck through, modal views Slack would open;
and choosing the connection mode from the environment."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.slack import SlackSettings, api_base, connection_mode, escape, render
from adapters.slack import _modals as modals
from bot.errors import ConfigError
from bot.messages.compose import update_message
from bot.models import Status, Update, UpdateState, UpdateText, Urgency
from bot.ports import Field, Link, MessageKind, OutboundMessage
from tests.fakes.slack import live_mentions, message_error, view_errors
from tests.support import CAMPAIGN

NOW = datetime(2019, 1, 18, 18, 0, tzinfo=UTC)


def update(n: int, headline: str, state: UpdateState = UpdateState.PUBLISHED) -> Update:
    return Update(
        id=n,
        status=Status.STRIKE_ON,
        urgency=Urgency.ROUTINE,
        texts={"en": UpdateText(headline, "Body"), "es": UpdateText("Titular", "Cuerpo")},
        author="slack:U0ADMIN",
        created_at=NOW,
        state=state,
        published_at=NOW,
    )


def test_escaping_keeps_text_readable_and_inert() -> None:
    text = "Pay & class size <!here> <@U123> <!subteam^S1|comms> @channel"
    escaped = escape(text)
    assert "&amp;" in escaped and "&lt;" in escaped and "<" not in escaped
    assert live_mentions({"text": escaped, "link_names": True}) == []
    assert live_mentions({"text": text}) != []  # the same text unescaped would ping


@settings(max_examples=200, deadline=None)
@given(
    title=st.text(max_size=400),
    body=st.text(max_size=9000),
    fields=st.lists(st.tuples(st.text(max_size=200), st.text(max_size=3000)), max_size=25),
    footer=st.text(max_size=400),
    link_labels=st.lists(st.text(max_size=100), max_size=12),
)
def test_any_message_renders_into_something_slack_accepts(
    title: str, body: str, fields: list[tuple[str, str]], footer: str, link_labels: list[str]
) -> None:
    message = OutboundMessage(
        title=title or "x",
        body=body,
        kind=MessageKind.UPDATE,
        status=Status.STRIKE_ON,
        status_label="On strike",
        fields=tuple(Field(n, v, inline=len(v) % 2 == 0) for n, v in fields),
        url="https://strike.example.org/updates/1",
        footer=footer,
        links=tuple(Link(label, "https://strike.example.org/") for label in link_labels),
    )
    rendered = render(message)
    sent = {"text": rendered.text, "blocks": rendered.blocks, "parse": "none"}
    assert message_error(sent) is None
    assert live_mentions(sent) == []


def test_a_long_body_is_split_then_trimmed_with_a_link() -> None:
    message = OutboundMessage(
        title="Bargaining report",
        body="\n\n".join(f"Paragraph {i}. " + "word " * 500 for i in range(40)),
        url="https://strike.example.org/updates/7",
    )
    blocks = render(message).blocks
    sections = [b for b in blocks if b["type"] == "section"]
    assert len(sections) > 1
    assert all(len(b["text"]["text"]) <= 3000 for b in sections)
    assert "https://strike.example.org/updates/7" in json.dumps(blocks)


def test_a_reply_with_extras_stays_within_fifty_blocks() -> None:
    from adapters.slack._blocks import render_all

    many = [
        OutboundMessage(title=f"Demand {i}", body="x", fields=(Field("a", "b"),)) for i in range(30)
    ]
    rendered = render_all(many)
    assert len(rendered.blocks) <= 50
    assert message_error(rendered.payload()) is None


def test_a_retracted_update_strikes_the_original_through() -> None:
    gone = replace(
        update(3, "Strike Monday"),
        state=UpdateState.RETRACTED,
        retraction_reason="Posted in error",
        retracted_at=NOW,
    )
    blocks = render(update_message(gone, "en", CAMPAIGN)).blocks
    shown = json.dumps(blocks)
    assert blocks[0]["text"]["text"].startswith("RETRACTED")
    assert "~Strike Monday~" in shown and "Posted in error" in shown
    assert ":no_entry_sign:" in shown


def test_links_that_could_break_out_are_shown_as_text() -> None:
    message = OutboundMessage(
        title="t",
        links=(
            Link("Status page", "https://strike.example.org/"),
            Link("evil", "https://x.example/|<!channel>"),
        ),
    )
    context = render(message).blocks[-1]["elements"][0]["text"]
    assert "<https://strike.example.org/|Status page>" in context
    assert "evil" in context and "!channel>" not in context


def test_the_post_form_and_its_preview_are_views_slack_opens() -> None:
    form = modals.post_form("es", CAMPAIGN, Status.STRIKE_ON, modals.encode_meta(c="C1", l="es"))
    assert view_errors(form) == []
    assert form["title"]["text"] == "Publicar actualización"
    status = next(b for b in form["blocks"] if b["block_id"] == "status")
    assert status["element"]["initial_option"]["value"] == "strike_on"
    assert {"headline_es", "body_es", "next_step_es"} <= {b["block_id"] for b in form["blocks"]}
    previews = [update_message(update(0, "Huge " * 400), lang, CAMPAIGN) for lang in ("en", "es")]
    confirm = modals.confirm_view("en", "Check it", previews, "post", modals.encode_meta(d="x"))
    assert view_errors(confirm) == []


def test_the_update_picker_fits_slacks_option_limits() -> None:
    updates = [update(n, "A very long headline about bargaining " * 5) for n in range(1, 101)]
    updates[0] = update(1, "Awaiting", UpdateState.PENDING_APPROVAL)
    picker = modals.pick_form("edit", "en", updates, CAMPAIGN, "{}", preselect=5)
    assert view_errors(picker) == []
    options = picker["blocks"][0]["element"]["options"]
    assert options[0]["text"]["text"].endswith("(awaiting approval)")
    assert picker["blocks"][0]["element"]["initial_option"]["value"] == "5"


def test_what_a_form_returns_is_read_back() -> None:
    view = {
        "state": {
            "values": {
                "headline": {"value": {"type": "plain_text_input", "value": "  "}},
                "status": {
                    "value": {"type": "static_select", "selected_option": {"value": "strike_on"}}
                },
                "publish_at": {
                    "value": {"type": "datetimepicker", "selected_date_time": 1548000000}
                },
                "correction": {
                    "value": {"type": "checkboxes", "selected_options": [{"value": "yes"}]}
                },
            }
        }
    }
    values = modals.view_values(view)
    assert values == {
        "headline": None,
        "status": "strike_on",
        "publish_at": 1548000000,
        "correction": ["yes"],
    }
    assert modals.picked_time(values["publish_at"]) == datetime(2019, 1, 20, 16, 0, tzinfo=UTC)


def settings_with(**env: str) -> SlackSettings:
    return SlackSettings.from_env({"SLACK_BOT_TOKEN": "xoxb-1", **env})


def test_the_connection_mode_follows_the_tokens() -> None:
    assert connection_mode("auto", settings_with(SLACK_APP_TOKEN="xapp-1")) == "socket"
    assert connection_mode("auto", settings_with(SLACK_SIGNING_SECRET="s")) == "http"
    both = settings_with(SLACK_APP_TOKEN="xapp-1", SLACK_SIGNING_SECRET="s")
    assert connection_mode("http", both) == "http"
    with pytest.raises(ConfigError, match="SLACK_APP_TOKEN"):
        connection_mode("socket", settings_with(SLACK_SIGNING_SECRET="s"))
    with pytest.raises(ConfigError, match=r"HTTP mode .* SLACK_SIGNING_SECRET"):
        connection_mode("http", settings_with(SLACK_APP_TOKEN="xapp-1"))
    with pytest.raises(ConfigError, match="SLACK_SIGNING_SECRET"):
        connection_mode("auto", settings_with())


def test_the_api_url_can_point_elsewhere() -> None:
    assert api_base(None) == "https://slack.com/api/"
    assert api_base("https://slack-gov.com/api") == "https://slack-gov.com/api/"
