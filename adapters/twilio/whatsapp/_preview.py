"""The web desk's card for WhatsApp: the free-form message an update becomes, and when the
approved template goes instead. Pure."""

from __future__ import annotations

from bot.ports import Campaign, OutboundMessage, Section, SurfacePreview, i18n


def preview(
    message: OutboundMessage, campaign: Campaign, section: Section | None, language: str
) -> SurfacePreview:
    from .._settings import sender_name
    from ._render import BODY_MAX, free_form

    text = free_form(message, sender=sender_name(campaign, section))
    lines = text.replace("*", "").split("\n")
    notes = (
        i18n.text(language, "whatsapp.preview_size").format(
            n=i18n.format_number(len(text), language), limit=i18n.format_number(BODY_MAX, language)
        ),
        i18n.text(language, "whatsapp.preview_window"),
    )
    return SurfacePreview(lines[0], tuple(lines[1:]), notes)
