"""Translations of the campaign's content: what is missing or stale, per language.

A text (an update, a demand) has one wording per campaign language. When an admin edits
some languages' wording and not the others', the others may now say something else: they
are **stale** until someone updates them or confirms they still say the same
(`strikebot translations confirm`). Stale marks live in the store (`stale_texts`), per
target ("update:12", "demand:pay") and language; `mark_edited` is called in the same
transaction as the edit, so a mark never goes missing.

The catalogue's side (the bot's own sentences) is in `bot.catalogue_tools`; the report
combines both (`strikebot translations report`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from bot import i18n
from bot.models import Campaign, Demand, Families, Update
from bot.store import Tx
from bot.store.translations import StaleText

__all__ = [
    "ContentGap",
    "StaleText",
    "content_gaps",
    "demand_target",
    "mark_edited",
    "stale_note",
    "update_target",
]

UPDATE_FIELDS = ("headline", "body", "next_step")
DEMAND_FIELDS = ("title", "summary", "union_position", "employer_offer", "facts")


def stale_note(reader: str, language: str, edited: str) -> str:
    """What an admin opening `language`'s wording to edit reads when it is stale (written
    before the `edited` languages' wording changed, comma-separated as in `StaleText`), in
    the reader's language."""
    names = ", ".join(i18n.language_name(code, reader) for code in edited.split(","))
    sentence = i18n.text(reader, "translations.stale_note")
    return sentence.format(language=i18n.language_name(language, reader), edited=names)


def update_target(update_id: int) -> str:
    return f"update:{update_id}"


def demand_target(key: str) -> str:
    return f"demand:{key}"


async def mark_edited(
    tx: Tx,
    target: str,
    *,
    written: Iterable[str],
    changed: Iterable[str],
    editor: str,
    now: datetime,
) -> list[str]:
    """After an edit of `target` that changed the wording in `changed`: those languages are
    current again, and, unless every one of them was stale (the edit caught them up), each
    other language in `written` (the ones that have a wording) is now stale. Returns the
    languages marked stale."""
    changed = sorted(set(changed))
    if not changed:
        return []
    behind = {s.language for s in await tx.stale_texts(target)}
    await tx.clear_stale(target, changed)
    if all(lang in behind for lang in changed):
        return []
    stale = [lang for lang in written if lang not in changed]
    await tx.mark_stale(target, stale, ",".join(changed), editor, now)
    return stale


@dataclass(frozen=True, slots=True)
class ContentGap:
    """One text of the campaign that lacks a language, or whose wording there is stale."""

    target: str  # "update:12", "demand:pay"
    language: str
    missing: tuple[str, ...] = ()  # fields with text in another language but none here
    stale: StaleText | None = None
    source: Mapping[str, str] = field(default_factory=dict)  # the fields in the first language
    current: Mapping[str, str] = field(default_factory=dict)  # the fields in `language`

    @property
    def to_translate(self) -> tuple[str, ...]:
        """The fields a translator should write: all of them when stale, else the missing."""
        if self.stale is not None:
            return tuple(name for name, value in self.source.items() if value)
        return self.missing

    def as_json(self) -> dict[str, object]:
        return {
            "target": self.target,
            "language": self.language,
            "missing": list(self.missing),
            "stale": None
            if self.stale is None
            else {
                "since": self.stale.since.isoformat(),
                "edited": self.stale.edited.split(","),
                "editor": self.stale.editor,
            },
        }


def _missing(texts: Mapping[str, Mapping[str, str]], language: str) -> tuple[str, ...]:
    own = texts.get(language, {})
    fields: list[str] = []
    for wording in texts.values():
        for name, value in wording.items():
            if value and not own.get(name) and name not in fields:
                fields.append(name)
    return tuple(fields)


FAMILIES_TARGET = "families"


def _families_fields(families: Families) -> dict[str, dict[str, str]]:
    """The campaign file's families' texts by language, named as `[families]` names them
    (`meals`, `answers.care`, `questions[0].answer`, `title`)."""
    fields: dict[str, dict[str, str]] = {}
    for q in families.questions:
        own = bool(q.wording)
        named = f"{q.key}.answer" if own else q.key
        if not own and q.key not in ("meals", "ask"):
            named = f"answers.{q.key}"
        for language, text in q.answer.items():
            fields.setdefault(language, {})[named] = text
        for language, text in q.wording.items():
            fields.setdefault(language, {})[f"{q.key}.question"] = text
    for language, text in families.title.items():
        fields.setdefault(language, {})["title"] = text
    return fields


def update_fields(update: Update) -> dict[str, dict[str, str]]:
    return {
        lang: {"headline": t.headline, "body": t.body, "next_step": t.next_step}
        for lang, t in update.texts.items()
    }


def demand_fields(demand: Demand) -> dict[str, dict[str, str]]:
    return {
        lang: {
            "title": t.title,
            "summary": t.summary,
            "union_position": t.union_position,
            "employer_offer": t.employer_offer,
            "facts": "\n".join(t.facts),
        }
        for lang, t in demand.texts.items()
    }


async def content_gaps(
    tx: Tx, campaign: Campaign, now: datetime, languages: Iterable[str] | None = None
) -> list[ContentGap]:
    """Every text of the campaign missing a language or stale there (retracted updates
    left out: nobody reads them again), for `languages` (default: all but the first)."""
    wanted = list(languages or campaign.languages[1:])
    stale = {(s.target, s.language): s for s in await tx.stale_texts()}
    texts: list[tuple[str, dict[str, dict[str, str]]]] = []
    for update in await tx.list_updates(now, limit=None, visible_only=False):
        if not update.retracted:
            texts.append((update_target(update.id), update_fields(update)))
    for demand in await tx.list_demands(with_history=False):
        texts.append((demand_target(demand.key), demand_fields(demand)))
    families = campaign.families
    if families is not None:  # the campaign file's [families]: written there, not exported
        texts.append((FAMILIES_TARGET, _families_fields(families)))
    gaps = []
    first = campaign.default_language
    for target, fields in texts:
        source = fields.get(first) or next(iter(fields.values()), {})
        for language in wanted:
            missing = _missing(fields, language)
            mark = stale.get((target, language))
            if missing or mark is not None:
                own = fields.get(language, {})
                gaps.append(ContentGap(target, language, missing, mark, source, own))
    return gaps


@dataclass(slots=True)
class ContentImport:
    """What importing a translator's file did to the campaign's texts."""

    applied: list[str] = field(default_factory=list)  # targets written
    outdated: list[str] = field(default_factory=list)  # the source changed since the export
    unknown: list[str] = field(default_factory=list)  # no such update, demand or field
    fuzzy: list[str] = field(default_factory=list)  # the translator marked them unsure


def parse_content_context(context: str) -> tuple[str, str] | None:
    """'content:update:12:headline' -> ('update:12', 'headline')."""
    parts = context.split(":")
    if len(parts) != 4 or parts[0] != "content":
        return None
    return f"{parts[1]}:{parts[2]}", parts[3]


def group_content(
    entries: Iterable[tuple[str, str, str, bool]],
) -> dict[str, dict[str, tuple[str, str, bool]]]:
    """(context, source, translation, fuzzy) -> target -> field -> (source, translation,
    fuzzy), for the messages that are campaign texts."""
    grouped: dict[str, dict[str, tuple[str, str, bool]]] = {}
    for context, source, translation, fuzzy in entries:
        parsed = parse_content_context(context)
        if parsed is not None:
            target, name = parsed
            grouped.setdefault(target, {})[name] = (source, translation, fuzzy)
    return grouped
