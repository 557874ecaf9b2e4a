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
from dataclasses import dataclass, replace
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
    """What an admin wrote in the modal(s), waiting for Post or Cancel: one wording per
    language, `(language, headline, body, next_step)`, in the order written."""

    user_id: str
    status: str
    texts: tuple[tuple[str, str, str, str], ...]
    urgency: str
    publish_at: str | None
    next_step_at: str | None
    created: float

    @property
    def languages(self) -> tuple[str, ...]:
        return tuple(text[0] for text in self.texts)

    def with_text(self, language: str, headline: str, body: str, next_step: str) -> PostDraft:
        """This draft with `language`'s wording added (or replaced)."""
        kept = tuple(t for t in self.texts if t[0] != language)
        return replace(self, texts=(*kept, (language, headline, body, next_step)))


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

    def replace(self, token: str, draft: PostDraft) -> None:
        """Keep `draft` under an existing token (another language was added)."""
        self._drafts[token] = draft

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
        token: str | None = None,
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
        )
        self.language = language
        self.text_language = text_language
        self.token = token
        self.status = status
        self.publish_at = publish_at
        self.next_step_at = next_step_at
        if token is not None:
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

    async def on_submit(self, interaction: discord.Interaction[Any], /) -> None:
        text = (_value(self.headline), _value(self.body), _value(self.next_step))
        if self.token is not None:
            await self.handlers.add_text(interaction, self.token, self.text_language, *text)
            return
        draft = PostDraft(
            user_id=str(interaction.user.id),
            status=self.status,
            texts=((self.text_language, *text),),
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


DRAFT_BUTTON = re.compile(
    r"strike:draft:(?P<action>post|cancel|add):(?P<token>[0-9a-f]{16})"
    r"(?::(?P<language>[A-Za-z_]{2,16}))?"
)


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


def preview_buttons(token: str, language: str, missing: tuple[str, ...] = ()) -> discord.ui.View:
    """Post and Cancel, and one "Add <language>" per campaign language not written yet."""
    view = discord.ui.View(timeout=None)
    view.add_item(DraftButton("post", token, label=word(language, "post")))
    view.add_item(DraftButton("cancel", token, label=word(language, "cancel")))
    for code in missing:
        name = i18n.language_name(code, language)
        label = word(language, "add_language", language=name)[:80]
        view.add_item(DraftButton("add", token, label=label, language=code))
    return view
