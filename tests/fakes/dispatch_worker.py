"""A dispatcher in its own process, for the crash test: runs until SIGTERM (clean stop) or
SIGKILL (a crash), delivering to a `FakePlatform` at `--api`.

    python -m tests.fakes.dispatch_worker --database-url URL --api http://127.0.0.1:PORT

Like `strikebot run`, each process has its own `default_worker_id()` (pass `--worker-id` only
to pin one); a killed one's leases lapse after `--lease` seconds and another takes them over.
"""

from __future__ import annotations

import argparse
import asyncio
import signal

from bot.clock import utcnow
from bot.config import DeliverySection
from bot.delivery.dispatcher import Dispatcher, Timings
from bot.ports import Pacing
from bot.store import Store
from tests.fakes.platform import FakePlatformAdapter
from tests.support import CAMPAIGN


async def main(args: argparse.Namespace) -> int:
    pacing = Pacing(global_per_second=args.rate, per_channel_per_second=args.rate, max_in_flight=4)
    async with (
        Store.open(args.database_url) as store,
        FakePlatformAdapter(args.api, pacing=pacing, timeout=args.timeout) as adapter,
    ):
        dispatcher = Dispatcher(
            store,
            {"discord": adapter},
            CAMPAIGN,
            utcnow,
            settings=DeliverySection(),
            worker_id=args.worker_id,
            timings=Timings(lease=args.lease, idle_recheck=0.2),
        )
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, lambda: asyncio.ensure_future(dispatcher.stop()))
        print("ready", flush=True)
        await dispatcher.run()
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--api", required=True)
    parser.add_argument("--worker-id", default=None)
    parser.add_argument("--lease", type=float, default=60.0)
    parser.add_argument("--rate", type=float, default=50.0)
    parser.add_argument("--timeout", type=float, default=30.0)
    raise SystemExit(asyncio.run(main(parser.parse_args())))
