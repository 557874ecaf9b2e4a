"""The OpenAPI document is valid, covers every API route, and the running API keeps to it.

schemathesis generates requests from the document (valid ones, then invalid ones) and checks
each answer against it: status codes, content types, response schemas, no server errors.
The server is the real app on 127.0.0.1; schemathesis runs in a thread beside it.
"""

from __future__ import annotations

import asyncio
import itertools
import re
from typing import Any, cast

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from openapi_spec_validator import validate
from schemathesis import GenerationMode

from adapters.web import build_app
from bot.audiences import read_sites_csv
from bot.clock import FixedClock
from bot.runtime.context import PluginContext
from bot.store import Store
from tests.strike_week import Week, strike_week
from tests.support import ADMIN, ROOT
from tests.web_support import TOKEN, client_for, web_context

AUTH = {"Authorization": f"Bearer {TOKEN}"}
EXAMPLES = 12  # per operation and mode: enough to walk each schema, bounded in time


@pytest.fixture
async def runtime(store: Store, clock: FixedClock) -> PluginContext:
    # Behind a trusted proxy each generated request is its own client (X-Forwarded-For):
    # the negative cases' wrong tokens would otherwise make this one client wait (429).
    return web_context(store, clock, trusted_proxies="127.0.0.1/32")


@pytest.fixture
async def timeline(runtime: PluginContext, clock: FixedClock) -> Week:
    return await strike_week(runtime.store, clock, runtime.admin)


async def test_document_is_valid_openapi_and_covers_every_route(
    sqlite_store: Store, clock: FixedClock
) -> None:
    runtime = web_context(sqlite_store, clock)
    async with client_for(runtime) as client:
        response = await client.get("/api/v1/openapi.json")
        assert response.status == 200
        document = await response.json()
    validate(document)  # raises with the offending path when invalid
    assert document["openapi"] == "3.1.0"
    documented = {
        (method.upper(), path) for path, item in document["paths"].items() for method in item
    }
    served = {
        (route.method, route.resource.canonical)
        for route in build_app(runtime).router.routes()
        if route.resource is not None
        and route.resource.canonical.startswith(("/api/v1/", "/healthz", "/livez", "/readyz"))
        and route.method != "HEAD"
        and route.resource.canonical != "/api/v1/openapi.json"
    }
    assert served == documented
    # The campaign's languages are written into the schemas.
    texts = document["components"]["schemas"]["PostUpdateIn"]["properties"]["texts"]
    assert sorted(texts["properties"]) == ["en", "es"] and texts["required"] == ["en"]


# Rules no JSON Schema can state, stated in the field descriptions instead: an embargo must
# lie in the future, an offer's date not; a webhook's host must resolve to a public address;
# a demand re-worded in a language it has no wording in yet needs a title there; a language
# key the campaign lacks; a site's group must be stored (and a group has none). Schema-valid
# requests that break them get 422, the documented answer, so that status is accepted for
# these operations.
RULES_BEYOND_SCHEMA = (
    "postUpdate", "editUpdate", "addWebhook", "recordDemand", "editDemand", "addPlace",
    "changePlace",
)  # fmt: skip
CONFIG = {
    "operations": [
        {
            "include-operation-id": operation,
            "checks": {
                "positive_data_acceptance": {
                    "expected-statuses": ["2xx", "401", "403", "404", "409", "422"]
                }
            },
        }
        for operation in RULES_BEYOND_SCHEMA
    ]
}
# Without the token every admin operation answers 401, which is what it documents.
NO_TOKEN_CONFIG = {
    "checks": {"positive_data_acceptance": {"expected-statuses": ["2xx", "304", "401", "404"]}}
}


def all_checks() -> list[Any]:
    """Every check schemathesis has (none left out)."""
    from schemathesis.checks import CHECKS, load_all_checks

    load_all_checks()
    return list(CHECKS.get_all())


def exercise(
    document: dict[str, Any],
    base_url: str,
    known: dict[str, list[Any]],
    *,
    headers: dict[str, str],
    config: dict[str, Any],
    examples: int = EXAMPLES,
    negative: bool = True,
) -> tuple[list[str], int]:
    """Run every operation through schemathesis with every check; return the failures
    (empty when all pass) and how many cases were sent.

    Besides fully generated paths (mostly unknown ids: 404), valid requests are also aimed
    at ids and keys that exist (`known`), so edits, retractions and demand changes happen.
    """
    schema = schemathesis.openapi.from_dict(document, config=schemathesis.Config.from_dict(config))
    failures: list[str] = []
    checks = all_checks()
    sent = 0
    clients = itertools.count()
    operations = [cast(Any, result).ok() for result in schema.get_all_operations()]
    assert len(operations) == 28
    for operation in operations:
        names = re.findall(r"{(\w+)}", operation.path)
        spec = document["paths"][operation.path][operation.method.lower()]
        modes = [GenerationMode.POSITIVE]
        if negative and (spec.get("parameters") or spec.get("requestBody")):
            modes.append(GenerationMode.NEGATIVE)  # something that can be sent wrong
        for mode in modes:
            strategies = [operation.as_strategy(generation_mode=mode)]
            if names and mode is GenerationMode.POSITIVE:
                strategies += [
                    operation.as_strategy(
                        generation_mode=mode, path_parameters={n: value for n in names}
                    )
                    for value in {v for n in names for v in known[n]}
                ]

            @settings(
                max_examples=examples,
                deadline=None,
                database=None,
                derandomize=True,
                phases=[Phase.explicit, Phase.generate],
                suppress_health_check=list(HealthCheck),
            )
            @given(case=st.one_of(strategies))
            def check(case: Any) -> None:
                nonlocal sent
                sent += 1
                client = {"X-Forwarded-For": f"198.51.100.{next(clients) % 250 + 1}"}
                case.call_and_validate(
                    base_url=base_url, headers={**headers, **client}, checks=checks, timeout=10
                )

            try:
                check()
            except (AssertionError, BaseExceptionGroup) as exc:
                failures.append(f"{operation.label} ({mode.value}): {exc}")
    return failures, sent


async def test_api_keeps_to_its_document(runtime: PluginContext, timeline: Week) -> None:
    """Issue 29: schemathesis found the admin API accepting what its schema forbids. Every
    check, with the token (valid and invalid requests) and without it."""
    async with client_for(runtime) as client:
        document = await (await client.get("/api/v1/openapi.json")).json()
        base_url = str(client.make_url("")).rstrip("/")
        known: dict[str, list[Any]] = {
            "id": [timeline.began.id, timeline.friday.id, timeline.retracted.id],
            "key": ["pay", "nurses"],
            "code": ["roosevelt", "east"],
        }
        text = (ROOT / "config" / "lausd-sites.csv").read_text(encoding="utf-8")
        found = read_sites_csv(text, runtime.campaign.languages, runtime.campaign.default_language)
        await runtime.sites.import_file(ADMIN, found)
        failures, sent = await asyncio.to_thread(
            exercise, document, base_url, known, headers=AUTH, config=CONFIG
        )
        anonymous, sent_anonymous = await asyncio.to_thread(
            exercise, document, base_url, known, headers={}, config=NO_TOKEN_CONFIG,
            examples=4, negative=False,
        )  # fmt: skip
        status = await client.get("/api/v1/status")
        assert status.status == 200
    print(f"schemathesis: {sent} cases with the token, {sent_anonymous} without")
    assert failures + anonymous == [], "\n\n".join(failures + anonymous)
    assert 300 <= sent + sent_anonymous <= 1500, (sent, sent_anonymous)  # bounded, and real
    # The generated writes went through the real use cases, with the token, into the audit log.
    async with runtime.store.read() as tx:
        audit = await tx.list_audit(limit=10_000)
    by_api = {a.action for a in audit if a.actor.startswith("http:admin-api")}
    assert {"update.post", "update.edit", "demand.record"} <= by_api


async def test_document_describes_every_webhook_event_and_real_events_match_it(
    sqlite_store: Store, clock: FixedClock
) -> None:
    from jsonschema import Draft202012Validator, ValidationError

    from bot.delivery.events import CATALOGUE, EventType, ping_event, update_event
    from tests.support import CAMPAIGN

    runtime = web_context(sqlite_store, clock)
    async with client_for(runtime) as client:
        document = await (await client.get("/api/v1/openapi.json")).json()
    assert sorted(document["webhooks"]) == sorted(kind for kind, _, _ in CATALOGUE)
    published = document["webhooks"]["update.published"]["post"]
    headers = {p["name"] for p in published["parameters"]}
    assert headers == {"webhook-id", "webhook-timestamp", "webhook-signature"}
    timeline = await strike_week(runtime.store, clock, runtime.admin)

    def check(event: dict[str, Any]) -> None:
        ref = document["webhooks"][event["type"]]["post"]["requestBody"]["content"][
            "application/json"
        ]["schema"]
        schema = {**ref, "components": document["components"]}
        Draft202012Validator(schema).validate(event)

    check(update_event(EventType.UPDATE_PUBLISHED, timeline.began, CAMPAIGN, clock()))
    check(
        update_event(
            EventType.UPDATE_RETRACTED, timeline.retracted, CAMPAIGN, clock(), reason="Wrong"
        )
    )
    check(ping_event(CAMPAIGN, clock(), "hello"))
    with pytest.raises(ValidationError):  # the schema is strict: a stray field is refused
        check({**ping_event(CAMPAIGN, clock(), "x"), "surprise": 1})
