"""A campaign's sites from a CSV file (`strikebot sites import FILE.csv`).

    kind,code,group,name,name_es,address,example
    group,east,,Local District East,Distrito Local Este,,yes
    site,roosevelt,east,Roosevelt High School,Preparatoria Roosevelt,456 S Mathews St,yes

`kind` is `group` or `site` (left out or empty: site); `name` is in the campaign's main
language, `name_<code>` in another of its languages; a site's `group` is a group of the
file or one already stored; `address` and `example` (yes/no) are optional. Every bad row
is named by its line number, all at once.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Collection
from dataclasses import dataclass

from bot.audiences.codes import check_code
from bot.errors import InvalidInput, StrikebotError
from bot.models import Site, SiteGroup

NAME_MAX = 200
ADDRESS_MAX = 500
SHOWN = 10  # bad rows named in the error; the rest are counted
_YES = {"yes", "y", "true", "1", "x"}
_NO = {"no", "n", "false", "0", ""}


@dataclass(frozen=True, slots=True)
class SiteFile:
    groups: tuple[SiteGroup, ...]
    sites: tuple[Site, ...]


def read_sites_csv(text: str, languages: Collection[str], main: str) -> SiteFile:
    """The groups and sites of a CSV file's text; `InvalidInput` lists each bad line."""
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")))
    header = [h.strip().lower() for h in reader.fieldnames or []]
    if "code" not in header or "name" not in header:
        raise InvalidInput(
            "The file's first line must name its columns, at least `code` and `name` (and "
            "`kind`, `group`, `name_<language>`, `address`, `example`)."
        )
    known = {"kind", "code", "group", "name", "address", "example"}
    known |= {f"name_{code}" for code in languages if code != main}
    unknown = [h for h in header if h not in known]
    if unknown:
        raise InvalidInput(
            f"Unknown column {unknown[0]!r} on line 1; the columns are {', '.join(sorted(known))}."
        )
    reader.fieldnames = header
    groups: dict[str, SiteGroup] = {}
    sites: dict[str, Site] = {}
    problems: list[str] = []
    for row in reader:
        line = reader.line_num
        values = {k: (v or "").strip() for k, v in row.items() if k is not None}
        if not any(values.values()):
            continue
        try:
            kind = values.get("kind", "").lower() or "site"
            code = check_code(values.get("code", ""))
            names = {main: check_name(values.get("name", ""), "name")}
            for lang in languages:
                if lang != main and values.get(f"name_{lang}"):
                    names[lang] = check_name(values[f"name_{lang}"], f"name_{lang}")
            example = _yes(values.get("example", ""))
            if code in groups or code in sites:
                raise InvalidInput(f"code {code!r} is already on an earlier line")
            if kind == "group":
                if values.get("group") or values.get("address"):
                    raise InvalidInput("a group has no `group` or `address` of its own")
                groups[code] = SiteGroup(code, names, example)
            elif kind == "site":
                if not values.get("group"):
                    raise InvalidInput("a site needs its `group` (a group's code)")
                address = check_address(values.get("address", ""))
                group = check_code(values["group"])
                sites[code] = Site(code, names, group, address, example)
            else:
                raise InvalidInput(f"kind {kind!r} is neither `site` nor `group`")
        except StrikebotError as exc:
            problems.append(f"line {line}: {exc.message.rstrip('.')}")
    if problems:
        shown = problems[:SHOWN]
        more = len(problems) - len(shown)
        raise InvalidInput(
            f"Nothing was imported: {len(problems)} bad line{'s' * (len(problems) != 1)}.\n"
            + "\n".join(shown)
            + (f"\n... and {more} more." if more else "")
        )
    return SiteFile(tuple(groups.values()), tuple(sites.values()))


def check_name(text: str, column: str) -> str:
    """A site's or a group's name in one language (`column` names it in the sentence)."""
    if not text:
        raise InvalidInput(f"`{column}` is empty")
    if len(text) > NAME_MAX or "\n" in text:
        raise InvalidInput(f"`{column}` is longer than {NAME_MAX} characters or has a line break")
    return text


def check_address(text: str) -> str:
    """A site's address (optional)."""
    if len(text) > ADDRESS_MAX:
        raise InvalidInput(f"the address is longer than {ADDRESS_MAX} characters")
    return text


def _yes(text: str) -> bool:
    word = text.lower()
    if word in _YES:
        return True
    if word in _NO:
        return False
    raise InvalidInput(f"`example` is {text!r}; write yes or no")
