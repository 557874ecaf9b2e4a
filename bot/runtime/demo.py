"""The clock of a campaign file that is a demo of a past strike (`[demo] clock_starts`).

`config/strike.toml` describes the Los Angeles teachers' strike of January 2019. Run on the
real clock, its page read "Day 2879 of the strike" beside "Day 5: no deal yet". A demo file
says when its story stands (`[demo] clock_starts`, just after its last seeded update), and
every command run with it — `strikebot run`, the console, `post` — reads that time,
running on from there: the strike week it describes, said in the first line `run` prints.
A database holding later changes resumes just after the last one, so nothing posted
or changed in an earlier session is ever in the future, and each command's changes come
after the last one's. `--now TIME` replays another moment and
`--real-time` keeps the real clock; a campaign file without `[demo]` is always real time.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import func, select

from bot import i18n
from bot.clock import Clock, ShiftedClock, shifted_clock, utcnow
from bot.config import StrikeConfig
from bot.store import Store
from bot.store import schema as t

RESUME_GAP = timedelta(minutes=1)  # a command resumes this long after the last change


async def campaign_clock(
    config: StrikeConfig, store: Store, *, now: datetime | None = None, real_time: bool = False
) -> tuple[Clock, str | None]:
    """The clock a command runs on, and the sentence saying so when it is a demo's."""
    if now is not None:
        return shifted_clock(now), None
    demo = config.demo
    if real_time or demo is None:
        return utcnow, None
    start = demo.clock_starts
    last = await last_written(store)
    resumed = last is not None and last + RESUME_GAP > start
    if last is not None and resumed:
        start = last + RESUME_GAP
    clock = ShiftedClock(start)
    zone = ZoneInfo(config.campaign.timezone)
    when = i18n.format_datetime(start.astimezone(zone), i18n.source_language(), utcnow().date())
    why = "just after the last change made in it" if resumed else "the strike week it describes"
    return clock, (
        f"Demo clock: this campaign file is a demo of a past strike, so the time reads {when} "
        f"({why}; [demo] clock_starts) and runs on from there. Give --real-time for the "
        "real time, or --now TIME for another moment."
    )


async def last_written(store: Store) -> datetime | None:
    """When the last change was written (every change writes an audit entry; the latest is
    read through the index on its time), None before any."""
    async with store.read() as tx:
        latest: datetime | None = await tx.conn.scalar(select(func.max(t.audit_log.c.at)))
    return latest
