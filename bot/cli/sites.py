"""The campaign's sites (schools, worksites) and their groups: `sites import|list`.

    strikebot sites import config/lausd-sites.csv
    strikebot sites list [--group east] [--json]

The file's columns are described in `bot.audiences.files` and docs/audiences.md. Importing
the same file again changes nothing; a changed row is updated in place.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.markup import escape

from bot.cli import add_json_flag, open_context, out, print_json
from bot.cli._shared import actor_from, add_actor_flag, fitted_table
from bot.errors import InvalidInput
from bot.models import Site, SiteGroup


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sites = sub.add_parser(
        "sites",
        help="the campaign's sites and their groups: import a CSV file, list them",
        description="The campaign's sites (a school, a worksite) and their groups (a local "
        "district, a region, a campus): updates can address them and channels follow them.",
    )
    actions = sites.add_subparsers(dest="sites_command", metavar="ACTION")
    actions.required = True

    load = actions.add_parser(
        "import",
        help="add or change sites and groups from a CSV file (again: no duplicates)",
        description="Add or change sites and groups from a CSV file with the columns kind, "
        "code, group, name, name_<language>, address, example (docs/audiences.md).",
    )
    load.add_argument("file", type=Path, help="the CSV file (UTF-8)")
    add_actor_flag(load)
    add_json_flag(load)
    load.set_defaults(handler=import_handler)

    listing = actions.add_parser("list", help="every group and its sites")
    listing.add_argument("--group", help="only this group's sites")
    add_json_flag(listing)
    listing.set_defaults(handler=list_handler)


async def import_handler(args: argparse.Namespace) -> int:
    from bot.audiences import Sites, read_sites_csv

    actor = actor_from(args)
    try:
        text = args.file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InvalidInput(f"There is no file {str(args.file)!r}.") from None
    except UnicodeDecodeError:
        raise InvalidInput(f"{str(args.file)!r} is not UTF-8 text; save it as UTF-8 CSV.") from None
    async with open_context(args) as ctx:
        campaign = ctx.config.to_campaign()
        found = read_sites_csv(text, campaign.languages, campaign.default_language)
        done = await Sites(ctx.store, ctx.config.to_admins(), ctx.clock).import_file(actor, found)
        if args.json:
            print_json(done.counts)
            return 0
        for kind, label in (("group", "groups"), ("site", "sites")):
            out.print(
                f"{label.capitalize()}: {done.count(kind, 'added')} added, "
                f"{done.count(kind, 'changed')} changed, {done.count(kind, 'same')} unchanged."
            )
        return 0


async def list_handler(args: argparse.Namespace) -> int:
    from bot.audiences import Sites

    async with open_context(args) as ctx:
        groups, sites = await Sites(ctx.store, ctx.config.to_admins(), ctx.clock).all()
        language = ctx.config.to_campaign().default_language
        if args.group is not None:
            code = args.group.strip().lower()
            if code not in {g.code for g in groups}:
                raise InvalidInput(
                    f"There is no group {code!r}. See them with `strikebot sites list`."
                )
            groups = [g for g in groups if g.code == code]
            sites = [s for s in sites if s.group == code]
        if args.json:
            print_json(
                {"groups": [group_json(g) for g in groups], "sites": [site_json(s) for s in sites]}
            )
            return 0
        if not groups:
            out.print(
                "No sites yet. Import them with `strikebot sites import FILE.csv` "
                "(docs/audiences.md describes the file)."
            )
            return 0
        names = {g.code: g.name(language) for g in groups}
        rows = [
            (
                escape(s.code),
                escape(s.name(language)),
                escape(f"{names.get(s.group, s.group)} ({s.group})"),
                escape(s.address),
                "example" if s.example else "",
            )
            for s in sites
        ]
        empty = [g for g in groups if not any(s.group == g.code for s in sites)]
        rows += [
            ("", "[dim]no sites yet[/]", escape(f"{g.name(language)} ({g.code})"), "", "")
            for g in empty
        ]
        out.print(fitted_table(("code", "site", "group", "address", ""), rows, key=1))
        return 0


def group_json(group: SiteGroup) -> dict[str, object]:
    return {"code": group.code, "names": dict(group.names), "example": group.example}


def site_json(site: Site) -> dict[str, object]:
    return {
        "code": site.code,
        "names": dict(site.names),
        "group": site.group,
        "address": site.address,
        "example": site.example,
    }
