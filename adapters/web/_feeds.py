"""Atom (`/feed.atom`) and iCalendar (`/calendar.ics`) for readers and calendars, per language.

Each language's feed and calendar is its own: entries and events have their own ids and
UIDs (the main language's as they always were), and link to the same entry, event and feed
in the other languages (`rel=alternate` with `hreflang`; RFC 9253 `LINK` in a calendar).

Both are pure functions of the updates (so they are tested without a server) plus thin
handlers. A retracted update stays in the feed, titled as retracted with its reason; a
calendar event whose updates were all retracted is sent as STATUS:CANCELLED so calendars
that already hold it drop it.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

import icalendar as ical
from aiohttp import web
from markupsafe import escape

from bot.ports import Campaign, Update, fallback, i18n, kinds

from ._app import Handler, WebState, cached, state_of
from ._cache import Rendered
from ._data import RevisionNote
from ._present import last_change, page_prefix, paragraphs_of, say, when

ATOM = "application/atom+xml; charset=utf-8"
ICS = "text/calendar; charset=utf-8"
FEED_ENTRIES = 50
ATOM_NS = "http://www.w3.org/2005/Atom"
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")

_WORDS = i18n.Words("web.feeds")


def _clean(text: str) -> str:
    """Drop control characters XML 1.0 and iCalendar cannot carry."""
    return _CONTROL.sub("", text)


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


# -- Atom ------------------------------------------------------------------------------------


def atom_feed(
    updates: Sequence[Update],
    notes: Mapping[int, RevisionNote],
    campaign: Campaign,
    language: str,
    now: datetime,
    *,
    path: str = "",
    title: str | None = None,
) -> bytes:
    """The feed at `path` (a site's, "/sites/roosevelt"; the campaign's: "") titled
    `title` (default: the campaign's feed)."""
    words = _WORDS[i18n.pick(language)]
    base = f"{campaign.public_url}{page_prefix(language, campaign)}"
    own = f"{base}{path}"
    ET.register_namespace("", ATOM_NS)

    def sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
        node = ET.SubElement(parent, f"{{{ATOM_NS}}}{tag}", attrs)
        if text is not None:
            node.text = _clean(text)
        return node

    feed = ET.Element(
        f"{{{ATOM_NS}}}feed", {"{http://www.w3.org/XML/1998/namespace}lang": language}
    )
    sub(feed, "id", f"{own}/feed.atom")
    sub(feed, "title", title or words["feed"].format(union=campaign.union))
    sub(feed, "subtitle", say(language, "with", employer=campaign.employer))
    updated = max((last_change(u) for u in updates), default=now)
    sub(feed, "updated", _stamp(updated))
    sub(feed, "link", rel="self", type="application/atom+xml", href=f"{own}/feed.atom")
    sub(feed, "link", rel="alternate", type="text/html", href=f"{own}/" if not path else own)
    others = [lang for lang in campaign.languages if lang != language]
    for other in others:  # the same feed in the campaign's other languages
        href = f"{campaign.public_url}{page_prefix(other, campaign)}{path}/feed.atom"
        sub(feed, "link", rel="alternate", type="application/atom+xml", hreflang=other, href=href)
    author = sub(feed, "author")
    sub(author, "name", campaign.union)
    sub(feed, "generator", "strikebot")
    for update in updates:
        text = fallback.shown_update(update, language, campaign.default_language)
        note = notes.get(update.id) or RevisionNote()
        entry = sub(feed, "entry")
        # Each language's entry is its own (the main language's id as it always was).
        sub(entry, "id", f"{base}/updates/{update.id}")
        title = text.headline
        if update.retracted:
            title = f"{words['retracted']}: {title}"
        elif note.corrections:
            title = f"{title} ({words['corrected']})"
        sub(entry, "title", title)
        for other in others:  # the same entry in the other languages, then its own page
            href = f"{campaign.public_url}{page_prefix(other, campaign)}/updates/{update.id}"
            sub(entry, "link", rel="alternate", type="text/html", hreflang=other, href=href)
        sub(entry, "link", rel="alternate", type="text/html", href=f"{base}/updates/{update.id}")
        sub(entry, "published", _stamp(update.effective_at))
        sub(entry, "updated", _stamp(last_change(update)))
        sub(
            entry,
            "category",
            term=str(update.status),
            label=kinds.status_name(campaign, update.status, language),
        )
        sub(entry, "content", _entry_html(update, note, campaign, language, now), type="html")
    body: bytes = ET.tostring(feed, encoding="utf-8", xml_declaration=True)
    return body


def _entry_html(
    update: Update, note: RevisionNote, campaign: Campaign, language: str, now: datetime
) -> str:
    words = _WORDS[i18n.pick(language)]
    text = fallback.shown_update(update, language, campaign.default_language)
    parts: list[str] = []
    if update.retracted:
        parts.append(
            f"<p><strong>{escape(words['retracted'])}</strong> "
            f"({escape(when(update.retracted_at or update.effective_at, campaign, language, now))})"
            ". "
            f"{escape(words['reason'])}: {escape(_reason(update, campaign, language))}</p>"
        )
    body = "".join(f"<p>{escape(p)}</p>" for p in paragraphs_of(text.body))
    parts.append(f"<del>{body}</del>" if update.retracted and body else body)
    if text.next_step and not update.retracted:
        at = (
            f" ({when(update.next_step_at, campaign, language, now)})"
            if update.next_step_at
            else ""
        )
        parts.append(
            f"<p><strong>{escape(words['next'])}:</strong> {escape(text.next_step)}{escape(at)}</p>"
        )
    main = campaign.default_language
    for revision in reversed(update.revisions):
        label = words["corrected"] if (revision.number + 1) in note.corrections else words["edited"]
        parts.append(
            f"<p><em>{escape(label)} "
            f"{escape(when(revision.created_at, campaign, language, now))}: "
            f"{escape(fallback.shown(revision.reason_texts(), language, main))}</em></p>"
        )
    return "".join(parts)


def _reason(update: Update, campaign: Campaign, language: str) -> str:
    """The retraction's reason for a reader of `language` (the one fallback rule)."""
    return fallback.shown(update.retraction_reason_texts(), language, campaign.default_language)


# -- iCalendar -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CalendarEvent:
    """One scheduled moment, described by the newest unretracted update naming it."""

    start: datetime
    update: Update  # the update whose wording describes the event
    cancelled: bool
    sequence: int
    changed: datetime


def calendar_events(updates: Sequence[Update]) -> list[CalendarEvent]:
    """Group updates by their next-step time; later updates describe the event."""
    groups: dict[datetime, list[Update]] = {}
    for update in updates:
        if update.next_step_at is not None:
            groups.setdefault(update.next_step_at, []).append(update)
    events = []
    for start, group in sorted(groups.items()):
        group.sort(key=lambda u: (u.effective_at, u.id))
        live = [u for u in group if not u.retracted]
        describing = live[-1] if live else group[-1]
        events.append(
            CalendarEvent(
                start=start,
                update=describing,
                cancelled=not live,
                sequence=sum(u.revision - 1 for u in group) + len(group) - 1 + (0 if live else 1),
                changed=max(last_change(u) for u in group),
            )
        )
    return events


def event_uid(start: datetime, campaign: Campaign, language: str) -> str:
    """One event's UID in one language's calendar: the main language's as it always was,
    each other language's its own (a calendar subscribed in two languages holds both)."""
    host = urlsplit(campaign.public_url).hostname or "strikebot"
    suffix = "" if language == campaign.default_language else f"-{language}"
    return f"next-step-{start.astimezone(UTC):%Y%m%dT%H%M%SZ}{suffix}@{host}"


def icalendar(events: Sequence[CalendarEvent], campaign: Campaign, language: str) -> bytes:
    """The calendar of next steps in `language` (RFC 5545, written by the `icalendar`
    library: escaping, folding at 75 octets, CRLF), each event linked to its page in the
    other languages (RFC 9253 `LINK`, `LINKREL=alternate`)."""
    words = _WORDS[i18n.pick(language)]
    base = f"{campaign.public_url}{page_prefix(language, campaign)}"
    calendar = ical.Calendar()
    calendar.add("prodid", f"-//strikebot//{campaign.slug}//{language.upper()}")
    calendar.add("version", "2.0")
    calendar.add("calscale", "GREGORIAN")
    calendar.add("method", "PUBLISH")
    calendar.add("x-wr-calname", _clean(words["calendar"].format(union=campaign.union)))
    calendar.add("x-wr-timezone", campaign.timezone)
    calendar.add("refresh-interval", timedelta(hours=1), parameters={"VALUE": "DURATION"})
    calendar.add("x-published-ttl", "PT1H")
    calendar.add("url", f"{base}/calendar.ics")
    for event in events:
        text = fallback.shown_update(event.update, language, campaign.default_language)
        summary = text.next_step or text.headline
        if event.cancelled:
            summary = f"{words['retracted']}: {summary}"
        url = f"{base}/updates/{event.update.id}"
        description = "\n\n".join(
            part
            for part in (
                text.headline,
                f"{words['reason']}: {_reason(event.update, campaign, language)}"
                if event.cancelled
                else "",
                url,
            )
            if part
        )
        item = ical.Event()
        item.add("uid", event_uid(event.start, campaign, language))
        item.add("dtstamp", event.changed.astimezone(UTC))
        item.add("last-modified", event.changed.astimezone(UTC))
        item.add("dtstart", event.start.astimezone(UTC))
        item.add("duration", timedelta(hours=1))
        item.add("summary", _clean(summary))
        item.add("description", _clean(description))
        item.add("url", url)
        item.add("categories", [_clean(kinds.status_name(campaign, event.update.status, language))])
        item.add("status", "CANCELLED" if event.cancelled else "CONFIRMED")
        item.add("sequence", event.sequence)
        item.add("transp", "TRANSPARENT")
        for other in campaign.languages:
            if other != language:
                href = (
                    f"{campaign.public_url}{page_prefix(other, campaign)}/updates/{event.update.id}"
                )
                item.add(
                    "link",
                    href,
                    parameters={"LINKREL": "alternate", "VALUE": "URI", "FMTTYPE": "text/html",
                                "LABEL": i18n.language_name(other)},
                )  # fmt: skip
        calendar.add_component(item)
    body: bytes = calendar.to_ical()
    return body


# -- handlers --------------------------------------------------------------------------------


def add_routes(app: web.Application, campaign: Campaign) -> None:
    for lang in campaign.languages:
        prefix = page_prefix(lang, campaign)
        app.router.add_get(f"{prefix}/feed.atom", _atom_handler(lang))
        app.router.add_get(f"{prefix}/calendar.ics", _calendar_handler(lang))


async def render_atom(state: WebState, lang: str, now: datetime) -> Rendered:
    async with state.ctx.reads() as tx:
        updates = await tx.visible_updates(now, limit=FEED_ENTRIES)
        updates = await tx.with_revisions(updates)
        notes = await tx.revision_notes([u.id for u in updates if u.revision > 1])
    body = atom_feed(updates, notes, state.ctx.campaign, lang, now)
    return Rendered(body, ATOM, modified=max(map(last_change, updates), default=None))


async def render_calendar(state: WebState, lang: str, now: datetime) -> Rendered:
    async with state.ctx.reads() as tx:
        updates = await tx.with_revisions(await tx.scheduled_events(now))
    events = calendar_events(updates)
    body = icalendar(events, state.ctx.campaign, lang)
    return Rendered(body, ICS, modified=max((e.changed for e in events), default=None))


def _atom_handler(lang: str) -> Handler:
    async def handle(request: web.Request) -> web.StreamResponse:
        state = state_of(request)
        return await cached(
            request, ("atom", lang), lambda now: render_atom(state, lang, now), pinned=True
        )

    return handle


def _calendar_handler(lang: str) -> Handler:
    async def handle(request: web.Request) -> web.StreamResponse:
        state = state_of(request)
        return await cached(
            request, ("ics", lang), lambda now: render_calendar(state, lang, now), pinned=True
        )

    return handle
