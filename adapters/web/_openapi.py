"""The OpenAPI 3.1 document for `/api/v1/...`, generated from the same pydantic models the
handlers serialise through, and specialised to the campaign's languages."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from bot.ports import OFFER_MAX, Campaign

from . import _webhooks
from ._app import JSON, state_of
from ._schemas import (
    NON_BLANK,
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
    DemandWordingIn,
    EditUpdateIn,
    ErrorOut,
    HealthOut,
    LiveOut,
    PostUpdateIn,
    ReadyOut,
    RetractIn,
    StatusOut,
    UpdateDetailOut,
    UpdateListOut,
    UpdateTextIn,
    UpdateTextPatch,
)

REF = "#/components/schemas/{model}"
MAX_ID = 2**31 - 1

_OUTPUTS: list[type[BaseModel]] = [
    StatusOut,
    UpdateListOut,
    UpdateDetailOut,
    DemandListOut,
    DemandDetailOut,
    DemandChangedOut,
    AdminUpdateOut,
    ConfirmTranslationOut,
    ErrorOut,
    HealthOut,
    LiveOut,
    ReadyOut,
]
_INPUTS: list[type[BaseModel]] = [
    PostUpdateIn,
    EditUpdateIn,
    RetractIn,
    DemandChangeIn,
    DemandEditIn,
    DemandAddIn,
    DemandRetireIn,
    DemandWordingIn,
    ConfirmTranslationIn,
    UpdateTextIn,
    UpdateTextPatch,
]


def _ref(model: type[BaseModel]) -> dict[str, str]:
    return {"$ref": REF.format(model=model.__name__)}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _error(description: str) -> dict[str, Any]:
    return _json(_ref(ErrorOut), description)


def _drop_null(schema: dict[str, Any]) -> dict[str, Any]:
    """`anyOf: [X, {type: null}]` -> X: the field may be left out, but not sent as null."""
    options = [s for s in schema.get("anyOf", []) if s != {"type": "null"}]
    if len(options) == 1:
        rest = {k: v for k, v in schema.items() if k not in ("anyOf", "default")}
        return {**options[0], **rest}
    return schema


def document(campaign: Campaign) -> dict[str, Any]:
    outputs = _OUTPUTS + _webhooks.OUTPUTS + _webhooks.EVENTS
    _, defs = models_json_schema(
        [(m, "serialization") for m in outputs]
        + [(m, "validation") for m in _INPUTS + _webhooks.INPUTS],
        ref_template=REF,
    )
    schemas: dict[str, Any] = defs["$defs"]
    languages = list(campaign.languages)
    default = campaign.default_language

    # Texts: exactly the campaign's languages; the first one is required when posting.
    post = schemas["PostUpdateIn"]["properties"]
    post["texts"] = {
        "type": "object",
        "description": f"wording per language; {default!r} is required",
        "properties": {lang: _ref(UpdateTextIn) for lang in languages},
        "required": [default],
        "additionalProperties": False,
    }
    edit = schemas["EditUpdateIn"]
    edit["properties"]["texts"] = {
        "type": "object",
        "description": "new wording per language; fields left out keep their current text",
        "properties": {lang: _ref(UpdateTextPatch) for lang in languages},
        "minProperties": 1,
        "additionalProperties": False,
    }
    for name in ("status", "urgency"):
        edit["properties"][name] = _drop_null(edit["properties"][name])
    edit["anyOf"] = [{"required": [f]} for f in ("texts", "status", "urgency", "next_step_at")]
    for name in ("headline", "body", "next_step"):
        patch = schemas["UpdateTextPatch"]["properties"]
        patch[name] = _drop_null(patch[name])
    demand = schemas["DemandChangeIn"]
    demand["properties"]["status"] = _drop_null(demand["properties"]["status"])
    demand["properties"]["offer"] = {
        "type": "object",
        "description": "the employer's new offer, per language",
        "properties": {
            lang: {"type": "string", "minLength": 1, "maxLength": OFFER_MAX, "pattern": NON_BLANK}
            for lang in languages
        },
        "minProperties": 1,
        "additionalProperties": False,
    }
    demand["anyOf"] = [{"required": ["status"]}, {"required": ["offer"]}]
    demand["properties"]["at"] = _drop_null(demand["properties"]["at"])
    # Demand wording: exactly the campaign's languages; fields may be left out, not null.
    wording = schemas["DemandWordingIn"]["properties"]
    for name in list(wording):
        wording[name] = _drop_null(wording[name])
    schemas["DemandWordingIn"]["minProperties"] = 1
    demand_edit = schemas["DemandEditIn"]
    demand_edit["properties"]["texts"] = {
        "type": "object",
        "description": "new wording per language; fields left out keep their current text",
        "properties": {lang: _ref(DemandWordingIn) for lang in languages},
        "minProperties": 1,
        "additionalProperties": False,
    }
    demand_edit["properties"]["status"] = _drop_null(demand_edit["properties"]["status"])
    demand_edit["anyOf"] = [{"required": ["texts"]}, {"required": ["status"]}]
    schemas["DemandAddIn"]["properties"]["texts"] = {
        "type": "object",
        "description": f"wording per language, each with a title; {default!r} is required",
        "properties": {
            lang: {"allOf": [_ref(DemandWordingIn)], "required": ["title"]} for lang in languages
        },
        "required": [default],
        "additionalProperties": False,
    }
    confirm = schemas["ConfirmTranslationIn"]["properties"]
    confirm["language"] = {"type": "string", "enum": languages, "description": "the stale language"}
    for name in ("next_step_at", "publish_at"):
        post[name] = _drop_null(post[name])

    lang_param = {
        "name": "lang",
        "in": "query",
        "required": False,
        "description": "language of the top-level texts (every language is under `texts`)",
        "schema": {"type": "string", "enum": languages, "default": default},
    }
    update_id = {
        "name": "id",
        "in": "path",
        "required": True,
        "schema": {"type": "integer", "minimum": 1, "maximum": MAX_ID},
    }
    demand_key = {
        "name": "key",
        "in": "path",
        "required": True,
        "schema": {"type": "string", "pattern": "^[a-z0-9][a-z0-9_-]{0,63}$"},
    }
    bad_query = _error("a query parameter is not valid; the message says which")
    unauthorized = _error("no valid bearer token (send `Authorization: Bearer <token>`)")
    disabled = _error("the admin API is off: STRIKEBOT_ADMIN_TOKEN is not set, or not allowed")
    invalid = _error("the request breaks a rule (empty headline, past embargo, ...)")
    malformed = _error("the body is not a JSON object")
    limited = _error("too many wrong tokens from this address: wait for Retry-After seconds")
    admin_errors = {
        "400": malformed,
        "401": unauthorized,
        "403": disabled,
        "422": invalid,
        "429": limited,
    }
    secured: list[dict[str, list[str]]] = [{"adminToken": []}]

    def body(model: type[BaseModel], required: bool = True) -> dict[str, Any]:
        return {"required": required, "content": {"application/json": {"schema": _ref(model)}}}

    paths: dict[str, Any] = {
        "/livez": {
            "get": {
                "operationId": "live",
                "summary": "The process answers (restart it when this fails)",
                "responses": {"200": _json(_ref(LiveOut), "alive")},
            }
        },
        "/readyz": {
            "get": {
                "operationId": "ready",
                "summary": "The store can be read and written (send people elsewhere if not)",
                "responses": {
                    "200": _json(_ref(ReadyOut), "ready"),
                    "503": _json(_ref(ReadyOut), "not ready; `reasons` says why"),
                },
            }
        },
        "/healthz": {
            "get": {
                "operationId": "health",
                "summary": "Whether the database answers and takes writes; each adapter's state",
                "responses": {
                    "200": _json(_ref(HealthOut), "healthy"),
                    "503": _json(_ref(HealthOut), "the database cannot be reached or written"),
                },
            }
        },
        "/api/v1/status": {
            "get": {
                "operationId": "getStatus",
                "summary": "The current status, day of the strike and next step",
                "parameters": [lang_param],
                "responses": {"200": _json(_ref(StatusOut), "the status"), "400": bad_query},
            }
        },
        "/api/v1/updates": {
            "get": {
                "operationId": "listUpdates",
                "summary": "Published updates, newest first (retracted ones included, marked)",
                "parameters": [
                    lang_param,
                    {
                        "name": "limit",
                        "in": "query",
                        "required": False,
                        "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
                    },
                    {
                        "name": "after",
                        "in": "query",
                        "required": False,
                        "description": "continue after this update id (from the previous page)",
                        "schema": {"type": "integer", "minimum": 1, "maximum": MAX_ID},
                    },
                ],
                "responses": {"200": _json(_ref(UpdateListOut), "a page"), "400": bad_query},
            }
        },
        "/api/v1/updates/{id}": {
            "get": {
                "operationId": "getUpdate",
                "summary": "One published update with its revision history",
                "parameters": [update_id, lang_param],
                "responses": {
                    "200": _json(_ref(UpdateDetailOut), "the update"),
                    "400": bad_query,
                    "404": _error("no published update with this id"),
                },
            }
        },
        "/api/v1/demands": {
            "get": {
                "operationId": "listDemands",
                "summary": "The union's demands: its ask, the employer's offer, status",
                "parameters": [lang_param],
                "responses": {"200": _json(_ref(DemandListOut), "the demands"), "400": bad_query},
            }
        },
        "/api/v1/demands/{key}": {
            "get": {
                "operationId": "getDemand",
                "summary": "One demand with its dated history of offers and status changes",
                "parameters": [demand_key, lang_param],
                "responses": {
                    "200": _json(_ref(DemandDetailOut), "the demand"),
                    "400": bad_query,
                    "404": _error("no demand with this key"),
                },
            }
        },
        "/api/v1/admin/updates": {
            "post": {
                "operationId": "postUpdate",
                "summary": "Post an update now, or at `publish_at` (embargo)",
                "security": secured,
                "requestBody": body(PostUpdateIn),
                "responses": {
                    "201": _json(_ref(AdminUpdateOut), "posted (or waiting for approval)"),
                    **admin_errors,
                },
            }
        },
        "/api/v1/admin/updates/{id}": {
            "patch": {
                "operationId": "editUpdate",
                "summary": "Edit an update, keeping the earlier wording as a revision",
                "security": secured,
                "parameters": [update_id],
                "requestBody": body(EditUpdateIn),
                "responses": {
                    "200": _json(_ref(AdminUpdateOut), "edited"),
                    **admin_errors,
                    "404": _error("no update with this id"),
                    "409": _error("the update was retracted"),
                },
            }
        },
        "/api/v1/admin/updates/{id}/retract": {
            "post": {
                "operationId": "retractUpdate",
                "summary": "Retract an update: it stays visible, struck through, with the reason",
                "security": secured,
                "parameters": [update_id],
                "requestBody": body(RetractIn),
                "responses": {
                    "200": _json(_ref(AdminUpdateOut), "retracted"),
                    **admin_errors,
                    "404": _error("no update with this id"),
                    "409": _error("already retracted"),
                },
            }
        },
        "/api/v1/admin/updates/{id}/approve": {
            "post": {
                "operationId": "approveUpdate",
                "summary": "Approve an update waiting for a second admin",
                "security": secured,
                "parameters": [update_id],
                "responses": {
                    "200": _json(_ref(AdminUpdateOut), "approved and published"),
                    **admin_errors,
                    "404": _error("no update with this id"),
                    "409": _error("the update is not waiting for approval"),
                },
            }
        },
        "/api/v1/admin/demands": {
            "post": {
                "operationId": "addDemand",
                "summary": "Add a demand at the end of the list",
                "security": secured,
                "requestBody": body(DemandAddIn),
                "responses": {
                    "201": _json(_ref(DemandChangedOut), "added"),
                    **admin_errors,
                    "409": _error("a demand with this key exists (perhaps retired)"),
                },
            }
        },
        "/api/v1/admin/demands/{key}": {
            "put": {
                "operationId": "recordDemand",
                "summary": "Record an employer offer and/or a new status, with its date and "
                "source (backdating allowed, never in the future)",
                "security": secured,
                "parameters": [demand_key],
                "requestBody": body(DemandChangeIn),
                "responses": {
                    "200": _json(_ref(DemandChangedOut), "recorded"),
                    **admin_errors,
                    "404": _error("no demand with this key"),
                },
            },
            "patch": {
                "operationId": "editDemand",
                "summary": "Re-word any field of a demand, per language, with a reason",
                "security": secured,
                "parameters": [demand_key],
                "requestBody": body(DemandEditIn),
                "responses": {
                    "200": _json(_ref(DemandChangedOut), "edited"),
                    **admin_errors,
                    "404": _error("no demand with this key"),
                    "409": _error("the demand is retired"),
                },
            },
        },
        "/api/v1/admin/demands/{key}/retire": {
            "post": {
                "operationId": "retireDemand",
                "summary": "Take a demand off the list; it keeps its history",
                "security": secured,
                "parameters": [demand_key],
                "requestBody": body(DemandRetireIn),
                "responses": {
                    "200": _json(_ref(DemandChangedOut), "retired"),
                    **admin_errors,
                    "404": _error("no demand with this key"),
                    "409": _error("already retired"),
                },
            }
        },
        "/api/v1/admin/translations/confirm": {
            "post": {
                "operationId": "confirmTranslation",
                "summary": "Say a stale translation still says what the edited language says",
                "security": secured,
                "requestBody": body(ConfirmTranslationIn),
                "responses": {
                    "200": _json(_ref(ConfirmTranslationOut), "confirmed (or was not stale)"),
                    **admin_errors,
                },
            }
        },
    }
    for path, item in paths.items():
        if path.startswith("/api/v1/") and not path.startswith("/api/v1/admin"):
            _cacheable(item["get"])
    paths |= _webhooks.openapi_paths(
        _ref,
        {
            "errors": admin_errors,
            "not_found": _error("no webhook with this id"),
            "conflict": _error,
        },
    )
    return {
        "openapi": "3.1.0",
        "info": {
            "title": f"strikebot API — {campaign.union}",
            "version": "1.0.0",
            "description": (
                "Public, read-only JSON for the strike status, updates and demands, and an "
                "admin API (bearer token from STRIKEBOT_ADMIN_TOKEN) that uses the same use "
                "cases and audit log as chat and the command line. Errors are "
                '`{"error": {"code", "message"}}`; the message says what to do.'
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


def _cacheable(operation: dict[str, Any]) -> None:
    """A public read: conditional requests, validators, 304, and 503 when the store is down
    with nothing rendered yet (otherwise the last good answer, marked stale)."""
    operation["parameters"] = [*operation.get("parameters", []), *_CONDITIONAL]
    responses = operation["responses"]
    responses["200"] = {**responses["200"], "headers": _CACHE_HEADERS}
    responses["304"] = {"description": "not modified: the copy you hold is current"}
    responses["503"] = _error("the store cannot be read and nothing was rendered yet; retry")


def document_bytes(campaign: Campaign) -> bytes:
    return json.dumps(document(campaign), ensure_ascii=False, indent=1).encode()


async def serve(request: web.Request) -> web.StreamResponse:
    return web.Response(
        body=state_of(request).openapi,
        headers={"Content-Type": JSON, "Cache-Control": "public, max-age=300"},
    )
