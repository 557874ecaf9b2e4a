"""What a delivering adapter implements, and the platform-neutral message it renders.

The core hands an adapter an `OutboundMessage`; the adapter renders it (an embed, Block
Kit, plain text) within its platform's limits and reports failures as
`bot.errors.TransientDeliveryError` (retry) or `bot.errors.PermanentDeliveryError` (park).
Adapters reach these types through `bot.ports`, the core's public boundary.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from bot import i18n
from bot.models import Status, Urgency


class MessageKind(StrEnum):
    UPDATE = "update"
    CORRECTION = "correction"
    RETRACTION = "retraction"
    BRIEFING = "briefing"
    NOTICE = "notice"  # to admins: a channel broke, an update awaits approval...
    REPLY = "reply"  # an answer to a command
    CONFIRM = "confirm"  # asks a person who signed up to confirm (e-mail, text)


@dataclass(frozen=True, slots=True)
class Field:
    name: str
    value: str
    inline: bool = False


@dataclass(frozen=True, slots=True)
class Link:
    label: str
    url: str


@dataclass(frozen=True, slots=True)
class OutboundMessage:
    """What to show, not how. Text is plain (no platform markup); adapters escape it."""

    title: str
    body: str = ""
    kind: MessageKind = MessageKind.REPLY
    language: str = field(default_factory=lambda: i18n.source_language())
    status: Status | None = None  # the badge / colour
    status_label: str = ""  # the badge text, already in `language`
    urgency: Urgency | None = None
    fields: tuple[Field, ...] = ()
    links: tuple[Link, ...] = ()
    url: str | None = None  # canonical link to the full text (trimmed messages point here)
    footer: str = ""
    retracted: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "body": self.body,
            "kind": str(self.kind),
            "language": self.language,
            "status": None if self.status is None else str(self.status),
            "status_label": self.status_label,
            "urgency": None if self.urgency is None else str(self.urgency),
            "fields": [[f.name, f.value, f.inline] for f in self.fields],
            "links": [[link.label, link.url] for link in self.links],
            "url": self.url,
            "footer": self.footer,
            "retracted": self.retracted,
        }

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> OutboundMessage:
        return cls(
            title=raw["title"],
            body=raw.get("body", ""),
            kind=MessageKind(raw.get("kind", "reply")),
            language=raw.get("language") or i18n.source_language(),
            status=None if raw.get("status") is None else Status(raw["status"]),
            status_label=raw.get("status_label", ""),
            urgency=None if raw.get("urgency") is None else Urgency(raw["urgency"]),
            fields=tuple(Field(n, v, bool(i)) for n, v, i in raw.get("fields", [])),
            links=tuple(Link(label, url) for label, url in raw.get("links", [])),
            url=raw.get("url"),
            footer=raw.get("footer", ""),
            retracted=bool(raw.get("retracted", False)),
        )


@dataclass(frozen=True, slots=True)
class Limits:
    """A platform's size limits for one message, in characters (see
    `bot.messages.compose.fit_message`)."""

    title: int
    body: int
    field_name: int
    field_value: int
    fields: int
    footer: int
    total: int  # everything together (e.g. a cap across all of a message's parts)


@dataclass(frozen=True, slots=True)
class ChannelRef:
    """Where a message goes: a workspace (a server, a team, a mailing list) and a channel in it."""

    workspace: str
    channel: str


@dataclass(frozen=True, slots=True)
class Pacing:
    """A platform's sending limits, which the dispatcher keeps below.

    `global_per_second`: all requests with one token (e.g. a platform's 50/s, kept at 48).
    `per_channel_per_second`: sustained sends into one channel (e.g. ~1/s).
    `per_workspace_per_second`: across one workspace/guild, if the platform caps it.
    `burst`: how many requests may start at once before the rate applies.
    `max_in_flight`: requests awaiting their answer at once; with a round trip of r seconds
    the rate cannot pass `max_in_flight / r` (the dispatcher says so in its log).
    `in_flight_setting`: the key an operator raises for more in flight, named in that line.
    """

    global_per_second: float
    per_channel_per_second: float
    per_workspace_per_second: float | None = None
    burst: int = 1
    max_in_flight: int = 64
    in_flight_setting: str = ""


@runtime_checkable
class Service(Protocol):
    """A plugin part with a lifecycle: `start()` after the web server listens, `stop()` in
    reverse order at shutdown."""

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


@runtime_checkable
class Reporting(Protocol):
    """A plugin part that reports its state on /healthz."""

    def health(self) -> Mapping[str, object]:
        """Connection state for /healthz, e.g. {"connected": True, "latency_ms": 42}."""
        ...


@runtime_checkable
class Adapter(Service, Reporting, Protocol):
    """What every delivering platform implements. `send` returns the platform's message id.

    `idempotency_key` is the delivery id (at most 25 chars): a platform with idempotent
    sends (a message nonce) uses it so a retried send returns the existing message.

    A platform whose sent messages cannot be changed (e-mail, SMS) says so with a class
    attribute `edits_in_place = False` (see `edits_in_place`): the dispatcher then sends a
    retraction as a new short message to those who got the original, and a silent edit
    sends nothing (its link shows the current text; a correction is a new message anyway).
    Its `edit` and `delete` are then never called.
    """

    platform: str

    @property
    def pacing(self) -> Pacing: ...

    async def send(
        self, channel: ChannelRef, message: OutboundMessage, *, idempotency_key: str
    ) -> str: ...

    async def edit(
        self, channel: ChannelRef, message_id: str, message: OutboundMessage
    ) -> None: ...

    async def delete(self, channel: ChannelRef, message_id: str) -> None: ...


def edits_in_place(adapter: object) -> bool:
    """Whether `adapter` changes a sent message in place (chat platforms: the default) or can
    only send new ones (declared with `edits_in_place = False`)."""
    return bool(getattr(adapter, "edits_in_place", True))


def call_timeout(adapter: object) -> float | None:
    """How long at most one `send`, `edit` or `send_event` of `adapter` takes, when the
    adapter bounds its own calls (declared with an attribute `call_timeout`, in seconds; on
    running out it raises `TransientDeliveryError` with `in_doubt=True`): the dispatcher
    then sets no timeout of its own around them, one timer per send fewer. None: unbounded."""
    seconds = getattr(adapter, "call_timeout", None)
    return float(seconds) if isinstance(seconds, int | float) else None


@runtime_checkable
class FindsSent(Protocol):
    """What an adapter implements besides `Adapter` when it can look for a copy it may
    already have posted: the dispatcher asks before sending again a copy whose outcome is
    unknown (in doubt), so that a copy retried after the platform's idempotency window
    (Discord's nonce: a few minutes) is recorded, not posted twice.

    `find_sent` looks among `channel`'s messages since `since` for the one this delivery
    (`idempotency_key`, rendered as `message`) created, by a marker carrying the key, and
    returns its message id; None when there is none (or the platform cannot say, e.g. the
    app lacks the scope to read history: the copy is then sent again, as without this).
    Raises `TransientDeliveryError` when the platform failed to answer: the dispatcher then
    waits and asks again rather than risk a duplicate."""

    async def find_sent(
        self,
        channel: ChannelRef,
        idempotency_key: str,
        message: OutboundMessage,
        *,
        since: datetime,
    ) -> str | None: ...


@runtime_checkable
class EventSink(Protocol):
    """What a plugin declaring `events=True` implements besides `Adapter`: deliver one event
    document (`bot.delivery.events`). `idempotency_key` is the delivery id, the same on every retry
    (a webhook's `webhook-id`). Returns an id for the record (e.g. the receiver's status)."""

    async def send_event(
        self, channel: ChannelRef, event: Mapping[str, Any], *, idempotency_key: str
    ) -> str: ...


@dataclass(slots=True)
class HealthBoard:
    """Plugin parts that report their state register here; /healthz reads it."""

    parts: dict[str, Reporting] = field(default_factory=dict)

    def snapshot(self) -> dict[str, Mapping[str, object]]:
        return {name: part.health() for name, part in self.parts.items()}
