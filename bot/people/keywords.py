"""What a text or WhatsApp message to the number means: a keyword, or a message.

    words = Keywords(campaign.languages, campaign.default_language)
    words.read("  Stop ")                     -> Heard(Kind.STOP, "en", "stop")
    words.read("¡Sí!")                        -> Heard(Kind.YES, "es", "si")
    words.read("ESTADO")                      -> Heard(Kind.STATUS, "es", "estado")
    words.read("JOIN 482913")                 -> Heard(Kind.JOIN, "en", "join", "482913")
    words.read("End of the strike, when?")    -> Heard(None, "en", ...)   a question

One rule for every platform that reads texts (SMS, WhatsApp): a message is a keyword only
when the whole of it, trimmed of spaces and punctuation, with case and accents ignored, is
one of the words. That is how Twilio itself reads STOP, START and HELP (it opts a number
out only when the whole message is the keyword), so the bot and the carrier never disagree
about who is subscribed; a message that merely begins with "end" or "cancel" is a message,
answered with a short menu and changing nothing. JOIN and STATUS alone take one short
token after them (the sign-up form's code or a site's code; a site's code).

The words are data: the catalogue table `keywords` ("keywords.stop": "stop stopall
unsubscribe cancel end quit optout revoke"), one line of words per kind and language, so a
campaign's third language brings its own. The source language's words always work (the
carriers' STOP and HELP), answered in the campaign's main language when it has no other.
An earlier campaign language wins a word two languages share.

`guess_language` says which campaign language a message that is not a keyword is written
in, from the words of each language's catalogue, for a person the bot does not know yet.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cache

from bot import i18n

KEYWORD_MAX = 40  # characters: a longer message is never one keyword
_ENDS = re.compile(r"^[\W_]+|[\W_]+$")
# One token, as normalised: a sign-up code, or a site's code (`bot.audiences.codes`).
_ARGUMENT = re.compile(r"[0-9a-z][0-9a-z_-]{1,31}")


class Kind(StrEnum):
    """What a keyword asks for."""

    STOP = "stop"  # unsubscribe now (the carrier's opt-out words)
    JOIN = "join"  # sign up from this phone (and so confirm at once)
    YES = "yes"  # confirm a sign-up made on the page
    HELP = "help"  # who is sending and how to stop
    STATUS = "status"  # where the strike stands (as /strike status)
    DEMANDS = "demands"  # what the union asks and the employer offers (as /strike demands)
    NEXT = "next"  # the next step (as /strike next)
    PREFS = "prefs"  # the link to the person's preferences page (bot.people.preferences)


# The kinds that take one token after them: a sign-up code or a site's code (JOIN), a
# site's code (STATUS).
TAKING = frozenset({Kind.JOIN, Kind.STATUS})

# The kinds that ask a question the commands answer, and the command that answers each.
QUESTIONS: Mapping[Kind, str] = {Kind.STATUS: "status", Kind.DEMANDS: "demands", Kind.NEXT: "next"}

WORDS = i18n.Words("keywords")


@dataclass(frozen=True, slots=True)
class Heard:
    """What a message was: `kind` is None for a message that is not a keyword. `language`
    is the keyword's language (for a message, the campaign's main one: see `guess_language`);
    `word` the message as matched (lower case, no accents), for the consent record."""

    kind: Kind | None
    language: str
    word: str
    argument: str = ""  # what follows JOIN: the sign-up form's code, or a site's code

    @property
    def question(self) -> bool:
        return self.kind in QUESTIONS


def normalize(text: str) -> str:
    """A message as keywords are matched: NFKD, case-folded, without accents, trimmed of
    spaces and punctuation at both ends, inner spaces made one. "  ¡Sí! " -> "si"."""
    folded = unicodedata.normalize("NFKD", text[: KEYWORD_MAX * 4]).casefold()
    plain = "".join(ch for ch in folded if not unicodedata.combining(ch))
    return _ENDS.sub("", " ".join(plain.split()))


class Keywords:
    """The keywords of a campaign's languages, read from the catalogue once."""

    def __init__(self, languages: Sequence[str], default_language: str) -> None:
        self.languages = tuple(languages)
        self.default_language = default_language
        self.table = _table(self.languages, default_language)

    def read(self, body: str) -> Heard:
        """The keyword `body` is, if the whole of it is one; else a message."""
        word = normalize(body) if len(body.strip()) <= KEYWORD_MAX * 4 else ""
        found = self.table.get(word) if word and len(word) <= KEYWORD_MAX else None
        if found is None:
            return self._join_with(word) or Heard(None, self.default_language, word[:KEYWORD_MAX])
        kind, language = found
        return Heard(kind, language, word)

    def _join_with(self, word: str) -> Heard | None:
        """JOIN and one short token after it ("JOIN 482913", "UNIRSE LINCOLN-HS"): a sign-up
        with what the page told the person to send; STATUS and a site's code ("ESTADO
        ROOSEVELT"). Only those take one: every other keyword is the whole message."""
        head, _, rest = word.partition(" ")
        found = self.table.get(head)
        if found is None or found[0] not in TAKING or not _ARGUMENT.fullmatch(rest):
            return None
        return Heard(found[0], found[1], head, argument=rest)

    def first_word(self, kind: Kind, language: str) -> str:
        """The word a reply tells people to send, in `language` ("JOIN", "UNIRSE")."""
        words = WORDS[language][str(kind)].split()
        return words[0].upper() if words else str(kind).upper()


@cache
def _table(languages: tuple[str, ...], default: str) -> dict[str, tuple[Kind, str]]:
    found: dict[str, tuple[Kind, str]] = {}
    source = i18n.source_language()
    for language in (source, *reversed(languages)):
        answer = language if language in languages else default
        for kind in Kind:
            for word in WORDS[language][str(kind)].split():
                found[normalize(word)] = (kind, answer)
    return found


# -- which language a message is in -----------------------------------------------------

_WORD = re.compile(r"[^\W\d_]{3,}")


def guess_language(body: str, languages: Sequence[str], default: str) -> str:
    """The campaign language whose catalogue holds most of `body`'s words (of three letters
    or more, accents ignored), counting only words no other of these languages uses; the
    campaign's main language when none stands out. "¿Cuándo termina la huelga?" -> "es"."""
    if len(languages) < 2:
        return default
    words = {normalize(w) for w in _WORD.findall(body[:500])}
    scores: Counter[str] = Counter()
    vocabulary = _vocabularies(tuple(languages))
    for language in languages:
        scores[language] = len(words & vocabulary.get(language, frozenset()))
    best = scores.most_common(2)
    if not best or best[0][1] == 0 or (len(best) > 1 and best[0][1] == best[1][1]):
        return default
    return best[0][0]


@cache
def _vocabularies(languages: tuple[str, ...]) -> dict[str, frozenset[str]]:
    """Per language, the words of its sentences that none of the other languages' have."""
    catalogues = i18n.catalogues()
    raw: dict[str, set[str]] = {}
    for language in languages:
        texts: list[str] = []
        if language == catalogues.source:
            for value in catalogues.source_texts.values():
                texts.extend([value] if isinstance(value, str) else value)
        else:
            catalog = catalogues.catalogs.get(language)
            for message in catalog or ():
                if message.string and not message.fuzzy:
                    string = message.string
                    texts.extend([string] if isinstance(string, str) else string)
        raw[language] = {normalize(w) for text in texts for w in _WORD.findall(text)}
    return {
        language: frozenset(
            words - set().union(*(raw[other] for other in languages if other != language))
        )
        for language, words in raw.items()
    }
