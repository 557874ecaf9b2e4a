"""axe-core in Debian's headless Chromium, driven over the DevTools protocol.

axe-core comes from the npm registry at test time (`npm pack`, the version and its sha512
pinned below), cached under `tests/.cache/` so only the first run needs the registry. It is
not committed: it is a 500 KB minified build of someone else's project, and the pin says
exactly which one is run. The browser is driven with aiohttp's websocket client, the way
`tests/test_browser.py` drives it from the command line: no browser-automation library, no
browser download.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import re
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp

from tests.support import ROOT, chromium_path, need_outside

AXE_VERSION = "4.14.1"
AXE_INTEGRITY = (
    "sha512-FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFooJpZe37Og"
    "udVGtQ=="
)
CACHE = ROOT / "tests" / ".cache"
WCAG_21_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]


def axe_source() -> str:
    """axe.min.js of the pinned release, fetched once with `npm pack` and checked."""
    target = CACHE / f"axe-core-{AXE_VERSION}.min.js"
    if target.exists():
        return target.read_text(encoding="utf-8")
    npm = shutil.which("npm")
    if npm is None:
        need_outside("npm", "install Debian's npm package (apt-get install npm)")
    assert npm is not None
    CACHE.mkdir(parents=True, exist_ok=True)
    # Each fetch packs into a directory of its own and renames the checked file into place,
    # so test processes running side by side (pytest-xdist) never read a half-written one.
    with tempfile.TemporaryDirectory(dir=CACHE) as scratch:
        packed = subprocess.run(  # noqa: S603 - npm from PATH, fixed arguments
            [npm, "pack", f"axe-core@{AXE_VERSION}", "--pack-destination", scratch, "--json"],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if packed.returncode != 0:
            need_outside("axe-core from the npm registry", packed.stderr.strip()[-500:])
        tarball = Path(scratch) / json.loads(packed.stdout)[0]["filename"]
        algorithm, _, expected = AXE_INTEGRITY.partition("-")
        digest = base64.b64encode(hashlib.new(algorithm, tarball.read_bytes()).digest()).decode()
        if digest != expected:
            raise AssertionError(f"axe-core {AXE_VERSION} from npm does not match its sha512")
        with tarfile.open(tarball) as archive:
            member = archive.extractfile("package/axe.min.js")
            assert member is not None
            source = member.read().decode("utf-8")
        unpacked = Path(scratch) / "axe.min.js"
        unpacked.write_text(source, encoding="utf-8")
        unpacked.replace(target)
    return source


EVENT_WAIT = 90.0  # seconds a page's event may take on a loaded machine


class DevTools:
    """One page of a headless Chromium, over the DevTools protocol (flattened sessions)."""

    def __init__(self, socket: aiohttp.ClientWebSocketResponse) -> None:
        self.socket = socket
        self.session = ""
        self._next = 0
        self._events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def send(self, method: str, **params: Any) -> dict[str, Any]:
        self._next += 1
        ident = self._next
        message: dict[str, Any] = {"id": ident, "method": method, "params": params}
        if self.session:
            message["sessionId"] = self.session
        await self.socket.send_json(message)
        while True:
            raw = await self.socket.receive_json()
            if raw.get("id") == ident:
                if "error" in raw:
                    raise AssertionError(f"{method}: {raw['error']}")
                result: dict[str, Any] = raw.get("result", {})
                return result
            if "method" in raw:
                await self._events.put(raw)

    async def wait_for(self, method: str) -> dict[str, Any]:
        """The next event `method`; other events stay queued for later waits (dropping them
        lost a service worker's registration that came during a page load)."""
        passed: list[dict[str, Any]] = []
        try:
            async with asyncio.timeout(EVENT_WAIT):
                while not self._events.empty():
                    found = self._events.get_nowait()
                    if found["method"] == method:
                        return found
                    passed.append(found)
                while True:
                    raw: dict[str, Any] = await self.socket.receive_json()
                    if raw.get("method") == method:
                        return raw
                    if "method" in raw:
                        passed.append(raw)
        except TimeoutError:
            raise AssertionError(f"Chromium sent no {method} within {EVENT_WAIT:g} s") from None
        finally:
            rest = [self._events.get_nowait() for _ in range(self._events.qsize())]
            for event in (*passed, *rest):
                self._events.put_nowait(event)

    async def open(self, url: str, width: int, height: int) -> None:
        await self.send(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=width < 600,
        )
        await self.send("Page.enable")
        await self.send("Page.setBypassCSP", enabled=True)  # to inject axe into our pages
        await self.send("Page.navigate", url=url)
        await self.wait_for("Page.loadEventFired")

    async def evaluate(self, expression: str) -> Any:
        result = await self.send(
            "Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True
        )
        if "exceptionDetails" in result:
            raise AssertionError(f"script failed: {result['exceptionDetails']}")
        return result["result"].get("value")


@asynccontextmanager
async def chromium_page(workdir: Path) -> AsyncIterator[DevTools]:
    """A fresh headless Chromium with one blank page, closed afterwards."""
    process = await asyncio.create_subprocess_exec(
        chromium_path(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--remote-debugging-address=127.0.0.1",
        "--remote-debugging-port=0",
        f"--user-data-dir={workdir / 'axe-profile'}",
        "about:blank",
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert process.stderr is not None
        endpoint = ""
        async with asyncio.timeout(60):
            while not endpoint:
                line = (await process.stderr.readline()).decode(errors="replace")
                if not line:
                    raise AssertionError("Chromium exited before opening DevTools")
                found = re.search(r"DevTools listening on (ws://\S+)", line)
                endpoint = found.group(1) if found else ""
        async with (
            aiohttp.ClientSession() as http,
            http.ws_connect(endpoint, max_msg_size=0) as socket,
        ):
            tools = DevTools(socket)
            target = await tools.send("Target.createTarget", url="about:blank")
            attached = await tools.send(
                "Target.attachToTarget", targetId=target["targetId"], flatten=True
            )
            tools.session = attached["sessionId"]
            yield tools
    finally:
        process.kill()
        await process.wait()


async def violations(page: DevTools, url: str, width: int, height: int) -> list[dict[str, Any]]:
    """axe-core's WCAG 2.1 A and AA violations on `url` at `width` x `height` CSS pixels."""
    await page.open(url, width, height)
    await page.evaluate(axe_source())
    tags = json.dumps(WCAG_21_AA)
    found: list[dict[str, Any]] = await page.evaluate(
        f"axe.run(document, {{runOnly: {{type: 'tag', values: {tags}}}}})"
        ".then(r => r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help, "
        "nodes: v.nodes.map(n => n.target.join(' ') + ': ' + n.failureSummary)})))"
    )
    return found
