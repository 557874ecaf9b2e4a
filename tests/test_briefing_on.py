"""`/strike subscribe briefing=on` turns the morning briefing on at the campaign's default time."""

from __future__ import annotations

from datetime import time

from bot.admin import Admin
from bot.clock import FixedClock
from bot.commands import CommandContext, Commands
from bot.store import Store
from tests.support import ADMIN, ADMINS, CAMPAIGN


async def test_briefing_on_uses_the_default_time(sqlite_store: Store, clock: FixedClock) -> None:
    admin = Admin(sqlite_store, CAMPAIGN, ADMINS, clock)
    commands = Commands(sqlite_store, CAMPAIGN, admin, clock, default_briefing_time=time(6, 30))
    ctx = CommandContext("discord", ADMIN, "guild", "news")

    reply = await commands.handle(ctx, "subscribe briefing=on")
    assert reply.ok, reply.message.body
    async with sqlite_store.read() as tx:
        sub = await tx.find_subscription("discord", "guild", "news")
    assert sub is not None and sub.briefing_time == time(6, 30)

    reply = await commands.handle(ctx, "subscribe briefing=off")
    assert reply.ok
    async with sqlite_store.read() as tx:
        sub = await tx.find_subscription("discord", "guild", "news")
    assert sub is not None and sub.briefing_time is None

    reply = await commands.handle(ctx, "subscribe briefing=soon")
    assert not reply.ok
    assert "on (the campaign's default time)" in reply.message.body
