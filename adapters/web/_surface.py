"""The web desk's card for the public page: the update as `/updates/{id}` and the status
page's timeline show it, as plain text, and where it will be. Pure."""

from __future__ import annotations

from bot.ports import Campaign, OutboundMessage, Section, SurfacePreview, i18n

from ._present import paragraphs_of


def preview(
    message: OutboundMessage, campaign: Campaign, section: Section | None, language: str
) -> SurfacePreview:
    lines = [message.status_label] if message.status_label else []
    lines += paragraphs_of(message.body)
    lines += [f"{f.name}: {f.value}" for f in message.fields if f.value.strip()]
    words = i18n.Words("desk_web")[language]
    notes = [words["page_everyone"]]
    if message.url:
        notes.append(words["page_at"].format(url=message.url))
    return SurfacePreview(message.title, tuple(lines), tuple(notes))
