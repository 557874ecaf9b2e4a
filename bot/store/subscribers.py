"""People who signed up by e-mail or text, and what providers said about their messages.

The `subscribers` table is the one place an address or number is kept (see
docs/privacy.md); `bot.people.signups` is its only writer. Adapters read a person's address here
at send time, by the opaque key that is their subscription's channel. A mixin of `Tx`.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import Row, delete, func, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.models import EVERYONE, Audience, DeliveryState, Subscriber, Subscription
from bot.store import schema as t
from bot.store.codecs import subscription_to_values
from bot.store.sites import audience_clause, receives


def _subscriber(row: Row[Any]) -> Subscriber:
    return Subscriber(
        id=row.id,
        key=row.key,
        kind=row.kind,
        address=row.address,
        language=row.language,
        choice=row.choice,
        state=row.state,
        manage_token=row.manage_token,
        signed_up_at=row.signed_up_at,
        signed_up_via=row.signed_up_via,
        subscription_id=row.subscription_id,
        confirmed_at=row.confirmed_at,
        confirmed_via=row.confirmed_via,
        confirm_expires=row.confirm_expires,
        requested=dict(row.requested) if row.requested else None,
        last_confirmation_at=row.last_confirmation_at,
        confirmations_today=row.confirmations_today,
        confirmations_since=row.confirmations_since,
        broken_reason=row.broken_reason,
        broken_at=row.broken_at,
        keys=dict(row.keys) if row.keys else None,
        heard_at=row.heard_at,
    )


OUTBOX_CHANNEL = "strikebot_outbox"  # PostgreSQL NOTIFY channel for new outbox rows


class SubscriberStore:
    conn: AsyncConnection
    enqueued: int

    @property
    def dialect(self) -> str:
        return self.conn.dialect.name

    async def _one_subscriber(self, *conditions: Any) -> Subscriber | None:
        row = (await self.conn.execute(select(t.subscribers).where(*conditions))).first()
        return None if row is None else _subscriber(row)

    async def find_subscriber(self, kind: str, address: str) -> Subscriber | None:
        s = t.subscribers.c
        return await self._one_subscriber(s.kind == kind, s.address == address)

    async def subscriber_by_key(self, key: str) -> Subscriber | None:
        return await self._one_subscriber(t.subscribers.c.key == key)

    async def subscribers_by_keys(self, keys: list[str]) -> dict[str, Subscriber]:
        rows = await self.conn.execute(select(t.subscribers).where(t.subscribers.c.key.in_(keys)))
        return {r.key: _subscriber(r) for r in rows}

    async def subscriber_by_token(self, manage_token: str) -> Subscriber | None:
        return await self._one_subscriber(t.subscribers.c.manage_token == manage_token)

    async def subscriber_by_digest(self, digest: str) -> Subscriber | None:
        return await self._one_subscriber(t.subscribers.c.confirm_digest == digest)

    async def insert_subscriber(self, values: Mapping[str, Any]) -> int:
        result = await self.conn.execute(
            insert(t.subscribers).values(**values).returning(t.subscribers.c.id)
        )
        return int(result.scalar_one())

    async def set_subscriber(self, subscriber_id: int, values: Mapping[str, Any]) -> None:
        await self.conn.execute(
            update(t.subscribers).where(t.subscribers.c.id == subscriber_id).values(**values)
        )

    async def delete_subscriber(self, subscriber_id: int) -> None:
        """Delete the person's row. On SQLite every page it frees is zeroed too (secure
        delete on for this statement), so no copy stays on the free list; the WAL still
        holds copies until `Store.scrub` runs after the commit. What their subscription
        followed (which school: it says something about them too) is forgotten with it."""
        sqlite = self.conn.dialect.name == "sqlite"
        if sqlite:
            await self.conn.exec_driver_sql("PRAGMA secure_delete=ON")
        s = t.subscribers.c
        sub_id = await self.conn.scalar(select(s.subscription_id).where(s.id == subscriber_id))
        if sub_id is not None:
            follows = t.subscription_follows
            await self.conn.execute(delete(follows).where(follows.c.subscription_id == sub_id))
            await self.conn.execute(
                update(t.subscriptions).where(t.subscriptions.c.id == sub_id).values(follows=None)
            )
        await self.conn.execute(delete(t.subscribers).where(t.subscribers.c.id == subscriber_id))
        if sqlite:
            await self.conn.exec_driver_sql("PRAGMA secure_delete=FAST")

    async def expired_subscribers(
        self, *, pending_before: datetime, broken_before: datetime, limit: int = 500
    ) -> list[Subscriber]:
        """Unconfirmed sign-ups whose confirmation lapsed before `pending_before` (and
        addresses that were only told something, once their time is up), and
        addresses broken since before `broken_before`: kept no longer (docs/privacy.md)."""
        s = t.subscribers.c
        rows = await self.conn.execute(
            select(t.subscribers)
            .where(
                or_(
                    # "direct": an address that got one message it did not sign up for
                    # (`SignUps.tell`), kept only until its time is up.
                    s.state.in_(("pending", "direct")) & (s.confirm_expires < pending_before),
                    s.broken_at < broken_before,
                )
            )
            .order_by(s.id)
            .limit(limit)
        )
        return [_subscriber(r) for r in rows]

    async def all_subscribers(self, *, after_id: int = 0, limit: int = 1000) -> list[Subscriber]:
        s = t.subscribers.c
        rows = await self.conn.execute(
            select(t.subscribers).where(s.id > after_id).order_by(s.id).limit(limit)
        )
        return [_subscriber(r) for r in rows]

    async def subscriber_counts(self) -> dict[tuple[str, str, str, str, bool], int]:
        """(kind, state, language, choice, broken) -> how many people."""
        s = t.subscribers.c
        broken = s.broken_reason.is_not(None)
        query = select(s.kind, s.state, s.language, s.choice, broken, func.count()).group_by(
            s.kind, s.state, s.language, s.choice, broken
        )
        return {
            (kind, state, lang, choice, bool(is_broken)): int(n)
            for kind, state, lang, choice, is_broken, n in await self.conn.execute(query)
        }

    async def audience_counts(
        self, urgency: str, audience: Audience = EVERYONE
    ) -> dict[tuple[str, str, str], int]:
        """(platform, language, time zone) -> how many working subscriptions receive updates
        of `urgency` addressed to `audience`: the preview's count, in one grouped query
        however many people, of the rows `SiteStore.recipients` gives the fan-out."""
        s = t.subscriptions.c
        query = (
            select(s.platform, s.language, s.timezone, func.count())
            .where(*receives(urgency), audience_clause(audience))
            .group_by(s.platform, s.language, s.timezone)
        )
        return {(p, lang, tz): int(n) for p, lang, tz, n in await self.conn.execute(query)}

    async def insert_quiet_subscription(self, sub: Subscription, now: datetime) -> int:
        """A subscription that receives nothing yet (inactive): a sign-up's, until confirmed.
        Only its confirmation (DeliveryAction.CONFIRM) reaches it."""
        values = subscription_to_values(sub) | {"active": False}
        result = await self.conn.execute(
            insert(t.subscriptions)
            .values(**values, created_at=sub.created_at or now)
            .returning(t.subscriptions.c.id)
        )
        sub_id = int(result.scalar_one())
        if not sub.follows.everyone:
            await self.conn.execute(
                insert(t.subscription_follows),
                [{"subscription_id": sub_id, "kind": kind, "code": code}
                 for kind, codes in (("site", sub.follows.sites), ("group", sub.follows.groups))
                 for code in codes],
            )  # fmt: skip
        return sub_id

    # -- receipts --------------------------------------------------------------

    async def record_receipt(
        self, delivery_id: str, platform: str, status: str, error: str | None, now: datetime
    ) -> bool:
        """Record a provider's word on a sent message. A final status (delivered, failed,
        undelivered) is never overwritten by a late intermediate one (sent, queued).
        Returns False when the delivery does not exist (a forged or stale callback)."""
        known = await self.conn.scalar(
            select(t.deliveries.c.id).where(
                t.deliveries.c.id == delivery_id, t.deliveries.c.platform == platform
            )
        )
        if known is None:
            return False
        current = await self.conn.scalar(
            select(t.receipts.c.status).where(t.receipts.c.delivery_id == delivery_id)
        )
        if current is None:
            await self.conn.execute(
                insert(t.receipts).values(
                    delivery_id=delivery_id, platform=platform, status=status, error=error, at=now
                )
            )
        elif current not in FINAL_RECEIPTS or status in FINAL_RECEIPTS:
            await self.conn.execute(
                update(t.receipts)
                .where(t.receipts.c.delivery_id == delivery_id)
                .values(status=status, error=error, at=now)
            )
        return True

    async def receipt_counts(self) -> dict[tuple[str, str], int]:
        """(platform, status) -> how many messages."""
        r = t.receipts.c
        query = select(r.platform, r.status, func.count()).group_by(r.platform, r.status)
        return {(p, s): int(n) for p, s, n in await self.conn.execute(query)}

    async def send_again(
        self, delivery_id: str, platform: str, why: str, now: datetime
    ) -> int | None:
        """Put a SENT copy on `platform` back in the queue, due now (the provider said later
        it was not delivered, for a reason the next try avoids). Returns its subscription's
        id, or None when there is no such sent copy."""
        d = t.deliveries.c
        sub_id = await self.conn.scalar(
            update(t.deliveries)
            .where(
                d.id == delivery_id,
                d.platform == platform,
                d.state == str(DeliveryState.SENT),
            )
            .values(
                state=str(DeliveryState.PENDING),
                not_before=now,
                last_error=why[:500],
                claimed_by=None,
                claimed_until=None,
            )
            .returning(d.subscription_id)
        )
        if sub_id is None:
            return None
        self.enqueued += 1
        if self.dialect == "postgresql":
            await self.conn.execute(select(func.pg_notify(OUTBOX_CHANNEL, "")))
        return int(sub_id)

    async def subscription_of_delivery(self, delivery_id: str) -> int | None:
        return await self.conn.scalar(
            select(t.deliveries.c.subscription_id).where(t.deliveries.c.id == delivery_id)
        )


FINAL_RECEIPTS = frozenset({"delivered", "undelivered", "failed", "read"})
