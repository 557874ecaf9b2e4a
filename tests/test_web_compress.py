"""Text answers compressed as the client asks (gzip or brotli by Accept-Encoding, with
`Vary: Accept-Encoding` and an ETag per coding), compressed once per rendering; and a
conditional request answered from what is known of a view before any rendering, even once
its body has left the cache (issue 31)."""

from __future__ import annotations

import gzip

import brotli
import pytest
from aiohttp import ClientSession
from multidict import CIMultiDict

from adapters.web._app import STATE
from bot.clock import FixedClock
from bot.runtime.context import PluginContext
from bot.store import Store
from tests.strike_week import Week, strike_week
from tests.support import recording
from tests.web_support import client_for, web_context

TEXTS = ["/", "/es/updates", "/feed.atom", "/calendar.ics", "/api/v1/status", "/api/v1/updates"]


@pytest.fixture
async def site(sqlite_store: Store, clock: FixedClock) -> tuple[PluginContext, Week]:
    ctx = web_context(sqlite_store, clock)
    return ctx, await strike_week(ctx.store, clock, ctx.admin)


async def fetch(
    session: ClientSession, url: str, coding: str
) -> tuple[int, CIMultiDict[str], bytes]:
    async with session.get(url, headers={"Accept-Encoding": coding}) as response:
        return response.status, response.headers.copy(), await response.read()


@pytest.mark.parametrize("path", TEXTS)
async def test_each_text_answer_comes_in_the_coding_asked_for(
    site: tuple[PluginContext, Week], path: str
) -> None:
    ctx, _ = site
    async with client_for(ctx) as client, ClientSession(auto_decompress=False) as raw:
        url = str(client.make_url(path))
        _, plain_headers, plain = await fetch(raw, url, "identity")
        assert "Content-Encoding" not in plain_headers
        assert plain_headers["Vary"] == "Accept-Encoding"
        tags = {plain_headers["ETag"]}
        for asked, coding, decode in [
            ("gzip", "gzip", gzip.decompress),
            ("br", "br", brotli.decompress),
            ("gzip, deflate, br", "br", brotli.decompress),  # what browsers send: the best
            ("br;q=0, gzip;q=0.5", "gzip", gzip.decompress),
            ("*", "br", brotli.decompress),
        ]:
            status, headers, body = await fetch(raw, url, asked)
            assert status == 200 and headers["Content-Encoding"] == coding, asked
            assert headers["Vary"] == "Accept-Encoding"
            assert decode(body) == plain and len(body) < len(plain)
            tags.add(headers["ETag"])
            # The ETag is this coding's: it gets a 304, another coding's does not.
            again = {"Accept-Encoding": asked, "If-None-Match": headers["ETag"]}
            async with raw.get(url, headers=again) as unchanged:
                assert unchanged.status == 304 and unchanged.headers["Vary"] == "Accept-Encoding"
                assert "Content-Encoding" not in unchanged.headers
        assert len(tags) == 3  # identity, gzip, brotli
        for refused in ["br;q=0, gzip;q=0", "compress", ""]:
            _, headers, body = await fetch(raw, url, refused)
            assert "Content-Encoding" not in headers and body == plain, refused


async def test_a_hit_costs_no_compression(site: tuple[PluginContext, Week]) -> None:
    ctx, _ = site
    async with client_for(ctx) as client, ClientSession(auto_decompress=False) as raw:
        url = str(client.make_url("/"))
        first = await fetch(raw, url, "br")
        entry = next(iter(client.app[STATE].cache._pinned.values()))
        made = entry.encoded["br"]
        second = await fetch(raw, url, "br")
        assert first[2] == second[2] and entry.encoded["br"] is made


async def test_a_conditional_request_is_answered_before_any_rendering(
    site: tuple[PluginContext, Week],
) -> None:
    """A CDN revalidating a page the server no longer holds (only its validators) gets its
    304 without the store being read or anything rendered."""
    ctx, week = site
    async with client_for(ctx) as client:
        state = client.app[STATE]
        state.cache.size = 1  # room for one update page's body at a time
        first = await client.get(f"/updates/{week.began.id}", headers={"Accept-Encoding": "br"})
        etag = first.headers["ETag"]
        await client.get(f"/updates/{week.friday.id}")  # pushes the first one's body out
        assert ("update", "en", week.began.id) not in state.cache._entries
        with recording(ctx.store) as statements:
            asked = {"Accept-Encoding": "br", "If-None-Match": etag}
            again = await client.get(f"/updates/{week.began.id}", headers=asked)
        assert again.status == 304 and again.headers["ETag"] == etag
        # Nothing rendered: no read of an update (the public version's one-row check aside,
        # which a running bot's watcher answers from memory).
        assert [sql for sql, _ in statements if "public_version" not in sql] == []
        # Not the current copy: rendered and sent in full, as before.
        stale = await client.get(f"/updates/{week.began.id}", headers={"If-None-Match": '"x"'})
        assert stale.status == 200
