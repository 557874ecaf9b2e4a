"""SQLite statements in one trip to aiosqlite's thread each.

aiosqlite runs every call on a thread of its own; each call is a trip there and back, which
wakes that thread and then the event loop (on an otherwise idle machine, waking is most of
what a short statement costs). SQLAlchemy's aiosqlite adapter takes three or four trips per
statement: make a cursor, execute, fetch the rows, close the cursor. The cursor here does
all four in one trip, in the thread, and keeps the rows, the description, the row count and
the last row id for the engine to read. Server-side cursors (streaming results) stay
SQLAlchemy's own.

`create_engine` passes `module=one_trip_dbapi()` for SQLite: the dialect is SQLAlchemy's,
only its connections' cursors are these.
"""

from __future__ import annotations

import sqlite3
from collections import deque
from collections.abc import Iterator, Sequence
from typing import Any

import aiosqlite
from sqlalchemy.dialects.sqlite.aiosqlite import (
    AsyncAdapt_aiosqlite_connection,
    AsyncAdapt_aiosqlite_dbapi,
)
from sqlalchemy.util import await_only

Trip = tuple[Any, list[Any], int, int | None]


def _run(conn: sqlite3.Connection, operation: str, parameters: Any, many: bool) -> Trip:
    """In aiosqlite's thread: the statement, its rows, and what the engine reads after."""
    cursor = conn.cursor()
    try:
        if many:
            cursor.executemany(operation, parameters)
        elif parameters is None:
            cursor.execute(operation)
        else:
            cursor.execute(operation, parameters)
        description = cursor.description
        rows = cursor.fetchall() if description else []
        return description, rows, cursor.rowcount, cursor.lastrowid
    finally:
        cursor.close()


class OneTripCursor:
    """The DB-API cursor the engine gets for a statement: one trip per execute."""

    server_side = False

    def __init__(self, adapted: OneTripConnection) -> None:
        self._adapted = adapted
        self.description: Any = None
        self.rowcount = -1
        self.lastrowid: int | None = None
        self.arraysize = 1
        self._rows: deque[Any] = deque()

    def execute(self, operation: str, parameters: Any = None) -> None:
        self._trip(operation, parameters, many=False)

    def executemany(self, operation: str, seq_of_parameters: Any) -> None:
        self._trip(operation, seq_of_parameters, many=True)

    def _trip(self, operation: str, parameters: Any, *, many: bool) -> None:
        try:
            trip = await_only(self._locked(operation, parameters, many))
        except Exception as error:
            self._adapted._handle_exception(error)
        self.description, rows, self.rowcount, self.lastrowid = trip
        self._rows = deque(rows)

    async def _locked(self, operation: str, parameters: Any, many: bool) -> Trip:
        # aiosqlite's own way into its thread (`_execute`, as its public methods use it).
        driver: Any = self._adapted._connection
        async with self._adapted._execute_mutex:
            result: Trip = await driver._execute(_run, driver._conn, operation, parameters, many)
            return result

    async def _async_soft_close(self) -> None:
        """Closed in the thread already (SQLAlchemy calls this before a sync result)."""

    def close(self) -> None:
        self._rows.clear()

    def setinputsizes(self, *_sizes: Any) -> None:
        pass

    def __iter__(self) -> Iterator[Any]:
        while self._rows:
            yield self._rows.popleft()

    def fetchone(self) -> Any:
        return self._rows.popleft() if self._rows else None

    def fetchmany(self, size: int | None = None) -> Sequence[Any]:
        rows = self._rows
        return [rows.popleft() for _ in range(min(size or self.arraysize, len(rows)))]

    def fetchall(self) -> Sequence[Any]:
        rows = list(self._rows)
        self._rows.clear()
        return rows


class OneTripConnection(AsyncAdapt_aiosqlite_connection):
    """SQLAlchemy's adapted aiosqlite connection, handing out `OneTripCursor`s."""

    __slots__ = ()

    def cursor(self, server_side: bool = False) -> Any:
        if server_side:
            return super().cursor(server_side=True)
        return OneTripCursor(self)


class OneTripDBAPI(AsyncAdapt_aiosqlite_dbapi):
    def connect(self, *args: Any, **kwargs: Any) -> OneTripConnection:
        connection = super().connect(*args, **kwargs)
        connection.__class__ = OneTripConnection
        return connection  # type: ignore[return-value]


def one_trip_dbapi() -> OneTripDBAPI | None:
    """The DB-API module for SQLite's engine; None when the installed aiosqlite or
    SQLAlchemy no longer has the private parts the cursor uses (an upgrade renamed them):
    SQLAlchemy's own cursors then, a few more trips per statement and nothing else lost."""
    if not (
        hasattr(aiosqlite.Connection, "_execute")
        and hasattr(AsyncAdapt_aiosqlite_connection, "_execute_mutex")
        and hasattr(AsyncAdapt_aiosqlite_connection, "_handle_exception")
    ):
        return None
    return OneTripDBAPI(aiosqlite, sqlite3)
