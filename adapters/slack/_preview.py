"""The web desk's card for Slack: the Block Kit message an update becomes, as plain text,
and how many of Slack's 50 blocks it takes. Pure."""

from __future__ import annotations

import html
from typing import Any

from bot.ports import Campaign, OutboundMessage, Section, SurfacePreview, i18n


def preview(
    message: OutboundMessage, campaign: Campaign, section: Section | None, language: str
) -> SurfacePreview:
    from adapters.slack._blocks import MAX_BLOCKS, message_blocks

    blocks = message_blocks(message)
    title = ""
    lines: list[str] = []
    for block in blocks:
        if block["type"] == "header":
            title = _text(block["text"])
        elif block["type"] == "context":
            lines.append(" ".join(_text(e) for e in block["elements"]))
        elif block["type"] == "section":
            if "text" in block:
                lines += _text(block["text"]).split("\n")
            lines += [_text(f) for f in block.get("fields", [])]
    note = i18n.text(language, "slack.preview_blocks").format(
        n=i18n.format_number(len(blocks), language),
        limit=i18n.format_number(MAX_BLOCKS, language),
    )
    return SurfacePreview(title, tuple(lines), (note,))


def _text(element: dict[str, Any]) -> str:
    """What a text object reads as: Slack's escapes and markup undone, links as their
    labels."""
    text = str(element.get("text", ""))
    text = "".join(_link_label(part) for part in _split_links(text))
    return html.unescape(text.replace("*", "").replace("~", ""))


def _split_links(text: str) -> list[str]:
    parts, rest = [], text
    while "<" in rest and ">" in rest.split("<", 1)[1]:
        head, tail = rest.split("<", 1)
        inside, rest = tail.split(">", 1)
        parts += [head, "<" + inside + ">"]
    return [*parts, rest]


def _link_label(part: str) -> str:
    if part.startswith("<") and part.endswith(">"):
        target, _, label = part[1:-1].partition("|")
        return label or target
    return part
