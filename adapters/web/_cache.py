"""Rendered responses cached by what they depend on, so the hot paths skip the store.

A public view depends on the store's content and on the clock. The content is named by the
public version (`PluginContext.public`: free to check while nothing changed) and the moment the next
embargoed update becomes public (`Reads.next_embargo`, re-read only when the version moves or
that moment passes). The clock matters only to views that show it: the status page's
countdown and "Day N" change each minute (`MINUTE`), the status API's day number each day
(`DAY`). Every view's key also holds the local year, since dates carry the year when it is
not the current one.

Each entry keeps its validators: a strong ETag (a hash of the body) and Last-Modified (the
latest moment anything shown changed, as the view reports it; kept while the body stays
the same, and never moving backwards when it changes). The last entry of every slot is kept
for when the store fails.
"""

from __future__ import annotations

import asyncio
import functools
import gzip
import hashlib
import weakref
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from enum import Enum

import brotli

from bot.ports import SharedCheck

__all__ = [
    "Cached",
    "Moment",
    "Rendered",
    "ResponseCache",
    "SharedCheck",
    "Tick",
    "Validators",
    "make_etag",
]


class Tick(Enum):
    """How often a view changes with the clock alone."""

    NEVER = "never"
    MINUTE = "minute"  # countdowns, "Day N"
    DAY = "day"  # the day number alone (in the campaign's time zone)


@dataclass(frozen=True, slots=True)
class Moment:
    """What the store and the clock say at one request: every cache key derives from it."""

    now: datetime
    version: int
    embargo: datetime | None  # the next embargo to pass; None: none waiting
    local: datetime  # `now` in the campaign's time zone

    def key(self, tick: Tick) -> Hashable:
        base = (self.version, self.embargo, self.local.year)
        if tick is Tick.MINUTE:
            return (*base, self.now.replace(second=0, microsecond=0))
        if tick is Tick.DAY:
            return (*base, self.local.date())
        return base

    def floor(self, tick: Tick) -> datetime | None:
        """When the clock last changed a view with this tick (its Last-Modified floor)."""
        if tick is Tick.MINUTE:
            return self.now.replace(second=0, microsecond=0)
        if tick is Tick.DAY:
            midnight = self.local.replace(hour=0, minute=0, second=0, microsecond=0)
            return midnight.astimezone(UTC)
        return None


@dataclass(frozen=True, slots=True)
class Rendered:
    body: bytes
    content_type: str
    status: int = 200
    modified: datetime | None = None  # the latest moment anything shown changed
    language: str = ""  # HTML: the page's language (for the stale notice)


@dataclass(slots=True)
class Cached:
    key: Hashable
    body: bytes
    content_type: str
    etag: str
    status: int
    modified: datetime  # Last-Modified: UTC, whole seconds
    language: str
    confirmed: datetime  # the last moment the store vouched for this entry
    last_modified: str = ""  # `modified` as an HTTP date
    # Headers the server makes once for this entry, by the shape of the answer.
    ready: dict[Hashable, Mapping[str, str]] = field(default_factory=dict)
    # The body compressed, by content coding ("gzip", "br"), each made the first time a
    # client asks for it: a hit costs no compression.
    encoded: dict[str, bytes] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.last_modified = format_datetime(self.modified, usegmt=True)

    def body_in(self, coding: str) -> bytes:
        """The body in `coding` ("" for none), compressed once."""
        if not coding:
            return self.body
        found = self.encoded.get(coding)
        if found is None:
            found = self.encoded[coding] = compress(self.body, coding)
        return found

    def validators(self) -> Validators:
        return Validators(
            self.key, self.etag, self.status, self.modified, self.content_type, len(self.body)
        )


@dataclass(frozen=True, slots=True)
class Validators:
    """What answers a conditional request for an entry whose body is no longer kept: its
    key, ETag, status, Last-Modified and content type (a few hundred bytes, not the page)."""

    key: Hashable
    etag: str
    status: int
    modified: datetime
    content_type: str
    size: int  # of the body, uncompressed


# Content codings offered for text answers, best first, and how to make them.
CODINGS = ("br", "gzip")
COMPRESSIBLE = ("text/", "application/json", "application/atom+xml", "application/xml")
MIN_COMPRESS = 256  # bytes; smaller bodies gain nothing from compression


def compress(body: bytes, coding: str) -> bytes:
    if coding == "br":
        return bytes(brotli.compress(body, quality=BROTLI_QUALITY))
    if coding == "gzip":
        return gzip.compress(body, compresslevel=9, mtime=0)
    raise ValueError(f"unknown content coding {coding!r}")


def compressible(content_type: str, size: int) -> bool:
    return size >= MIN_COMPRESS and content_type.startswith(COMPRESSIBLE)


@functools.lru_cache(maxsize=4096)
def variant_etag(etag: str, coding: str) -> str:
    """The strong ETag of the body in `coding`: each representation has its own (of the
    same form as the body's)."""
    if not coding:
        return etag
    return '"' + hashlib.blake2b(f"{etag}{coding}".encode(), digest_size=12).hexdigest() + '"'


BROTLI_QUALITY = 5  # a 10 KB page in ~0.05 ms, within 15% of the best (11, 250 times slower)


def make_etag(body: bytes) -> str:
    return '"' + hashlib.blake2b(body, digest_size=12).hexdigest() + '"'


def _whole_seconds(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(microsecond=0)


class ResponseCache:
    """Rendered bodies by slot; one render at a time per slot (no stampede).

    Pinned slots (the status pages, feeds and status API: a handful per language) are never
    evicted; the rest (one per update id, demand key or page) share an LRU of `size`, so
    requests for many different ids cannot push the hot pages out.
    """

    def __init__(self, size: int = 256, validators: int = 100_000) -> None:
        self.size = size
        self._pinned: dict[Hashable, Cached] = {}
        self._entries: OrderedDict[Hashable, Cached] = OrderedDict()
        # The validators of entries pushed out of `_entries`, many more than the bodies.
        self.validators_size = validators
        self._validators: OrderedDict[Hashable, Validators] = OrderedDict()
        # A lock lives only while someone renders or waits for that slot.
        self._locks: weakref.WeakValueDictionary[Hashable, asyncio.Lock] = (
            weakref.WeakValueDictionary()
        )

    async def get(
        self,
        slot: Hashable,
        key: Hashable,
        render: Callable[[], Awaitable[Rendered]],
        *,
        now: datetime,
        floor: datetime | None = None,
        pinned: bool = False,
    ) -> Cached:
        entry = self._fresh(slot, key, now)
        if entry is not None:
            return entry
        lock = self._locks.get(slot)
        if lock is None:
            lock = self._locks[slot] = asyncio.Lock()
        async with lock:
            entry = self._fresh(slot, key, now)
            if entry is not None:
                return entry
            out = await render()
            entry = self._entry(self.last(slot), key, out, now, floor)
            if pinned:
                self._pinned[slot] = entry
                return entry
            self._entries[slot] = entry
            self._entries.move_to_end(slot)
            self._validators.pop(slot, None)
            while len(self._entries) > self.size:
                self._keep_validators(*self._entries.popitem(last=False))
            return entry

    def _keep_validators(self, slot: Hashable, entry: Cached) -> None:
        self._validators[slot] = entry.validators()
        while len(self._validators) > self.validators_size:
            self._validators.popitem(last=False)

    def known(self, slot: Hashable, key: Hashable) -> Validators | None:
        """The validators of `slot` when what was last rendered for it is current (`key`),
        whether or not its body is still kept: enough to answer a conditional request
        without rendering. None when nothing current is known."""
        entry = self._pinned.get(slot) or self._entries.get(slot)
        found = entry.validators() if entry is not None else self._validators.get(slot)
        return found if found is not None and found.key == key else None

    @staticmethod
    def _entry(
        previous: Cached | None, key: Hashable, out: Rendered, now: datetime, floor: datetime | None
    ) -> Cached:
        etag = make_etag(out.body)
        if previous is not None and previous.etag == etag:
            modified = previous.modified  # the same body: the same validators
        else:
            moments = [m for m in (out.modified, floor) if m is not None]
            modified = _whole_seconds(min(max(moments, default=now), now))
            if previous is not None and modified <= previous.modified:
                # The body changed without a newer moment to show for it (a new campaign
                # file, say): a client holding the old body must not get a 304.
                modified = max(_whole_seconds(now), previous.modified + timedelta(seconds=1))
        return Cached(key, out.body, out.content_type, etag, out.status, modified,
                      out.language, now)  # fmt: skip

    def last(self, slot: Hashable) -> Cached | None:
        """Whatever was rendered last for `slot`, however old (served when the store fails)."""
        return self._pinned.get(slot) or self._entries.get(slot)

    def fresh(self, slot: Hashable, key: Hashable, now: datetime) -> Cached | None:
        """The entry for `slot` if it was rendered for `key`, else None."""
        return self._fresh(slot, key, now)

    def _fresh(self, slot: Hashable, key: Hashable, now: datetime) -> Cached | None:
        entry = self._pinned.get(slot)
        if entry is None:
            entry = self._entries.get(slot)
            if entry is not None:
                self._entries.move_to_end(slot)
        if entry is not None and entry.key == key:
            entry.confirmed = now
            return entry
        return None

    def clear(self) -> None:
        self._pinned.clear()
        self._entries.clear()
        self._validators.clear()
