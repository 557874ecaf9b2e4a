"""What one wake-up of an asyncio event loop costs on this machine, in CPU.

A bare task sleeps to slots `--rate` a second apart (as the pacer's do), with `extra` more
short sleeps before each slot (0, 1, 2: one more wake-up per slot each); the thread's CPU
time per slot, for each. The difference between the rows is what a wake-up costs, without
any work of its own. Run it beside `python3 -c "while True: pass"` and without, to see what
a busy core does to it (bench/README.md, fan-out section).

    .venv/bin/python -m bench._probe_wake [--rate 48.5] [--slots 300] [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import time


async def per_slot(extra: int, slots: int, rate: float) -> float:
    """Microseconds of this thread's CPU per slot."""
    loop = asyncio.get_running_loop()
    cpu, start = time.thread_time(), loop.time()
    for k in range(slots):
        for _ in range(extra):
            await asyncio.sleep(0.003)
        await asyncio.sleep(max(0.0, start + (k + 1) / rate - loop.time()))
    return (time.thread_time() - cpu) / slots * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=48.5, help="slots a second")
    parser.add_argument("--slots", type=int, default=300, help="slots per measurement")
    parser.add_argument("--rounds", type=int, default=2, help="times each is measured")
    args = parser.parse_args()
    for _ in range(args.rounds):
        for extra in (0, 1, 2):
            us = asyncio.run(per_slot(extra, args.slots, args.rate))
            print(f"wake-ups per slot {extra + 1}: {us:.0f} µs of CPU per slot")


if __name__ == "__main__":
    main()
