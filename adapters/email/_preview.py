"""The web desk's card for e-mail: the subject and the text part of the e-mail an update
becomes (the HTML part says the same), and what happens to it after an edit. Pure."""

from __future__ import annotations

from email.headerregistry import Address

from bot.ports import Campaign, OutboundMessage, Section, SurfacePreview, i18n


def preview(
    message: OutboundMessage, campaign: Campaign, section: Section | None, language: str
) -> SurfacePreview:
    from adapters.email._render import Envelope, subject_of, text_part

    envelope = Envelope(
        sender=Address(campaign.union, addr_spec="news@example.org"),
        to="",
        message_id="",
        union=campaign.union,
        list_id="",
        unsubscribe_url="…",  # each person's own link
    )
    lines = text_part(message, envelope).rstrip("\n").split("\n")
    if lines and lines[0].strip() == message.title.strip():
        lines = lines[1:]
    note = i18n.text(language, "email.preview_edits")
    return SurfacePreview(subject_of(message), tuple(lines), (note,))
