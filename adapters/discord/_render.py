"""`OutboundMessage` → Discord embed, inside Discord's limits. Pure: no I/O.

Limits (Discord's): title 256, description 4096, 25 fields of name 256 / value 1024, footer
2048, author 256, and 6000 characters across all of a message's embeds. Text is plain, so
markdown is escaped; when something must be cut, it is cut at a word boundary and points at
the full text (`bot.messages.compose.fit`). A retracted update's withdrawn text is struck through.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import discord

from bot.ports import MessageKind, OutboundMessage, Urgency, fit, i18n

TITLE_MAX = 256
DESCRIPTION_MAX = 4096
FIELDS_MAX = 25
FIELD_NAME_MAX = 256
FIELD_VALUE_MAX = 1024
FOOTER_MAX = 2048
AUTHOR_MAX = 256
TOTAL_MAX = 6000  # across every embed of one message
EMBEDS_MAX = 10  # per message

NEUTRAL_COLOUR = 0x5865F2
RETRACTED_COLOUR = 0x495057
NOTICE_COLOUR = 0xF08C00
ERROR_COLOUR = 0xE03131


def escape(text: str) -> str:
    """Plain text shown literally: markdown escaped (links left working)."""
    return discord.utils.escape_markdown(text)


def strike(text: str) -> str:
    """Strike every line through (Discord's ~~ does not span line breaks reliably)."""
    return "\n".join(f"~~{line}~~" if line.strip() else line for line in text.split("\n"))


def fitted(
    text: str,
    limit: int,
    *,
    url: str | None = None,
    language: str = "",
    style: Callable[[str], str] = escape,
) -> str:
    """`style(text)` within `limit` characters, cutting the plain text (never an escape or a
    strike-through marker in half) and pointing at `url` when cut."""
    if limit <= 0:
        return ""
    budget = limit
    while True:
        plain = fit(text, budget, url, language)
        # The "… full text: <url>" pointer must stay a working link, so it is not styled.
        if plain != text and url and plain.endswith(url):
            head, sep, tail = plain.rpartition("… ")
            out = style(head) + sep + tail if sep else style(plain)
        else:
            out = style(plain)
        if len(out) <= limit:
            return out
        budget -= max(len(out) - limit, 1)
        if budget <= 0:
            return ""


def colour_for(message: OutboundMessage) -> int:
    if message.retracted or message.kind is MessageKind.RETRACTION:
        return RETRACTED_COLOUR
    if message.status is not None:
        return i18n.STATUS_COLOURS[message.status]
    if message.kind is MessageKind.NOTICE:
        return NOTICE_COLOUR
    return NEUTRAL_COLOUR


def badge(message: OutboundMessage) -> str:
    """The line above the title: urgency (when not routine) and the status label."""
    parts = []
    if message.urgency in (Urgency.URGENT, Urgency.IMPORTANT):
        marker = "🔴 " if message.urgency is Urgency.URGENT else ""
        parts.append(marker + i18n.urgency_label(message.urgency, message.language))
    if message.status_label:
        parts.append(message.status_label)
    return " · ".join(parts)


def render_embed(message: OutboundMessage, *, budget: int = TOTAL_MAX) -> discord.Embed:
    """One embed for `message`, using at most `budget` characters (≤ 6000)."""
    lang = message.language
    budget = min(budget, TOTAL_MAX)
    title = fitted(message.title, min(TITLE_MAX, budget), language=lang)
    author = fitted(badge(message), min(AUTHOR_MAX, budget - len(title)), language=lang)
    footer = fitted(
        message.footer, min(FOOTER_MAX, budget - len(title) - len(author)), language=lang
    )
    used = len(title) + len(author) + len(footer)

    value_style = (lambda s: strike(escape(s))) if message.retracted else escape
    fields: list[tuple[str, str, bool]] = []
    for f in message.fields[:FIELDS_MAX]:
        # Discord refuses an empty (or blank) field name or value.
        name = fitted(f.name, FIELD_NAME_MAX, language=lang).strip() or "\u200b"
        value = (
            fitted(
                f.value, FIELD_VALUE_MAX, url=message.url, language=lang, style=value_style
            ).strip("\n ")
            or "\u200b"
        )
        # Fields after the body would push the total over: keep the body, drop the rest.
        if used + len(name) + len(value) > budget - min(len(message.body), 200):
            break
        fields.append((name, value, f.inline))
        used += len(name) + len(value)

    links = "\n".join(
        f"[{escape(link.label)}]({link.url})" for link in message.links if link.url.strip()
    )
    room = min(DESCRIPTION_MAX, budget - used)
    description = ""
    if links and len(links) + 2 <= room:
        body_room = room - len(links) - (2 if message.body else 0)
        body = fitted(message.body, body_room, url=message.url, language=lang)
        description = f"{body}\n\n{links}" if body else links
    else:
        description = fitted(message.body, room, url=message.url, language=lang)

    embed = discord.Embed(
        title=title or None,
        url=message.url or None,
        description=description or None,
        colour=colour_for(message),
    )
    if author:
        embed.set_author(name=author)
    for name, value, inline in fields:
        embed.add_field(name=name, value=value, inline=inline)
    if footer:
        embed.set_footer(text=footer)
    return embed


def render_embeds(messages: Sequence[OutboundMessage]) -> list[discord.Embed]:
    """Several messages as the embeds of one Discord message (≤ 10, ≤ 6000 characters in
    total): the first keeps its full share; later ones get what is left, or are dropped."""
    embeds: list[discord.Embed] = []
    left = TOTAL_MAX
    for message in messages[:EMBEDS_MAX]:
        if left < 100:
            break
        embed = render_embed(message, budget=left)
        embeds.append(embed)
        left -= len(embed)
    return embeds


def text_embed(title: str, body: str = "", *, colour: int = NEUTRAL_COLOUR) -> discord.Embed:
    """A small embed for the adapter's own notes (previews, confirmations)."""
    return discord.Embed(
        title=fitted(title, TITLE_MAX) or None,
        description=fitted(body, DESCRIPTION_MAX) or None,
        colour=colour,
    )
