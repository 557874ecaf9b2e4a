"""`strikebot post --wait`: a progress bar of one update's deliveries, then a summary.

The sending happens in another process (`strikebot run`), so this watches the store,
reading it twice a second. Copies held back by an embargo or a channel's quiet hours are
counted as scheduled and not waited for; rows waiting to be retried are waited for.
Not a command itself: `register` adds nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from bot.cli import CliContext, err, out, print_json
from bot.plugins import installed_plugins
from bot.store import Store
from bot.store.outbox_queries import PlatformSummary, update_summary

STALL_HINT_AFTER = 30.0  # seconds without progress before suggesting `strikebot run`


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Not a command (see the module docstring)."""


async def summarize(store: Store, update_id: int, now: Any) -> dict[str, PlatformSummary]:
    async with store.read() as tx:
        return await update_summary(tx, update_id, now)


async def settle(
    ctx: CliContext, update_id: int, *, show_progress: bool, poll_seconds: float = 0.5
) -> dict[str, PlatformSummary]:
    """Wait until no copy of `update_id` is waiting to be sent (with a progress bar if
    `show_progress`) and return the per-platform summary."""
    summary = await summarize(ctx.store, update_id, ctx.clock())
    if show_progress:
        return await _with_progress(ctx, update_id, summary, poll_seconds)
    while _waiting(summary):
        await asyncio.sleep(poll_seconds)
        summary = await summarize(ctx.store, update_id, ctx.clock())
    return summary


def any_dead(summary: dict[str, PlatformSummary]) -> bool:
    return any(s.dead for s in summary.values())


async def wait_for_deliveries(
    ctx: CliContext,
    update_id: int,
    *,
    json_output: bool = False,
    poll_seconds: float = 0.5,
) -> int:
    """Show a progress bar until no copy of `update_id` is waiting to be sent, then a
    summary (sent / retried / dead per platform). With `json_output`, only the summary, as
    JSON. Returns 0 when nothing died, 1 when some copies are dead."""
    summary = await settle(ctx, update_id, show_progress=not json_output, poll_seconds=poll_seconds)
    if json_output:
        print_json(summary_json(update_id, summary))
    else:
        _print_summary(update_id, summary)
    return 1 if any_dead(summary) else 0


async def _with_progress(
    ctx: CliContext, update_id: int, summary: dict[str, PlatformSummary], poll_seconds: float
) -> dict[str, PlatformSummary]:
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[detail]}"),
        TimeElapsedColumn(),
        console=out,
        transient=False,
    )
    with progress:
        task = progress.add_task(f"Delivering update #{update_id}", total=None, detail="")
        last_done, last_change, hinted = -1, time.monotonic(), False
        while True:
            total, done = _counts(summary)
            retried = sum(s.retried for s in summary.values())
            detail = f"retried {retried}" if retried else ""
            progress.update(task, total=total, completed=done, detail=detail)
            if not _waiting(summary):
                break
            if done != last_done:
                last_done, last_change = done, time.monotonic()
            elif not hinted and time.monotonic() - last_change > STALL_HINT_AFTER:
                hinted = True
                err.print(
                    f"Nothing has been delivered for {STALL_HINT_AFTER:g} s. Is `strikebot run` "
                    f"running, with these platforms switched on ({_how_to_enable(summary)})? "
                    "Press Ctrl+C to stop watching; delivery carries on without you."
                )
            await asyncio.sleep(poll_seconds)
            summary = await summarize(ctx.store, update_id, ctx.clock())
    return summary


def _how_to_enable(summary: dict[str, PlatformSummary]) -> str:
    plugins = installed_plugins()
    hints = []
    for name in sorted(summary):
        plugin = plugins.get(name)
        hint = plugin.settings.from_env({}).off_hint if plugin is not None else ""
        hints.append(f"{name}: {hint}" if hint else name)
    return "; ".join(hints)


def _waiting(summary: dict[str, PlatformSummary]) -> bool:
    return any(s.pending - s.scheduled > 0 for s in summary.values())


def _counts(summary: dict[str, PlatformSummary]) -> tuple[int, int]:
    """(copies to deliver now, copies settled): scheduled ones are not part of this wait."""
    total = sum(s.total - s.scheduled for s in summary.values())
    done = sum(s.sent + s.dead + s.cancelled for s in summary.values())
    return total, done


def summary_json(update_id: int, summary: dict[str, PlatformSummary]) -> dict[str, Any]:
    return {
        "update": update_id,
        "sent": sum(s.sent for s in summary.values()),
        "retried": sum(s.retried for s in summary.values()),
        "dead": sum(s.dead for s in summary.values()),
        "scheduled": sum(s.scheduled for s in summary.values()),
        "platforms": [s.to_json() for s in summary.values()],
    }


def _print_summary(update_id: int, summary: dict[str, PlatformSummary]) -> None:
    if not summary:
        out.print(f"Update #{update_id} went to no channel (none is subscribed to it).")
        return
    table = Table(title=f"Update #{update_id}: deliveries")
    for column in ("Platform", "Sent", "Retried", "Dead", "Cancelled", "Scheduled"):
        table.add_column(column, justify="left" if column == "Platform" else "right")
    for s in summary.values():
        dead = f"[bold red]{s.dead}[/]" if s.dead else "0"
        table.add_row(
            s.platform, str(s.sent), str(s.retried), dead, str(s.cancelled), str(s.scheduled)
        )
    out.print(table)
    if any(s.dead for s in summary.values()):
        out.print(
            f"Some copies are dead. See why with `strikebot deliveries --state dead --update "
            f"{update_id}`, fix the channel, then `strikebot deliveries retry --all-dead`."
        )
    if any(s.scheduled for s in summary.values()):
        out.print(
            "Scheduled copies wait for the embargo time or a channel's quiet hours; "
            "`strikebot run` sends them then."
        )
