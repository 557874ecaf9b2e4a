"""Answers per site, on SQLite and PostgreSQL: `/strike status <site>` gives the latest word a
site's readers got (for everyone, for it or for its group), and the public JSON API lists
only those with `?site=`."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from bot.audiences import Sites, read_sites_csv
from bot.clock import FixedClock
from bot.commands import CommandContext, Commands
from bot.editorial.admin import Admin, Draft
from bot.models import EVERYONE, Audience, Status, UpdateText
from bot.store import Store
from tests.support import ADMIN, ADMINS, CAMPAIGN, MEMBER, ROOT
from tests.web_support import client_for, web_context


@pytest.fixture
async def posted(store: Store, admin: Admin, clock: FixedClock) -> dict[str, int]:
    text = (ROOT / "config" / "lausd-sites.csv").read_text(encoding="utf-8")
    await Sites(store, ADMINS, clock).import_file(ADMIN, read_sites_csv(text, ("en", "es"), "en"))
    ids = {}
    for name, audience, status in (
        ("everyone", EVERYONE, Status.STRIKE_ON),
        ("east", Audience.of([], ["east"]), Status.STRIKE_ON),
        ("roosevelt", Audience.of(["roosevelt"]), Status.STRIKE_ON),
        ("venice", Audience.of(["venice"]), Status.STRIKE_ON),
    ):
        clock.advance(minutes=10)
        draft = Draft(status, {"en": UpdateText(f"News for {name}")}, audience=audience)
        ids[name] = (await admin.post(ADMIN, draft)).id
    clock.advance(minutes=10)
    return ids


async def test_status_of_a_site_gives_its_latest_word(
    store: Store, admin: Admin, clock: FixedClock, posted: dict[str, int]
) -> None:
    commands = Commands(store, CAMPAIGN, admin, clock)
    ctx = CommandContext("discord", MEMBER, "G1", "C1")
    everyone = await commands.handle(ctx, "status")
    assert "News for venice" in everyone.message.body  # the campaign's latest, whoever for
    roosevelt = await commands.handle(ctx, "status Roosevelt")
    assert roosevelt.ok
    assert roosevelt.message.title == "Roosevelt High School: On strike"
    assert "News for roosevelt" in roosevelt.message.body
    grant = await commands.handle(ctx, "status grant")  # another school: the campaign's word
    assert "News for everyone" in grant.message.body
    east = await commands.handle(ctx, "status east")  # a group: its sites' word too
    assert east.message.title.startswith("Local District East")
    assert "News for roosevelt" in east.message.body
    spanish = await commands.handle(
        CommandContext("discord", MEMBER, "G1", "C1", "es"), "estado venice"
    )
    assert spanish.message.title.startswith("Preparatoria Venice: ")
    unknown = await commands.handle(ctx, "status lincoln")
    assert not unknown.ok
    assert unknown.message.body.startswith("There is no site or group 'lincoln'.")
    direct = await commands.status(ctx, site="venice")
    assert "News for venice" in direct.message.body


async def test_the_json_api_filters_by_site(
    store: Store, clock: FixedClock, posted: dict[str, int]
) -> None:
    async with client_for(web_context(store, clock)) as client:
        every = await (await client.get("/api/v1/updates")).json()
        assert len(every["items"]) == 4
        assert every["items"][0]["audience"] == {"sites": ["venice"], "groups": []}
        answer = await client.get("/api/v1/updates?site=Roosevelt")
        assert answer.status == 200
        shown = [item["headline"] for item in (await answer.json())["items"]]
        assert shown == ["News for roosevelt", "News for east", "News for everyone"]
        group = await (await client.get("/api/v1/updates?site=west")).json()
        assert [i["headline"] for i in group["items"]] == ["News for venice", "News for everyone"]
        paged = await (await client.get("/api/v1/updates?site=roosevelt&limit=1")).json()
        assert paged["next"].endswith("&site=roosevelt")
        second = await (await client.get(paged["next"])).json()
        assert [i["headline"] for i in second["items"]] == ["News for east"]
        missing = await client.get("/api/v1/updates?site=lincoln")
        assert missing.status == 404
        bad = await client.get("/api/v1/updates?site=a%20b")
        assert bad.status == 400


async def test_a_briefing_tells_the_updates_for_some_sites_only_when_asked_to(
    store: Store, clock: FixedClock, posted: dict[str, int]
) -> None:
    from bot.briefings.compose import gather_briefing_inputs
    from bot.models import Subscription

    async with store.read() as tx:
        inputs = await gather_briefing_inputs(tx, CAMPAIGN, clock())
    assert [u.id for u in inputs.recent_updates] == list(posted.values())
    assert inputs.latest is not None and inputs.latest.id == posted["everyone"]
    since = clock() - timedelta(days=1)
    assert [u.id for u in inputs.targeted(since, clock())] == [
        posted[name] for name in ("east", "roosevelt", "venice")
    ]
    channel = Subscription(0, "console", "local", "c", "en")
    alone = inputs.compose(CAMPAIGN, channel, clock())  # told none of them
    told = alone.body + " ".join(f.value for f in alone.fields)
    assert "News for everyone" in told
    assert not any(f"News for {name}" in told for name in ("east", "roosevelt", "venice"))
    roosevelt = inputs.compose(CAMPAIGN, channel, clock(), reached={posted["roosevelt"]})
    assert "News for roosevelt" in roosevelt.body and "News for venice" not in roosevelt.body


async def test_a_text_status_and_a_site_code_answers_for_the_site(
    sqlite_store: Store, clock: FixedClock
) -> None:
    from bot.people.keywords import Keywords, Kind
    from tests.fakes.twilio import FakeTwilio
    from tests.family_support import families

    words = Keywords(CAMPAIGN.languages, CAMPAIGN.default_language)
    assert (words.read("Estado Roosevelt").kind, words.read("ESTADO roosevelt").argument) == (
        Kind.STATUS,
        "roosevelt",
    )
    assert words.read("stop roosevelt").kind is None  # only JOIN and STATUS take a word
    text = (ROOT / "config" / "lausd-sites.csv").read_text(encoding="utf-8")
    await Sites(sqlite_store, ADMINS, clock).import_file(
        ADMIN, read_sites_csv(text, ("en", "es"), "en")
    )
    async with (
        FakeTwilio() as twilio,
        families(sqlite_store, clock, twilio=twilio, sms={"sender_name": "UTLA"}) as f,
    ):
        for headline, audience in (
            ("Strike continues", EVERYONE),
            ("Roosevelt: breakfast at 7", Audience.of(["roosevelt"])),
            ("Venice: rally at noon", Audience.of(["venice"])),
        ):
            clock.advance(minutes=5)
            await f.admin.post(
                ADMIN, Draft(Status.STRIKE_ON, {"en": UpdateText(headline)}, audience=audience)
            )
        clock.advance(minutes=5)
        _, site = await f.text_in("+12135550123", "STATUS ROOSEVELT", "SM-status-1")
        assert "Roosevelt: breakfast at 7" in site and "Roosevelt High School" in site
        _, plain = await f.text_in("+12135550123", "status please", "SM-status-2")
        assert "Venice: rally at noon" in plain  # no site: the campaign's latest


async def test_a_site_page_shows_its_news_and_its_group_page_its_sites(
    store: Store, clock: FixedClock, posted: dict[str, int]
) -> None:
    async with client_for(web_context(store, clock)) as client:
        page = await client.get("/sites/Roosevelt")
        assert page.status == 200
        html = await page.text()
        assert '<h1 id="place">Roosevelt High School</h1>' in html
        assert "456 S Mathews St" in html and 'href="/sites/east"' in html
        assert "News for roosevelt" in html and "News for east" in html
        assert "News for everyone" in html and "News for venice" not in html
        assert "An example from the demo campaign" in html
        spanish = await (await client.get("/es/sites/roosevelt")).text()
        assert "Preparatoria Roosevelt" in spanish and "Distrito Local Este" in spanish
        group = await (await client.get("/sites/east")).text()
        assert 'href="/sites/roosevelt"' in group and "News for roosevelt" in group
        assert (await client.get("/sites/lincoln")).status == 404
        assert (await client.get("/sites/a.b")).status == 404


SITE_PAGES = ("/sites/roosevelt", "/es/sites/east", "/sites", "/es/sites")


async def test_the_sites_index_lists_every_site_by_group_with_its_latest_word(
    store: Store, clock: FixedClock, posted: dict[str, int]
) -> None:
    async with client_for(web_context(store, clock)) as client:
        home = await (await client.get("/")).text()
        assert 'href="/sites">News for each school and site</a>' in home
        page = await client.get("/sites")
        assert page.status == 200
        html = await page.text()
        assert '<h1 id="sites-h">Schools and sites</h1>' in html
        east = html[html.index('id="g-east"') : html.index('id="g-northeast"')]
        assert 'href="/sites/east">Local District East</a>' in east
        assert 'href="/sites/roosevelt">Roosevelt High School</a>' in east
        assert "News for roosevelt" in east  # its latest word
        grant = html[html.index('id="g-northeast"') : html.index('id="g-northwest"')]
        assert "News for everyone" in grant and "News for" not in grant.replace(
            "News for everyone", ""
        )
        spanish = await (await client.get("/es/sites")).text()
        assert "Escuelas y centros" in spanish and 'href="/es/sites/roosevelt"' in spanish
        es_home = await (await client.get("/es/")).text()
        assert 'href="/es/sites"' in es_home
    index = await Sites(store, ADMINS, clock).index(clock())
    latest = {
        place.place.code: place.latest.id if place.latest else None
        for group, sites in index.groups
        for place in (group, *sites)
    }
    assert latest["roosevelt"] == latest["east"] == posted["roosevelt"]  # the newest of theirs
    assert latest["venice"] == latest["west"] == posted["venice"]
    assert latest["grant"] == latest["northeast"] == posted["everyone"]


async def test_without_sites_the_status_page_links_no_index(
    store: Store, clock: FixedClock
) -> None:
    async with client_for(web_context(store, clock)) as client:
        assert 'href="/sites"' not in await (await client.get("/")).text()
        assert (await client.get("/sites")).status == 200  # an empty list, not an error


async def test_axe_and_the_nu_checker_find_nothing_wrong_on_a_site_page(
    sqlite_store: Store, clock: FixedClock, tmp_path: Path
) -> None:
    from tests.axe import axe_source, chromium_page, violations
    from tests.support import chromium_path

    chromium_path()
    axe_source()
    text = (ROOT / "config" / "lausd-sites.csv").read_text(encoding="utf-8")
    await Sites(sqlite_store, ADMINS, clock).import_file(
        ADMIN, read_sites_csv(text, ("en", "es"), "en")
    )
    admin = Admin(sqlite_store, CAMPAIGN, ADMINS, clock)
    await admin.post(
        ADMIN,
        Draft(
            Status.STRIKE_ON,
            {"en": UpdateText("Roosevelt: breakfast at the north gate", "From 7 AM.")},
            audience=Audience.of(["roosevelt"]),
        ),
    )
    found: dict[str, list[str]] = {}
    async with (
        client_for(web_context(sqlite_store, clock)) as client,
        chromium_page(tmp_path) as page,
    ):
        for path in SITE_PAGES:
            for width, height in ((1280, 900), (320, 640)):
                for v in await violations(page, str(client.make_url(path)), width, height):
                    nodes = [n["target"] for n in v["nodes"][:4]]
                    found.setdefault(f"{path} at {width}px", []).append(f"{v['id']}: {nodes}")
    assert found == {}
    # And the Nu HTML Checker finds no error on them.
    from tests.vnu import check, java_path, vnu_jar

    java_path()
    vnu_jar()
    files = []
    async with client_for(web_context(sqlite_store, clock)) as client:
        for n, path in enumerate(SITE_PAGES):
            file = tmp_path / f"site-{n}.html"
            file.write_bytes(await (await client.get(path)).read())
            files.append(file)
    assert check(files) == []


async def test_a_site_has_its_own_atom_feed(
    store: Store, clock: FixedClock, posted: dict[str, int]
) -> None:
    import feedparser

    async with client_for(web_context(store, clock)) as client:
        page = await (await client.get("/sites/roosevelt")).text()
        assert 'href="/sites/roosevelt/feed.atom"' in page
        answer = await client.get("/es/sites/roosevelt/feed.atom")
        assert answer.status == 200 and answer.content_type == "application/atom+xml"
        feed = feedparser.parse(await answer.read())
        assert feed.feed.title.startswith("Preparatoria Roosevelt: ")
        assert feed.feed.id.endswith("/es/sites/roosevelt/feed.atom")
        titles = [e.title.removesuffix(" (en inglés)") for e in feed.entries]  # no Spanish
        assert titles == ["News for roosevelt", "News for east", "News for everyone"]
        assert (await client.get("/sites/lincoln/feed.atom")).status == 404


async def test_a_site_has_its_own_calendar(
    store: Store, admin: Admin, clock: FixedClock, posted: dict[str, int]
) -> None:
    from datetime import timedelta

    import icalendar

    for name, audience in (
        ("roosevelt", Audience.of(["roosevelt"])),
        ("venice", Audience.of(["venice"])),
    ):
        clock.advance(minutes=5)
        draft = Draft(
            Status.STRIKE_ON,
            {"en": UpdateText(f"{name} rally", "", f"Rally at {name}")},
            next_step_at=clock() + timedelta(days=1, hours=len(name)),
            audience=audience,
        )
        await admin.post(ADMIN, draft)
    async with client_for(web_context(store, clock)) as client:
        answer = await client.get("/sites/roosevelt/calendar.ics")
        assert answer.status == 200
        calendar = icalendar.Calendar.from_ical(await answer.read())
        summaries = [str(e.get("summary")) for e in calendar.walk("VEVENT")]
        assert any("roosevelt" in s.lower() for s in summaries), summaries
        assert not any("venice" in s.lower() for s in summaries), summaries
        assert (await client.get("/sites/lincoln/calendar.ics")).status == 404


async def test_the_json_api_lists_the_sites_in_their_groups(
    store: Store, clock: FixedClock, posted: dict[str, int]
) -> None:
    async with client_for(web_context(store, clock)) as client:
        found = await (await client.get("/api/v1/sites?lang=es")).json()
    east = next(g for g in found["items"] if g["code"] == "east")
    assert east["name"] == "Distrito Local Este" and east["url"].endswith("/es/sites/east")
    assert [s["code"] for s in east["sites"]] == ["roosevelt"]
    assert east["sites"][0]["name"] == "Preparatoria Roosevelt" and east["sites"][0]["example"]


async def test_an_import_shows_at_once_on_the_pages_and_the_api(
    store: Store, clock: FixedClock, posted: dict[str, int]
) -> None:
    async with client_for(web_context(store, clock)) as client:
        assert (await client.get("/sites/lincoln")).status == 404
        before = await (await client.get("/api/v1/sites")).json()
        await Sites(store, ADMINS, clock).import_file(
            ADMIN,
            read_sites_csv("code,group,name\nlincoln,east,Lincoln High\n", ("en", "es"), "en"),
        )
        assert (await client.get("/sites/lincoln")).status == 200
        after = await (await client.get("/api/v1/sites")).json()
    assert len(after["items"][1]["sites"]) == len(before["items"][1]["sites"]) + 1
