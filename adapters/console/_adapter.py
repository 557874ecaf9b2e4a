"""`ConsoleAdapter`: deliveries printed to a terminal instead of posted to a platform."""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.style import Style
from rich.text import Text

from adapters.console._render import render_message
from bot.ports import ChannelRef, OutboundMessage, Pacing

# A terminal has no rate limit worth the name; these only keep a 10,000-row fan-out sane.
CONSOLE_PACING = Pacing(
    global_per_second=500.0, per_channel_per_second=100.0, burst=50, max_in_flight=32
)


class ConsoleAdapter:
    """Prints each send, edit and delete, as it would appear in a channel.

    Like Discord with a nonce, a send repeated with the same `idempotency_key` (a delivery
    retried after a crash) returns the first message's id and prints nothing again. Message
    ids are `<instance>-<n>`, so ids from an earlier run are never reused. With
    `json_output`, one JSON object per line instead of panels (for scripts).
    """

    platform = "console"

    def __init__(self, console: Console | None = None, *, json_output: bool = False) -> None:
        self.console = console or Console(highlight=False)
        self.json_output = json_output
        self.messages: dict[str, tuple[ChannelRef, OutboundMessage]] = {}
        self._ids_by_key: dict[str, str] = {}
        self._instance = secrets.token_hex(3)
        self._counter = 0
        self._started = False
        self._edits = 0
        self._deletes = 0

    @property
    def pacing(self) -> Pacing:
        return CONSOLE_PACING

    async def start(self) -> None:
        self._started = True

    async def stop(self) -> None:
        self._started = False

    async def send(
        self, channel: ChannelRef, message: OutboundMessage, *, idempotency_key: str
    ) -> str:
        known = self._ids_by_key.get(idempotency_key)
        if known is not None:
            return known
        self._counter += 1
        message_id = f"{self._instance}-{self._counter}"
        self._ids_by_key[idempotency_key] = message_id
        self.messages[message_id] = (channel, message)
        self._show("send", channel, message_id, message)
        return message_id

    async def edit(self, channel: ChannelRef, message_id: str, message: OutboundMessage) -> None:
        # A message from an earlier run is not in memory; show the edit all the same.
        self.messages[message_id] = (channel, message)
        self._edits += 1
        self._show("edit", channel, message_id, message)

    async def delete(self, channel: ChannelRef, message_id: str) -> None:
        self.messages.pop(message_id, None)
        self._deletes += 1
        if self.json_output:
            self._line({"event": "delete", "channel": _address(channel), "message_id": message_id})
        else:
            note = f"{_address(channel)}: message {message_id} deleted"
            self.console.print(Text(note, style=Style(dim=True)))

    def health(self) -> Mapping[str, object]:
        return {
            "connected": self._started,
            "sent": self._counter,
            "edited": self._edits,
            "deleted": self._deletes,
        }

    def _show(
        self, event: str, channel: ChannelRef, message_id: str, message: OutboundMessage
    ) -> None:
        if self.json_output:
            self._line(
                {
                    "event": event,
                    "channel": _address(channel),
                    "message_id": message_id,
                    "message": message.to_json(),
                }
            )
            return
        verb = "edited" if event == "edit" else "posted"
        heading = f"{verb} in {_address(channel)} · {message_id}"
        self.console.print(render_message(message, heading=heading))

    def _line(self, data: dict[str, Any]) -> None:
        self.console.file.write(json.dumps(data, ensure_ascii=False) + "\n")
        self.console.file.flush()


def _address(channel: ChannelRef) -> str:
    return f"{channel.workspace}/#{channel.channel}"
