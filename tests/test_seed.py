"""Seeding the campaign file is idempotent: restarting never duplicates, and what admins
changed through the bot is never overwritten by the file. On SQLite and PostgreSQL."""

from __future__ import annotations

import tomllib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from bot.clock import FixedClock
from bot.config import StrikeConfig, load_config, parse_config
from bot.editorial.admin import Admin, Changes
from bot.errors import ConfigError
from bot.models import DemandStatus, UpdateState, UpdateText
from bot.plugins.admins import CLI_ACTOR
from bot.runtime.seed import apply_seed
from bot.store import Store
from bot.store import schema as t

STRIKE = Path(__file__).resolve().parent.parent / "config" / "strike.toml"


def strike_raw() -> dict[str, Any]:
    return tomllib.loads(STRIKE.read_text(encoding="utf-8"))


def with_subscriptions() -> StrikeConfig:
    raw = strike_raw()
    raw["subscriptions"] = [
        {"platform": "discord", "workspace": "g1", "channel": "c1", "language": "es"},
        {
            "platform": "slack",
            "workspace": "T1",
            "channel": "C1",
            "briefing_time": "07:00",
            "quiet_start": "22:00",
            "quiet_end": "07:00",
        },
    ]
    return parse_config(raw, source="test")


async def counts(store: Store) -> dict[str, int]:
    result = {}
    async with store.read() as tx:
        for table in (
            t.updates,
            t.update_revisions,
            t.demands,
            t.demand_events,
            t.subscriptions,
            t.deliveries,
            t.audit_log,
        ):
            result[table.name] = int(
                await tx.conn.scalar(select(func.count()).select_from(table)) or 0
            )
    return result


async def test_seeding_twice_does_not_duplicate(store: Store, clock: FixedClock) -> None:
    config = with_subscriptions()
    await apply_seed(store, config, clock)
    first = await counts(store)
    assert first["updates"] == len(config.updates) == 3
    assert first["demands"] == len(config.demands)
    assert first["subscriptions"] == 2
    clock.advance(days=3)
    await apply_seed(store, config, clock)
    assert await counts(store) == first


async def test_seeded_updates_are_history_and_queue_nothing(
    store: Store, clock: FixedClock
) -> None:
    config = with_subscriptions()
    await apply_seed(store, config, clock)
    async with store.read() as tx:
        updates = await tx.list_updates(clock(), limit=None)
        deliveries = await tx.list_deliveries(limit=None)
        latest = await tx.latest_update(clock())
        pay = await tx.get_demand("pay")
        subs = await tx.list_subscriptions()
    assert deliveries == []
    assert [u.seed_key for u in reversed(updates)] == [u.key for u in config.updates]
    assert all(u.state is UpdateState.PUBLISHED for u in updates)
    assert latest is not None and latest.seed_key == "2019-01-18-no-deal-talks-weekend"
    assert latest.next_step_at == datetime(2019, 1, 21, 14, 0, tzinfo=UTC)
    assert latest.text("es").headline.startswith("Día 5")
    # The offer's history is dated when the offer was current, with its source.
    assert pay is not None and len(pay.history) == 1
    assert pay.history[0].at == datetime(2019, 1, 11, 20, 0, tzinfo=UTC)
    assert "Los Angeles Times" in pay.history[0].source
    assert pay.text("es").employer_offer.startswith("Un aumento del 6%")
    slack = next(s for s in subs if s.platform == "slack")
    assert slack.timezone == "America/Los_Angeles"  # the campaign's, when none is given
    assert slack.quiet_hours is not None and slack.briefing_time is not None


async def test_edits_made_through_the_bot_survive_a_restart(
    store: Store, clock: FixedClock
) -> None:
    config = with_subscriptions()
    await apply_seed(store, config, clock)
    admin = Admin(store, config.to_campaign(), config.to_admins(), clock)
    async with store.read() as tx:
        friday = await tx.latest_update(clock())
        subs = await tx.list_subscriptions()
    assert friday is not None
    await admin.edit(
        CLI_ACTOR,
        friday.id,
        Changes(texts={"en": UpdateText("Talks continue Saturday at 10:00")}),
        reason="time confirmed",
    )
    await admin.record_demand(
        CLI_ACTOR,
        "pay",
        status=DemandStatus.TENTATIVE_AGREEMENT,
        offer={"en": "6% with no strings"},
        source="District proposal, Jan 19",
    )
    removed = next(s for s in subs if s.platform == "discord")
    await admin.unsubscribe(CLI_ACTOR, removed.id)
    before = await counts(store)

    clock.advance(days=1)
    await apply_seed(store, config, clock)  # a restart

    assert await counts(store) == before
    async with store.read() as tx:
        again = await tx.get_update(friday.id, clock())
        pay = await tx.get_demand("pay")
        active = await tx.list_subscriptions()
    assert again is not None
    assert again.text("en").headline == "Talks continue Saturday at 10:00"
    assert again.revision == 2 and again.revisions[0].reason == "time confirmed"
    assert pay is not None and pay.status is DemandStatus.TENTATIVE_AGREEMENT
    assert pay.text("en").employer_offer == "6% with no strings"
    assert removed.id not in {s.id for s in active}  # not re-subscribed by the file


async def test_a_database_of_another_campaign_is_refused(store: Store, clock: FixedClock) -> None:
    await apply_seed(store, load_config(STRIKE), clock)
    before = await counts(store)
    raw = strike_raw()
    raw["campaign"]["slug"] = "another-campaign"
    with pytest.raises(ConfigError, match="belongs to campaign 'utla-2019'"):
        await apply_seed(store, parse_config(raw), clock)
    assert await counts(store) == before
