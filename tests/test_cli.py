"""The `strikebot` command end to end: `bot.cli.main([...])` against a temporary SQLite file
and the shipped campaign, reading what a person (or a script, with --json) would see."""

from __future__ import annotations

import json
import shutil
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import bot.cli
from bot.cli import main

ROOT = Path(__file__).resolve().parent.parent
STRIKE = ROOT / "config" / "strike.toml"


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str


class Cli:
    """Runs `strikebot --config ... --database-url ... ARGS` in this process."""

    def __init__(self, url: str, config: Path, capsys: pytest.CaptureFixture[str]) -> None:
        self.url = url
        self.config = config
        self.capsys = capsys

    def __call__(self, *args: str, url: str | None = None) -> Result:
        self.capsys.readouterr()
        code = main(["--config", str(self.config), "--database-url", url or self.url, *args])
        captured = self.capsys.readouterr()
        return Result(code, captured.out, captured.err)

    def ok(self, *args: str) -> str:
        result = self(*args)
        assert result.code == 0, result.err
        assert result.err == ""
        return result.out

    def json(self, *args: str) -> Any:
        return json.loads(self.ok(*args, "--json"))


@pytest.fixture(scope="module")
def seeded_database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database holding the seeded campaign, made once and copied for each test."""
    path = tmp_path_factory.mktemp("template") / "seeded.db"
    assert main(["--config", str(STRIKE), "--database-url", sqlite_url(path), "status"]) == 0
    return path


@pytest.fixture
def cli(
    tmp_path: Path,
    seeded_database: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> Cli:
    for name in ("STRIKEBOT_CONFIG", "STRIKEBOT_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    # Tables as wide as a desktop terminal, so cells are not wrapped mid-word.
    monkeypatch.setattr(bot.cli.out, "width", 200)
    for suffix in ("", "-wal"):
        source = seeded_database.with_name(seeded_database.name + suffix)
        if source.exists():
            shutil.copyfile(source, tmp_path / f"cli.db{suffix}")
    return Cli(sqlite_url(tmp_path / "cli.db"), STRIKE, capsys)


def sqlite_url(path: Path) -> str:
    return f"sqlite+aiosqlite:///{path}"


def dump(cli: Cli) -> list[str]:
    """Every row of the SQLite file, as SQL: equal dumps = an unchanged store."""
    path = cli.url.removeprefix("sqlite+aiosqlite:///")
    with closing(sqlite3.connect(path)) as conn:
        return list(conn.iterdump())


# ---------------------------------------------------------------------------- reading


def test_status_timeline_and_demands_show_the_seeded_campaign(cli: Cli) -> None:
    status = cli.json("status")
    assert status["campaign"]["slug"] == "utla-2019"
    assert status["status"] == "strike_on"
    assert status["latest_update"]["texts"]["en"]["headline"].startswith("Day 5: no deal yet")
    assert status["next_step"]["at"] == "2019-01-21T14:00:00+00:00"
    assert "resumes Monday" in status["next_step"]["text"]
    assert status["demands"] == {"offer_on_table": 5, "open": 2}
    assert status["day_of_strike"] >= 5
    assert status["pending_approval"] == [] and status["subscriptions"] == 0

    human = cli.ok("status")
    assert "Status: On strike · day" in human and "Next step:" in human
    assert "Monday, January 21, 6:00 AM PST" in human
    assert "lunes, 21 de enero, 6:00 PST" in cli.ok("status", "--language", "es")

    timeline = cli.json("timeline", "-n", "2")
    assert [u["id"] for u in timeline] == [3, 2]
    assert timeline[0]["url"] == "http://127.0.0.1:8080/updates/3"
    assert "Día 5" in cli.ok("timeline", "--language", "es")

    demands = cli.json("demands")
    assert [d["key"] for d in demands][:3] == ["pay", "class-size", "nurses"]
    nurses = cli.json("demand", "show", "nurses")
    assert any("15%" in fact for fact in nurses["texts"]["en"]["facts"])
    assert nurses["history"][0]["at"] == "2019-01-11T20:00:00+00:00"
    shown = cli.ok("demand", "show", "class-size")
    assert "45-50 students" in shown and "History" in shown and "Angeles Times" in shown
    assert "Offer on the table" in cli.ok("demands")


# ---------------------------------------------------------------------------- writing


def test_post_edit_retract_and_audit_end_to_end(cli: Cli) -> None:
    channel = cli.json("subscriptions", "add", "discord:g1/c1", "--label", "#strike-news")
    urgent_only = cli.json(
        "subscriptions", "add", "slack:T1/C1", "--language", "es", "--urgency", "urgent"
    )
    assert urgent_only["urgencies"] == ["urgent"] and urgent_only["language"] == "es"
    assert urgent_only["timezone"] == "America/Los_Angeles"

    posted = cli.json(
        "post",
        "--status", "talks_scheduled",
        "--headline", "Talks continue Saturday",
        "--body", "Both sides meet at 10:00.",
        "--next-step", "Rally at City Hall",
        "--next-step-at", "2030-01-21 06:00",
        "--es-headline", "Las negociaciones siguen el sábado",
        "--urgency", "important",
    )  # fmt: skip
    update = posted["update"]
    assert update["state"] == "published" and update["author"] == "cli:cli (command line)"
    assert update["next_step_at"] == "2030-01-21T14:00:00+00:00"  # 06:00 in Los Angeles
    assert update["texts"]["es"]["headline"] == "Las negociaciones siguen el sábado"
    assert posted["outbox"] == {"post": {"pending": 1}}  # the urgent-only channel skips it
    number = str(update["id"])

    edited = cli.json(
        "edit", number, "--body", "Both sides meet at 11:00.", "--reason", "time moved",
        "--correction",
    )  # fmt: skip
    assert edited["update"]["revision"] == 2
    assert edited["update"]["texts"]["en"]["headline"] == "Talks continue Saturday"
    assert edited["update"]["texts"]["en"]["body"] == "Both sides meet at 11:00."
    (revision,) = edited["update"]["revisions"]
    assert revision["reason"] == "time moved" and revision["editor"] == "cli:cli (command line)"
    assert revision["texts"]["en"]["body"] == "Both sides meet at 10:00."
    assert edited["outbox"]["edit"] == {"pending": 1}
    assert edited["outbox"]["correction"] == {"pending": 1}

    retracted = cli.json("retract", number, "--reason", "talks were called off", "--as", "maria")
    assert retracted["update"]["state"] == "retracted"
    assert retracted["update"]["retraction_reason"] == "talks were called off"
    assert retracted["outbox"]["post"] == {"cancelled": 1}
    assert retracted["outbox"]["retract"] == {"pending": 1}

    timeline = cli.json("timeline", "-n", "1")
    assert timeline[0]["id"] == update["id"] and timeline[0]["state"] == "retracted"
    assert cli.json("status")["latest_update"]["id"] == 3  # the status falls back
    assert "talks were called off" in cli.ok("show", number)

    audit = cli.json("audit", "-n", "3")
    assert [(a["action"], a["actor"]) for a in audit] == [
        ("update.retract", "cli:maria (command line)"),
        ("update.correct", "cli:cli (command line)"),
        ("update.post", "cli:cli (command line)"),
    ]
    assert audit[1]["after"]["reason"] == "time moved"
    assert cli.json("audit", "--target", f"subscription:{channel['id']}")[0]["action"] == (
        "subscription.save"
    )
    human = cli.ok("audit", "-n", "3")
    assert "update.retract" in human and "reason: talks were called off" in human


def test_embargoes_read_local_time_in_the_campaign_zone(cli: Cli) -> None:
    local = cli.json("post", "--headline", "Monday plan", "--at", "2030-01-21 06:00")
    assert local["update"]["state"] == "scheduled"
    assert local["update"]["published_at"] == "2030-01-21T14:00:00+00:00"
    assert local["update"]["status"] == "strike_on"  # the current status, by default
    east = cli.json(
        "post", "--headline", "East", "--at", "2030-01-21 06:00", "--timezone", "America/New_York"
    )
    assert east["update"]["published_at"] == "2030-01-21T11:00:00+00:00"
    offset = cli.json("post", "--headline", "Offset", "--at", "2030-07-01T06:00:00-07:00")
    assert offset["update"]["published_at"] == "2030-07-01T13:00:00+00:00"
    public = [u["id"] for u in cli.json("timeline")]
    everything = [u["id"] for u in cli.json("timeline", "--all")]
    assert local["update"]["id"] not in public and local["update"]["id"] in everything
    scheduled = cli.json("status")["scheduled"]
    assert [u["id"] for u in scheduled] == [
        east["update"]["id"],
        local["update"]["id"],
        offset["update"]["id"],
    ]
    assert "Scheduled for 2030-01-21 06:00 PST" in cli.ok(
        "post", "--headline", "Human", "--at", "2030-01-21 06:00"
    )


def test_two_person_approval_from_the_command_line(
    cli: Cli, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "approval.toml"
    config.write_text(
        STRIKE.read_text(encoding="utf-8").replace(
            "require_approval = false", "require_approval = true"
        ),
        encoding="utf-8",
    )
    two = Cli(cli.url, config, capsys)
    pending = two.json("post", "--headline", "Tentative agreement reached", "--as", "maria")
    number = str(pending["update"]["id"])
    assert pending["update"]["state"] == "pending_approval" and pending["outbox"] == {}
    assert two.json("status")["pending_approval"][0]["id"] == pending["update"]["id"]

    refused = two("approve", number, "--as", "maria")
    assert refused.code == 3 and "someone else must approve" in refused.err

    approved = two.json("approve", number, "--as", "alex")
    assert approved["update"]["state"] == "published"
    assert approved["update"]["approved_by"] == "cli:alex (command line)"
    again = two("approve", number)
    assert again.code == 2 and "not waiting for approval" in again.err


def test_demand_set_records_offer_status_and_source(cli: Cli) -> None:
    demand = cli.json(
        "demand", "set", "pay",
        "--status", "tentative_agreement",
        "--offer", "6% plus 3%",
        "--offer-es", "6% más 3%",
        "--source", "District proposal, Jan 21",
        "--note", "pending ratification",
    )  # fmt: skip
    assert demand["status"] == "tentative_agreement"
    assert demand["texts"]["en"]["employer_offer"] == "6% plus 3%"
    assert demand["texts"]["es"]["employer_offer"] == "6% más 3%"
    latest = demand["history"][-1]
    assert latest["source"] == "District proposal, Jan 21"
    assert latest["note"] == "pending ratification"
    assert latest["recorded_by"] == "cli:cli (command line)"
    assert len(demand["history"]) == 2
    human = cli.ok("demand", "set", "nurses", "--status", "won", "--source", "Deal")
    assert "Recorded for A nurse in every school" in human and "Won" in human
    assert cli.json("audit", "-n", "1")[0]["target"] == "demand:nurses"


def test_subscriptions_list_add_change_and_remove(cli: Cli) -> None:
    added = cli.json(
        "subscriptions", "add", "discord:300000000000000003/400000000000000004",
        "--language", "es", "--urgency", "important,urgent", "--briefing-time", "07:00",
        "--days", "mon-fri", "--quiet", "22:00-07:00", "--timezone", "America/Chicago",
        "--label", "#huelga",
    )  # fmt: skip
    assert added["briefing_time"] == "07:00" and added["briefing_days"] == [0, 1, 2, 3, 4]
    assert added["quiet_hours"] == {"start": "22:00", "end": "07:00"}
    assert added["timezone"] == "America/Chicago" and added["label"] == "#huelga"
    changed = cli.json(
        "subs", "add", "discord:300000000000000003/400000000000000004", "--days", "weekends"
    )
    assert changed["id"] == added["id"] and changed["briefing_days"] == [5, 6]
    other = cli.json("subscriptions", "add", "slack:T1/C1")
    listed = cli.json("subscriptions", "list")
    assert [s["id"] for s in listed] == [added["id"], other["id"]]
    assert "#huelga" in cli.ok("subscriptions", "list")
    assert cli.json("status")["subscriptions"] == 2

    cli.ok("subscriptions", "remove", "slack:T1/C1")
    assert "Channels: 1 subscribed" in cli.ok("status")  # the active ones
    cli.ok("subscriptions", "remove", str(added["id"]))
    assert cli.json("subscriptions", "list") == []
    everything = cli.json("subscriptions", "list", "--all")
    assert [s["active"] for s in everything] == [False, False]
    again = cli("subscriptions", "remove", str(added["id"]))
    assert again.code == 2 and "already removed" in again.err


# ---------------------------------------------------------------------------- bad input


BAD_INPUT = [
    (["post", "--headline", ""], "--headline: The headline is empty"),
    (["post", "--headline", "x" * 151], "keep it to 150"),
    (["post", "--headline", "H", "--status", "striking"], "“striking” is not a status"),
    (["post", "--headline", "H", "--urgency", "panic"], "“panic” is not an urgency"),
    (["post", "--headline", "H", "--at", "2019-01-01 00:00"], "PST, is in the past"),
    (["post", "--headline", "H", "--at", "next monday"], "is not a date and time"),
    (["post", "--headline", "H", "--at", "2030-03-10 02:30"], "does not exist"),
    (["post", "--headline", "H", "--at", "2030-11-03 01:30"], "happens twice"),
    (
        ["post", "--headline", "H", "--at", "2030-01-01 09:00", "--timezone", "Mars/Base"],
        "“Mars/Base” is not a time zone",
    ),
    (["post", "--headline", "H", "--es-body", "solo cuerpo"], "Add the Spanish headline"),
    (["post", "--headline", "H", "--as", "no spaces please"], "--as"),
    (["post", "--headline", "H", "--body", "b", "--body-file", "f"], "not both"),
    (["post", "--headline", "H", "--body-file", "/nonexistent/body.txt"], "Cannot read"),
    (["edit", "99", "--reason", "x", "--body", "y"], "There is no update #99"),
    (["edit", "1", "--reason", "x"], "Nothing to change"),
    (["edit", "1", "--reason", "  ", "--body", "y"], "Give a reason"),
    (["retract", "99", "--reason", "x"], "There is no update #99"),
    (["approve", "1"], "is not waiting for approval"),
    (["show", "99"], "No update #99"),
    (["demand", "set", "wages", "--status", "won", "--source", "s"], "No demand with key"),
    (
        ["demand", "set", "pay", "--status", "maybe", "--source", "s"],
        "“maybe” is not a demand status",
    ),
    (["demand", "set", "pay", "--offer", " ", "--source", "s"], "offer (en) is empty"),
    (["demand", "set", "pay", "--source", "s"], "Give a new status, a new offer"),
    (["demand", "show", "wages"], "Known keys: pay, class-size"),
    (["subscriptions", "add", "general"], "is not a channel address"),
    (["subscriptions", "add", "irc:libera/strike"], "Unknown platform 'irc'"),
    (["subscriptions", "add", "discord:g/c", "--timezone", "PST"], "is not a time zone"),
    (["subscriptions", "add", "discord:g/c", "--timezone", "America"], "is not a time zone"),
    (["subscriptions", "add", "discord:g/c", "--quiet", "22:00"], "is not a range"),
    (["subscriptions", "add", "discord:g/c", "--days", "funday"], "is not a list of days"),
    (["subscriptions", "add", "discord:g/c", "--briefing-time", "25:00"], "not a time of day"),
    (["subscriptions", "add", "discord:g/c", "--language", "fr"], "“fr” is not one of"),
    (["subscriptions", "add", "discord:g/c", "--urgency", "loud"], "“loud” is not an urgency"),
    (["subscriptions", "remove", "99"], "No subscription 99"),
    (["subscriptions", "remove", "9" * 20], "No subscription 999"),
    (["briefing", "clear", "--channel", "9" * 20], "No subscribed channel #999"),
    (["deliveries", "--limit", "9" * 20], "out of range"),
    (["timeline", "-n", "0"], "out of range"),
    (["status", "--language", "fr"], "not one of this campaign's languages"),
    (["import", "/nonexistent/backup.json"], "Cannot read"),
]


@pytest.mark.parametrize(
    ("args", "message"), BAD_INPUT, ids=[" ".join(a)[:40] for a, _ in BAD_INPUT]
)
def test_bad_input_gets_one_sentence_and_changes_nothing(
    cli: Cli, args: list[str], message: str
) -> None:
    before = dump(cli)
    result = cli(*args)
    assert result.code != 0
    assert result.out == ""
    assert result.err.startswith("error: ") and result.err.count("\n") == 1, result.err
    assert message in result.err
    assert dump(cli) == before


def test_argument_mistakes_are_caught_by_the_parser(cli: Cli) -> None:
    with pytest.raises(SystemExit) as missing_reason:
        cli("retract", "1")
    assert missing_reason.value.code == 2
    assert "--reason" in cli.capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli("edit", "one", "--reason", "x")
    cli.capsys.readouterr()
    # Past PostgreSQL's integer ids (and SQLite's): a usage error, never a traceback.
    for args in (["show", "9" * 20], ["retract", "9" * 20, "--reason", "x"],
                 ["deliveries", "--update", "9" * 20]):  # fmt: skip
        with pytest.raises(SystemExit) as too_big:
            cli(*args)
        assert too_big.value.code == 2
        assert "is not an update number" in cli.capsys.readouterr().err


def test_an_unreachable_or_unsupported_database_is_one_sentence(cli: Cli) -> None:
    down = cli("status", url="postgresql+asyncpg://strikebot@127.0.0.1:1/strikebot")
    assert down.code == 4
    assert "Cannot open the database at postgresql+asyncpg://strikebot@127.0.0.1:1" in down.err
    assert "STRIKEBOT_DATABASE_URL" in down.err
    other = cli("status", url="mysql://u@127.0.0.1/db")
    assert other.code == 4 and "not supported" in other.err


def test_a_bad_config_names_the_file_and_the_key(cli: Cli, tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(
        STRIKE.read_text(encoding="utf-8").replace(
            'timezone = "America/Los_Angeles"', 'timezone = "LA"'
        ),
        encoding="utf-8",
    )
    result = main(["--config", str(bad), "--database-url", cli.url, "status"])
    err = cli.capsys.readouterr().err
    assert result == 2
    assert str(bad) in err and "campaign.timezone" in err and "IANA" in err


# ---------------------------------------------------------------------------- db, export, import


def test_db_upgrade_creates_then_reports_up_to_date(cli: Cli, tmp_path: Path) -> None:
    from alembic.script import ScriptDirectory

    from bot.store.engine import alembic_config

    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    fresh = sqlite_url(tmp_path / "fresh" / "new.db")
    first = json.loads(cli("db", "upgrade", "--json", url=fresh).out)
    assert first["from"] is None and first["to"] == head and first["dialect"] == "sqlite"
    second = json.loads(cli("db", "upgrade", "--json", url=fresh).out)
    assert second["from"] == second["to"] == head
    assert "up to date" in cli("db", "upgrade", url=fresh).out


def test_export_then_import_into_an_empty_database_round_trips(cli: Cli, tmp_path: Path) -> None:
    cli.ok("subscriptions", "add", "discord:g1/c1")
    number = str(cli.json("post", "--headline", "Strike continues")["update"]["id"])
    cli.ok("edit", number, "--headline", "The strike continues", "--reason", "wording")
    cli.ok("retract", number, "--reason", "duplicate")
    cli.ok("demand", "set", "pay", "--offer", "6.2%", "--source", "table, Jan 19")
    exported = tmp_path / "backup.json"
    summary = cli.json("export", str(exported))
    assert summary["updates"] == 4 and summary["revisions"] == 1 and summary["deliveries"] is None

    target = f"sqlite+aiosqlite:///{tmp_path / 'restored.db'}"
    restored = json.loads(cli("import", str(exported), "--json", url=target).out)
    assert restored["updates"] == 4 and restored["replaced"] is False
    again = tmp_path / "again.json"
    cli("export", str(again), url=target)
    assert again.read_bytes() == exported.read_bytes()

    refused = cli("import", str(exported), url=target)
    assert refused.code == 2 and "already holds data" in refused.err
    assert "--replace" in refused.err
    cli("import", str(exported), "--replace", url=target)

    stdout = cli("export", "-")
    assert json.loads(stdout.out)["format"] == "strikebot-export"
    assert "Exported campaign utla-2019 to standard output" in stdout.err


def test_corrupt_foreign_and_other_campaign_files_are_refused(cli: Cli, tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    cli.ok("export", str(good))
    text = good.read_text(encoding="utf-8")
    files = {
        "truncated.json": (text[: len(text) // 2], "is not valid JSON"),
        "foreign.json": ('{"messages": []}\n', "is not a strikebot export"),
        "other.json": (
            text.replace('"campaign": "utla-2019"', '"campaign": "ctu-2012"', 1),
            "is an export of campaign 'ctu-2012'",
        ),
    }
    before = dump(cli)
    for name, (content, message) in files.items():
        path = tmp_path / name
        path.write_text(content, encoding="utf-8")
        result = cli("import", str(path), "--replace")
        assert result.code == 2, name
        assert str(path) in result.err and message in result.err, result.err
        assert result.err.count("\n") == 1
    assert dump(cli) == before


# ---------------------------------------------------------------------------- --wait


def test_wait_with_the_real_progress_helper_and_nothing_to_deliver(cli: Cli) -> None:
    posted = cli.json("post", "--headline", "No channel subscribed yet", "--wait")
    assert posted["update"]["state"] == "published"
    assert posted["delivery"]["update"] == posted["update"]["id"]
    assert posted["delivery"]["sent"] == 0
