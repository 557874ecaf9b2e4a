"""The fake Twilio (`tests/fakes/twilio.py`) in its own process for the pace benchmark, so
its CPU is not counted as the sender's.

Prints `READY <url>`, then answers one line per command on stdin, as JSON: `stats` ->
{"messages", "distinct_ids"} (texts taken, distinct numbers) and `reset` -> {}.

    python -m bench._twilio_sink
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.fakes.twilio import FakeTwilio  # noqa: E402


async def main() -> None:
    loop = asyncio.get_running_loop()
    async with FakeTwilio() as twilio:
        print(f"READY {twilio.url}", flush=True)
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        while line := await reader.readline():
            if line.strip() == b"reset":
                twilio.texts.clear()
                print("{}", flush=True)
                continue
            stats = {
                "messages": len(twilio.texts),
                "distinct_ids": len({t.to for t in twilio.texts}),
            }
            print(json.dumps(stats), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
