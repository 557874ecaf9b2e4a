"""An admin posts from Discord: /strike post → modal → preview → Post → the real dispatcher
delivers to every subscribed Discord channel exactly once. Edit and retract follow."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.clock import FixedClock
from bot.config import DeliverySection
from bot.delivery.dispatcher import Dispatcher, Timings
from bot.editorial.admin import Draft
from bot.models import (
    DeliveryState,
    Status,
    Subscription,
    UpdateState,
    UpdateText,
    Urgency,
)
from bot.plugins.admins import CLI_ACTOR
from tests.fakes.discord import (
    AUTOCOMPLETE_RESULT,
    CHANNEL_MESSAGE,
    COMMS_ROLE_ID,
    DEFERRED_CHANNEL_MESSAGE,
    DEFERRED_UPDATE,
    GUILD_ID,
    MODAL,
    UPDATE_MESSAGE,
    DiscordBot,
    FakeDiscord,
    Reply,
    as_member,
    button_payload,
    buttons,
    discord_bot,
    interaction_payload,
    load_payload,
    modal_submit_payload,
)
from tests.support import FRIDAY

CHANNELS = ("700000000000000101", "700000000000000102", "700000000000000103")
ADMIN_USER = "800000000000000042"


@pytest.fixture
async def bot(tmp_path: Path) -> AsyncIterator[DiscordBot]:
    async with (
        FakeDiscord() as fake,
        discord_bot(
            fake, f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite'}", FixedClock(FRIDAY)
        ) as running,
    ):
        for channel in CHANNELS:
            await running.ctx.admin.subscribe(
                CLI_ACTOR,
                Subscription(0, "discord", GUILD_ID, channel, "en", timezone="UTC"),
            )
        yield running


def admin_post_command() -> dict[str, object]:
    return as_member(load_payload("interaction_command_post"), roles=(COMMS_ROLE_ID,))


async def open_modal(bot: DiscordBot, command: dict[str, object]) -> Reply:
    iid = await bot.fake.send_interaction(command)
    (modal,) = await bot.fake.wait_reply(iid)
    assert modal.type == MODAL
    return modal


async def preview(
    bot: DiscordBot, values: dict[str, str | list[str]]
) -> tuple[str, dict[str, object]]:
    """Open the modal, submit it; returns the preview interaction id and the command."""
    command = admin_post_command()
    modal = await open_modal(bot, command)
    iid = await bot.fake.send_interaction(modal_submit_payload(modal, values, like=command))
    deferred, shown = await bot.fake.wait_reply(iid, count=2)
    assert deferred.type == DEFERRED_CHANNEL_MESSAGE and deferred.ephemeral
    assert shown.kind == "edit_original"
    return iid, command


VALUES: dict[str, str | list[str]] = {
    "headline": "Strike continues Tuesday @everyone",
    "body": "Picket lines at 6:30 AM at every school. *Bring water.*",
    "next_step": "Rally at Grand Park, 10 AM",
    "urgency": ["important"],
}


async def test_modal_asks_for_headline_body_next_step_and_urgency(bot: DiscordBot) -> None:
    modal = await open_modal(bot, admin_post_command())

    inner = [row["component"] for row in modal.data["components"]]
    # The shipped campaign has sites: the fifth input says whom it is for (empty: everyone).
    ids = ["headline", "body", "next_step", "urgency", "audience"]
    assert [c["custom_id"] for c in inner] == ids
    assert not inner[4]["required"]
    assert inner[0]["required"] and inner[0]["max_length"] == 150
    assert [o["value"] for o in inner[3]["options"]] == ["routine", "important", "urgent"]


async def test_spanish_admin_gets_a_spanish_modal(bot: DiscordBot) -> None:
    command = as_member(admin_post_command(), roles=(COMMS_ROLE_ID,), locale="es-ES")

    modal = await open_modal(bot, command)

    assert modal.data["title"] == "Publicar una actualización"
    assert modal.data["components"][0]["label"] == "Titular"


async def test_preview_then_post_reaches_every_channel_exactly_once(bot: DiscordBot) -> None:
    iid, command = await preview(bot, VALUES)

    shown = bot.fake.replies[iid][1]
    assert "Preview" in shown.embeds[0]["title"]
    assert "It will go to 3 chat channels." in shown.text
    assert shown.embeds[1]["title"] == "Strike continues Tuesday @\u200beveryone"
    async with bot.store.read() as tx:  # nothing is written before Post
        assert await tx.count_updates() == 3  # the three seeded ones

    message = bot.fake.original_message(iid)
    post_id = buttons(message)["Post"]
    click = await bot.fake.send_interaction(button_payload(message, post_id, like=command))
    ack, result = await bot.fake.wait_reply(click, count=2)

    assert ack.type == DEFERRED_UPDATE
    assert result.kind == "edit_original" and result.data["components"] == []
    async with bot.store.read() as tx:
        (update,) = await tx.list_updates(bot.clock(), limit=1)
        audit = await tx.list_audit(limit=1, target=f"update:{update.id}")
    assert f"Posted update #{update.id}" in result.text
    assert "It is going out to 3 channel(s)." in result.text
    assert update.state is UpdateState.PUBLISHED
    assert update.text("en").headline == VALUES["headline"]
    assert audit[0].action == "update.post"
    assert audit[0].actor == f"discord:{ADMIN_USER} (Rosa M.)"

    dispatcher = Dispatcher(
        bot.store,
        {"discord": bot.adapter},
        bot.ctx.campaign,
        bot.clock,
        settings=DeliverySection(),
    )
    stats = await dispatcher.drain()
    again = await dispatcher.drain()

    assert stats.sent == 3 and stats.dead == 0
    assert again.sent == 0
    for channel in CHANNELS:
        (sent,) = bot.fake.channel_messages(channel)
        (embed,) = sent.embeds
        assert embed["title"] == "Strike continues Tuesday @\u200beveryone"
        assert "\\*Bring water.\\*" in embed["description"]  # plain text, not markdown
        assert sent.allowed_mentions == {"parse": []}
        assert sent.payload["enforce_nonce"] is True
    async with bot.store.read() as tx:
        deliveries = await tx.list_deliveries(update_id=update.id)
    assert {d.state for d in deliveries} == {DeliveryState.SENT}
    assert {
        bot.fake.messages[d.platform_message_id].nonce for d in deliveries if d.platform_message_id
    } == {d.id for d in deliveries}


async def test_a_second_click_on_post_does_not_post_twice(bot: DiscordBot) -> None:
    iid, command = await preview(bot, VALUES)
    message = bot.fake.original_message(iid)
    post_id = buttons(message)["Post"]

    first = await bot.fake.send_interaction(button_payload(message, post_id, like=command))
    await bot.fake.wait_reply(first, count=2)
    second = await bot.fake.send_interaction(button_payload(message, post_id, like=command))
    (answer,) = await bot.fake.wait_reply(second)

    assert answer.type == UPDATE_MESSAGE and "expired or was already used" in answer.text
    async with bot.store.read() as tx:
        assert await tx.count_updates() == 4


async def test_cancel_posts_nothing(bot: DiscordBot) -> None:
    iid, command = await preview(bot, VALUES)
    message = bot.fake.original_message(iid)

    click = await bot.fake.send_interaction(
        button_payload(message, buttons(message)["Cancel"], like=command)
    )
    (answer,) = await bot.fake.wait_reply(click)

    assert answer.type == UPDATE_MESSAGE and "nothing was posted" in answer.text
    assert answer.data["components"] == []
    async with bot.store.read() as tx:
        assert await tx.count_updates() == 3


async def test_only_the_author_of_a_preview_can_post_it(bot: DiscordBot) -> None:
    iid, command = await preview(bot, VALUES)
    message = bot.fake.original_message(iid)
    other_admin = as_member(command, roles=(COMMS_ROLE_ID,), user_id="800000000000000077")

    click = await bot.fake.send_interaction(
        button_payload(message, buttons(message)["Post"], like=other_admin)
    )
    (answer,) = await bot.fake.wait_reply(click)

    assert answer.type == CHANNEL_MESSAGE and answer.ephemeral
    assert "Only the admin who wrote this draft" in answer.text
    # Still there for its author.
    mine = await bot.fake.send_interaction(
        button_payload(message, buttons(message)["Post"], like=command)
    )
    deferred, posted = await bot.fake.wait_reply(mine, count=2)
    assert deferred.type == DEFERRED_UPDATE and "expired" not in posted.text


async def test_members_get_no_update_choices(bot: DiscordBot) -> None:
    autocomplete = load_payload("interaction_autocomplete_demand")
    autocomplete["data"]["options"] = [
        {"name": "retract", "type": 1, "options": [
            {"name": "update", "type": 4, "value": "", "focused": True}]}
    ]  # fmt: skip
    assert await bot.commands.recent_updates(25)  # an admin would be offered these
    iid = await bot.fake.send_interaction(as_member(autocomplete, roles=()))
    (choices,) = await bot.fake.wait_reply(iid)
    assert choices.type == AUTOCOMPLETE_RESULT
    assert choices.data["choices"] == []


async def test_edit_and_retract_pick_from_recent_updates(bot: DiscordBot) -> None:
    admin = (COMMS_ROLE_ID,)
    autocomplete = load_payload("interaction_autocomplete_demand")
    autocomplete["data"]["options"] = [
        {"name": "retract", "type": 1, "options": [
            {"name": "update", "type": 4, "value": "", "focused": True}]}
    ]  # fmt: skip
    iid = await bot.fake.send_interaction(as_member(autocomplete, roles=admin))
    (choices,) = await bot.fake.wait_reply(iid)
    recent = await bot.commands.recent_updates(25)
    assert [c["value"] for c in choices.data["choices"]] == [u.id for u in recent]
    assert choices.data["choices"][0]["name"].startswith(f"#{recent[0].id} · ")

    target = recent[0].id
    retract = interaction_payload(
        "retract", options={"update": target, "reason": "Posted too early"}, roles=admin
    )
    rid = await bot.fake.send_interaction(retract)
    deferred, done = await bot.fake.wait_reply(rid, count=2)

    assert deferred.ephemeral and done.kind == "edit_original"
    async with bot.store.read() as tx:
        after = await tx.get_update(target, bot.clock())
        audit = await tx.list_audit(limit=1, target=f"update:{target}")
    assert after is not None and after.state is UpdateState.RETRACTED
    assert after.retraction_reason == "Posted too early"
    assert audit[0].action == "update.retract" and ADMIN_USER in audit[0].actor


async def test_edit_without_new_text_opens_the_current_text_in_a_modal(bot: DiscordBot) -> None:
    admin = (COMMS_ROLE_ID,)
    (latest,) = await bot.commands.recent_updates(1)
    command = interaction_payload(
        "edit", options={"update": latest.id, "reason": "Fix the time"}, roles=admin
    )

    modal = await open_modal(bot, command)
    inner = {row["component"]["custom_id"]: row["component"] for row in modal.data["components"]}
    assert inner["headline"]["value"] == latest.text("en").headline

    values: dict[str, str | list[str]] = {
        "headline": inner["headline"]["value"],
        "body": inner["body"].get("value", ""),
        "next_step": "The strike resumes Tuesday at 6:00 AM.",
    }
    submit = await bot.fake.send_interaction(modal_submit_payload(modal, values, like=command))
    await bot.fake.wait_reply(submit, count=2)

    async with bot.store.read() as tx:
        after = await tx.get_update(latest.id, bot.clock())
        audit = await tx.list_audit(limit=1, target=f"update:{latest.id}")
    assert after is not None and after.revision == latest.revision + 1
    assert after.text("en").next_step == "The strike resumes Tuesday at 6:00 AM."
    assert after.text("en").headline == latest.text("en").headline
    assert audit[0].action == "update.edit" and ADMIN_USER in audit[0].actor


async def test_editing_in_the_modal_keeps_a_body_too_long_to_show_in_full(
    bot: DiscordBot,
) -> None:
    body = " ".join(["Picket"] * 800)  # 5599 characters: more than one text input holds
    posted = await bot.ctx.admin.post(
        CLI_ACTOR, Draft(Status.STRIKE_ON, {"en": UpdateText("Strike on", body)})
    )
    command = interaction_payload(
        "edit", options={"update": posted.id, "reason": "Fix the time"}, roles=(COMMS_ROLE_ID,)
    )
    modal = await open_modal(bot, command)
    inner = {row["component"]["custom_id"]: row["component"] for row in modal.data["components"]}
    assert len(inner["body"]["value"]) < len(body)  # shown cut

    values: dict[str, str | list[str]] = {
        "headline": inner["headline"]["value"],
        "body": inner["body"]["value"],
        "next_step": "Rally at noon",
    }
    submit = await bot.fake.send_interaction(modal_submit_payload(modal, values, like=command))
    await bot.fake.wait_reply(submit, count=2)

    async with bot.store.read() as tx:
        after = await tx.get_update(posted.id, bot.clock())
    assert after is not None and after.text("en").next_step == "Rally at noon"
    assert after.text("en").body == body


async def test_a_channel_the_bot_lost_is_parked_and_the_rest_still_get_it(
    bot: DiscordBot,
) -> None:
    lost = CHANNELS[1]
    bot.fake.forbidden_channels.add(lost)
    bot.fake.inject(503, channel_id=CHANNELS[2])  # one passing server error, retried
    update = await bot.ctx.admin.post(
        CLI_ACTOR,
        Draft(Status.STRIKE_ON, {"en": UpdateText("Picket at 6:30 AM")}, Urgency.URGENT),
    )
    dispatcher = Dispatcher(
        bot.store,
        {"discord": bot.adapter},
        bot.ctx.campaign,
        bot.clock,
        settings=DeliverySection(),
        timings=Timings(retry_base=0.01),
    )

    stats = await dispatcher.drain()

    assert stats.sent == 2 and stats.dead == 1 and stats.retried == 1
    assert bot.fake.channel_messages(lost) == []
    for channel in (CHANNELS[0], CHANNELS[2]):
        assert len(bot.fake.channel_messages(channel)) == 1
    async with bot.store.read() as tx:
        (dead,) = await tx.list_deliveries(update_id=update.id, state=DeliveryState.DEAD)
        sub = await tx.get_subscription(dead.subscription_id)
    assert sub is not None and sub.channel == lost
    assert sub.broken_reason is not None and "403" in sub.broken_reason


async def test_a_global_429_pauses_every_discord_send_then_delivery_resumes(
    bot: DiscordBot,
) -> None:
    """Discord's global 429 reaches the dispatcher as a pause of the whole platform (the
    pacer's global bucket, for Discord's Retry-After), and the same dispatcher delivers
    everything afterwards: no restart, no copy lost or doubled."""
    import time

    bot.fake.inject(429, is_global=True, retry_after=0.2, route=None)
    await bot.ctx.admin.post(
        CLI_ACTOR,
        Draft(Status.STRIKE_ON, {"en": UpdateText("Picket at 6:30 AM")}, Urgency.URGENT),
    )
    dispatcher = Dispatcher(
        bot.store,
        {"discord": bot.adapter},
        bot.ctx.campaign,
        bot.clock,
        settings=DeliverySection(),
    )
    before = time.monotonic()

    stats = await dispatcher.drain()

    assert [r.scope for r in bot.fake.rate_limited] == ["global"]
    assert stats.sent == 3 and stats.retried == 1 and stats.dead == 0
    pacer = dispatcher.pacer("discord")
    assert pacer.global_bucket.paused_until >= before + 0.2  # every channel waited
    for channel in CHANNELS:
        assert len(bot.fake.channel_messages(channel)) == 1


async def test_a_spanish_speaking_admin_writes_in_spanish_then_adds_english(
    bot: DiscordBot,
) -> None:
    command = as_member(admin_post_command(), roles=(COMMS_ROLE_ID,), locale="es-ES")
    modal = await open_modal(bot, command)
    spanish: dict[str, str | list[str]] = {
        "headline": "La huelga sigue el martes",
        "urgency": ["important"],
    }
    iid = await bot.fake.send_interaction(modal_submit_payload(modal, spanish, like=command))
    await bot.fake.wait_reply(iid, count=2)
    first = bot.fake.original_message(iid)
    shown = " ".join(str(e) for e in first["embeds"])
    assert "La huelga sigue el martes" in shown
    assert "Escribe la actualización también en inglés" in shown
    assert "Agregar inglés" in buttons(first)

    click = await bot.fake.send_interaction(
        button_payload(first, buttons(first)["Agregar inglés"], like=command)
    )
    (english_form,) = await bot.fake.wait_reply(click)
    assert english_form.type == MODAL
    assert english_form.data["title"] == "Publicar una actualización (inglés)"
    inner = [row["component"]["custom_id"] for row in english_form.data["components"]]
    assert inner == ["headline", "body", "next_step"]  # the urgency was chosen already
    english = {"headline": "The strike continues Tuesday"}
    added = await bot.fake.send_interaction(
        modal_submit_payload(english_form, english, like=command)
    )
    await bot.fake.wait_reply(added, count=2)
    second = bot.fake.original_message(added)
    assert "Agregar inglés" not in buttons(second)

    post = await bot.fake.send_interaction(
        button_payload(second, buttons(second)["Publicar"], like=command)
    )
    await bot.fake.wait_reply(post, count=2)
    async with bot.store.read() as tx:
        (update,) = await tx.list_updates(bot.clock(), limit=1)
    assert update.texts["es"].headline == "La huelga sigue el martes"
    assert update.texts["en"].headline == "The strike continues Tuesday"
    assert update.urgency is Urgency.IMPORTANT


async def test_editing_the_english_on_discord_makes_the_spanish_stale(bot: DiscordBot) -> None:
    (latest,) = await bot.commands.recent_updates(1)
    assert set(latest.texts) == {"en", "es"}
    command = interaction_payload(
        "edit",
        options={"update": latest.id, "reason": "Fix the time", "next_step": "Tuesday, 6 AM"},
        roles=(COMMS_ROLE_ID,),
    )
    iid = await bot.fake.send_interaction(command)
    await bot.fake.wait_reply(iid, count=2)

    async with bot.store.read() as tx:
        after = await tx.get_update(latest.id, bot.clock())
        (mark,) = await tx.stale_texts(f"update:{latest.id}")
    assert after is not None and after.text("en").next_step == "Tuesday, 6 AM"
    assert (mark.language, mark.edited) == ("es", "en")
    assert mark.editor == f"discord:{ADMIN_USER} (Rosa M.)"

    # Opening the Spanish to edit, the admin reads above it that it predates the English.
    spanish = interaction_payload(
        "edit",
        options={"update": latest.id, "reason": "Check", "language": "es"},
        roles=(COMMS_ROLE_ID,),
    )
    modal = await open_modal(bot, spanish)
    note, *inputs = modal.data["components"]
    assert note == {
        "type": 10,
        "content": "The Spanish text was written before the English text was edited: "
        "check it says the same.",
    }
    assert [row["component"]["custom_id"] for row in inputs] == ["headline", "body", "next_step"]
    # Not stale: no note.
    english = interaction_payload(
        "edit", options={"update": latest.id, "reason": "Check"}, roles=(COMMS_ROLE_ID,)
    )
    assert all(row["type"] != 10 for row in (await open_modal(bot, english)).data["components"])
