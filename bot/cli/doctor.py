"""`strikebot doctor`: with the configured tokens, ask each platform what the bot can do —
its state (on, off, broken), token, scopes or intents, and for every subscribed channel
whether the bot can post there — compare the campaign file with the database, count each
language's catalogue, and say how to fix each problem.

    strikebot doctor
    strikebot doctor --json

Exit status: 0 everything checked works and something reaches people; 1 something will not
work until fixed; 5 nothing fails but nothing reaches anyone yet (no platform connected, or
nothing subscribed); 2 and 4 as for every command (bad input, database unavailable).
"""

from __future__ import annotations

import argparse

from rich.markup import escape

from bot.cli import add_json_flag, open_context, out, print_json
from bot.cli._shared import fitted_table
from bot.plugins import Verdict, installed_plugins
from bot.runtime.doctor import run_doctor

MARKS = {
    Verdict.OK: "[green]ok[/]",
    Verdict.WARN: "[yellow]warn[/]",
    Verdict.FAIL: "[bold red]FAIL[/]",
    Verdict.SKIP: "[dim]skip[/]",
    Verdict.OFF: "[dim]off[/]",
}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "doctor",
        help="check each platform's state, every subscribed channel, the campaign file "
        "against the database and the catalogues, and say how to fix each problem",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_json_flag(parser)
    parser.set_defaults(handler=handle)


async def handle(args: argparse.Namespace) -> int:
    async with open_context(args) as ctx:
        report = await run_doctor(
            ctx.settings, ctx.config, ctx.store, installed_plugins(), clock=ctx.clock
        )
    if args.json:
        print_json(
            {
                "ok": report.exit_code == 0,
                "exit_code": report.exit_code,
                "summary": report.summary(),
                "reaching": list(report.reaching),
                "checks": [
                    {
                        "platform": c.platform,
                        "subject": c.subject,
                        "verdict": str(c.verdict),
                        "detail": c.detail,
                        "fix": c.fix,
                    }
                    for c in report.checks
                ],
            }
        )
        return report.exit_code
    rows = [
        (c.platform, escape(c.subject), MARKS[c.verdict], escape(c.detail), escape(c.fix))
        for c in report.checks
    ]
    out.print(fitted_table(("platform", "check", "", "found", "fix"), rows, key=1))
    colour = "green" if report.exit_code == 0 else "bold red" if report.failed else "yellow"
    out.print(f"[{colour}]{escape(report.summary())}[/]")
    return report.exit_code
