"""A console session: read commands, answer them, show what goes out.

Interactive (a terminal): a prompt; the dispatcher runs in the background, so deliveries
(including embargoed ones falling due) appear as they go out. Scripted (stdin is a pipe or
a file): one command per line, deliveries drained after each, exit at end of input with
status 1 if any command was refused.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import json
import logging
import os
from collections.abc import AsyncIterator
from typing import IO, Any, Protocol

from rich.console import Console
from rich.text import Text

from adapters.console._render import render_reply, reply_json
from bot.ports import CommandContext, Commands, Reply

log = logging.getLogger(__name__)

QUIT = {"quit", "exit", "/quit", "/exit", "salir"}
PROMPT = "strike› "


class Deliverer(Protocol):
    """What the session needs of `bot.delivery.dispatcher.Dispatcher`."""

    async def run(self) -> None: ...

    async def stop(self) -> None: ...

    async def drain(self, until_idle: bool = True) -> Any: ...


class ConsoleSession:
    def __init__(
        self,
        commands: Commands,
        context: CommandContext,
        console: Console,
        *,
        dispatcher: Deliverer | None = None,
        json_output: bool = False,
    ) -> None:
        self.commands = commands
        self.context = context
        self.console = console
        self.dispatcher = dispatcher
        self.json_output = json_output
        self.refused = 0

    async def run(self, stream: IO[str], *, interactive: bool) -> int:
        background: asyncio.Task[None] | None = None
        if interactive and self.dispatcher is not None:
            background = asyncio.create_task(self.dispatcher.run(), name="console-dispatcher")
        try:
            async for line in read_lines(stream, prompt=self._prompt if interactive else None):
                text = line.strip()
                if not text or text.startswith("#"):
                    continue
                if text.lower() in QUIT:
                    break
                await self.answer(text, drain=not interactive)
        finally:
            if background is not None and self.dispatcher is not None:
                await self.dispatcher.stop()
                with contextlib.suppress(Exception):
                    await background
        return 1 if self.refused and not interactive else 0

    async def answer(self, text: str, *, drain: bool) -> Reply:
        reply = await self.commands.handle(self.context, text)
        if not reply.ok:
            self.refused += 1
        if self.json_output:
            self.console.file.write(json.dumps(reply_json(text, reply), ensure_ascii=False) + "\n")
            self.console.file.flush()
        else:
            self.console.print(render_reply(reply))
        if drain and self.dispatcher is not None:
            try:
                await self.dispatcher.drain()
            except Exception:
                log.exception("delivering to console channels failed")
        return reply

    def _prompt(self) -> None:
        self.console.print(Text(PROMPT, style="bold"), end="")


async def read_lines(stream: IO[str], *, prompt: Any = None) -> AsyncIterator[str]:
    """Lines from `stream` without blocking the event loop (so deliveries keep appearing
    while a person types). Pipes and terminals are watched with `add_reader`; a regular file
    (`strikebot console < script.txt`) is read in a thread, since it never blocks long."""
    loop = asyncio.get_running_loop()
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        fd = -1
    queue: asyncio.Queue[str | None] = asyncio.Queue()
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    pending = ""

    def readable() -> None:
        nonlocal pending
        chunk = os.read(fd, 65536)
        if not chunk:
            loop.remove_reader(fd)
            pending += decoder.decode(b"", final=True)
            if pending:
                queue.put_nowait(pending)
            queue.put_nowait(None)
            return
        pending += decoder.decode(chunk)
        *lines, pending = pending.split("\n")
        for line in lines:
            queue.put_nowait(line)

    watching = False
    if fd >= 0:
        try:
            loop.add_reader(fd, readable)
            watching = True
        except (OSError, ValueError, NotImplementedError):  # a regular file cannot be watched
            watching = False
    if not watching:
        while True:
            if prompt is not None:
                prompt()
            line = await asyncio.to_thread(stream.readline)
            if not line:
                return
            yield line.rstrip("\n")
    try:
        while True:
            if prompt is not None and queue.empty():
                prompt()
            item = await queue.get()
            if item is None:
                return
            yield item
    finally:
        with contextlib.suppress(Exception):
            loop.remove_reader(fd)
