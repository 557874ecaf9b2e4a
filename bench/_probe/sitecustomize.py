"""Counts the database work of a process the benchmarks start (`strikebot run`).

Put on PYTHONPATH with `STRIKEBOT_BENCH_COUNTS=<file>`: every SQLAlchemy engine in the
process counts the statements it sends, its transactions begun (a BEGIN, which SQLite's
engine issues itself rather than as a statement), its commits and rollbacks, and its
connection checkouts; SIGUSR1 writes the counts to the file as JSON. Each statement, BEGIN,
commit and rollback is one round trip to the database (SQLite's are calls into the library,
on aiosqlite's thread, instead). Nothing happens without the variable.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

_PATH = os.environ.get("STRIKEBOT_BENCH_COUNTS")

if _PATH:
    from sqlalchemy import event
    from sqlalchemy.engine import Engine
    from sqlalchemy.pool import Pool

    counts = {"statements": 0, "begins": 0, "commits": 0, "rollbacks": 0, "checkouts": 0}

    @event.listens_for(Engine, "begin")
    def _begin(*_args: Any) -> None:
        counts["begins"] += 1

    @event.listens_for(Engine, "before_cursor_execute")
    def _statement(*_args: Any) -> None:
        counts["statements"] += 1

    @event.listens_for(Engine, "commit")
    def _commit(*_args: Any) -> None:
        counts["commits"] += 1

    @event.listens_for(Engine, "rollback")
    def _rollback(*_args: Any) -> None:
        counts["rollbacks"] += 1

    @event.listens_for(Pool, "checkout")
    def _checkout(*_args: Any) -> None:
        counts["checkouts"] += 1

    # With STRIKEBOT_BENCH_LOOP=1 too: what the event loop did, counted by wrapping four
    # of its methods (a little CPU of its own per event): its turns, the turns that began
    # by sleeping in epoll (a wake-up: on an otherwise idle machine the costliest part of
    # an event), tasks made, timers set, and trips to aiosqlite's thread (each wakes that
    # thread, then the event loop).
    if os.environ.get("STRIKEBOT_BENCH_LOOP"):
        import asyncio.base_events as _base

        import aiosqlite.core as _aiosqlite

        counts |= {"loop_turns": 0, "wakeups": 0, "tasks": 0, "timers": 0, "sqlite_trips": 0}
        loop_class: Any = _base.BaseEventLoop
        sqlite_connection: Any = _aiosqlite.Connection
        _run_once = loop_class._run_once
        _create_task = loop_class.create_task
        _call_at = loop_class.call_at
        _execute = sqlite_connection._execute

        def _counted_run_once(self: Any) -> None:
            counts["loop_turns"] += 1
            if not self._ready:
                counts["wakeups"] += 1
            _run_once(self)

        def _counted_create_task(self: Any, *args: Any, **kwargs: Any) -> Any:
            counts["tasks"] += 1
            return _create_task(self, *args, **kwargs)

        def _counted_call_at(self: Any, *args: Any, **kwargs: Any) -> Any:
            counts["timers"] += 1
            return _call_at(self, *args, **kwargs)

        async def _counted_execute(self: Any, *args: Any, **kwargs: Any) -> Any:
            counts["sqlite_trips"] += 1
            return await _execute(self, *args, **kwargs)

        loop_class._run_once = _counted_run_once
        loop_class.create_task = _counted_create_task
        loop_class.call_at = _counted_call_at
        sqlite_connection._execute = _counted_execute

    _TARGET = Path(_PATH)

    # With STRIKEBOT_BENCH_PROFILE=<file> too: cProfile runs from the first SIGUSR1 to the
    # second, and its stats are written to that file.
    _PROFILE = os.environ.get("STRIKEBOT_BENCH_PROFILE")
    _profiler: Any = None

    def _dump(*_args: Any) -> None:
        global _profiler
        if _PROFILE:
            import cProfile

            if _profiler is None:
                # CPU time of the thread (the event loop's), not wall time: what a
                # function cost, not how long the process waited on the way.
                _profiler = cProfile.Profile(time.thread_time)
                _profiler.enable()
            else:
                _profiler.disable()
                _profiler.dump_stats(_PROFILE)
        tmp = _TARGET.with_name(_TARGET.name + ".tmp")
        tmp.write_text(json.dumps(counts))
        tmp.replace(_TARGET)

    signal.signal(signal.SIGUSR1, _dump)
