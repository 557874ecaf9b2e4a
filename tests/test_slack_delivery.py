"""Pushing updates into Slack: the adapter's send/edit/delete through the real slack-sdk client
against the fake Slack, and the real dispatcher delivering a form's post to every channel."""

from __future__ import annotations

import json
import random
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest

from bot.clock import FixedClock
from bot.delivery.dispatcher import Dispatcher, Timings
from bot.editorial.admin import Changes, Draft
from bot.errors import PermanentDeliveryError, TransientDeliveryError
from bot.messages.compose import update_message
from bot.models import (
    DeliveryState,
    Status,
    Subscription,
    UpdateText,
    Urgency,
)
from bot.ports import ChannelRef, Field, MessageKind, OutboundMessage
from bot.store import Store
from tests.fakes.slack import FakeSlack, SlackBot, chosen, message_error, typed, view_errors
from tests.support import CAMPAIGN, SECOND_ADMIN

TEAM = "T0STRIKE"
NOTICE = OutboundMessage(title="Picket at 6:30", body="Bring water.", kind=MessageKind.UPDATE)


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as fake:
        for channel in ("C0ONE", "C0TWO", "C0ESPANOL"):
            fake.add_channel(channel)
        fake.add_channel("C0OLD", archived=True)
        fake.add_channel("C0PRIVATE", member=False, private=True)
        fake.add_channel("C0PUBLIC", member=False)
        fake.add_user("U0ADMIN", "alex")
        yield fake


@pytest.fixture
async def bot(sqlite_store: Store, clock: FixedClock, slack: FakeSlack) -> AsyncIterator[SlackBot]:
    # Patient: on a loaded machine a slow answer must not look like a timeout (and be retried).
    async with SlackBot(sqlite_store, clock, slack, request_timeout=10.0) as running:
        yield running


@pytest.fixture
async def impatient_bot(
    sqlite_store: Store, clock: FixedClock, slack: FakeSlack
) -> AsyncIterator[SlackBot]:
    """For the test that waits for the request timeout to pass: keep it short."""
    async with SlackBot(sqlite_store, clock, slack, request_timeout=0.5) as running:
        yield running


def where(channel: str) -> ChannelRef:
    return ChannelRef(TEAM, channel)


# ---------------------------------------------------------------------------- the adapter


async def test_send_returns_the_ts_and_edit_and_delete_use_it(
    bot: SlackBot, slack: FakeSlack
) -> None:
    ts = await bot.adapter.send(where("C0ONE"), NOTICE, idempotency_key="d0000000000000000001")
    [posted] = slack.messages("C0ONE")
    assert posted["ts"] == ts
    assert posted["blocks"][0] == {
        "type": "header",
        "text": {"type": "plain_text", "text": "Picket at 6:30", "emoji": True},
    }
    assert posted["metadata"]["event_payload"] == {"delivery": "d0000000000000000001"}
    assert posted["parse"] == "none" and posted["link_names"] is False

    await bot.adapter.edit(where("C0ONE"), ts, OutboundMessage(title="Picket at 7:00"))
    [edited] = slack.messages("C0ONE")
    assert edited["ts"] == ts and edited["blocks"][0]["text"]["text"] == "Picket at 7:00"

    await bot.adapter.delete(where("C0ONE"), ts)
    assert slack.messages("C0ONE") == []
    await bot.adapter.delete(where("C0ONE"), ts)  # already gone: nothing left to do


async def test_a_copy_in_doubt_is_found_by_its_metadata_while_history_can_be_read(
    bot: SlackBot, slack: FakeSlack
) -> None:
    ts = await bot.adapter.send(where("C0ONE"), NOTICE, idempotency_key="d0000000000000000007")
    await bot.adapter.send(where("C0ONE"), NOTICE, idempotency_key="d0000000000000000008")
    since = datetime(2019, 1, 1, tzinfo=UTC)

    found = await bot.adapter.find_sent(where("C0ONE"), "d0000000000000000007", NOTICE, since=since)
    elsewhere = await bot.adapter.find_sent(
        where("C0TWO"), "d0000000000000000007", NOTICE, since=since
    )

    assert found == ts and elsewhere is None
    # Without the history scope the copy cannot be looked for: it is sent again (the
    # documented window), and Slack is not asked again.
    slack.scopes.clear()
    for _ in range(2):
        assert (
            await bot.adapter.find_sent(where("C0ONE"), "d0000000000000000007", NOTICE, since=since)
            is None
        )
    history = [c for c in slack.calls if c.method == "conversations.history"]
    assert [c.error for c in history] == [None, None, "missing_scope"]


async def test_a_rate_limit_is_transient_and_pauses_the_method(
    bot: SlackBot, slack: FakeSlack
) -> None:
    slack.rate_limit("chat.postMessage", retry_after=7)
    with pytest.raises(TransientDeliveryError) as limited:
        await bot.adapter.send(where("C0ONE"), NOTICE, idempotency_key="d1")
    assert limited.value.retry_after == 7
    assert limited.value.is_global  # Slack's limits are per method per workspace
    calls = len(slack.calls_to("chat.postMessage"))
    with pytest.raises(TransientDeliveryError) as waiting:
        await bot.adapter.send(where("C0TWO"), NOTICE, idempotency_key="d2")
    assert 0 < (waiting.value.retry_after or 0) <= 7
    assert len(slack.calls_to("chat.postMessage")) == calls  # Slack was not asked again
    assert "chat.postMessage" in bot.adapter.health()["rate_limited_s"]  # type: ignore[operator]


async def check_transient_then_passes(
    bot: SlackBot, slack: FakeSlack, error: str | None, **kwargs: Any
) -> None:
    slack.fail("chat.postMessage", error, **kwargs)
    with pytest.raises(TransientDeliveryError):
        await bot.adapter.send(where("C0ONE"), NOTICE, idempotency_key="d3")
    assert slack.messages("C0ONE") == []
    ts = await bot.adapter.send(where("C0ONE"), NOTICE, idempotency_key="d3")  # it passes
    assert [m["ts"] for m in slack.messages("C0ONE")] == [ts]


@pytest.mark.parametrize(
    ("error", "kwargs"),
    [(None, {"status": 503}), ("internal_error", {})],
    ids=["5xx", "internal_error"],
)
async def test_server_trouble_is_transient(
    bot: SlackBot, slack: FakeSlack, error: str | None, kwargs: dict[str, Any]
) -> None:
    await check_transient_then_passes(bot, slack, error, **kwargs)


@pytest.mark.parametrize(
    ("status", "raw"),
    [
        (503, ("text/plain", "upstream connect error or disconnect/reset before headers")),
        (502, ("text/html", "<html><body><h1>502 Bad Gateway</h1></body></html>")),
        (404, ("text/html", "<html>404 Not Found (nginx)</html>")),
        (400, ("text/plain", "Bad Request")),
        (503, ("application/json", '{"ok": false, "err')),
        (200, ("text/plain", "OK")),
        (200, ("text/html", "<html>Sign in to the Wi-Fi</html>")),
        (200, ("application/json", '{"ok": true}')),
    ],
)
async def test_an_answer_that_is_not_slacks_json_is_retried(
    bot: SlackBot, slack: FakeSlack, status: int, raw: tuple[str, str]
) -> None:
    """Nothing in such an answer says the channel is unusable: retried, never parked."""
    slack.fail("chat.postMessage", status=status, raw=raw)
    with pytest.raises(TransientDeliveryError) as caught:
        await bot.adapter.send(where("C0ONE"), NOTICE, idempotency_key="d6")
    assert raw[1] not in caught.value.reason
    ts = await bot.adapter.send(where("C0ONE"), NOTICE, idempotency_key="d6")  # it passes
    assert ts in [m["ts"] for m in slack.messages("C0ONE")]


async def test_a_request_that_gets_no_answer_is_transient_and_in_doubt(
    impatient_bot: SlackBot, slack: FakeSlack
) -> None:
    slack.fail("chat.postMessage", None, hang=True)
    with pytest.raises(TransientDeliveryError) as failure:
        await impatient_bot.adapter.send(where("C0ONE"), NOTICE, idempotency_key="d3")
    # Slack may have posted it: the dispatcher looks for the copy before sending again.
    assert failure.value.in_doubt
    await check_transient_then_passes(impatient_bot, slack, None, hang=True)


@pytest.mark.parametrize(
    ("channel", "code"),
    [
        ("C0GONE", "channel_not_found"),
        ("C0PRIVATE", "channel_not_found"),  # a private channel the bot was not invited to
        ("C0PUBLIC", "not_in_channel"),  # public, not invited, no chat:write.public
        ("C0OLD", "is_archived"),
    ],
)
async def test_a_channel_that_cannot_take_messages_is_permanent(
    bot: SlackBot, slack: FakeSlack, channel: str, code: str
) -> None:
    slack.scopes.discard("chat:write.public")
    with pytest.raises(PermanentDeliveryError) as refused:
        await bot.adapter.send(where(channel), NOTICE, idempotency_key="d4")
    assert refused.value.reason.startswith(code)
    assert channel in refused.value.reason
    assert bot.adapter.health()["connected"] is True  # one channel, not the workspace


@pytest.mark.parametrize("code", ["account_inactive", "invalid_auth", "token_revoked"])
async def test_a_refused_token_is_permanent_and_shows_in_health(
    bot: SlackBot, slack: FakeSlack, code: str
) -> None:
    slack.fail("chat.postMessage", code)
    with pytest.raises(PermanentDeliveryError) as refused:
        await bot.adapter.send(where("C0ONE"), NOTICE, idempotency_key="d5")
    assert "SLACK_BOT_TOKEN" in refused.value.reason
    health = bot.adapter.health()
    assert health["auth_error"] == code and health["connected"] is False


async def test_a_long_update_fits_slacks_limits_and_links_to_the_full_text(
    bot: SlackBot, slack: FakeSlack
) -> None:
    long = OutboundMessage(
        title="A" * 400,
        body=("Class sizes & nurses <in every school>. " * 1500).strip(),
        kind=MessageKind.UPDATE,
        status=Status.STRIKE_ON,
        status_label="On strike",
        fields=tuple(Field(f"Fact {i}", "x" * 2500, inline=i % 2 == 0) for i in range(30)),
        url="https://strike.example.org/updates/9",
    )
    await bot.adapter.send(where("C0ONE"), long, idempotency_key="d6")
    [posted] = slack.messages("C0ONE")
    assert message_error(posted) is None
    assert len(posted["blocks"]) <= 50
    assert len(posted["blocks"][0]["text"]["text"]) <= 150
    assert "https://strike.example.org/updates/9" in json.dumps(posted["blocks"])
    assert "&lt;in every school&gt;" in posted["blocks"][2]["text"]["text"]


async def test_mentions_in_an_update_notify_nobody(bot: SlackBot, slack: FakeSlack) -> None:
    sneaky = OutboundMessage(
        title="<!channel> strike now @here",
        body="Tell <@U0ADMIN> and <!subteam^S0COMMS|comms> and @channel and <!everyone>.",
        kind=MessageKind.UPDATE,
        fields=(Field("<!here>", "@everyone <@W0123>"),),
    )
    await bot.adapter.send(where("C0ONE"), sneaky, idempotency_key="d7")
    assert slack.pings() == []
    [posted] = slack.messages("C0ONE")
    shown = json.dumps(posted["blocks"])
    assert "!channel" in shown and "@U0ADMIN" in shown  # still readable, just inert


# ---------------------------------------------------------------------------- with the dispatcher


def dispatcher(bot: SlackBot) -> Dispatcher:
    return Dispatcher(
        bot.store,
        {"slack": bot.adapter},
        bot.ctx.campaign,
        bot.clock,
        settings=bot.config.delivery,
        worker_id="slack-test",
        rng=random.Random(5),
        timings=Timings(retry_base=0.01, retry_cap=0.05, send_timeout=5.0),
    )


async def subscribe(bot: SlackBot, channel: str, language: str = "en") -> Subscription:
    return await bot.admin.subscribe(
        SECOND_ADMIN, Subscription(0, "slack", TEAM, channel, language)
    )


async def test_a_form_post_reaches_every_subscribed_channel_once(
    bot: SlackBot, slack: FakeSlack
) -> None:
    for channel, language in (("C0ONE", "en"), ("C0TWO", "en"), ("C0ESPANOL", "es")):
        await subscribe(bot, channel, language)
    await bot.admin.subscribe(SECOND_ADMIN, Subscription(0, "discord", "g1", "c1", "en"))
    response = await bot.command("post", user="U0ADMIN")
    assert response.status == 200 and response.text == ""
    form = slack.views[list(slack.views)[-1]]
    preview = (
        await bot.submit(
            form,
            {
                "status": chosen(form, "status", "strike_on"),
                "urgency": chosen(form, "urgency", "urgent"),
                "headline": typed("We strike Monday <!channel>"),
                "headline_es": typed("Huelga el lunes"),
            },
        )
    ).json()["view"]
    assert view_errors(preview) == []
    assert (await bot.submit(preview, {})).json()["response_action"] == "update"

    stats = await dispatcher(bot).drain()
    again = await dispatcher(bot).drain()

    for channel in ("C0ONE", "C0TWO"):
        [message] = slack.messages(channel)
        assert message["blocks"][0]["text"]["text"].startswith("We strike Monday")
    [spanish] = slack.messages("C0ESPANOL")
    assert spanish["blocks"][0]["text"]["text"] == "Huelga el lunes"
    assert slack.pings() == []
    assert len(slack.calls_to("chat.postMessage")) == 3
    assert stats.sent == 3 and stats.dead == 0  # the Discord row is not Slack's to send
    assert again.sent == 0
    async with bot.store.read() as tx:
        sent = [d for d in await tx.list_deliveries() if d.platform == "slack"]
        subs = {s.id: s.channel for s in await tx.list_subscriptions()}
    by_channel = {subs[d.subscription_id]: d for d in sent}
    assert {d.state for d in sent} == {DeliveryState.SENT}
    for channel in ("C0ONE", "C0TWO", "C0ESPANOL"):
        assert by_channel[channel].platform_message_id == slack.messages(channel)[0]["ts"]


async def test_a_deleted_channel_is_parked_as_dead(bot: SlackBot, slack: FakeSlack) -> None:
    good = await subscribe(bot, "C0ONE")
    gone = await subscribe(bot, "C0GONE")  # deleted in Slack since it subscribed
    await bot.admin.post(
        SECOND_ADMIN,
        Draft(Status.STRIKE_ON, {"en": UpdateText("Day 5")}, Urgency.URGENT),
    )
    await dispatcher(bot).drain()
    async with bot.store.read() as tx:
        [dead] = await tx.list_deliveries(subscription_id=gone.id)
        [sent] = await tx.list_deliveries(subscription_id=good.id)
        broken = await tx.get_subscription(gone.id)
    assert dead.state is DeliveryState.DEAD
    assert dead.last_error is not None and "channel_not_found" in dead.last_error
    assert broken is not None and broken.broken_reason is not None
    assert sent.state is DeliveryState.SENT
    assert len(slack.messages("C0ONE")) == 1
    assert len(slack.calls_to("chat.postMessage")) == 2  # one try at the dead channel, no more


async def test_edits_and_retractions_change_the_posted_message_in_place(
    bot: SlackBot, slack: FakeSlack
) -> None:
    await subscribe(bot, "C0ONE")
    update = await bot.admin.post(
        SECOND_ADMIN, Draft(Status.STRIKE_ON, {"en": UpdateText("Picket at 6:30")}, Urgency.URGENT)
    )
    await dispatcher(bot).drain()
    [posted] = slack.messages("C0ONE")
    await bot.admin.edit(
        SECOND_ADMIN,
        update.id,
        Changes(texts={"en": UpdateText("Picket at 7:00")}),
        reason="Wrong time",
    )
    await dispatcher(bot).drain()
    [edited] = slack.messages("C0ONE")
    assert edited["ts"] == posted["ts"]
    assert edited["blocks"][0]["text"]["text"] == "Picket at 7:00"
    await bot.admin.retract(SECOND_ADMIN, update.id, reason="Called off")
    await dispatcher(bot).drain()
    [retracted] = slack.messages("C0ONE")
    assert retracted["ts"] == posted["ts"]
    assert retracted["blocks"][0]["text"]["text"].startswith("RETRACTED")
    assert "~Picket at 7:00~" in json.dumps(retracted["blocks"])
    assert len(slack.calls_to("chat.postMessage")) == 1


async def test_a_rendered_update_message_is_accepted_by_slack(
    bot: SlackBot, slack: FakeSlack
) -> None:
    update = await bot.admin.post(
        SECOND_ADMIN,
        Draft(
            Status.TALKS_SCHEDULED,
            {"en": UpdateText("Talks Saturday", "At City Hall.", "Rally at 9")},
            Urgency.IMPORTANT,
        ),
    )
    message = update_message(update, "en", CAMPAIGN)
    await bot.adapter.send(where("C0ONE"), message, idempotency_key="d8")
    [posted] = slack.messages("C0ONE")
    assert message_error(posted) is None
    assert "Rally at 9" in json.dumps(posted["blocks"])
