"""The web desk's card for Telegram: the HTML message an update becomes, as the app shows
it in plain text, and how much of Telegram's 4,096 characters it takes. Pure."""

from __future__ import annotations

import html
import re

from bot.ports import Campaign, OutboundMessage, Section, SurfacePreview, i18n

_TAG = re.compile(r"<[^>]+>")


def preview(
    message: OutboundMessage, campaign: Campaign, section: Section | None, language: str
) -> SurfacePreview:
    from adapters.telegram._render import render, visible_length
    from adapters.telegram._settings import TEXT_MAX

    rendered = render(message)
    lines = html.unescape(_TAG.sub("", rendered)).replace("\u200b", "").split("\n")
    lines = [line for line in lines if line.strip()]
    note = i18n.text(language, "telegram.preview_size").format(
        n=i18n.format_number(visible_length(rendered), language),
        limit=i18n.format_number(TEXT_MAX, language),
    )
    return SurfacePreview(lines[0] if lines else "", tuple(lines[1:]), (note,))
