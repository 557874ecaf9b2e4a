"""Demands as living data: what an admin may change about a demand, checked, and the update
that tells people about it when the admin asks.

Every surface (CLI, chat, admin API) calls the same `Admin` use cases (`record_demand`,
`edit_demand`, `add_demand`, `retire_demand`); this module holds what they share: the
editable fields, the check of a change, the diff kept in the demand's history, and the
wording of the announcement. Nothing here touches the store.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from bot import i18n
from bot.editorial.rules import HEADLINE_MAX, OFFER_MAX, check_field, check_language
from bot.errors import InvalidInput
from bot.i18n.sentences import localized_error
from bot.messages.fallback import shown, shown_demand
from bot.models import Demand, DemandChange, DemandEvent, DemandText, UpdateText

# The fields of a demand's wording an admin may edit, per language.
FIELDS = ("title", "summary", "union_position", "employer_offer", "facts")
# What people may type for each (CLI options, chat `key=value`, API keys).
FIELD_ALIASES = {
    "title": "title", "titulo": "title", "título": "title",
    "summary": "summary", "resumen": "summary",
    "union": "union_position", "union_position": "union_position", "ask": "union_position",
    "sindicato": "union_position",
    "offer": "employer_offer", "employer_offer": "employer_offer", "oferta": "employer_offer",
    "facts": "facts", "datos": "facts",
}  # fmt: skip
KEY_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
FACTS_SEPARATOR = ";"  # facts typed on one line: "15% of schools have a nurse; 1 per 1,000"
FACT_MAX = 500
FACTS_MAX = 20

# The announcement's sentences: the catalogue's "demands" table (bot/locales).
WORDS = i18n.Words("demands")


@dataclass(frozen=True, slots=True)
class DemandWording:
    """An edit of one language's wording: only the fields given change. `facts` replaces
    the whole list."""

    title: str | None = None
    summary: str | None = None
    union_position: str | None = None
    employer_offer: str | None = None
    facts: Sequence[str] | None = None

    def given(self) -> bool:
        return any(getattr(self, name) is not None for name in FIELDS)


def field_name(word: str) -> str | None:
    """The field a typed word names (`union`, `oferta`...), or None."""
    return FIELD_ALIASES.get(word.strip().lower().lstrip("-"))


def split_facts(text: str) -> list[str]:
    """Facts typed on one line, separated by semicolons."""
    return [part.strip() for part in text.split(FACTS_SEPARATOR) if part.strip()]


def check_key(key: object) -> str:
    text = str(key or "").strip()
    if not KEY_PATTERN.match(text):
        raise localized_error(InvalidInput, "demands.bad_key", key=text[:70])
    return text


def check_wording(
    wordings: Mapping[str, DemandWording], languages: Sequence[str]
) -> dict[str, DemandWording]:
    """Each language's edit, cleaned and limited; a language with nothing given is left out."""
    checked: dict[str, DemandWording] = {}
    for lang, wording in wordings.items():
        check_language(lang, languages)
        if not wording.given():
            continue
        facts = None
        if wording.facts is not None:
            facts = [check_field(f, FACT_MAX, what="fact") for f in wording.facts]
            facts = [f for f in facts if f]
            if len(facts) > FACTS_MAX:
                raise InvalidInput(f"Give at most {FACTS_MAX} facts per language.")
        checked[lang] = DemandWording(
            title=None
            if wording.title is None
            else check_field(wording.title, HEADLINE_MAX, required=True, what="title"),
            summary=None
            if wording.summary is None
            else check_field(wording.summary, OFFER_MAX, what="summary"),
            union_position=None
            if wording.union_position is None
            else check_field(wording.union_position, OFFER_MAX, what="union position"),
            employer_offer=None
            if wording.employer_offer is None
            else check_field(wording.employer_offer, OFFER_MAX, what="employer offer"),
            facts=None if facts is None else tuple(facts),
        )
    return checked


def apply_wording(
    demand: Demand, wordings: Mapping[str, DemandWording]
) -> tuple[dict[str, DemandText], dict[str, dict[str, tuple[str, str]]]]:
    """The demand's texts after the edit, and what changed: language -> field ->
    (before, after). A language the demand has no wording in yet starts from nothing, and
    must then be given a title."""
    texts = dict(demand.texts)
    changes: dict[str, dict[str, tuple[str, str]]] = {}
    for lang, wording in wordings.items():
        base = texts.get(lang)
        if base is None and wording.title is None:
            raise localized_error(InvalidInput, "demands.no_wording", key=demand.key, language=lang)
        before = base or DemandText(title="")
        after = DemandText(
            title=before.title if wording.title is None else wording.title,
            summary=before.summary if wording.summary is None else wording.summary,
            union_position=before.union_position
            if wording.union_position is None
            else wording.union_position,
            employer_offer=before.employer_offer
            if wording.employer_offer is None
            else wording.employer_offer,
            facts=before.facts if wording.facts is None else tuple(wording.facts),
        )
        diff = {
            name: (_plain(getattr(before, name)), _plain(getattr(after, name)))
            for name in FIELDS
            if getattr(before, name) != getattr(after, name)
        }
        if diff:
            texts[lang] = after
            changes[lang] = diff
    return texts, changes


def _plain(value: object) -> str:
    if isinstance(value, tuple):
        return "\n".join(str(v) for v in value)
    return str(value)


def check_offer_date(at: datetime | None, now: datetime) -> datetime:
    """When an offer was made: now by default, earlier if given, never later than now."""
    if at is None:
        return now
    if at.tzinfo is None:
        raise InvalidInput("Give the offer's date with its time zone.")
    if at > now:
        raise localized_error(
            InvalidInput, "demands.offer_in_future", date=at.isoformat(timespec="minutes")
        )
    return at


def announcement(
    demand: Demand,
    change: DemandEvent,
    languages: Sequence[str],
    status_label: Mapping[str, str],
) -> dict[str, UpdateText]:
    """The update that tells people about a change, in every language the campaign speaks
    (a language the demand has no wording in uses the first one's)."""
    texts: dict[str, UpdateText] = {}
    for lang in languages:
        words = WORDS[lang]
        title = shown_demand(demand, lang, languages[0]).title
        lines: list[str] = []
        if change.kind is DemandChange.ADDED:
            lines.append(words["added"].format(title=title))
            text = shown_demand(demand, lang, languages[0])
            for name in ("summary", "union_position"):
                if getattr(text, name):
                    lines.append(
                        words["field"].format(label=words[name], value=getattr(text, name))
                    )
        elif change.kind is DemandChange.RETIRED:
            lines.append(words["retired"].format(title=title))
        elif change.kind is DemandChange.EDIT:
            edited = change.changes.get(lang) or next(iter(change.changes.values()), {})
            for name, (_before, after) in edited.items():
                value = after.replace("\n", "; ")
                lines.append(words["field"].format(label=words[name], value=value or "—"))
        else:
            offer = shown(change.offer, lang, languages[0])
            if offer:
                lines.append(words["offer"].format(offer=offer))
            lines.append(words["status"].format(status=status_label.get(lang, "")))
            lines.append(words["source"].format(source=change.source))
        if change.note:
            lines.append(words["why"].format(reason=change.note))
        headline = words["headline"].format(title=title)
        if len(headline) > HEADLINE_MAX:
            headline = headline[: HEADLINE_MAX - 1] + "…"
        texts[lang] = UpdateText(headline=headline, body="\n".join(lines))
    return texts


__all__ = [
    "FIELDS",
    "DemandWording",
    "announcement",
    "apply_wording",
    "check_key",
    "check_offer_date",
    "check_wording",
    "field_name",
    "split_facts",
]
