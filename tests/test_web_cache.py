"""HTTP caching of the public views, and the public content version behind it.

Validators (strong ETag, Last-Modified) and a CDN-ready Cache-Control on every public view;
304s for clients that hold the current body; new validators the moment an update is
published, edited or retracted; feeds that stay 304 while only the clock moves; a version
bumped in the transaction of every public change, seen by other processes, and free to
check while nothing changed.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from datetime import datetime, timedelta
from email.utils import format_datetime, parsedate_to_datetime
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from bot.clock import FixedClock
from bot.editorial.admin import Admin, Changes, Draft
from bot.models import DemandStatus, Status, Subscription, UpdateText
from bot.runtime.context import PluginContext
from bot.store import Store
from bot.store.content import watch_public_version
from tests.strike_week import Week, la, strike_week
from tests.support import ADMIN, ADMINS, CAMPAIGN, FRIDAY, SECOND_ADMIN, recording
from tests.web_support import client_for, parse_html, web_context

Client = TestClient[Any, Any]
STRONG_ETAG = re.compile(r'^"[0-9a-f]{24}"$')


@pytest.fixture
async def lite(sqlite_store: Store, clock: FixedClock) -> PluginContext:
    return web_context(sqlite_store, clock)


@pytest.fixture
async def lite_timeline(lite: PluginContext, clock: FixedClock) -> Week:
    return await strike_week(lite.store, clock, lite.admin)


def public_paths(timeline: Week) -> list[str]:
    return [
        "/",
        "/es/",
        f"/updates/{timeline.friday.id}",
        f"/es/updates/{timeline.began.id}",
        "/updates",
        "/feed.atom",
        "/es/feed.atom",
        "/calendar.ics",
        "/es/calendar.ics",
        "/api/v1/status",
        "/api/v1/status?lang=es",
        "/api/v1/updates",
        f"/api/v1/updates/{timeline.friday.id}",
        "/api/v1/demands",
        "/api/v1/demands/pay",
    ]


def modified(response: Any) -> datetime:
    return parsedate_to_datetime(response.headers["Last-Modified"])


async def validators(client: Client, paths: list[str]) -> dict[str, tuple[str, str]]:
    found = {}
    for path in paths:
        response = await client.get(path)
        assert response.status == 200, path
        found[path] = (response.headers["ETag"], response.headers["Last-Modified"])
    return found


@contextmanager
def counting_queries(store: Store) -> Iterator[list[str]]:
    """Every SQL statement the store runs inside the block (transaction control aside), in
    the list once the block ends."""
    queries: list[str] = []
    control = ("BEGIN", "COMMIT", "ROLLBACK")
    with recording(store, lambda statement: statement.split()[0].upper() not in control) as seen:
        yield queries
    queries.extend(statement for statement, _ in seen)


@asynccontextmanager
async def watching(store: Store) -> AsyncIterator[None]:
    """The public-version watcher `strikebot run` starts with the web plugin."""
    stop = asyncio.Event()
    changes = store.public.listen()
    task = asyncio.create_task(watch_public_version(store, stop))
    try:
        async with asyncio.timeout(10):
            while not store.public.watching:
                await changes.wait()
                changes.clear()
        yield
    finally:
        stop.set()
        await task


# -- validators and 304s ---------------------------------------------------------------------


async def test_every_public_view_has_validators_and_answers_304(
    lite: PluginContext, lite_timeline: Week
) -> None:
    async with client_for(lite) as client:
        for path in public_paths(lite_timeline):
            first = await client.get(path)
            assert first.status == 200, path
            etag = first.headers["ETag"]
            assert STRONG_ETAG.match(etag), (path, etag)
            policy = first.headers["Cache-Control"]
            assert policy.startswith("public, max-age="), (path, policy)
            assert "stale-while-revalidate=" in policy and "stale-if-error=" in policy, path
            last = first.headers["Last-Modified"]

            by_tag = await client.get(path, headers={"If-None-Match": etag})
            assert by_tag.status == 304, path
            assert by_tag.headers["ETag"] == etag and await by_tag.read() == b""
            listed = await client.get(path, headers={"If-None-Match": f'"other", W/{etag}'})
            assert listed.status == 304, path
            by_date = await client.get(path, headers={"If-Modified-Since": last})
            assert by_date.status == 304, path
            earlier = format_datetime(modified(first) - timedelta(seconds=1), usegmt=True)
            older = await client.get(path, headers={"If-Modified-Since": earlier})
            assert older.status == 200 and await older.read() == await first.read(), path
            # If-None-Match decides when both are sent (RFC 9110 13.2.2).
            both = await client.get(
                path, headers={"If-None-Match": '"other"', "If-Modified-Since": last}
            )
            assert both.status == 200, path
            garbled = await client.get(path, headers={"If-Modified-Since": "yesterday"})
            assert garbled.status == 200, path
            head = await client.head(path)
            assert head.status == 200 and head.headers["ETag"] == etag, path


async def test_last_modified_is_when_what_is_shown_last_changed(
    lite: PluginContext, lite_timeline: Week
) -> None:
    async with client_for(lite) as client:
        began = await client.get(f"/updates/{lite_timeline.began.id}")
        friday = await client.get(f"/updates/{lite_timeline.friday.id}")
        feed = await client.get("/feed.atom")
        page = await client.get("/")
    assert modified(began) == la(2019, 1, 14, 5, 30)  # posted, never changed
    assert modified(friday) == la(2019, 1, 18, 9, 30)  # the correction
    assert modified(feed) == la(2019, 1, 18, 9, 30)  # its newest change
    assert modified(page) == FRIDAY  # the countdown: this minute


async def test_publish_edit_and_retract_change_the_validators_at_once(
    lite: PluginContext, clock: FixedClock, lite_timeline: Week
) -> None:
    paths = public_paths(lite_timeline)
    async with client_for(lite) as client:
        before = await validators(client, paths)
        clock.advance(seconds=20)  # the same minute: only the store changes
        posted = await lite.admin.post(
            ADMIN,
            Draft(
                Status.TENTATIVE_AGREEMENT,
                {"en": UpdateText("Tentative agreement reached")},
                clear_next_step=True,  # Monday's picket is off: the calendar keeps its event
            ),
        )
        after = await validators(client, paths)
        changed = {path for path in paths if after[path][0] != before[path][0]}
        assert changed == {
            "/", "/es/", "/updates", "/feed.atom", "/es/feed.atom", "/api/v1/status",
            "/api/v1/status?lang=es", "/api/v1/updates",
        }  # fmt: skip
        assert parsedate_to_datetime(after["/feed.atom"][1]) == clock().replace(microsecond=0)
        assert "Tentative agreement reached" in await (await client.get("/")).text()
        # An update page nobody touched still answers 304 to its old validators.
        untouched = f"/updates/{lite_timeline.friday.id}"
        again = await client.get(untouched, headers={"If-None-Match": before[untouched][0]})
        assert again.status == 304

        clock.advance(minutes=5)
        await lite.admin.edit(ADMIN, posted.id, Changes(status=Status.STRIKE_OVER), reason="Ended")
        page = await client.get(f"/updates/{posted.id}")
        assert modified(page) == clock().replace(microsecond=0)
        clock.advance(minutes=5)
        await lite.admin.retract(ADMIN, lite_timeline.friday.id, reason="Superseded.")
        retracted = await client.get(untouched, headers={"If-None-Match": before[untouched][0]})
        assert retracted.status == 200
        assert modified(retracted) == clock().replace(microsecond=0)
        assert "retracted" in parse_html(await retracted.text()).one("article").attrs["class"]
        calendar = await client.get("/calendar.ics", headers={"If-None-Match": before[
            "/calendar.ics"][0]})  # fmt: skip
        assert calendar.status == 200  # its event is cancelled now


async def test_feeds_stay_304_while_only_the_clock_moves(
    lite: PluginContext, clock: FixedClock, lite_timeline: Week
) -> None:
    async with client_for(lite) as client:
        feeds = await validators(client, ["/feed.atom", "/es/calendar.ics", "/api/v1/updates"])
        page = await client.get("/")
        clock.advance(hours=3)
        for path, (etag, last) in feeds.items():
            assert (await client.get(path, headers={"If-None-Match": etag})).status == 304
            assert (await client.get(path, headers={"If-Modified-Since": last})).status == 304
        later = await client.get("/", headers={"If-None-Match": page.headers["ETag"]})
        assert later.status == 200  # the countdown moved
        assert "in 2 days, 17 hours" in await later.text()
        assert modified(later) == FRIDAY + timedelta(hours=3)


async def test_an_embargo_passing_shows_without_a_write(
    lite: PluginContext, clock: FixedClock, lite_timeline: Week
) -> None:
    await lite.admin.post(
        ADMIN,
        Draft(Status.TENTATIVE_AGREEMENT, {"en": UpdateText("Deal reached overnight")}),
        publish_at=FRIDAY + timedelta(minutes=30),
    )
    async with client_for(lite) as client:
        assert "Deal reached overnight" not in await (await client.get("/feed.atom")).text()
        with counting_queries(lite.store) as queries:
            for _ in range(5):
                clock.advance(minutes=5)
                assert (await client.get("/feed.atom")).status == 200
        # Each check reads the version row (nothing watches here); nothing else is read.
        assert queries and all("FROM public_version" in q for q in queries)
        clock.advance(minutes=5, seconds=1)
        assert "Deal reached overnight" in await (await client.get("/feed.atom")).text()


async def test_answers_from_memory_match_those_the_store_backs(
    lite: PluginContext, clock: FixedClock, lite_timeline: Week
) -> None:
    """With the watcher vouching for the version (as under `strikebot run`), answers come
    from memory without a query: the same body and headers (validators, caching policy,
    security headers) as when the store is asked, 304s, the countdown's minute turning and
    an embargo falling due."""
    paths = [*public_paths(lite_timeline), "/api/v1/status?lang=xx"]

    def shown(response: Any) -> list[tuple[str, str]]:
        return [(k, v) for k, v in response.headers.items() if k != "Date"]

    async with client_for(lite) as client:
        asked = {path: await client.get(path) for path in paths}
        async with watching(lite.store):
            for path in paths:
                await client.get(path)  # the version read once, then vouched for
            with counting_queries(lite.store) as queries:
                for path in paths:
                    hot = await client.get(path)
                    assert hot.status == asked[path].status, path
                    assert shown(hot) == shown(asked[path]), path
                    assert await hot.read() == await asked[path].read(), path
                    if hot.status == 200:
                        etag = hot.headers["ETag"]
                        held = await client.get(path, headers={"If-None-Match": etag})
                        assert held.status == 304, path
                        cold = await client.get(path, headers={"If-None-Match": '"other"'})
                        assert cold.status == 200, path
            assert queries == []
            page = await client.get("/")
            status = await client.get("/api/v1/status")
            clock.advance(minutes=1)
            turned = await client.get("/", headers={"If-None-Match": page.headers["ETag"]})
            assert turned.status == 200  # the countdown's minute
            assert modified(turned) == modified(page) + timedelta(minutes=1)
            same_day = {"If-None-Match": status.headers["ETag"]}
            assert (await client.get("/api/v1/status", headers=same_day)).status == 304

            await lite.admin.post(
                ADMIN,
                Draft(Status.TENTATIVE_AGREEMENT, {"en": UpdateText("Deal reached overnight")}),
                publish_at=clock() + timedelta(minutes=30),
            )
            assert "Deal reached overnight" not in await (await client.get("/")).text()
            clock.advance(minutes=29, seconds=59)
            assert "Deal reached overnight" not in await (await client.get("/")).text()
            clock.advance(seconds=1)
            assert "Deal reached overnight" in await (await client.get("/")).text()


# -- the public content version ------------------------------------------------------------------


async def test_the_version_moves_with_every_public_change_in_its_transaction(
    store: Store, clock: FixedClock
) -> None:
    admin = Admin(store, CAMPAIGN, ADMINS, clock)

    async def version() -> int:
        async with store.read() as tx:
            return await tx.public_version()

    start = await version()
    timeline = await strike_week(store, clock, admin)  # the seed, a retraction, a correction
    assert await version() == start + 7  # seed: the file's rows, each seeded update; 3 writes
    assert store.public.known == start + 7  # committed here: known at once
    await admin.record_demand(ADMIN, "pay", status=DemandStatus.WON, source="Tentative deal")
    assert await version() == start + 8
    await admin.subscribe(
        ADMIN, Subscription(0, "discord", "1", "2", "en", timezone="America/Los_Angeles")
    )
    assert await version() == start + 8  # nothing public changed
    with pytest.raises(RuntimeError):
        async with store.write() as tx:
            await tx.set_update(timeline.began.id, {"revision": 9})
            raise RuntimeError("rolled back")
    assert await version() == start + 8  # rolled back together with the change


async def test_a_write_elsewhere_reaches_a_watching_process(db_url: str, clock: FixedClock) -> None:
    async with Store.open(db_url) as here, Store.open(db_url) as elsewhere:
        ctx = web_context(here, clock)
        await strike_week(elsewhere, clock)
        async with watching(here), client_for(ctx) as client:
            assert (await client.get("/")).status == 200
            await client.get("/")  # the version read once, then vouched for by the watcher
            with counting_queries(here) as queries:
                for _ in range(20):
                    assert (await client.get("/")).status == 200
            assert queries == []  # nothing changed: not one query
            changes = here.public.listen()
            await Admin(elsewhere, CAMPAIGN, ADMINS, clock).post(
                SECOND_ADMIN,
                Draft(Status.STRIKE_OVER, {"en": UpdateText("The strike is over")}),
            )
            async with asyncio.timeout(10):
                await changes.wait()  # NOTIFY, or SQLite's data_version
            with counting_queries(here) as queries:
                text = await (await client.get("/")).text()
            assert "The strike is over" in text
            assert any("FROM public_version" in q for q in queries)


# -- the database goes away ----------------------------------------------------------------------


async def test_pages_feeds_and_json_survive_postgresql_going_away(clock: FixedClock) -> None:
    """A dedicated database is dropped under the running store (every connection cut, new
    ones refused): the last good renders are served, marked; /healthz tells the truth."""
    from sqlalchemy.engine import make_url

    from tests.support import _execute_as_admin, fresh_postgres_database

    paths = ["/", "/es/", "/feed.atom", "/es/calendar.ics", "/api/v1/status"]
    async with fresh_postgres_database(migrated=True) as url, Store.open(url) as store:
        ctx = web_context(store, clock)
        await strike_week(store, clock, ctx.admin)
        async with watching(store), client_for(ctx) as client:
            good = {}
            for path in paths:
                response = await client.get(path)
                assert response.status == 200 and "Strikebot-Stale" not in response.headers
                good[path] = await response.read()
            assert (await client.get("/healthz")).status == 200

            name = make_url(url).database
            await _execute_as_admin(f'DROP DATABASE "{name}" WITH (FORCE)')
            clock.advance(minutes=1)
            served = {}
            for path in paths:
                response = await client.get(path)
                served[path] = (response.status, response.headers.copy(), await response.read())
            health = await client.get("/healthz")
            health_body = await health.json()

    for path in paths:
        status, headers, _ = served[path]
        assert status == 200 and headers["Strikebot-Stale"] == "1", path
        assert headers["Cache-Control"].startswith("public, max-age=5"), path
    page = parse_html(served["/"][2].decode())
    assert page.one("p", class_="stale").text().startswith("This page may be out of date")
    assert "The strike continues" in page.one("section", class_="status").text()
    assert "Es posible que esta página" in served["/es/"][2].decode()
    for path in ("/feed.atom", "/es/calendar.ics", "/api/v1/status"):
        assert served[path][2] == good[path], path  # the same bytes, marked in a header
    assert health.status == 503 and health_body["database"]["reachable"] is False
