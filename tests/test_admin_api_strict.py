"""The admin API in strict mode (issue 29): it takes only what its schema allows, and every
refusal names the rule broken.

schemathesis (7,188 cases) found Unix timestamps and numeric strings taken as date-times
(`"next_step_at": 0` published a 1970 event to the calendar), `0` and `"no"` taken as
booleans, null taken where only a string is allowed, and `{"url": "http://"}` told it "must
start with https://", which is not the rule. Each is asked here of the real app.
"""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

from bot.clock import FixedClock
from bot.store import Store
from tests.strike_week import strike_week
from tests.web_support import TOKEN, client_for, web_context

AUTH = {"Authorization": f"Bearer {TOKEN}"}
POSTS = "/api/v1/admin/updates"
HEADLINE = {"en": {"headline": "Picket lines at dawn"}}
NOT_DATE_TIMES = [
    0,
    1548165600,
    "0",
    "1548165600",
    "2019-01-22 06:00:00-08:00",  # a space, not a T
    "2019-01-22T06:00:00",  # no offset
    "2019-01-22T06:00-08:00",  # no seconds
    "1969-12-31T23:00:00Z",  # before 1970
    "2019-02-31T06:00:00Z",  # no such day
    True,
]


async def _post(client: Any, path: str, body: object, method: str = "POST") -> tuple[int, Any]:
    response = await client.request(method, path, json=body, headers=AUTH)
    return response.status, await response.json()


@pytest.mark.parametrize("value", NOT_DATE_TIMES, ids=repr)
async def test_a_date_time_is_only_an_rfc_3339_string_with_its_offset(
    sqlite_store: Store, clock: FixedClock, value: object
) -> None:
    async with client_for(web_context(sqlite_store, clock)) as client:
        status, body = await _post(
            client, POSTS, {"status": "strike_on", "texts": HEADLINE, "next_step_at": value}
        )
        async with sqlite_store.read() as tx:
            assert await tx.count_updates() == 0  # nothing published, no 1970 on the calendar
    assert status == 422, body
    message = body["error"]["message"]
    assert message.startswith("next_step_at: "), message
    assert "RFC 3339" in message or "not a day of the calendar" in message
    assert "Input should" not in message and "datetime" not in message


async def test_a_good_date_time_is_taken(sqlite_store: Store, clock: FixedClock) -> None:
    async with client_for(web_context(sqlite_store, clock)) as client:
        status, body = await _post(
            client,
            POSTS,
            {"status": "strike_on", "texts": HEADLINE, "next_step_at": "2019-01-22T06:00:00-08:00"},
        )
    assert status == 201, body
    assert body["next_step_at"].startswith("2019-01-22T14:00:00")


@pytest.mark.parametrize("value", [0, 1, "no", "false", "true", None], ids=repr)
async def test_a_boolean_is_only_a_json_boolean(
    sqlite_store: Store, clock: FixedClock, value: object
) -> None:
    async with client_for(web_context(sqlite_store, clock)) as client:
        week = await strike_week(sqlite_store, clock)
        status, body = await _post(
            client,
            f"{POSTS}/{week.friday.id}",
            {"reason": "typo", "correction": value, "status": "strike_on"},
            method="PATCH",
        )
    assert status == 422, body
    assert body["error"]["message"].startswith("correction: must be true or false")


@pytest.mark.parametrize(
    ("path", "method", "body", "field"),
    [
        ("{update}", "PATCH", {"reason": "r", "texts": {"en": {"headline": None}}},
         "texts.en.headline"),
        ("{update}", "PATCH", {"reason": "r", "status": None}, "status"),
        ("{update}", "PATCH", {"reason": "r", "texts": None}, "texts"),
        ("/api/v1/admin/demands/pay", "PUT", {"source": "s", "status": "open", "at": None}, "at"),
        ("/api/v1/admin/demands/pay", "PATCH", {"reason": "r", "texts": {"en": {"title": None}}},
         "texts.en.title"),
        (POSTS, "POST", {"status": "strike_on", "texts": HEADLINE, "publish_at": None},
         "publish_at"),
    ],
)  # fmt: skip
async def test_null_only_where_the_schema_says_nullable(
    sqlite_store: Store, clock: FixedClock, path: str, method: str, body: object, field: str
) -> None:
    async with client_for(web_context(sqlite_store, clock)) as client:
        week = await strike_week(sqlite_store, clock)
        path = path.replace("{update}", f"{POSTS}/{week.friday.id}")
        status, answer = await _post(client, path, body, method=method)
        document = await (await client.get("/api/v1/openapi.json")).json()
    assert status == 422, answer
    assert answer["error"]["message"].startswith(f"{field}: may be left out, but not null")
    assert '"type": "null"' not in str(document["components"]["schemas"]["UpdateTextPatch"])


async def test_null_where_the_schema_says_so_removes_the_time(
    sqlite_store: Store, clock: FixedClock
) -> None:
    async with client_for(web_context(sqlite_store, clock)) as client:
        week = await strike_week(sqlite_store, clock)
        status, body = await _post(
            client, f"{POSTS}/{week.friday.id}", {"reason": "r", "next_step_at": None}, "PATCH"
        )
        document = await (await client.get("/api/v1/openapi.json")).json()
    assert status == 200, body
    assert body["next_step_at"] is None
    edit = document["components"]["schemas"]["EditUpdateIn"]["properties"]["next_step_at"]
    assert {"type": "null"} in edit["anyOf"]


@pytest.mark.parametrize("url", ["http://", "https://", "ftp://hooks.example.org/x", "hooks"])
async def test_a_bad_webhook_address_is_told_the_real_rule(
    sqlite_store: Store, clock: FixedClock, url: str
) -> None:
    async with client_for(web_context(sqlite_store, clock)) as client:
        status, body = await _post(client, "/api/v1/admin/webhooks", {"url": url})
    assert status == 422, body
    message = body["error"]["message"]
    assert "starts with https:// (or http://) and names a host" in message, message
    assert "String should match pattern" not in message


def test_the_core_tells_a_url_without_a_host_what_is_missing() -> None:
    from bot.channels.webhooks import check_url
    from bot.errors import InvalidInput

    with pytest.raises(InvalidInput) as no_host:
        check_url("http://")
    assert "names no host" in str(no_host.value)
    assert "must start with https://" not in str(no_host.value)
    with pytest.raises(InvalidInput) as scheme:
        check_url("ftp://hooks.example.org")
    assert "https:// or http://" in str(scheme.value)


async def test_the_rules_are_in_the_schema_and_the_refusal_names_them(
    sqlite_store: Store, clock: FixedClock
) -> None:
    async with client_for(web_context(sqlite_store, clock)) as client:
        document = await (await client.get("/api/v1/openapi.json")).json()
        past = {"status": "strike_on", "texts": HEADLINE, "publish_at": "2019-01-01T00:00:00Z"}
        status, body = await _post(client, POSTS, past)
        blank = {"status": "strike_on", "texts": {"en": {"headline": "   "}}}
        blank_status, blank_body = await _post(client, POSTS, blank)
    schemas = document["components"]["schemas"]
    post = schemas["PostUpdateIn"]["properties"]
    # The year range is a pattern: a schema validator refuses 1969 as the server does.
    validator = Draft202012Validator({**post["next_step_at"]})
    assert not validator.is_valid("1969-12-31T23:00:00Z")
    assert validator.is_valid("2019-01-22T06:00:00-08:00")
    assert "1970 to 2200" in post["next_step_at"]["description"]
    # A past embargo is a rule no schema can state: the description says it, and the 422.
    assert "in the future" in post["publish_at"]["description"]
    assert status == 422 and "is in the past" in body["error"]["message"]
    assert blank_status == 422
    assert blank_body["error"]["message"].startswith(
        "texts.en.headline: needs at least one character that shows"
    )
    # Everything a client may send is described, constrained or an enum.
    for name in ("PostUpdateIn", "EditUpdateIn", "DemandChangeIn", "WebhookIn"):
        for field, prop in schemas[name]["properties"].items():
            stated = set(prop) & {"description", "maxLength", "pattern", "enum", "$ref",
                                  "anyOf", "properties", "type"}  # fmt: skip
            assert stated, (name, field)


async def test_dry_run_is_a_documented_flag_and_nothing_else_passes_for_it(
    sqlite_store: Store, clock: FixedClock
) -> None:
    post = {"status": "strike_on", "texts": HEADLINE}
    async with client_for(web_context(sqlite_store, clock)) as client:
        document = await (await client.get("/api/v1/openapi.json")).json()
        odd, said = await _post(client, f"{POSTS}?dry_run=yes", post)
        preview, shown = await _post(client, f"{POSTS}?dry_run=true", post)
        async with sqlite_store.read() as tx:
            assert await tx.count_updates() == 0  # neither posted anything
    assert odd == 400 and "write dry_run=true" in said["error"]["message"]
    assert preview == 200 and shown["dry_run"] is True
    operation = document["paths"][POSTS]["post"]
    assert [p["name"] for p in operation["parameters"]] == ["dry_run"]
    assert "200" in operation["responses"] and "400" in operation["responses"]
