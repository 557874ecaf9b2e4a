"""The demands tracker: `demands` (all of them), `demand show KEY`, and the changes:
`demand set KEY` (an offer and/or status, with its date and source), `demand edit KEY`
(re-word any field, per language, with a reason), `demand add KEY`, `demand retire KEY`.

    strikebot demands
    strikebot demand show nurses
    strikebot demand set pay --status offer_on_table \\
        --offer "6% over two years" --offer-es "6% en dos años" \\
        --source "District proposal at the table, Jan 11" --date 2019-01-11
    strikebot demand edit nurses --language es --title "Una enfermera en cada escuela" \\
        --reason "clearer wording"
    strikebot demand add staffing --title "Safe staffing" --reason "new ask"
    strikebot demand retire testing --reason "settled before the strike" --announce

Nothing reaches members unless `--announce` is given: then an update about the change is
posted to every subscribed channel.
"""

from __future__ import annotations

import argparse
from datetime import datetime, timedelta
from typing import Any

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
    parse_moment,
    shorten,
)
from bot.editorial.admin import DemandResult
from bot.editorial.demands import DemandWording
from bot.editorial.parsing import parse_demand_status, parse_language
from bot.errors import InvalidInput, NotFound
from bot.models import Demand, DemandChange, DemandEvent, DemandStatus


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
    record.add_argument(
        "--date",
        "--at",
        dest="at",
        metavar="WHEN",
        help="when the offer was made (earlier than now is fine, never later): "
        "'2019-01-11', '2019-01-11 16:00' (campaign time) or with an offset; default now",
    )
    _announce_flag(record)
    add_actor_flag(record)
    add_json_flag(record)
    record.set_defaults(handler=set_handler)

    edit = actions.add_parser(
        "edit",
        help="re-word any field of a demand, in one language, with a reason",
        description="Change a demand's title, summary, the union's position, the employer's "
        "offer or its facts, in one language (--language; default the campaign's first), "
        "and/or its status. The earlier wording is kept in the demand's history with the "
        "reason, and audited.",
    )
    edit.add_argument("key", help="the demand's key, e.g. pay (see `strikebot demands`)")
    _wording_flags(edit)
    edit.add_argument("--status", help="new status: " + ", ".join(s.value for s in DemandStatus))
    edit.add_argument("--reason", required=True, help="why, kept in the history")
    _announce_flag(edit)
    add_actor_flag(edit)
    add_json_flag(edit)
    edit.set_defaults(handler=edit_handler)

    add = actions.add_parser(
        "add",
        help="add a demand at the end of the list",
        description="Add a demand. It needs a key and a title in the campaign's first "
        "language; give other languages afterwards with `demand edit --language`.",
    )
    add.add_argument("key", help="a short key: lower-case letters, digits, '-' or '_'")
    _wording_flags(add)
    add.add_argument(
        "--status",
        default="open",
        help="its status (default open): " + ", ".join(s.value for s in DemandStatus),
    )
    add.add_argument("--reason", default="", help="why it was added, kept in the history")
    _announce_flag(add)
    add_actor_flag(add)
    add_json_flag(add)
    add.set_defaults(handler=add_handler)

    retire = actions.add_parser(
        "retire",
        help="take a demand off the list (it keeps its history)",
        description="Retire a demand: it leaves the lists, the page and the briefings, and "
        "stays readable with `demand show`, with its history.",
    )
    retire.add_argument("key", help="the demand's key")
    retire.add_argument("--reason", required=True, help="why, kept in the history")
    _announce_flag(retire)
    add_actor_flag(retire)
    add_json_flag(retire)
    retire.set_defaults(handler=retire_handler)


def _announce_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--announce",
        action="store_true",
        help="also post an update about this change to every subscribed channel "
        "(default: recorded and shown, but nobody is messaged)",
    )


def _wording_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--language",
        "--lang",
        metavar="LANG",
        help="the language of the wording given (default: the campaign's first)",
    )
    parser.add_argument("--title", help="the demand's title")
    parser.add_argument("--summary", help="one or two sentences on what it is about")
    parser.add_argument("--union", dest="union_position", help="what the union asks")
    parser.add_argument(
        "--employer-offer", dest="employer_offer", help="the employer's current offer"
    )
    parser.add_argument(
        "--fact",
        dest="facts",
        action="append",
        metavar="TEXT",
        help="a fact (repeat for several; replaces the list). --fact '' clears it",
    )


async def demands_handler(args: argparse.Namespace) -> int:
    async with open_context(args) as ctx:
        language = language_for(args, ctx.admin.campaign)
        async with ctx.store.read() as tx:
            demands = await tx.list_demands()
        if args.json:
            print_json([demand_json(d) for d in demands])
            return 0
        if not demands:
            out.print("No demands yet. Add one with `strikebot demand add KEY --title ...`.")
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
        at = _date(args.at, ctx) if args.at else None
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
        result = await ctx.admin.record_demand(
            actor,
            args.key,
            status=status,
            offer=offer or None,
            source=args.source,
            note=args.note,
            at=at,
            announce=args.announce,
        )
        demand = result.demand
        if args.json:
            print_json(_result_json(result))
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
        _print_announced(result)
        return 0


async def edit_handler(args: argparse.Namespace) -> int:
    actor = actor_from(args)
    status = parse_demand_status(args.status) if args.status is not None else None
    async with open_context(args) as ctx:
        language = _wording_language(args, ctx)
        result = await ctx.admin.edit_demand(
            actor,
            args.key,
            {language: _wording(args)},
            reason=args.reason,
            status=status,
            announce=args.announce,
        )
        if args.json:
            print_json(_result_json(result))
            return 0
        event = result.demand.history[-1]
        changed = ", ".join(f"{field} ({lang})" for lang, f in event.changes.items() for field in f)
        out.print(
            f"[bold]Edited {escape(result.demand.key)}[/]: {escape(changed or 'status')}. "
            f"The earlier wording is in its history (`strikebot demand show {result.demand.key}`)."
        )
        _print_announced(result)
        return 0


async def add_handler(args: argparse.Namespace) -> int:
    actor = actor_from(args)
    status = parse_demand_status(args.status)
    async with open_context(args) as ctx:
        language = _wording_language(args, ctx)
        result = await ctx.admin.add_demand(
            actor,
            args.key,
            {language: _wording(args)},
            status=status,
            reason=args.reason,
            announce=args.announce,
        )
        if args.json:
            print_json(_result_json(result))
            return 0
        text = result.demand.text(language)
        out.print(
            f"[bold]Added {escape(text.title)}[/] ({result.demand.key}), number "
            f"{result.demand.position} on the list."
        )
        _print_announced(result)
        return 0


async def retire_handler(args: argparse.Namespace) -> int:
    actor = actor_from(args)
    async with open_context(args) as ctx:
        result = await ctx.admin.retire_demand(
            actor, args.key, reason=args.reason, announce=args.announce
        )
        if args.json:
            print_json(_result_json(result))
            return 0
        out.print(
            f"[bold]Retired {escape(result.demand.key)}[/]: it is off the list; "
            f"`strikebot demand show {result.demand.key}` still shows it with its history."
        )
        _print_announced(result)
        return 0


def _wording_language(args: argparse.Namespace, ctx: CliContext) -> str:
    campaign = ctx.admin.campaign
    language = (args.language or campaign.default_language).strip()
    if language not in campaign.languages:
        raise InvalidInput(
            f"--language {language!r} is not one of this campaign's languages "
            f"({', '.join(campaign.languages)})."
        )
    return language


def _wording(args: argparse.Namespace) -> DemandWording:
    facts = None
    if args.facts is not None:
        facts = [f for f in args.facts if f.strip()]
    return DemandWording(
        title=args.title,
        summary=args.summary,
        union_position=args.union_position,
        employer_offer=args.employer_offer,
        facts=facts,
    )


def _date(text: str, ctx: CliContext) -> datetime:
    zone = ctx.admin.campaign.timezone
    value = text.strip()
    if len(value) == 10:  # a date alone: that day at noon, campaign time
        value += "T12:00"
    return parse_moment(value, zone, option="--date")


def _result_json(result: DemandResult) -> dict[str, Any]:
    return demand_json(result.demand) | {
        "announced_update": None if result.announced is None else result.announced.id
    }


def _print_announced(result: DemandResult) -> None:
    if result.announced is None:
        out.print("Nobody was messaged (add --announce to post an update about it).")
    else:
        out.print(
            f"Announced as update #{result.announced.id}, on its way to every subscribed channel."
        )


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
    retired = f" · [bold]retired[/] {local(demand.retired_at, zone)}" if demand.retired_at else ""
    out.print(
        f"[bold]{escape(text.title)}[/] ({demand.key}) · "
        f"{i18n.demand_status_label(demand.status, language)} · "
        f"updated {local(demand.updated_at, zone)}{retired}"
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
        table.add_column("what")
        table.add_column("status")
        table.add_column("change")
        table.add_column("source / reason")
        table.add_column("by")
        for event in demand.history:
            when = local(event.at, zone)
            if event.recorded_at is not None and event.recorded_at - event.at > _BACKDATED:
                when += f" (recorded {local(event.recorded_at, zone)})"
            table.add_row(
                when,
                str(event.kind),
                i18n.demand_status_label(event.status, language),
                escape(_change_text(event, language)),
                escape(event.source + (f" ({event.note})" if event.note else "")),
                escape(event.recorded_by),
            )
        out.print(table)


_BACKDATED = timedelta(minutes=1)


def _change_text(event: DemandEvent, language: str) -> str:
    if event.kind is DemandChange.OFFER:
        return event.offer.get(language) or next(iter(event.offer.values()), "")
    lines = []
    for lang, fields in event.changes.items():
        for name, (before, after) in fields.items():
            lines.append(f"{name} ({lang}): {shorten(before, 60) or '—'} → {shorten(after, 60)}")
    return "\n".join(lines)
