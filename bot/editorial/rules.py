"""The rules people's text must meet, checked in one place for every surface.

Chat commands, platform forms, the CLI and the HTTP API all reach the admin use cases
(`bot.editorial.admin`), which apply these; the commands apply them first too, only so the person
reads the problem in their language before anything else happens. Each failure is an
`InvalidInput` carrying every language (`bot.i18n.sentences`).

Text hygiene: control characters (BEL, ESC, NUL...), C1 controls and bidirectional
embedding/override/isolate controls (U+202A-U+202E, U+2066-U+2069: "RLO" can make a link
read backwards) are removed; Windows newlines become newlines. Text that would look empty
(only spaces, zero-width characters, fillers) counts as empty. Every field has a length.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from bot import i18n
from bot.errors import InvalidInput
from bot.i18n.sentences import in_every_language, invalid, say
from bot.models import UpdateText

HEADLINE_MAX = 150  # the smallest title any platform shows whole (a Slack header block)
BODY_MAX = 20_000
NEXT_STEP_MAX = 300
REASON_MAX = 500
SOURCE_MAX = 300
OFFER_MAX = 2_000  # one language's wording of an offer or a position
NOTE_MAX = 500
LABEL_MAX = 200
YEARS = (1970, 2200)  # dates outside these are typos

# C0 and C1 controls except tab and newline; DEL; bidi embeddings, overrides and isolates.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ufff9-\ufffb]")
# What shows nothing: spaces and controls (as regular-expression escapes), then format
# characters, zero-width and filler characters. One class serves the core (`looks_empty`)
# and the HTTP API's schemas (`VISIBLE_TEXT_PATTERN`), so the two never disagree.
INVISIBLE = (
    r"\x00-\x20\x7f-\xa0"
    "\u00ad\u034f\u061c\u115f\u1160\u1680\u17b4\u17b5\u180b-\u180e\u2000-\u200f"
    "\u2028-\u202f\u205f-\u206f\u2800\u3000\u3164\ufe00-\ufe0f\ufeff\uffa0"
)
_VISIBLE = re.compile(f"[^{INVISIBLE}]")
# A JSON Schema / pydantic pattern: no NUL, and at least one character that shows.
VISIBLE_TEXT_PATTERN = rf"^[^\x00]*[^{INVISIBLE}][^\x00]*$"


def clean_text(value: object) -> str:
    """`value` as text people may publish: unsafe controls removed, newlines normalised,
    surrounding blanks stripped. Idempotent."""
    text = str(value).replace("\r\n", "\n").replace("\r", "\n")
    return _UNSAFE.sub("", text).strip()


def clean_line(value: object) -> str:
    """`clean_text` on one line: any run of whitespace (newlines too) becomes one space."""
    return " ".join(clean_text(value).split())


def looks_empty(text: str) -> bool:
    """True when nothing in `text` would show: blanks, controls, zero-width and fillers."""
    return _VISIBLE.search(text) is None


def _limited(text: str, maximum: int, key: str) -> str:
    if len(text) > maximum:
        raise invalid(key, length=len(text), max=maximum)
    return text


def check_update_text(headline: object, body: object = "", next_step: object = "") -> UpdateText:
    """One language's wording of an update, cleaned and checked."""
    head = clean_line(headline if headline is not None else "")
    text = clean_text(body if body is not None else "")
    step = clean_line(next_step if next_step is not None else "")
    if looks_empty(head):
        raise invalid("empty_headline")
    _limited(head, HEADLINE_MAX, "long_headline")
    _limited(text, BODY_MAX, "long_body")
    _limited(step, NEXT_STEP_MAX, "long_next_step")
    if looks_empty(text):
        text = ""
    if looks_empty(step):
        step = ""
    return UpdateText(head, text, step)


def check_texts(
    texts: Mapping[str, UpdateText],
    languages: Iterable[str],
    *,
    require: str | None = None,
) -> dict[str, UpdateText]:
    """Every language's wording checked; `require`: a language that must be there."""
    allowed = tuple(languages)
    for language in texts:
        check_language(language, allowed)
    if require is not None and require not in texts:
        raise in_every_language(
            InvalidInput,
            lambda lang: say(
                lang, "missing_language_text", language=i18n.language_name(require, lang)
            ),
        )
    checked = {}
    for lang, text in texts.items():
        try:
            checked[lang] = check_update_text(text.headline, text.body, text.next_step)
        except InvalidInput as exc:
            raise InvalidInput(
                say(i18n.source_language(), "in_language", language=lang, problem=exc.message),
                translations={
                    other: say(other, "in_language", language=lang, problem=exc.localized(other))
                    for other in exc.translations
                },
            ) from None
    return checked


def check_language(language: str, languages: Iterable[str]) -> str:
    allowed = tuple(languages)
    if language not in allowed:
        raise invalid("bad_language", value=language[:20], languages=", ".join(allowed))
    return language


def check_reason(value: object, example: str | None = None) -> str:
    """A reason members will read (an edit's, a retraction's): required, one paragraph."""
    reason = clean_text(value if value is not None else "")
    if looks_empty(reason):
        if example:
            raise invalid("no_reason", example=example)
        raise invalid("reason_required")
    return _limited(reason, REASON_MAX, "long_reason")


Reasons = str | Mapping[str, str]  # one reason (the main language's) or one per language


def check_reasons(value: Reasons, languages: Sequence[str]) -> dict[str, str]:
    """A reason members read, in each language it is given in: a plain string is the main
    language's (`languages[0]`); a mapping needs the main language's and may hold any other
    campaign language's. Returned main language first."""
    main = languages[0]
    given = {main: value} if isinstance(value, str) else dict(value)
    given = {check_language(lang, languages): text for lang, text in given.items()
             if lang == main or not looks_empty(clean_text(text))}  # fmt: skip
    if main not in given:
        raise in_every_language(
            InvalidInput,
            lambda lang: i18n.say(
                lang,
                "admin.reason_needs_main",
                language=i18n.local(lambda shown_in: i18n.language_name(main, shown_in)),
            ),
        )
    return {lang: check_reason(given[lang]) for lang in (main, *(k for k in given if k != main))}


def check_field(value: object, maximum: int, *, required: bool = False, what: str = "") -> str:
    """Any other text people write (a source, an offer, a note, a label): cleaned, limited."""
    text = clean_text(value if value is not None else "")
    if looks_empty(text):
        if required:
            raise invalid("field_required", field=what)
        return ""
    if len(text) > maximum:
        raise invalid("long_field", field=what, length=len(text), max=maximum)
    return text


def check_year(moment: datetime | None) -> datetime | None:
    """Refuse a mistyped year (0001, 9999) before it is stored: no time zone can show it."""
    if moment is not None and not YEARS[0] <= moment.year <= YEARS[1]:
        raise invalid(
            "implausible_date", date=moment.date().isoformat(), first=YEARS[0], last=YEARS[1]
        )
    return moment


__all__ = [
    "BODY_MAX",
    "HEADLINE_MAX",
    "LABEL_MAX",
    "NEXT_STEP_MAX",
    "NOTE_MAX",
    "OFFER_MAX",
    "REASON_MAX",
    "SOURCE_MAX",
    "VISIBLE_TEXT_PATTERN",
    "check_field",
    "check_language",
    "check_reason",
    "check_texts",
    "check_update_text",
    "check_year",
    "clean_line",
    "clean_text",
    "looks_empty",
]
