"""An `OutboundMessage` as a WhatsApp message: free-form text within the 24-hour window,
or the values of an approved template's variables outside it. Pure, no I/O.

    free_form(message, sender="UTLA")
    -> "*UTLA: URGENT: The strike is on*\\nPicket lines at every school from 6:30 AM.\\n
        Next step: ...\\nhttps://strike.example.org/updates/7"
    variables(message, ["sender", "title", "body", "url"], sender="UTLA")
    -> ["UTLA", "URGENT: The strike is on", "Picket lines at every school...", "https://..."]

WhatsApp shows `*text*` in bold; the headline is the only markup. A template's variables
may not hold a line break, a tab or more than four spaces in a row, and the template's
whole text stays under 1024 characters: each value is one line, cut at a word.
"""

from __future__ import annotations

import re

from bot.ports import MessageKind, OutboundMessage, Urgency, fit, i18n

BODY_MAX = 1600  # Twilio's limit for one WhatsApp message
VALUE_MAX = {"sender": 30, "title": 200, "body": 600, "next_step": 200, "url": 500}


def headline(message: OutboundMessage) -> str:
    title = " ".join(message.title.split())
    if message.kind is MessageKind.UPDATE and message.urgency is Urgency.URGENT:
        title = f"{i18n.text(message.language, 'whatsapp.urgent')}: {title}"
    return title


def link(message: OutboundMessage) -> str:
    return message.url or (message.links[0].url if message.links else "")


def free_form(message: OutboundMessage, *, sender: str) -> str:
    title = headline(message)
    parts = [f"*{sender}: {title}*" if sender and title else f"*{title or sender}*"]
    if message.body.strip():
        parts.append(message.body.strip())
    if not message.retracted:  # a retraction's fields hold the withdrawn text: not again
        parts += [f"{f.name}: {f.value}" for f in message.fields if f.value.strip()]
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(parts)).strip()
    url = link(message)
    room = BODY_MAX - (len(url) + 1 if url else 0)
    text = fit(text, room, None, message.language) if len(text) > room else text
    return f"{text}\n{url}" if url else text


def variables(message: OutboundMessage, names: list[str], *, sender: str) -> list[str]:
    """The template's variable values, in order; never empty (WhatsApp refuses an empty
    one), never more than one line."""
    step = next((f.value for f in message.fields if f.value.strip()), "")
    body = message.body
    if message.retracted or not body.strip():
        body = body or message.title
    values = {
        "sender": sender,
        "title": headline(message),
        "body": body,
        "next_step": step,
        "url": link(message),
    }
    return [_one_line(values[name], VALUE_MAX[name], message.language) for name in names]


def _one_line(text: str, limit: int, language: str) -> str:
    line = " ".join(text.split()) or "-"
    return fit(line, limit, None, language) if len(line) > limit else line
