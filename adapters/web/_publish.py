"""The public site as static files: `strikebot publish <dir>`, and `[web] publish_dir`.

The site is rendered by the same application that serves it (its own instance, on a Unix
socket in a temporary directory, so nothing listens on the network): every page in every
language, every update's page, the archive, Atom, iCalendar, the public JSON and the
OpenAPI document. Links between pages become relative file paths, so any static host (a
bucket, GitHub Pages, a plain web server, a CDN in front of one) serves it as it is.

Publishing is atomic: the site is built in a new sibling directory, then `dir` (a symbolic
link) is switched to it with one rename; a reader never sees half a site. The previous
build is kept for readers still downloading from it; older ones are removed.

Relative countdowns ("in 2 days") would be wrong on a page that is not re-rendered each
minute, so the static pages give the time itself. The running bot re-publishes after every
public change, when an embargo passes and when the local date turns (`Publisher`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import posixpath
import re
import secrets
import shutil
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime
from pathlib import Path
from urllib.parse import parse_qs, urlsplit
from zoneinfo import ZoneInfo

import aiohttp
from aiohttp import web

from bot.ports import PluginContext, StrikebotError

from ._app import STALE_MARKER, STATE, log

DEBOUNCE_SECONDS = 2.0  # a burst of changes is published once
RETRY_SECONDS = 30.0  # after a failed publish
API = "/api/v1"
_LINK = re.compile(rb'(href|src)="(/[^"]*)"')
BUILD_PREFIX = ".site-"

plog = logging.getLogger("strikebot.web.publish")


@dataclass(frozen=True, slots=True)
class Published:
    """What one publish wrote."""

    directory: Path  # the link readers follow
    build: Path  # the directory it points to now
    files: int
    bytes: int
    seconds: float

    def to_json(self) -> dict[str, object]:
        return {
            "directory": str(self.directory),
            "build": str(self.build),
            "files": self.files,
            "bytes": self.bytes,
            "seconds": round(self.seconds, 3),
        }


# -- where each address goes ---------------------------------------------------------------


def file_for(address: str, languages: tuple[str, ...], default: str) -> str | None:
    """The static file for a site address (path and query), or None if it has none."""
    parts = urlsplit(address)
    path, query = parts.path, parse_qs(parts.query)
    if path.startswith(API + "/"):
        return _api_file(path.removeprefix(API + "/"), query, default)
    if path == "/favicon.ico":
        return "favicon.ico"
    first = path.strip("/").split("/", 1)[0]
    prefix = f"{first}/" if first in languages and first != default else ""
    rest = path.removeprefix(f"/{first}" if prefix else "")
    if rest in ("/", ""):
        return f"{prefix}index.html"
    if rest == "/updates":
        after = query.get("after", [""])[0]
        return f"{prefix}updates/{f'older-{after}' if after else 'index'}.html"
    found = re.fullmatch(r"/updates/(\d+)", rest)
    if found:
        return f"{prefix}updates/{found.group(1)}/index.html"
    if rest in ("/feed.atom", "/calendar.ics"):
        return f"{prefix}{rest[1:]}"
    return None


def _api_file(rest: str, query: dict[str, list[str]], default: str) -> str | None:
    lang = query.get("lang", [default])[0]
    suffix = "" if lang == default else f".{lang}"
    if rest == "openapi.json":
        return "api/v1/openapi.json"
    if rest in ("status", "demands"):
        return f"api/v1/{rest}{suffix}.json"
    if rest == "updates":
        after = query.get("after", [""])[0]
        return f"api/v1/updates{f'.after-{after}' if after else ''}{suffix}.json"
    found = re.fullmatch(r"(updates|demands)/([A-Za-z0-9_-]+)", rest)
    if found:
        return f"api/v1/{found.group(1)}/{found.group(2)}{suffix}.json"
    return None


def relative(from_file: str, to_file: str) -> str:
    return posixpath.relpath(to_file, posixpath.dirname(from_file) or ".")


# -- building --------------------------------------------------------------------------------


class _Site:
    """Fetches addresses from the private app and writes them as files under `root`."""

    def __init__(self, session: aiohttp.ClientSession, ctx: PluginContext, root: Path) -> None:
        self.session = session
        self.campaign = ctx.campaign
        self.root = root
        self.files = 0
        self.bytes = 0
        self._seen: set[str] = set()
        self._queue: list[str] = []

    def file_for(self, address: str) -> str | None:
        return file_for(address, self.campaign.languages, self.campaign.default_language)

    def want(self, address: str) -> None:
        target = self.file_for(address)
        if target is not None and target not in self._seen:
            self._seen.add(target)
            self._queue.append(address)

    async def run(self) -> None:
        while self._queue:
            await self.fetch(self._queue.pop())

    async def fetch(self, address: str) -> None:
        target = self.file_for(address)
        assert target is not None
        async with self.session.get(address, allow_redirects=False) as response:
            body = await response.read()
            if response.status != 200 or "Strikebot-Stale" in response.headers:
                raise StrikebotError(
                    f"Publishing stopped: {address} answered {response.status}"
                    f"{' (out of date: the store failed)' if response.status == 200 else ''}. "
                    "Nothing was switched; the site on disk is unchanged."
                )
            kind = response.content_type
            modified = response.headers.get("Last-Modified")
        if kind == "text/html":
            body = self.links(target, body.replace(STALE_MARKER, b""))
        elif kind == "application/json" and address.startswith(API + "/"):
            body = self.json(address, target, body)
        self.write(target, body, modified)

    def links(self, page: str, html: bytes) -> bytes:
        """Site-absolute links (`/updates/3`) as paths relative to `page`."""

        def swap(match: re.Match[bytes]) -> bytes:
            address = match.group(2).decode()
            path, _, fragment = address.partition("#")
            target = self.file_for(path)
            if target is None:
                return match.group(0)
            self.want(path)
            link = relative(page, target) + (f"#{fragment}" if fragment else "")
            return match.group(1) + b'="' + link.encode() + b'"'

        return _LINK.sub(swap, html)

    def json(self, address: str, target: str, body: bytes) -> bytes:
        """Follow what the document names (pages, items); point `next` at its file."""
        data = json.loads(body)
        lang = parse_qs(urlsplit(address).query).get("lang", [self.campaign.default_language])
        if isinstance(data, dict) and isinstance(data.get("items"), list):
            kind = "updates" if urlsplit(address).path.endswith("/updates") else "demands"
            for item in data["items"]:
                ident = item.get("id") if kind == "updates" else item.get("key")
                if ident is not None:
                    self.want(f"{API}/{kind}/{ident}?lang={lang[0]}")
            following = data.get("next")
            if isinstance(following, str):
                self.want(following)
                found = self.file_for(following)
                data["next"] = relative(target, found) if found else None
                return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()
        return body

    def write(self, target: str, body: bytes, modified: str | None = None) -> None:
        """Write one file; its time is the page's Last-Modified, so a static host's own
        validators (from the file's time and size) stay the same across publishes while
        the page does."""
        path = self.root / target
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body)
        if modified:
            stamp = parsedate_to_datetime(modified).timestamp()
            os.utime(path, (stamp, stamp))
        self.files += 1
        self.bytes += len(body)


@contextlib.asynccontextmanager
async def _private_app(ctx: PluginContext) -> AsyncIterator[aiohttp.ClientSession]:
    """The web app on a Unix socket only this process knows, with a client for it."""
    from ._build import build_app

    app = build_app(ctx)
    app[STATE].static = True
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    with tempfile.TemporaryDirectory(prefix="strikebot-publish-") as where:
        socket_path = str(Path(where) / "web.sock")
        await web.UnixSite(runner, socket_path).start()
        connector = aiohttp.UnixConnector(path=socket_path)
        try:
            async with aiohttp.ClientSession(
                "http://strikebot.invalid", connector=connector
            ) as session:
                yield session
        finally:
            await runner.cleanup()


async def publish_site(ctx: PluginContext, directory: Path) -> Published:
    """Render the whole public site into a new build beside `directory`, then switch
    `directory` (a symbolic link) to it atomically."""
    began = time.perf_counter()
    directory, build = _new_build(directory)
    try:
        async with _private_app(ctx) as session:
            site = _Site(session, ctx, build)
            for lang in ctx.campaign.languages:
                prefix = "" if lang == ctx.campaign.default_language else f"/{lang}"
                for path in ("/", "/updates", "/feed.atom", "/calendar.ics"):
                    site.want(f"{prefix}{path}")
                for name in ("status", "demands", "updates"):
                    site.want(f"{API}/{name}?lang={lang}")
            site.want(f"{API}/openapi.json")
            await site.run()
            await _not_found_page(session, site)
        _switch(directory, build)
    except BaseException:
        shutil.rmtree(build, ignore_errors=True)
        raise
    _prune(directory, keep={build.name})
    return Published(directory, build, site.files, site.bytes, time.perf_counter() - began)


async def _not_found_page(session: aiohttp.ClientSession, site: _Site) -> None:
    """404.html, which most static hosts show for a missing address."""
    async with session.get("/updates/0") as response:
        body = await response.read()
    site.write("404.html", site.links("404.html", body.replace(STALE_MARKER, b"")))
    await site.run()


def _new_build(directory: Path) -> tuple[Path, Path]:
    """(the absolute link path, a new empty build directory beside it)."""
    directory = directory.absolute()
    _check_target(directory)
    directory.parent.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S") + "-" + secrets.token_hex(3)
    build = directory.parent / f".{directory.name}{BUILD_PREFIX}{stamp}"
    build.mkdir()
    return directory, build


def _check_target(directory: Path) -> None:
    if directory.is_symlink() or not directory.exists():
        return
    if directory.is_dir() and not any(directory.iterdir()):
        return
    raise StrikebotError(
        f"{directory} already exists and is not a site published by strikebot (which is a "
        "link to a build beside it). Choose a new directory, or move this one away first."
    )


def _switch(directory: Path, build: Path) -> None:
    """Point `directory` at `build` with one rename: readers see the old site or the new."""
    if directory.exists() and not directory.is_symlink():
        directory.rmdir()  # empty (checked): nobody can be reading it
    link = directory.parent / f".{directory.name}.link-{secrets.token_hex(4)}"
    link.symlink_to(build.name, target_is_directory=True)
    link.replace(directory)


def _prune(directory: Path, keep: set[str]) -> None:
    """Remove old builds, keeping the current one and the one before it."""
    builds = sorted(
        (p for p in directory.parent.glob(f".{directory.name}{BUILD_PREFIX}*") if p.is_dir()),
        key=lambda p: p.stat().st_mtime,
    )
    survivors = {p.name for p in builds[-2:]} | keep
    for old in builds:
        if old.name not in survivors:
            shutil.rmtree(old, ignore_errors=True)


# -- re-publishing from the running bot --------------------------------------------------------


class Publisher:
    """Re-publishes the site after every public change (debounced), when an embargo passes
    and when the local date turns; one publish at a time, retried after a failure."""

    def __init__(self, ctx: PluginContext, directory: Path) -> None:
        self.ctx = ctx
        self.directory = directory
        self.published = 0
        self.last_error: str | None = None
        self.debounce = DEBOUNCE_SECONDS
        self.done = asyncio.Event()  # set after each publish (for whoever waits on one)

    async def run(self, stop: asyncio.Event) -> None:
        store = self.ctx.store
        changes = store.public.listen()
        done: object = None
        while not stop.is_set():
            wake: datetime | None = None
            try:
                version = await store.public.current()
                now = self.ctx.clock()
                async with store.read() as tx:
                    embargo = await tx.next_embargo(now)
                local = now.astimezone(ZoneInfo(self.ctx.campaign.timezone))
                state = (version, embargo, local.date())
                if state != done:
                    changes.clear()
                    result = await publish_site(self.ctx, self.directory)
                    done, self.published, self.last_error = state, self.published + 1, None
                    self.done.set()
                    plog.info(
                        "published %d files to %s in %.1f s",
                        result.files,
                        result.directory,
                        result.seconds,
                    )
                midnight = (local + timedelta(days=1)).replace(
                    hour=0, minute=0, second=0, microsecond=0
                )
                wake = min(m for m in (embargo, midnight) if m is not None)
                delay = max(0.0, (wake - now).total_seconds())
            except Exception as exc:
                self.last_error = f"{type(exc).__name__}: {exc}"
                log.warning("publishing the static site failed (%s); retrying", self.last_error)
                delay = RETRY_SECONDS
            await _wait_any(stop, changes, delay)
            if changes.is_set() and not stop.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), self.debounce)


async def _wait_any(stop: asyncio.Event, changes: asyncio.Event, seconds: float) -> None:
    waits = [asyncio.ensure_future(stop.wait()), asyncio.ensure_future(changes.wait())]
    try:
        await asyncio.wait(waits, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for w in waits:
            w.cancel()
