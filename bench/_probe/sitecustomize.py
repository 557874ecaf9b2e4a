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

        # Where each timer was set (the first frame outside asyncio), and why each wake-up
        # came: a timer (by where it was set), the loop's self-pipe (another thread's
        # result: aiosqlite's), or a socket. Counted as "timer:<where>" and "wake:<why>".
        import selectors
        import sys

        _origins: dict[int, str] = {}
        _events: list[list[int]] = [[]]  # the file descriptors the last select found ready
        _select = selectors.EpollSelector.select

        def _origin() -> str:
            frame: Any = sys._getframe(2)
            while frame is not None and (
                "/asyncio/" in frame.f_code.co_filename or frame.f_code.co_filename == __file__
            ):
                frame = frame.f_back
            if frame is None:
                return "?"
            name = frame.f_code.co_filename.rsplit("/", 2)
            return f"{'/'.join(name[-2:])}:{frame.f_code.co_name}"

        def _counted_select(self: Any, timeout: Any = None) -> Any:
            ready = _select(self, timeout)
            _events[0] = [key.fd for key, _ in ready]
            return ready

        def _bump(key: str) -> None:
            counts[key] = counts.get(key, 0) + 1

        def _counted_run_once(self: Any) -> None:
            counts["loop_turns"] += 1
            if self._ready:
                _run_once(self)
                return
            counts["wakeups"] += 1
            head = self._scheduled[0] if self._scheduled else None
            _run_once(self)
            if not _events[0]:
                _bump("wake:timer " + (_origins.get(id(head), "?") if head else "?"))
            elif self._ssock is not None and self._ssock.fileno() in _events[0]:
                _bump("wake:self-pipe")
            else:
                _bump("wake:socket")

        def _counted_create_task(self: Any, *args: Any, **kwargs: Any) -> Any:
            counts["tasks"] += 1
            return _create_task(self, *args, **kwargs)

        def _counted_call_at(self: Any, *args: Any, **kwargs: Any) -> Any:
            counts["timers"] += 1
            where = _origin()
            _bump("timer:" + where)
            if "_outbound.py:wait" in where:  # how long the window guard holds a request
                held = (args[0] - self.time()) * 1000
                band = "<1" if held < 1 else "<3" if held < 3 else "<10" if held < 10 else ">=10"
                _bump(f"guard:{band} ms")
            handle = _call_at(self, *args, **kwargs)
            if len(_origins) > 20000:
                for key in list(_origins)[:10000]:
                    del _origins[key]
            _origins[id(handle)] = where
            return handle

        selectors.EpollSelector.select = _counted_select  # type: ignore[method-assign]

        def _caller() -> str:
            frame: Any = sys._getframe(2)
            while frame is not None:
                name = frame.f_code.co_filename
                if "/bot/" in name and not name.endswith(("_one_trip.py", "store/__init__.py")):
                    return f"{'/'.join(name.rsplit('/', 2)[-2:])}:{frame.f_code.co_name}"
                frame = frame.f_back
            return "?"

        async def _counted_execute(self: Any, *args: Any, **kwargs: Any) -> Any:
            counts["sqlite_trips"] += 1
            _bump("trip:" + _caller())
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

    # With STRIKEBOT_BENCH_SAMPLE=<file>: from the first SIGUSR1 to the second, the main
    # thread's stack is sampled every millisecond of the process's CPU time (SIGPROF), and
    # the samples are written to that file as collapsed stacks ("a;b;c <count>"). CPU time,
    # not wall time: what the process spent, where it was.
    _SAMPLE = os.environ.get("STRIKEBOT_BENCH_SAMPLE")
    _samples: dict[tuple[str, ...], int] = {}
    _sampling = [False]

    def _sample(_signum: int, frame: Any) -> None:
        stack = []
        while frame is not None:
            code = frame.f_code
            stack.append(f"{code.co_qualname} ({code.co_filename.rsplit('/', 2)[-2:][-1]})")
            frame = frame.f_back
        key = tuple(reversed(stack))
        _samples[key] = _samples.get(key, 0) + 1

    def _toggle_sampling() -> None:
        if not _sampling[0]:
            _sampling[0] = True
            signal.signal(signal.SIGPROF, _sample)
            signal.setitimer(signal.ITIMER_PROF, 0.001, 0.001)
            return
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
        assert _SAMPLE
        with Path(_SAMPLE).open("w") as out:
            for key, n in _samples.items():
                out.write(";".join(key) + f" {n}\n")

    def _dump(*_args: Any) -> None:
        global _profiler
        if _SAMPLE:
            _toggle_sampling()
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
