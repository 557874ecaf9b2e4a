"""The preview's count (`bot.editorial.reach`) agrees with who the outbox will actually queue."""

from __future__ import annotations

from dataclasses import replace

from bot.clock import FixedClock
from bot.commands import CommandContext, Commands
from bot.delivery.planning import wants
from bot.editorial.admin import Admin, Draft
from bot.editorial.reach import reach
from bot.models import Contact, Status, Subscription, Update, UpdateState, UpdateText, Urgency
from bot.people.signups import Offer, SignUps
from bot.store import Store
from tests.support import ADMIN, ADMINS, CAMPAIGN


async def test_reach_counts_whom_the_outbox_queues(
    store: Store, admin: Admin, clock: FixedClock
) -> None:
    base = Subscription(id=0, platform="console", workspace="local", channel="x", language="en")
    variants = [
        replace(base, channel="all"),
        replace(base, channel="urgent", urgencies=frozenset({Urgency.URGENT})),
        replace(base, channel="important", urgencies=frozenset({Urgency.IMPORTANT})),
        replace(base, channel="es", language="es", urgencies=frozenset({Urgency.URGENT})),
        replace(base, channel="gone"),
        replace(base, channel="broken"),
    ]
    saved = [await admin.subscribe(ADMIN, sub) for sub in variants]
    await admin.unsubscribe(ADMIN, saved[4].id)
    async with store.write() as tx:
        await tx.mark_subscription_broken(saved[5].id, "403 missing access")
    for urgency in Urgency:
        draft = Draft(Status.STRIKE_ON, {"en": UpdateText(f"{urgency} news")}, urgency)
        found = await reach(store, CAMPAIGN, _unposted(draft, clock))
        posted = await admin.post(ADMIN, draft)
        async with store.read() as tx:
            queued = len(await tx.list_deliveries(update_id=posted.id, limit=None))
            expected = sum(1 for s in await tx.list_subscriptions() if wants(s, posted))
        assert found.channels == queued == expected
        assert found.people == 0


def _unposted(draft: Draft, clock: FixedClock) -> Update:
    return Update(
        id=0,
        status=draft.status,
        urgency=draft.urgency,
        texts=draft.texts,
        author="preview",
        created_at=clock(),
        state=UpdateState.PUBLISHED,
        published_at=clock(),
    )


async def test_posting_from_chat_says_what_it_costs_when_people_get_it(
    sqlite_store: Store, clock: FixedClock
) -> None:
    admin = Admin(sqlite_store, CAMPAIGN, ADMINS, clock)
    commands = Commands(sqlite_store, CAMPAIGN, admin, clock)
    people = SignUps(sqlite_store, CAMPAIGN, clock)
    people.offer(Offer(Contact.PHONE, "sms"))
    await people.join(Contact.PHONE, "+12135550123", language="es", via="test")
    reply = await commands.post(
        CommandContext("discord", ADMIN, "g", "c"),
        "strike_on",
        "Strike is on",
        urgency="urgent",
        texts={"es": {"headline": "Comienza la huelga"}},
    )
    assert reply.ok and "It will go to 1 text segment." in reply.message.body
