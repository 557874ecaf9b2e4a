"""Finding sites and groups as someone types, for the pickers' autocomplete (Slack's
external select, Discord's option autocomplete): the one rule of what matches and in
which order, over an index built once per change of the campaign's sites.

A query's words each begin a word of a place's code or of its name in any of its
languages, accents and case aside ("rooS", "prepa roos", "jose" for "José"). The best
come first: the code itself, then codes beginning with what was typed, then names in the
reader's language beginning with it, then names whose words do, then the rest; groups
before sites, then by name. An empty query offers every group, then sites, by name; a
query of nothing but punctuation or symbols matches nothing. docs/audiences.md.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from bot.models import Site, SiteGroup
from bot.store import Store

Kind = Literal["site", "group"]
KINDS = frozenset({"site", "group"})  # what a picker may offer: sites, groups or both
_WORD = re.compile(r"[^\W_]+")  # letters and digits; '-', '_' and the rest separate words


def fold(text: str) -> str:
    """`text` without accents, case-folded: "José" → "jose", "ÉCOLE" → "ecole"."""
    if text.isascii():
        return text.casefold()
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def words(text: str) -> list[str]:
    """The folded words of `text` ("Local District East" → ["local", "district", "east"])."""
    return _WORD.findall(fold(text))


@dataclass(frozen=True, slots=True)
class PlaceMatch:
    """A site or a group a picker offers: its code, its name in the reader's language and,
    for a site, its group's code and name."""

    kind: Kind
    code: str
    name: str
    group: str = ""
    group_name: str = ""

    @property
    def label(self) -> str:
        """ "Roosevelt High School (roosevelt)": what a picker shows."""
        return f"{self.name} ({self.code})"


@dataclass(frozen=True, slots=True)
class _Place:
    kind: Kind
    code: str
    names: Mapping[str, str]
    group: str
    words: Mapping[str, tuple[str, ...]]  # language → the folded words of the name
    folded: Mapping[str, str]  # language → those words, space-separated

    @classmethod
    def of(cls, kind: Kind, code: str, names: Mapping[str, str], group: str = "") -> _Place:
        named = {language: tuple(words(name)) for language, name in names.items()}
        folded = {language: " ".join(ws) for language, ws in named.items()}
        return cls(kind, code, dict(names), group, named, folded)


class PlaceIndex:
    """Every site and group, indexed by the words of their codes and names (sorted word
    lists searched by bisection: a lookup costs the log of the words plus the matches)."""

    def __init__(self, groups: Iterable[SiteGroup], sites: Iterable[Site]) -> None:
        places = [_Place.of("group", g.code, g.names) for g in groups]
        places += [_Place.of("site", s.code, s.names, s.group) for s in sites]
        self._places = places
        self._by_code = {p.code: i for i, p in enumerate(places)}
        self._group_names = {p.code: p.names for p in places if p.kind == "group"}
        every: list[tuple[str, int]] = []
        by_language: dict[str, list[tuple[str, int]]] = {}
        for i, place in enumerate(places):
            for part in words(place.code):
                every.append((part, i))
            for language, named in place.words.items():
                for word in named:
                    every.append((word, i))
                    by_language.setdefault(language, []).append((word, i))
        self._every = sorted(set(every))
        self._by_language = {lang: sorted(set(ws)) for lang, ws in by_language.items()}
        self._ranks: dict[str, list[int]] = {}  # language → each place's place in order

    def __len__(self) -> int:
        return len(self._places)

    def find(
        self,
        query: str,
        language: str,
        *,
        kinds: Collection[str] = KINDS,
        limit: int = 25,
    ) -> list[PlaceMatch]:
        """The places matching `query`, best first, at most `limit`, named in `language`."""
        typed = query.strip()
        wanted = words(typed)
        rank = self._rank(language)
        if not typed:
            chosen = [i for i, p in enumerate(self._places) if p.kind in kinds]
            chosen.sort(key=rank.__getitem__)
            return [self._match(i, language) for i in chosen[:limit]]
        if not wanted:
            return []
        found: set[int] | None = None
        for word in wanted:
            having = _starting(self._every, word)
            found = having if found is None else found & having
            if not found:
                return []
        assert found is not None
        own = self._by_language.get(language, [])
        in_own = [_starting(own, word) for word in wanted]
        compact = fold(typed)
        spaced = " ".join(wanted)
        ranked = []
        for i in found:
            place = self._places[i]
            if place.kind not in kinds:
                continue
            if place.code == compact:
                tier = 0
            elif place.code.startswith(compact):
                tier = 1
            elif self._folded(place, language).startswith(spaced):
                tier = 2
            elif all(i in having for having in in_own):
                tier = 3
            else:
                tier = 4
            ranked.append((tier, rank[i], i))
        ranked.sort()
        return [self._match(i, language) for _, _, i in ranked[:limit]]

    def named(self, codes: Iterable[str], language: str) -> list[PlaceMatch]:
        """The places with these codes (unknown ones left out), in the given order."""
        found = (self._by_code.get(code.strip().lower()) for code in codes)
        return [self._match(i, language) for i in found if i is not None]

    def _folded(self, place: _Place, language: str) -> str:
        return place.folded.get(language) or next(iter(place.folded.values()), "")

    def _rank(self, language: str) -> list[int]:
        """Each place's position among all in `language`: groups first, then by name."""
        rank = self._ranks.get(language)
        if rank is None:
            places = self._places
            order = sorted(
                range(len(places)),
                key=lambda i: (places[i].kind == "site", self._folded(places[i], language),
                               places[i].code),
            )  # fmt: skip
            rank = [0] * len(places)
            for position, i in enumerate(order):
                rank[i] = position
            self._ranks[language] = rank
        return rank

    def _match(self, i: int, language: str) -> PlaceMatch:
        place = self._places[i]
        group = self._group_names.get(place.group, {})
        return PlaceMatch(
            place.kind,
            place.code,
            _name(place.names, language, place.code),
            place.group,
            _name(group, language, place.group) if place.group else "",
        )


def _name(names: Mapping[str, str], language: str, code: str) -> str:
    return names.get(language) or next(iter(names.values()), code)


def _starting(index: Sequence[tuple[str, int]], prefix: str) -> set[int]:
    """The places having a word that begins with `prefix` in a sorted (word, place) list."""
    found: set[int] = set()
    at = bisect_left(index, (prefix, -1))
    while at < len(index) and index[at][0].startswith(prefix):
        found.add(index[at][1])
        at += 1
    return found


class PlacePicker:
    """A store's sites and groups as a `PlaceIndex`, rebuilt when the public content
    changes (an import, or a seed, touches it): a lookup reads the store at most once, for
    the version, and from memory when a watcher vouches for it."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._index: PlaceIndex | None = None
        self._version: int | None = None

    async def index(self) -> PlaceIndex:
        version = await self.store.public.current()
        if self._index is None or version != self._version:
            async with self.store.read() as tx:
                groups, sites = await tx.list_groups(), await tx.list_sites()
            self._index, self._version = PlaceIndex(groups, sites), version
        return self._index

    async def find(
        self,
        query: str,
        language: str,
        *,
        kinds: Collection[str] = KINDS,
        limit: int = 25,
    ) -> list[PlaceMatch]:
        return (await self.index()).find(query, language, kinds=kinds, limit=limit)

    async def named(self, codes: Iterable[str], language: str) -> list[PlaceMatch]:
        return (await self.index()).named(codes, language)
