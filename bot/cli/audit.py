"""The audit log: who did what, when, with the before and after of each change.

strikebot audit -n 20
strikebot audit --target update:4 --json
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping

from rich.markup import escape

from bot.cli import add_json_flag, open_context, out, print_json
from bot.cli._shared import audit_json, fitted_table, local, shorten
from bot.errors import InvalidInput
from bot.models import AuditEntry


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    audit = sub.add_parser(
        "audit",
        help="who did what and when (every admin action, newest first)",
        description="Show the audit log, newest first. Every admin action is recorded with "
        "who acted, when, and the state before and after; --json prints them in full.",
    )
    audit.add_argument(
        "-n", "--limit", type=int, default=20, metavar="N", help="how many (default 20)"
    )
    audit.add_argument(
        "--target", help="only entries about one thing, e.g. update:4, demand:pay, subscription:2"
    )
    add_json_flag(audit)
    audit.set_defaults(handler=audit_handler)


async def audit_handler(args: argparse.Namespace) -> int:
    if args.limit < 1 or args.limit > 10_000:
        raise InvalidInput(f"-n {args.limit} is out of range; give a number from 1 to 10000.")
    async with open_context(args) as ctx:
        async with ctx.store.read() as tx:
            entries = await tx.list_audit(limit=args.limit, target=args.target)
        if args.json:
            print_json([audit_json(e) for e in entries])
            return 0
        if not entries:
            out.print("No audit entries" + (f" for {args.target}." if args.target else " yet."))
            return 0
        rows = [
            (
                str(entry.id),
                local(entry.at, ctx.admin.campaign.timezone),
                escape(entry.actor),
                entry.action,
                escape(entry.target),
                escape(describe(entry)),
            )
            for entry in entries
        ]
        # Fits the terminal: wrapped, or a list when too narrow; "who" is never cut off.
        out.print(fitted_table(("#", "when", "who", "did", "to", "change"), rows, key=0))
        return 0


def describe(entry: AuditEntry) -> str:
    """A one-line summary of what changed: the fields that differ, and the reason if any."""
    before: Mapping[str, object] = entry.before or {}
    after: Mapping[str, object] = entry.after or {}
    parts = []
    for key in after:
        if key in ("reason", "source", "retraction_reason"):
            continue
        if key in before and before[key] != after[key]:
            old, new = before[key], after[key]
            if isinstance(old, str | int | None) and isinstance(new, str | int | None):
                parts.append(f"{key}: {old} → {new}")
            else:
                parts.append(f"{key} changed")
    reason = after.get("reason") or (
        after.get("retraction_reason") if before.get("retraction_reason") is None else None
    )
    if reason:
        parts.append(f"reason: {reason}")
    if after.get("source"):
        parts.append(f"source: {after['source']}")
    if not before and after and not parts:
        parts.append("created")
    if before and not after:
        parts.append("removed")
    return shorten("; ".join(parts), 100)
