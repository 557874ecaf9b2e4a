"""Engine creation and migrations: one code path for SQLite (aiosqlite) and PostgreSQL (asyncpg).

SQLite gets WAL, a busy timeout, driver-level autocommit (`isolation_level=None`) so that
SQLAlchemy's BEGIN is ours to emit, and `BEGIN IMMEDIATE` for every write transaction:
a deferred BEGIN that reads then writes fails with "database is locked" under concurrency.

PostgreSQL gets JIT compilation switched off for the engine's connections (the outbox's
short queries paid up to 160 ms of JIT each at 100,000 pending rows) and no pre-ping on
every checkout (BEGIN; SELECT; ROLLBACK before each transaction: a third of the round trips
of a delivery). At checkout a connection the server closed is replaced without a round
trip (asyncpg knows once the event loop has read the close), and one that sat in the pool
longer than `IDLE_PING_SECONDS` is pinged (a silent network may have lost it); one that dies
while in use fails its transaction, which `Store.transact` retries once on a fresh
connection, and SQLAlchemy then replaces every connection opened before it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import sqlite3
import time
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import (
    ArgumentError,
    DataError,
    DBAPIError,
    DisconnectionError,
    IntegrityError,
    InterfaceError,
    OperationalError,
    ProgrammingError,
)
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import PoolResetState
from sqlalchemy.util import await_only

from bot.errors import StoreUnavailable
from bot.store._one_trip import OneTripConnection, one_trip_dbapi

if TYPE_CHECKING:
    from alembic.config import Config

log = logging.getLogger("strikebot.store")

DEFAULT_DATABASE_URL = "sqlite+aiosqlite:///data/strikebot.db"
SQLITE_BUSY_TIMEOUT_MS = 30_000
MIGRATIONS = Path(__file__).parent / "migrations"
# Execution option marking a connection whose transaction writes (SQLite: BEGIN IMMEDIATE).
WRITE_OPTION = "strikebot_write"
# A pooled PostgreSQL connection idle longer than this is pinged before use.
IDLE_PING_SECONDS = 30.0
_IDLE_SINCE = "strikebot_idle_since"


def create_engine(url: str) -> AsyncEngine:
    """An async engine for `url`, with SQLite configured for concurrent writers."""
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise StoreUnavailable(
            f"STRIKEBOT_DATABASE_URL {url!r} is not a database URL. Use "
            f"{DEFAULT_DATABASE_URL} or postgresql+asyncpg://user@host/db."
        ) from exc
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        if parsed.drivername != "sqlite+aiosqlite":
            parsed = parsed.set(drivername="sqlite+aiosqlite")
        database = parsed.database or ""
        if database and database != ":memory:" and not database.startswith("file:"):
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_async_engine(
            parsed,
            connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000},
            pool_reset_on_return=None,  # `on_reset` below rolls back only what is open
            module=one_trip_dbapi(),  # a statement in one trip to aiosqlite's thread (or None)
        )
        _configure_sqlite(engine)
        return engine
    if backend == "postgresql":
        from bot.store.schema import postgresql_partial_indexes

        postgresql_partial_indexes()
        if parsed.drivername != "postgresql+asyncpg":
            parsed = parsed.set(drivername="postgresql+asyncpg")
        engine = create_async_engine(
            parsed,
            pool_size=10,
            max_overflow=10,
            connect_args={"server_settings": {"jit": "off"}},
        )
        _ping_when_idle(engine)
        return engine
    raise StoreUnavailable(
        f"Database {backend!r} is not supported. Use SQLite "
        f"({DEFAULT_DATABASE_URL}) or PostgreSQL (postgresql+asyncpg://...)."
    )


def dialect_insert(dialect: str, table: Any) -> Any:
    """An INSERT with its dialect's ON CONFLICT clauses, for a connection's dialect name
    (`postgresql`, else SQLite's). Each dialect loads on first use: on SQLite, never
    PostgreSQL's (~60 ms of a command's start)."""
    if dialect == "postgresql":
        from sqlalchemy.dialects import postgresql

        return postgresql.insert(table)
    from sqlalchemy.dialects import sqlite

    return sqlite.insert(table)


def _configure_sqlite(engine: AsyncEngine) -> None:
    @event.listens_for(engine.sync_engine, "connect")
    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy's "begin" event below issue BEGIN itself.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        # Deleted or rewritten rows are zeroed in the pages being written anyway (no extra
        # I/O): an address deleted or changed leaves no copy in a page's free space. A
        # privacy deletion turns it fully on for its statement (`delete_subscriber`).
        cursor.execute("PRAGMA secure_delete=FAST")
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def on_begin(conn: Connection) -> None:
        sql = "BEGIN IMMEDIATE" if conn.get_execution_options().get(WRITE_OPTION) else "BEGIN"
        adapted = conn.connection.dbapi_connection
        if isinstance(adapted, OneTripConnection):
            adapted.begin_with_next(sql)  # in the trip of the transaction's first statement
            return
        # One trip to aiosqlite's thread, where `exec_driver_sql` takes three (make a cursor,
        # execute, close it): every trip wakes that thread and then the event loop.
        driver: Any = conn.connection.driver_connection  # aiosqlite's connection
        try:
            await_only(driver.execute(sql))
        except Exception as exc:
            error: Any = exc
            if isinstance(exc, sqlite3.Error) and not conn.dialect.is_disconnect(error, None, None):
                raise DBAPIError.instance(
                    sql, None, exc, sqlite3.Error, dialect=conn.dialect
                ) from exc
            # A closed connection: SQLAlchemy's own way says so in its terms (and replaces it).
            conn.exec_driver_sql(sql)

    @event.listens_for(engine.sync_engine, "reset")
    def on_reset(dbapi_connection: Any, _record: Any, state: PoolResetState) -> None:
        """A connection back in the pool is rolled back only when a transaction is still
        open on it (a failed commit): SQLAlchemy's rollback-on-return would take a trip to
        aiosqlite's thread after every transaction, for nothing after a commit."""
        if state.terminate_only or not state.asyncio_safe:
            return
        if isinstance(dbapi_connection, OneTripConnection) and dbapi_connection.forget_begin():
            return  # a transaction that never reached the database
        try:
            open_transaction = bool(dbapi_connection.driver_connection.in_transaction)
        except ValueError:  # aiosqlite: the connection is closed
            return
        if open_transaction:
            dbapi_connection.rollback()


def _ping_when_idle(engine: AsyncEngine) -> None:
    """Ping a connection at checkout only when it sat in the pool for `IDLE_PING_SECONDS`:
    busy connections (a fan-out, a rush of commands) go straight to work."""

    @event.listens_for(engine.sync_engine, "checkin")
    def on_checkin(_dbapi_connection: Any, record: Any) -> None:
        record.info[_IDLE_SINCE] = time.monotonic()

    @event.listens_for(engine.sync_engine, "checkout")
    def on_checkout(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        since = record.info.pop(_IDLE_SINCE, None)
        # A connection the server closed (a restart, a failover, an administrator) is known
        # to asyncpg as soon as the event loop read the close: no round trip to find out.
        driver = getattr(dbapi_connection, "_connection", None)
        if driver is not None and driver.is_closed():
            error = DisconnectionError("the server closed a pooled connection")
            error.invalidate_pool = True
            raise error
        if since is None or time.monotonic() - since < IDLE_PING_SECONDS:
            return
        try:
            dbapi_connection.ping()
        except Exception as exc:
            # Invalidates this connection and every one pooled before it; the pool then
            # hands out a new one.
            error = DisconnectionError(f"a pooled connection was closed: {type(exc).__name__}")
            error.invalidate_pool = True
            raise error from exc


def is_disconnect(exc: BaseException) -> bool:
    """True when `exc` (or what it was raised from) says the connection died: the work can
    be tried again on a new connection if nothing was committed."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, DBAPIError) and seen.connection_invalidated:
            return True
        if isinstance(seen, DisconnectionError) or type(seen).__name__ in _DRIVER_LOST:
            return True
        seen = seen.__cause__ or (seen.orig if isinstance(seen, DBAPIError) else None)
    return False


# asyncpg's own words for a connection that the server closed under it, or that a closed
# operation left unusable (named, so the core does not import the driver).
_DRIVER_LOST = frozenset(
    {"ConnectionDoesNotExistError", "InternalClientError", "ConnectionFailureError"}
)


def alembic_config() -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    return cfg


_REVISION = re.compile(r'^(down_revision|revision)(?:: [^=]+)? = (None|"[^"]*")', re.MULTILINE)


@cache
def head_revision() -> str | None:
    """The newest migration's revision, read from the files' `revision`/`down_revision`
    lines without loading Alembic (which costs a command ~80 ms); None when the files do
    not make one chain, and Alembic decides."""
    revisions: dict[str, str | None] = {}
    for path in (MIGRATIONS / "versions").glob("*.py"):
        found = dict(_REVISION.findall(path.read_text(encoding="utf-8")))
        if "revision" in found:
            down = found.get("down_revision", "None")
            revisions[found["revision"].strip('"')] = None if down == "None" else down.strip('"')
    heads = set(revisions) - set(revisions.values())
    return heads.pop() if len(heads) == 1 else None


async def at_head(engine: AsyncEngine) -> bool:
    """True when the database already has the newest migration (one read): opening it
    then needs no Alembic at all."""
    head = head_revision()
    if head is None:
        return False
    try:
        async with engine.connect() as conn:
            found = (await conn.execute(text("SELECT version_num FROM alembic_version"))).all()
    except DBAPIError:
        return False  # no version table yet: a new database
    return [row[0] for row in found] == [head]


async def upgrade(engine: AsyncEngine, revision: str = "head") -> None:
    """Apply migrations up to `revision` in one write transaction.

    On PostgreSQL an advisory lock serialises instances starting together; on SQLite
    BEGIN IMMEDIATE does the same.
    """
    # Alembic loads only when there may be something to do: most commands open a database
    # that is already current.
    if revision == "head" and await at_head(engine):
        return
    from alembic import command
    from alembic.runtime.migration import MigrationContext
    from alembic.util.exc import CommandError

    cfg = alembic_config()

    def run(sync_conn: Connection) -> None:
        if sync_conn.dialect.name == "postgresql":
            sync_conn.exec_driver_sql("SELECT pg_advisory_xact_lock(727274001)")
        before = MigrationContext.configure(sync_conn).get_current_revision()
        cfg.attributes["connection"] = sync_conn
        command.upgrade(cfg, revision)
        after = MigrationContext.configure(sync_conn).get_current_revision()
        if before != after:  # one line however many migrations ran
            steps = _steps(cfg, before, after)
            log.info(
                "database schema %s: %d migration(s) applied",
                f"created at {after}" if before is None else f"upgraded from {before} to {after}",
                steps,
            )

    try:
        async with engine.connect() as conn:
            conn = await conn.execution_options(**{WRITE_OPTION: True})
            try:
                async with conn.begin():
                    await conn.run_sync(run)
            except CommandError as exc:
                raise StoreUnavailable(
                    f"The database was written by a newer strikebot ({exc}). "
                    "Upgrade strikebot (git pull; make run) before using this database."
                ) from None
    except DBAPIError as exc:
        translated = store_failure(exc, str(engine.url))
        if translated is None:
            raise
        raise translated from exc


def _steps(cfg: Config, before: str | None, after: str | None) -> int:
    from alembic.script import ScriptDirectory

    scripts = ScriptDirectory.from_config(cfg)
    if after is None:
        return 0
    return sum(1 for _ in scripts.iterate_revisions(after, before or "base"))


async def check_reachable(engine: AsyncEngine, url: str, within: float = 10.0) -> None:
    """Fail with one clear sentence when the database cannot be reached."""
    try:
        async with asyncio.timeout(within):
            async with engine.connect() as conn:
                await conn.exec_driver_sql("SELECT 1")
    except (OSError, TimeoutError, Exception) as exc:
        translated = store_failure(exc, url)
        if translated is not None and not _cannot_connect(exc):
            raise translated from exc
        shown = make_url(url).render_as_string(hide_password=True)
        raise StoreUnavailable(
            f"Cannot open the database at {shown} ({type(exc).__name__}: {_first_line(exc)}). "
            "Check STRIKEBOT_DATABASE_URL and that the database server is running."
        ) from exc


# -- one sentence for a store that cannot do its job ---------------------------------------

# SQLite's messages (sqlite3 gives no codes before Python 3.11's sqlite_errorname).
_SQLITE_DAMAGED = ("database disk image is malformed", "file is not a database")
_SQLITE_READ_ONLY = ("attempt to write a readonly database", "readonly database")
_SQLITE_FULL = ("database or disk is full",)
_SQLITE_CANT_OPEN = ("unable to open database file",)
_SQLITE_IO = ("disk i/o error",)
# PostgreSQL's SQLSTATEs.
_PG_FULL = {"53100"}  # disk_full
_PG_READ_ONLY = {"25006"}  # read_only_sql_transaction (a standby, default_transaction_read_only)
_PG_DAMAGED = {"XX001", "XX002"}  # data_corrupted, index_corrupted
# Errors that are the request's own fault, not the store's: never translated.
_NOT_THE_STORE = (IntegrityError, DataError, ProgrammingError)


def store_failure(exc: BaseException, url: str) -> StoreUnavailable | None:
    """`exc` as one sentence saying what is wrong with the store and what to do, or None when
    it is not a store failure (a constraint, a bad statement: the caller's business).

    Covers a damaged file, a read-only file or file system, a full disk, an I/O error and a
    database server that went away; the sentence never holds SQL or parameters."""
    # (asyncpg's errors reach SQLAlchemy as plain DBAPIError: the SQLSTATE tells them apart.)
    if not isinstance(exc, DBAPIError) or isinstance(exc, _NOT_THE_STORE):
        return None
    driver = _first_line(exc.orig) if exc.orig is not None else ""
    message = driver.lower()
    code = str(getattr(exc.orig, "sqlstate", None) or getattr(exc.orig, "pgcode", None) or "")
    where = _where(url)
    if any(m in message for m in _SQLITE_DAMAGED) or code in _PG_DAMAGED:
        return StoreUnavailable(
            f"The database {where} is damaged ({driver}). Stop strikebot, restore the file "
            "from your latest backup (or a `strikebot export` file with `strikebot import` "
            "into a new database), and start it again."
        )
    if any(m in message for m in _SQLITE_FULL) or code in _PG_FULL:
        return StoreUnavailable(
            f"The disk holding the database {where} is full ({driver}). Free some space "
            "there, then try again; nothing was saved."
        )
    if any(m in message for m in _SQLITE_READ_ONLY) or code in _PG_READ_ONLY:
        return StoreUnavailable(
            f"The database {where} can be read but not written ({driver}). {_writable_hint(url)}"
        )
    if any(m in message for m in _SQLITE_CANT_OPEN) and _sqlite_not_writable(url):
        return StoreUnavailable(
            f"The database {where} cannot be opened for writing ({driver}). {_writable_hint(url)}"
        )
    if any(m in message for m in _SQLITE_IO):
        return StoreUnavailable(
            f"The disk holding the database {where} failed to read or write ({driver}). "
            "Check the disk (dmesg, df), then try again."
        )
    if isinstance(exc, OperationalError | InterfaceError):
        return StoreUnavailable(
            f"The database {where} stopped answering ({driver}). Check that it is running "
            "and reachable (STRIKEBOT_DATABASE_URL), then try again."
        )
    return None


def _cannot_connect(exc: BaseException) -> bool:
    """A connection that never opened: check_reachable's own sentence says it best."""
    message = str(getattr(exc, "orig", "") or "").lower()
    return "connect" in message and "unable to open database file" not in message


def _first_line(exc: object) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0][:200] if lines else type(exc).__name__


def _sqlite_path(url: str) -> Path | None:
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database:
        return None
    database = parsed.database
    if database == ":memory:" or database.startswith("file:"):
        return None
    return Path(database)


def _where(url: str) -> str:
    path = _sqlite_path(url)
    if path is not None:
        return f"file {path}"
    return f"at {make_url(url).render_as_string(hide_password=True)}"


def _sqlite_not_writable(url: str) -> bool:
    path = _sqlite_path(url)
    if path is None:
        return False
    return not os.access(path.parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK))


def _writable_hint(url: str) -> str:
    path = _sqlite_path(url)
    if path is None:
        return (
            "Point STRIKEBOT_DATABASE_URL at the primary server, not a read-only standby, "
            "and check the user's rights."
        )
    return (
        f"Make {path} and its folder writable by the user running strikebot (SQLite also "
        f"writes {path.name}-wal and {path.name}-shm beside it; a volume mounted read-only "
        "or an immutable file cannot be), or point STRIKEBOT_DATABASE_URL at a writable copy."
    )
