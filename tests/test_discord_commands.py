"""Slash commands end to end: INTERACTION_CREATE over the fake gateway → real discord.py →
DiscordAdapter → bot.commands → the interaction callback the fake received."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot import i18n
from bot.clock import FixedClock
from bot.models import Status
from tests.fakes.discord import (
    AUTOCOMPLETE_RESULT,
    CHANNEL_ID,
    CHANNEL_MESSAGE,
    COMMS_ROLE_ID,
    DEFERRED_CHANNEL_MESSAGE,
    GUILD_ID,
    MODAL,
    DiscordBot,
    FakeDiscord,
    as_member,
    discord_bot,
    interaction_payload,
    load_payload,
)
from tests.support import FRIDAY


@pytest.fixture
async def bot(tmp_path: Path) -> AsyncIterator[DiscordBot]:
    async with (
        FakeDiscord() as fake,
        discord_bot(
            fake, f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite'}", FixedClock(FRIDAY)
        ) as running,
    ):
        yield running


async def test_status_from_a_documented_payload_answers_with_a_status_embed(
    bot: DiscordBot,
) -> None:
    iid = await bot.fake.send_interaction(load_payload("interaction_command_status"))

    (reply,) = await bot.fake.wait_reply(iid)

    assert reply.kind == "callback" and reply.type == CHANNEL_MESSAGE
    assert reply.after < 3.0  # Discord's deadline
    (embed,) = reply.embeds
    # The seeded campaign's latest update (Friday Jan 18): talks over the weekend, on strike.
    (latest,) = await bot.commands.recent_updates(1)
    assert latest.status is Status.STRIKE_ON
    assert embed["color"] == i18n.STATUS_COLOURS[Status.STRIKE_ON]
    assert i18n.status_label(Status.STRIKE_ON, "en") in reply.text
    assert reply.data["allowed_mentions"] == {"parse": []}


async def test_spanish_locale_gets_spanish(bot: DiscordBot) -> None:
    payload = as_member(load_payload("interaction_command_status"), locale="es-419")

    (reply,) = await bot.fake.wait_reply(await bot.fake.send_interaction(payload))

    assert "huelga" in reply.text.lower()
    assert "strike" not in reply.embeds[0].get("title", "").lower()


async def test_demand_with_key_shows_that_demand(bot: DiscordBot) -> None:
    iid = await bot.fake.send_interaction(load_payload("interaction_command_demand"))

    (reply,) = await bot.fake.wait_reply(iid)

    assert reply.type == CHANNEL_MESSAGE
    assert "Fair pay" in reply.text
    assert "6.5%" in reply.text


async def test_demand_key_autocomplete_offers_matching_demands(bot: DiscordBot) -> None:
    iid = await bot.fake.send_interaction(load_payload("interaction_autocomplete_demand"))

    (reply,) = await bot.fake.wait_reply(iid)

    assert reply.type == AUTOCOMPLETE_RESULT
    values = [choice["value"] for choice in reply.data["choices"]]
    assert values == ["pay"]
    assert reply.data["choices"][0]["name"] == "Fair pay (pay)"


async def test_timeline_count_option(bot: DiscordBot) -> None:
    payload = interaction_payload("timeline", options={"count": 2})

    (reply,) = await bot.fake.wait_reply(await bot.fake.send_interaction(payload))

    assert reply.type == CHANNEL_MESSAGE
    recent = await bot.commands.recent_updates(2)
    for update in recent:
        assert update.text("en").headline[:40] in reply.text


async def test_help_is_ephemeral(bot: DiscordBot) -> None:
    (reply,) = await bot.fake.wait_reply(
        await bot.fake.send_interaction(interaction_payload("help"))
    )

    assert reply.ephemeral


async def test_non_admin_post_is_refused_with_how_to_get_access(bot: DiscordBot) -> None:
    payload = as_member(load_payload("interaction_command_post"), manage_guild=False)

    (reply,) = await bot.fake.wait_reply(await bot.fake.send_interaction(payload))

    assert reply.type == CHANNEL_MESSAGE  # no modal for a member
    assert reply.ephemeral
    assert "Admins only" in reply.text
    user_id = payload["member"]["user"]["id"]
    assert user_id in reply.text and "[admins.discord]" in reply.text
    async with bot.store.read() as tx:
        actions = {entry.action for entry in await tx.list_audit(limit=100)}
    assert "update.post" not in actions and "update.submit" not in actions


async def test_non_admin_subscribe_is_refused_in_spanish(bot: DiscordBot) -> None:
    payload = interaction_payload("subscribe", locale="es-ES")

    (reply,) = await bot.fake.wait_reply(await bot.fake.send_interaction(payload))

    assert reply.ephemeral and reply.type == CHANNEL_MESSAGE
    assert "Pide a una persona administradora" in reply.text
    async with bot.store.read() as tx:
        assert await tx.find_subscription("discord", GUILD_ID, CHANNEL_ID) is None


async def test_manage_server_permission_makes_an_admin(bot: DiscordBot) -> None:
    payload = as_member(load_payload("interaction_command_post"), manage_guild=True)

    (reply,) = await bot.fake.wait_reply(await bot.fake.send_interaction(payload))

    assert reply.type == MODAL


async def test_admin_role_subscribes_the_channel_and_it_is_audited(bot: DiscordBot) -> None:
    payload = interaction_payload(
        "subscribe",
        options={"language": "es", "urgencies": "important,urgent", "briefing_time": "07:00"},
        roles=(COMMS_ROLE_ID,),
    )

    iid = await bot.fake.send_interaction(payload)
    replies = await bot.fake.wait_reply(iid, count=2)

    assert replies[0].type == DEFERRED_CHANNEL_MESSAGE  # a write defers first
    assert replies[1].kind == "edit_original"
    async with bot.store.read() as tx:
        sub = await tx.find_subscription("discord", GUILD_ID, CHANNEL_ID)
        audit = await tx.list_audit(limit=1)
    assert sub is not None and sub.language == "es"
    assert audit[0].action == "subscription.save"
    assert audit[0].actor == f"discord:{payload['member']['user']['id']} (Rosa M.)"


async def test_slow_answers_are_deferred_then_edited_in(tmp_path: Path) -> None:
    async with (
        FakeDiscord() as fake,
        discord_bot(
            fake, f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite'}", FixedClock(FRIDAY), defer_after=0
        ),
    ):
        iid = await fake.send_interaction(load_payload("interaction_command_status"))
        first, second = await fake.wait_reply(iid, count=2)

    assert first.type == DEFERRED_CHANNEL_MESSAGE and first.ephemeral
    assert second.kind == "edit_original"
    assert second.embeds and second.embeds[0]["color"] in i18n.STATUS_COLOURS.values()


async def test_command_tree_is_synced_to_the_configured_guild_with_spanish(
    bot: DiscordBot,
) -> None:
    await bot.fake.wait_for(lambda: GUILD_ID in bot.fake.commands)

    (strike,) = bot.fake.commands[GUILD_ID]
    assert None not in bot.fake.commands  # never global on start
    assert strike["name"] == "strike"
    names = {option["name"] for option in strike["options"]}
    assert names == {"status", "demands", "demand", "timeline", "next", "help", "subscribe",
                     "unsubscribe", "post", "edit", "retract", "approve"}  # fmt: skip
    assert strike["description_localizations"]["es-ES"].startswith("Novedades de la huelga")
    assert bot.adapter.health()["guild_sync"][GUILD_ID].startswith("synced")


async def test_an_admins_mistake_is_shown_only_to_them(bot: DiscordBot) -> None:
    payload = interaction_payload(
        "subscribe", options={"briefing_time": "25:00"}, roles=(COMMS_ROLE_ID,)
    )

    iid = await bot.fake.send_interaction(payload)
    deferred, removed, error = await bot.fake.wait_reply(iid, count=3)

    assert deferred.type == DEFERRED_CHANNEL_MESSAGE and not deferred.ephemeral
    assert removed.kind == "delete_original"  # the public "thinking…" goes away
    assert error.kind == "followup" and error.ephemeral
    assert "25:00" in error.text
    assert error.embeds[0]["color"] == 0xE03131


async def test_admins_keep_a_demand_current_from_discord(bot: DiscordBot) -> None:
    """`/strike demand key:pay change:...` is the typed form every platform shares: an admin
    records an offer with its date; a member's attempt changes nothing."""
    change = 'offer="6.5% over three years" source="District proposal" date=2019-01-17'
    member = interaction_payload("demand", options={"key": "pay", "change": change})
    (refused,) = await bot.fake.wait_reply(await bot.fake.send_interaction(member))
    assert refused.ephemeral and "Admins only" in refused.text

    admin = interaction_payload(
        "demand", options={"key": "pay", "change": change}, roles=(COMMS_ROLE_ID,)
    )
    replies = await bot.fake.wait_reply(await bot.fake.send_interaction(admin), count=2)
    assert replies[0].type == DEFERRED_CHANNEL_MESSAGE
    assert "Recorded for demand pay" in replies[1].text
    async with bot.store.read() as tx:
        pay = await tx.get_demand("pay")
        audit = await tx.list_audit(limit=1, target="demand:pay")
    assert pay is not None and pay.text("en").employer_offer == "6.5% over three years"
    assert pay.history[-1].source == "District proposal"
    assert audit[0].action == "demand.record" and audit[0].actor.startswith("discord:")
