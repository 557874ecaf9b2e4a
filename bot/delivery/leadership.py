"""Which instance runs a singleton job: the briefing scheduler, each platform's
dispatcher, each Discord gateway shard.

PostgreSQL: a session-level advisory lock (`pg_try_advisory_lock`) taken on a dedicated
connection that stays open. When the holder dies its connection closes and PostgreSQL
releases the lock, so a waiting instance gets it on its next try. No home-made consensus.

SQLite: one machine, so an exclusive `flock` on a file beside the database: a second
process on the same database waits its turn. An in-memory database has one process.

Either way the briefing claim (unique subscription + local date) remains the real guard;
leadership only keeps the other instances from doing the work twice.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import zlib
from pathlib import Path
from typing import Protocol

from sqlalchemy import text
from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.pool import NullPool

from bot.store import Store

log = logging.getLogger("strikebot.leader")

# One key per singleton job; 727274001 serialises migrations (bot/store/engine.py).
BRIEFING_LOCK_KEY = 727274002
_DISPATCHER_KEYS = 727_300_000  # + a stable hash of the platform's name
_SHARD_KEYS = 727_280_000  # + the shard id


def dispatcher_lock_key(platform: str) -> int:
    """The lock whose holder is the one dispatcher sending for `platform` (one pace per
    token: the platform's global limit holds for every instance together)."""
    return _DISPATCHER_KEYS + zlib.crc32(platform.encode()) % 10_000


def shard_lock_key(platform: str, shard_id: int) -> int:
    """The lock whose holder keeps `platform`'s gateway session for `shard_id`."""
    return _SHARD_KEYS + (zlib.crc32(platform.encode()) % 10) * 1_000 + shard_id % 1_000


class Leadership(Protocol):
    async def acquire(self) -> bool:
        """Try once, without waiting. True if this instance holds the lead now."""
        ...

    async def still_held(self) -> bool:
        """True while the lead taken by `acquire` is still ours."""
        ...

    async def release(self) -> None:
        """Give the lead up (idempotent)."""
        ...

    async def confirm(self, conn: AsyncConnection) -> bool:
        """True if the lead is still ours, asked on `conn` (the caller's transaction, about
        to act as the holder). Between two elections the lead can go (the lock connection
        cut, the server restarted) and another instance take it: work done as the holder
        checks here first, so a holder that lost its lead acts no more (fencing)."""
        ...


class PostgresLeadership:
    """`pg_try_advisory_lock` on a connection of its own (outside the store's pool, so the
    lock is never handed to another task with a pooled connection)."""

    def __init__(self, url: URL, key: int = BRIEFING_LOCK_KEY) -> None:
        self.url = url
        self.key = key
        self._engine: AsyncEngine | None = None
        self._conn: AsyncConnection | None = None
        self._pid: int | None = None

    @property
    def backend_pid(self) -> int | None:
        """The PostgreSQL backend process holding the lock, for diagnostics."""
        return self._pid

    async def acquire(self) -> bool:
        if self._conn is not None:
            # Keep the connection between tries: a standby asks every second or so, and a
            # new connection each time would churn the server.
            try:
                if await self._holds():
                    return True
                got = bool(
                    await self._conn.scalar(
                        text("SELECT pg_try_advisory_lock(:key)"), {"key": self.key}
                    )
                )
            except Exception:
                await self._close()
            else:
                return got
        self._engine = create_async_engine(
            self.url,
            poolclass=NullPool,
            connect_args={
                # The server notices a vanished holder (machine off, cable cut) within about
                # 25 s instead of the OS default of hours, and frees the lock.
                "server_settings": {
                    "tcp_keepalives_idle": "10",
                    "tcp_keepalives_interval": "5",
                    "tcp_keepalives_count": "3",
                },
                # A holder cut off from the server finds out at its next check, not hours later.
                "command_timeout": 10,
            },
        )
        conn = await self._engine.connect()
        self._conn = await conn.execution_options(isolation_level="AUTOCOMMIT")
        got = bool(
            await self._conn.scalar(text("SELECT pg_try_advisory_lock(:key)"), {"key": self.key})
        )
        self._pid = int(await self._conn.scalar(text("SELECT pg_backend_pid()")) or 0)
        return got

    async def _holds(self) -> bool:
        assert self._conn is not None
        return await _holds_lock(self._conn, self.key)

    async def still_held(self) -> bool:
        if self._conn is None:
            return False
        try:
            return await _holds_lock(self._conn, self.key)
        except Exception as exc:  # the connection died: PostgreSQL has released the lock
            log.warning("the lock connection (key %d) failed (%s); the lock is gone", self.key, exc)
            await self._close()
            return False

    async def confirm(self, conn: AsyncConnection) -> bool:
        # Asked of the lock's own backend, from the caller's transaction: a lock connection
        # that was cut since the last election holds nothing any more.
        if self._pid is None:
            return False
        return await _holds_lock(conn, self.key, pid=self._pid)

    async def release(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(Exception):
                await self._conn.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": self.key})
        await self._close()

    async def _close(self) -> None:
        conn, self._conn = self._conn, None
        engine, self._engine = self._engine, None
        self._pid = None
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.close()
        if engine is not None:
            with contextlib.suppress(Exception):
                await engine.dispose()


class FileLeadership:
    """An exclusive, non-blocking `flock` on `path`; the OS drops it when the process dies."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    async def acquire(self) -> bool:
        if self._fd is not None:
            return True
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    async def still_held(self) -> bool:
        return self._fd is not None

    async def confirm(self, conn: AsyncConnection) -> bool:
        return self._fd is not None  # the OS holds the lock until this process ends

    async def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


class SoleLeadership:
    """For a database only this process can see (SQLite in memory)."""

    def __init__(self) -> None:
        self._held = False

    async def acquire(self) -> bool:
        self._held = True
        return True

    async def still_held(self) -> bool:
        return self._held

    async def confirm(self, conn: AsyncConnection) -> bool:
        return self._held

    async def release(self) -> None:
        self._held = False


async def _holds_lock(conn: AsyncConnection, key: int, *, pid: int | None = None) -> bool:
    """Whether backend `pid` (the connection's own when None) holds advisory lock `key`."""
    held = await conn.scalar(
        text(
            "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' "
            "AND pid = COALESCE(CAST(:pid AS integer), pg_backend_pid()) "
            "AND classid = 0 AND objid = :key AND objsubid = 1 AND granted)"
        ),
        {"key": key, "pid": pid},
    )
    return bool(held)


def leadership_for(store: Store, key: int = BRIEFING_LOCK_KEY) -> Leadership:
    """The right election for the store's database."""
    url = store.engine.url
    if store.dialect == "postgresql":
        return PostgresLeadership(url, key)
    database = url.database or ""
    if not database or database == ":memory:" or database.startswith("file:"):
        return SoleLeadership()
    return FileLeadership(Path(f"{database}.scheduler-{key}.lock"))


__all__ = [
    "BRIEFING_LOCK_KEY",
    "FileLeadership",
    "Leadership",
    "PostgresLeadership",
    "SoleLeadership",
    "dispatcher_lock_key",
    "leadership_for",
    "shard_lock_key",
]
