"""Families by e-mail and text: how long the preview's count takes with many people signed
up, and how fast an urgent update reaches them through the real adapters.

`--people` confirmed subscribers (half e-mail, half texts; half English, half Spanish) are
bulk-inserted into a temporary SQLite file. Then:

1. the preview: `bot.editorial.reach.reach` for an urgent update (what Discord's and Slack's forms,
   `/strike post` and `strikebot post --dry-run` show), timed over a few runs;
2. delivery: `--deliver` of them (e-mail to a real SMTP server, aiosmtpd on 127.0.0.1;
   texts to the fake Twilio), drained by the dispatcher with the providers' pace raised to
   `--rate` per second, so the figure is the bot's own cost per message.

    .venv/bin/python -m bench.families [--people 100000] [--deliver 2000] [--rate 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from sqlalchemy import insert, select

from bot.clock import FixedClock
from bot.editorial.admin import Draft
from bot.editorial.reach import reach
from bot.models import Status, Update, UpdateState, UpdateText, Urgency
from bot.store import Store
from bot.store import schema as t
from tests.fakes.smtp import FakeSmtp
from tests.fakes.twilio import FakeTwilio
from tests.family_support import families
from tests.support import ADMIN, CAMPAIGN, FRIDAY

HEADLINE = "No deal: the strike continues Monday at every school"
HEADLINE_ES = "Sin acuerdo: la huelga continúa el lunes en todas las escuelas"


async def add_people(store: Store, count: int, *, start: int = 0) -> None:
    """`count` confirmed people, each with an active subscription, in batches."""
    for first in range(start, start + count, 5000):
        batch = range(first, min(first + 5000, start + count))
        async with store.write() as tx:
            subs = [
                {
                    "platform": "email" if n % 2 else "sms",
                    "workspace": "people",
                    "channel": f"p{n:016x}",
                    "label": "",
                    "language": "es" if (n // 2) % 2 else "en",
                    "urgencies": "urgent" if n % 3 else "important,routine,urgent",
                    "timezone": CAMPAIGN.timezone,
                    "briefing_days": "01234",
                    "active": True,
                    "created_at": FRIDAY,
                }
                for n in batch
            ]
            await tx.conn.execute(insert(t.subscriptions), subs)
            ids = dict(
                (
                    await tx.conn.execute(
                        select(t.subscriptions.c.channel, t.subscriptions.c.id).where(
                            t.subscriptions.c.channel.in_([s["channel"] for s in subs])
                        )
                    )
                ).all()
            )
            await tx.conn.execute(
                insert(t.subscribers),
                [
                    {
                        "key": s["channel"],
                        "kind": "email" if s["platform"] == "email" else "phone",
                        "address": f"parent{n}@example.com"
                        if s["platform"] == "email"
                        else f"+1213{n % 10_000_000:07d}",
                        "language": s["language"],
                        "choice": "urgent",
                        "state": "confirmed",
                        "subscription_id": ids[s["channel"]],
                        "manage_token": secrets.token_urlsafe(24),
                        "signed_up_at": FRIDAY,
                        "signed_up_via": "bench",
                        "confirmed_at": FRIDAY,
                        "confirmed_via": "bench",
                        "confirmations_today": 0,
                    }
                    for n, s in zip(batch, subs, strict=True)
                ],
            )


def urgent_update() -> Update:
    return Update(
        id=0,
        status=Status.STRIKE_ON,
        urgency=Urgency.URGENT,
        texts={"en": UpdateText(HEADLINE), "es": UpdateText(HEADLINE_ES)},
        author="bench",
        created_at=FRIDAY,
        state=UpdateState.PUBLISHED,
        published_at=FRIDAY,
    )


async def preview(people: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        async with Store.open(f"sqlite+aiosqlite:///{Path(folder) / 'bench.db'}") as store:
            await add_people(store, people)
            timings = []
            for _ in range(5):
                started = time.perf_counter()
                found = await reach(store, CAMPAIGN, urgent_update())
                timings.append(time.perf_counter() - started)
    return {
        "people": people,
        "median_ms": statistics.median(timings) * 1000,
        "says": found.sentence("en"),
    }


async def deliver(count: int, rate: float) -> dict[str, Any]:
    pace = {
        "email_per_second": rate,
        "email_connections": 8,
        "sms_per_second": rate,
        "sms_in_flight": 16,
    }
    with tempfile.TemporaryDirectory() as folder:
        async with Store.open(f"sqlite+aiosqlite:///{Path(folder) / 'bench.db'}") as store:
            await add_people(store, count)
            clock = FixedClock(FRIDAY)
            async with (
                FakeSmtp() as smtp,
                FakeTwilio() as twilio,
                families(store, clock, smtp=smtp, twilio=twilio, delivery=pace) as f,
            ):
                texts = {"en": UpdateText(HEADLINE), "es": UpdateText(HEADLINE_ES)}
                await f.admin.post(ADMIN, Draft(Status.STRIKE_ON, texts, Urgency.URGENT))
                started = time.perf_counter()
                stats = await f.drain()
                seconds = time.perf_counter() - started
    return {
        "sent": stats.sent,
        "emails": len(smtp.messages),
        "texts": len(twilio.texts),
        "seconds": seconds,
        "per_second": stats.sent / seconds if seconds else 0.0,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, default=100_000)
    parser.add_argument("--deliver", type=int, default=2_000)
    parser.add_argument("--rate", type=float, default=1000.0)
    args = parser.parse_args()
    shown = await preview(args.people)
    print(f"preview with {shown['people']:,} people: {shown['median_ms']:.1f} ms (median of 5)")
    print(f"  {shown['says']}")
    sent = await deliver(args.deliver, args.rate)
    print(
        f"delivery: {sent['emails']:,} e-mails and {sent['texts']:,} texts in "
        f"{sent['seconds']:.2f} s ({sent['per_second']:.0f} messages/s)"
    )


if __name__ == "__main__":
    asyncio.run(main())
