"""The JSON API's wire shapes (pydantic), and the translation from domain types to them.

Responses are serialised through these models, and the OpenAPI document is generated from
the same models, so what the API sends and what it documents cannot drift apart.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Any

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from bot.ports import (
    BODY_MAX,
    HEADLINE_MAX,
    NEXT_STEP_MAX,
    NOTE_MAX,
    OFFER_MAX,
    REASON_MAX,
    SOURCE_MAX,
    VISIBLE_TEXT_PATTERN,
    Campaign,
    Demand,
    DemandChange,
    DemandEvent,
    DemandStatus,
    Status,
    Update,
    UpdateState,
    Urgency,
    fallback,
    i18n,
    kinds,
)

from ._data import RevisionNote
from ._present import hex_colour

# No NUL anywhere (PostgreSQL cannot store it in text); with at least one character that
# shows, by the core's own rule (`bot.editorial.rules`), or not.
NON_BLANK = VISIBLE_TEXT_PATTERN
NO_NUL = r"^[^\x00]*$"
OfferText = Annotated[str, Field(min_length=1, max_length=OFFER_MAX, pattern=NON_BLANK)]


class _Out(BaseModel):
    model_config = ConfigDict(frozen=True)


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# -- responses ---------------------------------------------------------------------


class UpdateTextOut(_Out):
    headline: str
    body: str
    next_step: str


class CampaignOut(_Out):
    slug: str
    union: str
    employer: str
    timezone: str
    languages: list[str]
    public_url: str
    strike_start: date | None


class StatusOut(_Out):
    """What is happening now: the newest published, unretracted update defines it."""

    campaign: CampaignOut
    language: str
    status: Status | None = Field(description="null until the first update is published")
    status_label: str
    colour: str | None = Field(description="the status colour as #RRGGBB")
    on_strike: bool
    day: int | None = Field(description="day N of the strike while members are out")
    update_id: int | None
    update_url: str | None
    headline: str
    next_step: str
    next_step_at: datetime | None
    last_updated: datetime | None


class UpdateOut(_Out):
    id: int
    url: str = Field(description="the canonical public page of this update")
    language: str
    status: Status
    status_label: str
    urgency: Urgency
    state: UpdateState
    headline: str
    body: str
    next_step: str
    next_step_at: datetime | None
    published_at: datetime | None
    revision: int = Field(description="1 for an unedited update; each edit adds one")
    corrected: bool = Field(description="at least one edit was published as a correction")
    retracted_at: datetime | None
    retraction_reason: str | None
    texts: dict[str, UpdateTextOut]


class RevisionOut(_Out):
    """An earlier wording, as it stood before the edit that created `replaced_by`."""

    number: int
    replaced_by: int
    replaced_at: datetime
    reason: str
    correction: bool
    status: Status
    urgency: Urgency
    next_step_at: datetime | None
    texts: dict[str, UpdateTextOut]


class UpdateDetailOut(UpdateOut):
    revisions: list[RevisionOut] = Field(description="earlier wordings, oldest first")


class UpdateListOut(_Out):
    items: list[UpdateOut]
    next: str | None = Field(description="URL of the next (older) page, or null on the last")


class StaleOut(_Out):
    since: datetime
    edited: list[str] = Field(description="the language(s) whose edit made this one stale")
    editor: str


class AdminUpdateOut(UpdateDetailOut):
    author: str
    approved_by: str | None
    publish_at: datetime | None
    stale: dict[str, StaleOut] = Field(
        default_factory=dict,
        description="languages whose text was written before another language's was edited: "
        "update them, or confirm they still hold (POST /api/v1/admin/translations/confirm)",
    )


class ConfirmTranslationIn(_In):
    target: str = Field(
        pattern=r"^(update:[0-9]{1,10}|demand:[A-Za-z0-9_-]{1,64})$",
        description="the text: update:12 or demand:pay",
    )
    language: str = Field(min_length=2, max_length=16, description="the stale language")
    note: str = Field(default="", max_length=500, description="why it still holds (audited)")


class ConfirmTranslationOut(_Out):
    target: str
    language: str
    confirmed: bool = Field(description="false if that text was not stale")


class DemandTextOut(_Out):
    title: str
    summary: str
    union_position: str
    employer_offer: str
    facts: list[str]


class DemandOut(_Out):
    key: str
    position: int
    language: str
    title: str
    summary: str
    union_position: str
    employer_offer: str
    facts: list[str]
    status: DemandStatus
    status_label: str
    updated_at: datetime
    texts: dict[str, DemandTextOut]


class DemandEventOut(_Out):
    at: datetime
    kind: DemandChange = Field(description="offer, edit, added or retired")
    status: DemandStatus
    offer: dict[str, str]
    source: str
    note: str = Field(description="a note, or the reason for an edit or a retirement")
    changes: dict[str, dict[str, list[str]]] = Field(
        description="for an edit: per language, each field's [before, after]"
    )


class DemandDetailOut(DemandOut):
    history: list[DemandEventOut] = Field(description="dated offers, status changes and edits")


class DemandChangedOut(DemandDetailOut):
    retired_at: datetime | None
    announced_update_id: int | None = Field(
        description="the update that announced the change, if `announce` was asked"
    )


class DemandListOut(_Out):
    items: list[DemandOut]


class ErrorBody(_Out):
    code: str
    message: str = Field(description="one sentence saying what went wrong and what to do")
    details: list[dict[str, Any]] | None = None


class ErrorOut(_Out):
    error: ErrorBody


class DatabaseHealth(_Out):
    reachable: bool
    writable: bool | None = Field(default=None, description="a test write was committed")
    error: str | None = None


class HealthOut(_Out):
    ok: bool
    database: DatabaseHealth
    adapters: dict[str, dict[str, Any]]


class LiveOut(_Out):
    live: bool


class ReadyOut(_Out):
    ready: bool
    reasons: list[str] = Field(description="what is wrong and what to do; empty when ready")
    database: DatabaseHealth
    adapters: dict[str, dict[str, Any]]


# -- requests ----------------------------------------------------------------------


class UpdateTextIn(_In):
    headline: str = Field(min_length=1, max_length=HEADLINE_MAX, pattern=NON_BLANK)
    body: str = Field(default="", max_length=BODY_MAX, pattern=NO_NUL)
    next_step: str = Field(default="", max_length=NEXT_STEP_MAX, pattern=NO_NUL)


class UpdateTextPatch(_In):
    headline: str | None = Field(
        default=None, min_length=1, max_length=HEADLINE_MAX, pattern=NON_BLANK
    )
    body: str | None = Field(default=None, max_length=BODY_MAX, pattern=NO_NUL)
    next_step: str | None = Field(default=None, max_length=NEXT_STEP_MAX, pattern=NO_NUL)


class PostUpdateIn(_In):
    status: Status
    urgency: Urgency = Urgency.ROUTINE
    texts: dict[str, UpdateTextIn] = Field(
        description="one entry per language; the campaign's first language is required"
    )
    next_step_at: AwareDatetime | None = Field(
        default=None,
        description="when the next step happens (a year from 1970 to 2200; still ahead, unless "
        "`history`)",
    )
    publish_at: AwareDatetime | None = Field(
        default=None,
        description="embargo: publish at this future time instead of now (a year up to 2200)",
    )
    clear_next_step: bool = Field(
        default=False,
        description="without a next step, an update keeps the one still ahead (its time and "
        "wording); true takes it off instead",
    )
    history: bool = Field(
        default=False,
        description="the update tells what already happened: its next step's time may be past "
        "(else a past time is refused with 422)",
    )


ReasonText = Annotated[str, Field(min_length=1, max_length=REASON_MAX, pattern=NON_BLANK)]
REASONS = (
    'the reason in other campaign languages, by language code, e.g. {"es": "..."}; '
    "`reason` is the first language's"
)


class EditUpdateIn(_In):
    reason: ReasonText
    reasons: dict[str, ReasonText] | None = Field(default=None, description=REASONS)
    correction: bool = Field(
        default=False, description="also post a short visible correction note to every channel"
    )
    texts: dict[str, UpdateTextPatch] | None = None
    status: Status | None = None
    urgency: Urgency | None = None
    next_step_at: AwareDatetime | None = Field(
        default=None,
        description="a new time for the next step (a year from 1970 to 2200, still ahead "
        "unless `history`); null removes it",
    )
    history: bool = Field(
        default=False, description="a past next-step time is what happened, not a mistake"
    )


class RetractIn(_In):
    reason: ReasonText
    reasons: dict[str, ReasonText] | None = Field(default=None, description=REASONS)


class DemandChangeIn(_In):
    status: DemandStatus | None = None
    offer: dict[str, OfferText] | None = Field(
        default=None, description="the employer's new offer, per language"
    )
    source: str = Field(min_length=1, max_length=SOURCE_MAX, pattern=NON_BLANK)
    note: str = Field(default="", max_length=NOTE_MAX, pattern=NO_NUL)
    at: AwareDatetime | None = Field(
        default=None,
        description="when the offer was made, with its offset (default now; never later than "
        "now): an offer may be recorded days after it was made",
    )
    announce: bool = Field(
        default=False, description="also post an update about it to every subscribed channel"
    )


FactText = Annotated[str, Field(min_length=1, max_length=500, pattern=NON_BLANK)]


class DemandWordingIn(_In):
    """One language's wording; only the fields given change (`facts` replaces the list)."""

    title: str | None = Field(
        default=None, min_length=1, max_length=HEADLINE_MAX, pattern=NON_BLANK
    )
    summary: str | None = Field(default=None, max_length=OFFER_MAX, pattern=NO_NUL)
    union_position: str | None = Field(default=None, max_length=OFFER_MAX, pattern=NO_NUL)
    employer_offer: str | None = Field(default=None, max_length=OFFER_MAX, pattern=NO_NUL)
    facts: list[FactText] | None = Field(default=None, max_length=20)


class DemandEditIn(_In):
    texts: dict[str, DemandWordingIn] = Field(
        default_factory=dict, description="per language, the fields to change"
    )
    status: DemandStatus | None = None
    reason: str = Field(min_length=1, max_length=REASON_MAX, pattern=NON_BLANK)
    announce: bool = Field(
        default=False, description="also post an update about it to every subscribed channel"
    )


class DemandAddIn(_In):
    key: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,63}$")
    texts: dict[str, DemandWordingIn] = Field(
        min_length=1, description="per language; the campaign's first needs a title"
    )
    status: DemandStatus = DemandStatus.OPEN
    reason: str = Field(default="", max_length=NOTE_MAX, pattern=NO_NUL)
    announce: bool = False


class DemandRetireIn(_In):
    reason: str = Field(min_length=1, max_length=REASON_MAX, pattern=NON_BLANK)
    announce: bool = False


# -- domain -> wire ------------------------------------------------------------------


def campaign_out(campaign: Campaign) -> CampaignOut:
    return CampaignOut(
        slug=campaign.slug,
        union=campaign.union,
        employer=campaign.employer,
        timezone=campaign.timezone,
        languages=list(campaign.languages),
        public_url=campaign.public_url,
        strike_start=campaign.strike_start,
    )


def update_url(campaign: Campaign, update_id: int, language: str | None = None) -> str:
    prefix = "" if language in (None, campaign.default_language) else f"/{language}"
    return f"{campaign.public_url}{prefix}/updates/{update_id}"


def update_out(
    update: Update, campaign: Campaign, language: str, note: RevisionNote | None
) -> dict[str, Any]:
    """The fields shared by every update shape."""
    text = update.text(language)
    return {
        "id": update.id,
        "url": update_url(campaign, update.id),
        "language": language,
        "status": update.status,
        "status_label": kinds.status_name(campaign, update.status, language),
        "urgency": update.urgency,
        "state": update.state,
        "headline": text.headline,
        "body": text.body,
        "next_step": text.next_step,
        "next_step_at": update.next_step_at,
        "published_at": update.published_at,
        "revision": update.revision,
        "corrected": bool(note and note.corrections),
        "retracted_at": update.retracted_at,
        "retraction_reason": fallback.shown(
            update.retraction_reason_texts(), language, campaign.default_language
        )
        or None,
        "texts": {
            lang: UpdateTextOut(headline=x.headline, body=x.body, next_step=x.next_step)
            for lang, x in update.texts.items()
        },
    }


def revisions_out(update: Update, note: RevisionNote | None) -> list[RevisionOut]:
    note = note or RevisionNote()
    return [
        RevisionOut(
            number=r.number,
            replaced_by=r.number + 1,
            replaced_at=r.created_at,
            reason=r.reason,
            correction=(r.number + 1) in note.corrections,
            status=r.status,
            urgency=r.urgency,
            next_step_at=r.next_step_at,
            texts={
                lang: UpdateTextOut(headline=x.headline, body=x.body, next_step=x.next_step)
                for lang, x in r.texts.items()
            },
        )
        for r in update.revisions
    ]


def demand_out(demand: Demand, language: str) -> dict[str, Any]:
    text = demand.text(language)
    return {
        "key": demand.key,
        "position": demand.position,
        "language": language,
        "title": text.title,
        "summary": text.summary,
        "union_position": text.union_position,
        "employer_offer": text.employer_offer,
        "facts": list(text.facts),
        "status": demand.status,
        "status_label": i18n.demand_status_label(demand.status, language),
        "updated_at": demand.updated_at,
        "texts": {
            lang: DemandTextOut(
                title=x.title,
                summary=x.summary,
                union_position=x.union_position,
                employer_offer=x.employer_offer,
                facts=list(x.facts),
            )
            for lang, x in demand.texts.items()
        },
    }


def demand_event_out(event: DemandEvent) -> DemandEventOut:
    return DemandEventOut(
        at=event.at,
        kind=event.kind,
        status=event.status,
        offer=dict(event.offer),
        source=event.source,
        note=event.note,
        changes={lang: {k: list(v) for k, v in f.items()} for lang, f in event.changes.items()},
    )


def colour_of(status: Status | None) -> str | None:
    return None if status is None else hex_colour(i18n.STATUS_COLOURS[status])
