"""Back up and restore a campaign: `export FILE` and `import FILE` (JSON, lossless).

strikebot export backup.json                  # updates, demands, subscriptions, audit
strikebot export backup.json --deliveries     # ... and the outbox and briefing runs
strikebot import backup.json                  # into an empty database
strikebot import backup.json --replace        # overwrite this database with the file
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path

from bot.cli import add_json_flag, err, open_context, out, print_json
from bot.errors import InvalidInput
from bot.runtime.transfer import (
    TransferSummary,
    dumps,
    export_document,
    import_document,
    parse_document,
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    export = sub.add_parser(
        "export",
        help="write the whole campaign to a JSON file (a lossless backup)",
        description="Write the campaign's updates (with revisions and retractions), demands "
        "(with history), subscriptions and audit log to one JSON file. Importing it into an "
        "empty database restores everything with the same numbers.",
    )
    export.add_argument("file", metavar="FILE", help="where to write it (- = standard output)")
    export.add_argument(
        "--deliveries",
        action="store_true",
        help="also include the outbox (deliveries) and briefing runs",
    )
    add_json_flag(export)
    export.set_defaults(handler=export_handler)

    restore = sub.add_parser(
        "import",
        help="restore a campaign from a file written by `strikebot export`",
        description="Restore a campaign from an export file, in one transaction: all of it or "
        "nothing. The database must be empty unless you pass --replace.",
    )
    restore.add_argument("file", metavar="FILE", help="the export file (- = standard input)")
    restore.add_argument(
        "--replace",
        action="store_true",
        help="delete what this database holds and replace it with the file's contents",
    )
    add_json_flag(restore)
    restore.set_defaults(handler=import_handler)


async def export_handler(args: argparse.Namespace) -> int:
    async with open_context(args, seed=False) as ctx:
        doc = await export_document(ctx.store, ctx.config.campaign.slug, deliveries=args.deliveries)
    text = dumps(doc)
    summary = TransferSummary.of(doc)
    if args.file == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        err.print(_describe("Exported", summary, "standard output"))
        return 0
    path = Path(args.file)
    _write_atomically(path, text)
    if args.json:
        print_json(summary.to_json() | {"file": str(path)})
    else:
        out.print(_describe("Exported", summary, str(path)))
    return 0


async def import_handler(args: argparse.Namespace) -> int:
    if args.file == "-":
        raw, source = sys.stdin.buffer.read(), "standard input"
    else:
        try:
            raw, source = await asyncio.to_thread(Path(args.file).read_bytes), args.file
        except OSError as exc:
            raise InvalidInput(
                f"Cannot read {args.file} ({exc.strerror}); check the file name."
            ) from None
    async with open_context(args, seed=False) as ctx:
        doc = parse_document(raw, source=source, campaign_slug=ctx.config.campaign.slug)
        await import_document(ctx.store, doc, replace=args.replace)
    summary = TransferSummary.of(doc)
    if args.json:
        print_json(summary.to_json() | {"file": source, "replaced": args.replace})
    else:
        out.print(_describe("Imported", summary, source))
    return 0


def _describe(verb: str, s: TransferSummary, where: str) -> str:
    parts = [
        f"{s.updates} updates ({s.revisions} earlier revisions)",
        f"{s.demands} demands ({s.demand_events} history entries)",
        f"{s.subscriptions} subscriptions",
        f"{s.audit} audit entries",
    ]
    if s.deliveries is not None:
        parts.append(f"{s.deliveries} deliveries")
    preposition = "to" if verb == "Exported" else "from"
    return f"{verb} campaign {s.campaign} {preposition} {where}: {', '.join(parts)}."


def _write_atomically(path: Path, text: str) -> None:
    """Write beside the target and rename, so an interrupted export never leaves half a file."""
    directory = path.parent if str(path.parent) else Path()
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=directory)
    except OSError as exc:
        raise InvalidInput(
            f"Cannot write to {directory} ({exc.strerror}); choose a folder you can write to."
        ) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        Path(tmp).replace(path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise InvalidInput(
            f"Cannot write {path} ({exc.strerror}); choose a file you can write to."
        ) from None
