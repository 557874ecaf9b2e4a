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
