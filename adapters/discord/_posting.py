"""Admin posting on Discord: a modal to write the update, the desk's preview, then Post or
Cancel.

The preview's buttons are `DynamicItem`s: their custom id carries the desk draft's token
(`strike:draft:post:<token>`), so a click is understood by any client object, including one
rebuilt after a gateway failure, on any instance; a click on a used or cancelled preview
says so. What an open modal continues from (the status and times given with `/strike post`,
the update being edited) is kept as a form in progress (`Desk.keep_form`) under the
modal's token, so its submission can land on another instance (the Interactions Endpoint
URL behind a load balancer, or a gateway taken over meanwhile) and still be understood.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import discord

from bot.ports import HEADLINE_MAX, NEXT_STEP_MAX, Urgency, i18n

if TYPE_CHECKING:
    from adapters.discord._interactions import Handlers

MODAL_TTL = 15 * 60.0  # an interaction token's life: an open modal cannot outlive it
MODAL_FORM = "discord-modal"
TEXT_INPUT_MAX = 4000  # Discord's limit for one text input
MODAL_TITLE_MAX = 45
AUDIENCE_MAX = 400  # site and group codes, comma-separated

WORDS = i18n.Words("discord")


def word(language: str, key: str, /, **values: object) -> str:
    return WORDS[i18n.pick(language)][key].format(**values)


def _text(
    label: str,
    custom_id: str,
    *,
    hint: str,
    max_length: int,
    required: bool,
    paragraph: bool = False,
    default: str | None = None,
) -> discord.ui.Label[Any]:
    field: discord.ui.TextInput[Any] = discord.ui.TextInput(
        custom_id=custom_id,
        style=discord.TextStyle.paragraph if paragraph else discord.TextStyle.short,
        placeholder=hint[:100],
        max_length=max_length,
        required=required,
        default=default,
    )
    return discord.ui.Label(text=label[:45], component=field)


def _value(label: discord.ui.Label[Any]) -> str:
    component = label.component
    if isinstance(component, discord.ui.TextInput):
        return str(component.value or "").strip()
    if isinstance(component, discord.ui.Select):
        return str(component.values[0]) if component.values else ""
    return ""


class _UpdateModal(discord.ui.Modal):
    """Headline, details and next step (filled in with an update's text when editing)."""

    def __init__(
        self,
        handlers: Handlers,
        *,
        title: str,
        kind: str,
        language: str,
        headline: str | None = None,
        body: str | None = None,
        next_step: str | None = None,
        token: str | None = None,
        note: str = "",
    ) -> None:
        self.token = token or secrets.token_hex(8)
        super().__init__(
            title=title[:MODAL_TITLE_MAX],
            timeout=MODAL_TTL,
            custom_id=f"strike:{kind}:{self.token}",
        )
        self.handlers = handlers
        self.headline = _text(
            word(language, "headline"),
            "headline",
            hint=word(language, "headline_hint"),
            max_length=HEADLINE_MAX,
            required=True,
            default=None if headline is None else headline[:HEADLINE_MAX],
        )
        self.body = _text(
            word(language, "body"),
            "body",
            hint=word(language, "body_hint"),
            max_length=TEXT_INPUT_MAX,
            required=False,
            paragraph=True,
            default=None if body is None else body[:TEXT_INPUT_MAX] or None,
        )
        self.next_step = _text(
            word(language, "next_step"),
            "next_step",
            hint=word(language, "next_step_hint"),
            max_length=NEXT_STEP_MAX,
            required=False,
            default=None if next_step is None else next_step[:NEXT_STEP_MAX] or None,
        )
        if note:  # a line above the inputs (an edited wording's stale translation)
            self.add_item(discord.ui.TextDisplay(note))
        for item in (self.headline, self.body, self.next_step):
            self.add_item(item)

    # Modal.on_error takes no `item`, unlike View's; discord.py ignores the same mismatch.
    async def on_error(  # type: ignore[override]
        self, interaction: discord.Interaction[Any], error: Exception, /
    ) -> None:
        await self.handlers.unexpected(interaction, error)


class PostModal(_UpdateModal):
    """Headline, body, next step (in `text_language`) and urgency. The status comes from
    the slash command. With a `token`, it adds another language's wording to that draft
    (no urgency: the draft has one)."""

    def __init__(
        self,
        handlers: Handlers,
        *,
        language: str,
        status: str,
        publish_at: str | None,
        next_step_at: str | None,
        text_language: str,
        draft_token: str | None = None,
        token: str | None = None,
        audience: bool = False,
        audience_default: str | None = None,
    ) -> None:
        name = i18n.language_name(text_language, language)
        same = i18n.pick(text_language) == i18n.pick(language)
        super().__init__(
            handlers,
            title=word(language, "post_title")
            if same
            else word(language, "post_title_in", language=name),
            kind="post",
            language=language,
            token=token,
        )
        self.language = language
        self.text_language = text_language
        self.draft_token = draft_token
        self.status = status
        self.publish_at = publish_at
        self.next_step_at = next_step_at
        self.has_audience = audience and draft_token is None
        if draft_token is not None:
            return
        urgency: discord.ui.Select[Any] = discord.ui.Select(
            custom_id="urgency",
            options=[
                discord.SelectOption(
                    label=i18n.urgency_label(u, language),
                    value=u.value,
                    default=u is Urgency.ROUTINE,
                )
                for u in Urgency
            ],
            min_values=1,
            max_values=1,
            required=True,
        )
        self.urgency = discord.ui.Label(
            text=word(language, "urgency"),
            description=word(language, "urgency_hint")[:100],
            component=urgency,
        )
        self.add_item(self.urgency)
        # The fifth and last input a modal takes: whom it is for, in a campaign with sites.
        # Codes typed (a select in a modal holds 25 options, not a thousand schools), filled
        # in with those picked with autocomplete in the command's `only_for`.
        self.audience = _text(
            word(language, "audience"),
            "audience",
            hint=word(language, "audience_hint"),
            max_length=AUDIENCE_MAX,
            required=False,
            default=(audience_default or "").strip()[:AUDIENCE_MAX] or None,
        )
        if self.has_audience:
            self.add_item(self.audience)

    async def on_submit(self, interaction: discord.Interaction[Any], /) -> None:
        text = {
            "headline": _value(self.headline),
            "body": _value(self.body),
            "next_step": _value(self.next_step),
        }
        if self.draft_token is not None:
            await self.handlers.add_text(interaction, self.draft_token, self.text_language, text)
            return
        await self.handlers.preview_post(
            interaction,
            texts={self.text_language: text},
            status=self.status,
            urgency=_value(self.urgency) or Urgency.ROUTINE.value,
            publish_at=self.publish_at,
            next_step_at=self.next_step_at,
            sites=_value(self.audience) if self.has_audience else None,
        )


@dataclass(frozen=True, slots=True)
class EditRequest:
    update_id: int
    reason: str
    correction: bool
    language: str | None
    headline: str
    body: str
    next_step: str


class EditModal(_UpdateModal):
    """The update's current text, to change in place."""

    def __init__(
        self,
        handlers: Handlers,
        *,
        ui_language: str,
        request: EditRequest,
        token: str | None = None,
        note: str = "",
    ) -> None:
        super().__init__(
            handlers,
            title=word(ui_language, "edit_title", id=request.update_id),
            kind="edit",
            language=ui_language,
            headline=request.headline,
            body=request.body,
            next_step=request.next_step,
            token=token,
            note=note,
        )
        self.ui_language = ui_language
        self.request = request

    async def on_submit(self, interaction: discord.Interaction[Any], /) -> None:
        r = self.request
        new = {
            "headline": _value(self.headline),
            "body": _value(self.body),
            "next_step": _value(self.next_step),
        }
        # Compared with what the form showed: a body longer than one text input was shown
        # cut, and saving an untouched cut body would lose its end.
        old = {"headline": r.headline, "body": r.body[:TEXT_INPUT_MAX], "next_step": r.next_step}
        changed = {k: v for k, v in new.items() if v != old[k].strip()}
        await self.handlers.submit_edit(interaction, r, changed)


DRAFT_BUTTON = re.compile(
    r"strike:draft:(?P<action>post|cancel|add):(?P<token>[A-Za-z0-9_-]{16})"
    r"(?::(?P<language>[A-Za-z_]{2,16}))?"
)
MODAL_ID = re.compile(r"strike:(?P<kind>post|edit):(?P<token>[0-9a-f]{16})")


class DraftButton(
    discord.ui.DynamicItem[discord.ui.Button[discord.ui.View]],
    template=DRAFT_BUTTON,
):
    """Post, Cancel or Add <language> on a preview; the handlers are found through the
    client."""

    def __init__(self, action: str, token: str, *, label: str = "", language: str = "") -> None:
        style = discord.ButtonStyle.success if action == "post" else discord.ButtonStyle.secondary
        custom_id = f"strike:draft:{action}:{token}" + (f":{language}" if language else "")
        super().__init__(discord.ui.Button(label=label or action, style=style, custom_id=custom_id))
        self.action = action
        self.token = token
        self.language = language

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[Any],
        item: discord.ui.Item[Any],
        match: re.Match[str],
        /,
    ) -> DraftButton:
        return cls(match["action"], match["token"], language=match["language"] or "")

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        handlers: Handlers | None = getattr(interaction.client, "handlers", None)
        if handlers is not None:
            await handlers.draft_button(interaction, self.action, self.token, self.language)


def preview_buttons(
    token: str, language: str, missing: tuple[str, ...] = (), *, ready: bool = True
) -> discord.ui.View:
    """Post (when the draft can be posted) and Cancel, and one "Add <language>" per
    campaign language not written yet."""
    view = discord.ui.View(timeout=None)
    if ready:
        view.add_item(DraftButton("post", token, label=word(language, "post")))
    view.add_item(DraftButton("cancel", token, label=word(language, "cancel")))
    for code in missing:
        name = i18n.language_name(code, language)
        label = word(language, "add_language", language=name)[:80]
        view.add_item(DraftButton("add", token, label=label, language=code))
    return view


def modal_state(modal: discord.ui.Modal) -> dict[str, Any]:
    """What a modal of ours continues from, to keep in the store while it is open."""
    if isinstance(modal, PostModal):
        return {
            "kind": "post",
            "language": modal.language,
            "text_language": modal.text_language,
            "draft_token": modal.draft_token,
            "status": modal.status,
            "publish_at": modal.publish_at,
            "next_step_at": modal.next_step_at,
            "audience": modal.has_audience,
        }
    assert isinstance(modal, EditModal)
    return {"kind": "edit", "ui_language": modal.ui_language, "request": asdict(modal.request)}


def modal_from_state(
    handlers: Handlers, token: str, state: dict[str, Any]
) -> PostModal | EditModal | None:
    """The modal `modal_state` described, rebuilt on any instance (None if unreadable)."""
    try:
        if state.get("kind") == "post":
            return PostModal(
                handlers,
                language=str(state["language"]),
                status=str(state["status"]),
                publish_at=state.get("publish_at"),
                next_step_at=state.get("next_step_at"),
                text_language=str(state.get("text_language") or state["language"]),
                draft_token=state.get("draft_token"),
                token=token,
                audience=bool(state.get("audience")),
            )
        if state.get("kind") == "edit":
            return EditModal(
                handlers,
                ui_language=str(state["ui_language"]),
                request=EditRequest(**state["request"]),
                token=token,
            )
    except (KeyError, TypeError):
        return None
    return None
