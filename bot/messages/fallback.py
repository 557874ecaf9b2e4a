"""What a reader is shown of what people wrote, in their language or, where it is missing,
in the campaign's main language — marked for them: "Fair pay (in English)".

The one rule for every field a reader sees (an update's headline, body and next step; a
demand's title, summary, union's ask, offer and facts; a correction's or retraction's
reason; the families' answers; an offer in a demand's history), applied the same way by
every renderer: the messages (`bot.messages.compose`), chat answers (`bot.commands`),
briefings (`bot.briefings.compose`) and the web pages and feeds (through `bot.ports`).
The lookup itself is `bot.models.wording`; this module adds the mark.

When a whole text has no wording in the reader's language, only its heading (headline,
title) and next step carry the mark: the body shown under a marked heading says the same.
"""

from __future__ import annotations

from collections.abc import Mapping

from bot import i18n
from bot.models import Demand, DemandText, Update, UpdateText, wording

__all__ = ["mark", "shown", "shown_demand", "shown_facts", "shown_update"]


def mark(text: str, written_in: str, reader: str) -> str:
    """`text` followed by "(in English)" in the reader's words when it is written in
    another language than the reader's; unchanged otherwise (or when empty)."""
    if not text or i18n.pick(written_in) == i18n.pick(reader):
        return text
    name = i18n.local(lambda lang: i18n.language_name(written_in, lang))
    return f"{text} {i18n.say(reader, 'messages.in_language', language=name)}"


def shown(texts: Mapping[str, str], reader: str, main: str) -> str:
    """One field's text for a reader of `reader`: theirs, else the main language's, marked."""
    text, language = wording(texts, reader, main)
    return mark(text or "", language, reader)


def shown_update(update: Update, reader: str, main: str) -> UpdateText:
    """An update's wording for a reader: each field in their language, else the main
    language's, marked (see the module's note on a whole text)."""
    own = update.texts.get(reader)
    whole = own is None or not own.headline.strip()
    fields: list[str] = []
    for name in ("headline", "body", "next_step"):
        text, language = wording({k: getattr(t, name) for k, t in update.texts.items()},
                                 reader, main)  # fmt: skip
        if whole and name == "body":
            fields.append(text or "")
        else:
            fields.append(mark(text or "", language, reader))
    return UpdateText(*fields)


def shown_demand(demand: Demand, reader: str, main: str) -> DemandText:
    """A demand's wording for a reader: each field in their language, else the main
    language's, marked (a demand with no wording of theirs: its title only)."""
    own = demand.texts.get(reader)
    whole = own is None or not own.title.strip()
    texts = demand.texts
    fields: list[str] = []
    for name in ("title", "summary", "union_position", "employer_offer"):
        text, language = wording({k: getattr(t, name) for k, t in texts.items()}, reader, main)
        fields.append(mark(text or "", language, reader) if name == "title" or not whole else
                      text or "")  # fmt: skip
    title, summary, union_position, employer_offer = fields
    facts = shown_facts(demand, reader, main, marked=not whole)
    return DemandText(title, summary, union_position, employer_offer, facts)


def shown_facts(demand: Demand, reader: str, main: str, *, marked: bool = True) -> tuple[str, ...]:
    """A demand's facts for a reader: theirs, else the main language's with the last marked."""
    facts, language = wording({k: t.facts for k, t in demand.texts.items()}, reader, main)
    if not facts:
        return ()
    if not marked:
        return facts
    return (*facts[:-1], mark(facts[-1], language, reader))
