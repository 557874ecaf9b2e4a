"""`OutboundMessage` and `Reply` → rich renderables, and → JSON lines. Pure: no I/O.

Text is plain and never parsed as rich markup (everything is a `Text`), so an update saying
"[bold]" shows those characters. A retracted update's withdrawn text is struck through.
"""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.style import Style
from rich.text import Text

from bot.ports import MessageKind, OutboundMessage, Reply, Urgency, i18n

NEUTRAL = "#5865f2"
NOTICE = "#f08c00"
ERROR = "#e03131"
RETRACTED = "#868e96"

_WORDS = i18n.Words("console")


def _colour(message: OutboundMessage, ok: bool = True) -> str:
    if not ok:
        return ERROR
    if message.retracted:
        return RETRACTED
    if message.kind is MessageKind.NOTICE:
        return NOTICE
    if message.status is not None:
        return f"#{i18n.STATUS_COLOURS[message.status]:06x}"
    return NEUTRAL


def render_message(
    message: OutboundMessage, *, heading: str = "", ok: bool = True
) -> RenderableType:
    """One message as a panel: badge, body, fields, links and footer."""
    colour = _colour(message, ok)
    parts: list[RenderableType] = []
    badges = Text()
    if message.status_label:
        badges.append(f" {message.status_label} ", style=Style(bold=True, bgcolor=colour))
    if message.urgency is not None and message.urgency is not Urgency.ROUTINE:
        if badges:
            badges.append(" ")
        label = i18n.urgency_label(message.urgency, message.language).upper()
        style = Style(bold=True, color="red" if message.urgency is Urgency.URGENT else "yellow")
        badges.append(label, style=style)
    if badges:
        parts.append(badges)
    if message.body:
        parts.append(Text(message.body))
    for field in message.fields:
        value_style = Style(strike=True, dim=True) if message.retracted else Style()
        parts.append(
            Text.assemble((field.name, Style(bold=True)), "\n", (field.value or "—", value_style))
        )
    for link in message.links:
        url_style = Style(link=link.url, underline=True)
        parts.append(Text.assemble((f"{link.label}: ", Style(dim=True)), (link.url, url_style)))
    if message.footer:
        parts.append(Text(message.footer, style=Style(dim=True)))
    return Panel(
        Group(*parts) if parts else Text(""),
        title=Text(message.title, style=Style(bold=True)),
        title_align="left",
        subtitle=Text(heading, style=Style(dim=True)) if heading else None,
        subtitle_align="right",
        border_style=colour,
        box=box.ROUNDED,
        expand=True,
    )


def render_reply(reply: Reply) -> RenderableType:
    """A command's answer, with any preview after it."""
    lang = i18n.pick(reply.message.language)
    heading = _WORDS[lang]["only_you"] if reply.ephemeral else ""
    panels = [render_message(reply.message, heading=heading, ok=reply.ok)]
    panels += [render_message(m, heading=_WORDS[lang]["preview"]) for m in reply.extra]
    return Group(*panels)


def reply_json(text: str, reply: Reply) -> dict[str, Any]:
    return {
        "event": "reply",
        "input": text,
        "ok": reply.ok,
        "ephemeral": reply.ephemeral,
        "message": reply.message.to_json(),
        "extra": [m.to_json() for m in reply.extra],
    }
