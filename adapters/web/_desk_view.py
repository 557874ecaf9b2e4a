"""What the desk's templates show, from the core's values: times in the campaign's zone,
labels in the reader's language, a form's values from an update or a proposal and back
(a form's fields into the desk's terms), and one card per surface."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from aiohttp import web

from bot.ports import (
    Action,
    Campaign,
    DemandStatus,
    NotFound,
    OutboundMessage,
    PluginContext,
    Preview,
    Progress,
    Proposal,
    Status,
    Update,
    UpdateState,
    Urgency,
    i18n,
)

from ._desk_auth import Form, desk_error, words

TEXT_FIELDS = ("headline", "body", "next_step")
MAX_ID = 2**31 - 1  # ids are 32-bit integers on PostgreSQL
LOCAL_INPUT = "%Y-%m-%dT%H:%M"  # what <input type="datetime-local"> sends and shows


def update_id_of(request: web.Request) -> int:
    """The update id in the address (`/desk/updates/{id}`), or `NotFound`."""
    raw = request.match_info["id"]
    if not (raw.isascii() and raw.isdigit()) or not 1 <= int(raw) <= MAX_ID:
        raise desk_error(NotFound, "no_update", id=raw[:20])
    return int(raw)


def zone(campaign: Campaign) -> ZoneInfo:
    return ZoneInfo(campaign.timezone)


def when(moment: datetime | None, campaign: Campaign, lang: str) -> str:
    if moment is None:
        return ""
    return i18n.format_datetime(moment.astimezone(zone(campaign)), lang)


def local_input(moment: datetime | None, campaign: Campaign) -> str:
    return "" if moment is None else moment.astimezone(zone(campaign)).strftime(LOCAL_INPUT)


def state_label(update: Update, campaign: Campaign, lang: str) -> str:
    w = words(lang)
    if update.state is UpdateState.SCHEDULED and update.publish_at is not None:
        return w["state_scheduled"].format(when=when(update.publish_at, campaign, lang))
    return w[f"state_{update.state.value}"]


def choices(lang: str) -> dict[str, list[dict[str, str]]]:
    """The options of the status, urgency and demand-status selects, in `lang`."""
    return {
        "statuses": [{"value": s.value, "label": i18n.status_label(s, lang)} for s in Status],
        "urgencies": [{"value": u.value, "label": i18n.urgency_label(u, lang)} for u in Urgency],
        "demand_statuses": [
            {"value": s.value, "label": i18n.demand_status_label(s, lang)} for s in DemandStatus
        ],
    }


def update_summary(update: Update, campaign: Campaign, lang: str) -> dict[str, Any]:
    """One line of a list of updates."""
    return {
        "id": update.id,
        "headline": update.text(lang).headline,
        "state": state_label(update, campaign, lang),
        "state_key": update.state.value,
        "status": i18n.status_label(update.status, lang),
        "urgency": i18n.urgency_label(update.urgency, lang),
        "when": when(update.published_at or update.created_at, campaign, lang),
        "author": update.author,
    }


# -- forms and proposals ----------------------------------------------------------------


def values_of_update(update: Update | None, campaign: Campaign) -> dict[str, Any]:
    """A form's values: the update as it stands (an edit), or an empty post."""
    texts = {
        lang: {f: getattr(update.texts[lang], f) if update and lang in update.texts else ""
               for f in TEXT_FIELDS}
        for lang in campaign.languages
    }  # fmt: skip
    return {
        "texts": texts,
        "status": update.status.value if update else "",
        "urgency": update.urgency.value if update else Urgency.ROUTINE.value,
        "next_step_at": local_input(update.next_step_at if update else None, campaign),
        "publish_at": "",
        "reason": "",
        "correction": False,
        "clear_next_step": False,
        # Whom a post is for, as codes (None: an edit, which goes where its post went).
        "audience": None if update else "",
    }


def values_of_proposal(
    proposal: Proposal, base: Update | None, campaign: Campaign
) -> dict[str, Any]:
    """A form's values again from a stored draft (the preview's "Change")."""
    values = values_of_update(base, campaign)
    for lang, patch in proposal.texts.items():
        for f in TEXT_FIELDS:
            given = getattr(patch, f)
            if given is not None:
                values["texts"].setdefault(lang, {})[f] = given
    if proposal.status is not None:
        values["status"] = proposal.status.value
    if proposal.urgency is not None:
        values["urgency"] = proposal.urgency.value
    if proposal.next_step_at is not None:
        values["next_step_at"] = local_input(proposal.next_step_at, campaign)
    values["publish_at"] = local_input(proposal.publish_at, campaign)
    values["reason"] = proposal.reason
    values["correction"] = proposal.action is Action.CORRECT
    values["clear_next_step"] = proposal.clear_next_step
    if proposal.action is Action.POST:
        values["audience"] = ", ".join([*proposal.audience.sites, *proposal.audience.groups])
    return values


def values_of_form(form: Form, campaign: Campaign) -> dict[str, Any]:
    """What the person typed, to show the form again with its problems."""
    return {
        "texts": {
            lang: {f: form.get(f"texts.{lang}.{f}", "") for f in TEXT_FIELDS}
            for lang in campaign.languages
        },
        "status": form.get("status", ""),
        "urgency": form.get("urgency", ""),
        "next_step_at": form.get("next_step_at", ""),
        "publish_at": form.get("publish_at", ""),
        "reason": form.get("reason", ""),
        "correction": bool(form.get("correction")),
        "clear_next_step": bool(form.get("clear_next_step")),
        "audience": form.get("audience", "") if "audience" in form else None,
    }


def read_form(ctx: PluginContext, form: Form, before: Update | None) -> Proposal:
    """A post (no `before`) or an edit of `before`, in the desk's terms: `Desk.read` reads
    the fields (times in the campaign's zone); an edit carries only what changed, so the
    desk says "nothing to change" when nothing did. Raises `Problems`, field by field."""
    campaign = ctx.campaign
    texts: dict[str, dict[str, str | None]] = {}
    for lang in campaign.languages:
        given = {f: form.get(f"texts.{lang}.{f}") for f in TEXT_FIELDS}
        if before is None:
            empty = not any((v or "").strip() for v in given.values())
            if empty and lang != campaign.default_language:
                continue  # a language left blank is not posted (the preview says so)
            texts[lang] = {f: v or "" for f, v in given.items()}
            continue
        old = before.texts.get(lang)
        patch = {
            f: v
            for f, v in given.items()
            if v is not None and v.strip() != (getattr(old, f) if old else "").strip()
        }
        if patch:
            texts[lang] = dict.fromkeys(TEXT_FIELDS) | patch
    status, urgency = form.get("status") or None, form.get("urgency") or None
    next_at = form.get("next_step_at") or None
    if before is not None:
        status = None if status == before.status.value else status
        urgency = None if urgency == before.urgency.value else urgency
        if form.get("clear_next_step"):
            next_at = "off" if before.next_step_at is not None else None
        elif next_at == local_input(before.next_step_at, campaign):
            next_at = None
    action = Action.POST
    if before is not None:
        action = Action.CORRECT if form.get("correction") else Action.EDIT
    return ctx.desk.read(
        action,
        update_id=None if before is None else before.id,
        texts=texts,
        status=status,
        urgency=urgency,
        next_step_at=next_at,
        publish_at=(form.get("publish_at") or None) if before is None else None,
        reason=form.get("reason") if before is not None else None,
        sites=form.get("audience") or None if before is None else None,  # sites or groups
    )


# -- the preview's cards --------------------------------------------------------------------


def cards(
    ctx: PluginContext,
    preview: Preview,
    lang: str,
    copies: Mapping[str, int] | None = None,
) -> list[dict[str, Any]]:
    """Per language of the update, one card per surface: the update as that platform shows
    it, its notes, and how many it reaches there (`copies`: for an edit or a retraction,
    the copies each platform holds)."""
    plugins = ctx.desk.plugins
    board = ctx.board
    reached = dict(copies) if copies is not None else dict(preview.reach.platforms)
    shown = []
    for code in preview.shown(lang):
        message: OutboundMessage = preview.messages[code]
        surfaces = []
        for name, view in board.surfaces(message, lang).items():
            plugin = plugins[name]
            n = reached.get(name, 0)
            surfaces.append(
                {
                    "name": name,
                    "title": plugin.title,
                    "view": view,
                    "reach": _reach_words(name, n, plugin.contact is not None, lang, copies),
                    "count": n,
                    "public": not plugin.delivers,
                }
            )
        surfaces.sort(key=lambda s: (not s["public"] and not s["count"], s["title"]))
        shown.append({"lang": code, "name": i18n.language_name(code, lang), "surfaces": surfaces})
    return shown


def _reach_words(
    name: str, n: int, people: bool, lang: str, copies: Mapping[str, int] | None
) -> str:
    if copies is not None:
        key = "desk_web.reach_copies"
    elif people:
        key = "desk_web.reach_people"
    else:
        key = "desk_web.reach_channels"
    return i18n.plural(lang, key, n).format(n=i18n.format_number(n, lang))


def copies_by_platform(progress: Progress) -> dict[str, int]:
    """The copies of an update each platform holds (or is about to): what an edit changes."""
    found: dict[str, int] = {}
    for row in progress.rows:
        if row.action.value == "post":
            found[row.platform] = found.get(row.platform, 0) + row.delivered + row.waiting
    return found


def progress_view(ctx: PluginContext, progress: Progress, lang: str) -> dict[str, Any]:
    w = words(lang)
    plugins = ctx.desk.plugins
    return {
        "rows": [
            {
                "platform": plugins[r.platform].title if r.platform in plugins else r.platform,
                "action": w[f"action_{r.action.value}"],
                "delivered": i18n.format_number(r.delivered, lang),
                "waiting": i18n.format_number(r.waiting, lang),
                "failed": i18n.format_number(r.failed, lang),
                "has_failed": r.failed > 0,
            }
            for r in progress.rows
        ],
        "failures": [
            {
                "id": f.delivery_id,
                "platform": plugins[f.platform].title if f.platform in plugins else f.platform,
                "where": f.where or w["a_person"],
                "reason": f.reason,
                "attempts": f.attempts,
            }
            for f in progress.failures
        ],
        "failed": progress.failed,
        "waiting": progress.waiting,
        "done": progress.waiting == 0,
        "empty": not progress.rows,
    }


def parse_local(value: str, campaign: Campaign) -> datetime | None:
    """A datetime-local input's value in the campaign's zone; None when blank. Raises
    ValueError when it is not a date and time."""
    text = value.strip()
    if not text:
        return None
    return datetime.fromisoformat(text).replace(tzinfo=zone(campaign))
