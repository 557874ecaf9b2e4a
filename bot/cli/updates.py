"""Updates from the command line: `post`, `edit`, `retract`, `approve` and `show`.

    strikebot post --status strike_on --urgency urgent \\
        --headline "The strike is on" --es-headline "Comienza la huelga" \\
        (any language: --text LANG headline|body|body-file|next-step TEXT, or --LANG-headline)
        --next-step "Picket lines from 7:00 AM" --next-step-at "2019-01-14 07:00"
    strikebot edit 4 --body "Corrected time: 7:30 AM" --reason "wrong start time" --correction
    strikebot retract 4 --reason "posted to the wrong campaign" \
        --es-reason "publicado en la campaña equivocada"   (or --reason-in es TEXT)
    strikebot approve 5 --as alex
    strikebot show 4
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from rich.markup import escape
from rich.table import Table

from bot import i18n
from bot.cli import CliContext, add_json_flag, open_context, out, print_json
from bot.cli._shared import (
    STATE_STYLES,
    actor_from,
    add_actor_flag,
    local,
    parse_moment,
    read_text_file,
    state_label,
    update_json,
    update_number,
)
from bot.cli.progress import any_dead, settle, summary_json, wait_for_deliveries
from bot.editorial.desk import Action, Done, Problems, Proposal
from bot.editorial.parsing import parse_language, parse_timezone
from bot.editorial.translations import StaleText, update_target
from bot.errors import InvalidInput, NotFound, StrikebotError
from bot.messages.compose import local_zone, update_url
from bot.models import Actor, Campaign, Status, Update, UpdateState, Urgency


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    _register_post(sub)
    _register_edit(sub)
    retract = sub.add_parser(
        "retract",
        help="retract an update: it stays visible as retracted, with your reason",
        description="Retract an update. It stays on the timeline marked as retracted, with the "
        "reason, everywhere it was posted; copies not yet sent are cancelled.",
    )
    retract.add_argument("update_id", type=update_number, metavar="ID", help="the update's number")
    retract.add_argument("--reason", required=True, help="why (members will see it)")
    _reason_flag(retract)
    add_actor_flag(retract)
    add_json_flag(retract)
    retract.set_defaults(handler=retract_handler)

    approve = sub.add_parser(
        "approve",
        help="approve an update waiting for a second admin",
        description="Approve an update another admin wrote (when [campaign] require_approval "
        "is true). It is then published, or scheduled for its embargo time.",
    )
    approve.add_argument("update_id", type=update_number, metavar="ID", help="the update's number")
    add_actor_flag(approve)
    add_json_flag(approve)
    approve.set_defaults(handler=approve_handler)

    show = sub.add_parser(
        "show",
        help="show one update: every language, its revisions and where it went",
        description="Show one update in full, with its revision history and delivery counts.",
    )
    show.add_argument("update_id", type=update_number, metavar="ID", help="the update's number")
    add_json_flag(show)
    show.set_defaults(handler=show_handler)


def _history_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--past",
        action="store_true",
        help="the update tells what already happened: its --next-step-at may be in the past "
        "(else a past time is refused)",
    )


def _reason_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--reason-in",
        nargs=2,
        action="append",
        metavar=("LANG", "TEXT"),
        help="the reason in another campaign language, read by its readers: "
        "--reason-in es 'hora equivocada' (or --es-reason TEXT); --reason is the campaign's "
        "first language's",
    )


def _reasons(args: argparse.Namespace, campaign: Campaign) -> dict[str, Any]:
    """--reason (the first language's) and each --reason-in / --text LANG reason, as the
    desk reads them (`reason`, `reasons` by language)."""
    reasons = {campaign.default_language: args.reason}
    extra = [tuple(pair) for pair in args.reason_in or []]
    extra += [(code, text) for code, name, text in getattr(args, "text", None) or []
              if name.strip().lower() == "reason"]  # fmt: skip
    for code, text in extra:
        language = parse_language(code, campaign.languages)
        if language in reasons:
            raise InvalidInput(f"The {language!r} reason is given twice; give it once.")
        reasons[language] = text
    main = reasons.pop(campaign.default_language)
    return {"reason": main, "reasons": reasons}


def _text_flags(parser: argparse.ArgumentParser, *, required_headline: bool) -> None:
    text = parser.add_argument_group(
        "text",
        "in the campaign's first language (or --lang); another language's text with --text, "
        "or with the field's flag and the language code: --es-headline, --ko-body, ...",
    )
    text.add_argument(
        "--lang", metavar="LANG", help="the language of --headline, --body and --next-step"
    )
    text.add_argument(
        "--headline",
        required=required_headline,
        metavar="TEXT",
        help="one line, at most 150 characters",
    )
    text.add_argument("--body", metavar="TEXT", help="the full text")
    text.add_argument("--body-file", metavar="PATH", help="read the body from a file (- = stdin)")
    text.add_argument(
        "--next-step", metavar="TEXT", help='what happens next, e.g. "Talks continue Saturday"'
    )
    text.add_argument(
        "--text",
        nargs=3,
        action="append",
        metavar=("LANG", "FIELD", "TEXT"),
        help="one field in another language: --text es headline 'Comienza la huelga' "
        "(FIELD: headline, body, body_file, next_step; for edit also reason)",
    )


def _register_post(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    post = sub.add_parser(
        "post",
        help="post an update to every subscribed channel (now or at a set time)",
        description="Post an update. It goes to every subscribed channel that receives its "
        "urgency, and to the status page. With --at it is held until then (embargo).",
    )
    _text_flags(post, required_headline=True)
    post.add_argument(
        "--status",
        help="where the dispute stands: " + ", ".join(s.value for s in Status) + " "
        "(default: the current status)",
    )
    post.add_argument(
        "--urgency",
        default="routine",
        help="routine (default), important or urgent; urgent ignores channels' quiet hours",
    )
    post.add_argument(
        "--next-step-at",
        metavar="WHEN",
        help="when the next step happens: 2019-01-21T06:00 (campaign time) or with an offset",
    )
    post.add_argument(
        "--no-next-step",
        action="store_true",
        help="the update has no next step: take the one still ahead off (else an update "
        "without --next-step/--next-step-at keeps it)",
    )
    _history_flag(post)
    post.add_argument(
        "--sites",
        metavar="CODES",
        help="only for these sites (comma-separated codes, see `strikebot sites list`) and "
        "whoever follows them, their group or everything (default: everyone)",
    )
    post.add_argument(
        "--groups",
        metavar="CODES",
        help="only for these groups of sites (a local district, a region) and their sites",
    )
    post.add_argument(
        "--at",
        metavar="WHEN",
        help="publish later (embargo): 2019-01-21T06:00 (campaign time) or with an offset",
    )
    post.add_argument(
        "--timezone",
        metavar="ZONE",
        help="read --at/--next-step-at in this IANA time zone (default: the campaign's)",
    )
    post.add_argument(
        "--wait",
        action="store_true",
        help="stay until the running bot has delivered the update, showing progress",
    )
    post.add_argument(
        "--dry-run",
        action="store_true",
        help="post nothing: show how it will read and how many channels, e-mails and text "
        "segments it will go to",
    )
    add_actor_flag(post)
    add_json_flag(post)
    post.set_defaults(handler=post_handler)


def _register_edit(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    edit = sub.add_parser(
        "edit",
        help="edit an update in place, keeping the previous text as a revision",
        description="Edit an update. Only the fields you give change; the previous text is "
        "kept as a revision with your reason. Copies already posted are edited in place, "
        "which notifies nobody: add --correction to also post a short visible correction note.",
    )
    edit.add_argument("update_id", type=update_number, metavar="ID", help="the update's number")
    edit.add_argument("--reason", required=True, help="why it changed (kept with the revision)")
    _reason_flag(edit)
    edit.add_argument(
        "--correction",
        action="store_true",
        help="also post a visible correction note to the channels that got the update",
    )
    _text_flags(edit, required_headline=False)
    edit.add_argument("--status", help="new status: " + ", ".join(s.value for s in Status))
    edit.add_argument("--urgency", help="new urgency: routine, important or urgent")
    when = edit.add_mutually_exclusive_group()
    when.add_argument("--next-step-at", metavar="WHEN", help="new time of the next step")
    when.add_argument(
        "--clear-next-step-at", action="store_true", help="remove the time of the next step"
    )
    edit.add_argument("--timezone", metavar="ZONE", help="read --next-step-at in this zone")
    _history_flag(edit)
    add_actor_flag(edit)
    add_json_flag(edit)
    edit.set_defaults(handler=edit_handler)


# ---------------------------------------------------------------------------- handlers

# Which flag each of the desk's fields comes from, to name it in a refusal.
_FLAGS = {
    "status": "--status",
    "urgency": "--urgency",
    "publish_at": "--at",
    "next_step_at": "--next-step-at",
    "reason": "--reason",
    "update_id": "ID",
    "audience": "--sites/--groups",
}


async def post_handler(args: argparse.Namespace) -> int:
    actor = actor_from(args)
    async with open_context(args) as ctx:
        campaign = ctx.admin.campaign
        zone = parse_timezone(args.timezone or campaign.timezone)
        proposal = _read(
            ctx,
            args,
            Action.POST,
            urgency=args.urgency,
            status=args.status,
            publish_at=parse_moment(args.at, zone, option="--at") if args.at else None,
            next_step_at=_next_step_at(args, zone),
            clear_next_step=args.no_next_step,
            history=args.past,
            sites=args.sites,
            groups=args.groups,
        )
        if args.dry_run:
            return await _dry_run(ctx, args, actor, proposal)
        update = (await _commit(ctx, args, actor, proposal)).update
        outbox = await _outbox(ctx, update.id)
        document: dict[str, Any] = {"update": update_json(update, campaign), "outbox": outbox}
        if not args.wait or update.state is UpdateState.PENDING_APPROVAL:
            if args.json:
                print_json(document)
            else:
                _print_posted(update, campaign, outbox)
            return 0
        if not args.json:
            _print_posted(update, campaign, outbox)
            return await wait_for_deliveries(ctx, update.id)
        # One JSON document: the update, then (once delivered) the delivery summary.
        summary = await settle(ctx, update.id, show_progress=False)
        document["delivery"] = summary_json(update.id, summary)
        print_json(document)
        return 1 if any_dead(summary) else 0


async def _dry_run(
    ctx: CliContext, args: argparse.Namespace, actor: Actor, proposal: Proposal
) -> int:
    """The preview of a post: how it reads in each language, and how far it will go. It
    refuses what the post would refuse."""
    campaign = ctx.admin.campaign
    preview = await ctx.desk.preview(actor, proposal, keep=False)
    _refuse(preview.problems, _main(args, ctx))
    found = preview.reach
    audience = preview.update.audience
    if args.json:
        print_json(
            {
                "dry_run": True,
                "audience": {"sites": list(audience.sites), "groups": list(audience.groups)},
                "channels": found.channels,
                "people": {
                    s.platform: {"messages": s.messages, "units": s.units} for s in found.spends
                },
                "preview": {lang: m.to_json() for lang, m in preview.messages.items()},
                # How long each platform takes at its configured pace.
                "seconds": {
                    p: round(t, 1) for p in found.paces if (t := found.seconds(p)) is not None
                },
            }
        )
        return 0
    for lang, text in preview.update.texts.items():
        out.print(f"[bold]{escape(text.headline)}[/] ({lang})")
        if text.body:
            out.print(escape(text.body))
    zone = local_zone(None, campaign)
    out.print(
        f"[bold]Nothing was posted.[/] {escape(preview.sentence(campaign.default_language, zone))}"
    )
    return 0


async def edit_handler(args: argparse.Namespace) -> int:
    actor = actor_from(args)
    async with open_context(args) as ctx:
        campaign = ctx.admin.campaign
        zone = parse_timezone(args.timezone or campaign.timezone)
        proposal = _read(
            ctx,
            args,
            Action.CORRECT if args.correction else Action.EDIT,
            update_id=args.update_id,
            status=args.status,
            urgency=args.urgency,
            next_step_at="off" if args.clear_next_step_at else _next_step_at(args, zone),
            history=args.past,
            **_reasons(args, campaign),
        )
        update = (await _commit(ctx, args, actor, proposal)).update
        outbox = await _outbox(ctx, update.id)
        if args.json:
            print_json({"update": update_json(update, campaign), "outbox": outbox})
            return 0
        edits = outbox.get("edit", {}).get("pending", 0)
        notes = outbox.get("correction", {}).get("pending", 0)
        out.print(
            f"[bold]Edited update #{update.id}[/] (now revision {update.revision}). "
            f"Reason kept with the old text: {escape(args.reason.strip())}"
        )
        if update.state is UpdateState.PUBLISHED:
            line = f"Copies already posted will be updated in place ({edits} queued)"
            line += f"; correction notes queued: {notes}." if args.correction else "."
            out.print(line)
            if not args.correction:
                out.print(
                    "[dim]An edit notifies nobody; add --correction next time to post a "
                    "visible correction note.[/]"
                )
        out.print(update_url(update, campaign))
        return 0


async def retract_handler(args: argparse.Namespace) -> int:
    actor = actor_from(args)
    async with open_context(args) as ctx:
        campaign = ctx.admin.campaign
        proposal = _read(
            ctx, args, Action.RETRACT, update_id=args.update_id, **_reasons(args, campaign)
        )
        update = (await _commit(ctx, args, actor, proposal)).update
        outbox = await _outbox(ctx, update.id)
        if args.json:
            print_json({"update": update_json(update, campaign), "outbox": outbox})
            return 0
        cancelled = outbox.get("post", {}).get("cancelled", 0)
        notices = outbox.get("retract", {}).get("pending", 0)
        out.print(
            f"[bold red]Retracted update #{update.id}[/]: "
            f"{escape(update.text(campaign.default_language).headline)}"
        )
        for lang, text in update.retraction_reason_texts().items():
            out.print(f"Reason (shown to members, {lang}): {escape(text)}")
        out.print(
            f"It stays on the timeline marked as retracted. Copies not yet sent were cancelled "
            f"({cancelled}); channels that got it will show it as retracted ({notices} queued)."
        )
        return 0


async def approve_handler(args: argparse.Namespace) -> int:
    actor = actor_from(args)
    async with open_context(args) as ctx:
        campaign = ctx.admin.campaign
        proposal = _read(ctx, args, Action.APPROVE, update_id=args.update_id)
        update = (await _commit(ctx, args, actor, proposal)).update
        outbox = await _outbox(ctx, update.id)
        if args.json:
            print_json({"update": update_json(update, campaign), "outbox": outbox})
            return 0
        _print_posted(update, campaign, outbox, verb="Approved")
        return 0


async def show_handler(args: argparse.Namespace) -> int:
    async with open_context(args) as ctx:
        campaign = ctx.admin.campaign
        update = await _get(ctx, args.update_id)
        outbox = await _outbox(ctx, update.id)
        async with ctx.store.read() as tx:
            stale = await tx.stale_texts(update_target(update.id))
        if args.json:
            print_json(
                {
                    "update": update_json(update, campaign),
                    "outbox": outbox,
                    "stale": {s.language: stale_json(s) for s in stale},
                }
            )
            return 0
        _print_update(update, campaign, outbox)
        for mark in stale:
            out.print(
                f"[yellow]The {mark.language} text is stale[/]: written before the "
                f"{mark.edited.replace(',', ', ')} text was edited "
                f"({local(mark.since, campaign.timezone)}). Update it, or confirm it still "
                f"holds: strikebot translations confirm update:{update.id} {mark.language}"
            )
        return 0


# ---------------------------------------------------------------------------- helpers


def stale_json(mark: StaleText) -> dict[str, object]:
    return {
        "since": mark.since.isoformat(),
        "edited": mark.edited.split(","),
        "editor": mark.editor,
    }


async def _get(ctx: CliContext, update_id: int) -> Update:
    async with ctx.store.read() as tx:
        update = await tx.get_update(update_id, ctx.clock())
    if update is None:
        raise NotFound(f"No update #{update_id}. See the numbers with `strikebot timeline --all`.")
    return update


async def _outbox(ctx: CliContext, update_id: int) -> dict[str, dict[str, int]]:
    """{action: {state: count}} of this update's deliveries."""
    async with ctx.store.read() as tx:
        rows = await tx.list_deliveries(update_id=update_id, limit=None)
    counts = Counter((str(d.action), str(d.state)) for d in rows)
    summary: dict[str, dict[str, int]] = {}
    for (action, state), n in sorted(counts.items()):
        summary.setdefault(action, {})[state] = n
    return summary


def _read(ctx: CliContext, args: argparse.Namespace, action: Action, **given: Any) -> Proposal:
    """The command line's flags as the desk's proposal; a refusal names the flags."""
    try:
        texts = _texts(args, ctx.admin.campaign) if hasattr(args, "headline") else None
        return ctx.desk.read(action, texts=texts, **given)
    except Problems as exc:
        _refuse(exc.problems, _main(args, ctx))
        raise


async def _commit(
    ctx: CliContext, args: argparse.Namespace, actor: Actor, proposal: Proposal
) -> Done:
    try:
        return await ctx.desk.commit(actor, proposal)
    except Problems as exc:
        _refuse(exc.problems, _main(args, ctx))
        raise


def _main(args: argparse.Namespace, ctx: CliContext) -> str:
    """The language of --headline, --body and --next-step."""
    campaign = ctx.admin.campaign
    code = getattr(args, "lang", None)
    return parse_language(code, campaign.languages) if code else campaign.default_language


def _refuse(problems: Mapping[str, StrikebotError], main: str) -> None:
    """Every problem the desk found, each after the flag it is about (`main`: the language
    of --headline, --body and --next-step)."""
    if not problems:
        return
    lines = [f"{_flag(name, main)}: {problem.message}" for name, problem in problems.items()]
    raise InvalidInput("\n".join(lines))


def _flag(field: str, main: str) -> str:
    """The flag a desk field comes from: texts.es.headline -> --es-headline, and the main
    language's -> --headline."""
    if field.startswith("texts."):
        _, language, *rest = field.split(".")
        name = rest[0].replace("_", "-") if rest else "headline"
        return f"--{name}" if language == main else f"--{language}-{name}"
    return _FLAGS.get(field, field)


def _next_step_at(args: argparse.Namespace, zone: str) -> datetime | None:
    if not args.next_step_at:
        return None
    return parse_moment(args.next_step_at, zone, option="--next-step-at")


def _texts(args: argparse.Namespace, campaign: Campaign) -> dict[str, dict[str, str | None]]:
    """The wording given on the command line, per language and field (None: not given)."""
    main = parse_language(args.lang, campaign.languages) if args.lang else campaign.default_language
    given: dict[str, dict[str, str | None]] = {
        main: {
            "headline": args.headline,
            "body": _body(args.body, args.body_file, "--body"),
            "next_step": args.next_step,
        },
    }
    for code, name, value in args.text or []:
        language = parse_language(code, campaign.languages)
        field = name.strip().lower().replace("-", "_")
        if field == "reason" and hasattr(args, "reason"):
            continue  # an edit's reason in that language (`_reasons`)
        fields = given.setdefault(language, {"headline": None, "body": None, "next_step": None})
        if field == "body_file":
            field, value = "body", _body(None, value, f"--{language}-body-file")
        if field not in fields:
            raise InvalidInput(
                f"--text {code} {name}: a field is headline, body, body_file or next_step."
            )
        if fields[field] is not None:
            raise InvalidInput(f"The {language!r} {field} is given twice; give it once.")
        fields[field] = value
    return {lang: f for lang, f in given.items() if any(v is not None for v in f.values())}


def _body(text: str | None, path: str | None, option: str) -> str | None:
    if text is not None and path is not None:
        raise InvalidInput(f"Give {option} or {option}-file, not both.")
    if path is not None:
        return read_text_file(path, option.removeprefix("--"))
    return text


def _queued(outbox: dict[str, dict[str, int]]) -> int:
    return outbox.get("post", {}).get("pending", 0)


def _print_posted(
    update: Update, campaign: Campaign, outbox: dict[str, dict[str, int]], *, verb: str = "Posted"
) -> None:
    language = campaign.default_language
    zone = campaign.timezone
    style = STATE_STYLES[update.state]
    out.print(
        f"[bold {style}]{verb} update #{update.id}[/] · "
        f"{i18n.status_label(update.status, language)} · {update.urgency}"
    )
    out.print(f"  [bold]{escape(update.text(language).headline)}[/]")
    if not update.audience.everyone:
        out.print(
            f"  For {escape(update.audience.describe())} only, and whoever follows everything."
        )
    channels = _queued(outbox)
    if update.state is UpdateState.PENDING_APPROVAL:
        out.print(
            "  Waiting for a second admin: another admin approves it with "
            f"`strikebot approve {update.id}` (or /strike approve {update.id} in chat)."
        )
    elif update.state is UpdateState.SCHEDULED:
        out.print(
            f"  Scheduled for {local(update.published_at, zone)}; "
            f"queued for {channels} channel(s) at that time."
        )
    elif channels:
        out.print(f"  Queued for {channels} channel(s); also on the status page.")
    else:
        out.print(
            "  On the status page. No subscribed channel receives this urgency "
            "(see `strikebot subscriptions list`)."
        )
    if update.urgency is not Urgency.URGENT and channels:
        out.print("  [dim]Channels in their quiet hours get it when those end.[/]")
    out.print(f"  {update_url(update, campaign)}")


def _print_update(update: Update, campaign: Campaign, outbox: dict[str, dict[str, int]]) -> None:
    zone = campaign.timezone
    style = STATE_STYLES[update.state]
    out.print(
        f"[bold]Update #{update.id}[/] · [{style}]{escape(state_label(update, zone))}[/] · "
        f"{i18n.status_label(update.status, campaign.default_language)} · {update.urgency} · "
        f"revision {update.revision}"
    )
    out.print(
        f"Author {escape(update.author)}; created {local(update.created_at, zone)}"
        + (f"; published {local(update.published_at, zone)}" if update.published_at else "")
        + (f"; approved by {escape(update.approved_by)}" if update.approved_by else "")
    )
    if update.next_step_at:
        out.print(f"Next step at {local(update.next_step_at, zone)}")
    if not update.audience.everyone:
        out.print(f"For {escape(update.audience.describe())} (and whoever follows everything)")
    for language, text in update.texts.items():
        out.print(f"\n[bold]\\[{language}] {escape(text.headline)}[/]")
        if text.body:
            out.print(escape(text.body))
        if text.next_step:
            out.print(f"[italic]Next step:[/] {escape(text.next_step)}")
    if update.revisions:
        table = Table(title="Earlier revisions", title_justify="left")
        table.add_column("rev", justify="right")
        table.add_column("replaced")
        table.add_column("by")
        table.add_column("reason")
        table.add_column("headline then")
        for rev in update.revisions:
            table.add_row(
                str(rev.number),
                local(rev.created_at, zone),
                escape(rev.editor),
                escape(rev.reason),
                escape(next(iter(rev.texts.values())).headline),
            )
        out.print(table)
    if outbox:
        parts = [
            f"{action}: " + ", ".join(f"{n} {state}" for state, n in states.items())
            for action, states in outbox.items()
        ]
        out.print("\nDeliveries — " + "; ".join(parts))
    out.print(update_url(update, campaign))
