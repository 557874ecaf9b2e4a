"""An `OutboundMessage` as one text message within a number of segments, with the link to
the page for the rest.

    render_text(message, sender="UTLA", max_segments=2)
    -> "UTLA: URGENT: The strike is on\\nPicket lines at every school from 6:30 AM...\\n
        Next step: Picket at 6:30\\nWhen: Monday, January 21, 6:00 AM PST\\n
        https://strike.example.org/updates/7"

The text starts with who is sending, then the headline, the body and the next step with its time,
always ending with the canonical link. When it is too long, the part that matters least is cut
first, at a word: an update's body (its next step and time stay), then its next step's wording, then
the headline; a correction's or retraction's note, then its headline (its reason stays); a
briefing's demand table (the link shows it), then its body; an answer from its end. The ellipsis is
"..." whenever the rest of the text is GSM-7, so a cut never turns a text into UCS-2.

Our own sentences (a sign-up's confirmation, the replies to texts) are never cut: they
carry what the person must be told (how to confirm, rates, how to stop). When one of them
would take more segments in UCS-2 than allowed only because of accents GSM-7 lacks ("SÍ",
"día"), it is sent with those letters unaccented, in GSM-7 (`fit_own`).
"""

from __future__ import annotations

import re

from bot.ports import Campaign, MessageKind, OutboundMessage, Section, Urgency, i18n

from .._settings import sender_name
from ._segments import count, fold_to_gsm, is_gsm, smart

DEFAULT_MAX_SEGMENTS = 2


def fit_own(text: str, max_segments: int) -> str:
    """One of our own sentences as sent: typographic punctuation made GSM-7, never cut;
    unaccented into GSM-7 when that is what keeps it within `max_segments`."""
    text = _tidy(smart(text))
    if count(text).count <= max_segments:
        return text
    folded = fold_to_gsm(text)
    if is_gsm(folded) and count(folded).count < count(text).count:
        return folded
    return text


def render_text(message: OutboundMessage, *, sender: str, max_segments: int) -> str:
    if message.kind is MessageKind.CONFIRM:
        return fit_own(message.body, max_segments)
    title = message.title.strip()
    if message.kind is MessageKind.UPDATE and message.urgency is Urgency.URGENT:
        title = f"{i18n.text(message.language, 'sms.urgent')}: {title}"
    lead = f"{_clean(sender)}: " if sender else ""
    kind = message.kind
    if kind in (MessageKind.CORRECTION, MessageKind.RETRACTION):
        body = [_clean(line) for line in message.body.split("\n")]  # the reason: the last
    elif kind is MessageKind.BRIEFING:
        body = [_clean(p) for p in message.body.split("\n\n")]  # the next step: the last
    else:
        body = [_clean(message.body)]
    fields = []
    if not message.retracted:  # a retraction's fields hold the withdrawn text: not again
        fields = [_clean(f"{f.name}: {f.value}") for f in message.fields if f.value.strip()]
    parts = [_clean(title), *body, *fields]
    url = message.url or (message.links[0].url if message.links else "")
    tail = f"\n{url}" if url else ""
    return _fit(lead, parts, _cut_order(kind, len(body), len(fields)), tail, max_segments)


def _cut_order(kind: MessageKind, body: int, fields: int) -> list[int]:
    """Which parts give way first: 0 is the title, then `body` parts of the body, then
    `fields` fields."""
    lines = list(range(1, 1 + body))
    after = list(range(1 + body, 1 + body + fields))
    if kind in (MessageKind.CORRECTION, MessageKind.RETRACTION):
        # The note ("Update #4 has been corrected."), then the title that names the update;
        # the reason (the body's last line) last.
        return [*lines[:-1], 0, *lines[-1:]]
    if kind is MessageKind.BRIEFING:
        # The demand table (the page shows it), the changes, the next step, the day line.
        return [*reversed(after), *reversed(lines[1:-1]), *lines[-1:], *lines[:1], 0]
    if kind is MessageKind.REPLY:
        # An answer (a question asked by text): from its end, so what it leads with stays.
        return [*reversed(after), *reversed(lines), 0]
    # An update: its body's tail, then the next step's wording; its time (the last field,
    # "When: ...") and the headline last.
    return [*lines, *after, 0]


def _fit(lead: str, parts: list[str], order: list[int], tail: str, max_segments: int) -> str:
    """`lead`, then `parts` one a line, then `tail`; each part of `order` in turn cut at a
    word (or left out) until the whole fits in `max_segments`."""
    parts = list(parts)

    def joined(items: list[str]) -> str:
        return lead + "\n".join(p for p in items if p) + tail

    if count(joined(parts)).count <= max_segments:
        return joined(parts)
    for index in order:
        whole = parts[index]
        if not whole:
            continue
        before, after = parts[:index], parts[index + 1 :]
        rest = joined([*before, *after])
        best = ""
        low, high = 1, len(whole) - 1
        while low <= high:  # the longest word-boundary prefix that fits
            middle = (low + high) // 2
            head = _at_word(whole, middle)
            ellipsis = "..." if is_gsm(rest + head) else "…"
            candidate = joined([*before, head + ellipsis, *after])
            if head and count(candidate).count <= max_segments:
                best, low = head + ellipsis, middle + 1
            else:
                high = middle - 1
        parts[index] = best
        if count(joined(parts)).count <= max_segments:
            return joined(parts)
    return (lead + tail.strip()).strip()


def _at_word(text: str, size: int) -> str:
    """At most `size` characters of `text`, ending at a whole word ('' when not even its
    first word fits: the part is then left out rather than cut in a word)."""
    head = text[:size]
    if size < len(text) and not text[size].isspace():
        space = max(head.rfind(" "), head.rfind("\n"))
        head = head[:space] if space > 0 else ""
    return head.rstrip(" \n,;:-")


def _clean(text: str) -> str:
    return _tidy(smart(text))


def _tidy(text: str) -> str:
    """One blank-free line per part, no trailing spaces, no control characters."""
    text = "".join(ch for ch in text if ch == "\n" or ch.isprintable())
    return re.sub(r"[ ]{2,}", " ", re.sub(r"\n{2,}", "\n", text)).strip()


def segments_of(message: OutboundMessage, campaign: Campaign, section: Section | None) -> int:
    """`Cost.measure` for the preview: the segments this message will take once sent."""
    max_segments = getattr(section, "max_segments", DEFAULT_MAX_SEGMENTS)
    text = render_text(message, sender=sender_name(campaign, section), max_segments=max_segments)
    return count(text).count
