"""Malformed input is refused with 400/401/404/413/422 and a JSON sentence saying what to do,
before any work is done: never a 500. Each case here once was a 500 (see tests/test_fuzz_http.py
for the same surfaces under generated input)."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from bot.clock import FixedClock
from bot.store import Store
from tests.fakes.slack import SIGNING_SECRET, sign
from tests.http_fuzz_support import AUTH, Served, served, signed


@pytest.fixture
async def web(store: Store, clock: FixedClock) -> AsyncIterator[Served]:
    async with served(store, clock) as running:
        yield running


async def refused(
    web: Served,
    method: str,
    path: str,
    expected: int,
    *,
    data: bytes | str | None = None,
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    response = await web.client.request(method, path, data=data, headers=headers)
    text = await response.text()
    assert response.status == expected, text
    assert response.content_type == "application/json", text
    error: dict[str, Any] = json.loads(text)["error"]
    assert error["code"] and len(error["message"]) > 20  # a sentence, not a bare status
    return error


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/api/v1/updates/%C2%B2", 404),  # "²".isdigit() is true; int("²") is not
        ("/api/v1/updates/%D9%A3", 404),  # an Arabic-Indic three
        ("/api/v1/updates?limit=%C2%B2", 400),
        ("/api/v1/updates?after=%C2%B2", 400),
        ("/api/v1/updates?after=%F0%9D%9F%97", 400),  # MATHEMATICAL DOUBLE-STRUCK NINE
        ("/api/v1/demands/%00", 400),
        ("/api/v1/updates?lang=e%00n", 400),
    ],
)
async def test_public_api_refuses_odd_numbers_and_nul(
    web: Served, path: str, expected: int
) -> None:
    await refused(web, "GET", path, expected)


async def test_the_archive_page_refuses_a_superscript_page_number(web: Served) -> None:
    response = await web.client.get("/updates?after=%C2%B2")
    assert response.status == 404


@pytest.mark.parametrize(
    ("method", "path", "body", "expected"),
    [
        ("PATCH", "/api/v1/admin/updates/%C2%B2", '{"reason": "x", "urgency": "urgent"}', 404),
        ("POST", "/api/v1/admin/updates/%C2%B2/retract", '{"reason": "x"}', 404),
        ("POST", "/api/v1/admin/updates/%C2%B3/approve", "", 404),
        ("PUT", "/api/v1/admin/demands/%00", '{"status": "open", "source": "x"}', 400),
        ("PUT", "/api/v1/admin/demands/pay", '{"status": "open", "source": "a\\u0000b"}', 422),
        ("POST", "/api/v1/admin/updates/1/retract", '{"reason": "wrong\\u0000"}', 422),
        ("POST", "/api/v1/admin/updates/1/retract", '{"reason": "\\ud800"}', 422),
        ("POST", "/api/v1/admin/updates/1/retract", '{"re\\u0000ason": "x"}', 422),
        ("POST", "/api/v1/admin/updates/1/retract", "[" * 100_000 + "]" * 100_000, 400),
        ("POST", "/api/v1/admin/updates/1/retract", '{"a": ' * 30_000 + "1" + "}" * 30_000, 400),
        ("POST", "/api/v1/admin/updates", "x" * (256 * 1024 + 1), 413),
    ],
)
async def test_admin_api_refuses_malformed_input_before_the_store(
    web: Served, method: str, path: str, body: str, expected: int
) -> None:
    async with web.ctx.store.read() as tx:
        before = len(await tx.list_audit(limit=10_000))
    await refused(web, method, path, expected, data=body.encode(), headers=AUTH)
    async with web.ctx.store.read() as tx:
        assert len(await tx.list_audit(limit=10_000)) == before  # nothing was done


async def test_nul_in_an_admin_path_is_refused_even_without_the_token(web: Served) -> None:
    await refused(web, "PUT", "/api/v1/admin/demands/%00", 400, data=b"{}")


@pytest.mark.parametrize("timestamp", ["abc", "1e9", "", "-5", "١٢٣", "9" * 40])
async def test_unsigned_slack_events_with_a_bad_timestamp_get_401(
    web: Served, timestamp: str
) -> None:
    headers = {
        "X-Slack-Request-Timestamp": timestamp,
        "X-Slack-Signature": "v0=" + "0" * 64,
        "Content-Type": "application/x-www-form-urlencoded",
    }
    await refused(web, "POST", "/slack/events", 401, data=b"command=%2Fstrike", headers=headers)


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        ("{not json", "application/json"),
        ("[]", "application/json"),
        ("null", "application/json"),
        ("payload=%7Bnot+json", "application/x-www-form-urlencoded"),
        ("payload=%5B%5D", "application/x-www-form-urlencoded"),
        ("payload=null", "application/x-www-form-urlencoded"),
        ("payload=" + "%5B" * 50_000, "application/x-www-form-urlencoded"),
        ("{" + '"a":{' * 30_000 + "}" * 30_001, "application/json"),
    ],
)
async def test_malformed_slack_events_are_refused_signed_or_not(
    web: Served, body: str, content_type: str
) -> None:
    """Unsigned: 401 before anything is parsed. Signed by Slack's secret but unreadable: 400."""
    stale = {**sign(SIGNING_SECRET, body, int(time.time()) - 3600), "Content-Type": content_type}
    await refused(web, "POST", "/slack/events", 401, data=body.encode(), headers=stale)
    unsigned = {"Content-Type": content_type}
    await refused(web, "POST", "/slack/events", 401, data=body.encode(), headers=unsigned)
    headers = signed(body, content_type)
    await refused(web, "POST", "/slack/events", 400, data=body.encode(), headers=headers)
    assert web.slack.calls_to("users.info") == []  # nothing ran


async def test_a_body_that_is_not_utf8_is_not_a_slack_request(web: Served) -> None:
    body = b"command=%2Fstrike&text=\xff\xfe"
    headers = signed(body, "application/x-www-form-urlencoded")
    await refused(web, "POST", "/slack/events", 401, data=body, headers=headers)


async def test_a_signed_interaction_discord_py_cannot_read_gets_a_400(web: Served) -> None:
    """Signed by the application's key, yet not readable (no `version`, a channel id that is
    not a number): it was answered with a deferral that nothing would ever follow up."""
    from tests.test_fuzz_http import ODD_COMMAND

    response = await web.client.post(
        "/discord/interactions", data=ODD_COMMAND, headers=web.discord_sign(ODD_COMMAND)
    )
    assert response.status == 400
    assert "not an interaction discord.py can read" in (await response.json())["error"]
