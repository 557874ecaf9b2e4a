"""People who signed up for e-mail and texts: `subscribers stats|export|delete`.

    strikebot subscribers stats                       # counts only, never an address
    strikebot subscribers export maria@example.com    # everything kept about one person
    strikebot subscribers delete "(213) 555-0123"     # a deletion request, at once
    strikebot subscribers delete --all --yes          # the campaign is over

Export and delete answer a person's own request (docs/privacy.md); they name one address
and print nothing about anyone else.
"""

from __future__ import annotations

import argparse
from typing import Any

from rich.table import Table

from bot.cli import add_json_flag, open_context, out, print_json
from bot.errors import InvalidInput, NotFound
from bot.people.signups import SignUps, signups_for
from bot.plugins import installed_plugins


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    people = sub.add_parser(
        "subscribers",
        help="people signed up for e-mail and texts: stats, export or delete one person's data",
        description="Counts of the people who signed up on the status page, and a person's "
        "own data on request (export, delete). Addresses are never listed.",
    )
    actions = people.add_subparsers(dest="subscribers_command", metavar="ACTION")
    actions.required = True

    stats = actions.add_parser("stats", help="how many people, by language and choice")
    add_json_flag(stats)
    stats.set_defaults(handler=stats_handler)

    export = actions.add_parser("export", help="everything kept about one person, as JSON")
    export.add_argument("address", help="their e-mail address or phone number")
    export.set_defaults(handler=export_handler)

    delete = actions.add_parser("delete", help="forget one person (or everyone) at once")
    who = delete.add_mutually_exclusive_group(required=True)
    who.add_argument("address", nargs="?", help="their e-mail address or phone number")
    who.add_argument("--all", action="store_true", help="everyone (the campaign is over)")
    delete.add_argument("--yes", action="store_true", help="with --all: yes, really everyone")
    add_json_flag(delete)
    delete.set_defaults(handler=delete_handler)


def _signups(ctx: Any) -> SignUps:
    return signups_for(ctx.store, ctx.config, ctx.clock)


async def stats_handler(args: argparse.Namespace) -> int:
    async with open_context(args) as ctx:
        found = await _signups(ctx).stats()
    if args.json:
        print_json(found)
        return 0
    if not found["people"]:
        hints = [
            f"{p.title}: {p.settings.from_env({}).off_hint}"
            for p in installed_plugins().values()
            if p.contact is not None
        ]
        out.print(
            "Nobody has signed up yet. The form is at /subscribe on the status page once a "
            f"platform that reaches people is on ({'; '.join(hints) or 'none is installed'}; "
            "README: Reach families)."
        )
        return 0
    table = Table()
    for name in ("by", "confirmed", "waiting to confirm", "broken", "languages", "receive"):
        table.add_column(name)
    for kind, row in sorted(found["people"].items()):
        table.add_row(
            "e-mail" if kind == "email" else "text",
            str(row.get("confirmed", 0)),
            str(row.get("pending", 0)),
            str(row.get("broken", 0)),
            ", ".join(f"{k} {v}" for k, v in sorted(row["languages"].items())) or "-",
            ", ".join(f"{k} {v}" for k, v in sorted(row["receives"].items())) or "-",
        )
    out.print(table)
    if found["receipts"]:
        receipts = ", ".join(f"{k} {v}" for k, v in found["receipts"].items())
        out.print(f"Provider receipts: {receipts}")
    return 0


async def export_handler(args: argparse.Namespace) -> int:
    async with open_context(args) as ctx:
        found = await _signups(ctx).export(args.address)
    if found is None:
        raise NotFound(
            "Nobody with that address or number is signed up (or they already unsubscribed, "
            "which deleted everything). Check the spelling."
        )
    print_json(found)
    return 0


async def delete_handler(args: argparse.Namespace) -> int:
    async with open_context(args) as ctx:
        signups = _signups(ctx)
        if args.all:
            if not args.yes:
                raise InvalidInput(
                    "This forgets every person who signed up, for good. Run it again with "
                    "--all --yes if that is what you want."
                )
            count = await signups.delete_all()
        else:
            if not await signups.delete(args.address):
                raise NotFound(
                    "Nobody with that address or number is signed up; nothing to delete."
                )
            count = 1
    if args.json:
        print_json({"deleted": count})
    else:
        out.print(f"Deleted {count} {'person' if count == 1 else 'people'} and everything kept "
                  "about them; nothing more will be sent.")  # fmt: skip
    return 0
