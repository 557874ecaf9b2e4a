"""A local SMTP sink for the e-mail benchmark: aiosmtpd on 127.0.0.1 in its own process (so
its CPU is not counted as the sender's), accepting everything without login.

Prints `READY <port>`, then answers one line per command on stdin, as JSON:
`stats` -> {"messages", "distinct_ids", "sample"} (the first message's bytes, base64,
with its envelope) and `reset` -> {} (forgets everything).

    python -m bench._smtp_sink
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import sys
from typing import Any

from aiosmtpd.smtp import SMTP, Envelope, Session

MESSAGE_ID = re.compile(rb"^Message-ID: *(\S+)", re.IGNORECASE | re.MULTILINE)


class Sink:
    def __init__(self) -> None:
        self.messages = 0
        self.ids: set[bytes] = set()
        self.sample: dict[str, Any] | None = None

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        raw = envelope.original_content or b""
        self.messages += 1
        found = MESSAGE_ID.search(raw)
        if found:
            self.ids.add(found.group(1))
        if self.sample is None:
            self.sample = {
                "from": str(envelope.mail_from),
                "to": list(envelope.rcpt_tos),
                "raw": base64.b64encode(raw).decode(),
            }
        return "250 OK"

    def answer(self, command: str) -> dict[str, Any]:
        if command == "reset":
            self.__init__()  # type: ignore[misc]
            return {}
        return {"messages": self.messages, "distinct_ids": len(self.ids), "sample": self.sample}


async def main() -> None:
    sink = Sink()
    loop = asyncio.get_running_loop()
    server = await loop.create_server(
        lambda: SMTP(sink, hostname="sink.test", decode_data=False), "127.0.0.1", 0
    )
    print(f"READY {server.sockets[0].getsockname()[1]}", flush=True)
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while line := await reader.readline():
        print(json.dumps(sink.answer(line.decode().strip())), flush=True)
    server.close()


if __name__ == "__main__":
    asyncio.run(main())
