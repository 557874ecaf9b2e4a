"""`strikebot publish` writes the sites index and every site's page, feed and calendar (each
reached by links from the front page: no orphans), and re-publishing after a post for one
site rewrites that site's pages, its group's and the lists, not every other site's."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urljoin, urlsplit

from adapters.web._publish import publish_site
from bot.audiences import Sites, read_sites_csv
from bot.clock import FixedClock
from bot.editorial.admin import Draft
from bot.models import Audience, Status, UpdateText
from bot.store import Store
from tests.support import ADMIN, ADMINS, ROOT
from tests.test_publish import crawl, static_server
from tests.test_publish_changes import tree
from tests.web_support import web_context

GROUPS = 6
PER_GROUP = 10


def many_sites() -> str:
    """60 schools in 6 districts, as a CSV file."""
    lines = ["kind,code,group,name,name_es"]
    lines += [f"group,d{g},,District {g},Distrito {g}" for g in range(GROUPS)]
    lines += [
        f"site,s{g}x{n},d{g},School {g}-{n},Escuela {g}-{n}"
        for g in range(GROUPS)
        for n in range(PER_GROUP)
    ]
    return "\n".join(lines) + "\n"


async def test_publish_writes_the_sites_index_and_every_site_page_with_no_orphan(
    sqlite_store: Store, clock: FixedClock, tmp_path: Path
) -> None:
    ctx = web_context(sqlite_store, clock)
    text = (ROOT / "config" / "lausd-sites.csv").read_text(encoding="utf-8")
    await Sites(sqlite_store, ADMINS, clock).import_file(
        ADMIN, read_sites_csv(text, ("en", "es"), "en")
    )
    draft = Draft(
        Status.STRIKE_ON,
        {"en": UpdateText("Roosevelt: breakfast at the north gate")},
        audience=Audience.of(["roosevelt"]),
    )
    await ctx.admin.post(ADMIN, draft)
    site = tmp_path / "site"
    await publish_site(ctx, site)
    root = site.resolve()
    for prefix in ("", "es/"):
        assert (root / f"{prefix}sites/index.html").exists()
        for code in ("roosevelt", "east", "venice", "west"):
            for name in ("index.html", "feed.atom", "calendar.ics"):
                assert (root / f"{prefix}sites/{code}/{name}").exists(), (prefix, code, name)
    assert b"Roosevelt: breakfast" in (root / "sites/roosevelt/index.html").read_bytes()
    assert b"Roosevelt: breakfast" not in (root / "sites/venice/index.html").read_bytes()
    with static_server(site) as base:
        pages = await crawl(base)
        broken = {url: status for url, (status, _, _) in pages.items() if status != 200}
        assert broken == {}
        assert pages[urljoin(base, "sites/roosevelt/feed.atom")][1] == "application/atom+xml"
    on_disk = {str(p.relative_to(root)) for p in root.rglob("*.html")}
    reached = {urlsplit(url).path.lstrip("/") or "index.html" for url in pages}
    reached |= {f"{path}index.html" for path in reached if path.endswith("/")}
    assert on_disk - {"404.html"} <= reached
    assert {"sites/index.html", "es/sites/index.html", "es/sites/east/index.html"} <= reached


async def test_a_post_for_one_site_rewrites_its_pages_not_every_site(
    sqlite_store: Store, clock: FixedClock, tmp_path: Path
) -> None:
    ctx = web_context(sqlite_store, clock)
    await Sites(sqlite_store, ADMINS, clock).import_file(
        ADMIN, read_sites_csv(many_sites(), ("en", "es"), "en")
    )
    await ctx.admin.post(ADMIN, Draft(Status.STRIKE_ON, {"en": UpdateText("Strike is on")}))
    site = tmp_path / "site"
    first = await publish_site(ctx, site)
    root = site.resolve()
    place_files = (GROUPS + GROUPS * PER_GROUP) * 2 * 3  # pages, feeds, calendars; 2 languages
    assert first.files > place_files
    before = {name: (root / name).stat().st_ino for name in tree(site)}

    clock.advance(minutes=5)
    draft = Draft(
        Status.STRIKE_ON,
        {"en": UpdateText("School 2-3: picket at the north gate")},
        audience=Audience.of(["s2x3"]),
    )
    await ctx.admin.post(ADMIN, draft)
    done = await publish_site(ctx, site)
    assert not done.full
    # The site's and its district's page, feed and calendar in both languages (12), the two
    # indexes, the update's pages and the heads; not the 59 other schools' 354 files.
    assert done.files < 60, done.files
    after = tree(site)
    changed = {name for name in after if (root / name).stat().st_ino != before.get(name)}
    places = {name for name in changed if name.startswith(("sites/", "es/sites/"))}
    assert {"sites/s2x3/index.html", "sites/d2/index.html", "sites/index.html"} <= places
    assert {"es/sites/s2x3/feed.atom", "es/sites/index.html"} <= places
    assert not any(name.startswith(("sites/s1x", "sites/d1/", "es/sites/s4x")) for name in places)
    assert b"School 2-3: picket" in after["sites/s2x3/index.html"]
    assert b"School 2-3: picket" in after["sites/index.html"]  # its latest word
    # Exactly what a full publish writes now.
    fresh = await publish_site(ctx, tmp_path / "fresh", full=True)
    assert fresh.full and tree(tmp_path / "fresh") == after

    # A post for everyone shows on every place's page: all of them are rewritten.
    clock.advance(minutes=5)
    await ctx.admin.post(ADMIN, Draft(Status.STRIKE_ON, {"en": UpdateText("Talks resume")}))
    everyone = await publish_site(ctx, site)
    assert everyone.files > place_files
    fresh = await publish_site(ctx, tmp_path / "fresh-2", full=True)
    assert tree(tmp_path / "fresh-2") == tree(site)
