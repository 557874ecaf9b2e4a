"""Site and group codes as people type them: "101", "East", "ld-east" (lower-cased)."""

from __future__ import annotations

import re

from bot.errors import InvalidInput
from bot.i18n.sentences import localized_error
from bot.models import Audience

CODE = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")


def check_code(text: object) -> str:
    """A code, lower-cased: letters, digits, '-' or '_', 32 at most."""
    code = str(text).strip().lower()
    if not CODE.fullmatch(code):
        raise localized_error(InvalidInput, "audiences.bad_code", code=str(text).strip()[:40])
    return code


def parse_audience(sites: object = None, groups: object = None) -> Audience:
    """An audience from comma-separated (or listed) codes; none of either: everyone."""

    def codes(value: object) -> list[str]:
        if value is None:
            return []
        items = value.split(",") if isinstance(value, str) else list(value)  # type: ignore[call-overload]
        return [check_code(v) for v in items if str(v).strip()]

    return Audience.of(codes(sites), codes(groups))


EVERYTHING_WORDS = frozenset({"all", "everything", "everyone", "todo", "todos", "todas"})


def parse_follows(sites: object = None, groups: object = None) -> Audience:
    """What a subscription follows, as typed: codes, or "all" ("everything", "todo") in
    either for everything again."""
    for value in (sites, groups):
        if isinstance(value, str) and value.strip().lower() in EVERYTHING_WORDS:
            return Audience()
    return parse_audience(sites, groups)
