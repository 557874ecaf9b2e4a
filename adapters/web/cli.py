"""`strikebot publish <dir>`: the whole public site as static files, switched in atomically.

    strikebot publish site/          # then serve site/ with any static web server or CDN
    strikebot publish site/ --json

Both languages, every update's page, the archive, Atom, iCalendar and the public JSON,
with relative links. `site/` becomes a symbolic link to a new build beside it, switched in
one rename, so a web server reading it never sees half a site. `[web] publish_dir` in the
campaign file makes `strikebot run` re-publish after every change.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bot.ports import (
    SubParsers,
    add_json_flag,
    moment_type,
    open_plugin,
    out,
    print_json,
    shifted_clock,
)

from ._publish import publish_site

NAME = "web"


def register(sub: SubParsers[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "publish",
        help="write the public site (pages, feeds, JSON) as static files into a directory",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("directory", type=Path, help="where the site goes, e.g. site/")
    parser.add_argument(
        "--now",
        metavar="TIME",
        type=moment_type,
        help="render as of TIME (ISO 8601 with offset), e.g. to show a past campaign",
    )
    add_json_flag(parser)
    parser.set_defaults(handler=handle_publish)


async def handle_publish(args: argparse.Namespace) -> int:
    clock = shifted_clock(args.now)
    async with open_plugin(args, NAME, clock=clock) as web_ctx:
        result = await publish_site(web_ctx, args.directory)
    if args.json:
        print_json(result.to_json())
    else:
        out.print(
            f"Published {result.files} files ({result.bytes / 1024:.0f} KB) to "
            f"{result.directory} in {result.seconds:.1f} s. Serve that directory with any "
            "static web server; see docs/publishing.md."
        )
    return 0
