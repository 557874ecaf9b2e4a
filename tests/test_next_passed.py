"""`/strike next` says so when the announced time has passed without a newer update."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.admin import Admin, Draft
from bot.clock import FixedClock
from bot.commands import CommandContext, Commands
from bot.models import Status, UpdateText
from bot.store import Store
from tests.support import ADMIN, ADMINS, CAMPAIGN


async def test_a_next_step_in_the_past_is_marked_as_passed(
    sqlite_store: Store, clock: FixedClock
) -> None:
    admin = Admin(sqlite_store, CAMPAIGN, ADMINS, clock)
    commands = Commands(sqlite_store, CAMPAIGN, admin, clock)
    monday = datetime(2019, 1, 21, 14, 0, tzinfo=UTC)  # 6:00 AM in Los Angeles
    await admin.post(
        ADMIN,
        Draft(
            Status.STRIKE_ON,
            {"en": UpdateText("No deal", next_step="The strike resumes Monday")},
            next_step_at=monday,
        ),
    )
    ctx = CommandContext("discord", ADMIN, "guild", "news")

    before = await commands.next_step(ctx)
    (when,) = [f.value for f in before.message.fields if f.name == "When"]
    assert "passed" not in when

    clock.now = datetime(2019, 1, 22, 18, 0, tzinfo=UTC)
    after = await commands.next_step(ctx)
    (when,) = [f.value for f in after.message.fields if f.name == "When"]
    assert when.endswith("(this has passed; no newer update yet)")
    spanish = await commands.next_step(
        CommandContext("discord", ADMIN, "guild", "news", locale="es-ES")
    )
    (cuando,) = [f.value for f in spanish.message.fields if f.name == "Cuándo"]
    assert "ya pasó" in cuando
