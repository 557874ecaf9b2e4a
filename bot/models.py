"""The domain: frozen value types shared by the store, the use cases and every adapter.

Nothing here knows about SQL or any platform. Datetimes are always timezone-aware UTC;
local times are derived with `zoneinfo` at the edges.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, time
from enum import StrEnum
from typing import TypeAlias, TypeVar


class Contact(StrEnum):
    """The kinds of personal address a delivering plugin may reach (`Plugin.contact`)."""

    EMAIL = "email"
    PHONE = "phone"  # a mobile number, reached by text
    WHATSAPP = "whatsapp"  # a number that wrote on WhatsApp first
    PUSH = "push"  # a browser's Web Push subscription: its endpoint (and keys)


class Status(StrEnum):
    """Where the dispute stands. Ordered roughly as a strike unfolds (a campaign offers its
    own list of them, `Campaign.statuses`)."""

    BARGAINING = "bargaining"
    STRIKE_VOTE = "strike_vote"
    STRIKE_NOTICE = "strike_notice"  # notice of a strike given (often required by law)
    STRIKE_ON = "strike_on"
    LOCKOUT = "lockout"  # the employer keeps members out
    TALKS_SCHEDULED = "talks_scheduled"
    TENTATIVE_AGREEMENT = "tentative_agreement"
    RATIFICATION_VOTE = "ratification_vote"
    STRIKE_SUSPENDED = "strike_suspended"
    STRIKE_OVER = "strike_over"

    @property
    def on_strike(self) -> bool:
        """True while members are out (talks during a strike keep the strike on)."""
        return self in {Status.STRIKE_ON, Status.TALKS_SCHEDULED}


class Urgency(StrEnum):
    ROUTINE = "routine"
    IMPORTANT = "important"
    URGENT = "urgent"


class UpdateState(StrEnum):
    PENDING_APPROVAL = "pending_approval"
    SCHEDULED = "scheduled"
    PUBLISHED = "published"
    RETRACTED = "retracted"


class DemandChange(StrEnum):
    """What one entry of a demand's history records."""

    OFFER = "offer"
    EDIT = "edit"
    ADDED = "added"
    RETIRED = "retired"


class DemandStatus(StrEnum):
    OPEN = "open"
    OFFER_ON_TABLE = "offer_on_table"
    TENTATIVE_AGREEMENT = "tentative_agreement"
    WON = "won"
    WITHDRAWN = "withdrawn"


# A platform is named by its plugin ("console", and whatever else is installed): the core
# knows no platform by name (see `bot.plugins`).
Platform: TypeAlias = str


class DeliveryAction(StrEnum):
    POST = "post"
    EDIT = "edit"
    CORRECTION = "correction"
    RETRACT = "retract"
    BRIEFING = "briefing"
    NOTICE = "notice"
    CONFIRM = "confirm"  # asks a person who signed up to confirm; reaches them unsubscribed
    EVENT = "event"  # a document for machines (`bot.delivery.events`), not tied to one update


class DeliveryState(StrEnum):
    PENDING = "pending"
    SENT = "sent"
    DEAD = "dead"
    CANCELLED = "cancelled"


ALL_URGENCIES: frozenset[Urgency] = frozenset(Urgency)

T = TypeVar("T", str, tuple[str, ...])


def wording(texts: Mapping[str, T], language: str, main: str | None = None) -> tuple[T | None, str]:
    """The one fallback rule for what people wrote, per field: the text in `language` when
    it has one, else the main language's (`main`, default the first written), else any
    language's; with the language it is in. (None, `language`) when no language has one.
    `bot.messages.fallback` marks a fallen-back text for the reader ("(in English)")."""
    own = texts.get(language)
    if own:
        return own, language
    order = [main] if main else []
    order += [lang for lang in texts if lang != main]
    for lang in order:
        found = texts.get(lang) if lang else None
        if found:
            return found, lang
    return None, language


class CampaignKind(StrEnum):
    """What the campaign's workplace is: it decides the wording families read by default
    (`bot.messages.kinds`): "Are schools open?" for a school, never for a hospital."""

    SCHOOL = "school"
    HOSPITAL = "hospital"
    TRANSIT = "transit"
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class FamilyQuestion:
    """One question families ask first, with its answer by language: one of the kind's
    (`context`, a catalogue message; `key` names it in `[families]`) or the campaign's own
    (`wording` by language). `verdict` answers a yes/no one ("Yes, schools are open.",
    the sentences `yes` and `no`) before the answer's text."""

    answer: Mapping[str, str] = field(default_factory=dict)
    key: str = ""
    context: str = ""
    wording: Mapping[str, str] = field(default_factory=dict)
    verdict: bool | None = None
    yes: str = ""
    no: str = ""


@dataclass(frozen=True, slots=True)
class Families:
    """What families ask first, from the campaign file's `[families]`, in order. Each text
    by language; a missing language falls back to the first (`bot.messages.fallback`).
    `title` is the campaign's own heading for them, if any."""

    questions: tuple[FamilyQuestion, ...] = ()
    title: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Campaign:
    slug: str
    union: str
    employer: str
    start_date: date
    timezone: str
    languages: tuple[str, ...]
    public_url: str
    require_approval: bool = False
    # When the strike itself began (day 1). None until a strike starts.
    strike_start: date | None = None
    families: Families | None = None
    kind: CampaignKind = CampaignKind.SCHOOL
    # The statuses offered, in order; () for the kind's (`bot.messages.kinds.statuses`).
    statuses: tuple[Status, ...] = ()
    # The campaign's own label of a status, by language (else the catalogue's).
    status_labels: Mapping[Status, Mapping[str, str]] = field(default_factory=dict)
    # The days a family's morning briefing comes (0 = Monday): school days by default.
    briefing_days: frozenset[int] = frozenset(range(5))

    @property
    def default_language(self) -> str:
        return self.languages[0]

    @property
    def short_union(self) -> str:
        """Who a text says is sending: "UTLA" for "United Teachers Los Angeles (UTLA)"."""
        union = self.union
        if union.endswith(")") and "(" in union:
            return union[union.rindex("(") + 1 : -1].strip() or union
        return union


@dataclass(frozen=True, slots=True)
class Audience:
    """Whom an update addresses, or what a subscription follows: some sites and some groups
    of sites (codes, lower case, sorted); neither means everyone (everything). A site is
    in its group's audience, and a group's follower gets its sites' news (`bot.audiences`)."""

    sites: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()

    @property
    def everyone(self) -> bool:
        return not self.sites and not self.groups

    def to_json(self) -> dict[str, list[str]] | None:
        """None for everyone, else {"sites": [...], "groups": [...]}."""
        if self.everyone:
            return None
        return {"sites": list(self.sites), "groups": list(self.groups)}

    @classmethod
    def from_json(cls, data: Mapping[str, object] | None) -> Audience:
        if not data:
            return EVERYONE
        return cls.of(_codes(data.get("sites")), _codes(data.get("groups")))

    @classmethod
    def of(cls, sites: object = (), groups: object = ()) -> Audience:
        """An audience from any iterables of codes (normalised, sorted, once each)."""
        return cls(_codes(sites), _codes(groups))

    def describe(self) -> str:
        """ "sites 101, 102; groups east" (codes only), "everyone"."""
        parts = []
        if self.sites:
            parts.append("sites " + ", ".join(self.sites))
        if self.groups:
            parts.append("groups " + ", ".join(self.groups))
        return "; ".join(parts) or "everyone"


def _codes(values: object) -> tuple[str, ...]:
    if not values:
        return ()
    items = values.split(",") if isinstance(values, str) else values
    assert isinstance(items, (list, tuple, set, frozenset))
    return tuple(sorted({str(v).strip().lower() for v in items if str(v).strip()}))


EVERYONE = Audience()


@dataclass(frozen=True, slots=True)
class SiteGroup:
    """A group of sites: a region, a local district, a campus. `names` by language."""

    code: str
    names: Mapping[str, str]
    example: bool = False

    def name(self, language: str) -> str:
        return self.names.get(language) or next(iter(self.names.values()), self.code)


@dataclass(frozen=True, slots=True)
class Site:
    """A school, a worksite, a depot: a short code people type, a name in each language,
    the group it is in and, optionally, where it is. `example` marks a demo's made-up row."""

    code: str
    names: Mapping[str, str]
    group: str
    address: str = ""
    example: bool = False

    def name(self, language: str) -> str:
        return self.names.get(language) or next(iter(self.names.values()), self.code)


@dataclass(frozen=True, slots=True)
class UpdateText:
    """One language's wording of an update."""

    headline: str
    body: str = ""
    next_step: str = ""


def _only(reason: str, texts: Mapping[str, UpdateText]) -> Mapping[str, str]:
    """A reason given in one language only: the language the update was first written in."""
    if not reason:
        return {}
    return {next(iter(texts), ""): reason}


@dataclass(frozen=True, slots=True)
class Revision:
    """The text of an update as it stood before an edit, with who changed it and why."""

    number: int
    texts: Mapping[str, UpdateText]
    status: Status
    urgency: Urgency
    next_step_at: datetime | None
    editor: str
    reason: str  # in the main language
    created_at: datetime
    # The reason in each language it was given in (the main language's included).
    reasons: Mapping[str, str] = field(default_factory=dict)

    def reason_texts(self) -> Mapping[str, str]:
        """The reason by language: `reasons`, else `reason` as the first text's language's."""
        return self.reasons or _only(self.reason, self.texts)


@dataclass(frozen=True, slots=True)
class Update:
    id: int
    status: Status
    urgency: Urgency
    texts: Mapping[str, UpdateText]
    author: str
    created_at: datetime
    state: UpdateState
    revision: int = 1
    next_step_at: datetime | None = None
    publish_at: datetime | None = None
    published_at: datetime | None = None
    approved_by: str | None = None
    retracted_at: datetime | None = None
    retracted_by: str | None = None
    retraction_reason: str | None = None  # in the main language
    seed_key: str | None = None
    revisions: tuple[Revision, ...] = ()
    # The retraction's reason in each language it was given in (the main one's included).
    retraction_reasons: Mapping[str, str] = field(default_factory=dict)
    audience: Audience = EVERYONE  # whom it addresses

    def retraction_reason_texts(self) -> Mapping[str, str]:
        """The retraction's reason by language (see `Revision.reason_texts`)."""
        return self.retraction_reasons or _only(self.retraction_reason or "", self.texts)

    def text(self, language: str, main: str | None = None) -> UpdateText:
        """The wording in `language`, field by field: a field it leaves empty (or all of
        them, when it has no text) is the main language's (`main`, default the first
        written). Unmarked: `bot.messages.fallback` says where a reader's text fell back."""
        texts = self.texts
        return UpdateText(
            *(
                wording({k: getattr(t, name) for k, t in texts.items()}, language, main)[0] or ""
                for name in ("headline", "body", "next_step")
            )
        )

    @property
    def retracted(self) -> bool:
        return self.state is UpdateState.RETRACTED

    @property
    def effective_at(self) -> datetime:
        """When the update took (or takes) effect: published, else embargo, else created."""
        return self.published_at or self.publish_at or self.created_at


@dataclass(frozen=True, slots=True)
class DemandText:
    title: str
    summary: str = ""
    union_position: str = ""
    employer_offer: str = ""
    facts: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class DemandEvent:
    """A dated change to a demand. `kind` OFFER: a new offer and/or a status move, with its
    source, dated when it was made (`at`, which may be before `recorded_at`). EDIT: fields
    re-worded (`changes`: language -> field -> [before, after]), with the reason in `note`.
    ADDED, RETIRED: the demand joined or left the list (a retired one keeps its history)."""

    at: datetime
    status: DemandStatus
    offer: Mapping[str, str]
    source: str
    recorded_by: str
    note: str = ""
    kind: DemandChange = DemandChange.OFFER
    changes: Mapping[str, Mapping[str, tuple[str, str]]] = field(default_factory=dict)
    recorded_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Demand:
    key: str
    position: int
    status: DemandStatus
    texts: Mapping[str, DemandText]
    updated_at: datetime
    history: tuple[DemandEvent, ...] = ()
    retired_at: datetime | None = None

    def text(self, language: str, main: str | None = None) -> DemandText:
        """The wording in `language`, field by field (each empty field is the main
        language's, `main`, default the first written), as `Update.text`."""
        texts = self.texts

        def field(name: str) -> str:
            return wording({k: getattr(t, name) for k, t in texts.items()}, language, main)[0] or ""

        facts, _ = wording({k: t.facts for k, t in texts.items()}, language, main)
        return DemandText(
            field("title"),
            field("summary"),
            field("union_position"),
            field("employer_offer"),
            facts or (),
        )


@dataclass(frozen=True, slots=True)
class QuietHours:
    """Local hours during which routine updates wait. `start` may be after `end` (overnight)."""

    start: time
    end: time

    def contains(self, local: time) -> bool:
        if self.start <= self.end:
            return self.start <= local < self.end
        return local >= self.start or local < self.end


@dataclass(frozen=True, slots=True)
class Subscription:
    id: int
    platform: Platform
    workspace: str
    channel: str
    language: str
    urgencies: frozenset[Urgency] = ALL_URGENCIES
    briefing_time: time | None = None
    timezone: str = "UTC"
    briefing_days: frozenset[int] = frozenset(range(7))  # 0 = Monday, as date.weekday()
    quiet_hours: QuietHours | None = None
    broken_reason: str | None = None
    created_at: datetime | None = None
    label: str = ""
    follows: Audience = EVERYONE  # what it receives

    @property
    def address(self) -> str:
        return f"{self.platform}:{self.workspace}/{self.channel}"


@dataclass(frozen=True, slots=True)
class Subscriber:
    """A person who signed up by e-mail or text (`bot.people.signups`). `key` is opaque and random:
    it is their subscription's channel and the only way anything else names them. The
    address is personal data: it is left out of `repr` so no log line can carry it."""

    id: int
    key: str
    kind: str  # bot.contacts.Contact
    address: str = field(repr=False)
    language: str
    choice: str  # bot.signups.Choice
    state: str  # "pending" until confirmed, then "confirmed"
    manage_token: str = field(repr=False)
    signed_up_at: datetime
    signed_up_via: str
    subscription_id: int | None = None
    confirmed_at: datetime | None = None
    confirmed_via: str | None = None
    confirm_expires: datetime | None = None
    requested: Mapping[str, str] | None = None
    last_confirmation_at: datetime | None = None
    confirmations_today: int = 0
    confirmations_since: datetime | None = None
    broken_reason: str | None = None
    broken_at: datetime | None = None
    # A browser push subscription's keys (p256dh, auth); secret like the address.
    keys: Mapping[str, str] | None = field(default=None, repr=False)
    heard_at: datetime | None = None  # when they last wrote (WhatsApp's 24-hour window)

    @property
    def confirmed(self) -> bool:
        return self.state == "confirmed"


@dataclass(frozen=True, slots=True)
class Delivery:
    id: str
    dedupe_key: str
    subscription_id: int
    platform: Platform
    action: DeliveryAction
    state: DeliveryState
    created_at: datetime
    not_before: datetime
    update_id: int | None = None
    revision: int = 0
    attempts: int = 0
    platform_message_id: str | None = None
    last_error: str | None = None
    sent_at: datetime | None = None
    payload: Mapping[str, object] | None = None
    # When an attempt's outcome became unknown (it may be on the platform already).
    in_doubt_since: datetime | None = None
    # The shared payload (`bot.store.shared_payloads`) `payload` was read from, if any.
    shared_payload_id: int | None = None


@dataclass(frozen=True, slots=True)
class AuditEntry:
    id: int
    at: datetime
    actor: str
    action: str
    target: str
    before: Mapping[str, object] | None = None
    after: Mapping[str, object] | None = None


@dataclass(frozen=True, slots=True)
class Actor:
    """Who is acting, as an adapter saw them. `id` is what the audit log records."""

    platform: Platform
    user_id: str
    display_name: str = ""
    roles: frozenset[str] = field(default_factory=frozenset)
    platform_admin: bool = False  # the platform says they administer the place (a server)

    @property
    def id(self) -> str:
        name = f" ({self.display_name})" if self.display_name else ""
        return f"{self.platform}:{self.user_id}{name}"


@dataclass(frozen=True, slots=True)
class WebhookEndpoint:
    """A receiver of events (`bot.delivery.events`): a subscription on the webhook platform,
    with its URL and the secret that signs what it is sent. `id` is the subscription's id."""

    id: int
    url: str
    secret: str
    subscription: Subscription
    created_at: datetime
    created_by: str
    description: str = ""
    active: bool = True
    failing_since: datetime | None = None
    last_success_at: datetime | None = None
    last_error: str | None = None

    @property
    def disabled_reason(self) -> str | None:
        return self.subscription.broken_reason
