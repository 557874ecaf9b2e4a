"""`strikebot webhooks ...`: the receivers of events.

    strikebot webhooks add https://hooks.example.org/strike --description "Union website"
    strikebot webhooks list
    strikebot webhooks test 3            # sends a signed webhook.test now and shows the answer
    strikebot webhooks enable 3          # after it was disabled for failing
    strikebot webhooks remove 3

`add` prints the endpoint's signing secret (`whsec_...`) once; keep it with the receiver,
which checks every request's `webhook-signature` with it. The same actions are in the admin
HTTP API under /api/v1/admin/webhooks.
"""

from __future__ import annotations

import argparse
import secrets
import time
from datetime import time as clock_time

from adapters.webhooks._adapter import NAME, body_of
from adapters.webhooks._sending import Sender
from bot.ports import (
    Actor,
    InvalidInput,
    add_json_flag,
    events,
    open_plugin,
    out,
    print_json,
    webhook_summary,
)

CLI_ACTOR = Actor(platform="cli", user_id="cli", display_name="command line")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "webhooks",
        help="signed webhooks: add, list, test, enable, remove the receivers of events",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="webhooks_command", metavar="ACTION")
    actions.required = True

    add = actions.add_parser("add", help="add a receiver; prints its signing secret once")
    add.add_argument("url", help="the receiver's address, https://...")
    add.add_argument("--description", default="", help="what it is, for the list")
    add.add_argument("--language", "--lang", help="language of its briefings (default: first)")
    add.add_argument(
        "--briefing", metavar="HH:MM", help="also send the morning briefing at this time"
    )
    add.add_argument("--timezone", "--tz", help="time zone of --briefing (default: campaign's)")
    add_json_flag(add)
    add.set_defaults(handler=handle_add)

    listing = actions.add_parser("list", help="the receivers and how their deliveries go")
    add_json_flag(listing)
    listing.set_defaults(handler=handle_list)

    for name, what, handler in (
        ("remove", "stop sending to a receiver", handle_remove),
        ("enable", "send again to a receiver that was disabled for failing", handle_enable),
        ("test", "send a signed webhook.test event now and show the answer", handle_test),
    ):
        action = actions.add_parser(name, help=what)
        action.add_argument("target", metavar="ID_OR_URL", help="its number or URL")
        add_json_flag(action)
        action.set_defaults(handler=handler)


def _briefing(value: str | None) -> clock_time | None:
    if value is None:
        return None
    try:
        return clock_time.fromisoformat(value)
    except ValueError:
        raise InvalidInput(
            f"--briefing {value!r} is not a time; write HH:MM, e.g. 07:00."
        ) from None


async def handle_add(args: argparse.Namespace) -> int:
    async with open_plugin(args, NAME) as ctx:
        created = await ctx.webhooks.add(
            CLI_ACTOR,
            args.url,
            description=args.description,
            language=args.language,
            briefing_time=_briefing(args.briefing),
            timezone=args.timezone,
        )
    if args.json:
        print_json({**webhook_summary(created.endpoint), "secret": created.secret})
        return 0
    out.print(f"Added webhook #{created.endpoint.id}: {created.endpoint.url}")
    out.print("Its signing secret (shown this once; give it to the receiver, keep it secret):")
    out.print(created.secret, markup=False)
    return 0


async def handle_list(args: argparse.Namespace) -> int:
    async with open_plugin(args, NAME) as ctx:
        endpoints = await ctx.webhooks.list()
    if args.json:
        print_json([webhook_summary(e) for e in endpoints])
        return 0
    if not endpoints:
        out.print("No webhooks. Add one with `strikebot webhooks add https://...`.")
        return 0
    for endpoint in endpoints:
        state = webhook_summary(endpoint)["state"]
        if state == "disabled":
            state += f": {endpoint.disabled_reason}"
        elif state == "failing" and endpoint.failing_since is not None:
            state += f" since {endpoint.failing_since:%Y-%m-%d %H:%M} UTC: {endpoint.last_error}"
        label = f" ({endpoint.description})" if endpoint.description else ""
        out.print(f"#{endpoint.id} {endpoint.url}{label} · {state}", markup=False)
    return 0


async def handle_remove(args: argparse.Namespace) -> int:
    return await _change(args, "remove", "Removed webhook #{id}: {url}")


async def handle_enable(args: argparse.Namespace) -> int:
    return await _change(
        args,
        "enable",
        "Webhook #{id} is on again. Events that were given up on come back with "
        "`strikebot deliveries retry`.",
    )


async def _change(args: argparse.Namespace, action: str, done: str) -> int:
    async with open_plugin(args, NAME) as ctx:
        webhooks = ctx.webhooks
        target = (await webhooks.find(args.target)).id
        endpoint = await getattr(webhooks, action)(CLI_ACTOR, target)
    shown = webhook_summary(endpoint)
    if args.json:
        print_json(shown)
    else:
        out.print(done.format(**shown), markup=False)
    return 0


async def handle_test(args: argparse.Namespace) -> int:
    """Sign and send one `webhook.test` now, from here, and show what the receiver said."""
    async with open_plugin(args, NAME) as ctx:
        webhooks = ctx.webhooks
        endpoint = await webhooks.find(args.target)
        now = ctx.clock()
        event = events.ping_event(ctx.campaign, now, "Test from strikebot webhooks test")
        message_id = f"test_{secrets.token_hex(8)}"
        sender = Sender(webhooks.policy)
        started = time.perf_counter()
        try:
            outcome = await sender.post(endpoint.url, endpoint.secret, message_id, body_of(event))
        finally:
            await sender.close()
    result = {
        "id": endpoint.id,
        "url": endpoint.url,
        "webhook_id": message_id,
        "ok": outcome.ok,
        "status": outcome.status,
        "detail": outcome.detail,
        "elapsed_ms": int((time.perf_counter() - started) * 1000),
    }
    if args.json:
        print_json(result)
    else:
        verdict = "answered" if outcome.ok else "FAILED"
        out.print(
            f"Webhook #{endpoint.id} {verdict}: {outcome.detail} ({result['elapsed_ms']} ms); "
            f"webhook-id {message_id}",
            markup=False,
        )
    return 0 if outcome.ok else 1
