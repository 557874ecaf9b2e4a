"""Engine creation and migrations: one code path for SQLite (aiosqlite) and PostgreSQL (asyncpg).

SQLite gets WAL, a busy timeout, driver-level autocommit (`isolation_level=None`) so that
SQLAlchemy's BEGIN is ours to emit, and `BEGIN IMMEDIATE` for every write transaction:
a deferred BEGIN that reads then writes fails with "database is locked" under concurrency.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.util.exc import CommandError
from sqlalchemy import Connection, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from bot.errors import StoreUnavailable

DEFAULT_DATABASE_URL = "sqlite+aiosqlite:///data/strikebot.db"
SQLITE_BUSY_TIMEOUT_MS = 30_000
MIGRATIONS = Path(__file__).parent / "migrations"
# Execution option marking a connection whose transaction writes (SQLite: BEGIN IMMEDIATE).
WRITE_OPTION = "strikebot_write"


def create_engine(url: str) -> AsyncEngine:
    """An async engine for `url`, with SQLite configured for concurrent writers."""
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise StoreUnavailable(
            f"STRIKEBOT_DATABASE_URL {url!r} is not a database URL. Use "
            "sqlite+aiosqlite:///data/strikebot.db or postgresql+asyncpg://user@host/db."
        ) from exc
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        if parsed.drivername != "sqlite+aiosqlite":
            parsed = parsed.set(drivername="sqlite+aiosqlite")
        database = parsed.database or ""
        if database and database != ":memory:" and not database.startswith("file:"):
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_async_engine(
            parsed, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000}
        )
        _configure_sqlite(engine)
        return engine
    if backend == "postgresql":
        if parsed.drivername != "postgresql+asyncpg":
            parsed = parsed.set(drivername="postgresql+asyncpg")
        return create_async_engine(parsed, pool_size=10, max_overflow=10, pool_pre_ping=True)
    raise StoreUnavailable(
        f"Database {backend!r} is not supported. Use SQLite "
        "(sqlite+aiosqlite:///data/strikebot.db) or PostgreSQL (postgresql+asyncpg://...)."
    )


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
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def on_begin(conn: Connection) -> None:
        if conn.get_execution_options().get(WRITE_OPTION):
            conn.exec_driver_sql("BEGIN IMMEDIATE")
        else:
            conn.exec_driver_sql("BEGIN")


def alembic_config() -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    return cfg


async def upgrade(engine: AsyncEngine, revision: str = "head") -> None:
    """Apply migrations up to `revision` in one write transaction.

    On PostgreSQL an advisory lock serialises instances starting together; on SQLite
    BEGIN IMMEDIATE does the same.
    """
    cfg = alembic_config()

    def run(sync_conn: Connection) -> None:
        if sync_conn.dialect.name == "postgresql":
            sync_conn.exec_driver_sql("SELECT pg_advisory_xact_lock(727274001)")
        cfg.attributes["connection"] = sync_conn
        command.upgrade(cfg, revision)

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


async def check_reachable(engine: AsyncEngine, url: str, within: float = 10.0) -> None:
    """Fail with one clear sentence when the database cannot be reached."""
    try:
        async with asyncio.timeout(within):
            async with engine.connect() as conn:
                await conn.exec_driver_sql("SELECT 1")
    except (OSError, TimeoutError, Exception) as exc:
        shown = make_url(url).render_as_string(hide_password=True)
        raise StoreUnavailable(
            f"Cannot open the database at {shown} ({type(exc).__name__}: {exc}). "
            "Check STRIKEBOT_DATABASE_URL and that the database server is running."
        ) from exc
