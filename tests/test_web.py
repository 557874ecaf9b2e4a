"""The web surface through a real aiohttp server on 127.0.0.1, on SQLite and PostgreSQL.

Pages, the JSON API, /healthz, /metrics, the caches, and the admin HTTP API (token rules,
the same use cases and audit log as chat and the CLI).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from adapters.web._admin_limit import LIMIT as ADMIN_GUESSES
from adapters.web._admin_limit import AdminAttempts
from adapters.web._cache import Rendered, ResponseCache, SharedCheck
from adapters.web._present import DEMAND_COLOURS, contrast, readable, span
from bot import i18n
from bot.clock import FixedClock
from bot.editorial.admin import Draft
from bot.models import Status, Subscription, Update, UpdateText, Urgency
from bot.ports import ChannelRef, OutboundMessage, Pacing
from bot.runtime.context import PluginContext
from bot.store import Store
from tests.strike_week import (
    CORRECTION_REASON,
    DEMAND_KEYS,
    RETRACTION_REASON,
    Week,
    la,
    strike_week,
    week_config,
)
from tests.support import ADMIN, CAMPAIGN, FRIDAY, SECOND_ADMIN
from tests.web_support import TOKEN, client_for, parse_html, web_context

Client = TestClient[Any, Any]
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
async def runtime(store: Store, clock: FixedClock) -> PluginContext:
    return web_context(store, clock)


@pytest.fixture
async def timeline(runtime: PluginContext, clock: FixedClock) -> Week:
    return await strike_week(runtime.store, clock, runtime.admin)


# Tests about rendering or HTTP plumbing rather than queries run on SQLite only, to keep
# this file fast; everything that reads or writes through the store runs on both.
@pytest.fixture
async def lite(sqlite_store: Store, clock: FixedClock) -> PluginContext:
    return web_context(sqlite_store, clock)


@pytest.fixture
async def lite_timeline(lite: PluginContext, clock: FixedClock) -> Week:
    return await strike_week(lite.store, clock, lite.admin)


async def get_html(client: Client, path: str) -> tuple[str, int]:
    response = await client.get(path)
    assert response.headers["Content-Type"] == "text/html; charset=utf-8"
    return await response.text(), response.status


async def audit_count(store: Store) -> int:
    async with store.read() as tx:
        return len(await tx.list_audit(limit=1000))


# -- the status page -------------------------------------------------------------------------


async def test_status_page_in_english(runtime: PluginContext, timeline: Week) -> None:
    async with client_for(runtime) as client:
        html, status = await get_html(client, "/")
    assert status == 200
    assert len(html.encode()) < 50_000
    doc = parse_html(html)
    assert doc.one("html").attrs["lang"] == "en"
    # Landmarks: banner, navigation, main, contentinfo; a skip link to main.
    assert doc.one("header") and doc.one("main", id="main") and doc.one("footer")
    assert doc.one("a", class_="skip").attrs["href"] == "#main"
    spanish = doc.one("a", hreflang="es")
    assert spanish.attrs["lang"] == "es" and spanish.attrs["href"] == "/es/"

    banner = doc.one("section", class_="status")
    assert "s-strike_on" in banner.attrs["class"]
    assert "On strike" in banner.text() and "talks scheduled" not in banner.text()
    assert "Day 5 of the strike" in banner.text()
    assert "Last updated Friday, January 18, 9:30 AM PST" in banner.text()

    step = doc.one("section", class_="next")
    assert "If there is no deal, the strike resumes Monday, January 21 at 6:00 AM." in step.text()
    assert "Monday, January 21, 6:00 AM PST" in step.text()
    assert doc.one("strong", class_="countdown").text() == "in 2 days, 20 hours"
    assert step.one("time", datetime="2019-01-21T14:00:00Z")  # valid HTML: no fractions

    table = doc.one("table", class_="demands")
    headers = [th.text() for th in table.one("thead").all("th")]
    assert headers == ["Demand", "Union's ask", "Employer's offer", "Status", "Last change"]
    pay = table.one("tr", id="demand-pay")
    cells = [c.text() for c in pay.all("td")]
    assert cells == [
        "A 6.5% raise, retroactive to 2017, taking effect all at once.",
        "A 6% raise spread over the first two years of a three-year contract.",
        "Offer on the table",
        "Friday, January 11",
    ]
    nurses = table.one("tr", id="demand-nurses").text()
    assert "Only 15% of schools in the district have a full-time nurse" in nurses
    assert len(table.one("tbody").all("tr")) == len(DEMAND_KEYS)


async def test_status_page_in_spanish(lite: PluginContext, lite_timeline: Week) -> None:
    async with client_for(lite) as client:
        html, status = await get_html(client, "/es/")
        redirect = await client.get("/es", allow_redirects=False)
    assert status == 200 and len(html.encode()) < 50_000
    assert redirect.status == 301 and redirect.headers["Location"] == "/es/"
    doc = parse_html(html)
    assert doc.one("html").attrs["lang"] == "es"
    assert doc.one("a", hreflang="en").attrs["href"] == "/"
    banner = doc.one("section", class_="status").text()
    assert "En huelga" in banner
    assert "Día 5 de la huelga" in banner
    assert doc.one("strong", class_="countdown").text() == "en 2 días y 20 horas"
    table = doc.one("table", class_="demands")
    assert [th.text() for th in table.one("thead").all("th")] == [
        "Demanda",
        "Propuesta del sindicato",
        "Oferta del empleador",
        "Estado",
        "Último cambio",
    ]
    pay = [c.text() for c in table.one("tr", id="demand-pay").all("td")]
    assert pay[0] == "Un aumento del 6.5%, retroactivo a 2017, aplicado de una sola vez."
    assert pay[2] == "Oferta sobre la mesa"
    assert doc.one("li", id=f"update-{lite_timeline.friday.id}").one("h3").one("a").attrs[
        "href"
    ] == (f"/es/updates/{lite_timeline.friday.id}")


async def test_timeline_shows_retraction_and_correction_honestly(
    runtime: PluginContext, timeline: Week
) -> None:
    async with client_for(runtime) as client:
        html, _ = await get_html(client, "/")
    doc = parse_html(html)
    entries = doc.one("ol", class_="timeline").all("li")
    assert [e.attrs["id"] for e in entries] == [
        f"update-{timeline.retracted.id}",
        f"update-{timeline.friday.id}",
        f"update-{timeline.talks.id}",
        f"update-{timeline.began.id}",
    ]
    retracted = entries[0]
    assert "retracted" in retracted.attrs["class"]
    assert retracted.one("h3").one("del").text() == "Deal reached!"
    notice = retracted.one("p", class_="notice").text()
    assert "Retracted" in notice and RETRACTION_REASON in notice
    corrected = entries[1]
    assert "Corrected" in corrected.one("p", class_="meta").text()
    edits = corrected.one("p", class_="edits").text()
    assert CORRECTION_REASON in edits
    assert corrected.one("a", href=f"/updates/{timeline.friday.id}#history")
    assert not corrected.all("del")


async def test_page_stays_small_with_many_long_updates(
    lite: PluginContext, clock: FixedClock
) -> None:
    long_body = ("Negotiations continue at the district offices today. " * 400)[:19_900]
    for i in range(30):
        clock.advance(minutes=5)
        await lite.admin.post(
            ADMIN,
            Draft(
                Status.STRIKE_ON,
                {"en": UpdateText(f"Update {i}", long_body), "es": UpdateText(f"Nota {i}")},
            ),
        )
    async with client_for(lite) as client:
        for path in ("/", "/es/", "/updates"):
            html, status = await get_html(client, path)
            assert status == 200
            assert len(html.encode()) < 50_000, path
        english = parse_html((await get_html(client, "/"))[0])
    entries = english.one("ol", class_="timeline").all("li")
    assert len(entries) == 20
    assert "Full update" in entries[0].text()
    assert "Showing the 20 most recent updates." in english.text()


async def test_status_page_before_any_update(lite: PluginContext) -> None:
    async with client_for(lite) as client:
        html, status = await get_html(client, "/")
        api = await (await client.get("/api/v1/status")).json()
    assert status == 200
    doc = parse_html(html)
    assert "No updates yet." in doc.one("section", class_="status").text()
    assert "No demands recorded yet." in doc.text()
    assert api["status"] is None and api["day"] is None and api["update_id"] is None


# -- one update -------------------------------------------------------------------------------


async def test_update_page_shows_revision_history(runtime: PluginContext, timeline: Week) -> None:
    async with client_for(runtime) as client:
        html, status = await get_html(client, f"/updates/{timeline.friday.id}")
        spanish, _ = await get_html(client, f"/es/updates/{timeline.friday.id}")
    assert status == 200
    doc = parse_html(html)
    assert doc.one("h1").text() == (
        "Day 5: no deal yet. The strike continues; talks go on through the weekend"
    )
    article = doc.one("article").text()
    assert "If there is no deal, the strike resumes Monday, January 21 at 6:00 AM." in article
    history = doc.one("section", id="history")
    assert "Current version (revision 2)" in history.text()
    old = history.one("li")
    assert "Revision 1" in old.text()
    assert f"Corrected: {CORRECTION_REASON}" in old.text()
    assert "Negotiations continue through the weekend." in old.text()  # before the correction
    es = parse_html(spanish)
    assert es.one("html").attrs["lang"] == "es"
    assert es.one("h1").text() == (
        "Día 5: aún no hay acuerdo. La huelga continúa; se negocia todo el fin de semana"
    )
    assert "Historial de revisiones" in es.one("section", id="history").text()
    assert "Revisión 1" in es.one("section", id="history").text()


async def test_retracted_update_shows_as_retracted_everywhere(
    runtime: PluginContext, timeline: Week
) -> None:
    reason = RETRACTION_REASON
    async with client_for(runtime) as client:
        html, status = await get_html(client, f"/updates/{timeline.retracted.id}")
        api = await (await client.get(f"/api/v1/updates/{timeline.retracted.id}")).json()
        listed = await (await client.get("/api/v1/updates")).json()
        atom = await (await client.get("/feed.atom")).text()
        status_api = await (await client.get("/api/v1/status")).json()
    assert status == 200
    doc = parse_html(html)
    assert doc.one("h1").one("del").text() == "Deal reached!"
    assert reason in doc.one("p", class_="notice").text()
    assert api["state"] == "retracted" and api["retraction_reason"] == reason
    entry = next(u for u in listed["items"] if u["id"] == timeline.retracted.id)
    assert entry["state"] == "retracted"
    assert "Retracted: Deal reached!" in atom
    # The retracted update never defines the current status.
    assert status_api["update_id"] == timeline.friday.id


async def test_unpublished_updates_stay_private(
    store: Store, clock: FixedClock, timeline: Week
) -> None:
    approving = web_context(
        store, clock, campaign=dataclasses.replace(CAMPAIGN, require_approval=True)
    )
    pending = await approving.admin.post(
        ADMIN, Draft(Status.STRIKE_ON, {"en": UpdateText("Secret draft")})
    )
    embargoed = await web_context(store, clock).admin.post(
        ADMIN,
        Draft(Status.STRIKE_OVER, {"en": UpdateText("Tentative agreement reached")}),
        publish_at=la(2019, 1, 22, 9),
    )
    async with client_for(approving) as client:
        for update in (pending, embargoed):
            page = await client.get(f"/updates/{update.id}")
            assert page.status == 404
            assert "no public update" in (await page.text()).lower()
            api = await client.get(f"/api/v1/updates/{update.id}")
            assert api.status == 404
            assert (await api.json())["error"]["code"] == "not_found"
        everything = " ".join(
            [
                await (await client.get(path)).text()
                for path in (
                    "/",
                    "/es/",
                    "/updates",
                    "/feed.atom",
                    "/calendar.ics",
                    "/api/v1/updates",
                    "/api/v1/status",
                )
            ]
        )
        assert "Secret draft" not in everything
        assert "Tentative agreement reached" not in everything
        # Once the embargo passes, it is the news (the cache notices without a restart).
        clock.now = la(2019, 1, 22, 9, 1)
        status = await (await client.get("/api/v1/status")).json()
        assert status["headline"] == "Tentative agreement reached"
        assert "Tentative agreement reached" in await (await client.get("/")).text()


async def test_unknown_pages_answer_404(lite: PluginContext, lite_timeline: Week) -> None:
    async with client_for(lite) as client:
        for path in ("/updates/999", "/updates/99999999999999", "/nothing", "/es/updates/999"):
            response = await client.get(path)
            assert response.status == 404, path
        es = await client.get("/es/updates/999")
        assert parse_html(await es.text()).one("html").attrs["lang"] == "es"
        api = await client.get("/api/v1/nothing")
        assert api.status == 404 and (await api.json())["error"]["code"] == "not_found"


# -- caching: fresh after every write, countdown per minute, conditional GET --------------


async def test_pages_follow_the_clock_and_every_write(
    runtime: PluginContext, clock: FixedClock, timeline: Week
) -> None:
    async with client_for(runtime) as client:
        first = await client.get("/")
        etag = first.headers["ETag"]
        assert "in 2 days, 20 hours" in await first.text()
        again = await client.get("/", headers={"If-None-Match": etag})
        assert again.status == 304
        clock.advance(hours=5, minutes=30)
        assert "in 2 days, 14 hours" in await (await client.get("/")).text()
        await runtime.admin.post(
            ADMIN,
            Draft(Status.TENTATIVE_AGREEMENT, {"en": UpdateText("Tentative agreement reached")}),
        )
        fresh = await client.get("/", headers={"If-None-Match": etag})
        assert fresh.status == 200
        doc = parse_html(await fresh.text())
        assert "Tentative agreement" in doc.one("section", class_="status").text()
        assert doc.all("p", class_="day") == []  # members are no longer out
        await runtime.admin.retract(ADMIN, timeline.began.id, reason="Posted to the wrong list.")
        entry = parse_html(await (await client.get("/")).text()).one(
            "li", id=f"update-{timeline.began.id}"
        )
        assert "retracted" in entry.attrs["class"]


async def test_shared_check_never_answers_with_a_value_older_than_the_request() -> None:
    value = 0
    calls = 0
    started, release = asyncio.Event(), asyncio.Event()

    async def fetch() -> int:
        nonlocal calls
        calls += 1
        seen = value
        started.set()
        await release.wait()
        return seen

    check = SharedCheck(fetch)
    early = [asyncio.create_task(check.get()) for _ in range(5)]
    await started.wait()  # the first fetch has read value 0
    value = 1  # a write commits while that fetch is running
    late = [asyncio.create_task(check.get()) for _ in range(5)]
    release.set()
    assert await asyncio.gather(*early) == [0] * 5
    assert await asyncio.gather(*late) == [1] * 5
    assert calls == 2  # ten callers, two fetches


async def test_many_ids_cannot_evict_the_hot_pages() -> None:
    cache = ResponseCache(size=2)
    renders: list[str] = []

    def renderer(name: str) -> Callable[[], Awaitable[Rendered]]:
        async def render() -> Rendered:
            renders.append(name)
            return Rendered(name.encode(), "text/plain")

        return render

    await cache.get("page", 1, renderer("page"), now=FRIDAY, pinned=True)
    for i in range(5):
        await cache.get(("update", i), 1, renderer(f"update {i}"), now=FRIDAY)
    again = await cache.get("page", 1, renderer("page"), now=FRIDAY)
    assert again.body == b"page" and renders.count("page") == 1
    await cache.get(("update", 4), 1, renderer("update 4"), now=FRIDAY)  # still in the LRU
    await cache.get(("update", 0), 1, renderer("update 0"), now=FRIDAY)  # evicted: rendered again
    assert renders.count("update 4") == 1 and renders.count("update 0") == 2
    changed = await cache.get("page", 2, renderer("page"), now=FRIDAY)  # the store changed
    assert changed.body == b"page" and renders.count("page") == 2


# -- the public JSON API ---------------------------------------------------------------------


async def test_api_status_updates_and_demands(runtime: PluginContext, timeline: Week) -> None:
    async with client_for(runtime) as client:
        status = await (await client.get("/api/v1/status")).json()
        es = await (await client.get("/api/v1/status?lang=es")).json()
        page1 = await (await client.get("/api/v1/updates?limit=2")).json()
        page2 = await (await client.get(page1["next"])).json()
        detail = await (await client.get(f"/api/v1/updates/{timeline.friday.id}")).json()
        demands = await (await client.get("/api/v1/demands?lang=es")).json()
        pay = await (await client.get("/api/v1/demands/pay")).json()
        bad_lang = await client.get("/api/v1/status?lang=fr")
        bad_lang_error = (await bad_lang.json())["error"]
        bad_limit = await client.get("/api/v1/updates?limit=0")
        missing = await client.get("/api/v1/demands/parking")
        missing_error = (await missing.json())["error"]
    assert status["status"] == "strike_on"
    assert status["colour"] == "#C8102E"  # strike_on
    assert status["day"] == 5 and status["on_strike"] is True
    assert status["next_step_at"] == "2019-01-21T14:00:00Z"
    assert status["update_url"] == f"https://strike.example.org/updates/{timeline.friday.id}"
    assert es["status_label"] == "En huelga"
    assert es["next_step"] == (
        "Si no hay acuerdo, la huelga se reanuda el lunes 21 de enero a las 6:00."
    )
    assert [u["id"] for u in page1["items"]] == [timeline.retracted.id, timeline.friday.id]
    assert [u["id"] for u in page2["items"]] == [timeline.talks.id, timeline.began.id]
    assert detail["revision"] == 2 and detail["corrected"] is True
    assert detail["revisions"][0]["correction"] is True
    assert detail["revisions"][0]["texts"]["en"]["body"].endswith(
        "Negotiations continue through the weekend."
    )
    assert "editor" not in detail["revisions"][0]  # who edited stays off the public API
    assert [d["key"] for d in demands["items"]] == list(DEMAND_KEYS)
    assert demands["items"][0]["status_label"] == "Oferta sobre la mesa"
    assert pay["union_position"] == (
        "A 6.5% raise, retroactive to 2017, taking effect all at once."
    )
    assert [entry["source"] for entry in pay["history"]] == [week_config().demands[0].source]
    assert bad_lang.status == 400 and "use one of en, es" in bad_lang_error["message"]
    assert bad_limit.status == 400
    assert missing.status == 404 and "Known keys: pay, class-size" in missing_error["message"]


# -- operations --------------------------------------------------------------------------------


class FakeAdapter:
    """Just enough of bot.ports.Adapter for /healthz."""

    platform = "discord"

    def __init__(self, state: Mapping[str, object]) -> None:
        self.state = state

    @property
    def pacing(self) -> Pacing:
        return Pacing(global_per_second=1, per_channel_per_second=1)

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    async def send(
        self, channel: ChannelRef, message: OutboundMessage, *, idempotency_key: str
    ) -> str:
        raise NotImplementedError

    async def edit(self, channel: ChannelRef, message_id: str, message: OutboundMessage) -> None:
        raise NotImplementedError

    async def delete(self, channel: ChannelRef, message_id: str) -> None:
        raise NotImplementedError

    def health(self) -> Mapping[str, object]:
        return self.state


async def test_healthz_metrics_and_web_mounts(lite: PluginContext, lite_timeline: Week) -> None:
    lite.health.parts["discord"] = FakeAdapter({"connected": True, "latency_ms": 42})
    lite.health.parts["slack"] = FakeAdapter({"connected": False, "error": "invalid_auth"})

    async def slack_events(request: web.Request) -> web.Response:
        return web.Response(text="slack here")

    class SlackRoutes:
        """Another plugin's part that mounts its own route on the same server."""

        def mount(self, app: web.Application) -> None:
            app.router.add_post("/slack/events", slack_events)

    await lite.admin.subscribe(
        ADMIN, Subscription(0, "discord", "guild", "chan", "en", timezone="UTC")
    )
    await lite.admin.post(ADMIN, Draft(Status.STRIKE_ON, {"en": UpdateText("Day 5")}))
    async with client_for(lite, SlackRoutes()) as client:
        health = await client.get("/healthz")
        body = await health.json()
        mounted = await client.post("/slack/events")
        mounted_text = await mounted.text()
        await client.get("/")
        await client.get(f"/updates/{lite_timeline.began.id}")
        await client.get("/missing")
        metrics = await client.get("/metrics")
        text = await metrics.text()
    assert health.status == 200
    assert body == {
        "ok": True,
        "database": {"reachable": True, "writable": True, "error": None},
        "adapters": {
            "discord": {"connected": True, "latency_ms": 42},
            "slack": {"connected": False, "error": "invalid_auth"},
        },
    }
    assert mounted.status == 200 and mounted_text == "slack here"
    assert metrics.headers["Content-Type"].startswith("text/plain")
    assert 'strikebot_http_requests_total{route="/",status="200"} 1.0' in text
    assert 'strikebot_http_requests_total{route="/updates/{id}",status="200"} 1.0' in text
    assert 'strikebot_http_requests_total{route="unmatched",status="404"} 1.0' in text
    assert 'strikebot_outbox_pending{platform="discord"} 1.0' in text


async def test_healthz_reports_an_unreachable_database(clock: FixedClock) -> None:
    from bot.store.engine import create_engine

    url = "postgresql+asyncpg://nobody@127.0.0.1:1/none"  # nothing listens on port 1
    unreachable = Store(create_engine(url), url)
    try:
        async with client_for(web_context(unreachable, clock)) as client:
            response = await client.get("/healthz")
            body = await response.json()
    finally:
        await unreachable.engine.dispose()
    assert response.status == 503
    assert body["ok"] is False and body["database"]["reachable"] is False
    assert "ConnectionRefused" in body["database"]["error"] or "Errno" in body["database"]["error"]


async def test_a_failing_store_still_serves_the_last_page(
    lite: PluginContext, lite_timeline: Week
) -> None:
    from bot.store.engine import create_engine

    async with client_for(lite) as client:
        good = await client.get("/es/")
        good_text = await good.text()
        working = lite.store.engine
        lite.store.engine = create_engine("postgresql+asyncpg://nobody@127.0.0.1:1/none")
        try:
            lite.clock.advance(minutes=1)  # type: ignore[attr-defined]
            stale = await client.get("/es/")
            stale_text = await stale.text()
            again = await client.get("/es/", headers={"If-None-Match": stale.headers["ETag"]})
            uncached = await client.get("/api/v1/updates?limit=3")
            error = (await uncached.json())["error"]
            page = await client.get("/es/updates/999")
            page_text = await page.text()
            health = await client.get("/healthz")
        finally:
            await lite.store.engine.dispose()
            lite.store.engine = working
    assert stale.status == 200 and stale.headers["Strikebot-Stale"] == "1"
    notice = parse_html(stale_text).one("p", class_="stale").text()
    assert notice.startswith("Es posible que esta página no esté al día")
    assert "viernes, 18 de enero" in notice  # what was known, and when
    assert stale_text.replace(f'<p class="stale" role="status">{notice}</p>', "") == (
        good_text.replace("<!--strikebot:stale-notice-->", "")
    )
    assert stale.headers["ETag"] != good.headers["ETag"]  # a different body, its own tag
    assert again.status == 304
    # Nothing rendered before the store went: 503 in the reader's words, never a 500.
    assert uncached.status == 503 and uncached.headers["Retry-After"] == "30"
    assert error["code"] == "unavailable" and "Try again" in error["message"]
    assert page.status == 503
    assert "No disponible" in parse_html(page_text).one("h1").text()
    assert health.status == 503


async def test_public_data_may_be_read_by_other_sites(lite: PluginContext) -> None:
    async with client_for(lite) as client:
        api = await client.get("/api/v1/status")
        feed = await client.get("/es/feed.atom")
        page = await client.get("/")
        admin = await client.post("/api/v1/admin/updates")
    assert api.headers["Access-Control-Allow-Origin"] == "*"
    assert feed.headers["Access-Control-Allow-Origin"] == "*"
    assert "Access-Control-Allow-Origin" not in page.headers
    assert "Access-Control-Allow-Origin" not in admin.headers
    assert "script-src" not in page.headers["Content-Security-Policy"]
    assert "default-src 'none'" in page.headers["Content-Security-Policy"]


def test_status_colours_are_readable() -> None:
    for colour in [*i18n.STATUS_COLOURS.values(), *DEMAND_COLOURS.values()]:
        background, text = readable(colour)
        assert contrast(background, text) >= 4.5
        # Nudged, not replaced: each channel stays close to the campaign's colour.
        for shift in (16, 8, 0):
            assert abs(((background >> shift) & 0xFF) - ((colour >> shift) & 0xFF)) <= 16


def test_spans_read_naturally() -> None:
    from datetime import timedelta

    assert span(timedelta(days=2, hours=20, minutes=5), "en") == "2 days, 20 hours"
    assert span(timedelta(days=1), "es") == "1 día"
    assert span(timedelta(hours=1, minutes=1), "es") == "1 hora y 1 minuto"
    assert span(timedelta(seconds=30), "en") == "less than a minute"


# -- the admin HTTP API ------------------------------------------------------------------------

ADMIN_CALLS: list[tuple[str, str, dict[str, Any] | None]] = [
    ("POST", "/api/v1/admin/updates", {"status": "strike_on", "texts": {"en": {"headline": "X"}}}),
    ("PATCH", "/api/v1/admin/updates/{id}", {"reason": "typo", "status": "strike_over"}),
    ("POST", "/api/v1/admin/updates/{id}/retract", {"reason": "wrong"}),
    ("POST", "/api/v1/admin/updates/{id}/approve", None),
    ("PUT", "/api/v1/admin/demands/pay", {"status": "won", "source": "TA text"}),
    ("POST", "/api/v1/admin/translations/confirm", {"target": "update:1", "language": "es"}),
    ("GET", "/api/v1/admin/anything-else", None),
    (
        "POST",
        "/api/v1/%61dmin/updates",
        {"status": "strike_on", "texts": {"en": {"headline": "X"}}},
    ),
]


async def snapshot_of(store: Store, clock: FixedClock) -> tuple[Any, ...]:
    async with store.read() as tx:
        updates = await tx.list_updates(clock(), limit=None, visible_only=False)
        demands = await tx.list_demands()
        audit = await tx.list_audit(limit=1000)
    return (updates, demands, len(audit))


BAD_CREDENTIALS: list[dict[str, str]] = [
    {},
    {"Authorization": "Bearer wrong-token"},
    {"Authorization": f"Basic {TOKEN}"},
    {"Authorization": f"Bearer {TOKEN}x"},
    {"Authorization": f"Bearer {TOKEN[:-1]}"},
    {"Authorization": "Bearer"},
]


async def test_admin_api_without_a_valid_token_is_401_and_changes_nothing(
    runtime: PluginContext, clock: FixedClock, timeline: Week
) -> None:
    before = await snapshot_of(runtime.store, clock)
    guesses = 0
    async with client_for(runtime) as client:
        for headers in BAD_CREDENTIALS:
            for method, path, body in ADMIN_CALLS:
                response = await client.request(
                    method, path.format(id=timeline.friday.id), json=body, headers=headers
                )
                error = (await response.json())["error"]
                if guesses >= ADMIN_GUESSES:  # then this client waits (below)
                    assert response.status == 429 and error["code"] == "too_many_attempts"
                    continue
                guesses += bool(headers)
                assert response.status == 401, (method, path, headers)
                assert response.headers["WWW-Authenticate"].startswith("Bearer")
                assert error["code"] == "unauthorized"
                assert "Authorization: Bearer" in error["message"]
    assert await snapshot_of(runtime.store, clock) == before


async def test_wrong_admin_tokens_make_a_client_wait_and_are_logged_once(
    runtime: PluginContext, timeline: Week, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 28: 2,000 wrong admin tokens at 1,669 a second all got 401, nothing limited,
    nothing logged. Now ten wrong ones make that client wait (429 with Retry-After, even
    with the right token), and the log says so once, with the count."""
    async with client_for(runtime) as client:
        with caplog.at_level(logging.WARNING, logger="strikebot.web"):
            statuses = []
            for n in range(200):
                wrong = {"Authorization": f"Bearer guess-{n}"}
                statuses.append((await client.get("/api/v1/admin/updates", headers=wrong)).status)
            right = await client.get("/api/v1/admin/updates", headers=AUTH)
        assert statuses[:ADMIN_GUESSES] == [401] * ADMIN_GUESSES
        assert set(statuses[ADMIN_GUESSES:]) == {429}
        assert right.status == 429 and 500 <= int(right.headers["Retry-After"]) <= 600
        said = [r.getMessage() for r in caplog.records if "wrong admin token" in r.getMessage()]
        assert said == [
            "1 wrong admin token from 127.0.0.0/24 since the last report; a client waits 10 min "
            "after 10"
        ]
        metrics = runtime.metrics.registry
        assert (
            metrics.get_sample_value("strikebot_http_refused_total", {"reason": "admin_token"})
            == 10
        )
    # Another client is not held up, and the wait ends with the window.
    attempts = AdminAttempts()
    for second in range(ADMIN_GUESSES):
        attempts.failed("198.51.100.7", float(second))
    assert attempts.waiting("198.51.100.7", 10.0) > 0
    assert attempts.waiting("203.0.113.9", 10.0) == 0.0
    assert attempts.waiting("198.51.100.7", 601.0) == 0.0


async def test_admin_api_is_refused_when_the_token_is_unset(
    sqlite_store: Store, clock: FixedClock, lite_timeline: Week
) -> None:
    lite = web_context(sqlite_store, clock, admin_token=None)
    before = await snapshot_of(sqlite_store, clock)
    async with client_for(lite) as client:
        for method, path, body in ADMIN_CALLS:
            for headers in ({}, AUTH, {"Authorization": "Bearer "}):
                response = await client.request(
                    method, path.format(id=lite_timeline.friday.id), json=body, headers=headers
                )
                assert response.status == 403, (method, path)
                error = (await response.json())["error"]
                assert error["code"] == "admin_api_disabled"
                assert "STRIKEBOT_ADMIN_TOKEN" in error["message"]
    assert await snapshot_of(sqlite_store, clock) == before


async def test_admin_api_posts_edits_retracts_and_records_with_audit(
    runtime: PluginContext, clock: FixedClock, timeline: Week
) -> None:
    async with client_for(runtime) as client:
        posted = await client.post(
            "/api/v1/admin/updates",
            headers=AUTH,
            json={
                "status": "talks_scheduled",
                "urgency": "important",
                "texts": {
                    "en": {"headline": "Talks resume Saturday", "next_step": "Rally at noon"},
                    "es": {"headline": "Las negociaciones se reanudan el sábado"},
                },
                "next_step_at": "2019-01-19T12:00:00-08:00",
            },
        )
        assert posted.status == 201, await posted.text()
        created = await posted.json()
        new_id = created["id"]
        assert posted.headers["Location"] == f"/api/v1/updates/{new_id}"
        assert created["author"] == "http:admin-api (admin API)"
        assert created["state"] == "published"
        assert "Talks resume Saturday" in await (await client.get("/")).text()

        edited = await client.patch(
            f"/api/v1/admin/updates/{new_id}",
            headers=AUTH,
            json={
                "reason": "Rally moved to 1 PM",
                "correction": True,
                "texts": {"en": {"next_step": "Rally at 1 PM"}},
            },
        )
        assert edited.status == 200, await edited.text()
        after_edit = await edited.json()
        assert after_edit["revision"] == 2 and after_edit["corrected"] is True
        # A partial text edit keeps the fields it did not name.
        assert after_edit["texts"]["en"] == {
            "headline": "Talks resume Saturday",
            "body": "",
            "next_step": "Rally at 1 PM",
        }
        cleared = await client.patch(
            f"/api/v1/admin/updates/{new_id}",
            headers=AUTH,
            json={"reason": "No fixed time yet", "next_step_at": None},
        )
        assert (await cleared.json())["next_step_at"] is None

        retracted = await client.post(
            f"/api/v1/admin/updates/{new_id}/retract",
            headers=AUTH,
            json={"reason": "Talks postponed"},
        )
        assert retracted.status == 200
        assert (await retracted.json())["state"] == "retracted"
        page = parse_html(await (await client.get(f"/updates/{new_id}")).text())
        assert page.one("h1").one("del").text() == "Talks resume Saturday"

        recorded = await client.put(
            "/api/v1/admin/demands/nurses",
            headers=AUTH,
            json={
                "status": "offer_on_table",
                "offer": {"en": "A nurse in every school, phased in over 2 years"},
                "source": "District proposal, Jan 19",
            },
        )
        assert recorded.status == 200, await recorded.text()
        demand = await recorded.json()
        assert demand["status"] == "offer_on_table"
        assert demand["history"][-1]["source"] == "District proposal, Jan 19"
        row = parse_html(await (await client.get("/")).text()).one("tr", id="demand-nurses")
        assert "A nurse in every school, phased in over 2 years" in row.text()

    async with runtime.store.read() as tx:
        audit = await tx.list_audit(limit=10)
    mine = [(a.action, a.target) for a in audit if a.actor == "http:admin-api (admin API)"]
    assert mine == [
        ("demand.record", "demand:nurses"),
        ("update.retract", f"update:{new_id}"),
        ("update.edit", f"update:{new_id}"),
        ("update.correct", f"update:{new_id}"),
        ("update.post", f"update:{new_id}"),
    ]


async def test_admin_api_approves_another_admins_update(
    sqlite_store: Store, clock: FixedClock
) -> None:
    lite = web_context(
        sqlite_store, clock, campaign=dataclasses.replace(CAMPAIGN, require_approval=True)
    )
    theirs: Update = await lite.admin.post(
        SECOND_ADMIN, Draft(Status.STRIKE_ON, {"en": UpdateText("Strike day 6")}, Urgency.URGENT)
    )
    assert theirs.state == "pending_approval"
    async with client_for(lite) as client:
        assert "Strike day 6" not in await (await client.get("/")).text()
        approved = await client.post(f"/api/v1/admin/updates/{theirs.id}/approve", headers=AUTH)
        assert approved.status == 200, await approved.text()
        body = await approved.json()
        assert body["state"] == "published"
        assert body["approved_by"] == "http:admin-api (admin API)"
        assert "Strike day 6" in await (await client.get("/")).text()
        again = await client.post(f"/api/v1/admin/updates/{theirs.id}/approve", headers=AUTH)
        assert again.status == 409
        # Two-person rule: the HTTP admin cannot approve what it wrote itself.
        mine = await client.post(
            "/api/v1/admin/updates",
            headers=AUTH,
            json={"status": "strike_on", "texts": {"en": {"headline": "Mine"}}},
        )
        assert (await mine.json())["state"] == "pending_approval"
        own = await client.post(f"/api/v1/admin/updates/{(await mine.json())['id']}/approve",
                                headers=AUTH)  # fmt: skip
        assert own.status == 403
        assert "someone else must approve" in (await own.json())["error"]["message"]
    async with sqlite_store.read() as tx:
        actions = [a.action for a in await tx.list_audit(limit=5)]
    assert actions[:3] == ["update.submit", "update.approve", "update.submit"]


BAD_REQUESTS: list[tuple[str, str, Any, int, str, str]] = [
    ("POST", "/api/v1/admin/updates", "not json", 400, "bad_json", "not valid JSON"),
    ("POST", "/api/v1/admin/updates", [1, 2], 400, "bad_json", "JSON object"),
    ("POST", "/api/v1/admin/updates", None, 400, "empty_body", "Send a JSON object"),
    (
        "POST",
        "/api/v1/admin/updates",
        {"texts": {"en": {"headline": "x"}}},
        422,
        "invalid",
        "status: is required",
    ),
    (
        "POST",
        "/api/v1/admin/updates",
        {"status": "on_fire", "texts": {}},
        422,
        "invalid",
        "status:",
    ),
    (
        "POST",
        "/api/v1/admin/updates",
        {"status": "strike_on", "texts": {"fr": {"headline": "Grève"}}},
        422,
        "invalid",
        "“fr” is not one of this campaign's languages",
    ),
    (
        "POST",
        "/api/v1/admin/updates",
        {
            "status": "strike_on",
            "texts": {"en": {"headline": "Late"}},
            "publish_at": "2019-01-01T00:00:00Z",
        },
        422,
        "invalid",
        "is in the past",
    ),
    (
        "POST",
        "/api/v1/admin/updates",
        {"status": "strike_on", "texts": {"en": {"headline": "x" * 151}}},
        422,
        "invalid",
        "texts.en.headline",
    ),
    (
        "PATCH",
        "/api/v1/admin/updates/{friday}",
        {"status": "strike_on"},
        422,
        "invalid",
        "reason: is required",
    ),
    (
        "PATCH",
        "/api/v1/admin/updates/{friday}",
        {"reason": "because", "texts": {}},
        422,
        "invalid",
        "texts: needs at least 1 entry",
    ),
    (
        "PATCH",
        "/api/v1/admin/updates/{friday}",
        {"reason": "because"},
        422,
        "invalid",
        "Nothing to change",
    ),
    (
        "PATCH",
        "/api/v1/admin/updates/999",
        {"reason": "x", "status": "strike_on"},
        404,
        "not_found",
        "There is no update #999",
    ),
    (
        "PATCH",
        "/api/v1/admin/updates/{retracted}",
        {"reason": "x", "status": "strike_on"},
        409,
        "conflict",
        "was retracted",
    ),
    (
        "POST",
        "/api/v1/admin/updates/{retracted}/retract",
        {"reason": "again"},
        409,
        "conflict",
        "already retracted",
    ),
    (
        "POST",
        "/api/v1/admin/updates/{friday}/retract",
        {"reason": "   "},
        422,
        "invalid",
        "reason",
    ),
    (
        "POST",
        "/api/v1/admin/updates/{friday}/approve",
        None,
        409,
        "conflict",
        "not waiting for approval",
    ),
    (
        "PUT",
        "/api/v1/admin/demands/parking",
        {"status": "won", "source": "x"},
        404,
        "not_found",
        "Known keys",
    ),
    (
        "PUT",
        "/api/v1/admin/demands/pay",
        {"source": "x"},
        422,
        "invalid",
        "Give a new status, a new offer, or both",
    ),
    ("DELETE", "/api/v1/admin/updates/{friday}", None, 405, "method_not_allowed", "use"),
]


async def test_admin_api_refuses_bad_requests_with_a_clear_json_error(
    runtime: PluginContext, clock: FixedClock, timeline: Week
) -> None:
    before = await snapshot_of(runtime.store, clock)
    async with client_for(runtime) as client:
        for method, template, body, status, code, says in BAD_REQUESTS:
            path = template.format(friday=timeline.friday.id, retracted=timeline.retracted.id)
            kwargs: dict[str, Any] = {"headers": AUTH}
            if isinstance(body, str):
                kwargs["data"] = body
            elif body is not None:
                kwargs["json"] = body
            response = await client.request(method, path, **kwargs)
            error = (await response.json())["error"]
            assert response.status == status, (method, path, error)
            assert error["code"] == code, (method, path, error)
            assert says in error["message"], (method, path, error)
    assert await snapshot_of(runtime.store, clock) == before


async def test_admin_api_marks_other_languages_stale_until_confirmed(
    runtime: PluginContext, clock: FixedClock, timeline: Week
) -> None:
    async with client_for(runtime) as client:
        posted = await client.post(
            "/api/v1/admin/updates",
            headers=AUTH,
            json={
                "status": "strike_on",
                "texts": {
                    "en": {"headline": "Picket at 6:30"},
                    "es": {"headline": "Piquete a las 6:30"},
                },
            },
        )
        assert posted.status == 201, await posted.text()
        created = await posted.json()
        assert created["stale"] == {}
        edited = await client.patch(
            f"/api/v1/admin/updates/{created['id']}",
            headers=AUTH,
            json={"reason": "time", "texts": {"en": {"headline": "Picket at 7:00"}}},
        )
        assert edited.status == 200, await edited.text()
        stale = (await edited.json())["stale"]
        assert list(stale) == ["es"] and stale["es"]["edited"] == ["en"]
        assert stale["es"]["editor"] == "http:admin-api (admin API)"

        target = f"update:{created['id']}"
        refused = await client.post(
            "/api/v1/admin/translations/confirm",
            headers=AUTH,
            json={"target": target, "language": "fr"},
        )
        assert refused.status == 422
        confirmed = await client.post(
            "/api/v1/admin/translations/confirm",
            headers=AUTH,
            json={"target": target, "language": "es", "note": "checked"},
        )
        assert confirmed.status == 200, await confirmed.text()
        assert await confirmed.json() == {"target": target, "language": "es", "confirmed": True}
        again = await client.patch(
            f"/api/v1/admin/updates/{created['id']}",
            headers=AUTH,
            json={"reason": "status", "status": "talks_scheduled"},
        )
        assert (await again.json())["stale"] == {}
