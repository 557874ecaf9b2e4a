"""A real SMTP server on 127.0.0.1 (aiosmtpd) in the test's own event loop.

It accepts mail like a provider's submission port (AUTH LOGIN/PLAIN with one account,
without TLS on loopback) and keeps every message parsed by the standard `email` package, so
tests check the headers a mail client will read. Faults, scripted per recipient or for the
next transactions:

    fake.refuse("nobody@example.com", "550 5.1.1 <nobody@example.com>: no such user")
    fake.refuse("full@example.com", "452 4.2.2 Mailbox full, try later")
    fake.fail_next_data("451 4.3.0 Temporary failure")   # the next DATA, once
    fake.fail_next_data(HANG)    # the next DATA is never answered (the client times out)
    fake.fail_next_data(RESET)   # the next DATA drops the connection unanswered
    fake.fail_next_data(LOSE_ANSWER)  # the next DATA is stored (the 250 decided), then the
                                      # connection drops before the 250 is written: the
                                      # worst shape, a provider that took it and said nothing

    async with FakeSmtp() as fake:
        url = fake.url              # smtp://user:pass@127.0.0.1:PORT?tls=off
        ...
        fake.messages[0]["List-Unsubscribe"]
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from typing import Any

from aiosmtpd.smtp import SMTP, AuthResult, Envelope, LoginPassword, Session

USER = "strikebot"
HANG = "hang"
RESET = "reset"
LOSE_ANSWER = "lose-answer"
PASSWORD = "s3cret-smtp-pass"


@dataclass(slots=True)
class Received:
    sender: str
    recipients: list[str]
    message: EmailMessage
    raw: bytes


@dataclass(slots=True)
class _Handler:
    received: list[Received] = field(default_factory=list)
    refusals: dict[str, str] = field(default_factory=dict)
    data_faults: deque[str] = field(default_factory=deque)
    transactions: int = 0
    closing: asyncio.Event = field(default_factory=asyncio.Event)

    async def handle_RCPT(
        self, server: SMTP, session: Session, envelope: Envelope, address: str, options: Any
    ) -> str:
        refusal = self.refusals.get(address.lower())
        if refusal is not None:
            return refusal
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        self.transactions += 1
        if self.data_faults:
            fault = self.data_faults.popleft()
            if fault == HANG:
                await self.closing.wait()  # until the fake closes
            if fault == LOSE_ANSWER:
                self._keep(envelope)
            if fault in (RESET, LOSE_ANSWER):
                transport = server.transport
                if isinstance(transport, asyncio.WriteTransport):
                    transport.abort()
                return "421 4.4.2 Connection dropped"
            return fault
        self._keep(envelope)
        return "250 Message accepted for delivery"

    def _keep(self, envelope: Envelope) -> None:
        raw = envelope.original_content or b""
        parsed = BytesParser(policy=policy.default).parsebytes(raw)
        assert isinstance(parsed, EmailMessage)
        self.received.append(
            Received(str(envelope.mail_from), list(envelope.rcpt_tos), parsed, raw)
        )


def _authenticate(
    server: SMTP, session: Session, envelope: Envelope, mechanism: str, auth_data: Any
) -> AuthResult:
    ok = (
        isinstance(auth_data, LoginPassword)
        and auth_data.login == USER.encode()
        and auth_data.password == PASSWORD.encode()
    )
    # handled=False: aiosmtpd answers a refusal with 535, as a provider does (its default
    # leaves the client waiting for an answer that never comes).
    return AuthResult(success=ok, handled=False)


class FakeSmtp:
    def __init__(self) -> None:
        self.handler = _Handler()
        self._server: asyncio.Server | None = None
        self.port = 0

    async def __aenter__(self) -> FakeSmtp:
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(
            lambda: SMTP(
                self.handler,
                hostname="fake-smtp.test",
                authenticator=_authenticate,
                auth_require_tls=False,
                decode_data=False,
            ),
            "127.0.0.1",
            0,
        )
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self.handler.closing.set()
        self._server.close()
        await self._server.wait_closed()

    @property
    def url(self) -> str:
        return f"smtp://{USER}:{PASSWORD}@127.0.0.1:{self.port}?tls=off"

    @property
    def messages(self) -> list[EmailMessage]:
        return [r.message for r in self.handler.received]

    @property
    def received(self) -> list[Received]:
        return self.handler.received

    def to(self, address: str) -> list[EmailMessage]:
        return [r.message for r in self.handler.received if address in r.recipients]

    def refuse(self, address: str, answer: str) -> None:
        self.handler.refusals[address.lower()] = answer

    def fail_next_data(self, answer: str) -> None:
        self.handler.data_faults.append(answer)
