"""`strikebot deliveries` (list, retry) and the `post --wait` progress helper, against a real
store and a fake platform that refuses one channel."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from bot.cli import CliContext, build_parser
from bot.cli.progress import wait_for_deliveries
from bot.clock import utcnow
from bot.config import DeliverySection, Settings, load_config
from bot.delivery.dispatcher import Dispatcher, Timings
from bot.editorial.admin import Admin, Draft
from bot.errors import Conflict, InvalidInput, NotFound
from bot.models import DeliveryState, Status, Subscription, Update, UpdateText, Urgency
from bot.store import Store
from tests.fakes.platform import FakePlatform, FakePlatformAdapter, Fault
from tests.support import ADMIN, ADMINS, CAMPAIGN

WS = "g1"
# A campaign file of its own, so edits to config/strike.toml cannot change these tests.
CAMPAIGN_FILE = """
[campaign]
slug = "utla-2019"
union = "United Teachers Los Angeles"
employer = "Los Angeles Unified School District"
start_date = 2017-04-01
timezone = "America/Los_Angeles"
languages = ["en", "es"]
"""


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[dict[str, Any]]:
    """A store with channels "ok" and "gone" (which refuses the bot), and a dispatcher."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'cli.db'}"
    config = tmp_path / "strike.toml"
    config.write_text(CAMPAIGN_FILE, encoding="utf-8")
    async with (
        Store.open(url) as store,
        FakePlatform() as fake,
        # Patient: on a loaded machine a slow answer must not become a retry the tests count.
        FakePlatformAdapter(fake.url, timeout=10.0) as adapter,
    ):
        admin = Admin(store, CAMPAIGN, ADMINS, utcnow)
        subs = {
            channel: await admin.subscribe(
                ADMIN, Subscription(0, "discord", WS, channel, "en", timezone="UTC")
            )
            for channel in ("ok", "gone")
        }
        fake.refuse(WS, "gone", 403)
        dispatcher = Dispatcher(
            store,
            {"discord": adapter},
            CAMPAIGN,
            utcnow,
            settings=DeliverySection(),
            timings=Timings(retry_base=0.01),
        )
        yield {
            "url": url,
            "config": config,
            "store": store,
            "admin": admin,
            "fake": fake,
            "subs": subs,
            "dispatcher": dispatcher,
        }


async def post(admin: Admin, **options: Any) -> Update:
    draft = Draft(Status.STRIKE_ON, {"en": UpdateText("Picket at 6:30 AM")}, Urgency.URGENT)
    return await admin.post(ADMIN, draft, **options)


async def cli(world: dict[str, Any], *argv: str) -> int:
    args = build_parser().parse_args(
        ["--config", str(world["config"]), "--database-url", world["url"], *argv]
    )
    result: int = await args.handler(args)
    return result


async def test_deliveries_lists_dead_copies_with_their_reasons(
    world: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    update = await post(world["admin"])
    await world["dispatcher"].drain()

    assert await cli(world, "deliveries", "--state", "dead", "--json") == 0
    (dead,) = json.loads(capsys.readouterr().out)
    assert dead["channel"] == "discord:g1/gone"
    assert dead["reason"] == "Missing Access (403)"
    assert (dead["update"], dead["action"], dead["state"]) == (update.id, "post", "dead")

    assert await cli(world, "deliveries", "--update", str(update.id), "--json") == 0
    listed = json.loads(capsys.readouterr().out)
    assert sorted((d["channel"], d["state"]) for d in listed) == [
        ("discord:g1/gone", "dead"),
        ("discord:g1/ok", "sent"),
    ]

    assert await cli(world, "deliveries", "--state", "dead") == 0
    table = capsys.readouterr().out
    assert "Deliveries" in table and "dead" in table
    assert "strikebot deliveries retry" in table

    assert await cli(world, "deliveries", "--state", "pending") == 0
    assert capsys.readouterr().out.strip() == "No pending deliveries."


async def test_retry_requeues_dead_copies_resumes_their_channel_and_is_audited(
    world: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    store: Store = world["store"]
    fake: FakePlatform = world["fake"]
    gone = world["subs"]["gone"]
    await post(world["admin"])
    await world["dispatcher"].drain()
    async with store.read() as tx:
        (dead,) = await tx.list_deliveries(state=DeliveryState.DEAD)
        (sent,) = await tx.list_deliveries(state=DeliveryState.SENT)

    with pytest.raises(InvalidInput):
        await cli(world, "deliveries", "retry")
    with pytest.raises(NotFound, match="nope"):
        await cli(world, "deliveries", "retry", "nope")
    with pytest.raises(Conflict, match="is sent, not dead"):
        await cli(world, "deliveries", "retry", dead.id, sent.id)
    async with store.read() as tx:
        assert (await tx.list_deliveries(state=DeliveryState.DEAD)) == [dead]  # unchanged

    assert await cli(world, "deliveries", "retry", "--all-dead", "--as", "maria", "--json") == 0
    assert json.loads(capsys.readouterr().out) == {
        "requeued": [dead.id],
        "resumed_subscriptions": [gone.id],
    }
    async with store.read() as tx:
        (again,) = await tx.list_deliveries(subscription_id=gone.id)
        sub = await tx.get_subscription(gone.id)
        audit = {(e.action, e.target, e.actor) for e in await tx.list_audit(limit=5)}
    assert (again.state, again.attempts, again.last_error) == (DeliveryState.PENDING, 0, None)
    assert sub is not None and sub.broken_reason is None
    assert ("delivery.retry", f"delivery:{dead.id}", "cli:maria (command line)") in audit
    assert ("subscription.resume", f"subscription:{gone.id}", "cli:maria (command line)") in audit

    fake._refused.clear()  # someone gave the bot its access back
    await world["dispatcher"].drain()
    assert len(fake.messages_in(WS, "gone")) == 1

    assert await cli(world, "deliveries", "retry", "--all-dead") == 0
    assert capsys.readouterr().out.strip() == "No dead deliveries to retry."


def context(world: dict[str, Any]) -> CliContext:
    return CliContext(
        Settings.from_env({}), load_config(world["config"]), world["store"], world["admin"], utcnow
    )


async def test_post_wait_follows_the_fan_out_then_prints_a_summary(
    world: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    world["fake"].script(WS, "ok", Fault.SERVER_ERROR)
    update = await post(world["admin"])
    waiting = asyncio.create_task(
        wait_for_deliveries(context(world), update.id, json_output=True, poll_seconds=0.01)
    )
    for _ in range(5):
        await asyncio.sleep(0)
    assert not waiting.done()  # nothing is sent until the dispatcher runs

    await world["dispatcher"].drain()

    assert await waiting == 1  # one copy is dead
    summary = json.loads(capsys.readouterr().out)
    assert (summary["sent"], summary["retried"], summary["dead"]) == (1, 1, 1)
    assert summary["platforms"][0] == {
        "platform": "discord", "total": 2, "pending": 0, "scheduled": 0, "sent": 1,
        "dead": 1, "cancelled": 0, "retried": 1,
    }  # fmt: skip

    assert await wait_for_deliveries(context(world), update.id, poll_seconds=0.01) == 1
    table = capsys.readouterr().out
    assert "Update #" in table and "Retried" in table
    assert "strikebot deliveries --state dead" in table


async def test_post_wait_does_not_wait_for_copies_held_back_by_an_embargo(
    world: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    update = await post(world["admin"], publish_at=utcnow() + timedelta(hours=3))

    assert await wait_for_deliveries(context(world), update.id, json_output=True) == 0

    summary = json.loads(capsys.readouterr().out)
    assert (summary["sent"], summary["scheduled"]) == (0, 2)
