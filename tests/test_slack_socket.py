"""Slack in Socket Mode: the real slack-bolt handler and slack-sdk's aiohttp WebSocket client
connect to the fake Slack (apps.connections.open → ws://127.0.0.1), which sends envelopes
and records the app's acks by envelope_id."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bot.clock import FixedClock
from bot.errors import ConfigError
from bot.store import Store
from tests.fakes.slack import (
    FakeSlack,
    SlackBot,
    chosen,
    message_error,
    slash_command,
    typed,
    view_errors,
    view_submission,
)


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as fake:
        fake.add_channel("C0GENERAL")
        fake.add_user("U0MEMBER", "maria")
        fake.add_user("U0ADMIN", "alex")
        yield fake


@pytest.fixture
async def bot(sqlite_store: Store, clock: FixedClock, slack: FakeSlack) -> AsyncIterator[SlackBot]:
    async with SlackBot(sqlite_store, clock, slack, mode="socket") as running:
        yield running


async def test_the_app_connects_through_apps_connections_open(
    bot: SlackBot, slack: FakeSlack
) -> None:
    await slack.wait_connected()
    [opened] = slack.calls_to("apps.connections.open")
    assert opened.token == slack.app_token
    health = bot.adapter.health()
    assert health["mode"] == "socket" and health["connected"] is True
    assert health["team_id"] == "T0STRIKE"


async def test_a_slash_command_envelope_is_acked_with_the_answer(
    bot: SlackBot, slack: FakeSlack
) -> None:
    envelope = await slack.send_envelope("slash_commands", slash_command(slack, "help"))
    ack = await slack.wait_ack(envelope)
    assert ack["envelope_id"] == envelope
    answer = ack["payload"]
    assert answer["response_type"] == "ephemeral"
    assert message_error(answer) is None
    assert "/strike status" in answer["text"]


async def test_a_redelivered_envelope_is_handled_once(bot: SlackBot, slack: FakeSlack) -> None:
    fields = slash_command(slack, "subscribe", user="U0ADMIN")
    first = await slack.send_envelope("slash_commands", fields)
    assert "blocks" in (await slack.wait_ack(first))["payload"]
    again = await slack.send_envelope("slash_commands", fields, retry_attempt=1)
    assert "payload" not in await slack.wait_ack(again)  # acked, and nothing else
    async with bot.store.read() as tx:
        saves = [e for e in await tx.list_audit() if e.action == "subscription.save"]
        [sub] = await tx.list_subscriptions(platform="slack")
    assert len(saves) == 1
    assert (sub.workspace, sub.channel) == ("T0STRIKE", "C0GENERAL")


async def test_a_form_submission_envelope_gets_its_next_view(
    bot: SlackBot, slack: FakeSlack
) -> None:
    opened = await slack.send_envelope(
        "slash_commands", slash_command(slack, "post", user="U0ADMIN")
    )
    assert "payload" not in await slack.wait_ack(opened)  # the form opened instead
    form = slack.views[list(slack.views)[-1]]
    submitted = view_submission(
        form,
        {"status": chosen(form, "status", "strike_on"), "headline": typed("Day 3 on the line")},
        user_name="alex",
    )
    envelope = await slack.send_envelope("interactive", submitted)
    answer = (await slack.wait_ack(envelope))["payload"]
    assert answer["response_action"] == "push"
    assert view_errors(answer["view"]) == []
    confirmed = await slack.send_envelope(
        "interactive", view_submission(answer["view"], {}, user_name="alex")
    )
    result = (await slack.wait_ack(confirmed))["payload"]
    assert result["response_action"] == "update"
    async with bot.store.read() as tx:
        [update] = await tx.list_updates(bot.clock())
    assert update.text("en").headline == "Day 3 on the line"
    assert update.author == "slack:U0ADMIN (alex)"


async def test_a_refresh_request_reconnects(bot: SlackBot, slack: FakeSlack) -> None:
    await slack.wait_connections(1)
    await slack.request_reconnect()
    await slack.wait_connections(2, within=20)  # a hang guard: the SDK reconnects in its own time
    assert len(slack.calls_to("apps.connections.open")) == 2
    envelope = await slack.send_envelope("slash_commands", slash_command(slack, "help"))
    assert "payload" in await slack.wait_ack(envelope)


async def test_a_refused_app_token_stops_start_with_a_clear_sentence(
    sqlite_store: Store, clock: FixedClock, slack: FakeSlack
) -> None:
    with pytest.raises(ConfigError, match="SLACK_APP_TOKEN"):
        async with SlackBot(
            sqlite_store, clock, slack, mode="socket", env={"SLACK_APP_TOKEN": "xapp-wrong"}
        ):
            pass
    assert slack.connections == 0
