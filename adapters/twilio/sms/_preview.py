"""The web desk's card for texts: the text an update becomes (cut to `[sms] max_segments`,
ending with its link), its segments and encoding, and with `[sms] segment_price` what
one text costs. Pure."""

from __future__ import annotations

from babel.numbers import format_currency

from bot.ports import Campaign, OutboundMessage, Section, SurfacePreview, i18n

from .._settings import sender_name
from ._render import DEFAULT_MAX_SEGMENTS, render_text
from ._segments import count


def preview(
    message: OutboundMessage, campaign: Campaign, section: Section | None, language: str
) -> SurfacePreview:
    most = getattr(section, "max_segments", DEFAULT_MAX_SEGMENTS)
    text = render_text(message, sender=sender_name(campaign, section), max_segments=most)
    segments = count(text)
    notes = [
        i18n.plural(language, "sms.preview_segments", segments.count).format(
            n=i18n.format_number(segments.count, language),
            encoding=segments.encoding,
            characters=i18n.format_number(len(text), language),
        )
    ]
    price = getattr(section, "segment_price", None)
    if price:
        each = format_currency(price * segments.count, "USD", locale=i18n.pick(language))
        notes.append(i18n.text(language, "sms.preview_cost").format(cost=each))
    lines = text.split("\n")
    return SurfacePreview(lines[0], tuple(lines[1:]), tuple(notes))
