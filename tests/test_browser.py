"""The status page as a phone shows it: Debian's headless Chromium loads the real server on
127.0.0.1, screenshots it at 412x915 and dumps the DOM it built, in English and Spanish; and
axe-core finds no WCAG 2.1 AA violation on the public pages, at desktop width and 320 px."""

from __future__ import annotations

import asyncio
import struct
from pathlib import Path

import pytest

from bot.clock import FixedClock
from bot.models import Contact
from bot.people.signups import Offer
from bot.store import Store
from tests.axe import axe_source, chromium_page, violations
from tests.strike_week import DEMAND_KEYS, strike_week
from tests.support import chromium_path
from tests.test_for_families import WITH_FAMILIES
from tests.web_support import client_for, parse_html, web_context

pytestmark = pytest.mark.browser

WIDTH, HEIGHT = 412, 915  # a common Android phone, CSS pixels


async def chromium(url: str, workdir: Path, name: str) -> tuple[bytes, str]:
    """(PNG screenshot, serialized DOM) of `url` in a fresh headless Chromium profile."""
    binary = chromium_path()
    png = workdir / f"{name}.png"
    process = await asyncio.create_subprocess_exec(
        binary,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        f"--user-data-dir={workdir / f'profile-{name}'}",
        f"--screenshot={png}",
        "--dump-dom",
        f"--window-size={WIDTH},{HEIGHT}",
        url,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=90)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise
    assert process.returncode == 0, stderr.decode(errors="replace")[-2000:]
    assert png.exists(), f"no screenshot written: {stderr.decode(errors='replace')[-2000:]}"
    return png.read_bytes(), stdout.decode()


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@pytest.mark.parametrize(
    ("path", "lang", "status", "day", "header", "offer"),
    [
        (
            "/",
            "en",
            "On strike",
            "Day 5 of the strike",
            "Employer's offer",
            "A 6% raise spread over the first two years of a three-year contract.",
        ),
        (
            "/es/",
            "es",
            "En huelga",
            "Día 5 de la huelga",
            "Oferta del empleador",
            "Un aumento del 6% repartido en los dos primeros años de un contrato de tres años.",
        ),
    ],
    ids=["en", "es"],
)
async def test_phone_renders_status_and_demands(
    sqlite_store: Store,
    clock: FixedClock,
    tmp_path: Path,
    path: str,
    lang: str,
    status: str,
    day: str,
    header: str,
    offer: str,
) -> None:
    chromium_path()  # skip (or fail under CI) before doing any work
    runtime = web_context(sqlite_store, clock)
    await strike_week(sqlite_store, clock, runtime.admin)
    async with client_for(runtime) as client:
        png, dom = await chromium(str(client.make_url(path)), tmp_path, lang)

    assert png_size(png) == (WIDTH, HEIGHT)
    assert len(png) > 20_000, "the screenshot is nearly blank"
    doc = parse_html(dom)
    assert doc.one("html").attrs["lang"] == lang
    banner = doc.one("section", class_="status").text()
    assert status in banner and day in banner
    table = doc.one("table", class_="demands")
    assert header in [th.text() for th in table.one("thead").all("th")]
    rows = table.one("tbody").all("tr")
    assert len(rows) == len(DEMAND_KEYS)
    assert offer in rows[0].text()
    retracted = doc.one("li", class_="retracted")
    assert retracted.all("del"), "the retracted update is not struck through"


# -- accessibility, measured by axe-core ------------------------------------------------------

DESKTOP, NARROW = (1280, 900), (320, 640)


async def test_axe_finds_no_wcag_21_aa_violations(
    sqlite_store: Store, clock: FixedClock, tmp_path: Path
) -> None:
    """axe-core (WCAG 2.1 A and AA rules) on the status page in both languages, an update
    page with its revision history, a retracted update, the archive and the sign-up form
    (e-mail and texts switched on) in both languages, at desktop width and at 320 CSS pixels
    (WCAG's reflow width)."""
    chromium_path()
    axe_source()  # from the npm registry once, then from tests/.cache
    runtime = web_context(sqlite_store, clock, campaign=WITH_FAMILIES)
    timeline = await strike_week(sqlite_store, clock, runtime.admin)
    runtime.people.offer(Offer(Contact.EMAIL, "email"))
    runtime.people.offer(Offer(Contact.PHONE, "sms"))
    paths = ["/", "/es/", f"/updates/{timeline.friday.id}", f"/es/updates/{timeline.retracted.id}",
             "/updates", "/subscribe", "/es/subscribe"]  # fmt: skip
    found: dict[str, list[str]] = {}
    async with client_for(runtime) as client, chromium_page(tmp_path) as page:
        # The check can fail: a page with an unlabelled image and no language is caught.
        control = await violations(page, "data:text/html,<title>x</title><img src=a.png>", *DESKTOP)
        assert {"image-alt", "html-has-lang"} <= {v["id"] for v in control}
        for path in paths:
            for width, height in (DESKTOP, NARROW):
                url = str(client.make_url(path))
                for v in await violations(page, url, width, height):
                    found.setdefault(f"{path} at {width}px", []).append(
                        f"{v['id']} ({v['impact']}): {v['help']} — {v['nodes'][:3]}"
                    )
                # Nothing sideways at 320 px: no horizontal scrolling to read a line.
                if width == NARROW[0]:
                    scroll = await page.evaluate("document.documentElement.scrollWidth")
                    assert scroll <= width, f"{path} scrolls sideways at {width}px ({scroll})"
    assert found == {}
