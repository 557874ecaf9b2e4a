"""The JSON API's wire shapes (pydantic), and the translation from domain types to them.

Responses are serialised through these models, and the OpenAPI document is generated from
the same models, so what the API sends and what it documents cannot drift apart.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainValidator,
    ValidationError,
    WithJsonSchema,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import ErrorDetails, PydanticCustomError

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
# Marks a per-language object in a model's schema; the document writes the campaign's
# languages into it: "default required" (the first language required), "some" (at least
# one), "enum" (a string naming one).
LANGUAGES = "x-strikebot-languages"
DEMAND_KEY = r"^[a-z0-9][a-z0-9_-]{0,63}$"
WEBHOOK_URL = r"^https?://[^\s/?#@:]+(:[0-9]{1,5})?([/?][^\s#]*)?$"
TRANSLATION_TARGET = r"^(update:[1-9][0-9]{0,9}|demand:[a-z0-9][a-z0-9_-]{0,63})$"
OfferText = Annotated[str, Field(min_length=1, max_length=OFFER_MAX, pattern=NON_BLANK)]


class BadRequest(Exception):
    """A request the API refuses before any use case runs (bad JSON, bad fields)."""

    def __init__(
        self, status: int, code: str, message: str, details: list[dict[str, Any]] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details


class _Out(BaseModel):
    model_config = ConfigDict(frozen=True)


# -- operations --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Operation:
    """How one route of the JSON API is documented (`_openapi` builds the document from the
    route table and these): its id and summary, its answers by status (the model answered
    with, or None, and what the status means), the body model it reads, the query
    parameters it takes (by name: lang, limit, after). Path parameters, the admin API's
    security and errors, and the public reads' caching come from the route itself."""

    id: str
    summary: str
    answers: Mapping[int, tuple[type[BaseModel] | None, str]]
    body: type[BaseModel] | None = None
    query: tuple[str, ...] = ()


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
    audience: AudienceOut = Field(
        description="whom it addresses: some sites and groups (codes), both empty for everyone"
    )


class AudienceOut(_Out):
    sites: list[str]
    groups: list[str]


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


class SpendOut(BaseModel):
    messages: int = Field(description="people it goes to on this platform")
    units: int = Field(description="what they cost, in the platform's units (text segments)")


SITE_CODE = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$"
SiteCode = Annotated[str, Field(pattern=SITE_CODE)]


class PreviewOut(BaseModel):
    """What posting would do (`?dry_run=true`): nothing is written."""

    dry_run: bool = True
    sentence: str = Field(description="what posting does, in the campaign's main language")
    channels: int = Field(description="chat channels it goes to")
    receivers: int = Field(description="webhook receivers it goes to")
    people: dict[str, SpendOut] = Field(description="per platform that reaches people one by one")
    preview: dict[str, dict[str, Any]] = Field(
        description="the update as members will see it, per language (the neutral message)"
    )


class ConfirmTranslationIn(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    target: str = Field(
        pattern=TRANSLATION_TARGET,
        description="the text: update:12 or demand:pay",
    )
    language: str = Field(
        min_length=2,
        max_length=16,
        description="the stale language",
        json_schema_extra={LANGUAGES: "enum"},
    )
    note: str = Field(
        default="", max_length=500, pattern=NO_NUL, description="why it still holds (audited)"
    )


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


class SiteOut(_Out):
    code: str = Field(description="what `?site=`, `/strike status` and `JOIN` take")
    name: str = Field(description="in the language asked for (else the first given)")
    names: dict[str, str] = Field(description="the name per language")
    address: str
    example: bool = Field(description="a demo's made-up row, not a real site")
    url: str = Field(description="the site's public page")


class SiteGroupOut(_Out):
    code: str
    name: str
    names: dict[str, str]
    example: bool
    url: str
    sites: list[SiteOut]


class SiteListOut(_Out):
    """The campaign's groups of sites (a local district, a region), each with its sites."""

    items: list[SiteGroupOut]


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
#
# Strict: a date-time is only an RFC 3339 string with its offset (never a number, a numeric
# string or a time without an offset), a boolean only a JSON boolean, a number only a JSON
# number; a field the schema does not mark nullable may be left out but never sent as null.
# Each rule the server enforces is stated in the schema, so what the schema allows is what
# the server takes. Bodies are read with `model_validate_json` (JSON's own types).

# The year range is the core's (bot.editorial.rules.YEARS: 1970-2200): other years are typos.
RFC3339 = (
    r"^(19[7-9][0-9]|2[01][0-9]{2}|2200)-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])"
    r"T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{1,6})?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$"
)
DATE_TIME_RULE = "an RFC 3339 date-time with its offset and a year from 1970 to 2200"
_RFC3339 = re.compile(RFC3339)


def _date_time(value: object) -> datetime:
    if isinstance(value, str) and _RFC3339.fullmatch(value):
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            raise PydanticCustomError(
                "date_time_day", "{value} is not a day of the calendar", {"value": value[:10]}
            ) from None
    raise PydanticCustomError(
        "rfc3339", "must be {rule}, e.g. 2019-01-22T06:00:00-08:00", {"rule": DATE_TIME_RULE}
    )


def _not_null(value: object) -> object:
    if value is None:
        raise PydanticCustomError("not_null", "may be left out, but not null", {})
    return value


DateTime = Annotated[
    datetime,
    PlainValidator(_date_time),
    WithJsonSchema({"type": "string", "format": "date-time", "pattern": RFC3339}),
]
if TYPE_CHECKING:
    T = TypeVar("T")
    Omittable: TypeAlias = T | None  # what type checkers see: None means "left out"
else:

    class Omittable:
        """`Omittable[X]`: a field that may be left out, but not sent as null (the schema does
        not say nullable). Python code sees `X | None`, None meaning "left out"."""

        def __class_getitem__(cls, item: object) -> object:
            return Annotated[item | SkipJsonSchema[None], BeforeValidator(_not_null)]


Headline = Annotated[str, Field(min_length=1, max_length=HEADLINE_MAX, pattern=NON_BLANK)]
Body = Annotated[str, Field(max_length=BODY_MAX, pattern=NO_NUL)]
NextStep = Annotated[str, Field(max_length=NEXT_STEP_MAX, pattern=NO_NUL)]
Reason = Annotated[str, Field(min_length=1, max_length=REASON_MAX, pattern=NON_BLANK)]
Wording = Annotated[str, Field(max_length=OFFER_MAX, pattern=NO_NUL)]


class _Strict(BaseModel):
    """A request body: unknown fields refused, JSON's own types only."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class UpdateTextIn(_Strict):
    headline: Headline
    body: Body = ""
    next_step: NextStep = ""


class UpdateTextPatch(_Strict):
    """Only the fields given change."""

    headline: Omittable[Headline] = None
    body: Omittable[Body] = None
    next_step: Omittable[NextStep] = None


class PostUpdateIn(_Strict):
    status: Status
    urgency: Urgency = Urgency.ROUTINE
    texts: dict[str, UpdateTextIn] = Field(
        description="one entry per language; the campaign's first language is required",
        json_schema_extra={LANGUAGES: "default required"},
    )
    next_step_at: Omittable[DateTime] = Field(
        default=None,
        description=f"when the next step happens: {DATE_TIME_RULE}; still ahead, unless `history`",
    )
    publish_at: Omittable[DateTime] = Field(
        default=None,
        description=f"embargo: publish at this time instead of now: {DATE_TIME_RULE}, and in "
        "the future (a past one is refused with 422)",
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
    sites: list[SiteCode] = Field(
        default=[],
        description="only for these sites (codes) and whoever follows them, their group or "
        "everything; with `groups` empty too, for everyone",
    )
    groups: list[SiteCode] = Field(
        default=[], description="only for these groups of sites (codes) and their sites"
    )


REASONS = (
    'the reason in other campaign languages, by language code, e.g. {"es": "..."}; '
    "`reason` is the first language's"
)


class EditUpdateIn(_Strict):
    """At least one of texts, status, urgency and next_step_at, with the reason."""

    model_config = ConfigDict(
        json_schema_extra={
            "anyOf": [{"required": [f]} for f in ("texts", "status", "urgency", "next_step_at")]
        }
    )

    reason: Reason
    reasons: Omittable[dict[str, Reason]] = Field(
        default=None, description=REASONS, json_schema_extra={LANGUAGES: "others"}
    )
    correction: bool = Field(
        default=False, description="also post a short visible correction note to every channel"
    )
    texts: Omittable[Annotated[dict[str, UpdateTextPatch], Field(min_length=1)]] = Field(
        default=None,
        description="new wording per language; fields left out keep their current text",
        json_schema_extra={LANGUAGES: "some"},
    )
    status: Omittable[Status] = None
    urgency: Omittable[Urgency] = None
    next_step_at: DateTime | None = Field(
        default=None,
        description=f"a new time for the next step ({DATE_TIME_RULE}; still ahead unless "
        "`history`); null removes it",
    )
    history: bool = Field(
        default=False, description="a past next-step time is what happened, not a mistake"
    )

    @model_validator(mode="after")
    def _something(self) -> EditUpdateIn:
        if not self.model_fields_set & {"texts", "status", "urgency", "next_step_at"}:
            raise PydanticCustomError(
                "nothing_to_change",
                "nothing to change: give texts, status, urgency or next_step_at with the reason",
                {},
            )
        return self


class RetractIn(_Strict):
    reason: Reason
    reasons: Omittable[dict[str, Reason]] = Field(
        default=None, description=REASONS, json_schema_extra={LANGUAGES: "others"}
    )


class DemandChangeIn(_Strict):
    """A new status, a new offer, or both, with where it comes from."""

    model_config = ConfigDict(
        json_schema_extra={"anyOf": [{"required": ["status"]}, {"required": ["offer"]}]}
    )

    status: Omittable[DemandStatus] = None
    offer: Omittable[Annotated[dict[str, OfferText], Field(min_length=1)]] = Field(
        default=None,
        description="the employer's new offer, per language",
        json_schema_extra={LANGUAGES: "some"},
    )
    source: str = Field(min_length=1, max_length=SOURCE_MAX, pattern=NON_BLANK)
    note: str = Field(default="", max_length=NOTE_MAX, pattern=NO_NUL)
    at: Omittable[DateTime] = Field(
        default=None,
        description=f"when the offer was made: {DATE_TIME_RULE}, never later than now (a later "
        "one is refused with 422); default now. An offer may be recorded days after it was made",
    )
    announce: bool = Field(
        default=False, description="also post an update about it to every subscribed channel"
    )

    @model_validator(mode="after")
    def _something(self) -> DemandChangeIn:
        if self.status is None and self.offer is None:
            raise PydanticCustomError(
                "nothing_to_record", "give a new status, a new offer, or both, with the source", {}
            )
        return self


FactText = Annotated[str, Field(min_length=1, max_length=500, pattern=NON_BLANK)]


class DemandWordingIn(_Strict):
    """One language's wording; only the fields given change (`facts` replaces the list)."""

    model_config = ConfigDict(json_schema_extra={"minProperties": 1})

    title: Omittable[Headline] = None
    summary: Omittable[Wording] = None
    union_position: Omittable[Wording] = None
    employer_offer: Omittable[Wording] = None
    facts: Omittable[Annotated[list[FactText], Field(max_length=20)]] = None

    @model_validator(mode="after")
    def _something(self) -> DemandWordingIn:
        if not self.model_fields_set:
            raise PydanticCustomError("empty_wording", "give at least one field to change", {})
        return self


class NewDemandWordingIn(DemandWordingIn):
    """A new demand's wording in one language: a title, and any other field."""

    title: Headline


class DemandEditIn(_Strict):
    model_config = ConfigDict(
        json_schema_extra={"anyOf": [{"required": ["texts"]}, {"required": ["status"]}]}
    )

    texts: Omittable[Annotated[dict[str, DemandWordingIn], Field(min_length=1)]] = Field(
        default=None,
        description="per language, the fields to change",
        json_schema_extra={LANGUAGES: "some"},
    )
    status: Omittable[DemandStatus] = None
    reason: Reason
    announce: bool = Field(
        default=False, description="also post an update about it to every subscribed channel"
    )

    @model_validator(mode="after")
    def _something(self) -> DemandEditIn:
        if self.texts is None and self.status is None:
            raise PydanticCustomError(
                "nothing_to_change", "nothing to change: give texts, status or both", {}
            )
        return self


class DemandAddIn(_Strict):
    key: str = Field(pattern=DEMAND_KEY)
    texts: dict[str, NewDemandWordingIn] = Field(
        description="per language, each with a title; the campaign's first is required",
        json_schema_extra={LANGUAGES: "default required"},
    )
    status: DemandStatus = DemandStatus.OPEN
    reason: str = Field(default="", max_length=NOTE_MAX, pattern=NO_NUL)
    announce: bool = False


class DemandRetireIn(_Strict):
    reason: Reason
    announce: bool = False


PlaceName = Annotated[str, Field(min_length=1, max_length=200, pattern=NON_BLANK)]
Address = Annotated[str, Field(max_length=500, pattern=NO_NUL)]


class PlaceIn(_Strict):
    """A site (in a group) or a group of sites, as a line of `strikebot sites import`."""

    kind: Literal["site", "group"] = "site"
    code: SiteCode = Field(description="letters, digits, - and _, 32 at most (read in any case)")
    names: dict[str, PlaceName] = Field(
        description="the name per language; the campaign's first language is required",
        json_schema_extra={LANGUAGES: "default required"},
    )
    group: Omittable[SiteCode] = Field(
        default=None,
        description="a site's group, a stored group's code (required for a site; a group has "
        "none: 422 otherwise)",
    )
    address: Address = Field(default="", description="a site's (a group has none)")
    example: bool = Field(default=False, description="a demo's made-up row")


class PlacePatchIn(_Strict):
    """Rename (the languages given; the others kept), move a site to another group, or
    change its address."""

    model_config = ConfigDict(
        json_schema_extra={"anyOf": [{"required": [f]} for f in ("names", "group", "address")]}
    )

    names: Omittable[Annotated[dict[str, PlaceName], Field(min_length=1)]] = Field(
        default=None, json_schema_extra={LANGUAGES: "some"}
    )
    group: Omittable[SiteCode] = Field(
        default=None, description="move the site to this stored group (a group has none: 422)"
    )
    address: Omittable[Address] = Field(default=None, description="a site's (a group has none)")

    @model_validator(mode="after")
    def _something(self) -> PlacePatchIn:
        if not self.model_fields_set & {"names", "group", "address"}:
            raise PydanticCustomError(
                "nothing_to_change", "nothing to change: give names, group or address", {}
            )
        return self


class PlaceOut(_Out):
    """A site or a group, as stored, with how many channels and people follow it."""

    kind: Literal["site", "group"]
    code: str
    names: dict[str, str]
    group: str | None = Field(description="a site's group; null for a group")
    address: str
    example: bool
    followers: int = Field(description="channels and people following it (active)")


class PlaceListOut(_Out):
    """Every group, then every site (by group, then code)."""

    items: list[PlaceOut]


class EmptyIn(_Strict):
    """A body with nothing in it: `{}`, or no body at all."""


# -- what a refused body is told ------------------------------------------------------

# Union members name themselves in an error's location ("constrained-str", "dict[...]",
# "none"); a person reads only the fields.
_UNION_TAGS = frozenset({"str", "int", "bool", "float", "none", "constrained-str"})
_PATTERN_RULES = {
    NON_BLANK: "needs at least one character that shows (not only spaces)",
    NO_NUL: "may not contain NUL characters (\\u0000)",
    DEMAND_KEY: "must be a key of lower-case letters, digits, '-' or '_' (at most 64), "
    "starting with a letter or a digit, e.g. class-size",
    TRANSLATION_TARGET: "must name the text as update:<number> or demand:<key>, e.g. update:12",
    WEBHOOK_URL: "must be an address that starts with https:// (or http://) and names a host, "
    "without a user name, password or #fragment, e.g. https://hooks.example.org/strike",
}


def pattern_rule(pattern: str) -> str:
    """What a string that must match `pattern` must be, in words."""
    return _PATTERN_RULES.get(pattern, f"is not in the form the schema gives ({pattern})")


def problems(exc: ValidationError) -> list[dict[str, str]]:
    """Each problem of a refused body, once per field, in words: {"field", "problem"}."""
    found: dict[str, str] = {}
    errors = exc.errors(include_url=False)
    real = [e for e in errors if e["type"] != "none_required"] or errors
    for error in real:
        parts = [str(p) for p in error["loc"] if not (str(p) in _UNION_TAGS or "[" in str(p))]
        field = ".".join(parts) or "(body)"
        found.setdefault(field, _problem(error))
    return [{"field": field, "problem": problem} for field, problem in found.items()]


def query_flag(query: Mapping[str, str], name: str) -> bool:
    """A boolean query parameter, as the schema gives it: `true` or `false` (left out:
    false). Anything else, or another parameter, is a 400 saying so, not silently ignored."""
    other = next((key for key in query if key != name), None)
    if other is not None:
        raise BadRequest(
            400, "bad_query", f"{other[:40]!r} is not a parameter here; the only one is {name}."
        )
    value = query.get(name)
    if value is None or value == "false":
        return False
    if value == "true":
        return True
    raise BadRequest(
        400, "bad_query", f"{name}={value[:40]!r} is not a flag; write {name}=true or leave it out."
    )


def refusal(found: list[dict[str, str]]) -> str:
    """The sentence a refused body is told: its first problem, and what to do."""
    first = found[0]
    said = first["problem"]
    if first["field"] == "(body)":
        said = said[:1].upper() + said[1:]
    else:
        said = f"{first['field']}: {said}"
    return f"{said}. Fix it and send the request again (the schema is at /api/v1/openapi.json)."


def _problem(error: ErrorDetails) -> str:
    kind, ctx = error["type"], error.get("ctx") or {}
    value = error.get("input")
    if kind == "missing":
        return "is required"
    if kind == "extra_forbidden":
        return "is not a field of this request (the schema at /api/v1/openapi.json lists them)"
    if kind == "none_required":
        return "may be left out, but not null"
    if kind == "string_too_short":
        n = int(ctx.get("min_length", 1))
        return "may not be empty" if n == 1 else f"needs at least {n} characters"
    if kind == "string_too_long":
        return f"is longer than its {ctx.get('max_length')} characters"
    if kind == "string_pattern_mismatch":
        return pattern_rule(str(ctx.get("pattern", "")))
    if kind == "too_short":
        noun = "character" if isinstance(value, str) else "entry"
        return f"needs at least {ctx.get('min_length')} {noun}"
    if kind == "too_long":
        return f"has more than {ctx.get('max_length')} entries"
    if kind == "enum":
        return f"must be one of: {ctx.get('expected')}"
    if kind == "bool_type":
        return "must be true or false (a JSON boolean, not a number or a string)"
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return "must be a whole number (a JSON number)"
    if kind in ("string_type", "string_unicode"):
        return "must be a string"
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        return "must be an object"
    if kind == "list_type":
        return "must be a list"
    if kind in ("time_type", "time_parsing"):
        return "must be a time of day as HH:MM, e.g. 07:00"
    return str(error["msg"]).removeprefix("Value error, ")


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
        "audience": AudienceOut(
            sites=list(update.audience.sites), groups=list(update.audience.groups)
        ),
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
