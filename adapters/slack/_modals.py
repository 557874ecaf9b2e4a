"""The admin forms as Slack modal views, and reading back what was typed into them.

Flow: `/strike post` opens the form → "Preview" pushes a confirmation view showing the
update as members will see it → "Post it" replaces that with the result (closing it closes
everything). `/strike edit` and `/strike retract` first pick a recent update from a menu;
`/strike approve` picks from the updates awaiting approval.

These functions are pure: views in, views out. `_inbound.py` calls Slack and the commands.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from adapters.slack._blocks import (
    MAX_MODAL_BLOCKS,
    escape,
    message_blocks,
    mrkdwn,
    plain,
    stacked_blocks,
)
from adapters.slack._words import word
from bot.ports import (
    HEADLINE_MAX,
    NEXT_STEP_MAX,
    REASON_MAX,
    Campaign,
    OutboundMessage,
    PlaceMatch,
    Status,
    Update,
    UpdateState,
    UpdateText,
    Urgency,
    i18n,
    stale_note,
)

POST = "strike:post"
PICK = "strike:pick"
EDIT = "strike:edit"
CONFIRM = "strike:confirm"
RESULT = "strike:result"
PLACES = "strike:places"  # the action id of the site and group picker (its options requests)
FOLLOWS = "strike:follows"  # the same picker in a message: what a channel follows

BODY_INPUT_MAX = 3000  # Slack's plain_text_input limit; longer bodies go through the CLI
TITLE_MAX = 24
OPTION_MAX = 75
OPTIONS_MAX = 100  # options in an options request's answer (or initially chosen)

View = dict[str, Any]
Block = dict[str, Any]


# ------------------------------------------------------------------------- metadata


def encode_meta(**values: object) -> str:
    return json.dumps({k: v for k, v in values.items() if v is not None}, separators=(",", ":"))


def decode_meta(view: Mapping[str, Any]) -> dict[str, Any]:
    try:
        meta = json.loads(view.get("private_metadata") or "{}")
    except json.JSONDecodeError:
        return {}
    return meta if isinstance(meta, dict) else {}


# ------------------------------------------------------------------------- reading input


def view_values(view: Mapping[str, Any]) -> dict[str, Any]:
    """block_id → what was entered: text (None if empty), the chosen option's value, a
    datetime picker's unix time, or the list of ticked checkbox values."""
    out: dict[str, Any] = {}
    values = (view.get("state") or {}).get("values") or {}
    for block_id, actions in values.items():
        if not actions:
            continue
        value = actions.get("value") or next(iter(actions.values()))
        kind = value.get("type")
        if kind == "plain_text_input":
            text = value.get("value")
            out[block_id] = text if text and text.strip() else None
        elif kind in ("static_select", "radio_buttons"):
            chosen = value.get("selected_option")
            out[block_id] = chosen.get("value") if chosen else None
        elif kind == "datetimepicker":
            out[block_id] = value.get("selected_date_time")
        elif kind in ("checkboxes", "multi_static_select", "multi_external_select"):
            out[block_id] = [o.get("value") for o in value.get("selected_options") or []]
    return out


def picked_time(value: object) -> datetime | None:
    """A datetimepicker's unix seconds as an aware UTC datetime."""
    if value in (None, ""):
        return None
    try:
        return datetime.fromtimestamp(int(str(value)), UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return None


# ------------------------------------------------------------------------- building blocks


def _option(value: str, text: str) -> dict[str, Any]:
    return {"text": plain(text, OPTION_MAX), "value": value}


def _input(
    block_id: str,
    label: str,
    element: dict[str, Any],
    *,
    optional: bool = False,
    hint: str | None = None,
) -> Block:
    block: Block = {
        "type": "input",
        "block_id": block_id,
        "label": plain(label, 2000),
        "element": {"action_id": "value"} | element,
        "optional": optional,
    }
    if hint:
        block["hint"] = plain(hint, 2000)
    return block


def _text(
    block_id: str,
    label: str,
    *,
    max_length: int,
    multiline: bool = False,
    initial: str | None = None,
    optional: bool = False,
    hint: str | None = None,
) -> Block:
    element: dict[str, Any] = {
        "type": "plain_text_input",
        "multiline": multiline,
        "max_length": max_length,
    }
    if initial:
        element["initial_value"] = initial[:max_length]
    return _input(block_id, label, element, optional=optional, hint=hint)


def _select(
    block_id: str,
    label: str,
    options: Sequence[tuple[str, str]],
    *,
    initial: str | None = None,
    optional: bool = False,
) -> Block:
    built = [_option(value, text) for value, text in options]
    element: dict[str, Any] = {"type": "static_select", "options": built}
    chosen = [o for o in built if o["value"] == initial]
    if chosen:
        element["initial_option"] = chosen[0]
    return _input(block_id, label, element, optional=optional)


def _modal(
    callback_id: str,
    title: str,
    blocks: list[Block],
    *,
    submit: str | None,
    close: str,
    meta: str = "",
    clear_on_close: bool = False,
) -> View:
    view: View = {
        "type": "modal",
        "callback_id": callback_id,
        "title": plain(title, TITLE_MAX),
        "close": plain(close, TITLE_MAX),
        "blocks": blocks[:MAX_MODAL_BLOCKS],
        "private_metadata": meta,
    }
    if submit is not None:
        view["submit"] = plain(submit, TITLE_MAX)
    if clear_on_close:
        view["clear_on_close"] = True
    return view


def _status_options(lang: str) -> list[tuple[str, str]]:
    return [(s.value, i18n.status_label(s, lang)) for s in Status]


def _urgency_options(lang: str) -> list[tuple[str, str]]:
    return [(u.value, i18n.urgency_label(u, lang)) for u in Urgency]


def _language_name(code: str, lang: str) -> str:
    return i18n.language_name(code, lang)


# ------------------------------------------------------------------------- the forms


def audience_input(lang: str, chosen: Sequence[PlaceMatch] = ()) -> Block:
    """Whom a post is for: a multi-select whose options Slack asks for as the admin types
    (`place_options`), however many sites the campaign has; `chosen` shown as picked."""
    element: dict[str, Any] = {
        "type": "multi_external_select",
        "action_id": PLACES,
        "min_query_length": 0,  # opening the menu lists the groups first
        "placeholder": plain(word(lang, "audience_placeholder"), 150),
    }
    if chosen:
        element["initial_options"] = [_place_option(m, lang) for m in chosen[:OPTIONS_MAX]]
    return _input("audience", word(lang, "audience"), element, optional=True,
                  hint=word(lang, "audience_hint"))  # fmt: skip


def follows_message(lang: str, chosen: Sequence[PlaceMatch]) -> dict[str, Any]:
    """An ephemeral message whose picker chooses what the channel follows (`chosen` now;
    none: everything). Its block id carries the language its options are named in."""
    text = word(lang, "follows_text")
    element: dict[str, Any] = {
        "type": "multi_external_select",
        "action_id": FOLLOWS,
        "min_query_length": 0,
        "placeholder": plain(word(lang, "audience_placeholder"), 150),
    }
    if chosen:
        element["initial_options"] = [_place_option(m, lang) for m in chosen[:OPTIONS_MAX]]
    block = {
        "type": "section",
        "block_id": f"{FOLLOWS}:{lang}",
        "text": mrkdwn(escape(text)),
        "accessory": element,
    }
    return {"response_type": "ephemeral", "text": text, "blocks": [block]}


def picker_language(body: Mapping[str, Any]) -> str | None:
    """The language a picker's options are named in: its form's, or its message's."""
    meta = decode_meta(body.get("view") or {})
    if meta.get("l"):
        return str(meta["l"])
    block_id = str(body.get("block_id") or "")
    return block_id.rsplit(":", 1)[1] if block_id.startswith(FOLLOWS + ":") else None


def place_options(lang: str, found: Sequence[PlaceMatch]) -> dict[str, Any]:
    """An options request's answer: the places found, as option groups (the groups
    first, then each group's sites under its name), at most Slack's 100 options."""
    grouped: dict[str, list[dict[str, Any]]] = {}
    for match in found[:OPTIONS_MAX]:
        label = word(lang, "audience_groups") if match.kind == "group" else match.group_name
        grouped.setdefault(label or match.group, []).append(_place_option(match, lang))
    if not grouped:
        return {"options": []}
    return {
        "option_groups": [
            {"label": plain(label, OPTION_MAX), "options": options}
            for label, options in grouped.items()
        ]
    }


def _place_option(match: PlaceMatch, lang: str) -> dict[str, Any]:
    if match.kind == "group":
        text = word(lang, "audience_all_of", group=match.name)
        return _option(f"group:{match.code}", f"{text} ({match.code})")
    return _option(f"site:{match.code}", match.label)


def chosen_audience(value: object) -> tuple[list[str], list[str]] | None:
    """The (sites, groups) picked in the audience input, or None when nothing was."""
    if not isinstance(value, list) or not value:
        return None
    sites = [v.split(":", 1)[1] for v in value if str(v).startswith("site:")]
    groups = [v.split(":", 1)[1] for v in value if str(v).startswith("group:")]
    return sites, groups


def post_form(
    lang: str,
    campaign: Campaign,
    current: Status | None,
    meta: str,
    places: bool = False,
) -> View:
    blocks = [
        _select("status", word(lang, "status"), _status_options(lang), initial=_value(current)),
        _select(
            "urgency", word(lang, "urgency"), _urgency_options(lang), initial=Urgency.ROUTINE.value
        ),
        _text(
            "headline",
            word(lang, "headline"),
            max_length=HEADLINE_MAX,
            hint=word(lang, "headline_hint"),
        ),
        _text("body", word(lang, "body"), max_length=BODY_INPUT_MAX, multiline=True, optional=True),
        _text("next_step", word(lang, "next_step"), max_length=NEXT_STEP_MAX, optional=True),
    ]
    for extra in campaign.languages[1:]:  # each other language's wording, optional
        for key, max_length, multiline in (
            ("headline", HEADLINE_MAX, False),
            ("body", BODY_INPUT_MAX, True),
            ("next_step", NEXT_STEP_MAX, False),
        ):
            name = _language_name(extra, lang)
            label = word(lang, "in_language", label=word(lang, key), language=name)
            blocks.append(
                _text(
                    f"{key}_{extra}",
                    label,
                    max_length=max_length,
                    multiline=multiline,
                    optional=True,
                )
            )
    if places:  # a campaign with sites
        blocks.append(audience_input(lang))
    blocks.append(
        _input("publish_at", word(lang, "publish_at"), {"type": "datetimepicker"}, optional=True)
    )
    return _modal(
        POST,
        word(lang, "post_title"),
        blocks,
        submit=word(lang, "preview"),
        close=word(lang, "cancel"),
        meta=meta,
    )


def pick_form(
    kind: str,
    lang: str,
    updates: Iterable[Update],
    campaign: Campaign,
    meta: str,
    *,
    preselect: int | None = None,
) -> View:
    """Choose an update to edit / retract / approve (retract also asks for the reason)."""
    options = [(str(u.id), _update_label(u, lang)) for u in updates]
    blocks = [
        _select(
            "update",
            word(lang, "update"),
            options,
            initial=None if preselect is None else str(preselect),
        )
    ]
    if kind == "edit" and len(campaign.languages) > 1:
        blocks.append(
            _select(
                "language",
                word(lang, "language"),
                [(code, _language_name(code, lang)) for code in campaign.languages],
                initial=lang if lang in campaign.languages else campaign.default_language,
            )
        )
    if kind == "retract":
        blocks.append(_text("reason", word(lang, "reason"), max_length=REASON_MAX, multiline=True))
    submit = {"edit": "next", "retract": "preview", "approve": "preview"}[kind]
    return _modal(
        PICK,
        word(lang, f"{kind}_title"),
        blocks,
        submit=word(lang, submit),
        close=word(lang, "cancel"),
        meta=meta,
    )


def edit_form(
    lang: str, update: Update, text_language: str, meta: str, stale_after: str | None = None
) -> View:
    """The update's text in `text_language` to change; `stale_after` names the language(s)
    edited since that text was written, so the admin sees it may no longer match. A language
    the update has no wording in yet starts empty: the admin writes it, headline first."""
    text = update.texts.get(text_language) or UpdateText("")
    blocks: list[Block] = []
    if stale_after:
        note = stale_note(lang, text_language, stale_after)
        blocks.append({"type": "context", "elements": [mrkdwn(escape(note))]})
    blocks += [
        _select("status", word(lang, "status"), _status_options(lang), initial=update.status.value),
        _select(
            "urgency", word(lang, "urgency"), _urgency_options(lang), initial=update.urgency.value
        ),
        _text("headline", word(lang, "headline"), max_length=HEADLINE_MAX, initial=text.headline),
        _text(
            "body",
            word(lang, "body"),
            max_length=BODY_INPUT_MAX,
            multiline=True,
            initial=text.body,
            optional=True,
        ),
        _text(
            "next_step",
            word(lang, "next_step"),
            max_length=NEXT_STEP_MAX,
            initial=text.next_step,
            optional=True,
        ),
        _text("reason", word(lang, "reason"), max_length=REASON_MAX, multiline=True),
        _input(
            "correction",
            word(lang, "correction"),
            {
                "type": "checkboxes",
                "options": [_option("yes", word(lang, "correction_yes"))],
            },
            optional=True,
        ),
    ]
    return _modal(
        EDIT,
        word(lang, "edit_title"),
        blocks,
        submit=word(lang, "preview"),
        close=word(lang, "cancel"),
        meta=meta,
    )


def confirm_view(
    lang: str, intro: str, messages: Sequence[OutboundMessage], submit_key: str, meta: str
) -> View:
    """The update as members will see it, with one button to go ahead ("Back" returns to
    the form, whose inputs Slack keeps)."""
    blocks: list[Block] = [{"type": "context", "elements": [mrkdwn(escape(intro))]}]
    for message in messages:
        room = MAX_MODAL_BLOCKS - len(blocks) - 1
        if room < 2:
            break
        blocks.append({"type": "divider"})
        preview = replace(message, footer=word(lang, "preview_footer"), links=())
        blocks += message_blocks(preview, max_blocks=room)
    return _modal(
        CONFIRM,
        word(lang, "confirm_title"),
        blocks,
        submit=word(lang, submit_key),
        close=word(lang, "back"),
        meta=meta,
    )


def result_view(lang: str, messages: Sequence[OutboundMessage], *, ok: bool) -> View:
    """What happened. After success, closing closes every view of the form; after a refusal,
    "Back" returns to the form to fix it."""
    blocks = stacked_blocks(messages, max_blocks=MAX_MODAL_BLOCKS)
    return _modal(
        RESULT,
        word(lang, "done_title" if ok else "failed_title"),
        blocks or [{"type": "section", "text": mrkdwn(" ")}],
        submit=None,
        close=word(lang, "close" if ok else "back"),
        clear_on_close=ok,
    )


def note_view(lang: str, title_key: str, text: str, *, clear_on_close: bool = True) -> View:
    return _modal(
        RESULT,
        word(lang, title_key),
        [{"type": "section", "text": mrkdwn(escape(text))}],
        submit=None,
        close=word(lang, "close"),
        clear_on_close=clear_on_close,
    )


def _update_label(update: Update, lang: str) -> str:
    label = word(lang, "pick_hint", id=update.id, headline=update.text(lang).headline)
    state = {
        UpdateState.PENDING_APPROVAL: "state_pending",
        UpdateState.SCHEDULED: "state_scheduled",
        UpdateState.RETRACTED: "state_retracted",
    }.get(update.state)
    suffix = f" ({word(lang, state)})" if state else ""
    if len(label) + len(suffix) > OPTION_MAX:
        label = label[: OPTION_MAX - len(suffix) - 1].rstrip() + "…"
    return label + suffix


def _value(status: Status | None) -> str | None:
    return None if status is None else status.value
