"""One signed POST to a receiver, and what came of it.

Signing follows the Standard Webhooks specification: `webhook-id` (the delivery id, the same
on every retry so receivers drop duplicates), `webhook-timestamp` (Unix seconds of this
attempt, by the machine's real clock: receivers refuse a signature more than five minutes
off theirs, so a campaign clock shifted with `--now` must not sign) and `webhook-signature`,
`v1,` + base64 of HMAC-SHA256 over `id.timestamp.body` keyed with the base64-decoded part of
the `whsec_` secret.

Where the request goes is checked as it is made: the connector resolves the host through
`SafeResolver`, which refuses the whole lookup if any address is not allowed, and connects
only to the addresses it checked (no DNS cache, so every request is looked up and checked
again). An IP written in the URL is checked before the request. Redirects are not
followed: a receiver that moved must be re-added at its new address.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import re
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import ThreadedResolver

from bot.ports import AddressPolicy

USER_AGENT = "strikebot-webhooks/1 (+https://www.standardwebhooks.com/)"
REQUEST_TIMEOUT = 15.0
SNIPPET = 200  # characters of a refusing receiver's answer kept for the admins


class UnsafeAddress(OSError):
    """The receiver's host resolves to an address the campaign does not allow."""


def sign(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """The `webhook-signature` header value for one request."""
    key = base64.b64decode(secret.removeprefix("whsec_") + "==")
    signed = message_id.encode() + b"." + str(timestamp).encode() + b"." + body
    digest = hmac.new(key, signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def signed_headers(secret: str, message_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    return {
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": sign(secret, message_id, timestamp, body),
    }


class SafeResolver(AbstractResolver):
    """Resolves like the system does, then refuses any address `policy` does not allow."""

    def __init__(self, policy: AddressPolicy) -> None:
        self.policy = policy
        self._inner = ThreadedResolver()

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        found = await self._inner.resolve(host, port, family)
        for result in found:
            why = self.policy.refusal(result["host"])
            if why is not None:
                raise UnsafeAddress(f"{host} resolves to {why}")
        return found

    async def close(self) -> None:
        await self._inner.close()


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one POST came to. `ok`: a 2xx. `gone`: 410 (the receiver asks to be removed).
    `refused`: the address is not allowed. `retry_after`: seconds the receiver asked for."""

    ok: bool
    detail: str
    status: int | None = None
    gone: bool = False
    refused: bool = False
    retry_after: float | None = None
    elapsed_ms: int = 0


class Sender:
    """Posts signed events; one connection pool for every endpoint."""

    def __init__(
        self,
        policy: AddressPolicy,
        *,
        timeout: float = REQUEST_TIMEOUT,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.policy = policy
        self.timeout = timeout
        self.wall_clock = wall_clock
        self._session: aiohttp.ClientSession | None = None

    async def open(self) -> None:
        if self._session is None:
            connector = aiohttp.TCPConnector(
                resolver=SafeResolver(self.policy), use_dns_cache=False, limit=64
            )
            self._session = aiohttp.ClientSession(
                connector=connector,
                timeout=aiohttp.ClientTimeout(total=self.timeout),
                trust_env=False,  # never through a proxy from the environment
            )

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def post(self, url: str, secret: str, message_id: str, body: bytes) -> Outcome:
        await self.open()
        assert self._session is not None
        host = urlsplit(url).hostname or ""
        literal = _ip_literal(host)
        if literal is not None:
            why = self.policy.refusal(literal)
            if why is not None:
                return Outcome(False, f"{url} is refused: {why}", refused=True)
        headers = signed_headers(secret, message_id, int(self.wall_clock()), body)
        started = time.perf_counter()
        try:
            async with self._session.post(
                url, data=body, headers=headers, allow_redirects=False
            ) as response:
                text = await response.content.read(SNIPPET * 4)
                status = response.status
                retry_after = _seconds(response.headers.get("Retry-After"))
                location = response.headers.get("Location", "")
        except aiohttp.ClientConnectorError as exc:
            if isinstance(exc.os_error, UnsafeAddress):
                return Outcome(False, f"refused: {exc.os_error}", refused=True)
            return Outcome(False, f"cannot connect to {host}: {exc.os_error}")
        except TimeoutError:
            return Outcome(False, f"no answer within {self.timeout:g} s")
        except aiohttp.ClientError as exc:
            return Outcome(False, f"{type(exc).__name__}: {exc}")
        elapsed = int((time.perf_counter() - started) * 1000)
        if 200 <= status < 300:
            return Outcome(True, f"HTTP {status}", status, elapsed_ms=elapsed)
        # A proxy's HTML page: its words, not its tags, reach the admins.
        plain = re.sub(r"<[^>]*>?", " ", text.decode("utf-8", "replace"))
        snippet = " ".join(plain.split())[:SNIPPET]
        if 300 <= status < 400:
            detail = (
                f"HTTP {status}: redirected to {location[:SNIPPET] or '(nowhere)'}; webhooks do "
                "not follow redirects, so add the receiver at its new address"
            )
        else:
            detail = f"HTTP {status}" + (f": {snippet}" if snippet else "")
        return Outcome(
            False,
            detail,
            status,
            gone=status == 410,
            retry_after=retry_after if status in (429, 503) else None,
            elapsed_ms=elapsed,
        )


def _ip_literal(host: str) -> str | None:
    try:
        return str(ipaddress.ip_address(host.strip("[]")))
    except ValueError:
        return None


def _seconds(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        return None
