"""A webhook receiver on 127.0.0.1 that checks every request the way a careful receiver
does: the signature with the reference `standardwebhooks` package (which also refuses a
timestamp more than five minutes off), then drops a `webhook-id` it has already accepted.

It can be told to fail: answer a status (with a JSON, HTML or plain-text body, and a
Retry-After), hang until the client gives up, or drop the connection unanswered.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from standardwebhooks import Webhook, WebhookVerificationError

from tests.fakes._server import serve


@dataclass(slots=True)
class Received:
    """One request as it arrived: whether its signature verified, and what it carried."""

    webhook_id: str
    timestamp: str
    verified: bool
    duplicate: bool
    status: int
    event: dict[str, Any] | None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class Answer:
    status: int
    body: str = ""
    content_type: str = "text/plain"
    retry_after: str | None = None
    hang: bool = False
    reset: bool = False  # drop the connection without an answer
    lost: bool = False  # take the event (as a 2xx would), then drop the connection unanswered


class Receiver:
    """`async with Receiver(secret) as r:` then point an endpoint at `r.url`. Set `secret`
    once known (it is shown when the endpoint is added)."""

    def __init__(self, secret: str | None = None, *, path: str = "/hooks/strike") -> None:
        self.secret = secret
        self.path = path
        self.requests: list[Received] = []
        self.answers: deque[Answer] = deque()
        self.always: Answer | None = None
        self._seen: set[str] = set()
        self._runner: web.AppRunner | None = None
        self._port = 0
        self._release = asyncio.Event()

    async def __aenter__(self) -> Receiver:
        app = web.Application()
        app.router.add_post(self.path, self._receive)
        self._runner, self._port = await serve(app, access_log=None)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._release.set()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}{self.path}"

    def fail(self, *answers: Answer) -> None:
        """Answer the next requests with these, in order; then accept again."""
        self.answers.extend(answers)

    @property
    def accepted(self) -> list[dict[str, Any]]:
        """The events taken in: verified, first of their id, answered 2xx."""
        return [
            r.event
            for r in self.requests
            if r.verified and not r.duplicate and r.status < 300 and r.event is not None
        ]

    async def _receive(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        headers = {k.lower(): v for k, v in request.headers.items()}
        webhook_id = headers.get("webhook-id", "")
        verified = False
        event = None
        if self.secret is not None:
            try:
                event = Webhook(self.secret).verify(body, headers)
                verified = True
            except WebhookVerificationError:
                verified = False
        answer = self.answers.popleft() if self.answers else self.always
        duplicate = verified and webhook_id in self._seen and answer is None
        status = 401 if not verified else (answer.status if answer else 204)
        if answer is not None and (answer.hang or answer.reset or answer.lost):
            status = 0  # never answered
        record = Received(
            webhook_id, headers.get("webhook-timestamp", ""), verified, duplicate, status,
            event if isinstance(event, dict) else json.loads(body or b"null"), headers,
        )  # fmt: skip
        self.requests.append(record)
        if answer is not None and answer.hang:
            await self._release.wait()
        if answer is not None and answer.reset and request.transport is not None:
            request.transport.abort()
            return web.Response(status=500)
        if answer is not None and answer.lost and request.transport is not None:
            if verified:
                self._seen.add(webhook_id)
            request.transport.abort()
            return web.Response(status=500)
        if not verified:
            return web.Response(status=401, text="bad signature")
        if answer is not None:
            headers_out = {"Retry-After": answer.retry_after} if answer.retry_after else {}
            return web.Response(
                status=answer.status,
                body=answer.body.encode(),
                content_type=answer.content_type,
                headers=headers_out,
            )
        self._seen.add(webhook_id)
        return web.Response(status=204)
