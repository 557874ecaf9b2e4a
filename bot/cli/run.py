"""`strikebot run`: the main job. Migrate, seed, serve the web page and API, connect the
platforms whose tokens are set, deliver, and send briefings, until SIGINT/SIGTERM."""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os

from rich.markup import escape

from bot.cli import out
from bot.cli._shared import moment_type
from bot.config import Settings, load_config

log = logging.getLogger("strikebot")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "run",
        help="serve the status page and API, connect the platforms switched on, deliver",
        description=__doc__,
    )
    parser.add_argument(
        "--host", help="listen address (default: $STRIKEBOT_HTTP_HOST or 127.0.0.1)"
    )
    parser.add_argument(
        "--port", type=int, help="listen port (default: $STRIKEBOT_HTTP_PORT or 8080)"
    )
    parser.add_argument(
        "--now",
        metavar="TIME",
        type=moment_type,
        help="demo a past campaign: the clock reads TIME at start and runs on "
        "(ISO 8601 with offset, e.g. 2019-01-18T10:00-08:00)",
    )
    parser.set_defaults(handler=handle)


async def handle(args: argparse.Namespace) -> int:
    from bot.runtime.app import serve
    from bot.runtime.demo import campaign_clock
    from bot.runtime.logging import configure_logging
    from bot.store import Store

    settings = Settings.from_env()
    settings.check()
    given = {"database_url": args.database_url, "http_host": args.host, "http_port": args.port}
    overrides = {name: value for name, value in given.items() if value not in (None, "")}
    if overrides:  # the flags win over the environment
        settings = dataclasses.replace(settings, core=settings.core.model_copy(update=overrides))
    config = load_config(args.config or settings.config_path)
    async with Store.open(settings.database_url) as store:  # migrated here, once
        clock, demo = await campaign_clock(
            config, store, now=args.now or args.clock_now, real_time=args.real_time
        )
    if demo is not None:  # the first line: the time this demo's pages and briefings read
        out.print(f"[bold yellow]{escape(demo)}[/]")
    configure_logging(settings)
    if demo is not None:
        log.warning("%s", demo)
    url = f"http://{settings.http_host}:{settings.http_port}"
    out.print(
        f"[bold]strikebot[/] — {config.campaign.union}: starting on [link={url}]{url}[/link] "
        f"(database: {_database_label(settings.database_url)}, pid {os.getpid()}). "
        "Press Ctrl+C to stop."
    )
    await serve(settings, config, clock=clock)
    out.print("strikebot stopped cleanly.")
    return 0


def _database_label(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)
