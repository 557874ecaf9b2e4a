"""Questions asked by text or WhatsApp ("ESTADO", "DEMANDS", "NEXT"), answered as chat
answers them (`/strike status`, `/strike demands`, `/strike next`), for a phone.

    message = await ask(commands, Kind.STATUS, platform="sms", person=key, language="es")

The commands give the answer (the same store reads, wording, fallbacks and time zone as
every chat platform); `for_phone` keeps what a phone shows in a line or two: the title,
the first paragraph, the fields that say what happens next, and the page's address for the
rest. The platform fits it to its own size (an SMS plugin to its segments) with its usual
renderer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from bot.commands import CommandContext, Commands
from bot.messages.compose import page_url
from bot.models import Actor
from bot.people.keywords import QUESTIONS, Kind
from bot.people.signups import WORKSPACE
from bot.plugins.outbound import Field, MessageKind, OutboundMessage


@dataclass(frozen=True, slots=True)
class Shape:
    """How much of a chat answer a phone answer keeps: the first line of each of the first
    `paragraphs` of its body, and the first line of each of its first `fields`."""

    paragraphs: int
    fields: int


# Status: the day and the latest headline, then the next step and its time. Demands: each
# demand and where it stands (the intro says what the title says). Next: the step, its time.
SHAPES: Mapping[Kind, Shape] = {
    Kind.STATUS: Shape(paragraphs=2, fields=2),
    Kind.DEMANDS: Shape(paragraphs=0, fields=12),
    Kind.NEXT: Shape(paragraphs=1, fields=1),
}


async def ask(
    commands: Commands,
    kind: Kind,
    *,
    platform: str,
    person: str | None,
    language: str,
    argument: str = "",
) -> OutboundMessage:
    """The answer to question `kind` from `person` (their opaque key, or None for a number
    the bot does not know), in `language`, made for a phone. `argument`: the word after
    STATUS ("STATUS ROOSEVELT"), a site's or a group's code; the campaign's status when it
    names neither ("status please")."""
    command = QUESTIONS[kind]
    context = CommandContext(
        platform=platform,
        actor=Actor(platform, person or "unknown"),
        workspace=WORKSPACE,
        channel=person or "",
        locale=language,
    )
    answers = {
        "status": commands.status,
        "demands": commands.demands,
        "next": commands.next_step,
    }
    reply = None
    if command == "status" and argument:
        reply = await commands.status(context, site=argument)
    if reply is None or not reply.ok:
        reply = await answers[command](context)
    page = page_url(commands.campaign, reply.message.language)
    return for_phone(reply.message, page, SHAPES[kind] if reply.ok else Shape(1, 0))


def for_phone(message: OutboundMessage, page: str, shape: Shape) -> OutboundMessage:
    """`message` as a phone answer: its title, what `shape` keeps of its body and fields,
    and the page's address for the rest."""
    paragraphs = [p.strip() for p in message.body.split("\n\n") if p.strip()]
    body = "\n".join(p.split("\n", 1)[0] for p in paragraphs[: shape.paragraphs])
    fields = tuple(
        Field(f.name, _first_line(f.value))
        for f in message.fields[: shape.fields]
        if f.value.strip()
    )
    return replace(
        message,
        kind=MessageKind.REPLY,
        body=body,
        fields=fields,
        links=(),
        url=page,
        footer="",
    )


def _first_line(value: str) -> str:
    """A field's first line, without what follows " · " there (a demand's key: a phone
    cannot ask by key, and "·" is not in the GSM-7 alphabet)."""
    return value.strip().split("\n", 1)[0].split(" · ", 1)[0].strip()
