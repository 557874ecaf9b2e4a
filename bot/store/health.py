"""Can the store be read, and written? The answer `/healthz` and `/readyz` give."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from bot.clock import Clock
from bot.errors import StrikebotError
from bot.store import Store
from bot.store.repo import Tx

PROBE_TIMEOUT = 3.0  # seconds for each of the store probes
WRITE_PROOF_SECONDS = 1.0  # while writing: a commit this recent proves the store takes writes
PROBE_KEY = "health.write_probe"  # a row in `meta` that every write probe rewrites


@dataclass(frozen=True, slots=True)
class StoreHealth:
    """Whether the store answered a read and committed a write; `error`, one line why not."""

    reachable: bool
    writable: bool
    error: str | None = None


async def _read_probe(tx: Tx) -> None:
    await tx.ping()


async def probe(store: Store, clock: Clock) -> StoreHealth:
    """A real committed write (one row in `meta`), so a read-only file or standby, a damaged
    or full store shows here and not first in a post; or, while SQLite's writer is busy,
    the write committed before (`Store.busy_writing`)."""

    async def write_probe(tx: Tx) -> None:
        await tx.set_meta(PROBE_KEY, clock().isoformat())

    # Through `transact`: a pooled connection that died since its last use (a failover, a
    # restart of the server) is replaced and the probe asked again, as the dispatcher's work
    # is, so the answer is about the database and not about one stale connection.
    try:
        async with asyncio.timeout(PROBE_TIMEOUT):
            await store.transact(_read_probe, write=False)
    except Exception as exc:
        return StoreHealth(reachable=False, writable=False, error=_why(exc))
    if store.busy_writing(within=WRITE_PROOF_SECONDS):
        # Writes are committing right now, and a probe of its own would wait behind them
        # (a page of 1,000 briefings at 07:00 holds SQLite's writer for ~70 ms).
        return StoreHealth(reachable=True, writable=True)
    try:
        async with asyncio.timeout(PROBE_TIMEOUT):
            await store.transact(write_probe)
    except Exception as exc:
        return StoreHealth(reachable=True, writable=False, error=_why(exc))
    return StoreHealth(reachable=True, writable=True)


def _why(exc: BaseException) -> str:
    """One line: the store's own sentence (StoreUnavailable), never SQL or a traceback."""
    if isinstance(exc, StrikebotError):
        return exc.message
    if isinstance(exc, TimeoutError):
        return (
            f"The database did not answer within {PROBE_TIMEOUT:g} s: it is overloaded, locked "
            "by a long transaction, or unreachable."
        )
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0][:200] if lines else ''}".rstrip(": ")
