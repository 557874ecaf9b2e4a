"""Event-loop steps that took long, measured inside a process by CPU time.

A stall seen from outside (`/healthz` answering late) on a loaded machine mixes the step's
own work with the time the process waited for a core. This measures each step (each
callback or task step the loop runs) with the thread's CPU clock and the wall clock, and
appends every step over a threshold to a file: `<unix time> <cpu ms> <wall ms> <what>`.

    STRIKEBOT_BENCH_STEPS=/tmp/steps.txt STRIKEBOT_BENCH_STEPS_MS=20 \\
        python -c "import bench._steps as s; s.main()" run      # = python -m bot.cli run

`read_steps` reads the file back for a time window. SIGUSR2 stops the timing (the loop's
own `Handle._run` back in place): timing every step costs a few microseconds a step, which
a throughput measurement taken afterwards must not pay.
"""

from __future__ import annotations

import asyncio
import asyncio.events
import gc
import os
import runpy
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PATH_VARIABLE = "STRIKEBOT_BENCH_STEPS"
THRESHOLD_VARIABLE = "STRIKEBOT_BENCH_STEPS_MS"


def install(path: Path, threshold_ms: float) -> None:
    """Time every `Handle._run` of every event loop in this process."""
    run = asyncio.events.Handle._run
    limit = threshold_ms / 1000
    out = path.open("a", buffering=1)

    def timed(self: Any) -> None:
        cpu, wall = time.thread_time(), time.perf_counter()
        try:
            run(self)
        finally:
            spent_cpu = time.thread_time() - cpu
            spent_wall = time.perf_counter() - wall
            # Over the threshold by CPU, or by wall clock far beyond it (a step that waited:
            # for a core, for the GIL another thread held, on a blocking call).
            if spent_cpu >= limit or spent_wall >= 4 * limit:
                what = " ".join(describe(self).split())
                out.write(
                    f"{time.time():.3f} {spent_cpu * 1000:.1f} {spent_wall * 1000:.1f} {what}\n"
                )

    asyncio.events.Handle._run = timed  # type: ignore[method-assign]

    def stop(*_args: Any) -> None:
        # The file stays open: a step being timed when the signal came still writes.
        asyncio.events.Handle._run = run  # type: ignore[method-assign]

    signal.signal(signal.SIGUSR2, stop)


def describe(handle: Any) -> str:
    """The task a step belonged to and where it stopped (its next await), else the
    callback."""
    callback = handle._callback
    for owner in (getattr(callback, "__self__", None), *gc.get_referents(callback)):
        if isinstance(owner, asyncio.Task):
            frames: list[str] = []
            awaited: Any = owner.get_coro()
            while awaited is not None and len(frames) < 16:
                frame = getattr(awaited, "cr_frame", None) or getattr(awaited, "ag_frame", None)
                if frame is None:
                    break
                frames.append(f"{Path(frame.f_code.co_filename).name}:{frame.f_lineno}")
                awaited = getattr(awaited, "cr_await", None) or getattr(awaited, "ag_await", None)
            return f"task {owner.get_name()}: {' > '.join(frames)}"
    return repr(handle)[:300]


def main() -> None:
    """`python -m bot.cli ...` with the steps timed (see the module docstring)."""
    install(Path(os.environ[PATH_VARIABLE]), float(os.environ.get(THRESHOLD_VARIABLE, "20")))
    runpy.run_module("bot.cli", run_name="__main__", alter_sys=True)


@dataclass(frozen=True)
class Step:
    at: float  # unix time the step ended
    cpu_ms: float
    wall_ms: float
    what: str


def read_steps(path: Path, start: float = 0.0, end: float = float("inf")) -> list[Step]:
    """The slow steps recorded in [start, end] (unix times), longest CPU first."""
    steps = []
    if path.exists():
        for line in path.read_text().splitlines():
            at, cpu, wall, what = line.split(" ", 3)
            if start <= float(at) <= end:
                steps.append(Step(float(at), float(cpu), float(wall), what))
    return sorted(steps, key=lambda s: -s.cpu_ms)
