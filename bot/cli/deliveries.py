"""`strikebot deliveries`: what the outbox holds, why dead copies died, and retrying them.

    strikebot deliveries --state dead           # dead copies, with the platform's reason
    strikebot deliveries --update 12 --json     # every copy of update #12
    strikebot deliveries retry 3f9c0a...        # re-queue these dead copies
    strikebot deliveries retry --all-dead       # re-queue every dead copy

Retrying also lifts the pause on the copies' channels (a channel is paused when the
platform refused a send), so fix the bot's access first. Each retry is in the audit log.
"""

from __future__ import annotations

import argparse
from typing import Any

from rich.markup import escape
from rich.table import Table

from bot.cli import add_json_flag, open_context, out, print_json
from bot.cli._shared import MAX_ID, actor_from, add_actor_flag, iso, local, shorten, update_number
from bot.errors import InvalidInput
from bot.models import Delivery, DeliveryState, Subscription
from bot.store import outbox_queries as q

STATE_STYLES = {
    DeliveryState.PENDING: "cyan",
    DeliveryState.SENT: "green",
    DeliveryState.DEAD: "bold red",
    DeliveryState.CANCELLED: "dim",
}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "deliveries",
        help="list deliveries (dead ones with their reasons); `deliveries retry` re-queues",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--state",
        choices=[str(s) for s in DeliveryState],
        help="only deliveries in this state",
    )
    parser.add_argument(
        "--update", type=update_number, metavar="N", help="only copies of update #N"
    )
    parser.add_argument(
        "--limit", type=int, default=200, metavar="N", help="show at most N (default 200)"
    )
    add_json_flag(parser)
    parser.set_defaults(handler=list_handler)

    actions = parser.add_subparsers(dest="deliveries_action", metavar="ACTION")
    retry = actions.add_parser(
        "retry",
        help="re-queue dead deliveries and lift the pause on their channels",
        description="Re-queue dead deliveries (by id, or --all-dead). Their channels are no "
        "longer paused; `strikebot run` sends them within seconds.",
    )
    retry.add_argument("ids", nargs="*", metavar="ID", help="delivery ids, as listed")
    retry.add_argument("--all-dead", action="store_true", help="every dead delivery")
    add_actor_flag(retry)
    add_json_flag(retry)
    retry.set_defaults(handler=retry_handler)


async def list_handler(args: argparse.Namespace) -> int:
    if not 1 <= args.limit <= MAX_ID:
        raise InvalidInput(
            f"--limit {args.limit} is out of range; give a number from 1 to {MAX_ID}."
        )
    state = DeliveryState(args.state) if args.state else None
    async with open_context(args) as ctx:
        async with ctx.store.read() as tx:
            rows = await tx.list_deliveries(state=state, update_id=args.update, limit=args.limit)
            subs = await q.subscriptions_by_id(
                tx, {d.subscription_id for d in rows}, active_only=False
            )
        if args.json:
            print_json([delivery_json(d, subs.get(d.subscription_id)) for d in rows])
            return 0
        zone = ctx.config.campaign.timezone
        if not rows:
            what = f" {state}" if state else ""
            about = f" for update #{args.update}" if args.update is not None else ""
            out.print(f"No{what} deliveries{about}.")
            return 0
        table = Table(title="Deliveries", show_lines=False)
        table.add_column("Id", no_wrap=True)
        for column in ("Update", "Action", "Channel", "State", "Tries", "When", "Reason"):
            table.add_column(column, overflow="fold")
        for d in rows:
            when = local(d.sent_at if d.state is DeliveryState.SENT else d.not_before, zone)
            table.add_row(
                d.id,
                "" if d.update_id is None else f"#{d.update_id}",
                str(d.action),
                escape(_address(d, subs)),
                f"[{STATE_STYLES[d.state]}]{d.state}[/]",
                str(d.attempts),
                when,
                escape(shorten(d.last_error or "", 120)),
            )
        out.print(table)
        if len(rows) == args.limit:
            out.print(f"Showing the first {args.limit}; narrow with --state / --update or --limit.")
        if any(d.state is DeliveryState.DEAD for d in rows):
            out.print(
                "Fix the cause (usually the bot's access to the channel), then "
                "`strikebot deliveries retry ID ...` or `--all-dead`."
            )
        return 0


async def retry_handler(args: argparse.Namespace) -> int:
    actor = actor_from(args)
    if not args.ids and not args.all_dead:
        raise InvalidInput(
            "Name the deliveries to retry (ids from `strikebot deliveries --state dead`), "
            "or pass --all-dead."
        )
    if args.ids and args.all_dead:
        raise InvalidInput("Give delivery ids or --all-dead, not both.")
    async with open_context(args) as ctx:
        done = await ctx.admin.retry(actor, list(args.ids) if args.ids else None)
    requeued, repaired = done.requeued, done.resumed
    if args.json:
        print_json(
            {
                "requeued": [d.id for d in requeued],
                "resumed_subscriptions": [s.id for s in repaired],
            }
        )
        return 0
    if not requeued:
        out.print("No dead deliveries to retry.")
        return 0
    out.print(
        f"Re-queued {len(requeued)} dead deliver{'y' if len(requeued) == 1 else 'ies'}"
        + (f"; resumed {', '.join(escape(s.address) for s in repaired)}" if repaired else "")
        + ". `strikebot run` sends them within seconds."
    )
    return 0


def _address(delivery: Delivery, subs: dict[int, Subscription]) -> str:
    sub = subs.get(delivery.subscription_id)
    return sub.address if sub is not None else f"subscription #{delivery.subscription_id}"


def delivery_json(delivery: Delivery, sub: Subscription | None) -> dict[str, Any]:
    return {
        "id": delivery.id,
        "update": delivery.update_id,
        "action": str(delivery.action),
        "state": str(delivery.state),
        "subscription": delivery.subscription_id,
        "channel": sub.address if sub is not None else None,
        "platform": str(delivery.platform),
        "attempts": delivery.attempts,
        "not_before": iso(delivery.not_before),
        "sent_at": iso(delivery.sent_at),
        "platform_message_id": delivery.platform_message_id,
        "reason": delivery.last_error,
        "created_at": iso(delivery.created_at),
    }
