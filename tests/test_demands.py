"""Demands as living data, from every admin surface: the use cases (any field per language
with a reason, add, retire, offers with their own date and source), then chat, the command
line and the admin API. Every change is in the demand's history and the audit log; nobody
is messaged unless the admin asks."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import bot.cli
from bot.clock import FixedClock
from bot.commands import Commands
from bot.editorial.admin import Admin
from bot.editorial.demands import DemandWording
from bot.errors import Conflict, InvalidInput, NotAllowed
from bot.metrics import Metrics
from bot.models import DeliveryAction, DemandChange, DemandStatus, Subscription
from bot.store import Store
from tests.strike_week import strike_week
from tests.support import ADMIN, CAMPAIGN, MEMBER
from tests.test_admin import snapshot
from tests.test_cli import STRIKE, Cli, sqlite_url
from tests.test_commands import ctx, text_of
from tests.web_support import TOKEN, client_for, web_context

AUTH = {"Authorization": f"Bearer {TOKEN}"}
CHANNEL = Subscription(
    id=0, platform="discord", workspace="guild-1", channel="news", language="en",
    timezone="America/Los_Angeles",
)  # fmt: skip


async def people_deliveries(store: Store) -> list[Any]:
    async with store.read() as tx:
        rows = await tx.list_deliveries(limit=None)
    return [d for d in rows if d.action is not DeliveryAction.EVENT]


async def audit_of(store: Store, target: str) -> list[Any]:
    async with store.read() as tx:
        return list(reversed(await tx.list_audit(limit=100, target=target)))


# ---------------------------------------------------------------------------- use cases


async def test_any_field_is_edited_per_language_with_a_reason_and_messages_nobody(
    store: Store, clock: FixedClock
) -> None:
    admin = (await strike_week(store, clock)).admin
    await admin.subscribe(ADMIN, CHANNEL)
    before = await people_deliveries(store)
    old = (await admin_demand(admin, "nurses")).text("es")
    result = await admin.edit_demand(
        ADMIN,
        "nurses",
        {"es": DemandWording(title="Una enfermera en cada escuela, cada día", facts=["15% hoy"])},
        reason="más claro",
    )
    demand = result.demand
    assert result.announced is None
    assert demand.text("es").title == "Una enfermera en cada escuela, cada día"
    assert demand.text("es").facts == ("15% hoy",)
    assert demand.text("es").union_position == old.union_position  # the rest is kept
    assert demand.text("en").title == "A nurse in every school"  # other languages too
    event = demand.history[-1]
    assert event.kind is DemandChange.EDIT and event.note == "más claro"
    assert event.recorded_by == ADMIN.id and event.at == clock()
    assert dict(event.changes["es"]) == {
        "title": (old.title, "Una enfermera en cada escuela, cada día"),
        "facts": ("\n".join(old.facts), "15% hoy"),
    }
    assert await people_deliveries(store) == before  # recorded, not sent
    [entry] = [e for e in await audit_of(store, "demand:nurses") if e.action == "demand.edit"]
    assert entry.actor == ADMIN.id and entry.before is not None and entry.after is not None
    assert entry.before["texts"]["es"]["title"] == old.title
    assert entry.after["texts"]["es"]["title"] == "Una enfermera en cada escuela, cada día"
    assert entry.after["note"] == "más claro" and entry.after["announced_as"] is None

    with pytest.raises(Conflict, match="nothing changed"):
        await admin.edit_demand(
            ADMIN, "nurses", {"es": DemandWording(title="Una enfermera en cada escuela, cada día")},
            reason="again",
        )  # fmt: skip
    with pytest.raises(InvalidInput):
        await admin.edit_demand(ADMIN, "nurses", {"en": DemandWording(title="x")}, reason="")


async def test_a_change_reaches_channels_only_when_the_admin_announces_it(
    store: Store, clock: FixedClock
) -> None:
    admin = (await strike_week(store, clock)).admin
    sub = await admin.subscribe(ADMIN, CHANNEL)
    result = await admin.record_demand(
        ADMIN,
        "pay",
        status=DemandStatus.OFFER_ON_TABLE,
        offer={"en": "6% over three years", "es": "6% en tres años"},
        source="District proposal, Jan 18",
        announce=True,
    )
    announced = result.announced
    assert announced is not None
    assert announced.text("en").headline == "Demand update: Fair pay"
    assert "6% over three years" in announced.text("en").body
    assert "6% en tres años" in announced.text("es").body
    assert "District proposal, Jan 18" in announced.text("en").body
    posts = [d for d in await people_deliveries(store) if d.update_id == announced.id]
    assert [(d.subscription_id, d.action) for d in posts] == [(sub.id, DeliveryAction.POST)]
    [entry] = [e for e in await audit_of(store, "demand:pay") if e.at == clock()]
    assert entry.after is not None and entry.after["announced_as"] == f"update:{announced.id}"


async def test_an_offer_keeps_its_own_date_backdated_never_in_the_future(
    store: Store, clock: FixedClock
) -> None:
    admin = (await strike_week(store, clock)).admin  # pay: the district's 6%, Jan 11
    standing = (await admin_demand(admin, "pay")).text("en").employer_offer
    jan_9 = datetime(2019, 1, 9, 20, 0, tzinfo=UTC)
    earlier = await admin.record_demand(
        ADMIN, "pay", offer={"en": "3% over two years"}, source="District, Jan 9", at=jan_9
    )
    demand = earlier.demand
    ats = [e.at for e in demand.history]
    assert jan_9 in ats and ats == sorted(ats)  # in its place in the history
    [entry] = [e for e in demand.history if e.at == jan_9]
    assert entry.recorded_at == clock()  # and when it was written down
    assert demand.text("en").employer_offer == standing  # a later one stands
    jan_17 = datetime(2019, 1, 17, 20, 0, tzinfo=UTC)
    later = await admin.record_demand(
        ADMIN, "pay", offer={"en": "6% over three years"}, source="District, Jan 17", at=jan_17
    )
    assert later.demand.text("en").employer_offer == "6% over three years"
    assert [e.at for e in later.demand.history] == sorted(e.at for e in later.demand.history)
    unchanged = await snapshot(store)
    with pytest.raises(InvalidInput, match="in the future"):
        await admin.record_demand(
            ADMIN, "pay", offer={"en": "7%"}, source="x", at=clock() + timedelta(hours=1)
        )
    assert await snapshot(store) == unchanged


async def test_a_demand_is_added_and_retired_and_keeps_its_history(
    store: Store, clock: FixedClock
) -> None:
    admin = (await strike_week(store, clock)).admin
    added = await admin.add_demand(
        ADMIN,
        "charter-cap",
        {"en": DemandWording(title="Cap on charter schools", union_position="A cap")},
        reason="members voted it",
    )
    assert added.demand.history[0].kind is DemandChange.ADDED
    async with store.read() as tx:
        assert (await tx.demand_keys())[-1] == "charter-cap"
    unchanged = await snapshot(store)
    with pytest.raises(Conflict, match="already a demand"):
        await admin.add_demand(ADMIN, "charter-cap", {"en": DemandWording(title="Again")})
    with pytest.raises(InvalidInput, match="title in en"):
        await admin.add_demand(ADMIN, "other", {"es": DemandWording(title="Otra")})
    with pytest.raises(InvalidInput, match="demand key"):
        await admin.add_demand(ADMIN, "Bad Key!", {"en": DemandWording(title="Bad")})
    assert await snapshot(store) == unchanged

    clock.advance(hours=1)
    retired = await admin.retire_demand(ADMIN, "charter-cap", reason="settled")
    assert retired.demand.retired_at == clock()
    assert [e.kind for e in retired.demand.history] == [DemandChange.ADDED, DemandChange.RETIRED]
    async with store.read() as tx:
        assert "charter-cap" not in await tx.demand_keys()
        assert "charter-cap" not in [d.key for d in await tx.list_demands()]
        kept = await tx.get_demand("charter-cap")
    assert kept is not None and len(kept.history) == 2  # still readable by key
    with pytest.raises(Conflict, match="already retired"):
        await admin.retire_demand(ADMIN, "charter-cap", reason="again")
    with pytest.raises(Conflict, match="retired"):
        await admin.edit_demand(ADMIN, "charter-cap", {"en": DemandWording(title="x")}, reason="y")
    actions = [e.action for e in await audit_of(store, "demand:charter-cap")]
    assert actions == ["demand.add", "demand.retire"]


async def test_only_admins_change_demands(store: Store, clock: FixedClock) -> None:
    admin = (await strike_week(store, clock)).admin
    unchanged = await snapshot(store)
    wording = {"en": DemandWording(title="x")}
    with pytest.raises(NotAllowed):
        await admin.edit_demand(MEMBER, "pay", wording, reason="x")
    with pytest.raises(NotAllowed):
        await admin.add_demand(MEMBER, "new-one", wording)
    with pytest.raises(NotAllowed):
        await admin.retire_demand(MEMBER, "pay", reason="x")
    with pytest.raises(NotAllowed):
        await admin.record_demand(MEMBER, "pay", status=DemandStatus.WON, source="x")
    assert await snapshot(store) == unchanged


async def admin_demand(admin: Admin, key: str) -> Any:
    async with admin.store.read() as tx:
        return await tx.get_demand(key)


# ---------------------------------------------------------------------------- chat


async def test_admins_keep_demands_current_from_chat(
    sqlite_store: Store, clock: FixedClock
) -> None:
    admin = (await strike_week(sqlite_store, clock)).admin
    commands = Commands(sqlite_store, CAMPAIGN, admin, clock, metrics=Metrics())
    edited = await commands.handle(
        ctx(ADMIN),
        '/strike demand nurses lang=es title="Enfermeras en cada escuela" reason="más claro"',
    )
    assert edited.ok and edited.message.title == "Edited demand nurses", text_of(edited)
    assert "Nobody was messaged" in edited.message.body
    shown = await commands.handle(ctx(MEMBER, locale="es-MX"), "/strike demand nurses")
    assert shown.message.title == "Enfermeras en cada escuela"
    assert "nueva redacción: title (más claro)" in text_of(shown)

    offer = await commands.handle(
        ctx(ADMIN),
        '/strike demand pay offer="6.5% over three years" source="District, Jan 17" '
        "date=2019-01-17T12:00 announce",
    )
    assert offer.ok, text_of(offer)
    assert "update #" in offer.message.body  # announced
    pay = await admin_demand(admin, "pay")
    assert pay.history[-1].at == datetime(2019, 1, 17, 20, 0, tzinfo=UTC)  # asker's zone
    assert pay.text("en").employer_offer == "6.5% over three years"

    added = await commands.handle(
        ctx(ADMIN), '/strike demand add charter-cap title="Cap on charter schools" union="A cap"'
    )
    assert added.ok, text_of(added)
    retired = await commands.handle(ctx(ADMIN), '/strike demand retire charter-cap "settled"')
    assert retired.ok and retired.message.title == "Retired demand charter-cap", text_of(retired)
    listing = await commands.handle(ctx(MEMBER), "/strike demands")
    assert "Cap on charter schools" not in text_of(listing)

    unchanged = await snapshot(sqlite_store)
    refused = await commands.handle(ctx(MEMBER), '/strike demand pay offer="1%" source="me"')
    assert not refused.ok and "admin" in text_of(refused).lower()
    future = await commands.handle(
        ctx(ADMIN), '/strike demand pay offer="7%" source="x" date=2019-02-01'
    )
    assert not future.ok and "future" in text_of(future)
    assert await snapshot(sqlite_store) == unchanged


# ---------------------------------------------------------------------------- command line


@pytest.fixture
def cli(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Cli:
    for name in ("STRIKEBOT_CONFIG", "STRIKEBOT_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(bot.cli.out, "width", 200)  # a desktop terminal: cells not wrapped
    return Cli(sqlite_url(tmp_path / "cli.db"), STRIKE, capsys)


def test_demands_change_from_the_command_line_with_history_and_audit(cli: Cli) -> None:
    edited = cli.json(
        "demand", "edit", "nurses", "--language", "es",
        "--title", "Una enfermera en cada escuela, cada día", "--reason", "más claro",
    )  # fmt: skip
    assert edited["texts"]["es"]["title"] == "Una enfermera en cada escuela, cada día"
    assert edited["history"][-1]["kind"] == "edit"
    assert edited["history"][-1]["changes"]["es"]["title"][1].endswith("cada día")
    assert edited["announced_update"] is None

    backdated = cli.json(
        "--now", "2019-01-20T10:00-08:00",
        "demand", "set", "pay", "--offer", "6% over two years, plus 3% later",
        "--source", "District proposal at the table", "--date", "2019-01-18",
    )  # fmt: skip
    entry = [e for e in backdated["history"] if e["source"] == "District proposal at the table"]
    assert entry[0]["at"].startswith("2019-01-18")
    future = cli("demand", "set", "pay", "--offer", "7%", "--source", "x", "--date", "2099-01-01")
    assert future.code == 2 and "in the future" in future.err

    cli.ok("demand", "add", "charter-cap", "--title", "Cap on charter schools", "--union", "A cap")
    retired = cli.json("demand", "retire", "charter-cap", "--reason", "settled", "--announce")
    assert retired["retired_at"] is not None and retired["announced_update"] is not None
    assert "charter-cap" not in [d["key"] for d in cli.json("demands")]
    shown = cli.json("demand", "show", "charter-cap")
    assert [e["kind"] for e in shown["history"]] == ["added", "retired"]
    # The campaign file does not bring a retired demand back, nor undo an edit.
    cli.ok("status")
    assert "charter-cap" not in [d["key"] for d in cli.json("demands")]
    nurses = cli.json("demand", "show", "nurses")
    assert nurses["texts"]["es"]["title"].endswith("cada día")

    audit = cli.json("audit", "-n", "20")
    actions = [(a["action"], a["target"]) for a in audit]
    for expected in [
        ("demand.edit", "demand:nurses"),
        ("demand.record", "demand:pay"),
        ("demand.add", "demand:charter-cap"),
        ("demand.retire", "demand:charter-cap"),
        ("update.post", f"update:{retired['announced_update']}"),
    ]:
        assert expected in actions
    shown_text = cli.ok("demand", "show", "nurses")
    assert "más claro" in shown_text and "edit" in shown_text


# ---------------------------------------------------------------------------- admin API


async def test_demands_change_through_the_admin_api(store: Store, clock: FixedClock) -> None:
    runtime = web_context(store, clock)
    await strike_week(runtime.store, clock, admin=runtime.admin)
    async with client_for(runtime) as client:
        edited = await client.patch(
            "/api/v1/admin/demands/nurses",
            headers=AUTH,
            json={"texts": {"es": {"summary": "Una enfermera, todos los días"}}, "reason": "typo"},
        )
        assert edited.status == 200, await edited.text()
        body = await edited.json()
        assert body["history"][-1]["kind"] == "edit"
        assert body["history"][-1]["changes"]["es"]["summary"][1] == "Una enfermera, todos los días"
        assert body["announced_update_id"] is None

        recorded = await client.put(
            "/api/v1/admin/demands/pay",
            headers=AUTH,
            json={
                "offer": {"en": "5%"},
                "source": "Jan 10 letter",
                "at": "2019-01-10T09:00:00-08:00",
            },
        )
        assert recorded.status == 200, await recorded.text()
        history = (await recorded.json())["history"]
        assert history[0]["source"] == "Jan 10 letter"  # backdated: first in the history
        future = await client.put(
            "/api/v1/admin/demands/pay",
            headers=AUTH,
            json={"offer": {"en": "5%"}, "source": "x", "at": "2099-01-10T09:00:00-08:00"},
        )
        assert future.status == 422 and "future" in await future.text()

        added = await client.post(
            "/api/v1/admin/demands",
            headers=AUTH,
            json={"key": "charter-cap", "texts": {"en": {"title": "Cap on charter schools"}},
                  "announce": True},
        )  # fmt: skip
        assert added.status == 201, await added.text()
        assert (await added.json())["announced_update_id"] is not None
        retired = await client.post(
            "/api/v1/admin/demands/charter-cap/retire", headers=AUTH, json={"reason": "settled"}
        )
        assert retired.status == 200 and (await retired.json())["retired_at"] is not None
        public = await (await client.get("/api/v1/demands")).json()
        assert "charter-cap" not in [d["key"] for d in public["items"]]
        detail = await (await client.get("/api/v1/demands/nurses")).json()
        assert detail["history"][-1]["note"] == "typo"
        denied = await client.post("/api/v1/admin/demands/pay/retire", json={"reason": "no token"})
        assert denied.status == 401
    async with store.read() as tx:
        audit = await tx.list_audit(limit=20)
    mine = [(a.action, a.target) for a in audit if a.actor.startswith("http:admin-api")]
    assert ("demand.edit", "demand:nurses") in mine
    assert ("demand.retire", "demand:charter-cap") in mine
    assert ("demand.add", "demand:charter-cap") in mine
