"""Events for machines: the JSON document each change sends to event subscribers.

Chat platforms get messages composed for people (`bot.messages.compose`). A plugin that declares
`events=True` (webhook endpoints) gets these instead: one document per change, built in the
transaction that makes the change and kept in its outbox row, so every retry sends the same
body. The shape follows the Standard Webhooks payload convention:

    {"type": "update.published", "timestamp": "2019-01-18T18:00:00Z",
     "campaign": "utla-2019", "data": {"update": {...}}}

The models below are the schema; the web plugin publishes them in the OpenAPI document's
`webhooks` section. Texts are as admins wrote them, in every language, without markup.
Events may arrive out of order after a retry: `data.update.revision` and `timestamp` say
which is newer.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from bot.messages.compose import page_url, update_url
from bot.models import (
    Campaign,
    Demand,
    DemandEvent,
    DemandStatus,
    Status,
    Update,
    UpdateState,
    Urgency,
)
from bot.plugins.outbound import MessageKind, OutboundMessage


class EventType(StrEnum):
    UPDATE_PUBLISHED = "update.published"
    UPDATE_EDITED = "update.edited"
    UPDATE_CORRECTED = "update.corrected"
    UPDATE_RETRACTED = "update.retracted"
    DEMAND_CHANGED = "demand.changed"
    BRIEFING = "briefing.sent"
    NOTICE = "notice.sent"
    PING = "webhook.test"


class _Out(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# ------------------------------------------------------------------------- data


class UpdateTextData(_Out):
    headline: str
    body: str = ""
    next_step: str = ""


class UpdateData(_Out):
    """An update as it stood when the event happened."""

    id: int
    url: str = Field(description="the update's public page, in the campaign's first language")
    status: Status
    urgency: Urgency
    state: UpdateState
    revision: int = Field(description="1 when posted; each edit adds one")
    published_at: datetime | None
    next_step_at: datetime | None
    texts: dict[str, UpdateTextData] = Field(description="the wording per language")
    retracted_at: datetime | None = None
    retraction_reason: str | None = None
    retraction_reasons: dict[str, str] = Field(
        default_factory=dict, description="the retraction's reason per language"
    )
    audience: AudienceData = Field(
        default_factory=lambda: AudienceData(),
        description="whom it addresses: some sites and groups (codes); both empty: everyone",
    )


class AudienceData(_Out):
    sites: list[str] = []
    groups: list[str] = []


class UpdateEventData(_Out):
    update: UpdateData
    reason: str | None = Field(
        default=None,
        description="why it was edited, corrected or retracted (in the first language)",
    )
    reasons: dict[str, str] = Field(
        default_factory=dict, description="the same reason per language it was given in"
    )


class DemandTextData(_Out):
    title: str
    summary: str = ""
    union_position: str = ""
    employer_offer: str = ""


class DemandData(_Out):
    key: str
    url: str = Field(description="the demand in the public JSON API")
    status: DemandStatus
    updated_at: datetime
    texts: dict[str, DemandTextData]


class DemandChangeData(_Out):
    at: datetime
    status: DemandStatus
    offer: dict[str, str] = Field(description="the employer's new offer per language, if any")
    source: str
    note: str = ""


class DemandEventData(_Out):
    demand: DemandData
    change: DemandChangeData


class MessageFieldData(_Out):
    name: str
    value: str


class MessageLinkData(_Out):
    label: str
    url: str


class MessageData(_Out):
    """A message composed for people (a briefing, an admin notice), as plain text."""

    title: str
    body: str = ""
    status: Status | None = None
    status_label: str = ""
    fields: list[MessageFieldData] = []
    links: list[MessageLinkData] = []
    url: str | None = None
    footer: str = ""


class MessageEventData(_Out):
    language: str
    message: MessageData


class PingEventData(_Out):
    message: str


# ------------------------------------------------------------------------- envelopes


class _Envelope(_Out):
    timestamp: datetime = Field(description="when the change happened (UTC)")
    campaign: str = Field(description="the campaign's slug, as in [campaign] slug")


class UpdateEvent(_Envelope):
    type: Literal["update.published", "update.edited", "update.corrected", "update.retracted"]
    data: UpdateEventData


class DemandChangedEvent(_Envelope):
    type: Literal["demand.changed"]
    data: DemandEventData


class BriefingEvent(_Envelope):
    type: Literal["briefing.sent"]
    data: MessageEventData


class NoticeEvent(_Envelope):
    type: Literal["notice.sent"]
    data: MessageEventData


class PingEvent(_Envelope):
    type: Literal["webhook.test"]
    data: PingEventData


# Each event type, the model of its document, and what it means (for the OpenAPI document).
CATALOGUE: tuple[tuple[str, type[_Envelope], str], ...] = (
    ("update.published", UpdateEvent, "An update was published (also after an embargo or an "
     "approval)."),
    ("update.edited", UpdateEvent, "A published update was edited in place; `reason` says why."),
    ("update.corrected", UpdateEvent, "A published update was corrected: edited, with a "
     "visible correction note for readers; `reason` says what changed."),
    ("update.retracted", UpdateEvent, "A published update was retracted; it stays visible as "
     "retracted, with `reason`."),
    ("demand.changed", DemandChangedEvent, "The employer made a new offer on a demand, or its "
     "status changed."),
    ("briefing.sent", BriefingEvent, "The morning briefing, composed for the endpoint's "
     "language and time zone."),
    ("notice.sent", NoticeEvent, "A note to admins (a channel broke), when the endpoint is "
     "one of [delivery] admin_channels."),
    ("webhook.test", PingEvent, "Sent by `strikebot webhooks test` or the admin API, to check "
     "the receiver."),
)  # fmt: skip


# ------------------------------------------------------------------------- building


def _utc(moment: datetime | None) -> datetime | None:
    return None if moment is None else moment.astimezone(UTC)


def _dump(event: _Envelope) -> dict[str, Any]:
    return event.model_dump(mode="json")


def update_data(update: Update, campaign: Campaign) -> UpdateData:
    # An update under embargo is published when its event is delivered (at the embargo time).
    state = UpdateState.PUBLISHED if update.state is UpdateState.SCHEDULED else update.state
    return UpdateData(
        id=update.id,
        url=update_url(update, campaign, campaign.default_language),
        status=update.status,
        urgency=update.urgency,
        state=state,
        revision=update.revision,
        published_at=_utc(update.published_at),
        next_step_at=_utc(update.next_step_at),
        texts={
            lang: UpdateTextData(headline=t.headline, body=t.body, next_step=t.next_step)
            for lang, t in update.texts.items()
        },
        retracted_at=_utc(update.retracted_at),
        retraction_reason=update.retraction_reason,
        retraction_reasons=dict(update.retraction_reason_texts()),
        audience=AudienceData(
            sites=list(update.audience.sites), groups=list(update.audience.groups)
        ),
    )


def update_event(
    kind: EventType,
    update: Update,
    campaign: Campaign,
    now: datetime,
    *,
    reason: str | None = None,
    reasons: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The document for `kind` (update.published / edited / corrected / retracted)."""
    return _dump(
        UpdateEvent(
            type=kind.value,  # type: ignore[arg-type]  # one of the update kinds, checked by pydantic
            timestamp=now.astimezone(UTC),
            campaign=campaign.slug,
            data=UpdateEventData(
                update=update_data(update, campaign),
                reason=reason,
                reasons=dict(reasons or ({campaign.default_language: reason} if reason else {})),
            ),
        )
    )


def demand_event(
    demand: Demand, change: DemandEvent, campaign: Campaign, now: datetime
) -> dict[str, Any]:
    return _dump(
        DemandChangedEvent(
            type="demand.changed",
            timestamp=now.astimezone(UTC),
            campaign=campaign.slug,
            data=DemandEventData(
                demand=DemandData(
                    key=demand.key,
                    url=page_url(campaign, None, f"/api/v1/demands/{demand.key}"),
                    status=demand.status,
                    updated_at=demand.updated_at.astimezone(UTC),
                    texts={
                        lang: DemandTextData(
                            title=t.title,
                            summary=t.summary,
                            union_position=t.union_position,
                            employer_offer=t.employer_offer,
                        )
                        for lang, t in demand.texts.items()
                    },
                ),
                change=DemandChangeData(
                    at=change.at.astimezone(UTC),
                    status=change.status,
                    offer=dict(change.offer),
                    source=change.source,
                    note=change.note,
                ),
            ),
        )
    )


def message_event(message: OutboundMessage, campaign: Campaign, now: datetime) -> dict[str, Any]:
    """A briefing or an admin notice, which are composed per channel, as an event."""
    data = MessageEventData(
        language=message.language,
        message=MessageData(
            title=message.title,
            body=message.body,
            status=message.status,
            status_label=message.status_label,
            fields=[MessageFieldData(name=f.name, value=f.value) for f in message.fields],
            links=[MessageLinkData(label=link.label, url=link.url) for link in message.links],
            url=message.url,
            footer=message.footer,
        ),
    )
    common: dict[str, Any] = {"timestamp": now.astimezone(UTC), "campaign": campaign.slug}
    if message.kind is MessageKind.BRIEFING:
        return _dump(BriefingEvent(type="briefing.sent", data=data, **common))
    return _dump(NoticeEvent(type="notice.sent", data=data, **common))


def ping_event(campaign: Campaign, now: datetime, message: str) -> dict[str, Any]:
    return _dump(
        PingEvent(
            type="webhook.test",
            timestamp=now.astimezone(UTC),
            campaign=campaign.slug,
            data=PingEventData(message=message),
        )
    )


def event_type(event: Mapping[str, Any]) -> str:
    return str(event.get("type", ""))
