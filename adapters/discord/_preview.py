"""The web desk's card for Discord: the embed an update becomes, as plain text, and how much
of Discord's room it takes. Pure; discord.py is imported only when a preview is made."""

from __future__ import annotations

import re

from bot.ports import Campaign, OutboundMessage, Section, SurfacePreview, i18n

_ESCAPED = re.compile(r"\\([\\*_~`|>#\-\[\]()])")
_LINK = re.compile(r"\[([^\]]+)\]\((https?://[^)\s]+)\)")


def preview(
    message: OutboundMessage, campaign: Campaign, section: Section | None, language: str
) -> SurfacePreview:
    from adapters.discord._render import TOTAL_MAX, render_embed

    embed = render_embed(message)
    lines = [embed.author.name] if embed.author.name else []
    lines += _plain(embed.description or "").split("\n")
    lines += [f"{_plain(f.name or '')}: {_plain(f.value or '')}" for f in embed.fields]
    if embed.footer.text:
        lines.append(_plain(embed.footer.text))
    note = i18n.text(language, "discord.preview_size").format(
        n=i18n.format_number(len(embed), language),
        limit=i18n.format_number(TOTAL_MAX, language),
    )
    return SurfacePreview(_plain(embed.title or ""), tuple(lines), (note,))


def _plain(text: str) -> str:
    """Discord's markdown escapes undone, struck-through text left as its words."""
    return _ESCAPED.sub(r"\1", _LINK.sub(r"\1", text)).replace("~~", "")
