"""Which channels get what, and when: `subscriptions list|add|remove`.

A channel is written as its address, `platform:workspace/channel` (each platform plugin
gives an example: `console:local/main`; see `bot.plugins.addresses`).

    strikebot subscriptions list
    strikebot subscriptions add console:local/main \\
        --language es --urgency important,urgent --briefing-time 07:00 --days mon-fri \\
        --quiet 22:00-07:00 --label "#huelga on the members server"
    strikebot subscriptions add console:local/roosevelt --sites roosevelt --groups east
    strikebot subscriptions remove 3
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from datetime import time
from typing import Literal

from rich.markup import escape

from bot.audiences import parse_follows
from bot.cli import CliContext, add_json_flag, open_context, out, print_json
from bot.cli._shared import (
    MAX_ID,
    actor_from,
    add_actor_flag,
    fitted_table,
    parse_clock,
    subscription_json,
)
from bot.editorial.parsing import parse_timezone, parse_urgency
from bot.errors import Conflict, InvalidInput, NotFound
from bot.models import ALL_URGENCIES, QuietHours, Subscription, Urgency
from bot.plugins import installed_plugins
from bot.plugins.addresses import example_address, parse_address

_DAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    subs = sub.add_parser(
        "subscriptions",
        aliases=["subs"],
        help="channels that receive updates and briefings (list|add|remove)",
        description="List, add or remove the channels that receive updates and the morning "
        "briefing. A channel is written platform:workspace/channel.",
    )
    actions = subs.add_subparsers(dest="subscriptions_command", metavar="ACTION")
    actions.required = True

    listing = actions.add_parser("list", help="the subscribed channels")
    listing.add_argument("--all", action="store_true", help="include removed channels")
    add_json_flag(listing)
    listing.set_defaults(handler=list_handler)

    add = actions.add_parser(
        "add",
        help="subscribe a channel (or change an existing one's settings)",
        description="Subscribe a channel. For a channel already subscribed, change only the "
        "settings given.",
    )
    add.add_argument("address", help="platform:workspace/channel, e.g. " + example_address())
    add.add_argument("--language", help="en or es (default: the campaign's first language)")
    add.add_argument(
        "--urgency",
        action="append",
        metavar="LIST",
        help="which updates it receives: routine, important, urgent, comma-separated "
        "(default: all)",
    )
    add.add_argument(
        "--briefing-time", metavar="HH:MM", help="morning briefing time, or 'none' (default none)"
    )
    add.add_argument("--timezone", metavar="ZONE", help="IANA zone (default: the campaign's)")
    add.add_argument(
        "--days",
        metavar="DAYS",
        help="briefing days: daily, weekdays, mon-fri, or a list like mon,wed,fri (default daily)",
    )
    add.add_argument(
        "--quiet",
        metavar="HH:MM-HH:MM",
        help="quiet hours: routine and important updates wait until they end (urgent ones "
        "don't); 'none' removes them",
    )
    add.add_argument("--label", help="a name people recognise, e.g. '#strike-news'")
    add.add_argument(
        "--sites",
        metavar="CODES",
        help="follow only these sites (comma-separated codes, `strikebot sites list`): it "
        "gets their news and every update for everyone; 'all' follows everything again",
    )
    add.add_argument(
        "--groups",
        metavar="CODES",
        help="follow only these groups of sites, including sites added to them later",
    )
    add_actor_flag(add)
    add_json_flag(add)
    add.set_defaults(handler=add_handler)

    remove = actions.add_parser(
        "remove",
        help="unsubscribe a channel (its queued messages are cancelled)",
    )
    remove.add_argument("target", metavar="ID|ADDRESS", help="the number from `list`, or address")
    add_actor_flag(remove)
    add_json_flag(remove)
    remove.set_defaults(handler=remove_handler)


async def list_handler(args: argparse.Namespace) -> int:
    async with open_context(args) as ctx:
        async with ctx.store.read() as tx:
            active = {s.id for s in await tx.list_subscriptions()}
            subs = await tx.list_subscriptions(active_only=not args.all)
        # People who signed up by e-mail or text are counted by `subscribers stats`, not
        # listed here one by one.
        people = {name for name, p in installed_plugins().items() if p.contact is not None}
        subs = [s for s in subs if s.platform not in people]
        if args.json:
            print_json([subscription_json(s, active=s.id in active) for s in subs])
            return 0
        if not subs:
            out.print(
                "No channels subscribed yet. Add one with `strikebot subscriptions add "
                f"{example_address()}`, or run /strike subscribe in the channel."
            )
            return 0
        rows = []
        for sub in subs:
            state = "active" if sub.id in active else "[dim]removed[/]"
            if sub.broken_reason:
                state = f"[red]broken:[/] {escape(sub.broken_reason)}"
            quiet = sub.quiet_hours
            rows.append(
                (
                    str(sub.id),
                    escape(sub.address),
                    escape(sub.label),
                    sub.language,
                    ", ".join(u.value for u in Urgency if u in sub.urgencies),
                    escape(_follows(sub)),
                    _briefing(sub),
                    f"{quiet.start:%H:%M}-{quiet.end:%H:%M}" if quiet else "",
                    state,
                )
            )
        columns = (
            "#", "channel", "label", "lang", "receives", "follows", "briefing", "quiet", "state",
        )  # fmt: skip
        table = fitted_table(columns, rows, key=1)
        out.print(table)
        return 0


async def add_handler(args: argparse.Namespace) -> int:
    actor = actor_from(args)
    platform, workspace, channel = _address_parts(args.address)
    urgencies = parse_urgencies(args.urgency) if args.urgency else None
    briefing: time | Literal["keep"] | None = "keep"
    if args.briefing_time is not None:
        briefing = None
        if args.briefing_time.strip().lower() != "none":
            briefing = parse_clock(args.briefing_time, option="--briefing-time")
    days = parse_days(args.days) if args.days is not None else None
    quiet: QuietHours | Literal["keep"] | None = "keep"
    if args.quiet is not None:
        quiet = None if args.quiet.strip().lower() == "none" else parse_quiet(args.quiet)
    if args.label is not None and len(args.label) > 200:
        raise InvalidInput("Keep --label to 200 characters.")
    follows = None
    if args.sites is not None or args.groups is not None:
        follows = parse_follows(args.sites, args.groups)
    async with open_context(args) as ctx:
        campaign = ctx.admin.campaign
        async with ctx.store.read() as tx:
            # Changing a subscribed channel: what is not given stays as it was.
            current = await tx.find_subscription(platform, workspace, channel)
        base = current or Subscription(
            id=0,
            platform=platform,
            workspace=workspace,
            channel=channel,
            language=campaign.default_language,
            timezone=campaign.timezone,
        )
        sub = await ctx.admin.subscribe(
            actor,
            replace(
                base,
                language=(args.language or base.language).strip().lower(),
                urgencies=urgencies if urgencies is not None else base.urgencies,
                briefing_time=base.briefing_time if briefing == "keep" else briefing,
                timezone=parse_timezone((args.timezone or base.timezone).strip()),
                briefing_days=days if days is not None else base.briefing_days,
                quiet_hours=base.quiet_hours if quiet == "keep" else quiet,
                label=base.label if args.label is None else args.label.strip(),
                follows=base.follows if follows is None else follows,
            ),
        )
        if args.json:
            print_json(subscription_json(sub))
            return 0
        out.print(
            f"[bold]Subscribed #{sub.id}[/] {escape(sub.address)} ({sub.language}): receives "
            f"{', '.join(u.value for u in Urgency if u in sub.urgencies)} updates"
            + (f"; briefing {_briefing(sub)}" if sub.briefing_time else "; no briefing")
            + (
                f"; quiet {sub.quiet_hours.start:%H:%M}-{sub.quiet_hours.end:%H:%M}"
                if sub.quiet_hours
                else ""
            )
            + f"; follows {_follows(sub)}."
        )
        out.print("[dim]New updates reach it from now on; earlier ones are not re-sent.[/]")
        return 0


async def remove_handler(args: argparse.Namespace) -> int:
    actor = actor_from(args)
    async with open_context(args) as ctx:
        sub_id = await _resolve(ctx, args.target)
        sub = await ctx.admin.unsubscribe(actor, sub_id)
        if args.json:
            print_json(subscription_json(sub, active=False))
            return 0
        out.print(
            f"[bold]Unsubscribed #{sub.id}[/] {escape(sub.address)}; messages still queued for "
            "it were cancelled."
        )
        return 0


# ---------------------------------------------------------------------------- parsing


def parse_urgencies(values: list[str] | None) -> frozenset[Urgency]:
    if not values:
        return ALL_URGENCIES
    names = [n for v in values for n in v.split(",") if n.strip()]
    if not names:
        raise InvalidInput("Choose at least one urgency: routine, important, urgent.")
    return frozenset(parse_urgency(n) for n in names)


def parse_days(value: str) -> frozenset[int]:
    text = value.strip().lower()
    if text in ("daily", "all", "every day"):
        return frozenset(range(7))
    if text == "weekdays":
        return frozenset(range(5))
    if text == "weekends":
        return frozenset({5, 6})
    days: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        ends = [p.strip()[:3] for p in part.split("-")]
        if len(ends) > 2 or any(e not in _DAYS for e in ends):
            raise InvalidInput(
                f"--days {value!r} is not a list of days; write e.g. mon-fri, mon,wed,fri, "
                "weekdays or daily."
            )
        first, last = _DAYS.index(ends[0]), _DAYS.index(ends[-1])
        if last < first:
            last += 7
        days.update(d % 7 for d in range(first, last + 1))
    return frozenset(days)


def parse_quiet(value: str) -> QuietHours:
    parts = value.split("-")
    if len(parts) != 2:
        raise InvalidInput(
            f"--quiet {value!r} is not a range; write start-end, e.g. --quiet 22:00-07:00."
        )
    start = parse_clock(parts[0], option="--quiet")
    end = parse_clock(parts[1], option="--quiet")
    if start == end:
        raise InvalidInput("--quiet starts and ends at the same time; give two different times.")
    return QuietHours(start, end)


def _follows(sub: Subscription) -> str:
    return "everything" if sub.follows.everyone else sub.follows.describe()


def _briefing(sub: Subscription) -> str:
    if sub.briefing_time is None:
        return ""
    days = sorted(sub.briefing_days)
    if days == list(range(7)):
        when = "daily"
    elif days == list(range(5)):
        when = "weekdays"
    else:
        when = ",".join(_DAYS[d] for d in days)
    return f"{sub.briefing_time:%H:%M} {sub.timezone} {when}"


def _address_parts(text: str) -> tuple[str, str, str]:
    address = parse_address(text)
    return address.platform, address.workspace, address.channel


async def _resolve(ctx: CliContext, target: str) -> int:
    """The id of the ACTIVE subscription named by number or address."""
    async with ctx.store.read() as tx:
        if target.strip().isascii() and target.strip().isdigit():
            sub = await tx.get_subscription(int(target)) if int(target) <= MAX_ID else None
            active = {s.id for s in await tx.list_subscriptions()}
            if sub is not None and sub.id not in active:
                raise Conflict(f"Subscription #{sub.id} ({sub.address}) was already removed.")
        else:
            platform, workspace, channel = _address_parts(target)
            sub = await tx.find_subscription(platform, workspace, channel)
    if sub is None:
        raise NotFound(
            f"No subscription {target.strip()}. See them with `strikebot subscriptions list`."
        )
    return sub.id
