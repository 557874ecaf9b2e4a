"""SQLite statements in one trip to aiosqlite's thread each.

aiosqlite runs every call on a thread of its own; each call is a trip there and back, which
wakes that thread and then the event loop (on an otherwise idle machine, waking is most of
what a short statement costs). SQLAlchemy's aiosqlite adapter takes three or four trips per
statement: make a cursor, execute, fetch the rows, close the cursor. The cursor here does
all four in one trip, in the thread, and keeps the rows, the description, the row count and
the last row id for the engine to read. Server-side cursors (streaming results) stay
SQLAlchemy's own.

A transaction's BEGIN goes in the trip of its first statement (`begin_with_next`), and a
transaction that ran no statement commits or rolls back without a trip at all: nothing
reaches the database between the two, so it starts at the same point of the transaction's
work (a `BEGIN IMMEDIATE` that has to wait for another process's writer waits there, as
long, and fails the same way).

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


def _run(
    conn: sqlite3.Connection, begin: str | None, operation: str, parameters: Any, many: bool
) -> Trip:
    """In aiosqlite's thread: the transaction's BEGIN when this is its first statement, the
    statement, its rows, and what the engine reads after."""
    if begin is not None:
        conn.execute(begin)
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
        adapted = self._adapted
        driver: Any = adapted._connection
        async with adapted._execute_mutex:
            begin, adapted._begin = adapted._begin, None
            result: Trip = await driver._execute(
                _run, driver._conn, begin, operation, parameters, many
            )
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
    """SQLAlchemy's adapted aiosqlite connection, handing out `OneTripCursor`s, with the
    transaction's BEGIN held until its first statement."""

    __slots__ = ("_begin",)

    def __init__(self, dbapi: Any, connection: Any) -> None:
        super().__init__(dbapi, connection)
        self._begin: str | None = None

    def begin_with_next(self, sql: str) -> None:
        """Start the transaction with `sql` (BEGIN, BEGIN IMMEDIATE) in the trip of the next
        statement."""
        if self._begin is not None:
            raise sqlite3.OperationalError("cannot start a transaction within a transaction")
        self._begin = sql

    def forget_begin(self) -> bool:
        """Drop a BEGIN no statement followed; True if there was one (then no transaction is
        open in the database, and there is nothing to commit or roll back)."""
        begun, self._begin = self._begin, None
        return begun is not None

    def cursor(self, server_side: bool = False) -> Any:
        if server_side:
            # SQLAlchemy's own cursor, which knows nothing of a BEGIN held here: sent first.
            if (begin := self._begin) is not None:
                self._begin = None
                await_only(self._connection.execute(begin))
            return super().cursor(server_side=True)
        return OneTripCursor(self)

    def commit(self) -> None:
        if not self.forget_begin():
            super().commit()

    def rollback(self) -> None:
        if not self.forget_begin():
            super().rollback()


class OneTripDBAPI(AsyncAdapt_aiosqlite_dbapi):
    def connect(self, *args: Any, **kwargs: Any) -> OneTripConnection:
        connection = super().connect(*args, **kwargs)
        return OneTripConnection(self, connection._connection)


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
