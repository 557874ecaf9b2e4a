"""`strikebot briefing`: set or clear a channel's morning briefing, list the schedule,
preview what a channel would get at a given moment, and send one now.

    strikebot briefing set --channel console:local/main --time 07:00 \\
        --timezone America/Los_Angeles --days mon-fri
    strikebot briefing clear --channel 3
    strikebot briefing list
    strikebot briefing preview --channel 3 --at "2019-01-18 07:00" --language es
    strikebot briefing send-now --channel 3

A channel is named by its subscription id or its address `platform:workspace/channel`.
The running bot picks up schedule changes within a minute; `send-now` queues the briefing
for the running bot's dispatcher to deliver.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from rich.markup import escape

from bot.briefings.compose import gather_briefing_inputs, reach_of
from bot.briefings.overview import briefing_audiences
from bot.briefings.queries import BriefingRun, list_runs
from bot.briefings.runs import send_now
from bot.briefings.times import format_days, next_briefing, window_start
from bot.cli import CliContext, add_json_flag, open_context, out, print_json
from bot.cli._shared import (
    MAX_ID,
    actor_from,
    add_actor_flag,
    iso,
    language_for,
    local,
    parse_clock,
    parse_moment,
)
from bot.editorial.parsing import parse_days
from bot.errors import InvalidInput, NotFound
from bot.models import Subscription
from bot.plugins.addresses import example_address, parse_address
from bot.plugins.outbound import OutboundMessage
from bot.store import Tx

CHANNEL_HELP = "subscription id or address platform:workspace/channel (e.g. console:local/main)"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "briefing",
        help="morning briefings: set, clear, list, preview, send-now",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="briefing_action", metavar="ACTION")
    actions.required = True

    p = actions.add_parser("set", help="turn on or change a channel's briefing")
    p.add_argument("--channel", required=True, help=CHANNEL_HELP)
    p.add_argument("--time", required=True, help="local time of day, HH:MM (e.g. 07:00)")
    p.add_argument("--timezone", help="IANA zone (default: the channel's current zone)")
    p.add_argument("--days", help="mon-fri, daily, mon,wed,fri... (default: unchanged)")
    add_actor_flag(p)
    add_json_flag(p)
    p.set_defaults(handler=set_briefing)

    p = actions.add_parser("clear", help="turn a channel's briefing off")
    p.add_argument("--channel", required=True, help=CHANNEL_HELP)
    add_actor_flag(p)
    add_json_flag(p)
    p.set_defaults(handler=clear_briefing)

    p = actions.add_parser("list", help="channels with a briefing, when the next is due")
    add_json_flag(p)
    p.set_defaults(handler=list_briefings)

    p = actions.add_parser("preview", help="show the briefing a channel would get")
    p.add_argument("--channel", help=f"{CHANNEL_HELP} (default: the campaign's language and zone)")
    p.add_argument(
        "--at",
        metavar="TIME",
        help="the moment to render: HH:MM today, 2019-01-18T07:00 in the channel's zone, "
        "or with an offset (default: now)",
    )
    p.add_argument("--language", "--lang", help="render in this language (default: the channel's)")
    add_json_flag(p)
    p.set_defaults(handler=preview)

    p = actions.add_parser(
        "send-now", help="queue a briefing at once (all channels with a briefing if none named)"
    )
    p.add_argument("--channel", help=CHANNEL_HELP)
    add_json_flag(p)
    p.set_defaults(handler=send_now_command)


# ---------------------------------------------------------------------------- handlers


async def set_briefing(args: argparse.Namespace) -> int:
    async with open_context(args) as ctx:
        async with ctx.store.read() as tx:
            sub = await find_channel(tx, args.channel)
        changed = replace(
            sub,
            briefing_time=parse_clock(args.time, option="--time"),
            timezone=(args.timezone or sub.timezone).strip(),
            briefing_days=parse_days(args.days) if args.days else sub.briefing_days,
        )
        saved = await ctx.admin.subscribe(actor_from(args), changed)
        return _report(ctx, saved, args.json)


async def clear_briefing(args: argparse.Namespace) -> int:
    async with open_context(args) as ctx:
        async with ctx.store.read() as tx:
            sub = await find_channel(tx, args.channel)
        saved = await ctx.admin.subscribe(actor_from(args), replace(sub, briefing_time=None))
        return _report(ctx, saved, args.json)


async def list_briefings(args: argparse.Namespace) -> int:
    async with open_context(args) as ctx:
        now = ctx.clock()
        async with ctx.store.read() as tx:
            subs = [s for s in await tx.list_subscriptions() if s.briefing_time is not None]
            runs = await list_runs(tx, limit=None)
        last: dict[int, BriefingRun] = {}
        for run in runs:  # newest first
            last.setdefault(run.subscription_id, run)
        rows = []
        for sub in subs:
            nxt = next_briefing(sub, now)
            latest_run = last.get(sub.id)
            rows.append(
                {
                    **schedule_json(sub, now),
                    "last_run": None
                    if latest_run is None
                    else {
                        "local_date": iso(latest_run.local_date),
                        "outcome": latest_run.outcome,
                        "scheduled_for": iso(latest_run.scheduled_for),
                    },
                    "_next": nxt,
                }
            )
        if args.json:
            print_json([{k: v for k, v in r.items() if k != "_next"} for r in rows])
            return 0
        if not rows:
            out.print("No channel has a briefing. Turn one on with `strikebot briefing set`.")
            return 0
        from rich.table import Table

        table = Table("id", "channel", "time", "days", "zone", "next", "last")
        for r in rows:
            last_run = r["last_run"]
            table.add_row(
                str(r["id"]),
                escape(r["address"]),
                r["briefing_time"],
                r["days"],
                r["timezone"],
                local(r["_next"].at if r["_next"] else None, r["timezone"]),
                "" if last_run is None else f"{last_run['local_date']} {last_run['outcome']}",
            )
        out.print(table)
        return 0


async def preview(args: argparse.Namespace) -> int:
    async with open_context(args) as ctx:
        campaign = ctx.config.to_campaign()
        async with ctx.store.read() as tx:
            if args.channel:
                sub = await find_channel(tx, args.channel)
            else:
                sub = default_channel(ctx)
            at = _moment(args.at, sub, ctx.clock())
            language = language_for(args, campaign) if args.language else sub.language
            inputs = await gather_briefing_inputs(tx, campaign, at)
            since = window_start(sub, at)
            reached = await reach_of(tx, inputs, sub, since, at)
        message = inputs.compose(campaign, sub, at, language, since=since, reached=reached)
        clock = sub.briefing_time or default_channel(ctx).briefing_time
        only = [] if clock is None else await briefing_audiences(ctx.store, campaign, at, at=clock)
        if args.json:
            print_json(
                {
                    "channel": sub.address if sub.id else None,
                    "at": iso(at),
                    "language": message.language,
                    "message": message.to_json(),
                    "audiences": [
                        {
                            "update_id": line.update.id,
                            "audience": line.update.audience.to_json(),
                            "told_in": line.reached,
                            "with_a_briefing": line.scheduled,
                            "in_this_briefing": line.update.id in reached,
                        }
                        for line in only
                    ],
                }
            )
        else:
            out.print(render_text(message), markup=False)
            for line in only:  # what differs per audience
                out.print(line.sentence(message.language, campaign.default_language), markup=False)
        return 0


async def send_now_command(args: argparse.Namespace) -> int:
    async with open_context(args) as ctx:
        campaign = ctx.config.to_campaign()
        async with ctx.store.read() as tx:
            if args.channel:
                subs = [await find_channel(tx, args.channel)]
            else:
                subs = [s for s in await tx.list_subscriptions() if s.briefing_time is not None]
        if not subs:
            raise NotFound(
                "No channel has a briefing to send. Name one with --channel, or turn briefings "
                "on with `strikebot briefing set`."
            )
        now, actor = ctx.clock(), actor_from(args)
        queued = [
            {
                "channel": sub.address,
                "delivery_id": await send_now(ctx.store, campaign, sub, now, actor),
            }
            for sub in subs
        ]
        if args.json:
            print_json(queued)
        else:
            for item in queued:
                out.print(
                    f"Queued a briefing for {escape(item['channel'])} ({item['delivery_id']})."
                )
            out.print("The running bot delivers it (`strikebot run`).")
        return 0


# ---------------------------------------------------------------------------- helpers


async def find_channel(tx: Tx, name: str) -> Subscription:
    """A subscribed channel by id or address."""
    text = name.strip()
    if text.isascii() and text.isdigit():
        sub = await tx.get_subscription(int(text)) if int(text) <= MAX_ID else None
        active = sub is not None and await tx.find_subscription(
            sub.platform, sub.workspace, sub.channel
        )
        if sub is None or not active:
            raise NotFound(
                f"No subscribed channel #{text}. See the ids with `strikebot briefing list` "
                "or `strikebot subscriptions list`."
            )
        return sub
    if ":" not in text:
        raise InvalidInput(
            f"--channel {name!r} is neither a subscription id nor an address; write "
            f"platform:workspace/channel, e.g. {example_address()}."
        )
    address = parse_address(text)
    found = await tx.find_subscription(address.platform, address.workspace, address.channel)
    if found is None:
        raise NotFound(
            f"{text} is not subscribed. Subscribe it first (the subscribe command in that "
            "channel), then set its briefing."
        )
    return found


def default_channel(ctx: CliContext) -> Subscription:
    """What a channel subscribed with the campaign's defaults would be."""
    campaign = ctx.config.to_campaign()
    return Subscription(
        id=0,
        platform="preview",
        workspace="preview",
        channel="default",
        language=campaign.default_language,
        briefing_time=parse_clock(ctx.config.briefings.default_time, option="default_time"),
        timezone=campaign.timezone,
    )


def _moment(value: str | None, sub: Subscription, now: datetime) -> datetime:
    if not value:
        return now
    text = value.strip()
    if ":" in text and "-" not in text and "T" not in text:  # HH:MM today
        at = parse_clock(text, option="--at")
        today = now.astimezone(ZoneInfo(sub.timezone)).date()
        return parse_moment(
            f"{today.isoformat()}T{at.strftime('%H:%M')}", sub.timezone, option="--at"
        )
    return parse_moment(text, sub.timezone, option="--at")


def schedule_json(sub: Subscription, now: datetime) -> dict[str, Any]:
    nxt = next_briefing(sub, now)
    return {
        "id": sub.id,
        "address": sub.address,
        "language": sub.language,
        "briefing_time": sub.briefing_time.strftime("%H:%M") if sub.briefing_time else None,
        "timezone": sub.timezone,
        "days": format_days(sub.briefing_days),
        "next": iso(nxt.at) if nxt else None,
        "next_local_date": iso(nxt.local_date) if nxt else None,
    }


def _report(ctx: CliContext, sub: Subscription, as_json: bool) -> int:
    now = ctx.clock()
    data = schedule_json(sub, now)
    if as_json:
        print_json(data)
        return 0
    if sub.briefing_time is None:
        out.print(f"Briefings are off for {escape(sub.address)}.")
        return 0
    nxt = next_briefing(sub, now)
    out.print(
        f"{escape(sub.address)} gets a briefing at {data['briefing_time']} "
        f"({sub.timezone}), {data['days']}; next: {local(nxt.at if nxt else None, sub.timezone)}. "
        "A running bot picks this up within a minute."
    )
    return 0


def render_text(message: OutboundMessage) -> str:
    """The message as plain text, roughly as a chat shows it."""
    parts = [message.title]
    if message.status_label:
        parts.append(f"[{message.status_label}]")
    parts += ["", message.body]
    for field in message.fields:
        parts += ["", field.name, field.value]
    if message.links:
        parts.append("")
        parts += [f"{link.label}: {link.url}" for link in message.links]
    if message.footer:
        parts += ["", message.footer]
    return "\n".join(parts)
