"""Exactly once past Discord's nonce window: a copy whose send outcome is unknown, retried
after Discord stopped honouring its nonce, is found among the channel's messages by the
marker its link carries and recorded, not posted again. Through the real discord.py
against the fake Discord, whose nonce window here is already over."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest

from bot.clock import FixedClock
from bot.config import DeliverySection
from bot.delivery.dispatcher import Dispatcher, Timings
from bot.editorial.admin import Admin, Draft
from bot.messages.compose import update_message
from bot.models import Delivery, DeliveryState, Status, Subscription, UpdateText, Urgency
from bot.ports import ChannelRef
from bot.store import outbox_queries as q
from tests.fakes.discord import GUILD_ID, DiscordBot, FakeDiscord, discord_bot
from tests.support import ADMIN, ADMINS, FRIDAY

CHANNELS = ("700000000000000101", "700000000000000102")


@pytest.fixture
async def bot(tmp_path: Path) -> AsyncIterator[DiscordBot]:
    # nonce_window=0: every nonce has expired by the time a copy is sent again.
    async with (
        FakeDiscord(nonce_window=0) as fake,
        discord_bot(
            fake,
            f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite'}",
            FixedClock(FRIDAY),
            connect=False,
            request_timeout=0.5,
        ) as running,
    ):
        yield running


async def post_update(bot: DiscordBot) -> list[Delivery]:
    admin = Admin(bot.store, bot.ctx.campaign, ADMINS, bot.clock)
    for channel in CHANNELS:
        await admin.subscribe(
            ADMIN, Subscription(0, "discord", GUILD_ID, channel, "en", timezone="UTC")
        )
    draft = Draft(
        Status.STRIKE_ON, {"en": UpdateText("Strike on", "Picket at 6:30")}, Urgency.URGENT
    )
    update = await admin.post(ADMIN, draft)
    async with bot.store.read() as tx:
        found: list[Delivery] = await tx.list_deliveries(update_id=update.id)
    return found


def dispatcher(bot: DiscordBot) -> Dispatcher:
    return Dispatcher(
        bot.store,
        {"discord": bot.adapter},
        bot.ctx.campaign,
        bot.clock,
        settings=DeliverySection(),
        timings=Timings(retry_base=0.01, retry_cap=0.02, send_timeout=5),
    )


async def test_a_copy_sent_by_a_dead_dispatcher_is_found_past_the_nonce_window(
    bot: DiscordBot,
) -> None:
    deliveries = await post_update(bot)
    # A dispatcher claims every copy, posts them, and dies before recording anything.
    now = bot.clock()
    async with bot.store.write() as tx:
        claimed = await q.claim(
            tx, worker="dead", platform="discord", now=now,
            lease_until=now + timedelta(seconds=60), limit=10,
        )  # fmt: skip
    assert len(claimed) == len(deliveries) == 2
    async with bot.store.read() as tx:
        subs = await q.subscriptions_by_id(tx, {d.subscription_id for d in claimed})
        update = await tx.get_update(claimed[0].update_id or 0, now)
    assert update is not None
    message = update_message(update, "en", bot.ctx.campaign, timezone="UTC")
    for delivery in claimed:
        channel = ChannelRef(GUILD_ID, subs[delivery.subscription_id].channel)
        await bot.adapter.send(channel, message, idempotency_key=delivery.id)
    # One of the channels does not let the bot read its history.
    bot.fake.no_history_channels.add(CHANNELS[1])

    # Its lease lapses long after Discord forgot the nonces; another dispatcher takes over.
    bot.clock.advance(minutes=2)
    stats = await dispatcher(bot).drain()

    assert stats.found == 1 and stats.sent == 2
    (kept,) = bot.fake.channel_messages(CHANNELS[0])  # found, recorded, not posted again
    assert len(bot.fake.channel_messages(CHANNELS[1])) == 2  # the documented window
    async with bot.store.read() as tx:
        rows = {d.id: d for d in await tx.list_deliveries(limit=None)}
    assert {d.state for d in rows.values()} == {DeliveryState.SENT}
    assert kept.id in {d.platform_message_id for d in rows.values()}
    assert all(d.in_doubt_since is not None for d in rows.values())


async def test_a_send_whose_answer_was_lost_is_found_not_posted_again(bot: DiscordBot) -> None:
    await post_update(bot)
    # The first send to each channel is posted, but its answer never comes back.
    bot.fake.inject("lost", times=2)

    stats = await dispatcher(bot).drain()

    assert stats.found == 2 and stats.sent == 2 and stats.retried >= 2
    for channel in CHANNELS:
        (message,) = bot.fake.channel_messages(channel)
        assert "#strikebot=" in message.embeds[0]["url"]
    assert bot.fake.nonce_hits == 0  # the nonce did not save it: the look did
