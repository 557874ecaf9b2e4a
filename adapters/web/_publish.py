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
import dataclasses
import hashlib
import json
import logging
import os
import posixpath
import re
import secrets
import shutil
import tempfile
import time
from collections.abc import AsyncIterator, Collection
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime
from pathlib import Path
from urllib.parse import parse_qs, urlsplit
from zoneinfo import ZoneInfo

import aiohttp
from aiohttp import web

from bot.ports import PluginContext, Reads, StrikebotError, i18n

from ._app import PUBLISH_STORE_TIMEOUT, STALE_MARKER, STATE, log
from ._cache import MIN_COMPRESS, compress
from ._mount import build_app
from ._present import ARCHIVE_PAGE, first_page_size

DEBOUNCE_SECONDS = 2.0  # a burst of changes is published once
STATE_FORMAT = 1
COMPRESSED_SUFFIXES = (".html", ".json", ".atom", ".ics")
WEB_FILES = Path(__file__).parent
LOCALES = Path(i18n.__file__).parent / "locales"
RETRY_SECONDS = 30.0  # after a failed publish
API = "/api/v1"
_LINK = re.compile(rb'(href|src)="(/[^"]*)"')
_SITE_PAGE = re.compile(r"/sites/([A-Za-z0-9][A-Za-z0-9_-]{0,31})(/feed\.atom|/calendar\.ics)?")
BUILD_PREFIX = ".site-"

plog = logging.getLogger("strikebot.web.publish")


@dataclass(frozen=True, slots=True)
class Published:
    """What one publish wrote."""

    directory: Path  # the link readers follow
    build: Path  # the directory it points to now
    files: int  # pages rendered (each with its compressed copies)
    bytes: int
    seconds: float
    written: int = 0  # pages whose file changed (a full publish writes every one)
    full: bool = True  # a new build switched in, or changes written into the current one

    def to_json(self) -> dict[str, object]:
        return {
            "directory": str(self.directory),
            "build": str(self.build),
            "files": self.files,
            "bytes": self.bytes,
            "seconds": round(self.seconds, 3),
            "written": self.written,
            "full": self.full,
        }


@dataclass(frozen=True, slots=True)
class SiteState:
    """What the site in a directory shows, kept beside it (`.<name>.publish.json`), so the
    next publish writes only what changed since: the build, the public version, what the
    pages were rendered with (`generation`), when, and how the archive was paged."""

    build: str
    version: int
    generation: str
    now: datetime
    count: int  # public updates
    top: int | None  # the newest one's id

    def to_json(self) -> dict[str, object]:
        return {
            "format": STATE_FORMAT,
            "build": self.build,
            "version": self.version,
            "generation": self.generation,
            "now": self.now.isoformat(),
            "count": self.count,
            "top": self.top,
        }

    @classmethod
    def read(cls, path: Path) -> SiteState | None:
        """The state in `path`, or None when missing or not one this code wrote."""
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            if raw.get("format") != STATE_FORMAT:
                return None
            return cls(
                str(raw["build"]),
                int(raw["version"]),
                str(raw["generation"]),
                datetime.fromisoformat(raw["now"]),
                int(raw["count"]),
                None if raw["top"] is None else int(raw["top"]),
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None


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
    if rest == "/sites":
        return f"{prefix}sites/index.html"
    found = _SITE_PAGE.fullmatch(rest)
    if found:
        code, tail = found.group(1).lower(), found.group(2)
        return f"{prefix}sites/{code}/{tail[1:] if tail else 'index.html'}"
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

    def __init__(
        self,
        session: aiohttp.ClientSession,
        ctx: PluginContext,
        root: Path,
        *,
        follow_all: bool = True,
    ) -> None:
        self.session = session
        self.campaign = ctx.campaign
        self.root = root
        self.files = 0
        self.bytes = 0
        self.written = 0
        # A full build follows every link; an update of one follows only those to files it
        # does not have yet (a page it should have written: none is left dangling).
        self.follow_all = follow_all
        self._seen: set[str] = set()
        self._queue: list[str] = []

    def file_for(self, address: str) -> str | None:
        return file_for(address, self.campaign.languages, self.campaign.default_language)

    def want(self, address: str, *, followed: bool = True) -> None:
        target = self.file_for(address)
        if target is None or target in self._seen:
            return
        if followed and not self.follow_all and (self.root / target).exists():
            return
        self._seen.add(target)
        self._queue.append(address)

    async def fetch_all(self, addresses: list[str]) -> None:
        """Render `addresses` in this order (then whatever they link to that is missing)."""
        for address in addresses:
            target = self.file_for(address)
            if target is not None and target not in self._seen:
                self._seen.add(target)
                await self.fetch(address)
        await self.run()

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
        """Write one file, and its precompressed copies (`.br`, `.gz`) beside it, each
        atomically (a new file renamed over the old) and only if it changed; its time is
        the page's Last-Modified, so a static host's own validators (from the file's time
        and size) stay the same across publishes while the page does."""
        path = self.root / target
        self.files += 1
        self.bytes += len(body)
        with contextlib.suppress(OSError):
            if path.read_bytes() == body:
                return  # unchanged: nothing to write, nor for a static host to send again
        path.parent.mkdir(parents=True, exist_ok=True)
        stamp = parsedate_to_datetime(modified).timestamp() if modified else None
        copies = [(path, body)]
        if path.suffix in COMPRESSED_SUFFIXES and len(body) >= MIN_COMPRESS:
            # The copies first: a host that prefers one never serves it older than the page.
            copies[:0] = [
                (path.with_name(f"{path.name}.{ext}"), compress(body, coding))
                for coding, ext in (("br", "br"), ("gzip", "gz"))
            ]
        for where, data in copies:
            _replace(where, data, stamp)
        self.written += 1

    def remove(self, target: str) -> None:
        """Delete a page that is no longer public, with its copies."""
        path = self.root / target
        for where in (path, path.with_name(f"{path.name}.br"), path.with_name(f"{path.name}.gz")):
            with contextlib.suppress(FileNotFoundError):
                where.unlink()
                self.written += 1


def _replace(path: Path, data: bytes, stamp: float | None) -> None:
    """`path` holding `data` (with `stamp` as its time), switched in by one rename."""
    partial = path.with_name(f".{path.name}.{secrets.token_hex(4)}.part")
    partial.write_bytes(data)
    if stamp is not None:
        os.utime(partial, (stamp, stamp))
    partial.replace(path)


@contextlib.asynccontextmanager
async def _private_app(ctx: PluginContext) -> AsyncIterator[aiohttp.ClientSession]:
    """The web app on a Unix socket only this process knows, with a client for it."""
    app = build_app(ctx)
    app[STATE].static = True
    app[STATE].store_timeout = PUBLISH_STORE_TIMEOUT
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


async def publish_site(ctx: PluginContext, directory: Path, *, full: bool = False) -> Published:
    """Bring the static site in `directory` up to date: only the pages the changes since the
    last publish touch (and the pages that list them), written into the current build; or,
    when that cannot be known (a first publish, another campaign file, templates or
    strikebot version, a new year, an import) or with `full`, the whole site rendered into
    a new build beside `directory`, which (a symbolic link) is then switched to it."""
    directory = _absolute(directory)
    if not full:
        previous = SiteState.read(_state_path(directory))
        if previous is not None:
            done = await _publish_changes(ctx, directory, previous)
            if done is not None:
                return done
    return await _publish_all(ctx, directory)


async def _publish_all(ctx: PluginContext, directory: Path) -> Published:
    began = time.perf_counter()
    state = await _site_state(ctx, "")
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
    _write_state(directory, dataclasses.replace(state, build=build.name))
    seconds = time.perf_counter() - began
    return Published(directory, build, site.files, site.bytes, seconds, site.written, True)


async def _publish_changes(
    ctx: PluginContext, directory: Path, previous: SiteState
) -> Published | None:
    """Write into the current build what changed since `previous`; None when that is not
    enough (the caller then publishes everything)."""
    began = time.perf_counter()
    build = _current_build(directory, previous)
    if build is None:
        return None
    state = await _site_state(ctx, previous.build)
    if state.generation != previous.generation or state.version < previous.version:
        return None
    plan = await _plan(ctx, previous, state)
    if plan is None:
        return None
    async with _private_app(ctx) as session:
        site = _Site(session, ctx, build, follow_all=False)
        for target in plan.gone:
            site.remove(target)
        # Pages first, then what lists them: no link leads to a page not yet written.
        await site.fetch_all([*plan.pages, *_heads(ctx, plan.demands, places=plan.places)])
        await _not_found_page(session, site)
    _write_state(directory, state)
    seconds = time.perf_counter() - began
    return Published(directory, build, site.files, site.bytes, seconds, site.written, False)


@dataclass(frozen=True, slots=True)
class _Plan:
    pages: list[str]  # addresses to render, besides the heads every change rewrites
    gone: list[str]  # files of updates no longer public
    demands: list[str]
    places: bool = False  # the campaign has sites: the sites index lists them


async def _plan(ctx: PluginContext, previous: SiteState, state: SiteState) -> _Plan | None:
    """The addresses a change since `previous` touches: each touched update's pages, and the
    archive pages holding them (counted from the oldest, 25 a page: `first_page_size`)."""
    campaign = ctx.campaign
    async with ctx.reads() as tx:
        touched, everything = await tx.public_changes_since(previous.version)
        if everything:
            return None
        touched |= set(await tx.became_visible(previous.now, state.now))
        below = state.count - first_page_size(state.count)  # updates on the older pages
        before = previous.count - first_page_size(previous.count)
        buckets = set(range(before // ARCHIVE_PAGE, below // ARCHIVE_PAGE))  # newly split off
        if previous.top is not None:
            newer = await tx.newer_visible(previous.top, state.now)
            if newer is None or state.count - newer != previous.count:
                buckets = set(range(below // ARCHIVE_PAGE))  # one came in below: all shift
        pages: list[str] = []
        gone: list[str] = []
        for update_id in sorted(touched):
            newer = await tx.newer_visible(update_id, state.now)
            for lang in campaign.languages:
                for address in _update_addresses(ctx, update_id, lang):
                    if newer is None:
                        found = file_for(address, campaign.languages, campaign.default_language)
                        gone += [found] if found else []
                    else:
                        pages.append(address)
            position = None if newer is None else state.count - 1 - newer
            if position is not None and position < below:
                buckets.add(position // ARCHIVE_PAGE)
        for bucket in sorted(buckets, reverse=True):
            boundary = await tx.visible_id_at(
                state.count - 1 - ARCHIVE_PAGE * (bucket + 1), state.now
            )
            if boundary is None:
                return None
            for lang in campaign.languages:
                prefix = "" if lang == campaign.default_language else f"/{lang}"
                pages.append(f"{prefix}/updates?after={boundary}")
                pages.append(f"{API}/updates?lang={lang}&limit={ARCHIVE_PAGE}&after={boundary}")
        pages += await _place_pages(ctx, tx, touched)
        demands = await tx.demand_keys()
        places = await tx.place_count()
    return _Plan(pages, gone, demands, places > 0)


async def _place_pages(ctx: PluginContext, tx: Reads, touched: Collection[int]) -> list[str]:
    """The pages of the sites and groups whose readers see a touched update (each one's
    page, feed and calendar): an update for one site rewrites its page and its group's, not
    the 1,000 others; one for everyone, every place's."""
    codes, everyone = await tx.places_showing(sorted(touched))
    if everyone:
        codes = set(await tx.place_codes_all())
    pages = []
    for lang in ctx.campaign.languages:
        prefix = "" if lang == ctx.campaign.default_language else f"/{lang}"
        for code in sorted(codes):
            pages += [f"{prefix}/sites/{code}{tail}" for tail in _PLACE_FILES]
    return pages


def _update_addresses(ctx: PluginContext, update_id: int, lang: str) -> list[str]:
    prefix = "" if lang == ctx.campaign.default_language else f"/{lang}"
    return [f"{prefix}/updates/{update_id}", f"{API}/updates/{update_id}?lang={lang}"]


_PLACE_FILES = ("/feed.atom", "/calendar.ics", "")  # a place's page last: it links the others


def _heads(ctx: PluginContext, demands: list[str], *, places: bool = False) -> list[str]:
    """The pages every change may touch: the status pages, the archive's first page, the
    feeds, the calendars, the sites index (when there are sites), the public JSON that is
    not one update's."""
    found = []
    for lang in ctx.campaign.languages:
        prefix = "" if lang == ctx.campaign.default_language else f"/{lang}"
        found += [f"{API}/demands/{key}?lang={lang}" for key in demands]
        found += [f"{API}/{name}?lang={lang}" for name in ("status", "demands", "updates")]
        heads = ("/feed.atom", "/calendar.ics", "/updates", *(("/sites",) if places else ()), "/")
        found += [f"{prefix}{path}" for path in heads]
    return [*found, f"{API}/openapi.json"]


async def _site_state(ctx: PluginContext, build: str) -> SiteState:
    """What the site shows now: the public version (read first: a change made meanwhile is
    published next time), the time, the archive's size and newest update."""
    version = await ctx.public.current()
    now = ctx.clock()
    async with ctx.reads() as tx:
        count = await tx.visible_count(now)
        top = await tx.visible_id_at(0, now)
    return SiteState(build, version, generation(ctx, now), now, count, top)


def generation(ctx: PluginContext, now: datetime) -> str:
    """What every page was rendered with, besides the store: the campaign, the local year
    (dates carry it when it is not the current one), the web plugin's code and templates
    and the sentences. When it changes, every page may have: the site is rendered anew."""
    digest = hashlib.blake2b(digest_size=16)
    year = now.astimezone(ZoneInfo(ctx.campaign.timezone)).year
    digest.update(f"{STATE_FORMAT}|{year}|{ctx.campaign!r}".encode())
    sources = [p for p in sorted(WEB_FILES.rglob("*")) if p.suffix in (".py", ".html", ".css")]
    sources += sorted(p for p in LOCALES.rglob("*") if p.suffix in (".po", ".mo"))
    for path in sources:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _absolute(directory: Path) -> Path:
    return directory.absolute()


def _current_build(directory: Path, previous: SiteState) -> Path | None:
    """The build `directory` links to, if it is the one `previous` describes."""
    build = directory.parent / previous.build
    if directory.is_symlink() and directory.resolve() == build.resolve() and build.is_dir():
        return build
    return None


def _state_path(directory: Path) -> Path:
    return directory.parent / f".{directory.name}.publish.json"


def _write_state(directory: Path, state: SiteState) -> None:
    _replace(_state_path(directory), json.dumps(state.to_json()).encode(), None)


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
        changes = self.ctx.public.listen()
        done: object = None
        while not stop.is_set():
            wake: datetime | None = None
            try:
                version = await self.ctx.public.current()
                now = self.ctx.clock()
                async with self.ctx.reads() as tx:
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
