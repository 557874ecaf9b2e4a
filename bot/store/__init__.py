"""The store: SQLAlchemy Core over SQLite (aiosqlite) or PostgreSQL (asyncpg).

    async with Store.open(url) as store:
        async with store.write() as tx:   # one transaction; BEGIN IMMEDIATE on SQLite
            ...
        async with store.read() as tx:
            ...

`store.outbox_written` is an `asyncio.Event` set after any committed transaction that
queued deliveries: the dispatcher waits on it instead of polling. `store.public` knows the
public content version (`bot.store.content`): a transaction that changed something the
public page shows bumps it before committing. `store.commits` (SQLite) hears of commits made
by other processes, one poll shared by the watchers of both (`bot.store.commits`).

`store.transact(work)` runs `await work(tx)` in one transaction (a write unless
`write=False`) and, when the connection turns out to be dead before the commit was asked
for, runs it once more on a fresh one: the dispatcher's hot paths use it, so a database
restart costs them one retry instead of a ping before every transaction.

A store that cannot do its job (a damaged file, a read-only file or file system, a full
disk, a server gone away) raises `StoreUnavailable` with one sentence saying what is wrong
and what to do, from `open`, `read` and `write` alike (`engine.store_failure`), so every
caller, the CLI first, shows that sentence instead of a traceback with SQL in it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from sqlalchemy.exc import DBAPIError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.errors import StoreUnavailable
from bot.store.commits import CommitWatch
from bot.store.content import PublicVersion
from bot.store.engine import (
    DEFAULT_DATABASE_URL,
    WRITE_OPTION,
    check_reachable,
    create_engine,
    is_disconnect,
    store_failure,
    upgrade,
)
from bot.store.repo import NewDelivery, Tx, new_delivery_id

__all__ = [
    "DEFAULT_DATABASE_URL",
    "STORE_FAILURES",
    "NewDelivery",
    "Store",
    "Tx",
    "new_delivery_id",
]

# What a failing store raises (a statement refused, a connection lost, or the store's own
# sentence): a caller that degrades rather than fails, as the public page serving its last
# good render, catches these without knowing which library the store is built on.
STORE_FAILURES: tuple[type[Exception], ...] = (SQLAlchemyError, StoreUnavailable)

T = TypeVar("T")
log = logging.getLogger("strikebot.store")


class Store:
    def __init__(self, engine: AsyncEngine, url: str) -> None:
        self.engine = engine
        self.url = url
        self.outbox_written = asyncio.Event()
        self.public = PublicVersion(self._read_public_version)
        # SQLite: one poll for commits made by other processes, shared by their watchers.
        self.commits = CommitWatch(engine)
        # SQLite has one writer at a time: queueing writers here is cheaper and fairer than
        # each connection spinning on the busy timeout. Other processes still meet
        # BEGIN IMMEDIATE and the busy timeout.
        self._write_lock = asyncio.Lock() if engine.dialect.name == "sqlite" else None
        self._wrote_at: float | None = None  # time.monotonic() of the last committed write

    @classmethod
    @asynccontextmanager
    async def open(
        cls, url: str = DEFAULT_DATABASE_URL, *, migrate: bool = True
    ) -> AsyncIterator[Store]:
        """Connect (failing with one clear sentence), migrate to head, yield, dispose."""
        engine = create_engine(url)
        try:
            await check_reachable(engine, url)
            if migrate:
                await upgrade(engine)
            yield cls(engine, url)
        finally:
            await engine.dispose()

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    async def _read_public_version(self) -> int:
        async with self.read() as tx:
            return await tx.public_version()

    @asynccontextmanager
    async def read(self) -> AsyncIterator[Tx]:
        with self._translated():
            async with self.engine.connect() as conn, conn.begin():
                yield Tx(conn)

    @asynccontextmanager
    async def write(self) -> AsyncIterator[Tx]:
        """A write transaction, committed on exit. Wakes the dispatcher if it queued rows;
        bumps the public content version with it if it changed what the public sees."""
        with self._translated():
            async with contextlib.AsyncExitStack() as stack:
                if self._write_lock is not None:
                    await stack.enter_async_context(self._write_lock)
                conn = await stack.enter_async_context(self.engine.connect())
                conn = await conn.execution_options(**{WRITE_OPTION: True})
                tx = Tx(conn)
                async with conn.begin():
                    yield tx
                    bumped = await tx.bump_public_version() if tx.public_touched else None
                    if bumped is not None:
                        await tx.log_public_changes(bumped)
        self._wrote_at = time.monotonic()
        if tx.enqueued:
            self.outbox_written.set()
        if bumped is not None:
            self.public.advance(bumped)

    async def scrub(self) -> bool:
        """After a privacy deletion has committed: on SQLite, copy the write-ahead log into
        the database file (whose deleted rows are zeroed, see `delete_subscriber`) and cut
        the log to nothing, so the deleted text is in neither file. It waits for readers
        to move on (the busy timeout); False when it could not finish (readers held on:
        the next scrub, or SQLite's own checkpoints, finish it). PostgreSQL: nothing to do
        here (its log and dead rows are the server's; see docs/privacy.md)."""
        if self.dialect != "sqlite":
            return True
        with self._translated():
            async with self.engine.connect() as conn:
                raw = await conn.get_raw_connection()
                driver: Any = raw.driver_connection  # aiosqlite's connection, autocommit
                async with driver.execute("PRAGMA wal_checkpoint(TRUNCATE)") as cursor:
                    row = await cursor.fetchone()
        return row is not None and row[0] == 0

    def busy_writing(self, within: float) -> bool:
        """True while a write transaction of this process holds SQLite's one writer and
        another committed in the last `within` seconds (a run of writes, like a page of
        briefings after another): proof that the store takes writes, where one more write
        would only queue behind them. Always False on PostgreSQL, whose writers do not queue
        here."""
        return (
            self._write_lock is not None
            and self._write_lock.locked()
            and self._wrote_at is not None
            and time.monotonic() - self._wrote_at <= within
        )

    async def transact(self, work: Callable[[Tx], Awaitable[T]], *, write: bool = True) -> T:
        """`await work(tx)` in one transaction, tried once more on a fresh connection when
        the connection died before the commit was asked for (nothing was written then).
        `work` may run twice: it must only use the store."""
        for attempt in (1, 2):
            finished = False
            try:
                async with self.write() if write else self.read() as tx:
                    result = await work(tx)
                    finished = True
                return result
            except Exception as exc:
                if finished or attempt == 2 or not is_disconnect(exc):
                    raise
                cause = exc.__cause__ or exc
                log.warning(
                    "the database connection was lost (%s); trying again", type(cause).__name__
                )
                # Connections opened before the loss may be as dead: open new ones.
                await self.engine.dispose(close=False)
        raise AssertionError("unreachable")

    @contextlib.contextmanager
    def _translated(self) -> Iterator[None]:
        """Store failures become `StoreUnavailable`; anything else passes untouched."""
        try:
            yield
        except DBAPIError as exc:
            translated = store_failure(exc, self.url)
            if translated is None:
                raise
            raise translated from exc
