"""Next steps that do not mislead: a time in the past is refused with a sentence in the
campaign's zone (unless the update is history); an update without a next step keeps the
one still ahead; every surface reads wall times by one rule (a time that happens twice or
not at all is refused in chat as on the command line); and the demo campaign runs on the
clock of the strike week it describes, saying so."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot.clock import FixedClock, ShiftedClock, utcnow
from bot.commands import CommandContext, Commands
from bot.editorial.admin import Admin, Changes, Draft
from bot.editorial.parsing import parse_when
from bot.errors import InvalidInput
from bot.metrics import Metrics
from bot.models import Status, UpdateText
from bot.runtime.demo import campaign_clock
from bot.store import Store
from tests.support import ADMIN, ADMINS, CAMPAIGN, free_port, run_env, shipped_config
from tests.test_cli import Cli, cli, seeded_database

__all__ = ["cli", "seeded_database"]

LA = ZoneInfo("America/Los_Angeles")
FRIDAY = datetime(2019, 1, 18, 18, 0, tzinfo=UTC)  # 10:00 in Los Angeles
MONDAY_6AM = datetime(2019, 1, 21, 14, 0, tzinfo=UTC)
THURSDAY_7AM = datetime(2019, 1, 17, 15, 0, tzinfo=UTC)


def draft(
    next_step: str = "",
    at: datetime | None = None,
    *,
    history: bool = False,
    clear_next_step: bool = False,
) -> Draft:
    texts = {
        "en": UpdateText("Talks continue", next_step=next_step),
        "es": UpdateText("Siguen las negociaciones", next_step=next_step and f"{next_step} (es)"),
    }
    return Draft(
        Status.STRIKE_ON, texts, next_step_at=at, history=history, clear_next_step=clear_next_step
    )


async def test_a_past_next_step_is_refused_in_the_campaigns_zone_unless_history(
    sqlite_store: Store,
) -> None:
    admin = Admin(sqlite_store, CAMPAIGN, ADMINS, FixedClock(FRIDAY))
    with pytest.raises(InvalidInput) as refused:
        await admin.post(ADMIN, draft("Picket", THURSDAY_7AM))
    assert "Thursday, January 17, 7:00 AM PST" in refused.value.message
    assert "jueves, 17 de enero, 7:00 PST" in refused.value.localized("es")
    assert "+00:00" not in refused.value.message and "15:00" not in refused.value.message
    history = await admin.post(ADMIN, draft("Picket", THURSDAY_7AM, history=True))
    assert history.next_step_at == THURSDAY_7AM
    with pytest.raises(InvalidInput, match="already past"):
        await admin.edit(ADMIN, history.id, Changes(next_step_at=THURSDAY_7AM), reason="x")
    with pytest.raises(InvalidInput, match="Thursday, January 17, 7:00 AM PST, is in the past"):
        await admin.post(ADMIN, draft(), publish_at=THURSDAY_7AM)


async def test_an_update_without_a_next_step_keeps_the_one_still_ahead(
    sqlite_store: Store,
) -> None:
    clock = FixedClock(FRIDAY)
    admin = Admin(sqlite_store, CAMPAIGN, ADMINS, clock)
    await admin.post(ADMIN, draft("Strike resumes Monday", MONDAY_6AM))
    clock.advance(hours=2)
    kept = await admin.post(ADMIN, draft())
    assert kept.next_step_at == MONDAY_6AM
    assert kept.texts["en"].next_step == "Strike resumes Monday"
    assert kept.texts["es"].next_step == "Strike resumes Monday (es)"
    cleared = await admin.post(ADMIN, draft(clear_next_step=True))
    assert cleared.next_step_at is None and cleared.texts["en"].next_step == ""
    clock.now = MONDAY_6AM + timedelta(hours=1)  # the step passed: nothing to keep
    await admin.post(ADMIN, draft("Rally", MONDAY_6AM + timedelta(days=1)))
    clock.now = MONDAY_6AM + timedelta(days=2)
    after = await admin.post(ADMIN, draft())
    assert after.next_step_at is None


TWICE = ("2030-11-03T01:30", "happens twice")
NEVER = ("2030-03-10T02:30", "does not exist")


@pytest.mark.parametrize(("typed", "says"), [TWICE, NEVER])
async def test_chat_reads_times_by_the_rule_the_command_line_does(
    sqlite_store: Store, typed: str, says: str
) -> None:
    with pytest.raises(InvalidInput, match=says):
        parse_when(typed, LA)
    assert parse_when(typed + "-07:00", LA).tzinfo is not None  # with its offset: clear
    clock = FixedClock(datetime(2030, 1, 1, tzinfo=UTC))
    admin = Admin(sqlite_store, CAMPAIGN, ADMINS, clock)
    commands = Commands(sqlite_store, CAMPAIGN, admin, clock, metrics=Metrics())
    ctx = CommandContext("discord", ADMIN, "guild-1", "general")
    reply = await commands.handle(ctx, f'post strike_on "Picket" next="Picket" when={typed}')
    assert not reply.ok and says in reply.message.body


@pytest.mark.parametrize(("typed", "says"), [TWICE, NEVER])
def test_the_command_line_refuses_the_same_times(cli: Cli, typed: str, says: str) -> None:
    refused = cli("post", "--headline", "H", "--next-step-at", typed.replace("T", " "))
    assert refused.code != 0 and says in refused.err


def test_the_command_line_takes_a_past_next_step_only_as_history(cli: Cli) -> None:
    past = ("post", "--headline", "Talks", "--next-step-at", "2019-01-17 07:00")
    refused = cli(*past)
    assert refused.code != 0 and "Thursday, January 17, 7:00 AM PST" in refused.err
    assert cli.json(*past, "--past")["update"]["next_step_at"].startswith("2019-01-17T15:00")


async def test_the_demo_campaign_runs_on_its_strike_weeks_clock(sqlite_store: Store) -> None:
    config = shipped_config()
    clock, said = await campaign_clock(config, sqlite_store)
    assert isinstance(clock, ShiftedClock) and said is not None
    assert abs(clock() - datetime(2019, 1, 18, 17, 5, tzinfo=UTC)) < timedelta(seconds=5)
    assert "Friday, January 18, 2019, 9:05 AM PST" in said and "--real-time" in said
    real, quiet = await campaign_clock(config, sqlite_store, real_time=True)
    assert real is utcnow and quiet is None
    # A database holding a later post resumes just after it: nothing it shows is ahead.
    later = datetime(2019, 1, 19, 12, 0, tzinfo=UTC)
    await Admin(sqlite_store, CAMPAIGN, ADMINS, FixedClock(later)).post(ADMIN, draft())
    resumed, said = await campaign_clock(config, sqlite_store)
    assert resumed() > later and said is not None and "after the last change" in said


def test_run_on_the_demo_says_its_clock_first(tmp_path: Path) -> None:
    env = run_env(tmp_path, free_port())
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "run"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline().decode()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert first.startswith("Demo clock:") and "Friday, January 18, 2019" in first
