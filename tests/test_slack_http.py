"""Slack in HTTP mode, end to end: signed requests shaped like Slack's into the real slack-bolt
app mounted on a real aiohttp server, the Web API answered by the fake Slack on 127.0.0.1."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import ClientSession, web
from sqlalchemy import func, select

from bot import i18n
from bot.clock import FixedClock
from bot.editorial.admin import Changes, Draft
from bot.models import Status, Subscription, UpdateState, UpdateText, Urgency
from bot.store import Store
from bot.store.schema import processed_events
from tests.fakes.slack import (
    SIGNING_SECRET,
    FakeSlack,
    SlackBot,
    chosen,
    form_body,
    live_mentions,
    message_error,
    picked_at,
    sign,
    slash_command,
    ticked,
    typed,
    view_errors,
)
from tests.support import SECOND_ADMIN

SLACK_ADMIN = SECOND_ADMIN  # U0ADMIN, listed under [admins.slack] user_ids


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as fake:
        for channel in ("C0GENERAL", "C0ESPANOL"):
            fake.add_channel(channel)
        fake.add_user("U0MEMBER", "maria")
        fake.add_user("U0ADMIN", "alex")
        fake.add_user("U0COMMS", "comms")
        fake.add_user("U0ROSA", "rosa", locale="es-LA")
        fake.add_usergroup("S0COMMS", ["U0COMMS"])
        yield fake


@pytest.fixture
async def bot(sqlite_store: Store, clock: FixedClock, slack: FakeSlack) -> AsyncIterator[SlackBot]:
    async with SlackBot(sqlite_store, clock, slack) as running:
        yield running


def all_text(payload: dict[str, Any]) -> str:
    return json.dumps(payload, ensure_ascii=False)


async def post_update(bot: SlackBot, headline: str = "The strike continues Tuesday") -> int:
    update = await bot.admin.post(
        SLACK_ADMIN,
        Draft(
            Status.STRIKE_ON,
            {"en": UpdateText(headline, "Picket at 6:30 AM."), "es": UpdateText("Sigue la huelga")},
            Urgency.IMPORTANT,
        ),
    )
    return update.id


# ---------------------------------------------------------------------------- answering


async def test_status_is_answered_in_block_kit_in_the_channel(bot: SlackBot) -> None:
    await post_update(bot)
    response = await bot.command("status")
    assert response.status == 200
    reply = response.json()
    assert reply["response_type"] == "in_channel"
    assert message_error(reply) is None  # Slack would take it
    kinds = [b["type"] for b in reply["blocks"]]
    assert kinds[0] == "header"
    assert "On strike" in reply["blocks"][0]["text"]["text"]
    assert "The strike continues Tuesday" in all_text(reply)
    footer = reply["blocks"][-1]["elements"][0]["text"]
    assert "Update #1" in footer and "Friday, January 18" in footer  # last-updated line


async def test_help_is_personal(bot: SlackBot) -> None:
    reply = (await bot.command("help")).json()
    assert reply["response_type"] == "ephemeral"
    assert "/strike status" in reply["text"]


async def test_a_spanish_channel_is_answered_in_spanish(bot: SlackBot) -> None:
    await bot.admin.subscribe(SLACK_ADMIN, Subscription(0, "slack", "T0STRIKE", "C0ESPANOL", "es"))
    await post_update(bot)
    reply = (await bot.command("status", channel="C0ESPANOL")).json()
    assert i18n.status_label(Status.STRIKE_ON, "es") in reply["blocks"][0]["text"]["text"]
    assert "Sigue la huelga" in all_text(reply)
    english = (await bot.command("status", channel="C0GENERAL")).json()
    assert "On strike" in english["blocks"][0]["text"]["text"]


async def test_a_spanish_speaker_is_answered_in_spanish_anywhere(
    bot: SlackBot, slack: FakeSlack
) -> None:
    await post_update(bot)
    reply = (await bot.command("status", user="U0ROSA", channel="C0GENERAL")).json()
    assert i18n.status_label(Status.STRIKE_ON, "es") in reply["blocks"][0]["text"]["text"]
    lookups = slack.calls_to("users.info")
    assert lookups and lookups[0].args["include_locale"] in (True, "true", "1", 1)


async def test_a_user_lookup_is_cached(bot: SlackBot, slack: FakeSlack) -> None:
    for _ in range(3):
        assert (await bot.command("status")).status == 200
    assert len(slack.calls_to("users.info")) == 1


async def test_quoted_mentions_in_a_reply_ping_nobody(bot: SlackBot) -> None:
    reply = (await bot.command("demand <!channel> <@U0ADMIN> @here")).json()
    assert message_error(reply) is None
    assert live_mentions(reply) == []


async def test_a_slow_answer_follows_through_the_response_url(
    sqlite_store: Store, clock: FixedClock, slack: FakeSlack
) -> None:
    slack.hang("users.info")  # Slack takes too long to say who is asking
    async with SlackBot(sqlite_store, clock, slack, budget=0.05) as bot:
        bot.adapter.directory.timeout = 0.3
        fields = slash_command(slack, "help")
        response = await bot.post_signed(form_body(fields))
        assert response.status == 200
        assert response.json()["response_type"] == "ephemeral"
        assert "Working on it" in response.json()["text"]
        await bot.adapter.wait_idle()
        answers = slack.responses_to(fields["response_url"])
    assert len(answers) == 1
    assert "/strike status" in answers[0]["text"]
    assert answers[0]["response_type"] == "ephemeral"


NOT_SLACKS_JSON = [
    (503, ("text/plain", "upstream connect error or disconnect/reset before headers")),
    (502, ("text/html", "<html><body><h1>502 Bad Gateway</h1></body></html>")),
    (503, ("application/json", '{"ok": false, "err')),
    (200, ("text/plain", "OK")),
    (200, ("application/json", '{"ok": true, "user": "U0MEMBER"}')),
    (200, ("application/json", '{"ok": true}')),
]


@pytest.mark.parametrize(("status", "raw"), NOT_SLACKS_JSON)
async def test_a_lookup_answered_with_something_other_than_slacks_json_still_answers(
    bot: SlackBot, slack: FakeSlack, status: int, raw: tuple[str, str], caplog: Any
) -> None:
    """users.info behind a proxy that answers a plain-text 503 (or a page, or cut JSON, or a
    200 that is not the user): the command is still answered, in the channel's language,
    and the log says what failed without the body."""
    await post_update(bot)
    slack.fail("users.info", status=status, raw=raw, times=None)

    response = await bot.command("status", user="U0ROSA")

    assert response.status == 200
    reply = response.json()
    assert "On strike" in reply["blocks"][0]["text"]["text"]  # answered, in English
    warnings = [r.getMessage() for r in caplog.records if r.name == "adapters.slack._people"]
    assert any("users.info failed" in w for w in warnings)
    assert not any(raw[1] in w for w in warnings if len(raw[1]) > 4)


@pytest.mark.parametrize(("status", "raw"), NOT_SLACKS_JSON)
async def test_an_admin_group_that_cannot_be_read_grants_nothing_and_says_so(
    bot: SlackBot, slack: FakeSlack, status: int, raw: tuple[str, str], caplog: Any
) -> None:
    slack.fail("usergroups.users.list", status=status, raw=raw, times=None)

    reply = (await bot.command("post", user="U0COMMS")).json()

    assert reply["response_type"] == "ephemeral"
    assert "[admins.slack]" in reply["text"] and "U0COMMS" in reply["text"]  # not an error
    assert slack.calls_to("views.open") == []
    warnings = [r.getMessage() for r in caplog.records if r.name == "adapters.slack._people"]
    assert any("nobody counts as an admin through group S0COMMS" in w for w in warnings)


@pytest.mark.parametrize(("status", "raw"), NOT_SLACKS_JSON[:4])
async def test_a_form_that_cannot_open_is_said_plainly(
    bot: SlackBot, slack: FakeSlack, status: int, raw: tuple[str, str]
) -> None:
    slack.fail("views.open", status=status, raw=raw)

    reply = (await bot.command("post", user="U0ADMIN")).json()

    assert reply["response_type"] == "ephemeral"
    assert "went wrong" not in reply["text"]
    assert raw[1] not in reply["text"]


# ---------------------------------------------------------------------------- trust


async def test_a_bad_signature_is_refused(bot: SlackBot, slack: FakeSlack) -> None:
    body = form_body(slash_command(slack, "subscribe", user="U0ADMIN"))
    response = await bot.post_signed(body, secret="not-the-signing-secret")
    assert response.status == 401
    assert slack.calls_to("users.info") == []  # nothing ran
    async with bot.store.read() as tx:
        assert await tx.list_audit() == []


async def test_a_stale_timestamp_is_refused(bot: SlackBot, slack: FakeSlack) -> None:
    body = form_body(slash_command(slack, "subscribe", user="U0ADMIN"))
    response = await bot.post_signed(body, timestamp=int(time.time()) - 6 * 60)
    assert response.status == 401
    async with bot.store.read() as tx:
        assert await tx.list_audit() == []


async def test_a_retried_request_is_handled_once_across_instances(
    store: Store, clock: FixedClock, slack: FakeSlack
) -> None:
    """Two instances behind a load balancer: Slack's retry lands on the other one."""
    body = form_body(slash_command(slack, "subscribe", user="U0ADMIN"))
    async with SlackBot(store, clock, slack) as first, SlackBot(store, clock, slack) as second:
        answered = await first.post_signed(body)
        retry = {"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"}
        retried = await second.post_signed(body, headers=retry)
    assert answered.status == retried.status == 200
    assert "blocks" in answered.json()
    assert retried.text == ""
    async with store.read() as tx:
        saves = [e for e in await tx.list_audit() if e.action == "subscription.save"]
        subs = await tx.list_subscriptions(platform="slack")
    assert len(saves) == 1
    assert saves[0].actor == "slack:U0ADMIN (alex)"
    assert [(s.workspace, s.channel) for s in subs] == [("T0STRIKE", "C0GENERAL")]


# ---------------------------------------------------------------------------- admin access


async def test_a_member_is_told_how_to_get_access(bot: SlackBot, slack: FakeSlack) -> None:
    reply = (await bot.command("post")).json()
    assert reply["response_type"] == "ephemeral"
    assert "[admins.slack]" in reply["text"] and "U0MEMBER" in reply["text"]
    assert slack.calls_to("views.open") == []


async def test_a_member_of_an_admin_user_group_may_post(bot: SlackBot, slack: FakeSlack) -> None:
    response = await bot.command("post", user="U0COMMS")
    assert response.status == 200 and response.text == ""  # the form opened instead
    [opened] = slack.calls_to("views.open")
    assert opened.args["view"]["callback_id"] == "strike:post"
    assert len(slack.calls_to("usergroups.users.list")) == 1


async def test_typed_admin_commands_work_without_a_form(bot: SlackBot) -> None:
    reply = (
        await bot.command('post strike_on "Picket lines at dawn" urgency=urgent', user="U0ADMIN")
    ).json()
    assert reply["response_type"] == "ephemeral"
    async with bot.store.read() as tx:
        [update] = await tx.list_updates(bot.clock())
    assert update.text("en").headline == "Picket lines at dawn"
    assert update.author == "slack:U0ADMIN (alex)"


# ---------------------------------------------------------------------------- the forms


async def open_form(bot: SlackBot, slack: FakeSlack, text: str) -> dict[str, Any]:
    response = await bot.command(text, user="U0ADMIN")
    assert response.status == 200 and response.text == "", response.text
    view = slack.views[list(slack.views)[-1]]
    assert view_errors(view) == []
    return view


def answer_view(response: Any, action: str) -> dict[str, Any]:
    """The view a view_submission answer carries, checked as Slack would."""
    assert response.status == 200, response.text
    answer = response.json()
    assert answer["response_action"] == action, answer
    view: dict[str, Any] = answer["view"]
    assert view_errors(view) == [], view_errors(view)
    return view


async def test_posting_through_the_form_previews_then_posts_once(
    bot: SlackBot, slack: FakeSlack
) -> None:
    await bot.admin.subscribe(SLACK_ADMIN, Subscription(0, "slack", "T0STRIKE", "C0GENERAL", "en"))
    form = await open_form(bot, slack, "post")
    preview = answer_view(
        await bot.submit(
            form,
            {
                "status": chosen(form, "status", "strike_on"),
                "urgency": chosen(form, "urgency", "urgent"),
                "headline": typed("No deal: we strike Monday"),
                "body": typed("Picket lines at every school at 6:30 AM."),
                "headline_es": typed("Sin acuerdo: huelga el lunes"),
            },
        ),
        "push",
    )
    shown = json.dumps(preview["blocks"], ensure_ascii=False)
    assert "No deal: we strike Monday" in shown and "Sin acuerdo: huelga el lunes" in shown
    assert "It will go to 1 chat channel." in shown
    async with bot.store.read() as tx:
        assert await tx.count_updates() == 0  # nothing is posted by a preview

    result = answer_view(await bot.submit(preview, {}), "update")
    assert result["clear_on_close"] is True
    async with bot.store.read() as tx:
        [update] = await tx.list_updates(bot.clock())
        deliveries = await tx.list_deliveries(update_id=update.id)
    assert update.status is Status.STRIKE_ON and update.urgency is Urgency.URGENT
    assert update.text("es").headline == "Sin acuerdo: huelga el lunes"
    assert update.author == "slack:U0ADMIN (alex)"
    assert len(deliveries) == 1

    again = answer_view(await bot.submit(preview, {}), "update")  # a double click
    assert "already used, cancelled or has expired" in json.dumps(again["blocks"])
    async with bot.store.read() as tx:
        assert await tx.count_updates() == 1


async def test_a_slow_lookup_on_confirm_still_answers_within_the_budget(
    sqlite_store: Store, clock: FixedClock, slack: FakeSlack
) -> None:
    async with SlackBot(sqlite_store, clock, slack) as bot:
        form = await open_form(bot, slack, "post")
        # Only the confirmation races a short budget; opening the form and the preview have
        # Slack's usual one (a loaded machine must not turn them into "working on it").
        preview = answer_view(
            await bot.submit(
                form,
                {"status": chosen(form, "status", "strike_on"), "headline": typed("We strike")},
            ),
            "push",
        )
        # Slack stops answering users.info after the preview: who is confirming cannot be
        # looked up in time, yet Slack must still get its answer within the budget.
        bot.adapter.directory._people.clear()
        bot.adapter.directory.timeout = 0.5
        bot.adapter.forms.budget = 0.05
        slack.hang("users.info")
        working = answer_view(await bot.submit(preview, {}), "update")
        assert "Working on it" in json.dumps(working)
        await bot.adapter.wait_idle()
        async with bot.store.read() as tx:
            [update] = await tx.list_updates(bot.clock())
    assert update.text("en").headline == "We strike"
    [told] = slack.ephemerals
    assert told["user"] == "U0ADMIN" and told["channel"] == "C0GENERAL"
    assert f"Posted update #{update.id}" in told["text"]


async def test_the_form_refuses_a_missing_headline_and_a_past_time(
    bot: SlackBot, slack: FakeSlack
) -> None:
    form = await open_form(bot, slack, "post")
    response = await bot.submit(
        form,
        {
            "status": chosen(form, "status", "bargaining"),
            "headline": typed(None),
            "publish_at": picked_at(int(bot.clock().timestamp()) - 3600),
        },
    )
    answer = response.json()
    assert answer["response_action"] == "errors"
    assert set(answer["errors"]) == {"headline", "publish_at"}


async def test_an_embargoed_post_is_scheduled(bot: SlackBot, slack: FakeSlack) -> None:
    form = await open_form(bot, slack, "post")
    later = int(bot.clock().timestamp()) + 86_400
    preview = answer_view(
        await bot.submit(
            form,
            {
                "status": chosen(form, "status", "talks_scheduled"),
                "headline": typed("Talks resume Saturday"),
                "publish_at": picked_at(later),
            },
        ),
        "push",
    )
    answer_view(await bot.submit(preview, {}), "update")
    async with bot.store.read() as tx:
        [update] = await tx.list_updates(bot.clock(), visible_only=False)
    assert update.state is UpdateState.SCHEDULED
    assert update.publish_at is not None and int(update.publish_at.timestamp()) == later


async def test_editing_picks_a_recent_update_and_keeps_a_revision(
    bot: SlackBot, slack: FakeSlack
) -> None:
    uid = await post_update(bot)
    picker = await open_form(bot, slack, "edit")
    assert picker["callback_id"] == "strike:pick"
    form = answer_view(
        await bot.submit(
            picker,
            {
                "update": chosen(picker, "update", str(uid)),
                "language": chosen(picker, "language", "en"),
            },
        ),
        "update",
    )
    headline = next(b for b in form["blocks"] if b["block_id"] == "headline")
    assert headline["element"]["initial_value"] == "The strike continues Tuesday"
    preview = answer_view(
        await bot.submit(
            form,
            {
                "headline": typed("The strike continues Wednesday"),
                "body": typed("Picket at 6:30 AM."),
                "reason": typed("Wrong day"),
                "correction": ticked("yes"),
            },
        ),
        "push",
    )
    assert "The strike continues Wednesday" in json.dumps(preview["blocks"])
    answer_view(await bot.submit(preview, {}), "update")
    async with bot.store.read() as tx:
        update = await tx.get_update(uid, bot.clock())
    assert update is not None and update.revision == 2
    assert update.text("en").headline == "The strike continues Wednesday"
    assert update.revisions[-1].reason == "Wrong day"
    # The Spanish was written for the old English: it is stale until updated or confirmed.
    async with bot.store.read() as tx:
        [mark] = await tx.stale_texts(f"update:{uid}")
    assert (mark.language, mark.edited, mark.editor) == ("es", "en", "slack:U0ADMIN (alex)")


async def test_editing_the_other_language_in_the_form_makes_it_current(
    bot: SlackBot, slack: FakeSlack
) -> None:
    uid = await post_update(bot)
    await bot.admin.edit(
        SLACK_ADMIN,
        uid,
        Changes(texts={"en": UpdateText("The strike continues Wednesday", "Picket at 6:30 AM.")}),
        reason="day",
    )
    picker = await open_form(bot, slack, "edit")
    form = answer_view(
        await bot.submit(
            picker,
            {
                "update": chosen(picker, "update", str(uid)),
                "language": chosen(picker, "language", "es"),
            },
        ),
        "update",
    )
    note = "The Spanish text was written before the English text was edited"
    assert note in json.dumps(form["blocks"])
    preview = answer_view(
        await bot.submit(
            form, {"headline": typed("La huelga sigue el miércoles"), "reason": typed("día")}
        ),
        "push",
    )
    answer_view(await bot.submit(preview, {}), "update")
    async with bot.store.read() as tx:
        update = await tx.get_update(uid, bot.clock())
        marks = await tx.stale_texts(f"update:{uid}")
    assert update is not None and update.text("es").headline == "La huelga sigue el miércoles"
    assert marks == []  # the Spanish caught up with the English


async def test_editing_in_the_form_keeps_a_body_too_long_to_show_in_full(
    bot: SlackBot, slack: FakeSlack
) -> None:
    body = " ".join(["Picket"] * 600)  # 4199 characters: more than one input holds
    posted = await bot.admin.post(
        SLACK_ADMIN, Draft(Status.STRIKE_ON, {"en": UpdateText("Strike on", body)})
    )
    form = await open_form(bot, slack, f"edit {posted.id}")
    shown = next(b for b in form["blocks"] if b["block_id"] == "body")
    assert len(shown["element"]["initial_value"]) < len(body)
    preview = answer_view(
        await bot.submit(
            form,
            {
                "headline": typed("Strike on: day two"),
                "body": typed(shown["element"]["initial_value"]),
                "next_step": typed(None),
                "reason": typed("Say which day"),
            },
        ),
        "push",
    )
    answer_view(await bot.submit(preview, {}), "update")
    async with bot.store.read() as tx:
        after = await tx.get_update(posted.id, bot.clock())
    assert after is not None and after.text("en").headline == "Strike on: day two"
    assert after.text("en").body == body


async def test_retracting_through_the_form_needs_a_reason(bot: SlackBot, slack: FakeSlack) -> None:
    uid = await post_update(bot)
    picker = await open_form(bot, slack, f"retract {uid}")
    initial = picker["blocks"][0]["element"]["initial_option"]
    assert initial["value"] == str(uid)
    blank = {"update": chosen(picker, "update", str(uid)), "reason": typed(None)}
    refused = (await bot.submit(picker, blank)).json()
    assert refused["response_action"] == "errors" and "reason" in refused["errors"]
    preview = answer_view(
        await bot.submit(
            picker,
            {"update": chosen(picker, "update", str(uid)), "reason": typed("Posted too early")},
        ),
        "push",
    )
    assert "RETRACTED" in json.dumps(preview["blocks"])
    answer_view(await bot.submit(preview, {}), "update")
    async with bot.store.read() as tx:
        update = await tx.get_update(uid, bot.clock())
    assert update is not None and update.retracted
    assert update.retraction_reason == "Posted too early"


async def test_a_second_admin_approves_through_the_form(
    sqlite_store: Store, clock: FixedClock, slack: FakeSlack
) -> None:
    async with SlackBot(sqlite_store, clock, slack, require_approval=True) as bot:
        await bot.command('post strike_vote "Vote Thursday"', user="U0ADMIN")
        picker = await open_form_as(bot, slack, "approve", "U0COMMS")
        [option] = picker["blocks"][0]["element"]["options"]
        assert "awaiting approval" in option["text"]["text"]
        preview = answer_view(
            await bot.submit(
                picker, {"update": chosen(picker, "update", option["value"])}, user="U0COMMS"
            ),
            "push",
        )
        answer_view(await bot.submit(preview, {}, user="U0COMMS"), "update")
        async with bot.store.read() as tx:
            [update] = await tx.list_updates(clock())
    assert update.state is UpdateState.PUBLISHED
    assert update.approved_by == "slack:U0COMMS (comms)"


async def open_form_as(bot: SlackBot, slack: FakeSlack, text: str, user: str) -> dict[str, Any]:
    response = await bot.command(text, user=user)
    assert response.status == 200 and response.text == "", response.text
    view = slack.views[list(slack.views)[-1]]
    assert view_errors(view) == []
    return view


async def test_nothing_to_edit_is_said_plainly(bot: SlackBot, slack: FakeSlack) -> None:
    reply = (await bot.command("edit", user="U0ADMIN")).json()
    assert "no update to edit" in reply["text"]
    assert slack.calls_to("views.open") == []


async def test_a_repeated_question_is_simply_answered_again(
    bot: SlackBot, slack: FakeSlack
) -> None:
    """Questions change nothing, so a redelivered one gets its answer again (the first
    answer may be exactly what got lost)."""
    body = form_body(slash_command(slack, "status"))
    first = await bot.post_signed(body)
    again = await bot.post_signed(body, headers={"X-Slack-Retry-Num": "1"})
    assert first.json() == again.json()
    async with bot.store.read() as tx:
        seen = await tx.conn.scalar(select(func.count()).select_from(processed_events))
    assert seen == 0  # a question leaves no trace to deduplicate against


async def test_health_reports_the_workspace(bot: SlackBot) -> None:
    health = bot.adapter.health()
    assert health == {
        "connected": True,
        "mode": "http",
        "team_id": "T0STRIKE",
        "bot_user_id": "U0BOT",
    }


async def test_the_bots_own_web_server_serves_slack_events(
    sqlite_store: Store, clock: FixedClock, slack: FakeSlack
) -> None:
    """What `strikebot run` does: the web plugin and the Slack plugin both mount their
    routes on one server, next to the status page."""

    from adapters.web import build_app
    from tests.support import plugin_ctx

    async with SlackBot(sqlite_store, clock, slack) as bot:
        site_ctx = plugin_ctx("web", sqlite_store, clock)
        runner = web.AppRunner(build_app(site_ctx, bot.adapter), access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        body = form_body(slash_command(slack, "help"))
        try:
            async with ClientSession() as http:
                url = f"http://127.0.0.1:{port}/slack/events"
                async with http.post(
                    url, data=body, headers=sign(SIGNING_SECRET, body, int(time.time()))
                ) as ok:
                    assert ok.status == 200
                    assert "/strike status" in (await ok.json())["text"]
                async with http.post(
                    url, data=body, headers=sign("wrong", body, int(time.time()))
                ) as bad:
                    assert bad.status == 401
        finally:
            await runner.cleanup()
