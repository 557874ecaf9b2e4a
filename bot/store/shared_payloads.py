"""Payloads shared by many deliveries: a schedule's morning briefing, one row per (run,
language) in `shared_payloads`, instead of a ~3 KB copy in each of 100,000 outbox rows.

A delivery names its shared payload in `shared_payload_id` and leaves its own `payload`
NULL. The row is written in the transaction that queues the first deliveries naming it,
and never changed. Whoever reads deliveries gives them their payload with
`Tx.with_shared_payloads`: one read per distinct shared payload in a transaction
(remembered on the `Tx`), whatever the number of rows naming it. The history purge deletes
a shared payload once no delivery names it (`purge_unused`).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from datetime import datetime
from typing import TypeVar

from sqlalchemy import delete, exists, insert, literal, select

from bot.store import schema as t
from bot.store.repo import Tx

K = TypeVar("K", bound=Hashable)
_s = t.shared_payloads
_d = t.deliveries


async def add(tx: Tx, payloads: Mapping[K, Mapping[str, object]], now: datetime) -> dict[K, int]:
    """Write these payloads (keyed by anything: a briefing's language and audience here);
    returns their ids."""
    ids: dict[K, int] = {}
    for key, payload in payloads.items():
        new_id = await tx.conn.scalar(
            insert(_s).values(payload=dict(payload), created_at=now).returning(_s.c.id)
        )
        ids[key] = int(new_id)
        tx.shared_payloads[ids[key]] = payload
    return ids


async def purge_unused(tx: Tx, *, before: datetime) -> int:
    """Delete the shared payloads written before `before` that no delivery names any more
    (each looked up through the deliveries' index on `shared_payload_id`). Returns how many.

    Only older ones: the history purge deletes deliveries queued before `before`, and a
    payload is written with the first deliveries naming it, never alone."""
    used = exists(select(literal(1)).where(_d.c.shared_payload_id == _s.c.id))
    result = await tx.conn.execute(delete(_s).where(_s.c.created_at < before, ~used))
    return int(result.rowcount)


__all__ = ["add", "purge_unused"]
