"""Two instances on one PostgreSQL database against a fake Discord that gives each gateway
event to EVERY session identified for its shard, as Discord does: each interaction is
answered once, over the gateway and through the Interactions Endpoint URL, and a preview's
Post button works on the other instance."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from bot.clock import FixedClock
from bot.delivery.leadership import PostgresLeadership
from tests.fakes._server import serve
from tests.fakes.discord import (
    CHANNEL_MESSAGE,
    COMMS_ROLE_ID,
    DEFERRED_CHANNEL_MESSAGE,
    DEFERRED_UPDATE,
    MODAL,
    DiscordBot,
    FakeDiscord,
    as_member,
    button_payload,
    buttons,
    discord_bot,
    interaction_payload,
    load_payload,
    modal_submit_payload,
)
from tests.support import FRIDAY, end_backend, fresh_postgres_database, postgres_url

VALUES: dict[str, str | list[str]] = {
    "headline": "Strike continues Tuesday",
    "body": "Picket lines at 6:30 AM at every school.",
    "next_step": "Rally at Grand Park, 10 AM",
    "urgency": ["important"],
}


@pytest.fixture
async def pg_url() -> AsyncIterator[str]:
    postgres_url()  # skips with the reason when PostgreSQL is not configured
    async with fresh_postgres_database(migrated=True) as url:
        yield url


class Skipped(logging.Handler):
    """Counts the interactions an instance left to another (its claim came second)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.count = 0
        self.changed = asyncio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if "was handled elsewhere" in record.getMessage():
            self.count += 1
            self.changed.set()

    async def wait_for(self, count: int, within: float = 10.0) -> None:
        async with asyncio.timeout(within):
            while self.count < count:
                self.changed.clear()
                await self.changed.wait()


def admin_post_command() -> dict[str, Any]:
    return as_member(load_payload("interaction_command_post"), roles=(COMMS_ROLE_ID,))


async def updates_count(bot: DiscordBot) -> int:
    async with bot.store.read() as tx:
        return int(await tx.count_updates())


async def lose_lock(bot: DiscordBot, lead: Any) -> None:
    """Cut the lock's connection at the server, as when the holder's process dies or its
    network to PostgreSQL goes: PostgreSQL releases the lock."""
    assert isinstance(lead, PostgresLeadership) and lead.backend_pid
    await end_backend(bot.store, lead.backend_pid)


# ---------------------------------------------------------------------------- the gateway


async def test_gateway_one_session_per_shard_and_each_interaction_answered_once(
    pg_url: str,
) -> None:
    skipped = Skipped()
    logger = logging.getLogger("strikebot.discord")
    logger.addHandler(skipped)
    logger.setLevel(logging.INFO)
    try:
        await _gateway_scenario(pg_url, skipped)
    finally:
        logger.removeHandler(skipped)
        logger.setLevel(logging.NOTSET)


async def _gateway_scenario(pg_url: str, skipped: Skipped) -> None:
    clock = FixedClock(FRIDAY)
    async with (
        FakeDiscord() as fake,
        # The first instance checks its lock only once a minute: when it loses the lock,
        # its session stays up that long beside the new holder's, and Discord gives every
        # event to both.
        discord_bot(fake, pg_url, clock, election_seconds=60) as one,
        discord_bot(fake, pg_url, clock, connect=False, election_seconds=0.05) as two,
    ):
        assert fake.connected_sessions() == 1 and fake.identifies == 1
        assert one.adapter.holding is not None and two.adapter.holding is None

        # A preview written through the first instance...
        command = admin_post_command()
        opened = await fake.send_interaction(command)
        (modal,) = await fake.wait_reply(opened)
        assert modal.type == MODAL
        submitted = await fake.send_interaction(modal_submit_payload(modal, VALUES, like=command))
        await fake.wait_reply(submitted, count=2)
        preview = fake.original_message(submitted)

        # ...then the lock moves to the second instance: both sessions are up for a while.
        await lose_lock(one, one.adapter.gateway_locks[None])
        await fake.wait_connected(sessions=2, within=10)
        await two.adapter.wait_health(lambda health: bool(health["connected"]))
        assert fake.identifies == 2

        asked = [
            await fake.send_interaction(interaction_payload("status", locale="en-US"))
            for _ in range(6)
        ]
        for iid in asked:
            (answer,) = await fake.wait_reply(iid)
            assert answer.type == CHANNEL_MESSAGE
        # Every event reached both sessions; the second copy was claimed already.
        await skipped.wait_for(len(asked))
        assert all(len(fake.replies[iid]) == 1 for iid in asked)
        assert not [r for r in fake.requests if r[3] == 400]  # never "already acknowledged"

        # The preview's Post button, clicked now, is handled by one of them and posts once.
        click = await fake.send_interaction(
            button_payload(preview, buttons(preview)["Post"], like=command)
        )
        ack, result = await fake.wait_reply(click, count=2)
        assert ack.type == DEFERRED_UPDATE and "Posted update" in result.text
        assert await updates_count(two) == 4  # three seeded, one posted


# ---------------------------------------------------------------------------- over HTTP


@contextlib.asynccontextmanager
async def endpoint(bot: DiscordBot) -> AsyncIterator[str]:
    """The instance's web server with its routes; yields the Interactions Endpoint URL."""
    app = web.Application()
    bot.adapter.mount(app)
    runner, port = await serve(app, access_log=None, shutdown_timeout=0.1)
    try:
        yield f"http://127.0.0.1:{port}/discord/interactions"
    finally:
        await runner.cleanup()


async def test_interactions_endpoint_answers_each_interaction_once_on_any_instance(
    pg_url: str,
) -> None:
    clock = FixedClock(FRIDAY)
    async with FakeDiscord() as fake:
        env = {"DISCORD_PUBLIC_KEY": fake.public_key}
        async with (
            discord_bot(fake, pg_url, clock, env=env) as one,
            discord_bot(fake, pg_url, clock, env=env, connect=False) as two,
            endpoint(one) as url_one,
            endpoint(two) as url_two,
        ):
            urls = [url_one, url_two]
            asked = [
                await fake.post_interaction(interaction_payload("status"), urls[i % 2])
                for i in range(6)
            ]
            for iid in asked:
                (answer,) = await fake.wait_reply(iid)
                assert answer.type == CHANNEL_MESSAGE and "Day" in answer.text

            # The same request again, at either instance: refused, handled by nobody.
            assert await fake.replay_interaction(asked[0], url_two) == 409
            assert await fake.replay_interaction(asked[1], url_two) == 409
            assert all(len(fake.replies[iid]) == 1 for iid in asked)

            # A post written across instances: the modal opened by one, submitted to the
            # other, Post clicked on the first.
            command = admin_post_command()
            opened = await fake.post_interaction(command, url_one)
            (modal,) = await fake.wait_reply(opened)
            assert modal.type == MODAL
            submitted = await fake.post_interaction(
                modal_submit_payload(modal, VALUES, like=command), url_two
            )
            deferred, shown = await fake.wait_reply(submitted, count=2)
            assert deferred.type == DEFERRED_CHANNEL_MESSAGE and deferred.ephemeral
            assert "Preview" in shown.text
            preview = fake.original_message(submitted)
            click = await fake.post_interaction(
                button_payload(preview, buttons(preview)["Post"], like=command), url_one
            )
            ack, result = await fake.wait_reply(click, count=2)
            assert ack.type == DEFERRED_UPDATE and "Posted update" in result.text
            assert await updates_count(one) == 4
            again = await fake.post_interaction(
                button_payload(preview, buttons(preview)["Post"], like=command), url_two
            )
            (answer,) = await fake.wait_reply(again)
            assert "expired or was already used" in answer.text
            assert await updates_count(two) == 4


async def test_interactions_endpoint_refuses_what_discord_did_not_sign(pg_url: str) -> None:
    clock = FixedClock(FRIDAY)
    async with FakeDiscord() as fake:
        env = {"DISCORD_PUBLIC_KEY": fake.public_key}
        async with (
            discord_bot(fake, pg_url, clock, env=env, connect=False) as bot,
            endpoint(bot) as url,
            aiohttp.ClientSession() as session,
        ):
            ping = json.dumps({"type": 1, "id": "1", "application_id": "1"}).encode()
            async with session.post(url, data=ping, headers=fake.sign(ping)) as response:
                assert response.status == 200 and await response.json() == {"type": 1}
            forged = fake.sign(b'{"type": 1}')
            async with session.post(url, data=ping, headers=forged) as response:
                assert response.status == 401
            async with session.post(url, data=ping) as response:
                assert response.status == 401
            bad = dict(fake.sign(ping), **{"X-Signature-Ed25519": "zz"})
            async with session.post(url, data=ping, headers=bad) as response:
                assert response.status == 401
            junk = b"not json"
            async with session.post(url, data=junk, headers=fake.sign(junk)) as response:
                assert response.status == 400
            no_id = json.dumps({"type": 2}).encode()
            async with session.post(url, data=no_id, headers=fake.sign(no_id)) as response:
                assert response.status == 400
