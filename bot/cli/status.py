"""Where things stand: `status` (the campaign at a glance) and `timeline` (recent updates).

strikebot status
strikebot timeline -n 5 --language es
strikebot timeline --all          # also scheduled, pending approval
"""

from __future__ import annotations

import argparse
from collections import Counter
from datetime import date
from zoneinfo import ZoneInfo

from rich.markup import escape

from bot import i18n
from bot.cli import add_json_flag, open_context, out, print_json
from bot.cli._shared import (
    STATE_STYLES,
    add_language_flag,
    fitted_table,
    iso,
    language_for,
    local,
    shorten,
    update_json,
)
from bot.errors import InvalidInput
from bot.models import Campaign, DemandStatus, Update, UpdateState


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    status = sub.add_parser(
        "status",
        help="the campaign at a glance: status, day of the strike, next step, what is pending",
        description="Show where the dispute stands: the current status and day of the strike, "
        "the next step, updates waiting for approval or scheduled, and delivery counts.",
    )
    add_language_flag(status)
    add_json_flag(status)
    status.set_defaults(handler=status_handler)

    timeline = sub.add_parser(
        "timeline",
        help="recent updates, newest first",
        description="List recent updates, newest first, with their numbers (for edit, retract "
        "and show). Retracted updates stay listed, marked as retracted.",
    )
    timeline.add_argument(
        "-n", "--limit", type=int, default=10, metavar="N", help="how many (default 10)"
    )
    timeline.add_argument(
        "--all",
        action="store_true",
        help="also list updates not yet public (scheduled, waiting for approval)",
    )
    add_language_flag(timeline)
    add_json_flag(timeline)
    timeline.set_defaults(handler=timeline_handler)


async def status_handler(args: argparse.Namespace) -> int:
    async with open_context(args, platforms=False) as ctx:
        campaign = ctx.config.to_campaign()
        language = language_for(args, campaign)
        now = ctx.clock()
        async with ctx.store.read() as tx:
            latest = await tx.latest_update(now)
            pending = await tx.pending_approval(now)
            scheduled = await tx.scheduled(now)
            demands = await tx.list_demands(with_history=False)
            subscriptions = await tx.count_subscriptions()
            deliveries = await tx.delivery_counts()
        day = _strike_day(campaign, latest, now.astimezone(ZoneInfo(campaign.timezone)).date())
        demand_counts = Counter(str(d.status) for d in demands)
        delivery_states: Counter[str] = Counter()
        for (_platform, state), n in deliveries.items():
            delivery_states[state] += n
        if args.json:
            text = latest.text(language) if latest else None
            print_json(
                {
                    "campaign": {
                        "slug": campaign.slug,
                        "union": campaign.union,
                        "employer": campaign.employer,
                        "timezone": campaign.timezone,
                        "languages": list(campaign.languages),
                        "public_url": campaign.public_url,
                        "require_approval": campaign.require_approval,
                        "start_date": iso(campaign.start_date),
                        "strike_start": iso(campaign.strike_start),
                    },
                    "status": str(latest.status) if latest else None,
                    "status_label": i18n.status_label(latest.status, language) if latest else None,
                    "day_of_strike": day,
                    "latest_update": update_json(latest, campaign) if latest else None,
                    "next_step": {
                        "text": text.next_step if text else "",
                        "at": iso(latest.next_step_at) if latest else None,
                    },
                    "pending_approval": [update_json(u, campaign) for u in pending],
                    "scheduled": [update_json(u, campaign) for u in scheduled],
                    "demands": dict(sorted(demand_counts.items())),
                    "subscriptions": subscriptions,
                    "deliveries": dict(sorted(delivery_states.items())),
                }
            )
            return 0
        _print_status(
            campaign,
            language,
            latest,
            day,
            pending,
            scheduled,
            demand_counts,
            subscriptions,
            delivery_states,
        )
        return 0


def _strike_day(campaign: Campaign, latest: Update | None, today: date) -> int | None:
    if campaign.strike_start is None or latest is None or not latest.status.on_strike:
        return None
    day = i18n.day_of_strike(campaign.strike_start, today)
    return day if day >= 1 else None


def _print_status(
    campaign: Campaign,
    language: str,
    latest: Update | None,
    day: int | None,
    pending: list[Update],
    scheduled: list[Update],
    demand_counts: Counter[str],
    subscriptions: int,
    delivery_states: Counter[str],
) -> None:
    zone = campaign.timezone
    out.print(f"[bold]{escape(campaign.union)}[/] vs {escape(campaign.employer)}")
    if latest is None:
        out.print("No updates yet. Post the first with `strikebot post --status bargaining ...`.")
    else:
        label = i18n.status_label(latest.status, language)
        day_text = f" · day {day} of the strike" if day else ""
        out.print(f"Status: [bold]{escape(label)}[/]{day_text}")
        text = latest.text(language)
        out.print(
            f"Latest: #{latest.id} {escape(text.headline)} "
            f"[dim]({local(latest.published_at, zone)})[/]"
        )
        if text.next_step or latest.next_step_at:
            when = ""
            if latest.next_step_at:
                moment = latest.next_step_at.astimezone(ZoneInfo(zone))
                when = f" — {i18n.format_datetime(moment, language)}"
            out.print(f"Next step: {escape(text.next_step)}{when}")
    if demand_counts:
        parts = [
            f"{n} {i18n.demand_status_label(DemandStatus(s), language).lower()}"
            for s, n in sorted(demand_counts.items())
        ]
        out.print(f"Demands: {sum(demand_counts.values())} ({', '.join(parts)})")
    for update in pending:
        out.print(
            f"[yellow]Waiting for approval:[/] #{update.id} "
            f"{escape(update.text(language).headline)} — `strikebot approve {update.id}`"
        )
    for update in scheduled:
        out.print(
            f"[cyan]Scheduled:[/] #{update.id} {escape(update.text(language).headline)} "
            f"at {local(update.published_at, zone)}"
        )
    deliveries = ", ".join(f"{n} {state}" for state, n in sorted(delivery_states.items()))
    out.print(f"Channels: {subscriptions} subscribed · deliveries: {deliveries or 'none yet'}")
    out.print(f"Status page: {campaign.public_url}")


async def timeline_handler(args: argparse.Namespace) -> int:
    if args.limit < 1 or args.limit > 1000:
        raise InvalidInput(f"-n {args.limit} is out of range; give a number from 1 to 1000.")
    async with open_context(args, platforms=False) as ctx:
        campaign = ctx.config.to_campaign()
        language = language_for(args, campaign)
        now = ctx.clock()
        async with ctx.store.read() as tx:
            listed = await tx.list_updates(now, limit=args.limit, visible_only=not args.all)
            # With their revision history (the list query leaves it out).
            updates = [u for u in [await tx.get_update(x.id, now) for x in listed] if u]
        if args.json:
            print_json([update_json(u, campaign) for u in updates])
            return 0
        if not updates:
            out.print("No updates yet.")
            return 0
        rows = []
        for update in updates:
            notes = []
            if update.state is not UpdateState.PUBLISHED:
                style = STATE_STYLES[update.state]
                notes.append(f"[{style}]{str(update.state).replace('_', ' ')}[/]")
            if update.revision > 1:
                notes.append(f"edited (rev {update.revision})")
            if update.retraction_reason:
                notes.append(escape(shorten(update.retraction_reason, 40)))
            headline = escape(update.text(language).headline)
            if update.retracted:
                headline = f"[strike]{headline}[/]"
            rows.append(
                (
                    str(update.id),
                    local(update.effective_at, campaign.timezone),
                    i18n.status_label(update.status, language),
                    i18n.urgency_label(update.urgency, language),
                    headline,
                    "; ".join(notes),
                )
            )
        columns = ("#", "when", "status", "urgency", "headline", "notes")
        table = fitted_table(columns, rows)
        out.print(table)
        return 0
