"""An `OutboundMessage` as one text message within a number of segments, with the link to
the page for the rest.

    render_text(message, sender="UTLA", max_segments=2)
    -> "UTLA: URGENT: The strike is on\\nPicket lines at every school from 6:30 AM…\\n
        https://strike.example.org/updates/7"

The text starts with who is sending, then the headline, the body and the next step, cut at
a word to fit and always ending with the canonical link. A sign-up's confirmation is never
cut: it carries what the person must be told (how to confirm, rates, how to stop).
"""

from __future__ import annotations

import re

from bot.ports import Campaign, MessageKind, OutboundMessage, Section, Urgency, i18n, short_union

from ._segments import count, smart

DEFAULT_MAX_SEGMENTS = 2


def short_name(campaign: Campaign, section: Section | None = None) -> str:
    """Who a text says it is from: `[sms] sender_name`, else "UTLA" for "United Teachers
    Los Angeles (UTLA)"."""
    name = getattr(section, "sender_name", None)
    return str(name) if name else short_union(campaign.union)


def render_text(message: OutboundMessage, *, sender: str, max_segments: int) -> str:
    if message.kind is MessageKind.CONFIRM:
        return _tidy(smart(message.body))
    title = message.title.strip()
    if message.kind is MessageKind.UPDATE and message.urgency is Urgency.URGENT:
        title = f"{i18n.text(message.language, 'sms.urgent')}: {title}"
    parts = [f"{sender}: {title}" if sender else title]
    if message.body.strip():
        parts.append(message.body.strip())
    if not message.retracted:  # a retraction's fields hold the withdrawn text: not again
        parts += [f"{f.name}: {f.value}" for f in message.fields if f.value.strip()]
    text = _tidy(smart("\n".join(parts)))
    url = message.url or (message.links[0].url if message.links else "")
    tail = f"\n{url}" if url else ""
    if count(text + tail).count <= max_segments:
        return text + tail
    return _cut(text, tail, max_segments)


def _cut(text: str, tail: str, max_segments: int) -> str:
    """The longest word-boundary prefix of `text` that, with "…" and `tail`, fits."""
    low, high, best = 0, len(text), ""
    while low <= high:
        middle = (low + high) // 2
        candidate = _at_word(text, middle) + "…" + tail
        if count(candidate).count <= max_segments:
            best, low = candidate, middle + 1
        else:
            high = middle - 1
    return best or tail.strip()


def _at_word(text: str, size: int) -> str:
    head = text[:size]
    if size < len(text) and not text[size].isspace():
        space = max(head.rfind(" "), head.rfind("\n"))
        if space >= size // 2:
            head = head[:space]
    return head.rstrip(" \n,;:-")


def _tidy(text: str) -> str:
    """One blank-free line per part, no trailing spaces, no control characters."""
    text = "".join(ch for ch in text if ch == "\n" or ch.isprintable())
    return re.sub(r"[ ]{2,}", " ", re.sub(r"\n{2,}", "\n", text)).strip()


def segments_of(message: OutboundMessage, campaign: Campaign, section: Section | None) -> int:
    """`Cost.measure` for the preview: the segments this message will take once sent."""
    max_segments = getattr(section, "max_segments", DEFAULT_MAX_SEGMENTS)
    text = render_text(message, sender=short_name(campaign, section), max_segments=max_segments)
    return count(text).count
