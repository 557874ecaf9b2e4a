"""Rendered responses cached by what they depend on, so the hot paths skip the store.

A public view depends on the store's content (its `fingerprint`) and on the clock (the
countdown and "Day N" change each minute; an embargo passing changes the fingerprint). The
fingerprint is one cheap query; concurrent requests share it without ever reading a value
older than their own arrival: a request joins a check that has not started yet, or waits
for the next one. A write committed before a request arrives is always seen by it.
"""

from __future__ import annotations

import asyncio
import hashlib
import weakref
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


class SharedCheck(Generic[T]):
    """Runs `fetch` for many concurrent callers, never answering with a stale value.

    Callers arriving while a fetch is running wait for the *next* fetch, which starts as
    soon as the running one ends and serves all of them at once.
    """

    def __init__(self, fetch: Callable[[], Awaitable[T]]) -> None:
        self._fetch = fetch
        self._waiting: asyncio.Future[T] | None = None
        self._running = False
        self._task: asyncio.Task[None] | None = None  # held so it cannot be collected

    async def get(self) -> T:
        if self._waiting is None:
            self._waiting = asyncio.get_running_loop().create_future()
        future = self._waiting
        if not self._running:
            self._running = True
            self._task = asyncio.get_running_loop().create_task(self._run())
        return await asyncio.shield(future)

    async def _run(self) -> None:
        try:
            while self._waiting is not None:
                future, self._waiting = self._waiting, None
                try:
                    value = await self._fetch()
                except Exception as exc:
                    future.set_exception(exc)
                    # Nobody may be waiting any more; do not log "exception never retrieved".
                    future.exception()
                else:
                    future.set_result(value)
        finally:
            self._running = False


@dataclass(frozen=True, slots=True)
class Rendered:
    body: bytes
    content_type: str
    status: int = 200


@dataclass(frozen=True, slots=True)
class Cached:
    key: Hashable
    body: bytes
    content_type: str
    etag: str
    status: int = 200


def make_etag(body: bytes) -> str:
    return '"' + hashlib.blake2b(body, digest_size=12).hexdigest() + '"'


class ResponseCache:
    """Rendered bodies by slot; one render at a time per slot (no stampede).

    Pinned slots (the status pages, feeds and status API: a handful per language) are never
    evicted; the rest (one per update id, demand key or page) share an LRU of `size`, so
    requests for many different ids cannot push the hot pages out.
    """

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._pinned: dict[Hashable, Cached] = {}
        self._entries: OrderedDict[Hashable, Cached] = OrderedDict()
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
        pinned: bool = False,
    ) -> Cached:
        entry = self._fresh(slot, key)
        if entry is not None:
            return entry
        lock = self._locks.get(slot)
        if lock is None:
            lock = self._locks[slot] = asyncio.Lock()
        async with lock:
            entry = self._fresh(slot, key)
            if entry is not None:
                return entry
            out = await render()
            entry = Cached(key, out.body, out.content_type, make_etag(out.body), out.status)
            if pinned:
                self._pinned[slot] = entry
                return entry
            self._entries[slot] = entry
            self._entries.move_to_end(slot)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
            return entry

    def last(self, slot: Hashable) -> Cached | None:
        """Whatever was rendered last for `slot`, however old (served when the store fails)."""
        return self._pinned.get(slot) or self._entries.get(slot)

    def _fresh(self, slot: Hashable, key: Hashable) -> Cached | None:
        entry = self._pinned.get(slot)
        if entry is None:
            entry = self._entries.get(slot)
            if entry is not None:
                self._entries.move_to_end(slot)
        if entry is not None and entry.key == key:
            return entry
        return None

    def clear(self) -> None:
        self._pinned.clear()
        self._entries.clear()
