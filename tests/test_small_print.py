"""The page's small print: a favicon served with caching, feeds and calendars per language
with their own ids and UIDs linking to each other, and a footer that speaks to families."""

from __future__ import annotations

import feedparser
import icalendar

from bot.clock import FixedClock
from bot.store import Store
from tests.strike_week import strike_week
from tests.web_support import client_for, parse_html, web_context


async def test_the_favicon_is_tiny_and_cached(sqlite_store: Store, clock: FixedClock) -> None:
    async with client_for(web_context(sqlite_store, clock)) as client:
        icon = await client.get("/favicon.ico")
        body = await icon.read()
        again = await client.get("/favicon.ico", headers={"If-None-Match": icon.headers["ETag"]})
        page = parse_html(await (await client.get("/es/")).text())
    assert icon.status == 200 and icon.content_type == "image/x-icon"
    assert body[:4] == b"\x00\x00\x01\x00" and len(body) < 2048  # an ICO, about a kilobyte
    assert "max-age=604800" in icon.headers["Cache-Control"]
    assert again.status == 304
    assert page.one("link", rel="icon").attrs["href"] == "/favicon.ico"


async def test_each_language_has_its_own_feed_and_calendar_linking_to_the_others(
    sqlite_store: Store, clock: FixedClock
) -> None:
    runtime = web_context(sqlite_store, clock)
    week = await strike_week(sqlite_store, clock, runtime.admin)
    async with client_for(runtime) as client:
        atom, ics = {}, {}
        for lang, prefix in (("en", ""), ("es", "/es")):
            atom[lang] = feedparser.parse(await (await client.get(f"{prefix}/feed.atom")).read())
            calendar = await (await client.get(f"{prefix}/calendar.ics")).read()
            ics[lang] = icalendar.Calendar.from_ical(calendar)
        head = parse_html(await (await client.get("/es/")).text()).one("head")
    english, spanish = atom["en"], atom["es"]
    assert english.entries[1].id == f"https://strike.example.org/updates/{week.friday.id}"
    assert spanish.entries[1].id == f"https://strike.example.org/es/updates/{week.friday.id}"
    feed_links = {(link.get("hreflang"), link.href) for link in spanish.feed.links}
    assert ("en", "https://strike.example.org/feed.atom") in feed_links
    entry_links = {(link.get("hreflang"), link.href) for link in spanish.entries[1].links}
    assert ("en", f"https://strike.example.org/updates/{week.friday.id}") in entry_links
    uids = {lang: {str(e["UID"]) for e in cal.walk("VEVENT")} for lang, cal in ics.items()}
    assert uids["en"] and uids["es"] and not uids["en"] & uids["es"]
    monday = next(e for e in ics["es"].walk("VEVENT") if "updates/" in str(e["URL"]))
    link = monday["LINK"]
    assert str(link).startswith("https://strike.example.org/updates/")
    assert link.params["LINKREL"] == "alternate"
    alternates = {
        (a.attrs.get("type"), a.attrs.get("hreflang")) for a in head.all("link", rel="alternate")
    }
    assert {("application/atom+xml", "en"), ("text/calendar", "en"), ("application/atom+xml", None),
            ("text/calendar", None)} <= alternates  # fmt: skip


async def test_the_footer_speaks_to_families(sqlite_store: Store, clock: FixedClock) -> None:
    runtime = web_context(sqlite_store, clock)
    await strike_week(sqlite_store, clock, runtime.admin)
    async with client_for(runtime) as client:
        english = parse_html(await (await client.get("/")).text()).one("footer").text()
        spanish = parse_html(await (await client.get("/es/")).text()).one("footer").text()
    for jargon in ("Atom", "JSON API", "iCal", "feed"):
        assert jargon not in english and jargon not in spanish
    assert "Add the strike's dates to your phone's calendar" in english
    assert "Follow the updates in a news reader app" in english
    assert "Añade las fechas de la huelga al calendario de tu teléfono" in spanish
