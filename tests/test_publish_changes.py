"""Re-publishing writes only what a change touches (issue 31): after each kind of change
(a post, an edit of an old update, an embargo passing, enough posts to open a new archive
page), the site brought up to date holds exactly the files a full publish renders, byte for
byte, precompressed copies included; and only a handful of them were rewritten."""

from __future__ import annotations

import gzip
from datetime import timedelta
from pathlib import Path

import brotli
from sqlalchemy import insert

from adapters.web._publish import publish_site
from bot.clock import FixedClock
from bot.editorial.admin import Changes, Draft
from bot.models import Status, UpdateState, UpdateText, Urgency
from bot.runtime.context import PluginContext
from bot.store import Store
from bot.store import schema as t
from tests.strike_week import strike_week
from tests.support import ADMIN
from tests.web_support import web_context

HISTORY = 70  # three older archive pages and a first page of 45


def tree(directory: Path) -> dict[str, bytes]:
    root = directory.resolve()
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and not p.name.startswith(".")
    }


async def history(store: Store, clock: FixedClock, count: int) -> None:
    """`count` published updates from the weeks before (as a long campaign has)."""
    now = clock()
    rows = [
        {
            "status": str(Status.STRIKE_ON),
            "urgency": str(Urgency.ROUTINE),
            "state": str(UpdateState.PUBLISHED),
            "texts": {"en": {"headline": f"Earlier news {n}", "body": "Picket at 6:30 AM."}},
            "author": "test",
            "created_at": now - timedelta(days=30, hours=count - n),
            "published_at": now - timedelta(days=30, hours=count - n),
            "revision": 1,
        }
        for n in range(count)
    ]
    async with store.write() as tx:
        await tx.conn.execute(insert(t.updates), rows)
        tx.touch_public()


async def same_as_full(ctx: PluginContext, site: Path, tmp: Path, name: str) -> int:
    """Bring `site` up to date; check it against a full publish; the files rewritten."""
    done = await publish_site(ctx, site)
    assert not done.full
    fresh = await publish_site(ctx, tmp / name, full=True)
    assert fresh.full
    assert tree(site) == tree(tmp / name)
    return done.written


async def test_a_change_rewrites_only_what_it_touches_and_nothing_else_differs(
    sqlite_store: Store, clock: FixedClock, tmp_path: Path
) -> None:
    ctx = web_context(sqlite_store, clock)
    await history(sqlite_store, clock, HISTORY)
    week = await strike_week(sqlite_store, clock, ctx.admin)
    site = tmp_path / "site"
    first = await publish_site(ctx, site)
    assert first.full and first.written == first.files

    await ctx.admin.post(ADMIN, Draft(Status.STRIKE_ON, {"en": UpdateText("Talks resume")}))
    written = await same_as_full(ctx, site, tmp_path, "after-post")
    # The new update's four pages and the lists, feeds, calendars and JSON that show it; and,
    # an update for everyone, every site's and group's page, feed and calendar (2 languages).
    async with sqlite_store.read() as tx:
        places = len(await tx.place_codes_all()) * 2 * 3
    assert 4 < written - places < 40, (written, places)

    async with sqlite_store.read() as tx:
        listed = await tx.list_updates(clock(), limit=None)
    old = min(listed, key=lambda u: u.id)  # on the oldest archive page
    await ctx.admin.edit(ADMIN, old.id, Changes(texts={"en": UpdateText("Earlier news, fixed")}),
                         reason="typo")  # fmt: skip
    await same_as_full(ctx, site, tmp_path, "after-edit")

    later = clock() + timedelta(hours=2)
    embargoed = Draft(Status.STRIKE_ON, {"en": UpdateText("Schools reopen")})
    await ctx.admin.post(ADMIN, embargoed, publish_at=later)
    await same_as_full(ctx, site, tmp_path, "embargoed")  # not public yet
    clock.advance(hours=3)
    await same_as_full(ctx, site, tmp_path, "embargo-passed")

    async with sqlite_store.read() as tx:
        count = await tx.visible_count(clock())
    for n in range(25 - count % 25):  # a new older page splits off the first
        await ctx.admin.post(ADMIN, Draft(Status.STRIKE_ON, {"en": UpdateText(f"Day {n}")}))
    await same_as_full(ctx, site, tmp_path, "new-page")
    assert week.began.id  # the seeded week is in every comparison


async def test_every_page_has_compressed_copies_beside_it(
    sqlite_store: Store, clock: FixedClock, tmp_path: Path
) -> None:
    ctx = web_context(sqlite_store, clock)
    await strike_week(sqlite_store, clock, ctx.admin)
    await publish_site(ctx, tmp_path / "site")
    files = tree(tmp_path / "site")
    pages = [n for n in files if n.endswith((".html", ".json", ".atom", ".ics"))]
    assert pages and all(f"{n}.gz" in files and f"{n}.br" in files for n in pages)
    for name in pages:
        assert gzip.decompress(files[f"{name}.gz"]) == files[name]
        assert brotli.decompress(files[f"{name}.br"]) == files[name]


async def test_a_new_year_or_campaign_file_publishes_everything_again(
    sqlite_store: Store, clock: FixedClock, tmp_path: Path
) -> None:
    ctx = web_context(sqlite_store, clock)
    await strike_week(sqlite_store, clock, ctx.admin)
    site = tmp_path / "site"
    await publish_site(ctx, site)
    assert not (await publish_site(ctx, site)).full
    clock.advance(days=365)  # dates now carry their year
    assert (await publish_site(ctx, site)).full
