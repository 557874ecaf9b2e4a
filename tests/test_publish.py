"""The public site as static files: what a plain static server serves from
`strikebot publish`, crawled link by link; the atomic switch; re-publishing from the bot."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import aiohttp
import feedparser
import icalendar
import pytest

from adapters.web import WebSurface
from adapters.web._publish import publish_site
from bot.cli import main
from bot.clock import FixedClock
from bot.editorial.admin import Draft
from bot.models import Status, UpdateText
from bot.ports import StrikebotError
from bot.store import Store
from tests.strike_week import Week, la, strike_week
from tests.support import ADMIN, FRIDAY, ROOT, campaign_config, plugin_ctx
from tests.web_support import parse_html, web_context


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def static_server(directory: Path) -> Iterator[str]:
    """Python's own `http.server`, serving `directory` on 127.0.0.1: a plain static host."""
    port = free_port()
    process = subprocess.Popen(  # noqa: S603 - our interpreter, a standard module
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
         "--directory", str(directory)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 20
        while socket.socket().connect_ex(("127.0.0.1", port)) != 0:  # until it listens
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("python -m http.server did not start")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/"
    finally:
        process.terminate()
        process.wait(timeout=10)


async def crawl(start: str) -> dict[str, tuple[int, str, bytes]]:
    """Every address reachable from `start` by links (HTML href/src, JSON `next`), fetched.

    Returns address -> (status, content type, body); only addresses on the same server."""
    origin = urlsplit(start).netloc
    seen: dict[str, tuple[int, str, bytes]] = {}
    queue = [start]
    async with aiohttp.ClientSession() as session:
        while queue:
            url = queue.pop()
            if url in seen:
                continue
            async with session.get(url) as response:
                body = await response.read()
                seen[url] = (response.status, response.content_type, body)
            if response.status != 200:
                continue
            links: list[str] = []
            if response.content_type == "text/html":
                doc = parse_html(body.decode())
                for node in doc.all():
                    for attribute in ("href", "src"):
                        if attribute in node.attrs:
                            links.append(node.attrs[attribute])
            elif response.content_type == "application/json":
                data = json.loads(body)
                if isinstance(data, dict) and isinstance(data.get("next"), str):
                    links.append(data["next"])
            for link in links:
                target = urljoin(url, link).split("#", 1)[0]
                if urlsplit(target).netloc == origin and target not in seen:
                    queue.append(target)
    return seen


@pytest.fixture
async def published(
    sqlite_store: Store, clock: FixedClock, tmp_path: Path
) -> AsyncIterator[tuple[Path, Week]]:
    ctx = web_context(sqlite_store, clock)
    timeline = await strike_week(sqlite_store, clock, ctx.admin)
    # Not public: under embargo, so it must not be published anywhere.
    await ctx.admin.post(
        ADMIN,
        Draft(Status.STRIKE_OVER, {"en": UpdateText("Secret: deal signed")}),
        publish_at=FRIDAY + timedelta(days=1),
    )
    site = tmp_path / "site"
    result = await publish_site(ctx, site)
    assert result.directory == site and site.is_symlink() and result.files > 20
    yield site, timeline


async def test_a_plain_static_server_serves_the_export_with_every_link_working(
    published: tuple[Path, Week],
) -> None:
    site, timeline = published
    with static_server(site) as base:
        pages = await crawl(base)
        broken = {url: status for url, (status, _, _) in pages.items() if status != 200}
        assert broken == {}
        es_feed = await crawl(urljoin(base, "es/feed.atom"))
    # Every page written is reachable by links from the front page: no orphans.
    on_disk = {str(p.relative_to(site.resolve())) for p in site.resolve().rglob("*.html")}
    reached = {urlsplit(url).path.lstrip("/") or "index.html" for url in pages}
    assert on_disk - {"404.html"} <= reached
    ids = {timeline.began.id, timeline.talks.id, timeline.retracted.id, timeline.friday.id}
    for update_id in ids:
        for prefix in ("", "es/"):
            assert f"{prefix}updates/{update_id}/index.html" in reached
    # Both languages, the status at the top, no countdown that would go stale.
    english = parse_html(pages[base][2].decode())
    spanish = parse_html(pages[urljoin(base, "es/index.html")][2].decode())
    assert english.one("html").attrs["lang"] == "en" and spanish.one("html").attrs["lang"] == "es"
    assert "En huelga" in spanish.one("section", class_="status").text()
    assert english.all("strong", class_="countdown") == []
    everything = b"".join(body for _, _, body in pages.values())
    assert b"Secret: deal signed" not in everything  # the embargo holds
    assert b"strikebot:stale-notice" not in everything
    # Feeds, calendar and JSON are there and parse.
    atom = feedparser.parse((site / "feed.atom").read_bytes())
    assert len(atom.entries) == 4 and not atom.bozo
    assert es_feed[urljoin(base, "es/feed.atom")][0] == 200
    events = icalendar.Calendar.from_ical((site / "es" / "calendar.ics").read_bytes())
    assert len(events.walk("VEVENT")) == 4  # each update's next step
    status = json.loads((site / "api/v1/status.json").read_text())
    assert status["update_id"] == timeline.friday.id and status["language"] == "en"
    assert json.loads((site / "api/v1/status.es.json").read_text())["language"] == "es"
    for update_id in ids:
        assert json.loads((site / f"api/v1/updates/{update_id}.json").read_text())["id"] == (
            update_id
        )
    assert (site / "api/v1/demands/pay.es.json").exists()
    # Files carry their page's Last-Modified: a static host's validators hold across publishes.
    began = site / f"updates/{timeline.began.id}/index.html"
    assert began.stat().st_mtime == la(2019, 1, 14, 5, 30).timestamp()  # its publication
    assert (site / "api/v1/openapi.json").exists()
    assert b"No public update" not in (site / "404.html").read_bytes()
    assert parse_html((site / "404.html").read_text()).one("h1").text() == "Not found"


async def test_publishing_again_switches_atomically_and_keeps_the_previous_build(
    sqlite_store: Store, clock: FixedClock, tmp_path: Path
) -> None:
    ctx = web_context(sqlite_store, clock)
    await strike_week(sqlite_store, clock, ctx.admin)
    site = tmp_path / "site"
    first = await publish_site(ctx, site)
    stop = threading.Event()
    torn: list[str] = []
    reads = 0

    def reader() -> None:
        """A web server in another thread: resolves the link, reads a page and its links."""
        nonlocal reads
        while not stop.is_set():
            build = Path(os.path.realpath(site))
            page = (build / "index.html").read_text()
            if not page.rstrip().endswith("</html>"):
                torn.append("index.html cut short")
            for link in parse_html(page).all("a"):
                target = link.attrs.get("href", "")
                if "://" not in target and not (build / target.split("#")[0]).exists():
                    torn.append(f"{target} missing from {build.name}")
            reads += 1

    reading = threading.Thread(target=reader)
    reading.start()
    try:
        await ctx.admin.post(ADMIN, Draft(Status.STRIKE_OVER, {"en": UpdateText("It is over")}))
        second = await publish_site(ctx, site, full=True)
        third = await publish_site(ctx, site, full=True)
    finally:
        stop.set()
        reading.join()
    assert reads > 0 and torn == []
    assert site.readlink() == Path(third.build.name)
    assert "It is over" in (site / "index.html").read_text()
    assert second.build.exists() and not first.build.exists()  # one previous build kept


async def test_publish_refuses_a_directory_it_did_not_make(
    sqlite_store: Store, clock: FixedClock, tmp_path: Path
) -> None:
    (tmp_path / "www").mkdir()
    (tmp_path / "www" / "index.html").write_text("someone else's site")
    with pytest.raises(StrikebotError, match="already exists and is not a site published"):
        await publish_site(web_context(sqlite_store, clock), tmp_path / "www")
    assert (tmp_path / "www" / "index.html").read_text() == "someone else's site"


def test_strikebot_publish_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'bot.db'}"
    config = ROOT / "config" / "strike.toml"
    code = main(["--config", str(config), "--database-url", url, "publish", str(tmp_path / "out"),
                 "--now", "2019-01-18T10:00-08:00", "--json"])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0, captured.err
    report = json.loads(captured.out)
    assert report["files"] > 20 and Path(report["directory"]) == (tmp_path / "out").absolute()
    front = parse_html((tmp_path / "out" / "index.html").read_text())
    assert "Day 5 of the strike" in front.one("section", class_="status").text()


async def test_the_running_bot_republishes_after_every_change(
    sqlite_store: Store, clock: FixedClock, tmp_path: Path
) -> None:
    site = tmp_path / "public"
    config = campaign_config(web={"publish_dir": str(site)})
    ctx = plugin_ctx("web", sqlite_store, clock, config=config)
    await strike_week(sqlite_store, clock, ctx.admin)
    surface = WebSurface(ctx)
    assert surface.publisher is not None
    surface.publisher.debounce = 0
    await surface.start()
    try:
        async with asyncio.timeout(30):
            await surface.publisher.done.wait()
        assert "The strike continues" in (site / "index.html").read_text()
        surface.publisher.done.clear()
        await ctx.admin.post(ADMIN, Draft(Status.STRIKE_OVER, {"en": UpdateText("It is over")}))
        async with asyncio.timeout(30):
            await surface.publisher.done.wait()
        assert "It is over" in (site / "index.html").read_text()
        assert surface.publisher.published == 2 and surface.publisher.last_error is None
    finally:
        await surface.stop()
