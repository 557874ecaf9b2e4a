"""Outbound REST through real discord.py against the fake: nonce dedupe, mentions off,
edits and deletes, rate limits honoured, and errors mapped to what the dispatcher does."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adapters.discord._outbound import WindowGuard
from bot.clock import FixedClock
from bot.errors import PermanentDeliveryError, TransientDeliveryError
from bot.models import Status
from bot.ports import ChannelRef, Field, Link, MessageKind, OutboundMessage
from tests.fakes.discord import GUILD_ID, DiscordBot, FakeDiscord, discord_bot
from tests.support import FRIDAY

CHANNEL = ChannelRef(GUILD_ID, "700000000000000201")
MESSAGE = OutboundMessage(
    title="Strike continues Tuesday",
    body="Picket lines at 6:30 AM. @everyone @here <@&700000000000000020>",
    kind=MessageKind.UPDATE,
    status=Status.STRIKE_ON,
    status_label="On strike",
    fields=(Field("Next step", "Rally at Grand Park, 10 AM"),),
    links=(Link("Read it on the web", "https://strike.example.org/updates/7"),),
    url="https://strike.example.org/updates/7",
    footer="Update #7",
)


@pytest.fixture
async def fake() -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord() as running:
        yield running


@pytest.fixture
async def bot(tmp_path: Path, fake: FakeDiscord) -> AsyncIterator[DiscordBot]:
    # Patient: on a loaded machine a slow answer must not look like a timeout.
    url = f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite'}"
    async with discord_bot(fake, url, FixedClock(FRIDAY), request_timeout=10.0) as running:
        yield running


@pytest.fixture
async def impatient_bot(tmp_path: Path, fake: FakeDiscord) -> AsyncIterator[DiscordBot]:
    """For the tests that wait for the request timeout to pass: keep it short."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite'}"
    async with discord_bot(fake, url, FixedClock(FRIDAY), request_timeout=0.5) as running:
        yield running


async def test_send_posts_an_embed_with_the_delivery_id_as_nonce_and_no_mentions(
    bot: DiscordBot,
) -> None:
    message_id = await bot.adapter.send(CHANNEL, MESSAGE, idempotency_key="a1b2c3d4e5f6a7b8c9d0")

    sent = bot.fake.messages[message_id]
    assert sent.channel_id == CHANNEL.channel
    assert sent.nonce == "a1b2c3d4e5f6a7b8c9d0" and sent.payload["enforce_nonce"] is True
    assert sent.allowed_mentions == {"parse": []}
    assert sent.content == ""
    (embed,) = sent.embeds
    assert embed["title"] == "Strike continues Tuesday"
    assert embed["url"] == f"{MESSAGE.url}#strikebot=a1b2c3d4e5f6a7b8c9d0"  # the marker
    assert embed["color"] == 0xC8102E
    assert embed["author"]["name"] == "On strike"
    assert embed["fields"] == [
        {"name": "Next step", "value": "Rally at Grand Park, 10 AM", "inline": False}
    ]
    assert embed["footer"]["text"] == "Update #7"
    assert "[Read it on the web](https://strike.example.org/updates/7)" in embed["description"]


async def test_a_fan_out_of_one_message_marks_each_copy_with_its_own_id_only(
    bot: DiscordBot,
) -> None:
    # The adapter renders a message once for every channel of a fan-out: marking one copy
    # must not change the link the next copies start from.
    channels = [ChannelRef(GUILD_ID, str(700000000000000301 + n)) for n in range(3)]
    keys = [f"f{n:019d}" for n in range(3)]
    sent = [
        await bot.adapter.send(channel, MESSAGE, idempotency_key=key)
        for channel, key in zip(channels, keys, strict=True)
    ]

    for message_id, key in zip(sent, keys, strict=True):
        (embed,) = bot.fake.messages[message_id].embeds
        assert embed["url"] == f"{MESSAGE.url}#strikebot={key}"


async def test_a_retried_send_returns_the_same_message(bot: DiscordBot) -> None:
    first = await bot.adapter.send(CHANNEL, MESSAGE, idempotency_key="d00000000000000000aa")
    again = await bot.adapter.send(CHANNEL, MESSAGE, idempotency_key="d00000000000000000aa")

    assert first == again
    assert len(bot.fake.channel_messages(CHANNEL.channel)) == 1
    assert bot.fake.nonce_hits == 1


async def test_edit_and_delete(bot: DiscordBot) -> None:
    message_id = await bot.adapter.send(CHANNEL, MESSAGE, idempotency_key="d00000000000000000ab")
    retracted = OutboundMessage(
        title="RETRACTED: Strike continues Tuesday",
        body="This update was retracted. Reason: posted too early",
        kind=MessageKind.RETRACTION,
        retracted=True,
        fields=(Field("Original text (withdrawn)", "Strike continues Tuesday\nPicket lines"),),
    )

    await bot.adapter.edit(CHANNEL, message_id, retracted)
    embed = bot.fake.messages[message_id].embeds[0]
    assert embed["title"] == "RETRACTED: Strike continues Tuesday"
    assert embed["fields"][0]["value"] == "~~Strike continues Tuesday~~\n~~Picket lines~~"

    await bot.adapter.delete(CHANNEL, message_id)
    assert bot.fake.messages[message_id].deleted
    await bot.adapter.delete(CHANNEL, message_id)  # already gone: nothing to do


async def test_a_ten_thousand_character_body_is_trimmed_to_fit_with_a_link(
    bot: DiscordBot,
) -> None:
    long = OutboundMessage(
        title="T" * 300, body="word " * 2000, url="https://strike.example.org/updates/8"
    )

    message_id = await bot.adapter.send(CHANNEL, long, idempotency_key="d00000000000000000ac")

    (embed,) = bot.fake.messages[message_id].embeds  # the fake refuses what Discord refuses
    assert len(embed["title"]) <= 256
    assert len(embed["description"]) <= 4096
    assert embed["description"].endswith("full text: https://strike.example.org/updates/8")


async def test_missing_access_is_permanent(bot: DiscordBot) -> None:
    bot.fake.forbidden_channels.add(CHANNEL.channel)

    with pytest.raises(PermanentDeliveryError, match=r"403 code 50001: Missing Access"):
        await bot.adapter.send(CHANNEL, MESSAGE, idempotency_key="d00000000000000000ad")


async def test_unknown_channel_is_permanent(bot: DiscordBot) -> None:
    bot.fake.missing_channels.add(CHANNEL.channel)

    with pytest.raises(PermanentDeliveryError, match=r"404 code 10003"):
        await bot.adapter.send(CHANNEL, MESSAGE, idempotency_key="d00000000000000000ae")


async def test_editing_a_deleted_message_is_permanent(bot: DiscordBot) -> None:
    message_id = await bot.adapter.send(CHANNEL, MESSAGE, idempotency_key="d00000000000000000af")
    await bot.adapter.delete(CHANNEL, message_id)

    with pytest.raises(PermanentDeliveryError, match="could not find the message"):
        await bot.adapter.edit(CHANNEL, message_id, MESSAGE)


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        (503, r"server error \(503\)"),
        (502, r"did not answer within 0\.5s"),  # discord.py sleeps between 502 retries
        ("timeout", r"did not answer within 0\.5s"),
        ("reset", "connection to Discord failed"),
    ],
)
async def test_server_errors_timeouts_and_resets_are_transient(
    impatient_bot: DiscordBot, fault: int | str, reason: str
) -> None:
    impatient_bot.fake.inject(fault, times=5)

    with pytest.raises(TransientDeliveryError, match=reason):
        await impatient_bot.adapter.send(CHANNEL, MESSAGE, idempotency_key="d00000000000000000b0")


async def test_a_429_discordpy_gives_up_on_is_transient_with_retry_after(bot: DiscordBot) -> None:
    bot.fake.inject(429, times=5, retry_after=0.01)

    with pytest.raises(TransientDeliveryError) as caught:
        await bot.adapter.send(CHANNEL, MESSAGE, idempotency_key="d00000000000000000b1")

    assert caught.value.retry_after is not None and caught.value.retry_after > 0
    assert len(bot.fake.rate_limited) == 5  # discord.py retried on its own first


async def test_a_long_429_is_transient_at_once_with_discords_retry_after(bot: DiscordBot) -> None:
    bot.fake.inject(429, retry_after=45.0)

    with pytest.raises(TransientDeliveryError) as caught:
        await bot.adapter.send(CHANNEL, MESSAGE, idempotency_key="d00000000000000000b2")

    assert caught.value.retry_after == 45.0


async def test_a_brief_429_is_retried_by_discordpy_and_succeeds(bot: DiscordBot) -> None:
    bot.fake.inject(429, retry_after=0.01)

    message_id = await bot.adapter.send(CHANNEL, MESSAGE, idempotency_key="d00000000000000000b3")

    assert bot.fake.messages[message_id].channel_id == CHANNEL.channel
    assert len(bot.fake.rate_limited) == 1


async def test_per_channel_buckets_are_honoured_without_429s(tmp_path: Path) -> None:
    async with (
        FakeDiscord(per_channel_limit=2, per_channel_window=0.2) as fake,
        discord_bot(
            fake, f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite'}", FixedClock(FRIDAY)
        ) as bot,
    ):
        for n in range(5):
            await bot.adapter.send(CHANNEL, MESSAGE, idempotency_key=f"d0000000000000000c{n:02d}")

        assert len(fake.channel_messages(CHANNEL.channel)) == 5
        # discord.py read X-RateLimit-Remaining: 0 and waited for the reset instead.
        assert fake.rate_limited == []


@pytest.mark.parametrize("retry_after", [0.05, 27.0, 33.5, 600.0])
async def test_a_global_429_of_any_length_is_a_global_pause_and_leaves_nothing_stuck(
    tmp_path: Path, retry_after: float
) -> None:
    """Short, just under the request timeout's reach (25-30 s), past discord.py's 30 s
    maximum, minutes: each is reported at once as a pause of the whole platform, with
    Discord's exact Retry-After, and the very next request goes through (discord.py's
    global lock was never taken, so nothing is left waiting on it).

    Before, discord.py slept the short ones out inside the request (the dispatcher never
    paused), the 25-30 s ones until the request timeout cancelled the sleep and left the lock
    shut (every later request hung), and the long ones came back as one channel's limit."""
    async with (
        FakeDiscord() as fake,
        discord_bot(
            fake,
            f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite'}",
            FixedClock(FRIDAY),
            connect=False,
            request_timeout=5.0,
        ) as bot,
    ):
        fake.inject(429, is_global=True, retry_after=retry_after)

        with pytest.raises(TransientDeliveryError) as caught:
            await bot.adapter.send(CHANNEL, MESSAGE, idempotency_key="d0000000000000000d01")

        assert caught.value.is_global
        assert caught.value.retry_after == retry_after
        assert [r.scope for r in fake.rate_limited] == ["global"]  # not retried by discord.py
        message_id = await bot.adapter.send(
            CHANNEL, MESSAGE, idempotency_key="d0000000000000000d02"
        )
        assert [m.id for m in fake.channel_messages(CHANNEL.channel)] == [message_id]


async def test_a_global_429_from_the_fakes_own_limit_is_a_global_pause(tmp_path: Path) -> None:
    """The fake's real global limiter (not an injection) gives the same answer."""
    async with (
        FakeDiscord(global_per_second=2) as fake,
        discord_bot(
            fake, f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite'}", FixedClock(FRIDAY), connect=False
        ) as bot,
    ):
        fake.reset_counters()
        channels = [ChannelRef(GUILD_ID, f"70000000000000030{n}") for n in range(4)]
        with pytest.raises(TransientDeliveryError) as caught:
            for n, channel in enumerate(channels):
                await bot.adapter.send(
                    channel, MESSAGE, idempotency_key=f"d0000000000000000d{n:02d}"
                )

        assert caught.value.is_global and caught.value.retry_after is not None
        assert 0 < caught.value.retry_after <= 1.0
        assert {r.scope for r in fake.rate_limited} == {"global"}


async def test_cloudflares_429_without_via_pauses_the_whole_platform(bot: DiscordBot) -> None:
    bot.fake.inject(429, raw=("text/html", b"<html><h1>Error 1015</h1> You are being rate limited"))

    with pytest.raises(TransientDeliveryError) as caught:
        await bot.adapter.send(CHANNEL, MESSAGE, idempotency_key="d0000000000000000d03")

    assert caught.value.is_global


@pytest.mark.parametrize(
    ("status", "content_type", "body"),
    [
        (503, "text/html", b"<html><body><h1>503 Service Unavailable</h1></body></html>"),
        (520, "text/plain", b"error code: 520"),
        (403, "text/html", b"<!DOCTYPE html><title>Attention Required! | Cloudflare</title>"),
        (404, "text/html; charset=utf-8", b"<html>404 Not Found (nginx)</html>"),
        (400, "text/plain", b"Bad Request"),
        (400, "application/json", b'{"message": "Invalid Form Bo'),
        (200, "application/json", b'{"id": "1234'),
        (200, "text/html", b"<html>Please log in to the hotel Wi-Fi</html>"),
        (200, "application/json", b'{"message": "ok"}'),
        (200, "application/json", b"[]"),
        (502, "text/plain", b"\xff\xfe not utf-8"),
    ],
)
async def test_an_answer_that_is_not_discords_json_is_retried_not_parked(
    tmp_path: Path, status: int, content_type: str, body: bytes
) -> None:
    """A proxy's page, a cut body, a 2xx without a message: not Discord judging the channel,
    so the send is retried (transient) with a short sentence, and the channel is not
    parked as broken."""
    async with (
        FakeDiscord() as fake,
        discord_bot(
            fake, f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite'}", FixedClock(FRIDAY), connect=False
        ) as bot,
    ):
        # 502 is one discord.py retries by itself (sleeping 1, 3, 5... s): fail every try.
        fake.inject(status, raw=(content_type, body), times=5 if status == 502 else 1)

        with pytest.raises(TransientDeliveryError) as caught:
            await bot.adapter.send(CHANNEL, MESSAGE, idempotency_key="d0000000000000000d04")

        assert len(caught.value.reason) < 400  # an excerpt, never the whole page
        assert "<!DOCTYPE" not in caught.value.reason


async def test_a_refused_token_is_transient_not_the_channels_fault(tmp_path: Path) -> None:
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
        with pytest.raises(TransientDeliveryError, match="DISCORD_TOKEN"):
            await bot.adapter.send(CHANNEL, MESSAGE, idempotency_key="d00000000000000000b4")


async def test_a_burst_of_sends_never_exceeds_the_global_rate(tmp_path: Path) -> None:
    """Even when the caller sends all at once, no more than `pacing.global_per_second`
    requests start in any second, so Discord's global limit is never hit.

    Eleven sends at once would break the fake's limit of 10/s; paced at 4/s they cannot:
    the window guard lets at most 5 start in any second (the pace and its slack), so even a
    loaded machine that delays one second's requests into the next lands at most 5 + 5."""
    from bot.ports import Pacing

    async with (
        FakeDiscord(global_per_second=10) as fake,
        discord_bot(
            fake,
            f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite'}",
            FixedClock(FRIDAY),
            pacing=Pacing(global_per_second=4, per_channel_per_second=1),
        ) as bot,
    ):
        fake.reset_counters()
        channels = [ChannelRef(GUILD_ID, f"7000000000000004{n:02d}") for n in range(11)]
        await asyncio.gather(
            *(
                bot.adapter.send(c, MESSAGE, idempotency_key=f"d0000000000000000e{n:02d}")
                for n, c in enumerate(channels)
            )
        )

        assert all(len(fake.channel_messages(c.channel)) == 1 for c in channels)
        assert fake.rate_limited == []


async def test_the_window_guard_lets_waiting_requests_through_in_order_one_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Requests bunched at the guard start in order, never more than its limit in any
    window; only the first in line sleeps until there is room (the others do not each
    poll the window: a fan-out queued there costs one wait per request, not one per
    request per request ahead of it)."""
    guard = WindowGuard(5, window=0.2)
    sleeps = 0
    real_sleep = asyncio.sleep

    async def counted_sleep(delay: float) -> None:
        nonlocal sleeps
        sleeps += 1
        await real_sleep(delay)

    monkeypatch.setattr(asyncio, "sleep", counted_sleep)
    started: list[tuple[int, float]] = []

    async def request(n: int) -> None:
        await guard.wait()
        started.append((n, time.monotonic()))

    await asyncio.gather(*(request(n) for n in range(12)))

    assert [n for n, _ in started] == list(range(12))
    times = [at for _, at in started]
    assert all(times[i + 5] - times[i] >= 0.2 - 1e-6 for i in range(len(times) - 5))
    assert sleeps <= 12


def test_a_request_answered_late_counts_as_started_late_at_the_window_guard(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A server that stalled counts the requests sent meanwhile when it wakes: a request
    answered later than the shortest round trip by more than the guard's slack holds the
    request a window after it as if it had started that late."""
    now = [100.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    guard = WindowGuard(1, window=1.0, slack=0.02)
    first = guard._try_start()
    assert first is not None
    now[0] += 0.01
    guard.answered(first)  # 10 ms: the shortest round trip so far
    assert first[0] == 100.0
    now[0] = 101.0
    second = guard._try_start()
    assert second is not None
    now[0] = 101.3
    guard.answered(second)  # 300 ms: 289.5 ms past the shortest (risen 0.5 ms), less 20
    assert second[0] == pytest.approx(101.2695)
    now[0] = 102.1
    assert guard._try_start() is None  # within a window of the second as counted
    assert guard._wait == pytest.approx(0.1695)
    now[0] = 102.27
    assert guard._try_start() is not None


@pytest.mark.parametrize(("burst", "held"), [(2, range(1)), (1, range(40, 101))])
def test_the_window_guard_lets_the_pacers_pairs_through_and_keeps_discords_window(
    monkeypatch: pytest.MonkeyPatch, burst: int, held: range
) -> None:
    """Discord's pacer sends its queue in pairs (burst 2, one wake-up for two requests):
    the guard made for that burst holds none of them, where one made for single requests
    would hold the second of nearly every pair (a timer and a wake-up each); either way no
    sliding second holds more than Discord's 50."""
    from adapters.discord._settings import DiscordDelivery

    pacing = DiscordDelivery(discord_global_per_second=48.5).pacing()
    assert pacing.burst == 2
    now = [1000.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    guard = WindowGuard.for_pace(pacing.global_per_second, 50, burst)
    starts, waited = [], 0
    for pair in range(100):
        for _ in range(2):
            now[0] = max(now[0], 1000.0 + pair * 2 / 48.5)
            while guard._try_start() is None:
                waited += 1
                now[0] += guard._wait
            starts.append(now[0])
    assert waited in held
    assert max(sum(1 for t in starts if a <= t < a + 1.0) for a in starts) <= 50


async def test_the_adapters_guard_is_made_for_its_pacings_burst(tmp_path: Path) -> None:
    """The adapter's last check is the guard for the pairs its shipped pacing sends (the
    test above shows what a guard for single requests would hold)."""
    async with (
        FakeDiscord() as fake,
        discord_bot(
            fake, f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite'}", FixedClock(FRIDAY), connect=False
        ) as bot,
    ):
        pacing = bot.adapter.pacing
        assert pacing.burst == 2
        made = WindowGuard.for_pace(pacing.global_per_second, 50, pacing.burst)
        assert bot.adapter._rest.guard.rules == made.rules
        assert made.rules[0] == (50, 1.0)  # the pace (48) and the pair in any second
