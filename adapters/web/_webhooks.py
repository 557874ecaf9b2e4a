"""The admin API's webhook endpoints: the same use cases as `strikebot webhooks`.

GET    /api/v1/admin/webhooks               the receivers and how their deliveries go
POST   /api/v1/admin/webhooks               add one; the answer holds its secret, once
GET    /api/v1/admin/webhooks/{id}          one receiver
DELETE /api/v1/admin/webhooks/{id}          stop sending to it
POST   /api/v1/admin/webhooks/{id}/enable   send again after it was disabled for failing
POST   /api/v1/admin/webhooks/{id}/test     queue a signed `webhook.test` event (202)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime, time
from typing import Any, Literal

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from bot.ports import NotFound, WebhookEndpoint, events, webhook_summary

from ._admin import HTTP_ACTOR, _body, _Empty
from ._app import ADMIN_PREFIX, json_response, state_of
from ._schemas import LANGUAGES, NO_NUL, WEBHOOK_URL, ErrorOut, Omittable, Operation

MAX_ID = 2**31 - 1
WEBHOOKS = f"{ADMIN_PREFIX}/webhooks"


class WebhookIn(BaseModel):
    """A receiver to add. Only a public address is accepted unless `[webhooks]` in the
    campaign file allows it."""

    model_config = ConfigDict(extra="forbid", strict=True)

    url: str = Field(
        min_length=1,
        max_length=2000,
        pattern=WEBHOOK_URL,
        description="the receiver: https:// (or http://), a host, then any path; no user name, "
        "password or #fragment; the host must resolve to a public address unless [webhooks] "
        "allows its network (422 otherwise)",
    )
    description: str = Field(
        default="", max_length=200, pattern=NO_NUL, description="what it is, for the list"
    )
    language: Omittable[str] = Field(
        default=None,
        description="language of its briefings (default: the campaign's first)",
        json_schema_extra={LANGUAGES: "enum"},
    )
    briefing_time: Omittable[time] = Field(
        default=None, description="also send the morning briefing at this local time (HH:MM)"
    )
    timezone: Omittable[str] = Field(
        default=None,
        max_length=64,
        description="IANA time zone of briefing_time, e.g. America/Los_Angeles (default: the "
        "campaign's; an unknown zone is refused with 422)",
    )


class WebhookOut(BaseModel):
    id: int
    url: str
    description: str
    language: str
    briefing_time: str | None
    timezone: str
    state: Literal["ok", "failing", "disabled", "removed"]
    disabled_reason: str | None = Field(description="why it was switched off, if it was")
    failing_since: datetime | None
    last_error: str | None
    last_success_at: datetime | None
    created_at: datetime
    created_by: str


class WebhookListOut(BaseModel):
    webhooks: list[WebhookOut]


class WebhookCreatedOut(WebhookOut):
    secret: str = Field(
        description="the `whsec_` signing secret: shown in this answer only, keep it secret"
    )


class WebhookTestOut(BaseModel):
    delivery_id: str = Field(description="the `webhook-id` the receiver will see")


def add_routes(app: web.Application) -> None:
    r = app.router
    base = WEBHOOKS
    r.add_get(base, list_webhooks)
    r.add_post(base, add_webhook)
    r.add_get(f"{base}/{{id}}", get_webhook)
    r.add_delete(f"{base}/{{id}}", remove_webhook)
    r.add_post(f"{base}/{{id}}/enable", enable_webhook)
    r.add_post(f"{base}/{{id}}/test", test_webhook)


def webhook_out(endpoint: WebhookEndpoint) -> WebhookOut:
    return WebhookOut(**webhook_summary(endpoint))


def _id(request: web.Request) -> int:
    raw = request.match_info["id"]
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_ID:
        raise NotFound(
            f"No webhook #{raw}. Webhook ids are whole numbers; see GET {ADMIN_PREFIX}/webhooks."
        )
    return int(raw)


async def list_webhooks(request: web.Request) -> web.StreamResponse:
    webhooks = state_of(request).ctx.webhooks
    return json_response(WebhookListOut(webhooks=[webhook_out(e) for e in await webhooks.list()]))


async def add_webhook(request: web.Request) -> web.StreamResponse:
    webhooks = state_of(request).ctx.webhooks
    body = await _body(request, WebhookIn)
    created = await webhooks.add(
        HTTP_ACTOR,
        body.url,
        description=body.description,
        language=body.language,
        briefing_time=body.briefing_time,
        timezone=body.timezone,
    )
    out = WebhookCreatedOut(**webhook_out(created.endpoint).model_dump(), secret=created.secret)
    response = json_response(out, status=201)
    response.headers["Location"] = f"{ADMIN_PREFIX}/webhooks/{created.endpoint.id}"
    response.headers["Cache-Control"] = "no-store"  # the secret
    return response


async def get_webhook(request: web.Request) -> web.StreamResponse:
    webhooks = state_of(request).ctx.webhooks
    return json_response(webhook_out(await webhooks.get(_id(request))))


async def remove_webhook(request: web.Request) -> web.StreamResponse:
    webhooks = state_of(request).ctx.webhooks
    return json_response(webhook_out(await webhooks.remove(HTTP_ACTOR, _id(request))))


async def enable_webhook(request: web.Request) -> web.StreamResponse:
    webhooks = state_of(request).ctx.webhooks
    endpoint_id = _id(request)
    await _body(request, _Empty, optional=True)
    return json_response(webhook_out(await webhooks.enable(HTTP_ACTOR, endpoint_id)))


async def test_webhook(request: web.Request) -> web.StreamResponse:
    webhooks = state_of(request).ctx.webhooks
    endpoint_id = _id(request)
    await _body(request, _Empty, optional=True)
    delivery = await webhooks.queue_test(HTTP_ACTOR, endpoint_id)
    return json_response(WebhookTestOut(delivery_id=delivery), status=202)


# ---------------------------------------------------------------------- OpenAPI

EVENTS: list[type[BaseModel]] = [model for _, model, _ in events.CATALOGUE]
SIGNATURE_HEADERS = (
    ("webhook-id", "the delivery's id: the same on every retry, so drop one you have seen"),
    ("webhook-timestamp", "Unix seconds when this attempt was signed; refuse old ones"),
    (
        "webhook-signature",
        "`v1,` + base64 of HMAC-SHA256 over `{webhook-id}.{webhook-timestamp}.{body}`, keyed "
        "with the base64-decoded part of the endpoint's `whsec_` secret (Standard Webhooks)",
    ),
)


NO_WEBHOOK = "no webhook with this id"
OPERATIONS: Mapping[tuple[str, str], Operation] = {
    ("GET", WEBHOOKS): Operation(
        "listWebhooks",
        "The webhook receivers and how their deliveries go",
        {200: (WebhookListOut, "the receivers")},
    ),
    ("POST", WEBHOOKS): Operation(
        "addWebhook",
        "Add a receiver of signed events; the answer holds its secret, once",
        {201: (WebhookCreatedOut, "added"), 409: (ErrorOut, "the URL is already a webhook")},
        body=WebhookIn,
    ),
    ("GET", f"{WEBHOOKS}/{{id}}"): Operation(
        "getWebhook",
        "One receiver",
        {200: (WebhookOut, "the receiver"), 404: (ErrorOut, NO_WEBHOOK)},
    ),
    ("DELETE", f"{WEBHOOKS}/{{id}}"): Operation(
        "removeWebhook",
        "Stop sending to a receiver; its unsent events are cancelled",
        {200: (WebhookOut, "removed"), 404: (ErrorOut, NO_WEBHOOK)},
    ),
    ("POST", f"{WEBHOOKS}/{{id}}/enable"): Operation(
        "enableWebhook",
        "Send again to a receiver that was disabled for failing",
        {200: (WebhookOut, "enabled"), 404: (ErrorOut, NO_WEBHOOK)},
    ),
    ("POST", f"{WEBHOOKS}/{{id}}/test"): Operation(
        "testWebhook",
        "Queue a signed `webhook.test` event to the receiver",
        {
            202: (WebhookTestOut, "queued"),
            404: (ErrorOut, NO_WEBHOOK),
            409: (ErrorOut, "the receiver is disabled; enable it first"),
        },
    ),
}


def openapi_webhooks(ref: Callable[[type[BaseModel]], dict[str, str]]) -> dict[str, Any]:
    """OpenAPI 3.1 `webhooks`: what strikebot POSTs to each receiver, one entry per type."""
    headers = [
        {
            "name": name,
            "in": "header",
            "required": True,
            "description": text,
            "schema": {"type": "string"},
        }
        for name, text in SIGNATURE_HEADERS
    ]
    found: dict[str, Any] = {}
    for kind, model, meaning in events.CATALOGUE:
        found[kind] = {
            "post": {
                "operationId": "event_" + kind.replace(".", "_"),
                "summary": meaning,
                "description": (
                    f"`type` is `{kind}`. Sent through the outbox: retried with backoff (the "
                    "same `webhook-id` each time) until the receiver answers 2xx; a receiver "
                    "failing for `[webhooks] disable_after_hours` is disabled."
                ),
                "parameters": headers,
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": ref(model)}},
                },
                "responses": {
                    "200": {"description": "received (any 2xx)"},
                    "410": {"description": "the receiver asks to be removed: it is disabled"},
                },
            }
        }
    return found
