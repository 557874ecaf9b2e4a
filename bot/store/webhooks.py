"""Webhook endpoints: the URL and signing secret behind each webhook subscription, and how
its deliveries have been going (failing since when, the last error). A mixin of `Tx`.

The secret is stored as given (it must be, to sign); it is shown once, when the endpoint is
added, and never printed or logged after that.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Row, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.models import WebhookEndpoint
from bot.store import schema as t
from bot.store.codecs import subscription_from_row

_e = t.webhook_endpoints
_s = t.subscriptions


class WebhookStore:
    conn: AsyncConnection

    async def save_webhook_endpoint(
        self,
        subscription_id: int,
        *,
        url: str,
        secret: str,
        description: str,
        created_by: str,
        now: datetime,
    ) -> None:
        """Create the endpoint of a subscription, or start it afresh (new secret, no
        failures) when the same URL is added again."""
        values = {
            "url": url,
            "secret": secret,
            "description": description,
            "created_at": now,
            "created_by": created_by,
            "failing_since": None,
            "last_success_at": None,
            "last_error": None,
        }
        exists = await self.conn.scalar(
            select(_e.c.subscription_id).where(_e.c.subscription_id == subscription_id)
        )
        if exists is None:
            await self.conn.execute(insert(_e).values(subscription_id=subscription_id, **values))
        else:
            await self.conn.execute(
                update(_e).where(_e.c.subscription_id == subscription_id).values(**values)
            )

    async def get_webhook_endpoint(self, subscription_id: int) -> WebhookEndpoint | None:
        row = (
            await self.conn.execute(_joined().where(_e.c.subscription_id == subscription_id))
        ).first()
        return None if row is None else _endpoint(row)

    async def find_webhook_endpoint(
        self, platform: str, workspace: str, channel: str
    ) -> WebhookEndpoint | None:
        """The endpoint at a subscription address (what a delivery's channel names)."""
        row = (
            await self.conn.execute(
                _joined().where(
                    _s.c.platform == platform, _s.c.workspace == workspace, _s.c.channel == channel
                )
            )
        ).first()
        return None if row is None else _endpoint(row)

    async def list_webhook_endpoints(self, *, active_only: bool = True) -> list[WebhookEndpoint]:
        query = _joined().order_by(_e.c.subscription_id)
        if active_only:
            query = query.where(_s.c.active.is_(True))
        return [_endpoint(row) for row in await self.conn.execute(query)]

    async def record_webhook_success(self, subscription_id: int, now: datetime) -> None:
        await self.conn.execute(
            update(_e)
            .where(_e.c.subscription_id == subscription_id)
            .values(failing_since=None, last_success_at=now, last_error=None)
        )

    async def record_webhook_failure(
        self, subscription_id: int, now: datetime, error: str
    ) -> datetime:
        """Note a failed delivery; returns since when the endpoint has been failing."""
        since = await self.conn.scalar(
            select(_e.c.failing_since).where(_e.c.subscription_id == subscription_id)
        )
        values: dict[str, Any] = {"last_error": error[:2000]}
        if since is None:
            since = values["failing_since"] = now
        await self.conn.execute(
            update(_e).where(_e.c.subscription_id == subscription_id).values(**values)
        )
        assert isinstance(since, datetime)
        return since

    async def reset_webhook_failures(self, subscription_id: int) -> None:
        """Forget a failing streak (the endpoint was disabled, or is being enabled again)."""
        await self.conn.execute(
            update(_e).where(_e.c.subscription_id == subscription_id).values(failing_since=None)
        )


def _joined() -> Any:
    # The subscription's columns as they are (what `subscription_from_row` reads), and the
    # endpoint's under names of their own (both tables have a `created_at`).
    own = [c.label(f"endpoint_{c.name}") for c in _e.c if c.name != "subscription_id"]
    return select(_s, _e.c.subscription_id, *own).select_from(
        _e.join(_s, _s.c.id == _e.c.subscription_id)
    )


def _endpoint(row: Row[Any]) -> WebhookEndpoint:
    sub = subscription_from_row(row)
    return WebhookEndpoint(
        id=row.subscription_id,
        url=row.endpoint_url,
        secret=row.endpoint_secret,
        subscription=sub,
        created_at=row.endpoint_created_at,
        created_by=row.endpoint_created_by,
        description=row.endpoint_description,
        active=bool(row.active),
        failing_since=row.endpoint_failing_since,
        last_success_at=row.endpoint_last_success_at,
        last_error=row.endpoint_last_error,
    )
