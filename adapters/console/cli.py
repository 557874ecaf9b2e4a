"""`strikebot console`: talk to the bot in this terminal, like a chat channel.

    strikebot console                              # a prompt: /strike status, /strike help
    printf '/strike status\\n' | strikebot console  # scripted: one command per line
    strikebot console --user maria --lang es       # as someone else, in Spanish
    strikebot console --now 2019-01-18T10:00-08:00 # replay the seeded campaign's week

Answers come from the same store as every platform. Deliveries to console subscriptions
(`/strike subscribe` here makes this console channel one) are shown as they go out.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

from rich.console import Console

from adapters.console._adapter import ConsoleAdapter
from adapters.console._session import ConsoleSession
from bot.ports import (
    Actor,
    CommandContext,
    add_json_flag,
    moment_type,
    open_plugin,
    shifted_clock,
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "console",
        help="talk to the bot in this terminal: /strike status, /strike post ...",
        description="Answer /strike commands typed here, against the same database, and show "
        "deliveries to console channels as they go out. When standard input is not a "
        "terminal, read one command per line and exit at the end (status 1 if any command "
        "was refused).",
    )
    parser.add_argument(
        "--user",
        default="console",
        help="who you are (default: 'console', an admin under [admins.console] in the config)",
    )
    parser.add_argument(
        "--channel", default="general", help="the console channel you type in (default: general)"
    )
    parser.add_argument(
        "--workspace", default="local", help="the console workspace (default: local)"
    )
    parser.add_argument(
        "--lang",
        "--language",
        dest="locale",
        metavar="LANG",
        help="answer in this language (one of the campaign's); default: the channel's, else the "
        "campaign's",
    )
    parser.add_argument("--timezone", metavar="ZONE", help="your time zone, e.g. America/New_York")
    parser.add_argument(
        "--no-deliver",
        action="store_true",
        help="answer commands but leave queued deliveries for `strikebot run`",
    )
    parser.add_argument(
        "--now",
        metavar="TIME",
        type=moment_type,
        help="pretend the session starts at this moment (ISO 8601 with its offset, e.g. "
        "2019-01-18T10:00-08:00); time then runs on from there. For demos of a past campaign",
    )
    add_json_flag(parser)
    parser.set_defaults(handler=handle)


async def handle(args: argparse.Namespace) -> int:
    # Not the CLI's shared `out`: that one soft-wraps, which would crop text inside panels.
    console = Console(highlight=False)
    # Without --now, the campaign's clock: a demo file's story week, else real time.
    clock = shifted_clock(args.now) if args.now else None
    # Warnings (a delivery that failed) go to stderr, secrets redacted; answers to stdout.
    async with open_plugin(args, "console", clock=clock, log_level=logging.WARNING) as ctx:
        adapter = ConsoleAdapter(console, json_output=args.json)
        context = CommandContext(
            platform=adapter.platform,
            actor=Actor(adapter.platform, args.user, display_name=args.user),
            workspace=args.workspace,
            channel=args.channel,
            locale=args.locale,
            timezone=args.timezone,
        )
        # Console channels' deliveries only; other platforms' rows are left alone.
        dispatcher = None if args.no_deliver else ctx.deliverer(adapter, f"console-{os.getpid()}")
        session = ConsoleSession(
            ctx.commands, context, console, dispatcher=dispatcher, json_output=args.json
        )
        interactive = sys.stdin.isatty()
        if interactive and not args.json:
            role = "an admin" if ctx.admins.allows(context.actor) else "a member"
            console.print(
                f"strikebot console — {ctx.campaign.union}. You are {args.user!r} ({role}) in "
                f"{args.workspace}/#{args.channel}. Type /strike help; Ctrl+D leaves.",
                markup=False,
            )
        await adapter.start()
        try:
            return await session.run(sys.stdin, interactive=interactive)
        finally:
            await adapter.stop()
