"""Starting a fake's aiohttp app on 127.0.0.1 (what every fake server does first)."""

from __future__ import annotations

from typing import Any

from aiohttp import web


async def serve(
    app: web.Application, *, host: str = "127.0.0.1", port: int = 0, **runner_options: Any
) -> tuple[web.AppRunner, int]:
    """Serve `app` on host:port (0: a free port). Returns the runner, for `cleanup()`, and
    the port it listens on."""
    runner = web.AppRunner(app, **runner_options)
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    return runner, int(runner.addresses[0][1])
