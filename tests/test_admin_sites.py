"""Sites and groups managed from the admin HTTP API, on SQLite and PostgreSQL: list, add,
rename, move, remove, with the checks of `strikebot sites import` (one core use case), each
change audited and shown on the public pages at once; a site someone follows, or a group
that still has sites, is not removed."""

from __future__ import annotations

from typing import Any

from bot.clock import FixedClock
from bot.editorial.admin import Admin
from bot.models import Audience, Subscription
from bot.store import Store
from tests.support import ADMIN
from tests.web_support import TOKEN, client_for, web_context

AUTH = {"Authorization": f"Bearer {TOKEN}"}
BASE = "/api/v1/admin/sites"


async def error_of(answer: Any) -> str:
    return str((await answer.json())["error"]["message"])


async def test_admin_api_adds_renames_moves_and_removes_sites(
    store: Store, admin: Admin, clock: FixedClock
) -> None:
    ctx = web_context(store, clock)
    async with client_for(ctx) as client:
        assert (await client.get(BASE)).status == 401  # no token
        assert (await (await client.get(BASE, headers=AUTH)).json()) == {"items": []}
        east = {"kind": "group", "code": "East", "names": {"en": "Local District East"}}
        west = {"kind": "group", "code": "west", "names": {"en": "West", "es": "Oeste"}}
        for body in (east, west):
            assert (await client.post(BASE, json=body, headers=AUTH)).status == 201
        site = {
            "code": "roosevelt",
            "group": "east",
            "names": {"en": "Roosevelt High", "es": "Preparatoria Roosevelt"},
            "address": "456 S Mathews St",
        }
        added = await client.post(BASE, json=site, headers=AUTH)
        assert added.status == 201, await added.text()
        assert added.headers["Location"] == f"{BASE}/roosevelt"
        assert (await added.json())["group"] == "east"

        # The import's checks, said in a sentence.
        again = await client.post(BASE, json=site, headers=AUTH)
        assert again.status == 409 and "already a site's code" in await error_of(again)
        clash = {"kind": "group", "code": "roosevelt", "names": {"en": "X"}}
        assert (await client.post(BASE, json=clash, headers=AUTH)).status == 409
        nowhere = {**site, "code": "venice", "group": "north"}
        refused = await client.post(BASE, json=nowhere, headers=AUTH)
        assert refused.status == 422 and "group 'north'" in await error_of(refused)
        no_group = {"code": "venice", "names": {"en": "Venice"}}
        assert (await client.post(BASE, json=no_group, headers=AUTH)).status == 422
        no_main = {"code": "venice", "group": "west", "names": {"es": "Venice"}}
        assert (await client.post(BASE, json=no_main, headers=AUTH)).status == 422
        other_language = {"code": "venice", "group": "west", "names": {"en": "V", "fr": "V"}}
        foreign = await client.post(BASE, json=other_language, headers=AUTH)
        assert foreign.status == 422 and "not a campaign language" in await error_of(foreign)
        bad_code = {"code": "a b", "group": "west", "names": {"en": "V"}}
        assert (await client.post(BASE, json=bad_code, headers=AUTH)).status == 422

        # Rename (the languages given) and move.
        renamed = await client.patch(
            f"{BASE}/Roosevelt", json={"names": {"en": "Roosevelt High School"}}, headers=AUTH
        )
        assert renamed.status == 200
        assert (await renamed.json())["names"] == {
            "en": "Roosevelt High School",
            "es": "Preparatoria Roosevelt",
        }
        moved = await client.patch(f"{BASE}/roosevelt", json={"group": "west"}, headers=AUTH)
        assert (await moved.json())["group"] == "west"
        lost = await client.patch(f"{BASE}/roosevelt", json={"group": "north"}, headers=AUTH)
        assert lost.status == 422
        assert (
            await client.patch(f"{BASE}/lincoln", json={"group": "west"}, headers=AUTH)
        ).status == 404
        assert (await client.patch(f"{BASE}/roosevelt", json={}, headers=AUTH)).status == 422
        group_move = await client.patch(f"{BASE}/east", json={"group": "west"}, headers=AUTH)
        assert group_move.status == 422
        page = await (await client.get("/sites/west")).text()
        assert "Roosevelt High School" in page  # the public pages show it at once

        # Removing: not a group with sites, not a site someone follows.
        full = await client.delete(f"{BASE}/west", headers=AUTH)
        assert full.status == 409 and "still has 1 site" in await error_of(full)
        follower = await admin.subscribe(
            ADMIN,
            Subscription(0, "console", "local", "c1", "en", follows=Audience.of(["roosevelt"])),
        )
        listed = await (await client.get(BASE, headers=AUTH)).json()
        assert [(p["kind"], p["code"], p["followers"]) for p in listed["items"]] == [
            ("group", "east", 0),
            ("group", "west", 0),
            ("site", "roosevelt", 1),
        ]
        followed = await client.delete(f"{BASE}/roosevelt", headers=AUTH)
        assert followed.status == 409 and "1 channel(s) or people follow" in await error_of(
            followed
        )
        await admin.subscribe(ADMIN, Subscription(0, "console", "local", "c1", "en",
                                                  follows=Audience()))  # fmt: skip
        assert follower.id
        gone = await client.delete(f"{BASE}/roosevelt", headers=AUTH)
        assert gone.status == 200 and (await gone.json())["code"] == "roosevelt"
        assert (await client.delete(f"{BASE}/west", headers=AUTH)).status == 200
        assert (await client.delete(f"{BASE}/west", headers=AUTH)).status == 404
        assert (await client.get("/sites/roosevelt")).status == 404
        left = await (await client.get(BASE, headers=AUTH)).json()
        assert [p["code"] for p in left["items"]] == ["east"]

    async with store.read() as tx:
        logged = [e.action for e in await tx.list_audit(limit=500) if e.action.startswith("sites.")]
    assert logged.count("sites.add") == 3
    assert logged.count("sites.change") == 2
    assert logged.count("sites.remove") == 2
