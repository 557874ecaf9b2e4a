"""The gateway: drops are survived (discord.py RESUMEs), what we hold survives them, missed
events are replayed, deliveries go out while it is down, and /healthz sees all of it."""

from __future__ import annotations

import asyncio
import itertools
import random
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adapters.discord._adapter import gateway_retry_delay
from bot.clock import FixedClock
from bot.ports import ChannelRef, OutboundMessage
from tests.fakes.discord import (
    CHANNEL_MESSAGE,
    COMMS_ROLE_ID,
    GUILD_ID,
    DiscordBot,
    FakeDiscord,
    as_member,
    button_payload,
    buttons,
    discord_bot,
    load_payload,
    modal_submit_payload,
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


async def ask_status(bot: DiscordBot) -> str:
    iid = await bot.fake.send_interaction(load_payload("interaction_command_status"))
    (reply,) = await bot.fake.wait_reply(iid)
    assert reply.type == CHANNEL_MESSAGE
    return str(reply.embeds[0]["title"])


async def test_health_reports_a_connected_gateway(bot: DiscordBot) -> None:
    health = bot.adapter.health()

    assert health["connected"] is True and health["state"] == "connected"
    assert health["shards"] == 1 and health["shards_connected"] == 1
    assert health["disconnects"] == 0 and health["last_disconnect"] is None
    assert bot.fake.identifies == 1


async def test_an_event_discord_py_cannot_read_is_dropped_not_the_gateway(
    bot: DiscordBot, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 11: an interaction whose channel id is not a number made discord.py raise in the
    gateway's receive loop, which dropped the connection with every reply in flight."""
    odd = load_payload("interaction_command_status")
    odd["channel_id"] = "not-a-number"
    if isinstance(odd.get("channel"), dict):
        odd["channel"]["id"] = "not-a-number"
    await bot.fake.send_interaction(odd)
    assert await ask_status(bot)  # answered on the same connection
    health = bot.adapter.health()
    assert health["disconnects"] == 0 and health["state"] == "connected"
    assert bot.fake.identifies == 1 and bot.fake.resumes == 0
    assert "INTERACTION_CREATE event that could not be read" in caplog.text


@pytest.mark.parametrize("close_code", [4000, None], ids=["close-4000", "tcp-cut"])
async def test_a_dropped_gateway_resumes_and_commands_still_work(
    bot: DiscordBot, close_code: int | None
) -> None:
    before = await ask_status(bot)

    await bot.fake.drop_gateway(close_code)
    await bot.fake.wait_for(lambda: bot.fake.resumes == 1, within=15)  # a hang guard
    await bot.adapter.wait_health(lambda health: health["resumes"] == 1 and health["connected"])

    assert await ask_status(bot) == before
    health = bot.adapter.health()
    assert health["disconnects"] == 1 and health["resumes"] == 1
    assert health["last_disconnect"] == FRIDAY.isoformat()
    assert bot.fake.identifies == 1  # resumed, not re-identified


async def test_an_interaction_sent_during_a_drop_is_answered_after_resume(
    bot: DiscordBot,
) -> None:
    bot.fake.gateway_open = False
    await bot.fake.drop_gateway(4000)
    iid = await bot.fake.send_interaction(load_payload("interaction_command_status"), buffered=True)
    assert bot.fake.replies.get(iid) is None

    bot.fake.gateway_open = True  # discord.py retries; RESUME replays the missed event
    (reply,) = await bot.fake.wait_reply(iid, within=15)

    assert reply.type == CHANNEL_MESSAGE and bot.fake.resumes == 1


async def test_a_preview_written_before_a_drop_can_be_posted_after_it(bot: DiscordBot) -> None:
    command = as_member(load_payload("interaction_command_post"), roles=(COMMS_ROLE_ID,))
    (modal,) = await bot.fake.wait_reply(await bot.fake.send_interaction(command))
    values: dict[str, str | list[str]] = {"headline": "Rally Saturday", "urgency": ["routine"]}
    iid = await bot.fake.send_interaction(modal_submit_payload(modal, values, like=command))
    await bot.fake.wait_reply(iid, count=2)

    await bot.fake.drop_gateway(4000)
    await bot.fake.wait_for(lambda: bot.fake.resumes == 1, within=15)  # a hang guard
    message = bot.fake.original_message(iid)
    click = await bot.fake.send_interaction(
        button_payload(message, buttons(message)["Post"], like=command)
    )
    await bot.fake.wait_reply(click, count=2)

    async with bot.store.read() as tx:
        (latest,) = await tx.list_updates(bot.clock(), limit=1)
    assert latest.text("en").headline == "Rally Saturday"


async def test_deliveries_go_out_while_the_gateway_is_down(bot: DiscordBot) -> None:
    bot.fake.gateway_open = False
    await bot.fake.drop_gateway(4000)
    await bot.adapter.wait_health(lambda health: not health["connected"])

    message_id = await bot.adapter.send(
        ChannelRef(GUILD_ID, "700000000000000055"),
        OutboundMessage(title="Picket at 6:30 AM"),
        idempotency_key="d0000000000000000001",
    )

    assert bot.fake.messages[message_id].embeds[0]["title"] == "Picket at 6:30 AM"
    health = bot.adapter.health()
    assert health["state"] == "reconnecting" and health["connected"] is False
    assert health["last_disconnect"] is not None


async def test_a_refused_token_stops_the_gateway_but_says_why(tmp_path: Path) -> None:
    async with (
        FakeDiscord() as fake,
        discord_bot(
            fake,
            f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite'}",
            FixedClock(FRIDAY),
            connect=False,
            token="a-revoked-token",
        ) as bot,
    ):
        await bot.adapter.wait_health(lambda health: health["state"] == "failed")
        health = bot.adapter.health()

    assert health["connected"] is False
    assert "DISCORD_TOKEN" in str(health["last_error"])
    assert fake.identifies == 0


async def test_a_gateway_answering_5xx_is_asked_again_later_and_later(tmp_path: Path) -> None:
    """Issue 28: with /gateway/bot answering 503 the bot logged in again every second,
    forever (805 times in 14 minutes). Now each failure in a row waits about twice as long
    (1 s, 2 s, 4 s... with up to half again at random, up to minutes)."""
    async with FakeDiscord() as fake:
        fake.inject(503, route="GET /gateway/bot", times=1000, raw=("text/plain", b"upstream"))
        async with discord_bot(
            fake, f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite'}", FixedClock(FRIDAY),
            connect=False,
        ):  # fmt: skip
            await asyncio.sleep(4.5)
        logins = [p for _, method, p, _ in fake.requests if method == "GET" and p.endswith("/@me")]
        asked = [p for _, method, p, _ in fake.requests if p.endswith("/gateway/bot")]
    # Logins at 0 s, after 1-1.5 s, after 2-3 s more: three at most (it was five).
    assert 1 <= len([p for p in logins if p.endswith("/users/@me")]) <= 3, logins
    assert len(asked) <= 3
    assert fake.identifies == 0


def test_the_gateways_retry_waits_grow_to_minutes_with_jitter() -> None:
    rng = random.Random(28)
    waits = [gateway_retry_delay(n, rng) for n in range(1, 13)]
    assert 1.0 <= waits[0] <= 1.5 and 2.0 <= waits[1] <= 3.0
    assert all(later > earlier for earlier, later in itertools.pairwise(waits[:8]))
    assert 240 <= max(waits) <= 360  # minutes, never more than six
    again = [gateway_retry_delay(12, random.Random(seed)) for seed in range(5)]
    assert len(set(again)) == 5  # cut off together, they do not come back together
