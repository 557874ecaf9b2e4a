"""Reading what people type: numbers, times, days, zones, statuses, urgencies, quotes.

One home for every surface (chat commands, platform pickers, the CLI, the HTTP API). Each
parser accepts the already-typed value too (a `Status`, a `time`...), so platform pickers and
the text command share one path. Bad input raises `InvalidInput` whose sentence says what to
write instead, in every language (`bot.i18n.sentences`).
"""

from __future__ import annotations

import re
import shlex
import unicodedata
from collections.abc import Iterable
from datetime import UTC, datetime, time
from functools import cache
from typing import Annotated
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AfterValidator

from bot import i18n
from bot.editorial.rules import clean_text
from bot.errors import InvalidInput, StrikebotError
from bot.i18n.sentences import invalid, short
from bot.models import DemandStatus, QuietHours, Status, Urgency

MAX_TIMELINE = 25
MAX_UPDATE_ID = 2**31 - 1

_HHMM = re.compile(r"^([01]?\d|2[0-3])[:.h]([0-5]\d)$")
_ZONE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_+\-]*(?:/[A-Za-z0-9_+\-]+){0,2}$")
_EARLIEST = datetime(1, 1, 2, tzinfo=UTC)
_LATEST = datetime(9999, 12, 30, tzinfo=UTC)
_QUOTES = str.maketrans({"“": '"', "”": '"', "„": '"', "«": '"', "»": '"', "‘": "'", "’": "'"})

# Words people type for off / yes / no and for sets of days, in every language the bot
# speaks: catalogue messages ("parsing.words_off": "off none no never -"), each language's
# words added to the others'. Day names come from CLDR (wide and abbreviated), accents
# optional.
_PARSING = i18n.Words("parsing")


@cache
def _words(kind: str, languages: tuple[str, ...]) -> frozenset[str]:
    found: set[str] = set()
    for language in languages:
        for word in _PARSING[language][f"words_{kind}"].split():
            found |= {word.lower(), _folded(word)}
    return frozenset(found)


def words(kind: str) -> frozenset[str]:
    return _words(kind, i18n.languages())


@cache
def _day_names(languages: tuple[str, ...]) -> dict[str, int]:
    names: dict[str, int] = {}
    for language in languages:
        for width in ("wide", "abbreviated"):
            for number, name in i18n.day_names(language, width).items():
                for form in (name.lower().rstrip("."), _folded(name).rstrip(".")):
                    names.setdefault(form, number)
    for extra in _PARSING[i18n.source_language()]["day_aliases"].split(","):
        day, _, word = extra.partition(":")
        names.setdefault(word.strip(), int(day))
    return names


def tokenize(text: str) -> list[str]:
    """Split a typed command like a shell would; curly quotes from phones count as quotes."""
    try:
        return shlex.split(clean_text(text).translate(_QUOTES))
    except ValueError:
        raise invalid("bad_quotes") from None


def parse_count(value: object, maximum: int = MAX_TIMELINE) -> int:
    text = str(value).strip()
    if not re.fullmatch(r"\d{1,4}", text) or not 1 <= int(text) <= maximum:
        raise invalid("bad_count", value=short(value), max=maximum)
    return int(text)


def parse_update_id(value: object) -> int:
    text = str(value).strip().lstrip("#")
    if not re.fullmatch(r"\d{1,10}", text) or not 1 <= int(text) <= MAX_UPDATE_ID:
        raise invalid("bad_update_id", value=short(value))
    return int(text)


def is_off(value: object) -> bool:
    return value is None or str(value).strip().lower() in words("off")


def parse_hhmm(value: object) -> time:
    if isinstance(value, time):
        return value.replace(second=0, microsecond=0, tzinfo=None)
    match = _HHMM.match(str(value).strip().lower())
    if match is None:
        raise invalid("bad_time", value=short(value))
    return time(int(match[1]), int(match[2]))


def parse_optional_hhmm(value: object) -> time | None:
    """A time of day, or None for "off"."""
    return None if is_off(value) else parse_hhmm(value)


def parse_briefing_time(value: object, default: time) -> time | None:
    """A time of day, "on" for `default`, or None for "off"."""
    if str(value).strip().lower() in words("on"):
        return default
    return parse_optional_hhmm(value)


def parse_quiet_hours(value: object) -> QuietHours | None:
    """'22:00-06:00' (overnight is fine) or 'off'."""
    if isinstance(value, QuietHours):
        return value
    if is_off(value):
        return None
    parts = re.split(r"\s*(?:-|–|—|to|a)\s*", str(value).strip().lower())
    if len(parts) != 2:
        raise invalid("bad_quiet", value=short(value))
    try:
        start, end = parse_hhmm(parts[0]), parse_hhmm(parts[1])
    except InvalidInput:
        raise invalid("bad_quiet", value=short(value)) from None
    if start == end:
        raise invalid("bad_quiet", value=short(value))
    return QuietHours(start, end)


def parse_days(value: object) -> frozenset[int]:
    """'mon-fri', 'weekdays', 'daily', 'mon,wed,fri', 'lun-vie' or '0,1,2' (0 = Monday)."""
    if isinstance(value, frozenset | set | list | tuple):
        days = frozenset(int(d) for d in value if isinstance(d, int) and 0 <= d <= 6)
        if len(days) != len(value) or not days:
            raise invalid("bad_days", value=short(value))
        return days
    text = str(value).strip().lower()
    sets = {
        "daily": frozenset(range(7)),
        "weekdays": frozenset(range(5)),
        "weekend": frozenset({5, 6}),
    }
    for kind, days in sets.items():
        if text in words(kind):
            return days
    days_set: set[int] = set()
    for part in filter(None, (p.strip() for p in re.split(r"[,\s]+", text))):
        if "-" in part:
            first, _, last = part.partition("-")
            a, b = _day(first, value), _day(last, value)
            day = a
            days_set.add(day)
            while day != b:
                day = (day + 1) % 7
                days_set.add(day)
        else:
            days_set.add(_day(part, value))
    if not days_set:
        raise invalid("bad_days", value=short(value))
    return frozenset(days_set)


def _day(token: str, whole: object) -> int:
    token = token.strip().rstrip(".")
    names = _day_names(i18n.languages())
    found = names.get(token, names.get(_folded(token)))
    if found is not None:
        return found
    if re.fullmatch(r"[0-6]", token):
        return int(token)
    raise invalid("bad_days", value=short(whole))


def parse_timezone(value: object) -> str:
    name = str(value).strip()
    if name.upper() == "UTC":
        return "UTC"
    if not _ZONE_NAME.fullmatch(name) or len(name) > 64:
        raise invalid("bad_timezone", value=short(value))
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: "America" is a folder
        raise invalid("bad_timezone", value=short(value)) from None
    return name


def valid_timezone(value: str | None) -> str | None:
    """`value` if it names a time zone, else None (for hints from platforms)."""
    if not value:
        return None
    try:
        return parse_timezone(value)
    except InvalidInput:
        return None


def _folded(text: str) -> str:
    """Lower case without accents: 'Español' -> 'espanol'."""
    decomposed = unicodedata.normalize("NFKD", text.strip().lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def parse_language(value: object, languages: Iterable[str]) -> str:
    """'es', 'ES', 'es-MX', 'spanish' or 'español' -> 'es', if the campaign uses it. A
    language's name is understood in any of the campaign's languages (CLDR's names)."""
    allowed = tuple(languages)
    text = str(value).strip()
    names = {
        _folded(i18n.language_name(code, among)): code
        for code in allowed
        for among in (*allowed, None)
    }
    folded = _folded(text).replace("_", "-")
    code = names.get(folded)
    if code is None:
        codes = {_folded(c).replace("_", "-"): c for c in allowed}
        code = codes.get(folded) or codes.get(folded.split("-")[0])
    if code is None:
        raise invalid("bad_language", value=short(value), languages=", ".join(allowed))
    return code


def parse_status(value: object) -> Status:
    if isinstance(value, Status):
        return value
    text = str(value).strip().lower().replace("-", "_").replace(" ", "_")
    try:
        return Status(text)
    except ValueError:
        raise invalid(
            "bad_status", value=short(value), statuses=", ".join(s.value for s in Status)
        ) from None


def parse_demand_status(value: object) -> DemandStatus:
    if isinstance(value, DemandStatus):
        return value
    text = str(value).strip().lower().replace("-", "_").replace(" ", "_")
    try:
        return DemandStatus(text)
    except ValueError:
        raise invalid(
            "bad_demand_status",
            value=short(value),
            statuses=", ".join(s.value for s in DemandStatus),
        ) from None


def parse_urgency(value: object) -> Urgency:
    if isinstance(value, Urgency):
        return value
    try:
        return Urgency(str(value).strip().lower())
    except ValueError:
        raise invalid("bad_urgency", value=short(value)) from None


def parse_urgencies(value: object) -> frozenset[Urgency]:
    """'urgent,important', 'all', or an iterable of urgencies; at least one."""
    if isinstance(value, Urgency):
        return frozenset({value})
    if isinstance(value, frozenset | set | list | tuple):
        items: list[object] = list(value)
    else:
        text = str(value).strip().lower()
        if text in ("all", "todas", "any"):
            return frozenset(Urgency)
        items = [p for p in re.split(r"[,\s]+", text) if p]
    if not items:
        raise invalid("bad_urgency", value=short(value))
    return frozenset(parse_urgency(item) for item in items)


def parse_flag(value: object) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in words("yes"):
        return True
    if text in words("no"):
        return False
    raise invalid("bad_flag", value=short(value))


def _wall_time(naive: datetime, zone: ZoneInfo, value: object) -> datetime:
    """`naive` read in `zone`, refused when the clocks skip it or show it twice."""
    first = naive.replace(tzinfo=zone, fold=0)
    if first.astimezone(UTC).astimezone(zone).replace(tzinfo=None) != naive:
        raise invalid("time_skipped", value=short(value), zone=zone.key)
    if first.utcoffset() != naive.replace(tzinfo=zone, fold=1).utcoffset():
        example = first.isoformat(timespec="minutes")
        raise invalid("time_twice", value=short(value), zone=zone.key, example=example)
    return first


def parse_when(value: object, zone: ZoneInfo) -> datetime:
    """An aware UTC datetime from ISO text (`2019-01-21T06:00`, `2019-01-21 06:00`,
    `2019-01-21T06:00-08:00`, `...Z`); a time without an offset is a wall time in `zone`.
    The one reading rule of every surface (chat, forms, the CLI, the HTTP API): a wall time
    that does not exist in `zone` (clocks spring forward) or happens twice (clocks fall back)
    is refused, with what to write instead."""
    if isinstance(value, datetime):
        moment = value
    else:
        text = str(value).strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            raise invalid("bad_datetime", value=short(value)) from None
    try:
        if moment.tzinfo is None:
            moment = _wall_time(moment, zone, value)
        moment = moment.astimezone(UTC)
    except (OverflowError, ValueError):  # year 1 or 9999 pushed out of range by the offset
        raise invalid("bad_datetime", value=short(value)) from None
    # A day's margin at either end, so the moment can be shown in any time zone later
    # (a stored year-1 date would break every message that shows it).
    if not _EARLIEST <= moment <= _LATEST:
        raise invalid("bad_datetime", value=short(value))
    return moment


def _check_quiet_hours(value: str) -> str:
    try:
        parse_quiet_hours(value)
    except StrikebotError as exc:
        raise ValueError(exc.message) from None
    return value


# A plugin section's quiet hours, "21:00-08:00" or "off", checked when the file is read.
QuietHoursSetting = Annotated[str, AfterValidator(_check_quiet_hours)]
