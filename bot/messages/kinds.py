"""What a kind of campaign (a school, a hospital, transit...) says to the people it serves,
as data: the questions families ask first, what a briefing's "day" is, the statuses a
dispute goes through and their labels.

Each kind's defaults are here, their wording in the catalogues (`families.*` for a school,
as it always was; `kinds.<kind>.*` for the others); the campaign file overrides any of them
(`[campaign] kind`, `statuses`, `[status_labels]`, `[families]`, `[briefings] days`, see
docs/configuration.md). A school campaign without those keys reads exactly as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from bot import i18n
from bot.models import Campaign, CampaignKind, Status

__all__ = [
    "KINDS",
    "KindDefaults",
    "defaults",
    "families_title",
    "status_name",
    "status_term",
    "statuses",
]

WEEKDAYS = frozenset(range(5))
EVERY_DAY = frozenset(range(7))

# Every status in the order a dispute unfolds (what a campaign offers unless it lists its own).
ALL_STATUSES = (
    Status.BARGAINING,
    Status.STRIKE_VOTE,
    Status.STRIKE_NOTICE,
    Status.STRIKE_ON,
    Status.LOCKOUT,
    Status.TALKS_SCHEDULED,
    Status.TENTATIVE_AGREEMENT,
    Status.RATIFICATION_VOTE,
    Status.STRIKE_SUSPENDED,
    Status.STRIKE_OVER,
)


@dataclass(frozen=True, slots=True)
class Question:
    """A kind's standard question: its key in `[families]`, its catalogue context, and for
    the yes/no one (`open`), the sentences of each answer."""

    key: str
    context: str
    yes: str = ""
    no: str = ""


@dataclass(frozen=True, slots=True)
class KindDefaults:
    """What a kind of campaign says unless its file says otherwise."""

    questions: tuple[Question, ...]
    title: str  # the families' box's heading (catalogue context)
    briefing_days: frozenset[int]
    days_choice: str  # the sign-up choice for a briefing on `briefing_days` (context)
    statuses: tuple[Status, ...] = ALL_STATUSES


def _kind(name: str, *keys: str) -> tuple[Question, ...]:
    yes_or_no = Question(
        "open", f"kinds.{name}.open", f"kinds.{name}.open_yes", f"kinds.{name}.open_no"
    )
    kind = tuple(Question(k, f"kinds.{name}.{k}") for k in keys)
    return (yes_or_no, *kind, Question("ask", "families.ask"))


KINDS: Mapping[CampaignKind, KindDefaults] = {
    # Today's wording, unchanged: "Are schools open?", "Meals", "Questions?"
    CampaignKind.SCHOOL: KindDefaults(
        questions=(
            Question(
                "open", "families.schools", "families.schools_open", "families.schools_closed"
            ),
            Question("meals", "families.meals"),
            Question("ask", "families.ask"),
        ),
        title="families.title",
        briefing_days=WEEKDAYS,
        days_choice="signups.briefing",
    ),
    CampaignKind.HOSPITAL: KindDefaults(
        questions=_kind("hospital", "care"),
        title="kinds.hospital.title",
        briefing_days=EVERY_DAY,
        days_choice="signups.briefing_daily",
    ),
    CampaignKind.TRANSIT: KindDefaults(
        questions=_kind("transit", "service"),
        title="kinds.transit.title",
        briefing_days=EVERY_DAY,
        days_choice="signups.briefing_daily",
    ),
    CampaignKind.OTHER: KindDefaults(
        questions=_kind("other"),
        title="families.title",
        briefing_days=WEEKDAYS,
        days_choice="signups.briefing_weekdays",
    ),
}


def defaults(kind: CampaignKind | str) -> KindDefaults:
    return KINDS[CampaignKind(kind)]


def statuses(campaign: Campaign) -> tuple[Status, ...]:
    """The statuses the campaign offers, in order (its own list, else every one)."""
    return campaign.statuses or defaults(campaign.kind).statuses


def status_name(campaign: Campaign, status: Status, language: str) -> str:
    """A status's label for a reader: the campaign's own in their language, else the
    catalogue's."""
    own = campaign.status_labels.get(status, {})
    lang = i18n.pick(language)
    return own.get(lang) or i18n.status_label(status, lang)


def status_term(campaign: Campaign, status: Status) -> i18n.Term:
    """`status_name` as a piece of a sentence (`bot.i18n.Term`)."""
    own = campaign.status_labels.get(status, {})
    if not own:
        return i18n.status_term(status)
    return i18n.Term(lambda lang: status_name(campaign, status, lang), (f"status.{status.value}",))


def families_title(campaign: Campaign, language: str) -> str:
    """The heading of the families' answers: the campaign's own, else its kind's."""
    families = campaign.families
    own = families.title if families is not None else {}
    lang = i18n.pick(language)
    return own.get(lang) or i18n.text(lang, defaults(campaign.kind).title)


def briefing_days_choice(campaign: Campaign) -> str:
    """The catalogue context of the sign-up choice "a morning summary on <days>, plus urgent
    news" for the campaign's briefing days."""
    days = campaign.briefing_days
    kind = defaults(campaign.kind)
    if days == kind.briefing_days:
        return kind.days_choice
    if days == EVERY_DAY:
        return "signups.briefing_daily"
    if days == WEEKDAYS:
        return "signups.briefing_weekdays"
    return "signups.briefing_days"
