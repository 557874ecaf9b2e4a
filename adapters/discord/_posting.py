"""Admin posting on Discord: a modal to write the update, a preview, then Post or Cancel.

The preview's buttons are `DynamicItem`s: their custom id carries the draft's token
(`strike:draft:post:<token>`), so a click is understood by any client object, including one
rebuilt after a gateway failure. Drafts live in the adapter (`Drafts`) for 15 minutes, an
interaction token's life; a click on an expired or already-used preview says so.
"""

from __future__ import annotations

import re
import secrets
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import discord

from bot.ports import HEADLINE_MAX, NEXT_STEP_MAX, Urgency, i18n

if TYPE_CHECKING:
    from adapters.discord._interactions import Handlers

DRAFT_TTL = 15 * 60.0
TEXT_INPUT_MAX = 4000  # Discord's limit for one text input
MODAL_TITLE_MAX = 45

WORDS = i18n.Words("discord")


def word(language: str, key: str, /, **values: object) -> str:
    return WORDS[i18n.pick(language)][key].format(**values)


@dataclass(frozen=True, slots=True)
class PostDraft:
    """What an admin wrote in the modal, waiting for Post or Cancel."""

    user_id: str
    status: str
    headline: str
    body: str
    next_step: str
    urgency: str
    publish_at: str | None
    next_step_at: str | None
    created: float


class Drafts:
    """Drafts by token. `take` removes, so one draft is posted at most once."""

    def __init__(self, ttl: float = DRAFT_TTL) -> None:
        self.ttl = ttl
        self._drafts: dict[str, PostDraft] = {}

    def put(self, draft: PostDraft) -> str:
        self._expire()
        token = secrets.token_hex(8)
        self._drafts[token] = draft
        return token

    def peek(self, token: str) -> PostDraft | None:
        self._expire()
        return self._drafts.get(token)

    def take(self, token: str) -> PostDraft | None:
        self._expire()
        return self._drafts.pop(token, None)

    def __len__(self) -> int:
        return len(self._drafts)

    def _expire(self) -> None:
        cutoff = time.monotonic() - self.ttl
        for token in [t for t, d in self._drafts.items() if d.created < cutoff]:
            del self._drafts[token]


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
    ) -> None:
        super().__init__(
            title=title[:MODAL_TITLE_MAX],
            timeout=DRAFT_TTL,
            custom_id=f"strike:{kind}:{secrets.token_hex(8)}",
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
        for item in (self.headline, self.body, self.next_step):
            self.add_item(item)

    # Modal.on_error takes no `item`, unlike View's; discord.py ignores the same mismatch.
    async def on_error(  # type: ignore[override]
        self, interaction: discord.Interaction[Any], error: Exception, /
    ) -> None:
        await self.handlers.unexpected(interaction, error)


class PostModal(_UpdateModal):
    """Headline, body, next step and urgency. The status comes from the slash command."""

    def __init__(
        self,
        handlers: Handlers,
        *,
        language: str,
        status: str,
        publish_at: str | None,
        next_step_at: str | None,
    ) -> None:
        super().__init__(
            handlers, title=word(language, "post_title"), kind="post", language=language
        )
        self.language = language
        self.status = status
        self.publish_at = publish_at
        self.next_step_at = next_step_at
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

    async def on_submit(self, interaction: discord.Interaction[Any], /) -> None:
        draft = PostDraft(
            user_id=str(interaction.user.id),
            status=self.status,
            headline=_value(self.headline),
            body=_value(self.body),
            next_step=_value(self.next_step),
            urgency=_value(self.urgency) or Urgency.ROUTINE.value,
            publish_at=self.publish_at,
            next_step_at=self.next_step_at,
            created=time.monotonic(),
        )
        await self.handlers.preview_post(interaction, draft)


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

    def __init__(self, handlers: Handlers, *, ui_language: str, request: EditRequest) -> None:
        super().__init__(
            handlers,
            title=word(ui_language, "edit_title", id=request.update_id),
            kind="edit",
            language=ui_language,
            headline=request.headline,
            body=request.body,
            next_step=request.next_step,
        )
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


DRAFT_BUTTON = re.compile(r"strike:draft:(?P<action>post|cancel):(?P<token>[0-9a-f]{16})")


class DraftButton(
    discord.ui.DynamicItem[discord.ui.Button[discord.ui.View]],
    template=DRAFT_BUTTON,
):
    """Post or Cancel on a preview; the handlers are found through the client."""

    def __init__(self, action: str, token: str, *, label: str = "") -> None:
        style = discord.ButtonStyle.success if action == "post" else discord.ButtonStyle.secondary
        super().__init__(
            discord.ui.Button(
                label=label or action, style=style, custom_id=f"strike:draft:{action}:{token}"
            )
        )
        self.action = action
        self.token = token

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[Any],
        item: discord.ui.Item[Any],
        match: re.Match[str],
        /,
    ) -> DraftButton:
        return cls(match["action"], match["token"])

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        handlers: Handlers | None = getattr(interaction.client, "handlers", None)
        if handlers is not None:
            await handlers.draft_button(interaction, self.action, self.token)


def preview_buttons(token: str, language: str) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    view.add_item(DraftButton("post", token, label=word(language, "post")))
    view.add_item(DraftButton("cancel", token, label=word(language, "cancel")))
    return view
