"""The demands tracker: `demands` (all of them), `demand show KEY`, `demand set KEY`.

    strikebot demands
    strikebot demand show nurses
    strikebot demand set pay --status offer_on_table \\
        --offer "6% over two years" --offer-es "6% en dos años" \\
        --source "District proposal at the table, Jan 11"
"""

from __future__ import annotations

import argparse

from rich.markup import escape
from rich.table import Table

from bot import i18n
from bot.cli import CliContext, add_json_flag, open_context, out, print_json
from bot.cli._shared import (
    actor_from,
    add_actor_flag,
    add_language_flag,
    demand_json,
    language_for,
    local,
    shorten,
)
from bot.errors import InvalidInput, NotFound
from bot.models import Demand, DemandStatus
from bot.parsing import parse_demand_status, parse_language


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    demands = sub.add_parser(
        "demands",
        help="what the union is asking for, and the employer's current offer",
        description="List every demand with its status, the union's position and the "
        "employer's current offer.",
    )
    add_language_flag(demands)
    add_json_flag(demands)
    demands.set_defaults(handler=demands_handler)

    demand = sub.add_parser(
        "demand",
        help="show one demand, or record a new offer or status (demand show|set)",
        description="Show one demand with its history, or record a new employer offer and/or "
        "a status change, with its source.",
    )
    actions = demand.add_subparsers(dest="demand_command", metavar="ACTION")
    actions.required = True

    show = actions.add_parser("show", help="one demand, its facts and its dated history")
    show.add_argument("key", help="the demand's key, e.g. pay (see `strikebot demands`)")
    add_language_flag(show)
    add_json_flag(show)
    show.set_defaults(handler=show_handler)

    record = actions.add_parser(
        "set",
        help="record a new employer offer and/or status, with its source",
        description="Record a new offer and/or status for a demand. The change is kept in "
        "the demand's dated history with its source, and audited.",
    )
    record.add_argument("key", help="the demand's key, e.g. pay (see `strikebot demands`)")
    record.add_argument(
        "--status",
        help="new status: " + ", ".join(s.value for s in DemandStatus),
    )
    record.add_argument("--offer", help="the employer's offer, in the campaign's first language")
    record.add_argument(
        "--offer-in",
        nargs=2,
        action="append",
        metavar=("LANG", "TEXT"),
        help="the offer in another language (or --offer-LANG TEXT: --offer-es '6%% en dos años')",
    )
    record.add_argument(
        "--source",
        required=True,
        help="where this comes from, e.g. 'District proposal at the table, Jan 11'",
    )
    record.add_argument("--note", default="", help="a note kept with the history entry")
    add_actor_flag(record)
    add_json_flag(record)
    record.set_defaults(handler=set_handler)


async def demands_handler(args: argparse.Namespace) -> int:
    async with open_context(args) as ctx:
        language = language_for(args, ctx.admin.campaign)
        async with ctx.store.read() as tx:
            demands = await tx.list_demands()
        if args.json:
            print_json([demand_json(d) for d in demands])
            return 0
        if not demands:
            out.print("No demands yet. Add them under [[demands]] in the campaign file.")
            return 0
        table = Table()
        table.add_column("key", no_wrap=True)
        table.add_column("demand")
        table.add_column("status")
        table.add_column("union asks")
        table.add_column("employer offers")
        for demand in demands:
            text = demand.text(language)
            table.add_row(
                demand.key,
                escape(text.title),
                i18n.demand_status_label(demand.status, language),
                escape(shorten(text.union_position, 90)),
                escape(shorten(text.employer_offer, 90)),
            )
        out.print(table)
        return 0


async def show_handler(args: argparse.Namespace) -> int:
    async with open_context(args) as ctx:
        language = language_for(args, ctx.admin.campaign)
        demand = await _get(ctx, args.key)
        if args.json:
            print_json(demand_json(demand))
            return 0
        _print_demand(ctx, demand, language)
        return 0


async def set_handler(args: argparse.Namespace) -> int:
    actor = actor_from(args)
    status = parse_demand_status(args.status) if args.status is not None else None
    async with open_context(args) as ctx:
        campaign = ctx.admin.campaign
        offer: dict[str, str] = {}
        if args.offer is not None:
            offer[campaign.default_language] = args.offer
        for code, text in args.offer_in or []:
            language = parse_language(code, campaign.languages)
            if language in offer:
                raise InvalidInput(
                    f"The offer in {language!r} is given twice; give it once (--offer is "
                    f"{campaign.default_language!r})."
                )
            offer[language] = text
        for language, given in offer.items():
            if not given.strip():
                raise InvalidInput(
                    f"The offer ({language}) is empty; write what the employer offers, or "
                    "leave the option out."
                )
        demand = await ctx.admin.record_demand(
            actor, args.key, status=status, offer=offer or None, source=args.source, note=args.note
        )
        if args.json:
            print_json(demand_json(demand))
            return 0
        language = campaign.default_language
        text = demand.text(language)
        out.print(
            f"[bold]Recorded for {escape(text.title)}[/] ({demand.key}): "
            f"{i18n.demand_status_label(demand.status, language)}"
        )
        if offer:
            out.print(f"Employer's offer now: {escape(text.employer_offer)}")
        out.print(f"Source: {escape(args.source.strip())}")
        return 0


async def _get(ctx: CliContext, key: str) -> Demand:
    async with ctx.store.read() as tx:
        demand = await tx.get_demand(key)
        known = await tx.demand_keys()
    if demand is None:
        raise NotFound(f"No demand with key {key!r}. Known keys: {', '.join(known)}.")
    return demand


def _print_demand(ctx: CliContext, demand: Demand, language: str) -> None:
    zone = ctx.admin.campaign.timezone
    text = demand.text(language)
    out.print(
        f"[bold]{escape(text.title)}[/] ({demand.key}) · "
        f"{i18n.demand_status_label(demand.status, language)} · "
        f"updated {local(demand.updated_at, zone)}"
    )
    if text.summary:
        out.print(escape(text.summary))
    out.print(f"[bold]Union:[/] {escape(text.union_position or '—')}")
    out.print(f"[bold]Employer:[/] {escape(text.employer_offer or '—')}")
    for fact in text.facts:
        out.print(f"  • {escape(fact)}")
    if demand.history:
        table = Table(title="History", title_justify="left")
        table.add_column("when", no_wrap=True)
        table.add_column("status")
        table.add_column("offer")
        table.add_column("source")
        table.add_column("by")
        for event in demand.history:
            table.add_row(
                local(event.at, zone),
                i18n.demand_status_label(event.status, language),
                escape(event.offer.get(language) or next(iter(event.offer.values()), "")),
                escape(event.source + (f" ({event.note})" if event.note else "")),
                escape(event.recorded_by),
            )
        out.print(table)
