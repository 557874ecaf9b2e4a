"""The web desk posts for some sites too: its form's "Who it is for" goes to the desk like
every surface's; the post reaches the site's followers only. Driven over HTTP as a browser
without JavaScript would (the desk works without it), on SQLite."""

from __future__ import annotations

import re
from typing import Any

import aiohttp

from bot.audiences import Sites, read_sites_csv
from bot.clock import FixedClock
from bot.models import EVERYONE, Audience, DeliveryAction, Subscription
from bot.plugins.admins import CLI_ACTOR
from bot.store import Store
from tests.desk_support import LEAD, desk_rig, sign_in_link
from tests.support import ADMIN, ADMINS, ROOT

CSRF = re.compile(r'name="csrf" value="([^"]+)"')
TOKEN = re.compile(r'name="token" value="([^"]+)"')


class Browser:
    """Pages fetched with the cookies they set, as a browser keeps them."""

    def __init__(self, session: aiohttp.ClientSession) -> None:
        self.session = session
        self.cookies: dict[str, str] = {}

    async def get(self, path: str) -> str:
        async with self.session.get(path, cookies=self.cookies) as answer:
            return await self._read(answer)

    async def post(self, path: str, data: dict[str, str], *, status: int | None = None) -> str:
        async with self.session.post(path, data=data, cookies=self.cookies) as answer:
            return await self._read(answer, status)

    async def _read(self, answer: aiohttp.ClientResponse, status: int | None = None) -> str:
        for past in (*answer.history, answer):
            self.cookies.update({name: m.value for name, m in past.cookies.items()})
        if status is None:
            assert answer.status < 400, (answer.status, (await answer.text())[:300])
        else:
            assert answer.status == status
        return await answer.text()


def _csrf(html: str) -> str:
    found = CSRF.search(html)
    assert found is not None, html[:500]
    return found.group(1)


async def test_a_desk_post_for_a_site_reaches_its_followers_only(
    sqlite_store: Store, clock: FixedClock
) -> None:
    text = (ROOT / "config" / "lausd-sites.csv").read_text(encoding="utf-8")
    await Sites(sqlite_store, ADMINS, clock).import_file(
        ADMIN, read_sites_csv(text, ("en", "es"), "en")
    )
    async with desk_rig(sqlite_store, clock, require_approval=False) as rig:
        ids = {}
        for channel, follows in (
            ("everything", EVERYONE),
            ("roosevelt", Audience.of(["roosevelt"])),
            ("venice", Audience.of(["venice"])),
        ):
            sub = Subscription(0, "discord", "G1", channel, "en", follows=follows)
            ids[(await rig.admin.subscribe(CLI_ACTOR, sub)).id] = channel
        origin = {"Origin": rig.url}  # what a browser sends with a form
        async with aiohttp.ClientSession(
            rig.url, cookie_jar=aiohttp.DummyCookieJar(), headers=origin
        ) as session:
            web = Browser(session)  # the desk's cookies are Secure: kept by hand over http
            asked = await web.get("/desk")
            await web.post("/desk/sign-in?lang=en", {"csrf": _csrf(asked), "email": LEAD})
            await rig.drain()
            link = sign_in_link(rig.mails_to(LEAD)[-1]).removeprefix(rig.url)
            enter = await web.get(link)
            await web.post(f"{link}?lang=en", {"csrf": _csrf(enter)})
            form = await web.get("/desk/new")
            assert 'name="audience"' in form and "Who it is for" in form
            fields = {
                "csrf": _csrf(form),
                "status": "strike_on",
                "urgency": "routine",
                "texts.en.headline": "Roosevelt: breakfast at the north gate",
                "audience": "nowhere",
            }
            wrong = await web.post("/desk/preview", fields, status=422)
            assert "There is no site &#39;nowhere&#39;" in wrong
            assert 'id="audience" name="audience" type="text" value="nowhere"' in wrong
            fields["audience"] = "Roosevelt"
            shown = await web.post("/desk/preview", fields)
            assert "For Roosevelt High School only" in shown
            token = TOKEN.search(shown)
            assert token is not None
            await web.post("/desk/confirm", {"csrf": _csrf(shown), "token": token.group(1)})
    async with sqlite_store.read() as tx:
        rows = await tx.list_deliveries(limit=None)
    reached = {ids[d.subscription_id] for d in rows if d.action is DeliveryAction.POST}
    assert reached == {"everything", "roosevelt"}


async def signed_in(rig: Any, session: aiohttp.ClientSession) -> Browser:
    web = Browser(session)  # the desk's cookies are Secure: kept by hand over http
    asked = await web.get("/desk")
    await web.post("/desk/sign-in?lang=en", {"csrf": _csrf(asked), "email": LEAD})
    await rig.drain()
    link = sign_in_link(rig.mails_to(LEAD)[-1]).removeprefix(rig.url)
    enter = await web.get(link)
    await web.post(f"{link}?lang=en", {"csrf": _csrf(enter)})
    return web


async def test_the_desk_manages_sites_and_shows_the_audience_field_only_with_sites(
    sqlite_store: Store, clock: FixedClock
) -> None:
    async with (
        desk_rig(sqlite_store, clock, require_approval=False) as rig,
        aiohttp.ClientSession(
            rig.url, cookie_jar=aiohttp.DummyCookieJar(), headers={"Origin": rig.url}
        ) as session,
    ):
        web = await signed_in(rig, session)
        form = await web.get("/desk/new")
        assert 'name="audience"' not in form  # no sites: everyone, nothing to ask
        empty = await web.get("/desk/sites")
        assert "No sites yet." in empty and 'href="/desk/sites"' in empty
        added = await web.post(
            "/desk/sites/add",
            {"csrf": _csrf(empty), "kind": "group", "code": "east",
             "names.en": "Local District East", "names.es": "Distrito Local Este"},
        )  # fmt: skip
        assert "Local District East was added." in added
        for code, name in (("roosevelt", "Roosevelt High"), ("garfield", "Garfield High")):
            added = await web.post(
                "/desk/sites/add",
                {"csrf": _csrf(added), "kind": "site", "code": code, "names.en": name,
                 "group": "east", "address": ""},
            )  # fmt: skip
        assert "Garfield High was added." in added
        taken = await web.post(
            "/desk/sites/add",
            {"csrf": _csrf(added), "kind": "site", "code": "east", "names.en": "X",
             "group": "east"},
            status=409,
        )  # fmt: skip
        assert "already a group&#39;s code" in taken
        nameless = await web.post(
            "/desk/sites/add",
            {"csrf": _csrf(added), "kind": "site", "code": "venice", "group": "east"},
            status=422,
        )  # fmt: skip
        assert "give the name in &#39;en&#39;" in nameless
        await web.post(
            "/desk/sites/add",
            {"csrf": _csrf(added), "kind": "group", "code": "west", "names.en": "West"},
        )  # fmt: skip
        page = await web.get("/desk/sites")
        renamed = await web.post(
            "/desk/sites/roosevelt/change",
            {"csrf": _csrf(page), "names.en": "Roosevelt High School", "names.es": "",
             "group": "west", "address": "456 S Mathews St"},
        )  # fmt: skip
        assert "Roosevelt High School was changed." in renamed
        form = await web.get("/desk/new")
        assert 'name="audience"' in form and "Who it is for" in form
        kept = await web.post("/desk/sites/east/remove", {"csrf": _csrf(renamed)}, status=409)
        assert "still has 1 site(s) (garfield)" in kept
        removed = await web.post("/desk/sites/garfield/remove", {"csrf": _csrf(kept)})
        assert "Garfield High was removed." in removed
    async with sqlite_store.read() as tx:
        roosevelt = await tx.get_site("roosevelt")
        assert roosevelt is not None and roosevelt.group == "west"
        assert roosevelt.names == {"en": "Roosevelt High School"}
        assert roosevelt.address == "456 S Mathews St"
        assert await tx.get_site("garfield") is None
        actors = {e.actor for e in await tx.list_audit(limit=100) if e.action.startswith("sites.")}
    assert actors == {f"web:{LEAD}"}
