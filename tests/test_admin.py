"""The admin use cases on SQLite and PostgreSQL: each is one transaction holding the change,
its outbox rows and its audit entry; refusals leave the store as it was."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import func, select

from bot.clock import FixedClock
from bot.delivery.planning import plan_followups, plan_posts
from bot.editorial.admin import Admin, Changes, Draft
from bot.editorial.rules import HEADLINE_MAX, OFFER_MAX
from bot.errors import Conflict, InvalidInput, NotAllowed, NotFound
from bot.models import (
    DeliveryAction,
    DeliveryState,
    Demand,
    DemandStatus,
    DemandText,
    QuietHours,
    Status,
    Subscription,
    UpdateState,
    UpdateText,
    Urgency,
)
from bot.store import Store, Tx
from bot.store import schema as t
from tests.support import ADMIN, ADMINS, CAMPAIGN, MEMBER, SECOND_ADMIN

EN = {"en": UpdateText("Strike continues", "No deal yet.", "Talks continue Saturday")}


def draft(urgency: Urgency = Urgency.ROUTINE, **texts: UpdateText) -> Draft:
    return Draft(Status.STRIKE_ON, texts or EN, urgency)


async def snapshot(store: Store) -> dict[str, Any]:
    """Every row of every table the use cases write: equal snapshots = unchanged store."""
    tables = (
        t.updates,
        t.update_revisions,
        t.demands,
        t.demand_events,
        t.subscriptions,
        t.deliveries,
        t.audit_log,
    )
    async with store.read() as tx:
        return {
            table.name: [
                tuple(r)
                for r in (await tx.conn.execute(select(table).order_by(*table.primary_key)))
            ]
            for table in tables
        }


async def subscribe_three(admin: Admin) -> list[Subscription]:
    return [
        await admin.subscribe(ADMIN, Subscription(0, "discord", "g1", "c1", "en", timezone="UTC")),
        await admin.subscribe(
            ADMIN,
            Subscription(
                0,
                "slack",
                "T1",
                "C1",
                "es",
                timezone="America/Los_Angeles",
                quiet_hours=QuietHours(
                    datetime.strptime("22:00", "%H:%M").time(),
                    datetime.strptime("07:00", "%H:%M").time(),
                ),
            ),
        ),
        await admin.subscribe(
            ADMIN,
            Subscription(
                0,
                "discord",
                "g1",
                "urgent-only",
                "en",
                urgencies=frozenset({Urgency.URGENT}),
            ),
        ),
    ]


async def deliveries(store: Store, update_id: int) -> list[tuple[str, int, str]]:
    async with store.read() as tx:
        rows = await tx.list_deliveries(update_id=update_id, limit=None)
    return sorted((str(d.action), d.subscription_id, str(d.state)) for d in rows)


async def audit_actions(store: Store) -> list[tuple[str, str, str]]:
    async with store.read() as tx:
        entries = await tx.list_audit(limit=1000)
    return [(e.actor, e.action, e.target) for e in reversed(entries)]


# ---------------------------------------------------------------------------- post


async def test_post_publishes_and_queues_one_row_per_interested_channel(
    store: Store, admin: Admin, clock: FixedClock
) -> None:
    c1, c2, urgent_only = await subscribe_three(admin)
    update = await admin.post(ADMIN, draft())
    assert update.state is UpdateState.PUBLISHED
    assert update.published_at == clock() and update.author == ADMIN.id
    assert await deliveries(store, update.id) == [
        ("post", c1.id, "pending"),
        ("post", c2.id, "pending"),
    ]
    urgent = await admin.post(ADMIN, draft(Urgency.URGENT))
    assert ("post", urgent_only.id, "pending") in await deliveries(store, urgent.id)
    async with store.read() as tx:
        rows = await tx.list_deliveries(update_id=update.id, limit=None)
        latest = await tx.latest_update(clock())
    # 10:00 in Los Angeles is outside the Slack channel's quiet hours: everything is due now.
    assert {d.not_before for d in rows} == {clock()}
    assert latest is not None and latest.id == urgent.id
    assert (ADMIN.id, "update.post", f"update:{update.id}") in await audit_actions(store)


async def test_quiet_hours_hold_routine_posts_but_not_urgent_ones(
    store: Store, admin: Admin, clock: FixedClock
) -> None:
    _, quiet, _ = await subscribe_three(admin)
    clock.now = datetime(2019, 1, 19, 7, 0, tzinfo=UTC)  # 23:00 Friday in Los Angeles
    routine = await admin.post(ADMIN, draft())
    urgent = await admin.post(ADMIN, draft(Urgency.URGENT))
    async with store.read() as tx:
        held = await tx.list_deliveries(update_id=routine.id, subscription_id=quiet.id)
        now = await tx.list_deliveries(update_id=urgent.id, subscription_id=quiet.id)
    assert held[0].not_before == datetime(2019, 1, 19, 15, 0, tzinfo=UTC)  # 07:00 Saturday
    assert now[0].not_before == clock()


async def test_an_embargoed_post_waits_until_its_time(
    store: Store, admin: Admin, clock: FixedClock
) -> None:
    await subscribe_three(admin)
    at = clock() + timedelta(hours=4)  # 14:00 in Los Angeles: no channel is in quiet hours
    update = await admin.post(ADMIN, draft(), publish_at=at)
    assert update.state is UpdateState.SCHEDULED and update.published_at == at
    async with store.read() as tx:
        visible = await tx.list_updates(clock())
        rows = await tx.list_deliveries(update_id=update.id, limit=None)
    assert update.id not in {u.id for u in visible}
    assert rows and {d.not_before for d in rows} == {at}
    clock.now = at
    async with store.read() as tx:
        later = await tx.get_update(update.id, clock())
        visible = await tx.list_updates(clock())
    assert later is not None and later.state is UpdateState.PUBLISHED
    assert update.id in {u.id for u in visible}


async def test_an_embargo_in_the_past_is_refused_and_changes_nothing(
    store: Store, admin: Admin, clock: FixedClock
) -> None:
    await subscribe_three(admin)
    before = await snapshot(store)
    with pytest.raises(InvalidInput, match="in the past"):
        await admin.post(ADMIN, draft(), publish_at=clock() - timedelta(minutes=1))
    assert await snapshot(store) == before


BAD_DRAFTS: list[tuple[dict[str, UpdateText], str]] = [
    ({"en": UpdateText("   ")}, "In the 'en' text: The headline is empty"),
    ({"en": UpdateText("\u200b\u2060 \u3164")}, "In the 'en' text: The headline is empty"),
    ({"en": UpdateText("x" * (HEADLINE_MAX + 1))}, f"keep it to {HEADLINE_MAX}"),
    ({"es": UpdateText("Solo en español")}, "Write the update in English too"),
    ({"en": UpdateText("Hi"), "fr": UpdateText("Salut")}, "“fr” is not one of"),
    ({"en": UpdateText("Hi", body="x" * 20_001)}, "In the 'en' text: The text is 20001"),
]


async def test_bad_drafts_are_refused_and_change_nothing(store: Store, admin: Admin) -> None:
    await subscribe_three(admin)
    before = await snapshot(store)
    for texts, message in BAD_DRAFTS:
        with pytest.raises(InvalidInput, match=message):
            await admin.post(ADMIN, Draft(Status.STRIKE_ON, texts))
    assert await snapshot(store) == before


# ---------------------------------------------------------------------------- edit


async def test_an_edit_keeps_the_previous_text_with_editor_and_reason(
    store: Store, admin: Admin, clock: FixedClock
) -> None:
    c1, c2, urgent_only = await subscribe_three(admin)
    update = await admin.post(ADMIN, draft())
    clock.advance(minutes=5)
    edited = await admin.edit(
        SECOND_ADMIN,
        update.id,
        Changes(
            texts={"es": UpdateText("La huelga continúa")},
            status=Status.TALKS_SCHEDULED,
            next_step_at=datetime(2019, 1, 21, 14, 0, tzinfo=UTC),
        ),
        reason="add Spanish and the time",
    )
    assert edited.revision == 2
    assert edited.status is Status.TALKS_SCHEDULED
    assert edited.text("en") == EN["en"]  # untouched language kept
    assert edited.text("es").headline == "La huelga continúa"
    (old,) = edited.revisions
    assert old.number == 1 and old.texts == EN and old.status is Status.STRIKE_ON
    assert old.editor == SECOND_ADMIN.id and old.reason == "add Spanish and the time"
    assert old.created_at == clock()
    # Only the channels that hold a copy get an in-place edit; nobody gets a correction note.
    rows = await deliveries(store, update.id)
    assert ("edit", c1.id, "pending") in rows and ("edit", c2.id, "pending") in rows
    assert not any(r[0] == "edit" and r[1] == urgent_only.id for r in rows)
    assert not any(r[0] == "correction" for r in rows)
    entries = await audit_actions(store)
    assert (SECOND_ADMIN.id, "update.edit", f"update:{update.id}") in entries


async def test_a_correction_also_queues_a_visible_note(store: Store, admin: Admin) -> None:
    c1, c2, _ = await subscribe_three(admin)
    update = await admin.post(ADMIN, draft())
    await admin.edit(
        ADMIN,
        update.id,
        Changes(texts={"en": UpdateText("Strike continues Monday")}),
        reason="wrong day",
        correction=True,
    )
    rows = await deliveries(store, update.id)
    assert [r for r in rows if r[0] == "correction"] == [
        ("correction", c1.id, "pending"),
        ("correction", c2.id, "pending"),
    ]
    assert (ADMIN.id, "update.correct", f"update:{update.id}") in await audit_actions(store)


async def test_an_edit_needs_a_reason_and_an_existing_live_update(
    store: Store, admin: Admin
) -> None:
    update = await admin.post(ADMIN, draft())
    before = await snapshot(store)
    with pytest.raises(InvalidInput, match="reason"):
        await admin.edit(ADMIN, update.id, Changes(urgency=Urgency.URGENT), reason="  ")
    with pytest.raises(NotFound, match="No update #999"):
        await admin.edit(ADMIN, 999, Changes(urgency=Urgency.URGENT), reason="x")
    assert await snapshot(store) == before
    await admin.retract(ADMIN, update.id, reason="mistake")
    before = await snapshot(store)
    with pytest.raises(Conflict, match="retracted"):
        await admin.edit(ADMIN, update.id, Changes(urgency=Urgency.URGENT), reason="x")
    assert await snapshot(store) == before


# ---------------------------------------------------------------------------- retract


async def test_a_retraction_stays_visible_with_its_reason_and_cancels_queued_posts(
    store: Store, admin: Admin, clock: FixedClock
) -> None:
    c1, c2, _ = await subscribe_three(admin)
    earlier = await admin.post(ADMIN, Draft(Status.BARGAINING, {"en": UpdateText("Talks on")}))
    clock.advance(minutes=1)
    update = await admin.post(ADMIN, draft())
    async with store.write() as tx:  # the dispatcher delivered it to c1 already
        await tx.conn.execute(
            t.deliveries.update()
            .where(t.deliveries.c.update_id == update.id, t.deliveries.c.subscription_id == c1.id)
            .values(state=DeliveryState.SENT, platform_message_id="m1")
        )
    clock.advance(minutes=1)
    retracted = await admin.retract(SECOND_ADMIN, update.id, reason="posted too early")
    assert retracted.state is UpdateState.RETRACTED
    assert retracted.retraction_reason == "posted too early"
    assert retracted.retracted_by == SECOND_ADMIN.id and retracted.retracted_at == clock()
    async with store.read() as tx:
        timeline = await tx.list_updates(clock())
        latest = await tx.latest_update(clock())
    shown = {u.id: u for u in timeline}
    assert shown[update.id].retracted and shown[update.id].retraction_reason == "posted too early"
    assert latest is not None and latest.id == earlier.id  # the status falls back
    assert await deliveries(store, update.id) == [
        ("post", c1.id, "sent"),
        ("post", c2.id, "cancelled"),
        ("retract", c1.id, "pending"),
        ("retract", c2.id, "pending"),
    ]
    with pytest.raises(Conflict, match="already retracted"):
        await admin.retract(ADMIN, update.id, reason="again")
    assert (SECOND_ADMIN.id, "update.retract", f"update:{update.id}") in await audit_actions(store)


async def test_retracting_an_embargoed_update_means_it_never_appears(
    store: Store, admin: Admin, clock: FixedClock
) -> None:
    await subscribe_three(admin)
    at = clock() + timedelta(hours=2)
    update = await admin.post(ADMIN, draft(), publish_at=at)
    await admin.retract(ADMIN, update.id, reason="plans changed")
    clock.now = at + timedelta(hours=1)
    async with store.read() as tx:
        visible = await tx.list_updates(clock())
        rows = await tx.list_deliveries(update_id=update.id, limit=None)
    assert update.id not in {u.id for u in visible}
    assert {str(d.state) for d in rows if d.action is DeliveryAction.POST} == {"cancelled"}


# ---------------------------------------------------------------------------- approval


async def test_two_person_approval(store: Store, clock: FixedClock) -> None:
    admin = Admin(store, replace(CAMPAIGN, require_approval=True), ADMINS, clock)
    c1, c2, _ = await subscribe_three(admin)
    update = await admin.post(ADMIN, draft())
    assert update.state is UpdateState.PENDING_APPROVAL and update.published_at is None
    assert await deliveries(store, update.id) == []
    async with store.read() as tx:
        assert update.id not in {u.id for u in await tx.list_updates(clock())}
        assert [u.id for u in await tx.pending_approval(clock())] == [update.id]
    before = await snapshot(store)
    with pytest.raises(NotAllowed, match="someone else must approve") as own:
        await admin.approve(ADMIN, update.id)
    assert "otra persona" in own.value.localized("es")
    with pytest.raises(NotAllowed, match="Only union admins"):
        await admin.approve(MEMBER, update.id)
    assert await snapshot(store) == before

    clock.advance(minutes=3)
    approved = await admin.approve(SECOND_ADMIN, update.id)
    assert approved.state is UpdateState.PUBLISHED
    assert approved.approved_by == SECOND_ADMIN.id and approved.published_at == clock()
    assert await deliveries(store, update.id) == [
        ("post", c1.id, "pending"),
        ("post", c2.id, "pending"),
    ]
    with pytest.raises(Conflict, match="not waiting for approval"):
        await admin.approve(SECOND_ADMIN, update.id)
    actions = [a for a in await audit_actions(store) if a[2] == f"update:{update.id}"]
    assert actions == [
        (ADMIN.id, "update.submit", f"update:{update.id}"),
        (SECOND_ADMIN.id, "update.approve", f"update:{update.id}"),
    ]


async def test_an_approved_embargoed_update_keeps_its_time(store: Store, clock: FixedClock) -> None:
    admin = Admin(store, replace(CAMPAIGN, require_approval=True), ADMINS, clock)
    await subscribe_three(admin)
    at = clock() + timedelta(days=1)
    update = await admin.post(ADMIN, draft(), publish_at=at)
    approved = await admin.approve(SECOND_ADMIN, update.id)
    assert approved.state is UpdateState.SCHEDULED and approved.published_at == at
    async with store.read() as tx:
        rows = await tx.list_deliveries(update_id=update.id, limit=None)
    assert rows and {d.not_before for d in rows} == {at}


# ---------------------------------------------------------------------------- who may act


async def test_a_non_admin_is_refused_everything_and_nothing_changes(
    store: Store, admin: Admin
) -> None:
    (sub, *_) = await subscribe_three(admin)
    update = await admin.post(ADMIN, draft())
    await seed_demand(store)
    before = await snapshot(store)
    attempts = [
        admin.post(MEMBER, draft()),
        admin.edit(MEMBER, update.id, Changes(urgency=Urgency.URGENT), reason="x"),
        admin.retract(MEMBER, update.id, reason="x"),
        admin.record_demand(MEMBER, "pay", status=DemandStatus.WON, source="x"),
        admin.subscribe(MEMBER, Subscription(0, "discord", "g9", "c9", "en")),
        admin.unsubscribe(MEMBER, sub.id),
    ]
    for attempt in attempts:
        with pytest.raises(NotAllowed) as refused:
            await attempt
        assert "Only union admins" in str(refused.value)
        assert "[admins.discord]" in str(refused.value) and MEMBER.user_id in str(refused.value)
    assert await snapshot(store) == before


async def test_every_admin_action_is_audited_with_before_and_after(
    store: Store, admin: Admin
) -> None:
    (sub, *_) = await subscribe_three(admin)
    await seed_demand(store)
    update = await admin.post(ADMIN, draft())
    await admin.edit(ADMIN, update.id, Changes(urgency=Urgency.IMPORTANT), reason="bump")
    await admin.retract(ADMIN, update.id, reason="wrong")
    await admin.record_demand(ADMIN, "pay", status=DemandStatus.WON, source="Tentative deal")
    await admin.unsubscribe(ADMIN, sub.id)
    async with store.read() as tx:
        entries = list(reversed(await tx.list_audit(limit=100)))
    assert [e.action for e in entries] == [
        "subscription.save",
        "subscription.save",
        "subscription.save",
        "update.post",
        "update.edit",
        "update.retract",
        "demand.record",
        "subscription.remove",
    ]
    edit = entries[4]
    assert edit.before is not None and edit.after is not None
    assert edit.before["urgency"] == "routine" and edit.after["urgency"] == "important"
    assert edit.after["reason"] == "bump"
    retract = entries[5]
    assert retract.after is not None and retract.after["retraction_reason"] == "wrong"
    demand = entries[6]
    assert demand.before is not None
    assert demand.before == {
        "status": "open",
        "texts": demand.before["texts"],
        "retired_at": None,
    }
    assert demand.after is not None and demand.after["source"] == "Tentative deal"
    assert all(e.actor == ADMIN.id for e in entries)


# ---------------------------------------------------------------------------- outbox


async def test_outbox_rows_are_unique_per_action_and_subscription(
    store: Store, admin: Admin, clock: FixedClock
) -> None:
    subs = await subscribe_three(admin)
    update = await admin.post(ADMIN, draft(Urgency.URGENT))
    edited = await admin.edit(ADMIN, update.id, Changes(urgency=Urgency.URGENT), reason="same")
    first = await deliveries(store, update.id)
    assert len([r for r in first if r[0] == "post"]) == 3

    async def enqueue_again(tx: Tx) -> int:
        inserted = await tx.enqueue(plan_posts(update, subs, clock()), clock())
        inserted += await tx.enqueue(
            plan_followups(edited, DeliveryAction.EDIT, subs[:2], clock()), clock()
        )
        return inserted

    async with store.write() as tx:
        assert await enqueue_again(tx) == 0
    async with store.write() as tx:  # and again, in another transaction
        assert await enqueue_again(tx) == 0
    assert await deliveries(store, update.id) == first
    async with store.read() as tx:
        keys = list(await tx.conn.scalars(select(t.deliveries.c.dedupe_key)))
    assert len(keys) == len(set(keys))


async def test_a_failure_inside_the_transaction_leaves_nothing_behind(
    store: Store, admin: Admin, monkeypatch: pytest.MonkeyPatch
) -> None:
    await subscribe_three(admin)
    before = await snapshot(store)

    async def audit_fails(self: Tx, *args: object, **kwargs: object) -> None:
        raise RuntimeError("the disk filled up while writing the audit entry")

    # The audit entry is the transaction's last write: the update and its outbox rows were
    # already inserted when it fails, so this shows the whole transaction rolls back.
    monkeypatch.setattr(Tx, "audit", audit_fails)
    with pytest.raises(RuntimeError, match="disk filled up"):
        await admin.post(ADMIN, draft(Urgency.URGENT))
    monkeypatch.undo()
    assert await snapshot(store) == before
    async with store.read() as tx:
        assert int(await tx.conn.scalar(select(func.count()).select_from(t.updates)) or 0) == 0


# ---------------------------------------------------------------------------- demands


async def seed_demand(store: Store) -> None:
    async with store.write() as tx:
        await tx.insert_demand(
            Demand(
                key="pay",
                position=0,
                status=DemandStatus.OPEN,
                texts={
                    "en": DemandText("Fair pay", union_position="6.5%", employer_offer="none"),
                    "es": DemandText("Salario justo", union_position="6.5%"),
                },
                updated_at=datetime(2019, 1, 11, tzinfo=UTC),
            )
        )


async def test_recording_a_demand_change_keeps_a_dated_sourced_history(
    store: Store, admin: Admin, clock: FixedClock
) -> None:
    await seed_demand(store)
    result = await admin.record_demand(
        ADMIN,
        "pay",
        status=DemandStatus.OFFER_ON_TABLE,
        offer={"en": " 6% over two years ", "es": "6% en dos años"},
        source="District proposal, Jan 11",
        note="at the table",
    )
    demand = result.demand
    assert result.announced is None  # nobody is messaged unless the admin asks
    assert demand.status is DemandStatus.OFFER_ON_TABLE
    assert demand.text("en").employer_offer == "6% over two years"
    assert demand.text("es").employer_offer == "6% en dos años"
    assert demand.text("en").union_position == "6.5%"  # the rest is kept
    (event,) = demand.history
    assert event.at == clock() and event.source == "District proposal, Jan 11"
    assert event.recorded_by == ADMIN.id and event.note == "at the table"
    assert dict(event.offer) == {"en": "6% over two years", "es": "6% en dos años"}
    clock.advance(days=1)
    later = (await admin.record_demand(ADMIN, "pay", status=DemandStatus.WON, source="Deal")).demand
    assert [e.status for e in later.history] == [DemandStatus.OFFER_ON_TABLE, DemandStatus.WON]
    assert later.text("en").employer_offer == "6% over two years"


async def test_bad_demand_changes_are_refused_and_change_nothing(
    store: Store, admin: Admin
) -> None:
    await seed_demand(store)
    before = await snapshot(store)
    with pytest.raises(NotFound, match="Known keys: pay"):
        await admin.record_demand(ADMIN, "nurse", status=DemandStatus.WON, source="x")
    with pytest.raises(InvalidInput, match="source"):
        await admin.record_demand(ADMIN, "pay", status=DemandStatus.WON, source=" ")
    with pytest.raises(InvalidInput, match="status, a new offer, or both"):
        await admin.record_demand(ADMIN, "pay", source="x")
    with pytest.raises(InvalidInput, match="“fr” is not one of"):
        await admin.record_demand(ADMIN, "pay", offer={"fr": "rien"}, source="x")
    with pytest.raises(InvalidInput, match=f"offer is {OFFER_MAX + 1} characters"):
        await admin.record_demand(ADMIN, "pay", offer={"en": "x" * (OFFER_MAX + 1)}, source="x")
    with pytest.raises(InvalidInput, match="source is empty"):
        await admin.record_demand(ADMIN, "pay", status=DemandStatus.WON, source="\u200b\u202e")
    assert await snapshot(store) == before


async def test_control_and_bidi_characters_never_reach_the_store(
    store: Store, admin: Admin
) -> None:
    """BEL, ESC, NUL and a right-to-left override (which makes a link read backwards) are
    removed from everything people write, on every surface (they all reach `Admin`)."""
    update = await admin.post(
        ADMIN,
        Draft(
            Status.STRIKE_ON,
            {
                "en": UpdateText(
                    "Strike\x07 is \x1b[31mon\u202e", "Body\x00 text\u2066", "Mon\u202d"
                )
            },
        ),
    )
    assert update.texts["en"] == UpdateText("Strike is [31mon", "Body text", "Mon")
    edited = await admin.edit(
        ADMIN, update.id, Changes(texts={"es": UpdateText("Huelga\u202e")}), reason="typo\x07"
    )
    assert edited.texts["es"].headline == "Huelga"
    assert edited.revisions[-1].reason == "typo"


# ---------------------------------------------------------------------------- subscriptions


async def test_unsubscribing_cancels_what_was_queued_for_the_channel(
    store: Store, admin: Admin
) -> None:
    c1, c2, _ = await subscribe_three(admin)
    update = await admin.post(ADMIN, draft())
    removed = await admin.unsubscribe(ADMIN, c2.id)
    assert removed.id == c2.id
    assert await deliveries(store, update.id) == [
        ("post", c1.id, "pending"),
        ("post", c2.id, "cancelled"),
    ]
    async with store.read() as tx:
        assert c2.id not in {s.id for s in await tx.list_subscriptions()}
    before = await snapshot(store)
    with pytest.raises(InvalidInput, match="time zone"):
        await admin.subscribe(
            ADMIN, Subscription(0, "slack", "T1", "C9", "en", timezone="Mars/Base")
        )
    with pytest.raises(NotFound, match="No subscription #99"):
        await admin.unsubscribe(ADMIN, 99)
    assert await snapshot(store) == before
