"""The OpenAPI 3.1 document for `/api/v1/...`, built from the route table and the pydantic
models the handlers read and answer with, specialised to the campaign's languages.

Each served route is looked up in `OPERATIONS` (and the webhook module's) by its method and
path: what it is called, its body model and its answers. Everything else follows from the
route itself: path parameters from its pattern, the admin API's security and its errors from
its prefix, the public reads' caching headers. A route served but not described is not in
the document (tests/test_openapi.py fails on it), so the two cannot drift apart.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from aiohttp import web
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from bot.ports import Campaign

from . import _webhooks
from ._app import ADMIN_PREFIX, JSON, state_of
from ._schemas import (
    DEMAND_KEY,
    LANGUAGES,
    SITE_CODE,
    AdminUpdateOut,
    ConfirmTranslationIn,
    ConfirmTranslationOut,
    DemandAddIn,
    DemandChangedOut,
    DemandChangeIn,
    DemandDetailOut,
    DemandEditIn,
    DemandListOut,
    DemandRetireIn,
    EditUpdateIn,
    ErrorOut,
    HealthOut,
    LiveOut,
    Operation,
    PlaceIn,
    PlaceListOut,
    PlaceOut,
    PlacePatchIn,
    PostUpdateIn,
    PreviewOut,
    ReadyOut,
    RetractIn,
    SiteListOut,
    StatusOut,
    UpdateDetailOut,
    UpdateListOut,
)

REF = "#/components/schemas/{model}"
MAX_ID = 2**31 - 1
UPDATES = "/api/v1/updates"
DEMANDS = "/api/v1/demands"
ADMIN_UPDATES = f"{ADMIN_PREFIX}/updates"
ADMIN_DEMANDS = f"{ADMIN_PREFIX}/demands"
NO_UPDATE = "no update with this id"
NO_DEMAND = "no demand with this key"
NO_PLACE = "no site or group with this code"
ADMIN_SITES = f"{ADMIN_PREFIX}/sites"

OPERATIONS: Mapping[tuple[str, str], Operation] = {
    ("GET", "/livez"): Operation(
        "live", "The process answers (restart it when this fails)", {200: (LiveOut, "alive")}
    ),
    ("GET", "/readyz"): Operation(
        "ready",
        "The store can be read and written (send people elsewhere if not)",
        {200: (ReadyOut, "ready"), 503: (ReadyOut, "not ready; `reasons` says why")},
    ),
    ("GET", "/healthz"): Operation(
        "health",
        "Whether the database answers and takes writes; each adapter's state",
        {
            200: (HealthOut, "healthy"),
            503: (HealthOut, "the database cannot be reached or written"),
        },
    ),
    ("GET", "/api/v1/status"): Operation(
        "getStatus",
        "The current status, day of the strike and next step",
        {200: (StatusOut, "the status")},
        query=("lang",),
    ),
    ("GET", UPDATES): Operation(
        "listUpdates",
        "Published updates, newest first (retracted ones included, marked)",
        {200: (UpdateListOut, "a page"), 404: (ErrorOut, "no site or group with this code")},
        query=("lang", "limit", "after", "site"),
    ),
    ("GET", f"{UPDATES}/{{id}}"): Operation(
        "getUpdate",
        "One published update with its revision history",
        {200: (UpdateDetailOut, "the update"), 404: (ErrorOut, "no published update with this id")},
        query=("lang",),
    ),
    ("GET", "/api/v1/sites"): Operation(
        "listSites",
        "The campaign's groups of sites and their sites, each with the code updates are "
        "filtered by (`/api/v1/updates?site=`)",
        {200: (SiteListOut, "the groups and their sites")},
        query=("lang",),
    ),
    ("GET", DEMANDS): Operation(
        "listDemands",
        "The union's demands: its ask, the employer's offer, status",
        {200: (DemandListOut, "the demands")},
        query=("lang",),
    ),
    ("GET", f"{DEMANDS}/{{key}}"): Operation(
        "getDemand",
        "One demand with its dated history of offers and status changes",
        {200: (DemandDetailOut, "the demand"), 404: (ErrorOut, NO_DEMAND)},
        query=("lang",),
    ),
    ("POST", ADMIN_UPDATES): Operation(
        "postUpdate",
        "Post an update now, or at `publish_at` (embargo); with `?dry_run=true`, only say what "
        "posting would do",
        {
            201: (AdminUpdateOut, "posted (or waiting for approval)"),
            200: (PreviewOut, "dry_run=true: what posting would do; nothing was written"),
        },
        body=PostUpdateIn,
        query=("dry_run",),
    ),
    ("PATCH", f"{ADMIN_UPDATES}/{{id}}"): Operation(
        "editUpdate",
        "Edit an update, keeping the earlier wording as a revision",
        {
            200: (AdminUpdateOut, "edited"),
            404: (ErrorOut, NO_UPDATE),
            409: (ErrorOut, "the update was retracted"),
        },
        body=EditUpdateIn,
    ),
    ("POST", f"{ADMIN_UPDATES}/{{id}}/retract"): Operation(
        "retractUpdate",
        "Retract an update: it stays visible, struck through, with the reason",
        {
            200: (AdminUpdateOut, "retracted"),
            404: (ErrorOut, NO_UPDATE),
            409: (ErrorOut, "already retracted"),
        },
        body=RetractIn,
    ),
    ("POST", f"{ADMIN_UPDATES}/{{id}}/approve"): Operation(
        "approveUpdate",
        "Approve an update waiting for a second admin",
        {
            200: (AdminUpdateOut, "approved and published"),
            404: (ErrorOut, NO_UPDATE),
            409: (ErrorOut, "the update is not waiting for approval"),
        },
    ),
    ("POST", ADMIN_DEMANDS): Operation(
        "addDemand",
        "Add a demand at the end of the list",
        {
            201: (DemandChangedOut, "added"),
            409: (ErrorOut, "a demand with this key exists (perhaps retired)"),
        },
        body=DemandAddIn,
    ),
    ("PUT", f"{ADMIN_DEMANDS}/{{key}}"): Operation(
        "recordDemand",
        "Record an employer offer and/or a new status, with its date and source (backdating "
        "allowed, never in the future)",
        {200: (DemandChangedOut, "recorded"), 404: (ErrorOut, NO_DEMAND)},
        body=DemandChangeIn,
    ),
    ("PATCH", f"{ADMIN_DEMANDS}/{{key}}"): Operation(
        "editDemand",
        "Re-word any field of a demand, per language, with a reason",
        {
            200: (DemandChangedOut, "edited"),
            404: (ErrorOut, NO_DEMAND),
            409: (ErrorOut, "the demand is retired"),
        },
        body=DemandEditIn,
    ),
    ("POST", f"{ADMIN_DEMANDS}/{{key}}/retire"): Operation(
        "retireDemand",
        "Take a demand off the list; it keeps its history",
        {
            200: (DemandChangedOut, "retired"),
            404: (ErrorOut, NO_DEMAND),
            409: (ErrorOut, "already retired"),
        },
        body=DemandRetireIn,
    ),
    ("GET", ADMIN_SITES): Operation(
        "listPlaces",
        "Every group and site as stored, with how many channels and people follow each",
        {200: (PlaceListOut, "the groups, then the sites")},
    ),
    ("POST", ADMIN_SITES): Operation(
        "addPlace",
        "Add a site (in a group) or a group, with the checks of `strikebot sites import`",
        {
            201: (PlaceOut, "added"),
            409: (ErrorOut, "the code is taken by a site or a group"),
        },
        body=PlaceIn,
    ),
    ("PATCH", f"{ADMIN_SITES}/{{code}}"): Operation(
        "changePlace",
        "Rename a site or a group, move a site to another group, or change its address",
        {200: (PlaceOut, "changed"), 404: (ErrorOut, NO_PLACE)},
        body=PlacePatchIn,
    ),
    ("DELETE", f"{ADMIN_SITES}/{{code}}"): Operation(
        "removePlace",
        "Remove a site or a group that nobody follows (a group once it has no sites); "
        "updates addressed to it keep their audience",
        {
            200: (PlaceOut, "removed"),
            404: (ErrorOut, NO_PLACE),
            409: (ErrorOut, "followed by someone, or a group that still has sites"),
        },
    ),
    ("POST", f"{ADMIN_PREFIX}/translations/confirm"): Operation(
        "confirmTranslation",
        "Say a stale translation still says what the edited language says",
        {200: (ConfirmTranslationOut, "confirmed (or was not stale)")},
        body=ConfirmTranslationIn,
    ),
}

# Path parameters, by the name in the route's pattern.
PATH_PARAMETERS: Mapping[str, dict[str, Any]] = {
    "id": {"type": "integer", "minimum": 1, "maximum": MAX_ID},
    "key": {"type": "string", "pattern": DEMAND_KEY},
    "code": {"type": "string", "pattern": SITE_CODE},
}
ADMIN_ERRORS = {
    400: "the body is not a JSON object",
    401: "no valid bearer token (send `Authorization: Bearer <token>`)",
    403: "the admin API is off: STRIKEBOT_ADMIN_TOKEN is not set, or not allowed",
    422: "the request breaks a rule; `message` names it (empty headline, past embargo, ...)",
    429: "too many wrong tokens from this address: wait for Retry-After seconds",
}
_CONDITIONAL = [
    {
        "name": "If-None-Match",
        "in": "header",
        "required": False,
        "description": "an ETag from an earlier answer: 304 while it is still current",
        "schema": {"type": "string"},
    },
    {
        "name": "If-Modified-Since",
        "in": "header",
        "required": False,
        "description": "a Last-Modified from an earlier answer (used without If-None-Match)",
        "schema": {"type": "string"},
    },
]
_CACHE_HEADERS = {
    "ETag": {"description": "strong validator of this answer", "schema": {"type": "string"}},
    "Last-Modified": {
        "description": "when what this answer shows last changed",
        "schema": {"type": "string"},
    },
    "Cache-Control": {
        "description": "public, short max-age, stale-while-revalidate, stale-if-error",
        "schema": {"type": "string"},
    },
    "Strikebot-Stale": {
        "description": "1 when the store could not be read and this is the last good answer",
        "schema": {"type": "string", "enum": ["1"]},
    },
}


def _ref(model: type[BaseModel]) -> dict[str, str]:
    return {"$ref": REF.format(model=model.__name__)}


def _answer(model: type[BaseModel] | None, description: str) -> dict[str, Any]:
    if model is None:
        return {"description": description}
    return {"description": description, "content": {"application/json": {"schema": _ref(model)}}}


def _query(campaign: Campaign) -> dict[str, dict[str, Any]]:
    languages = list(campaign.languages)
    return {
        "lang": {
            "name": "lang",
            "in": "query",
            "required": False,
            "description": "language of the top-level texts (every language is under `texts`)",
            "schema": {"type": "string", "enum": languages, "default": campaign.default_language},
        },
        "limit": {
            "name": "limit",
            "in": "query",
            "required": False,
            "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
        },
        "dry_run": {
            "name": "dry_run",
            "in": "query",
            "required": False,
            "description": "true: check and preview only (the message per language, the reach); "
            "nothing is posted",
            "schema": {"type": "string", "enum": ["true", "false"], "default": "false"},
        },
        "site": {
            "name": "site",
            "in": "query",
            "required": False,
            "description": "only what a site's (or a group's) readers get: updates for everyone, "
            "for it, for its group (or for one of the group's sites)",
            "schema": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$"},
        },
        "after": {
            "name": "after",
            "in": "query",
            "required": False,
            "description": "continue after this update id (from the previous page)",
            "schema": {"type": "integer", "minimum": 1, "maximum": MAX_ID},
        },
    }


def operation_spec(
    method: str, path: str, names: Iterable[str], op: Operation, campaign: Campaign
) -> dict[str, Any]:
    """One operation's OpenAPI object: from its declaration and its route."""
    spec: dict[str, Any] = {"operationId": op.id, "summary": op.summary}
    queries = _query(campaign)
    parameters = [
        {"name": name, "in": "path", "required": True, "schema": PATH_PARAMETERS[name]}
        for name in names
    ]
    parameters += [queries[name] for name in op.query]
    responses = {str(status): _answer(model, text) for status, (model, text) in op.answers.items()}
    if op.body is not None:
        spec["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": _ref(op.body)}},
        }
    if path.startswith(ADMIN_PREFIX):
        spec["security"] = [{"adminToken": []}]
        for status, text in ADMIN_ERRORS.items():
            responses.setdefault(str(status), _answer(ErrorOut, text))
    elif path.startswith("/api/v1/") and method == "GET":
        parameters += _CONDITIONAL
        responses["200"] = {**responses["200"], "headers": _CACHE_HEADERS}
        responses["304"] = {"description": "not modified: the copy you hold is current"}
        responses["503"] = _answer(
            ErrorOut, "the store cannot be read and nothing was rendered yet; retry"
        )
    if op.query:
        responses["400"] = _answer(
            ErrorOut, "a query parameter is not valid; the message says which"
        )
    if parameters:
        spec["parameters"] = parameters
    spec["responses"] = dict(sorted(responses.items()))
    return spec


def _routes(router: web.UrlDispatcher) -> list[tuple[str, str, list[str], Operation]]:
    """The served routes the API documents, with their operations (in the order served)."""
    operations = {**OPERATIONS, **_webhooks.OPERATIONS}
    found = []
    for route in router.routes():
        resource = route.resource
        if resource is None or route.method == "HEAD":
            continue
        path = resource.canonical
        op = operations.get((route.method, path))
        if op is not None:
            names = [part[1:-1] for part in path.split("/") if part.startswith("{")]
            found.append((route.method, path, names, op))
    return found


def _models(
    routes: list[tuple[str, str, list[str], Operation]],
) -> tuple[list[type[BaseModel]], list[type[BaseModel]]]:
    inputs: list[type[BaseModel]] = []
    outputs: list[type[BaseModel]] = [ErrorOut]
    for _, _, _, op in routes:
        if op.body is not None and op.body not in inputs:
            inputs.append(op.body)
        for model, _ in op.answers.values():
            if model is not None and model not in outputs:
                outputs.append(model)
    return inputs, outputs + [m for m in _webhooks.EVENTS if m not in outputs]


def _specialise(schemas: dict[str, Any], campaign: Campaign) -> None:
    """Write the campaign's languages into every per-language object, and drop the `null`
    default of a field that may be left out but is not nullable."""
    languages = list(campaign.languages)
    for schema in schemas.values():
        for prop in (schema.get("properties") or {}).values():
            mode = prop.pop(LANGUAGES, None)
            if mode == "enum":
                prop.pop("maxLength", None)
                prop.pop("minLength", None)
                prop["enum"] = languages
            elif mode is not None:
                each = prop.pop("additionalProperties")
                prop.pop("minProperties", None)
                shown = languages[1:] if mode == "others" else languages
                prop["properties"] = {lang: each for lang in shown}
                prop["additionalProperties"] = False
                if mode == "others":
                    pass  # any of them, or none
                elif mode == "default required":
                    prop["required"] = [campaign.default_language]
                else:
                    prop["minProperties"] = 1
            if "default" in prop and prop["default"] is None and not _nullable(prop):
                del prop["default"]


def _nullable(prop: Mapping[str, Any]) -> bool:
    if prop.get("type") == "null":
        return True
    return any(_nullable(option) for option in prop.get("anyOf", []))


def document(campaign: Campaign, router: web.UrlDispatcher) -> dict[str, Any]:
    routes = _routes(router)
    inputs, outputs = _models(routes)
    _, defs = models_json_schema(
        [(m, "serialization") for m in outputs] + [(m, "validation") for m in inputs],
        ref_template=REF,
    )
    schemas: dict[str, Any] = defs["$defs"]
    _specialise(schemas, campaign)
    paths: dict[str, dict[str, Any]] = {}
    for method, path, names, op in routes:
        paths.setdefault(path, {})[method.lower()] = operation_spec(
            method, path, names, op, campaign
        )
    return {
        "openapi": "3.1.0",
        "info": {
            "title": f"strikebot API — {campaign.union}",
            "version": "1.0.0",
            "description": (
                "Public, read-only JSON for the strike status, updates and demands, and an "
                "admin API (bearer token from STRIKEBOT_ADMIN_TOKEN) that uses the same use "
                "cases and audit log as chat and the command line. Bodies are strict JSON: a "
                "date-time is an RFC 3339 string with its offset, a boolean a JSON boolean, "
                "and null is taken only where a field says it is nullable. Errors are "
                '`{"error": {"code", "message"}}`; the message names the rule broken and '
                "what to do."
            ),
        },
        "servers": [{"url": "/"}],
        "paths": paths,
        # What strikebot sends to webhook receivers (signed per Standard Webhooks).
        "webhooks": _webhooks.openapi_webhooks(_ref),
        "components": {
            "schemas": schemas,
            "securitySchemes": {
                "adminToken": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "the value of STRIKEBOT_ADMIN_TOKEN",
                }
            },
        },
    }


def document_bytes(campaign: Campaign, router: web.UrlDispatcher) -> bytes:
    return json.dumps(document(campaign, router), ensure_ascii=False, indent=1).encode()


async def serve(request: web.Request) -> web.StreamResponse:
    return web.Response(
        body=state_of(request).openapi,
        headers={"Content-Type": JSON, "Cache-Control": "public, max-age=300"},
    )
