"""Presentation: page wording in en/es, local times, countdowns, colours with enough contrast.

Everything here is a pure function of its arguments (time is passed in), so the pages are
tested with fixed clocks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from bot.ports import Campaign, Demand, DemandStatus, Update, fallback, i18n, kinds

from ._data import RevisionNote

TEXT = i18n.Words("web")


BODY_PREVIEW = 600  # characters of a timeline body shown on the status page


def paragraphs_of(text: str) -> list[str]:
    """Split plain text on blank lines; single newlines stay inside a paragraph."""
    return [p.strip() for p in text.replace("\r\n", "\n").split("\n\n") if p.strip()]


def say(language: str, key: str, /, **values: object) -> str:
    """Sentence `key` of the page, whole in one language (`i18n.Term` values are said in
    the sentence's language: a half-translated catalogue never mixes two)."""
    return TEXT.say(language, key, **values)


def span(delta: timedelta, language: str) -> str:
    """'2 days and 20 hours' / '2 días y 20 horas' (two largest units, whole minutes; CLDR
    units and lists)."""
    minutes = int(abs(delta).total_seconds() // 60)
    if minutes < 1:
        return say(language, "under_a_minute")
    days, rest = divmod(minutes, 24 * 60)
    hours, mins = divmod(rest, 60)
    parts = [(days, "day"), (hours, "hour"), (mins, "minute")]
    shown = [(n, unit) for n, unit in parts if n][:2]
    if days and not hours:
        shown = [(days, "day")]
    return i18n.format_list(
        [i18n.format_duration(n, unit, language) for n, unit in shown], language, "unit"
    )


def countdown(target: datetime, now: datetime, language: str) -> str:
    if abs(target - now) < timedelta(minutes=1):
        return say(language, "now")
    key = "in" if target > now else "ago"
    return say(language, key, span=i18n.local(lambda lang: span(target - now, lang)))


def html_time(moment: datetime) -> str:
    """A `<time datetime>` value HTML accepts: UTC to the second, `2019-01-18T17:05:12Z`
    (Python's `isoformat` gives six-digit fractions, which the HTML standard refuses)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def local(moment: datetime, campaign: Campaign) -> datetime:
    return moment.astimezone(ZoneInfo(campaign.timezone))


def when(moment: datetime, campaign: Campaign, language: str, now: datetime | None) -> str:
    """The local date and time, with the year when it is not `now`'s year."""
    today = local(now, campaign).date() if now is not None else None
    return i18n.format_datetime(local(moment, campaign), language, today)


def when_term(moment: datetime, campaign: Campaign, now: datetime | None) -> i18n.Term:
    """`when` as a piece of a sentence, said in the sentence's language."""
    return i18n.local(lambda language: when(moment, campaign, language, now))


# -- colours -------------------------------------------------------------------------


def _luminance(rgb: int) -> float:
    def channel(c: int) -> float:
        s = c / 255
        return s / 12.92 if s <= 0.03928 else ((s + 0.055) / 1.055) ** 2.4

    r, g, b = (rgb >> 16) & 0xFF, (rgb >> 8) & 0xFF, rgb & 0xFF
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: int, b: int) -> float:
    """WCAG contrast ratio between two colours (1 to 21)."""
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


WHITE, INK = 0xFFFFFF, 0x111111


def _mix(colour: int, towards: int, amount: float) -> int:
    out = 0
    for shift in (16, 8, 0):
        a, b = (colour >> shift) & 0xFF, (towards >> shift) & 0xFF
        out |= round(a + (b - a) * amount) << shift
    return out


def readable(colour: int, minimum: float = 4.5) -> tuple[int, int]:
    """(background, text) for `colour`: nudged darker or lighter, as little as needed, until
    the better of white or near-black text reaches `minimum` contrast (WCAG AA)."""
    steps = 0
    while steps <= 50:
        amount = steps / 50
        for background, text in ((_mix(colour, 0x000000, amount), WHITE),
                                 (_mix(colour, 0xFFFFFF, amount), INK)):  # fmt: skip
            if contrast(background, text) >= minimum:
                return background, text
        steps += 1
    return 0x000000, WHITE


def hex_colour(value: int) -> str:
    return f"#{value:06X}"


# Demand status chips: calm backgrounds; only "won" is a strong colour.
DEMAND_COLOURS: dict[DemandStatus, int] = {
    DemandStatus.OPEN: 0xE9ECEF,
    DemandStatus.OFFER_ON_TABLE: 0xFFF3BF,
    DemandStatus.TENTATIVE_AGREEMENT: 0xD3F9D8,
    DemandStatus.WON: 0x2B8A3E,
    DemandStatus.WITHDRAWN: 0x495057,
}


def chip_css() -> str:
    """One CSS class per status colour (`.s-strike_on`, `.d-won`), text colour by contrast."""
    named = [(f"s-{s}", c) for s, c in i18n.STATUS_COLOURS.items()]
    named += [(f"d-{d}", c) for d, c in DEMAND_COLOURS.items()]
    named.append(("s-none", 0xE9ECEF))  # before the first update
    rules = []
    for name, colour in named:
        background, text = readable(colour)
        rules.append(f".{name}{{background:{hex_colour(background)};color:{hex_colour(text)}}}")
    return "".join(rules)


# -- view models -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EditView:
    number: int  # the revision this edit created
    when: str
    iso: str
    reason: str
    correction: bool


@dataclass(frozen=True, slots=True)
class OldVersionView:
    """An earlier wording of an update, as the history on its page shows it."""

    number: int
    headline: str
    body: str
    next_step: str
    status_label: str
    status_class: str
    replaced_when: str
    replaced_iso: str
    reason: str
    correction: bool
    language: str = ""

    @property
    def revision_title(self) -> str:
        return say(self.language, "revision", n=self.number)

    @property
    def replaced_text(self) -> str:
        return say(self.language, "replaced", when=self.replaced_when)


@dataclass(frozen=True, slots=True)
class EntryView:
    id: int
    href: str
    status_label: str
    status_class: str
    headline: str
    body: str
    trimmed: bool
    next_step: str
    next_step_when: str
    next_step_iso: str
    when: str
    iso: str
    retracted: bool
    retraction_reason: str
    retracted_when: str
    retracted_iso: str
    revision: int
    edits: tuple[EditView, ...] = ()
    old_versions: tuple[OldVersionView, ...] = ()

    @property
    def corrected(self) -> bool:
        return any(e.correction for e in self.edits)


@dataclass(frozen=True, slots=True)
class DemandView:
    key: str
    title: str
    summary: str
    union_position: str
    employer_offer: str
    status_label: str
    status: str
    last_change: str
    last_change_iso: str
    facts: tuple[str, ...] = field(default_factory=tuple)


def page_prefix(language: str, campaign: Campaign) -> str:
    """'' for the default language, '/es' for another."""
    return "" if language == campaign.default_language else f"/{language}"


def entry_view(
    update: Update,
    campaign: Campaign,
    language: str,
    note: RevisionNote | None,
    *,
    preview: int | None = BODY_PREVIEW,
    with_history: bool = False,
    now: datetime | None = None,
) -> EntryView:
    text = fallback.shown_update(update, language, campaign.default_language)
    body = text.body
    trimmed = False
    if preview is not None and len(body) > preview:
        cut = body[:preview].rsplit(" ", 1)[0].rstrip(" ,.;:")
        body, trimmed = cut + "…", True
    note = note or RevisionNote()
    edits: list[EditView] = []
    old: list[OldVersionView] = []
    for revision in update.revisions:
        created = revision.number + 1
        correction = created in note.corrections
        edits.append(
            EditView(
                created,
                when(revision.created_at, campaign, language, now),
                html_time(revision.created_at),
                fallback.shown(revision.reason_texts(), language, campaign.default_language),
                correction,
            )
        )
        if with_history:
            before = revision.texts.get(language) or next(iter(revision.texts.values()))
            old.append(
                OldVersionView(
                    number=revision.number,
                    headline=before.headline,
                    body=before.body,
                    next_step=before.next_step,
                    status_label=kinds.status_name(campaign, revision.status, language),
                    status_class=str(revision.status),
                    replaced_when=when(revision.created_at, campaign, language, now),
                    replaced_iso=html_time(revision.created_at),
                    reason=fallback.shown(
                        revision.reason_texts(), language, campaign.default_language
                    ),
                    correction=correction,
                    language=language,
                )
            )
    effective = update.effective_at
    return EntryView(
        id=update.id,
        href=f"{page_prefix(language, campaign)}/updates/{update.id}",
        status_label=kinds.status_name(campaign, update.status, language),
        status_class=str(update.status),
        headline=text.headline,
        body=body,
        trimmed=trimmed,
        next_step=text.next_step,
        next_step_when=when(update.next_step_at, campaign, language, now)
        if update.next_step_at
        else "",
        next_step_iso=html_time(update.next_step_at) if update.next_step_at else "",
        when=when(effective, campaign, language, now),
        iso=html_time(effective),
        retracted=update.retracted,
        retraction_reason=fallback.shown(
            update.retraction_reason_texts(), language, campaign.default_language
        ),
        retracted_when=when(update.retracted_at, campaign, language, now)
        if update.retracted_at
        else "",
        retracted_iso=html_time(update.retracted_at) if update.retracted_at else "",
        revision=update.revision,
        edits=tuple(reversed(edits)),
        old_versions=tuple(reversed(old)),
    )


def last_change(update: Update) -> datetime:
    """The latest moment anything shown of `update` changed (posted, edited, retracted)."""
    moments = [update.effective_at]
    moments += [r.created_at for r in update.revisions]
    if update.retracted_at:
        moments.append(update.retracted_at)
    return max(moments)


def demand_view(
    demand: Demand, campaign: Campaign, language: str, now: datetime | None = None
) -> DemandView:
    text = fallback.shown_demand(demand, language, campaign.default_language)
    return DemandView(
        key=demand.key,
        title=text.title,
        summary=text.summary,
        union_position=text.union_position,
        employer_offer=text.employer_offer,
        status_label=i18n.demand_status_label(demand.status, language),
        status=str(demand.status),
        last_change=i18n.format_date(
            local(demand.updated_at, campaign).date(),
            language,
            local(now, campaign).date() if now is not None else None,
        ),
        last_change_iso=html_time(demand.updated_at),
        facts=text.facts,
    )


def day_number(campaign: Campaign, current: Update | None, now: datetime) -> int | None:
    """Day N of the strike while members are out; None otherwise."""
    if campaign.strike_start is None or current is None or not current.status.on_strike:
        return None
    today = local(now, campaign).date()
    if today < campaign.strike_start:
        return None
    return i18n.day_of_strike(campaign.strike_start, today)


ARCHIVE_PAGE = 25  # updates on each older page of the archive


def first_page_size(visible: int) -> int:
    """How many updates the archive's first page shows of `visible`: the newest 25 to 49,
    so that every older page holds 25 counted from the oldest, and keeps its contents (and
    its address) as updates are added: a static copy rewrites only the first page, and a
    new older page once every 25 updates."""
    if visible < 2 * ARCHIVE_PAGE:
        return max(visible, 1)
    return visible - ARCHIVE_PAGE * (visible // ARCHIVE_PAGE - 1)
