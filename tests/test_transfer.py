"""Export and import: a lossless round trip across SQLite and PostgreSQL, and refusals that
leave the store as it was."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from bot.clock import FixedClock
from bot.config import load_config
from bot.editorial.admin import Admin, Changes, Draft
from bot.errors import ImportRefused
from bot.models import EVERYONE, Audience, DemandStatus, Status, Subscription, UpdateText, Urgency
from bot.runtime.seed import apply_seed
from bot.runtime.transfer import (
    ExportDocument,
    TransferSummary,
    dumps,
    export_document,
    import_document,
    parse_document,
)
from bot.store import Store
from bot.store import schema as t
from tests.support import ADMIN, ADMINS, CAMPAIGN, SECOND_ADMIN

STRIKE = Path(__file__).resolve().parent.parent / "config" / "strike.toml"
SLUG = CAMPAIGN.slug


@pytest.fixture
async def empty_sqlite(tmp_path: Path) -> AsyncIterator[Store]:
    async with Store.open(f"sqlite+aiosqlite:///{tmp_path / 'target.db'}") as opened:
        yield opened


async def fill(store: Store, clock: FixedClock) -> None:
    """A campaign with every kind of row: seeded history, a post, an edit with a correction,
    a retraction, an embargo, an update awaiting approval, demand changes, a removed
    channel, deliveries in several states and a briefing run."""
    config = load_config(STRIKE)
    await apply_seed(store, config, clock)
    admin = Admin(store, CAMPAIGN, ADMINS, clock)
    subs = [
        await admin.subscribe(ADMIN, Subscription(0, "discord", "g1", c, "en", follows=follows))
        for c, follows in (
            ("c1", Audience.of(["roosevelt"], ["west"])),  # the seeded sites, followed
            ("c2", EVERYONE),
            ("c3", EVERYONE),
        )
    ]
    clock.advance(minutes=1)
    post = await admin.post(
        ADMIN,
        Draft(
            Status.TALKS_SCHEDULED,
            {
                "en": UpdateText("Talks Saturday", "At 10:00.", "Rally after"),
                "es": UpdateText("Negociación el sábado", "A las 10:00."),
            },
            Urgency.IMPORTANT,
            datetime(2019, 1, 19, 18, 0, 0, 123456, tzinfo=UTC),
        ),
    )
    clock.advance(seconds=30)
    await admin.edit(
        SECOND_ADMIN,
        post.id,
        Changes(texts={"en": UpdateText("Talks Saturday at 11:00")}),
        reason="time moved",
        correction=True,
    )
    wrong = await admin.post(ADMIN, Draft(Status.STRIKE_OVER, {"en": UpdateText("Oops")}))
    await admin.retract(ADMIN, wrong.id, reason="posted by mistake")
    await admin.post(
        ADMIN,
        Draft(Status.STRIKE_ON, {"en": UpdateText("Monday plan")}),
        publish_at=clock() + timedelta(days=2),
    )
    approving = Admin(store, replace(CAMPAIGN, require_approval=True), ADMINS, clock)
    await approving.post(ADMIN, Draft(Status.STRIKE_ON, {"en": UpdateText("Needs a second look")}))
    await admin.record_demand(
        ADMIN,
        "pay",
        status=DemandStatus.TENTATIVE_AGREEMENT,
        offer={"en": "6% plus 3%", "es": "6% más 3%"},
        source="District proposal, Jan 19",
        note="late night",
    )
    await admin.unsubscribe(ADMIN, subs[2].id)
    async with store.write() as tx:
        await tx.conn.execute(
            t.deliveries.update()
            .where(
                t.deliveries.c.update_id == post.id, t.deliveries.c.subscription_id == subs[0].id
            )
            .values(state="sent", platform_message_id="111", sent_at=clock(), attempts=1)
        )
        await tx.mark_subscription_broken(subs[1].id, "Missing Access (403)")
        await tx.set_meta("discord_commands_hash", "abc123")
        await tx.conn.execute(
            t.briefing_runs.insert().values(
                subscription_id=subs[0].id,
                local_date=date(2019, 1, 18),
                scheduled_for=clock(),
                created_at=clock(),
                outcome="skipped",
                delivery_id=None,
            )
        )


async def table_rows(store: Store) -> dict[str, list[tuple[Any, ...]]]:
    # Not content: which platform events were handled, and how often public views changed.
    skipped = ("processed_events", "public_version", "public_changes")
    tables = [table for table in t.metadata.sorted_tables if table.name not in skipped]
    async with store.read() as tx:
        return {
            table.name: [
                tuple(r) for r in await tx.conn.execute(select(table).order_by(*table.primary_key))
            ]
            for table in tables
        }


# ---------------------------------------------------------------------------- round trip


async def test_export_import_export_is_identical(
    store: Store, empty_sqlite: Store, clock: FixedClock
) -> None:
    await fill(store, clock)
    exported = await export_document(store, SLUG, deliveries=True)
    text = dumps(exported)
    doc = parse_document(text, source="backup.json", campaign_slug=SLUG)
    await import_document(empty_sqlite, doc)
    again = dumps(await export_document(empty_sqlite, SLUG, deliveries=True))
    assert again == text
    # Same rows, same ids, on the other database too.
    assert await table_rows(empty_sqlite) == await table_rows(store)
    summary = TransferSummary.of(doc)
    assert summary.updates == 7 and summary.revisions == 1 and summary.demands == 7
    assert summary.subscriptions == 3 and summary.deliveries and summary.briefing_runs == 1


async def test_the_file_holds_revisions_retractions_history_and_a_marker(
    store: Store, clock: FixedClock
) -> None:
    await fill(store, clock)
    data = json.loads(dumps(await export_document(store, SLUG)))
    assert (data["format"], data["version"], data["campaign"]) == ("strikebot-export", 1, SLUG)
    assert "deliveries" not in data  # only with deliveries=True
    edited = next(u for u in data["updates"] if u["revisions"])
    assert edited["revisions"][0]["reason"] == "time moved"
    assert edited["revisions"][0]["texts"]["en"]["headline"] == "Talks Saturday"
    assert edited["next_step_at"] == "2019-01-19T18:00:00.123456Z"
    retracted = next(u for u in data["updates"] if u["state"] == "retracted")
    assert retracted["retraction_reason"] == "posted by mistake"
    pay = next(d for d in data["demands"] if d["key"] == "pay")
    assert [e["source"] for e in pay["history"]][-1] == "District proposal, Jan 19"
    assert [s["active"] for s in data["subscriptions"]] == [True, True, False]


async def test_importing_into_postgres_or_sqlite_keeps_ids_and_continues_after_them(
    empty_sqlite: Store, store: Store, clock: FixedClock
) -> None:
    source = empty_sqlite  # filled here: a second SQLite file, separate from `store`
    await fill(source, clock)
    doc = await export_document(source, SLUG, deliveries=True)
    await import_document(store, doc)
    assert await table_rows(store) == await table_rows(source)
    # New rows get fresh ids after the imported ones (PostgreSQL sequences were moved on).
    admin = Admin(store, CAMPAIGN, ADMINS, clock)
    update = await admin.post(ADMIN, Draft(Status.STRIKE_ON, {"en": UpdateText("After import")}))
    assert update.id == max(u.id for u in doc.updates) + 1
    sub = await admin.subscribe(ADMIN, Subscription(0, "slack", "T9", "C9", "en"))
    assert sub.id == max(s.id for s in doc.subscriptions) + 1


async def test_replace_overwrites_a_database_that_holds_data(
    store: Store, empty_sqlite: Store, clock: FixedClock
) -> None:
    await fill(store, clock)
    doc = await export_document(store, SLUG, deliveries=True)
    await apply_seed(empty_sqlite, load_config(STRIKE), clock)
    admin = Admin(empty_sqlite, CAMPAIGN, ADMINS, clock)
    await admin.post(ADMIN, Draft(Status.STRIKE_ON, {"en": UpdateText("Only here")}))
    before = await table_rows(empty_sqlite)
    with pytest.raises(ImportRefused, match=r"already holds data.*--replace"):
        await import_document(empty_sqlite, doc)
    assert await table_rows(empty_sqlite) == before
    await import_document(empty_sqlite, doc, replace=True)
    assert dumps(await export_document(empty_sqlite, SLUG, deliveries=True)) == dumps(doc)


# ---------------------------------------------------------------------------- refusals


def good_text() -> str:
    return json.dumps(
        {
            "format": "strikebot-export",
            "version": 1,
            "campaign": SLUG,
            "schema_revision": "0001",
            "meta": {"campaign_slug": SLUG},
            "updates": [],
            "demands": [],
            "subscriptions": [],
            "audit": [],
        }
    )


def subscription(**changes: Any) -> dict[str, Any]:
    """A subscription row as `strikebot export` writes it, with `changes` applied."""
    return {
        "id": 1,
        "platform": "discord",
        "workspace": "g1",
        "channel": "c1",
        "label": "",
        "language": "en",
        "urgencies": "important,routine,urgent",
        "briefing_time": "07:00",
        "timezone": "America/Los_Angeles",
        "briefing_days": "0123456",
        "quiet_start": None,
        "quiet_end": None,
        "active": True,
        "broken_reason": None,
        "created_at": "2019-01-18T18:00:00Z",
    } | changes


def edited(**changes: Any) -> str:
    data = json.loads(good_text())
    data.update(changes)
    return json.dumps(data)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00", "not a strikebot export \\(it is not UTF-8"),
        (good_text()[:40], "not valid JSON .*truncated or damaged"),
        ("[1, 2, 3]", "not a strikebot export"),
        ('{"name": "some-other-tool", "items": []}', "not a strikebot export"),
        (edited(format="slack-export"), "not a strikebot export"),
        (edited(version=2), "newer strikebot \\(export format 2"),
        (edited(version="1"), "no valid format version"),
        (edited(campaign="ctu-2012"), "export of campaign 'ctu-2012'.*'utla-2019'"),
        (edited(schema_revision="9999"), "newer strikebot \\(database schema '9999'"),
        (edited(updates=[{"id": 1, "status": "nope"}]), "damaged at updates.0"),
        (edited(meta={"campaign_slug": "other"}), "damaged: it says campaign"),
        (edited(surprise=True), "damaged at surprise"),
        (edited(subscriptions=[subscription(urgencies="routine,loud")]), "at subscriptions.0"),
        (edited(subscriptions=[subscription(timezone="Mars/Base")]), "at subscriptions.0"),
        (edited(subscriptions=[subscription(briefing_days="019")]), "at subscriptions.0"),
        (edited(subscriptions=[subscription(briefing_time="25:00")]), "at subscriptions.0"),
    ],
)
def test_bad_files_are_refused_with_one_sentence(raw: str | bytes, message: str) -> None:
    with pytest.raises(ImportRefused, match=message) as refused:
        parse_document(raw, source="backup.json", campaign_slug=SLUG)
    text = str(refused.value)
    assert text.startswith("backup.json ") and "\n" not in text


async def test_rows_that_contradict_each_other_import_nothing(
    store: Store, clock: FixedClock, empty_sqlite: Store
) -> None:
    await fill(store, clock)
    data = json.loads(dumps(await export_document(store, SLUG, deliveries=True)))
    assert data["deliveries"]
    data["deliveries"][-1]["subscription_id"] = 999  # a channel the file does not have
    doc = parse_document(json.dumps(data), source="backup.json", campaign_slug=SLUG)
    before = await table_rows(empty_sqlite)
    with pytest.raises(ImportRefused, match=r"cannot be stored.*nothing was imported"):
        await import_document(empty_sqlite, doc)
    assert await table_rows(empty_sqlite) == before


def test_duplicate_rows_are_refused() -> None:
    update: dict[str, Any] = {
        "id": 1,
        "seed_key": None,
        "status": "strike_on",
        "urgency": "routine",
        "state": "published",
        "texts": {"en": {"headline": "x", "body": "", "next_step": ""}},
        "next_step_at": None,
        "author": "cli:cli",
        "created_at": "2019-01-18T18:00:00Z",
        "publish_at": None,
        "published_at": "2019-01-18T18:00:00Z",
        "approved_by": None,
        "revision": 1,
        "retracted_at": None,
        "retracted_by": None,
        "retraction_reason": None,
        "revisions": [],
    }
    with pytest.raises(ImportRefused, match="same update twice"):
        parse_document(edited(updates=[update, update]), source="f", campaign_slug=SLUG)
    doc = parse_document(edited(updates=[update]), source="f", campaign_slug=SLUG)
    assert isinstance(doc, ExportDocument) and doc.updates[0].created_at.tzinfo is UTC
