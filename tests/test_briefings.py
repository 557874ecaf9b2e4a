"""The morning briefing composer: content, language, quiet days, sizes, and its loader."""

from __future__ import annotations

import asyncio
import json
import os
import re
from dataclasses import replace
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from adapters.discord import LIMITS as DISCORD_LIMITS
from adapters.slack import LIMITS as SLACK_LIMITS
from bot.briefings import compose as briefings
from bot.briefings.compose import compose_briefing, gather_briefing_inputs
from bot.briefings.times import window_start
from bot.cli import main
from bot.clock import FixedClock
from bot.editorial.admin import Admin, Changes, Draft
from bot.messages.compose import fit_message, update_url
from bot.models import (
    Delivery,
    DeliveryAction,
    Demand,
    DemandEvent,
    DemandStatus,
    DemandText,
    Revision,
    Status,
    Subscription,
    Update,
    UpdateState,
    UpdateText,
    Urgency,
)
from bot.ports import MessageKind, OutboundMessage
from bot.store import Store
from tests.support import ADMIN, CAMPAIGN

LA = "America/Los_Angeles"
# Friday, January 18, 2019, 07:00 in Los Angeles: day 5 of the strike.
FRI_7AM = datetime(2019, 1, 18, 15, 0, tzinfo=UTC)

SUB_EN = Subscription(
    id=1,
    platform="discord",
    workspace="g1",
    channel="c1",
    language="en",
    briefing_time=time(7, 0),
    timezone=LA,
)
SUB_ES = replace(SUB_EN, id=2, channel="c2", language="es")


def _update(
    uid: int,
    published: datetime,
    en: UpdateText,
    es: UpdateText | None = None,
    *,
    status: Status = Status.STRIKE_ON,
    next_step_at: datetime | None = None,
    **extra: object,
) -> Update:
    texts = {"en": en} if es is None else {"en": en, "es": es}
    return Update(
        id=uid,
        status=status,
        urgency=Urgency.IMPORTANT,
        texts=texts,
        author="discord:1001",
        created_at=published,
        state=UpdateState.PUBLISHED,
        published_at=published,
        next_step_at=next_step_at,
        **extra,  # type: ignore[arg-type]
    )


THU_UPDATE = _update(
    2,
    datetime(2019, 1, 18, 1, 0, tzinfo=UTC),  # Thursday 17:00 in LA
    UpdateText(
        "Day 4: only a third of students in class as talks resume",
        "Families are standing with us.",
        "Talks continue Friday. Keep picketing at your school from 7:00 AM.",
    ),
    UpdateText(
        "Día 4: solo un tercio de los estudiantes en clase; se reanudan las negociaciones",
        "Las familias están con nosotros.",
        "Las negociaciones siguen el viernes. Sigue el piquete en tu escuela desde las 7:00.",
    ),
    status=Status.TALKS_SCHEDULED,
    next_step_at=datetime(2019, 1, 18, 17, 0, tzinfo=UTC),  # Friday 09:00 in LA
)
MON_UPDATE = _update(
    1,
    datetime(2019, 1, 14, 13, 30, tzinfo=UTC),
    UpdateText("The strike is on: 30,000 LA teachers walk out"),
    UpdateText("Comienza la huelga: 30,000 maestros de Los Ángeles salen a las calles"),
)


def _demand(key: str, position: int, en: DemandText, es: DemandText) -> Demand:
    return Demand(
        key=key,
        position=position,
        status=DemandStatus.OFFER_ON_TABLE,
        texts={"en": en, "es": es},
        updated_at=datetime(2019, 1, 11, 20, 0, tzinfo=UTC),
    )


DEMANDS = (
    _demand(
        "pay",
        0,
        DemandText(
            "Fair pay",
            union_position="A 6.5% raise, retroactive to 2017.",
            employer_offer="A 6% raise over two years.",
        ),
        DemandText(
            "Salario justo",
            union_position="Un aumento del 6.5%, retroactivo a 2017.",
            employer_offer="Un aumento del 6% en dos años.",
        ),
    ),
    _demand(
        "nurses",
        1,
        DemandText("A nurse in every school", union_position="A full-time nurse in every school."),
        DemandText(
            "Una enfermera en cada escuela",
            union_position="Una enfermera de tiempo completo en cada escuela.",
        ),
    ),
)
NURSE_OFFER = (
    "nurses",
    DemandEvent(
        at=datetime(2019, 1, 17, 22, 0, tzinfo=UTC),
        status=DemandStatus.OFFER_ON_TABLE,
        offer={
            "en": "A nurse in every school one day a week.",
            "es": "Una enfermera en cada escuela un día por semana.",
        },
        source="District proposal, January 17",
        recorded_by="discord:1001",
    ),
)
SEEDED_EVENT = (
    "pay",
    DemandEvent(
        at=datetime(2019, 1, 17, 23, 0, tzinfo=UTC),
        status=DemandStatus.OFFER_ON_TABLE,
        offer={"en": "A 6% raise over two years."},
        source="config/strike.toml",
        recorded_by="config",
    ),
)


def compose(
    sub: Subscription = SUB_EN,
    *,
    latest: Update | None = THU_UPDATE,
    updates: tuple[Update, ...] = (MON_UPDATE, THU_UPDATE),
    demands: tuple[Demand, ...] = DEMANDS,
    events: tuple[tuple[str, DemandEvent], ...] = (NURSE_OFFER, SEEDED_EVENT),
    now: datetime = FRI_7AM,
    language: str | None = None,
    since: datetime | None = None,
) -> OutboundMessage:
    return compose_briefing(
        CAMPAIGN, sub, latest, updates, demands, events, now, language, since=since
    )


def all_text(message: OutboundMessage) -> str:
    parts = [message.title, message.body, message.status_label, message.footer]
    parts += [f"{f.name}\n{f.value}" for f in message.fields]
    parts += [link.label for link in message.links]
    return "\n".join(parts)


# ------------------------------------------------------------------------- content


def test_english_briefing_reads_as_the_morning_summary() -> None:
    message = compose()
    assert message.kind is MessageKind.BRIEFING
    assert message.title == "Morning briefing — Friday, January 18"
    assert message.status is Status.TALKS_SCHEDULED
    assert message.status_label == "On strike — talks scheduled"
    lines = message.body.split("\n")
    assert lines[0] == "Day 5 of the strike"
    assert "In the last 24 hours:" in lines
    assert "• New: Day 4: only a third of students in class as talks resume" in lines
    assert "• A nurse in every school: new offer — A nurse in every school one day a week." in lines
    # Monday's update is older than 24 hours, the seeded offer is the starting point.
    assert "The strike is on" not in message.body
    assert "6% raise over two years" not in message.body
    assert (
        "What happens next: Talks continue Friday. Keep picketing at your school from 7:00 AM."
        in lines
    )
    assert "When: Friday, January 18, 9:00 AM PST" in lines
    assert [f.name for f in message.fields] == [
        "Fair pay · Offer on the table",
        "A nurse in every school · Offer on the table",
    ]
    assert message.fields[0].value == (
        "Union ask: A 6.5% raise, retroactive to 2017.\nCurrent offer: A 6% raise over two years."
    )
    assert message.fields[1].value.endswith("Current offer: none yet")
    assert [(link.label, link.url) for link in message.links] == [
        ("Public page", "https://strike.example.org/"),
        ("Latest update", "https://strike.example.org/updates/2"),
    ]
    assert message.url == "https://strike.example.org/"


def test_next_step_time_is_in_the_channels_time_zone() -> None:
    east = replace(SUB_EN, timezone="America/New_York")
    message = compose(east, now=datetime(2019, 1, 18, 12, 0, tzinfo=UTC))  # 07:00 in New York
    assert "When: Friday, January 18, 12:00 PM EST" in message.body
    assert message.footer == "United Teachers Los Angeles · times in America/New_York"


def test_a_next_step_in_the_past_shows_no_time() -> None:
    message = compose(now=datetime(2019, 1, 18, 18, 0, tzinfo=UTC))  # Friday 10:00, after 9:00
    assert "What happens next:" in message.body
    assert "When:" not in message.body


def test_days_since_talks_began_before_the_strike() -> None:
    bargaining = replace(THU_UPDATE, status=Status.STRIKE_VOTE, published_at=FRI_7AM)
    message = compose(latest=bargaining, now=datetime(2018, 12, 1, 15, 0, tzinfo=UTC))
    assert message.body.split("\n")[0] == "609 days since talks began"  # since 2017-04-01
    assert message.title == "Morning briefing — Saturday, December 1"


def test_days_since_talks_began_once_the_strike_is_over() -> None:
    over = replace(THU_UPDATE, status=Status.TENTATIVE_AGREEMENT)
    message = compose(latest=over, language="es")
    assert message.body.split("\n")[0] == "657 días desde el inicio de las negociaciones"
    one_day = replace(CAMPAIGN, start_date=date(2019, 1, 17))
    single = compose_briefing(one_day, SUB_EN, over, (), (), (), FRI_7AM)
    assert single.body.split("\n")[0] == "1 day since talks began"


def test_no_updates_yet() -> None:
    message = compose(latest=None, updates=(), events=())
    assert message.body.startswith("No updates have been posted yet.")
    assert message.status is None and message.status_label == ""
    assert [link.label for link in message.links] == ["Public page"]


def test_an_afternoon_schedule_is_not_called_morning() -> None:
    message = compose(now=datetime(2019, 1, 19, 2, 0, tzinfo=UTC))  # Friday 18:00 in LA
    assert message.title == "Briefing — Friday, January 18"


def test_corrections_retractions_and_status_moves_are_listed_in_order() -> None:
    corrected = replace(
        MON_UPDATE,
        revision=2,
        revisions=(
            Revision(
                number=1,
                texts=MON_UPDATE.texts,
                status=Status.STRIKE_ON,
                urgency=Urgency.IMPORTANT,
                next_step_at=None,
                editor="discord:1001",
                reason="The march starts at City Hall, not Pershing Square",
                created_at=datetime(2019, 1, 17, 20, 0, tzinfo=UTC),
            ),
        ),
    )
    retracted = replace(
        _update(3, datetime(2019, 1, 17, 18, 0, tzinfo=UTC), UpdateText("Rally moved to Sunday")),
        state=UpdateState.RETRACTED,
        retracted_at=datetime(2019, 1, 17, 19, 0, tzinfo=UTC),
        retraction_reason="Posted by mistake",
    )
    won = (
        "nurses",
        replace(NURSE_OFFER[1], offer={}, status=DemandStatus.WON, at=NURSE_OFFER[1].at),
    )
    message = compose(updates=(corrected, retracted, THU_UPDATE), events=(won,))
    bullets = [line for line in message.body.split("\n") if line.startswith("• ")]
    assert bullets == [
        "• Retracted: Rally moved to Sunday (Posted by mistake)",
        "• Corrected: The strike is on: 30,000 LA teachers walk out "
        "(The march starts at City Hall, not Pershing Square)",
        "• A nurse in every school: now Won",
        "• New: Day 4: only a third of students in class as talks resume",
    ]


def test_monday_briefing_of_a_weekday_channel_covers_the_weekend() -> None:
    weekdays = replace(SUB_EN, briefing_days=frozenset(range(5)))
    monday = datetime(2019, 1, 21, 15, 0, tzinfo=UTC)
    since = window_start(weekdays, monday)
    assert since == FRI_7AM
    saturday = _update(4, datetime(2019, 1, 19, 20, 0, tzinfo=UTC), UpdateText("Talks all weekend"))
    message = compose(weekdays, latest=saturday, updates=(saturday,), now=monday, since=since)
    assert "Since Friday, January 18:" in message.body
    assert "• New: Talks all weekend" in message.body
    daily = compose(SUB_EN, latest=saturday, updates=(saturday,), now=monday)
    assert "A quiet day: nothing new in the last 24 hours." in daily.body


def test_a_quiet_day_says_so_in_one_line() -> None:
    friday_5pm = datetime(2019, 1, 19, 1, 30, tzinfo=UTC)
    saturday = compose(
        now=datetime(2019, 1, 19, 15, 0, tzinfo=UTC),
        events=(),
        updates=(replace(THU_UPDATE, published_at=friday_5pm - timedelta(days=2)),),
    )
    assert saturday.body.split("\n") == [
        "Day 6 of the strike",
        "A quiet day: nothing new in the last 24 hours.",
        "What happens next: Talks continue Friday. Keep picketing at your school from 7:00 AM.",
    ]
    assert saturday.fields == ()  # yesterday's table is not repeated
    busy = compose()
    assert len(saturday.body) < len(busy.body) / 2


def test_people_cannot_ping_everyone_through_a_briefing() -> None:
    loud = replace(
        THU_UPDATE,
        texts={"en": UpdateText("@everyone strike <@&123> now", "", "@here meet at 7")},
    )
    message = compose(latest=loud, updates=(loud,))
    text = all_text(message)
    assert "@everyone" not in text and "@here" not in text and "<@&" not in text


# ------------------------------------------------------------------------- Spanish

# Words of the English template, each of which must never show up in a Spanish briefing.
ENGLISH_WORDS = {
    w.lower()
    for template in briefings._TEXT["en"].values()
    for w in re.findall(r"[A-Za-z]{3,}", re.sub(r"\{[^}]*\}", " ", template))
} - {"union"}  # part of the union's own name in the test campaign


def test_the_spanish_briefing_is_fully_spanish() -> None:
    assert {"morning", "briefing", "day", "strike", "hours", "next", "offer", "page"} <= (
        ENGLISH_WORDS
    )
    for message in (
        compose(SUB_ES),  # busy day
        compose(SUB_ES, events=(), now=datetime(2019, 1, 19, 15, 0, tzinfo=UTC)),  # quiet day
        compose(SUB_ES, now=datetime(2019, 1, 19, 2, 0, tzinfo=UTC)),  # evening
    ):
        assert message.language == "es"
        words = {w.lower() for w in re.findall(r"[A-Za-zÀ-ÿ]+", all_text(message))}
        leaked = words & ENGLISH_WORDS
        assert not leaked, f"English in the Spanish briefing: {sorted(leaked)}"
    busy = compose(SUB_ES)
    assert busy.title == "Resumen de la mañana — viernes, 18 de enero"
    assert busy.status_label == "En huelga — negociaciones programadas"
    assert busy.body.split("\n")[0] == "Día 5 de la huelga"
    assert "Cuándo: viernes, 18 de enero, 9:00 PST" in busy.body
    assert (
        "• Una enfermera en cada escuela: nueva oferta — Una enfermera en cada escuela "
        "un día por semana." in busy.body
    )
    assert busy.fields[0].value.startswith("Propuesta del sindicato: Un aumento del 6.5%")
    assert busy.url == "https://strike.example.org/es/"


def test_language_argument_overrides_the_channel() -> None:
    assert compose(SUB_EN, language="es-MX").language == "es"
    assert compose(SUB_ES, language="en").title.startswith("Morning briefing")


# ------------------------------------------------------------------------- sizes


def test_a_huge_day_stays_within_every_platforms_limits() -> None:
    long = "word " * 4000
    updates = tuple(
        _update(
            100 + i,
            FRI_7AM - timedelta(minutes=10 + i),
            UpdateText(f"Headline {i} " + "x" * 130, long, long[:300]),
            UpdateText(f"Titular {i} " + "x" * 130, long, long[:300]),
        )
        for i in range(60)
    )
    demands = tuple(
        _demand(
            f"d{i}",
            i,
            DemandText("Demand " + "y" * 300, union_position=long, employer_offer=long),
            DemandText("Demanda " + "y" * 300, union_position=long, employer_offer=long),
        )
        for i in range(40)
    )
    for sub in (SUB_EN, SUB_ES):
        message = compose(sub, latest=updates[0], updates=updates, demands=demands)
        assert len(message.title) <= 150
        assert len(message.body) <= 2900  # one Slack section; Discord allows 4096
        assert len(message.fields) <= 10
        assert all(len(f.name) <= 150 and len(f.value) <= 1024 for f in message.fields)
        total = len(message.title) + len(message.body) + len(message.footer)
        total += len(message.status_label) + sum(len(f.name) + len(f.value) for f in message.fields)
        assert total <= 6000  # Discord: everything in one message's embeds
        # The platform fitters have nothing left to trim.
        assert fit_message(message, DISCORD_LIMITS) == message
        assert fit_message(message, SLACK_LIMITS) == message
        # What did not fit is counted, with the way to the rest, in the channel's language.
        if sub.language == "en":
            assert re.search(r"and \d+ more", message.body)
            assert re.search(r"and 3\d more demands", message.body)
            assert message.body.split("\n")[0] == "Day 5 of the strike"
        else:
            assert re.search(r"y \d+ más", message.body)
            assert re.search(r"y 3\d demandas más", message.body)
            assert message.body.split("\n")[0] == "Día 5 de la huelga"


# ------------------------------------------------------------------------- loader


async def test_loader_reads_what_changed_in_one_transaction(
    store: Store, admin: Admin, clock: FixedClock
) -> None:
    clock.now = datetime(2019, 1, 17, 16, 0, tzinfo=UTC)  # Thursday 08:00
    first = await admin.post(
        ADMIN,
        Draft(
            Status.STRIKE_ON,
            {"en": UpdateText("Picket lines at 7"), "es": UpdateText("Piquetes a las 7")},
        ),
    )
    clock.now = datetime(2019, 1, 17, 22, 0, tzinfo=UTC)
    second = await admin.post(
        ADMIN,
        Draft(
            Status.TALKS_SCHEDULED,
            {"en": UpdateText("Talks resume", next_step="Rally at noon")},
            next_step_at=datetime(2019, 1, 18, 20, 0, tzinfo=UTC),
        ),
    )
    clock.now = datetime(2019, 1, 17, 23, 0, tzinfo=UTC)
    await admin.edit(
        ADMIN,
        first.id,
        Changes(texts={"en": UpdateText("Picket lines at 7 AM")}),
        reason="Time was unclear",
        correction=True,
    )
    mistake = await admin.post(ADMIN, Draft(Status.STRIKE_ON, {"en": UpdateText("Wrong rally")}))
    await admin.retract(ADMIN, mistake.id, reason="Posted by mistake")
    async with store.write() as tx:
        await tx.insert_demand(DEMANDS[1])
    clock.now = datetime(2019, 1, 17, 23, 30, tzinfo=UTC)
    await admin.record_demand(
        ADMIN, "nurses", offer={"en": "One day a week"}, source="District, Jan 17"
    )
    clock.now = FRI_7AM
    later = await admin.post(
        ADMIN,
        Draft(Status.STRIKE_ON, {"en": UpdateText("Not yet")}),
        publish_at=FRI_7AM + timedelta(hours=1),
    )

    async with store.read() as tx:
        inputs = await gather_briefing_inputs(tx, CAMPAIGN, FRI_7AM)
    assert inputs.latest is not None and inputs.latest.id == second.id
    assert [u.id for u in inputs.recent_updates] == [first.id, second.id, mistake.id]
    assert later.id not in [u.id for u in inputs.recent_updates]  # under embargo at 07:00
    assert [r.reason for r in inputs.recent_updates[0].revisions] == ["Time was unclear"]
    assert [key for key, _ in inputs.demand_events] == ["nurses"]

    message = inputs.compose(CAMPAIGN, SUB_EN, FRI_7AM)
    bullets = [line for line in message.body.split("\n") if line.startswith("• ")]
    assert bullets == [
        "• New: Picket lines at 7 AM",
        "• New: Talks resume",
        "• Retracted: Wrong rally (Posted by mistake)",
        "• A nurse in every school: new offer — One day a week",
    ]
    assert "When: Friday, January 18, 12:00 PM PST" in message.body

    # A day later Thursday's news is old; the update embargoed until Friday 08:00 is new.
    async with store.read() as tx:
        saturday = await gather_briefing_inputs(tx, CAMPAIGN, FRI_7AM + timedelta(days=1))
    quiet = saturday.compose(CAMPAIGN, SUB_EN, FRI_7AM + timedelta(days=1))
    assert "• New: Not yet" in quiet.body
    assert "Picket" not in quiet.body


# ------------------------------------------------------------------------- command line

REPO_CONFIG = Path(__file__).resolve().parents[1] / "config" / "strike.toml"


@pytest.fixture
def cli_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The shipped LAUSD campaign plus two subscribed channels, on a fresh SQLite file."""
    campaign = tmp_path / "strike.toml"
    campaign.write_text(
        REPO_CONFIG.read_text(encoding="utf-8")
        + '\n[[subscriptions]]\nplatform = "discord"\nworkspace = "300"\nchannel = "400"\n'
        + '\n[[subscriptions]]\nplatform = "slack"\nworkspace = "T1"\nchannel = "C1"\n'
        + 'language = "es"\nbriefing_time = "06:30"\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("STRIKEBOT_CONFIG", str(campaign))
    monkeypatch.setenv("STRIKEBOT_DATABASE_URL", f"sqlite+aiosqlite:///{tmp_path / 'cli.db'}")
    return tmp_path


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_sets_lists_and_clears_a_briefing(
    cli_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_cli(
        capsys,
        "briefing", "set", "--channel", "discord:300/400", "--time", "07:00",
        "--timezone", "America/Chicago", "--days", "mon-fri", "--json",
    )  # fmt: skip
    assert code == 0
    data = json.loads(out)
    assert (data["briefing_time"], data["timezone"], data["days"]) == (
        "07:00",
        "America/Chicago",
        "mon-fri",
    )
    assert datetime.fromisoformat(data["next"]).astimezone(ZoneInfo("America/Chicago")).hour == 7
    code, out, _ = run_cli(capsys, "briefing", "list", "--json")
    listed = {row["address"]: row for row in json.loads(out)}
    assert set(listed) == {"discord:300/400", "slack:T1/C1"}
    assert listed["slack:T1/C1"]["briefing_time"] == "06:30"
    assert listed["slack:T1/C1"]["timezone"] == "America/Los_Angeles"  # the campaign's
    sub_id = str(listed["discord:300/400"]["id"])
    code, out, _ = run_cli(capsys, "briefing", "clear", "--channel", sub_id)
    assert code == 0 and "Briefings are off for discord:300/400." in out
    code, out, _ = run_cli(capsys, "briefing", "list", "--json")
    assert [row["address"] for row in json.loads(out)] == ["slack:T1/C1"]


def test_cli_refuses_unknown_channels_and_bad_days(
    cli_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(
        capsys, "briefing", "set", "--channel", "discord:300/999", "--time", "07:00"
    )
    assert code == 2 and "is not subscribed" in err
    code, _, err = run_cli(
        capsys, "briefing", "set", "--channel", "discord:300/400", "--time", "7h"
    )
    assert code == 2 and "HH:MM" in err
    code, _, err = run_cli(
        capsys, "briefing", "set", "--channel", "discord:300/400", "--time", "07:00",
        "--days", "someday",
    )  # fmt: skip
    assert code == 2 and "someday" in err
    code, _, err = run_cli(capsys, "briefing", "preview", "--channel", "nowhere")
    assert code == 2 and "platform:workspace/channel" in err


def test_cli_preview_renders_the_seeded_campaign(
    cli_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_cli(capsys, "briefing", "preview", "--at", "2019-01-18T07:00", "--json")
    assert code == 0
    data = json.loads(out)
    message = OutboundMessage.from_json(data["message"])
    assert data["channel"] is None and data["at"] == "2019-01-18T15:00:00+00:00"
    assert message.title == "Morning briefing — Friday, January 18"
    assert message.body.startswith("Day 5 of the strike\n")
    assert "• New: Day 4: only a third of students in class as talks resume" in message.body
    assert message.fields[0].name == "Fair pay · Offer on the table"

    code, out, _ = run_cli(
        capsys, "briefing", "preview", "--channel", "slack:T1/C1", "--at", "2019-01-20T06:30"
    )
    assert code == 0
    assert out.startswith("Resumen de la mañana — domingo, 20 de enero\n")
    assert "Día tranquilo: nada nuevo en las últimas 24 horas." in out
    code, out, _ = run_cli(
        capsys, "briefing", "preview", "--channel", "slack:T1/C1", "--language", "en",
        "--at", "2019-01-20T06:30",
    )  # fmt: skip
    assert out.startswith("Morning briefing — Sunday, January 20\n")


def test_cli_send_now_queues_a_briefing_for_the_dispatcher(
    cli_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_cli(capsys, "briefing", "send-now", "--json")
    assert code == 0
    [queued] = json.loads(out)  # only the channel with a briefing time
    assert queued["channel"] == "slack:T1/C1"

    async def stored() -> list[Delivery]:
        url = os.environ["STRIKEBOT_DATABASE_URL"]
        async with Store.open(url) as store, store.read() as tx:
            return await tx.list_deliveries()

    [delivery] = asyncio.run(stored())
    assert delivery.id == queued["delivery_id"]
    assert delivery.action is DeliveryAction.BRIEFING
    assert delivery.payload is not None
    message = OutboundMessage.from_json(delivery.payload["message"])  # type: ignore[arg-type]
    assert message.language == "es" and message.kind is MessageKind.BRIEFING


# ------------------------------------------------------------------- the briefing's page link
# A briefing's "public page" link points at the status page in the briefing's language,


SUB = Subscription(
    id=1,
    platform="discord",
    workspace="g1",
    channel="c1",
    language="en",
    briefing_time=time(7, 0),
    timezone="America/Los_Angeles",
)
SAT_7AM = datetime(2019, 1, 19, 15, 0, tzinfo=UTC)


def _page(campaign_languages: tuple[str, ...], language: str) -> str:
    campaign = replace(CAMPAIGN, languages=campaign_languages)
    sub = replace(SUB, language=language)
    return compose_briefing(campaign, sub, None, (), (), (), SAT_7AM).url or ""


def test_english_first_campaign_links_english_to_root_and_spanish_to_es() -> None:
    assert _page(("en", "es"), "en") == "https://strike.example.org/"
    assert _page(("en", "es"), "es") == "https://strike.example.org/es/"


def test_spanish_first_campaign_links_english_under_en() -> None:
    # The Spanish page is / here; an English briefing must not send people to it.
    assert _page(("es", "en"), "es") == "https://strike.example.org/"
    assert _page(("es", "en"), "en") == "https://strike.example.org/en/"


def test_page_link_agrees_with_the_update_links() -> None:
    from tests.test_briefings import THU_UPDATE

    for languages in (("en", "es"), ("es", "en")):
        campaign = replace(CAMPAIGN, languages=languages)
        for language in languages:
            page = _page(languages, language)
            assert update_url(THU_UPDATE, campaign, language) == f"{page}updates/2"


def test_cli_preview_says_what_differs_per_audience(
    cli_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(
        capsys, "post", "--status", "strike_on", "--headline",
        "Roosevelt: breakfast at the north gate", "--sites", "roosevelt",
    )  # fmt: skip
    assert code == 0, err
    code, out, _ = run_cli(capsys, "briefing", "preview", "--json")
    assert code == 0
    data = json.loads(out)
    message = OutboundMessage.from_json(data["message"])
    assert "Roosevelt: breakfast at the north gate" in message.body  # follows everything
    [line] = data["audiences"]
    assert line["audience"] == {"sites": ["roosevelt"], "groups": []}
    assert line["in_this_briefing"] and line["told_in"] == 1 and line["with_a_briefing"] == 1
    code, out, _ = run_cli(capsys, "briefing", "preview")
    assert (
        "Only in the briefing of whoever follows Roosevelt High School or everything (1 of the "
        "1 with a briefing): Roosevelt: breakfast at the north gate"
    ) in out
