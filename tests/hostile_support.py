"""Hostile clients, in a process of their own (so the client being timed is not slowed by
their loop): idle connections that say nothing, and clients that trickle their headers one
line a second; each connects again as soon as it is dropped. They come from loopback
addresses other than 127.0.0.1 (`PER_ADDRESS` from each of 127.0.0.2, 127.0.0.3...), as
from many machines; nothing leaves the loopback interface.

    python -m tests.hostile_support PORT IDLE SLOW    # prints "ready", then on SIGTERM
                                                      # the number of connections opened
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import resource
import signal
import sys

RECONNECT = 1.0  # seconds (on average) before a dropped or refused client connects again


PER_ADDRESS = 50  # connections from each loopback address (127.0.0.2, 127.0.0.3...)


async def _idle(port: int, source: str, stop: asyncio.Event, opened: list[int]) -> None:
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_connection(
                "127.0.0.1", port, local_addr=(source, 0)
            )
        except OSError:
            await asyncio.sleep(random.uniform(0.5, 1.5) * RECONNECT)
            continue
        opened[0] += 1
        reading = asyncio.ensure_future(reader.read())
        stopping = asyncio.ensure_future(stop.wait())
        await asyncio.wait({reading, stopping}, return_when=asyncio.FIRST_COMPLETED)
        reading.cancel()
        stopping.cancel()
        writer.close()
        await asyncio.sleep(random.uniform(0.5, 1.5) * RECONNECT)


async def _trickle(port: int, source: str, stop: asyncio.Event, opened: list[int]) -> None:
    while not stop.is_set():
        try:
            _reader, writer = await asyncio.open_connection(
                "127.0.0.1", port, local_addr=(source, 0)
            )
        except OSError:
            await asyncio.sleep(random.uniform(0.5, 1.5) * RECONNECT)
            continue
        opened[0] += 1
        with contextlib.suppress(OSError):
            writer.write(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            n = 0
            while not stop.is_set() and not writer.is_closing():
                await writer.drain()
                await asyncio.sleep(1)
                writer.write(f"X-Slow-{n}: a\r\n".encode())
                n += 1
        writer.close()
        await asyncio.sleep(random.uniform(0.5, 1.5) * RECONNECT)


async def main(port: int, idle: int, slow: int) -> None:
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    opened = [0]

    def source(n: int) -> str:
        return f"127.0.0.{2 + n // PER_ADDRESS}"

    tasks = [asyncio.create_task(_idle(port, source(n), stop, opened)) for n in range(idle)]
    tasks += [
        asyncio.create_task(_trickle(port, source(idle + n), stop, opened)) for n in range(slow)
    ]
    await asyncio.sleep(1)
    print("ready", flush=True)
    await stop.wait()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    print(opened[0], flush=True)


if __name__ == "__main__":
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    asyncio.run(main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])))
