"""`strikebot doctor`: with the configured tokens, ask each platform what the bot can do —
token valid, scopes or intents, and for every subscribed channel whether the bot can post
there — and say how to fix each problem. Exit status 1 when something will not work.

    strikebot doctor
    strikebot doctor --json
"""

from __future__ import annotations

import argparse

from rich.markup import escape
from rich.table import Table

from bot.cli import add_json_flag, open_context, out, print_json
from bot.plugins import Verdict, installed_plugins
from bot.runtime.doctor import run_doctor

MARKS = {
    Verdict.OK: "[green]ok[/]",
    Verdict.WARN: "[yellow]warn[/]",
    Verdict.FAIL: "[bold red]FAIL[/]",
    Verdict.SKIP: "[dim]skip[/]",
}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "doctor",
        help="check that the bot can post everywhere it is subscribed, and say how to fix it",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_json_flag(parser)
    parser.set_defaults(handler=handle)


async def handle(args: argparse.Namespace) -> int:
    async with open_context(args) as ctx:
        checks = await run_doctor(ctx.settings, ctx.config, ctx.store, installed_plugins())
    failed = any(c.verdict is Verdict.FAIL for c in checks)
    if args.json:
        print_json(
            {
                "ok": not failed,
                "checks": [
                    {
                        "platform": c.platform,
                        "subject": c.subject,
                        "verdict": str(c.verdict),
                        "detail": c.detail,
                        "fix": c.fix,
                    }
                    for c in checks
                ],
            }
        )
        return 1 if failed else 0
    table = Table()
    for column in ("platform", "check", "", "found", "fix"):
        table.add_column(column)
    for c in checks:
        table.add_row(
            c.platform, escape(c.subject), MARKS[c.verdict], escape(c.detail), escape(c.fix)
        )
    out.print(table)
    if failed:
        out.print("[bold red]Some things will not work until fixed[/] (the fix column says how).")
    else:
        out.print("[green]Everything checked works.[/]")
    return 1 if failed else 0
