"""Signed webhooks end to end: endpoints added through the core use cases (refusing private
addresses), every change queued in the outbox as an event, the real dispatcher and the
webhooks plugin POSTing it to a receiver on 127.0.0.1 that verifies each signature with the
reference `standardwebhooks` package, retries with the same `webhook-id`, and an endpoint
that keeps failing disabled with a notice to the admins.

Time is a FixedClock moved by hand; retries go back to the queue (`inline_retry_limit=0`),
so no test waits for a backoff to pass.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from adapters.webhooks import WebhookAdapter, next_try, sign
from bot.channels.webhooks import AddressPolicy, Created, Webhooks, check_url, parse_networks
from bot.clock import FixedClock
from bot.config import StrikeConfig
from bot.delivery.dispatcher import Dispatcher, DrainStats, Timings
from bot.editorial.admin import Admin, Changes, Draft
from bot.errors import Conflict, InvalidInput
from bot.models import (
    DeliveryAction,
    DeliveryState,
    Demand,
    DemandStatus,
    DemandText,
    Status,
    Subscription,
    UpdateText,
    Urgency,
)
from bot.runtime.context import PluginContext
from bot.store import Store
from tests.fakes.receiver import Answer, Receiver
from tests.support import ADMIN, MEMBER, campaign_config, plugin_ctx

LOOPBACK = {"allowed_networks": ["127.0.0.0/8"]}
ADMIN_CHANNEL = Subscription(
    id=0, platform="console", workspace="local", channel="admins", language="en"
)
HTML_500 = Answer(500, "<html><body><h1>502 Bad Gateway</h1></body></html>", "text/html")
JSON_503 = Answer(503, '{"error": "maintenance"}', "application/json")
PLAIN_500 = Answer(500, "upstream timed out", "text/plain")


@dataclass(slots=True)
class Rig:
    """The core and the webhooks plugin as `strikebot run` builds them."""

    store: Store
    clock: FixedClock
    ctx: PluginContext
    admin: Admin
    webhooks: Webhooks
    adapter: WebhookAdapter
    config: StrikeConfig

    async def deliver(self) -> DrainStats:
        """One dispatcher pass over what is due now (a fresh one, so no pause carries over)."""
        dispatcher = Dispatcher(
            self.store,
            {"webhooks": self.adapter},
            self.ctx.campaign,
            self.clock,
            settings=self.config.delivery,
            worker_id="webhook-test",
            rng=random.Random(3),
            timings=Timings(inline_retry_limit=0.0, send_timeout=10.0),
        )
        return await dispatcher.drain()

    async def rows(self, action: DeliveryAction | None = None) -> list[Any]:
        async with self.store.read() as tx:
            found = await tx.list_deliveries(limit=None)
        return [d for d in found if action is None or d.action is action]


def rig_for(store: Store, clock: FixedClock, **webhooks: Any) -> Rig:
    config = campaign_config(
        webhooks=webhooks or LOOPBACK, delivery={"admin_channels": ["console:local/admins"]}
    )
    ctx = plugin_ctx("webhooks", store, clock, config=config)
    return Rig(store, clock, ctx, ctx.admin, ctx.webhooks, WebhookAdapter(ctx), config)


@pytest.fixture
async def rig(store: Store, clock: FixedClock) -> AsyncIterator[Rig]:
    made = rig_for(store, clock)
    await made.adapter.start()
    try:
        yield made
    finally:
        await made.adapter.stop()


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    async with Receiver() as running:
        yield running


async def add(rig: Rig, receiver: Receiver, **options: Any) -> Created:
    created = await rig.webhooks.add(ADMIN, receiver.url, **options)
    receiver.secret = created.secret
    return created


def draft(headline: str = "The strike is on", urgency: Urgency = Urgency.URGENT) -> Draft:
    return Draft(
        Status.STRIKE_ON,
        {
            "en": UpdateText(headline, "Picket at your school at 6:30.", "Picket at 6:30"),
            "es": UpdateText("La huelga comenzó", "Piquete en tu escuela a las 6:30."),
        },
        urgency,
    )


# ---------------------------------------------------------------------------- addresses


@pytest.mark.parametrize(
    ("url", "because"),
    [
        ("http://10.0.0.5/hook", "10.0.0.5 is a private address"),
        ("https://192.168.1.20/hook", "192.168.1.20 is a private address"),
        ("http://127.0.0.1:8080/hook", "127.0.0.1 is a loopback address"),
        ("http://[::1]/hook", "::1 is a loopback address"),
        ("http://localhost/hook", "is a loopback address"),
        ("http://169.254.169.254/latest/meta-data", "169.254.169.254 is a link-local address"),
        ("http://[::ffff:10.1.2.3]/hook", "10.1.2.3 is a private address"),
        ("http://100.64.0.1/hook", "100.64.0.1 is a non-public address"),
    ],
)
async def test_private_loopback_and_link_local_receivers_are_refused(
    sqlite_store: Store, clock: FixedClock, url: str, because: str
) -> None:
    strict = rig_for(sqlite_store, clock, allow_private=False)
    with pytest.raises(InvalidInput) as refused:
        await strict.webhooks.add(ADMIN, url)
    assert because in refused.value.message
    assert "[webhooks]" in refused.value.message  # says how to allow a receiver of your own
    assert await strict.webhooks.list() == []


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("ftp://hooks.example.org/x", "must start with https://"),
        ("hooks.example.org/x", "must start with https://"),
        ("https://user:pw@hooks.example.org/x", "Leave user names and passwords out"),
        ("https://hooks.example.org/x#frag", "Leave the #fragment out"),
        ("https://hooks.example.org:99999/x", "is not a URL"),
        ("", "full address"),
    ],
)
def test_malformed_urls_say_what_to_write(url: str, problem: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        check_url(url)
    assert problem in refused.value.message


# Every IPv6 form that carries an IPv4 address, each carrying a loopback, a private and a
# link-local one (the cloud metadata address): a translator or tunnel would deliver there.
EMBEDDING = {
    "IPv4-mapped ::ffff:0:0/96": "::ffff:{}",
    "IPv4-translated ::ffff:0:0:0/96": "::ffff:0:{}",
    "IPv4-compatible ::/96": "::{}",
    "NAT64 64:ff9b::/96": "64:ff9b::{}",
    "local NAT64 64:ff9b:1::/48": "64:ff9b:1::{}",
    "6to4 2002::/16": "2002:{}::1",
    "Teredo 2001::/32 server": "2001:0:{}:0:0:0:1",
    "Teredo 2001::/32 client": "2001:0:4136:e378:8000:63bf:{}",
}
CARRIED = ("127.0.0.1", "10.1.2.3", "169.254.169.254")


def _embed(form: str, ipv4: str) -> str:
    a, b, c, d = (int(part) for part in ipv4.split("."))
    if "client" in form:  # Teredo obfuscates the client's address (RFC 4380 4)
        a, b, c, d = a ^ 0xFF, b ^ 0xFF, c ^ 0xFF, d ^ 0xFF
    return EMBEDDING[form].format(f"{a << 8 | b:x}:{c << 8 | d:x}")


@pytest.mark.parametrize("form", list(EMBEDDING))
async def test_ipv6_addresses_carrying_a_private_ipv4_are_refused(
    sqlite_store: Store, clock: FixedClock, form: str
) -> None:
    strict = rig_for(sqlite_store, clock, allow_private=False)
    for ipv4 in CARRIED:
        address = _embed(form, ipv4)
        why = AddressPolicy().refusal(address)
        assert why is not None, (form, address)
        assert ipv4 in why or "local-use NAT64" in why, why
        with pytest.raises(InvalidInput):
            await strict.webhooks.add(ADMIN, f"https://[{address}]/hook")
    assert await strict.webhooks.list() == []


def test_a_nat64_address_of_a_public_ipv4_is_allowed() -> None:
    assert AddressPolicy().refusal("64:ff9b::93.184.216.34") is None
    assert AddressPolicy().refusal("2606:4700:4700::1111") is None


def test_the_campaign_file_allows_a_network_explicitly() -> None:
    policy = AddressPolicy(allowed_networks=parse_networks(["127.0.0.0/8"]))
    assert policy.refusal("127.0.0.1") is None
    assert policy.refusal("10.0.0.5") == "10.0.0.5 is a private address"
    assert AddressPolicy(allow_private=True).refusal("10.0.0.5") is None
    assert AddressPolicy().refusal("93.184.216.34") is None  # a public address
    assert AddressPolicy().refusal("224.0.0.1") is not None  # multicast is never a receiver


async def test_only_admins_add_webhooks_and_one_url_is_added_once(
    rig: Rig, receiver: Receiver
) -> None:
    from bot.errors import NotAllowed

    with pytest.raises(NotAllowed):
        await rig.webhooks.add(MEMBER, receiver.url)
    created = await add(rig, receiver)
    assert created.secret.startswith("whsec_") and len(created.secret) > 30
    with pytest.raises(Conflict, match=f"already webhook #{created.endpoint.id}"):
        await rig.webhooks.add(ADMIN, receiver.url)
    async with rig.store.read() as tx:
        [entry] = [e for e in await tx.list_audit() if e.action == "webhook.add"]
    assert created.secret not in str(entry.after)  # the audit log never holds the secret


def test_our_signature_is_the_reference_librarys() -> None:
    from standardwebhooks import Webhook

    secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    body = b'{"type":"webhook.test"}'
    moment = datetime(2026, 1, 1, tzinfo=UTC)
    expected = Webhook(secret).sign("msg_1", moment, body.decode())
    assert sign(secret, "msg_1", int(moment.timestamp()), body) == expected


# ---------------------------------------------------------------------------- events


async def test_every_change_reaches_the_receiver_once_signed(
    rig: Rig, receiver: Receiver, clock: FixedClock
) -> None:
    await add(rig, receiver)
    async with rig.store.write() as tx:
        await tx.insert_demand(
            Demand(
                "nurses",
                0,
                DemandStatus.OPEN,
                {"en": DemandText("A nurse in every school"), "es": DemandText("Enfermeras")},
                clock(),
            )
        )
    update = await rig.admin.post(ADMIN, draft())
    await rig.deliver()
    clock.advance(minutes=5)
    await rig.admin.edit(
        ADMIN, update.id, Changes(texts={"en": UpdateText("Strike on: day 1")}), reason="Typo"
    )
    await rig.deliver()
    clock.advance(minutes=5)
    await rig.admin.edit(
        ADMIN,
        update.id,
        Changes(next_step_at=clock() + timedelta(days=1)),
        reason="Rally time added",
        correction=True,
    )
    await rig.admin.record_demand(
        ADMIN,
        "nurses",
        status=DemandStatus.OFFER_ON_TABLE,
        offer={"en": "More nurses for one year", "es": "Más enfermeras por un año"},
        source="District proposal, Jan 19",
    )
    await rig.deliver()
    clock.advance(minutes=5)
    await rig.admin.retract(ADMIN, update.id, reason="Posted too early")
    stats = await rig.deliver()
    assert stats.dead == 0

    assert all(r.verified for r in receiver.requests)  # standardwebhooks checked each one
    assert [r.duplicate for r in receiver.requests] == [False] * len(receiver.requests)
    types = [e["type"] for e in receiver.accepted]
    assert sorted(types) == sorted(
        ["update.published", "update.edited", "update.corrected", "demand.changed",
         "update.retracted"]
    )  # fmt: skip
    by_type = {e["type"]: e for e in receiver.accepted}
    published = by_type["update.published"]
    assert published["campaign"] == "utla-2019"
    assert published["data"]["update"]["id"] == update.id
    assert published["data"]["update"]["texts"]["es"]["headline"] == "La huelga comenzó"
    assert published["data"]["update"]["url"] == f"https://strike.example.org/updates/{update.id}"
    assert by_type["update.edited"]["data"]["update"]["revision"] == 2
    assert by_type["update.edited"]["data"]["update"]["texts"]["en"]["headline"] == (
        "Strike on: day 1"
    )
    assert by_type["update.edited"]["data"]["reason"] == "Typo"
    assert by_type["update.corrected"]["data"]["reason"] == "Rally time added"
    retracted = by_type["update.retracted"]["data"]
    assert retracted["update"]["state"] == "retracted" and retracted["reason"] == "Posted too early"
    change = by_type["demand.changed"]["data"]
    assert change["demand"]["key"] == "nurses" and change["demand"]["status"] == "offer_on_table"
    assert change["change"]["offer"]["es"] == "Más enfermeras por un año"
    assert change["change"]["source"] == "District proposal, Jan 19"
    # The webhook-id is the delivery id: one per event, never reused.
    ids = [r.webhook_id for r in receiver.requests]
    assert len(set(ids)) == len(ids) == 5


async def test_a_demand_change_is_queued_with_the_change_even_with_no_update(
    rig: Rig, receiver: Receiver, clock: FixedClock
) -> None:
    created = await add(rig, receiver)
    async with rig.store.write() as tx:
        await tx.insert_demand(
            Demand("pay", 0, DemandStatus.OPEN, {"en": DemandText("Fair pay")}, clock())
        )
    await rig.admin.record_demand(ADMIN, "pay", status=DemandStatus.WON, source="Agreement")
    [row] = await rig.rows(DeliveryAction.EVENT)
    assert row.subscription_id == created.endpoint.id and row.state is DeliveryState.PENDING
    assert row.payload["event"]["type"] == "demand.changed"


async def test_an_embargoed_update_edited_before_it_is_out_sends_both_in_order(
    rig: Rig, receiver: Receiver, clock: FixedClock
) -> None:
    await add(rig, receiver)
    update = await rig.admin.post(ADMIN, draft(), publish_at=clock() + timedelta(hours=1))
    await rig.admin.edit(
        ADMIN, update.id, Changes(texts={"en": UpdateText("Strike starts at 7")}), reason="Time"
    )
    assert await rig.deliver() == DrainStats()  # nothing is due before the embargo
    assert receiver.requests == []
    clock.advance(hours=1)
    await rig.deliver()
    await rig.deliver()  # the edit waited for the post
    assert [e["type"] for e in receiver.accepted] == ["update.published", "update.edited"]
    assert receiver.accepted[1]["data"]["update"]["texts"]["en"]["headline"] == (
        "Strike starts at 7"
    )


async def test_retries_carry_the_same_webhook_id_and_the_receiver_drops_the_repeat(
    rig: Rig, receiver: Receiver, clock: FixedClock
) -> None:
    created = await add(rig, receiver)
    receiver.fail(HTML_500, JSON_503, PLAIN_500)
    await rig.admin.post(ADMIN, draft())
    for _ in range(3):
        stats = await rig.deliver()
        assert stats.retried == 1
        async with rig.store.read() as tx:
            endpoint = await tx.get_webhook_endpoint(created.endpoint.id)
        assert endpoint is not None and endpoint.failing_since is not None
        clock.advance(seconds=next_try(endpoint.failing_since, clock()))
    await rig.deliver()
    ids = {r.webhook_id for r in receiver.requests}
    assert len(receiver.requests) == 4 and len(ids) == 1
    assert [r.status for r in receiver.requests] == [500, 503, 500, 204]
    assert all(r.verified for r in receiver.requests)
    assert len(receiver.accepted) == 1
    [row] = await rig.rows(DeliveryAction.POST)
    assert row.state is DeliveryState.SENT and row.attempts == 4
    async with rig.store.read() as tx:
        endpoint = await tx.get_webhook_endpoint(created.endpoint.id)
    assert endpoint is not None and endpoint.failing_since is None  # healthy again
    assert endpoint.last_success_at == clock()


async def test_the_retry_schedule_grows_from_when_the_endpoint_started_failing() -> None:
    start = datetime(2019, 1, 18, tzinfo=UTC)
    assert next_try(start, start) == 5
    assert next_try(start, start + timedelta(seconds=5)) == 30
    assert next_try(start, start + timedelta(seconds=6)) == 29  # a newcomer joins the round
    assert next_try(start, start + timedelta(hours=20)) == pytest.approx(
        (27 * 3600 + 37 * 60 + 35) - 20 * 3600
    )
    assert next_try(start, start + timedelta(days=5)) <= 12 * 3600


async def test_an_endpoint_failing_for_days_is_disabled_and_the_admins_are_told(
    rig: Rig, receiver: Receiver, clock: FixedClock
) -> None:
    await rig.admin.subscribe(ADMIN, ADMIN_CHANNEL)
    created = await add(rig, receiver)
    receiver.always = HTML_500
    await rig.admin.post(ADMIN, draft())
    await rig.admin.post(ADMIN, draft("Second"))
    began = clock()
    attempts = 0
    while True:
        stats = await rig.deliver()
        attempts += 1
        if stats.dead:
            break
        assert attempts < 20, "never disabled"
        async with rig.store.read() as tx:
            endpoint = await tx.get_webhook_endpoint(created.endpoint.id)
        assert endpoint is not None and endpoint.failing_since == began
        clock.advance(seconds=next_try(began, clock()))
    assert clock() - began >= timedelta(hours=48)
    assert clock() - began < timedelta(hours=48 + 13)
    endpoint = await rig.webhooks.get(created.endpoint.id)
    assert endpoint.disabled_reason is not None
    assert "disabled" in endpoint.disabled_reason and "HTTP 500" in endpoint.disabled_reason
    assert f"strikebot webhooks enable {endpoint.id}" in endpoint.disabled_reason
    posts = [p for p in await rig.rows(DeliveryAction.POST) if p.subscription_id == endpoint.id]
    assert sorted(p.state for p in posts) == [DeliveryState.CANCELLED, DeliveryState.DEAD]
    [notice] = await rig.rows(DeliveryAction.NOTICE)
    message = notice.payload["message"]
    assert message["title"].startswith("Channel paused: webhooks:endpoint/")
    assert "HTTP 500" in message["body"]

    # Enabled again, it gets what comes next; the failing streak starts afresh.
    enabled = await rig.webhooks.enable(ADMIN, endpoint.id)
    assert enabled.disabled_reason is None and enabled.failing_since is None
    receiver.always = None
    await rig.admin.post(ADMIN, draft("Third"))
    await rig.deliver()
    assert [e["data"]["update"]["texts"]["en"]["headline"] for e in receiver.accepted] == ["Third"]


async def test_410_gone_disables_at_once(rig: Rig, receiver: Receiver) -> None:
    created = await add(rig, receiver)
    receiver.fail(Answer(410, "unsubscribed"))
    await rig.admin.post(ADMIN, draft())
    stats = await rig.deliver()
    assert stats.dead == 1
    endpoint = await rig.webhooks.get(created.endpoint.id)
    assert endpoint.disabled_reason is not None and "410 Gone" in endpoint.disabled_reason


async def test_the_address_is_checked_again_at_send_time(
    sqlite_store: Store, clock: FixedClock, receiver: Receiver
) -> None:
    """A name checked when it was added may point elsewhere later (DNS rebinding): each
    request is resolved and checked again, and a refused one disables the endpoint."""
    lenient = rig_for(sqlite_store, clock, allowed_networks=["127.0.0.0/8", "::1/128"])
    url = receiver.url.replace("127.0.0.1", "localhost")
    created = await lenient.webhooks.add(ADMIN, url)
    receiver.secret = created.secret
    strict = rig_for(sqlite_store, clock, allow_private=False)  # the name now means loopback
    await strict.adapter.start()
    try:
        await strict.admin.post(ADMIN, draft())
        stats = await strict.deliver()
    finally:
        await strict.adapter.stop()
    assert stats.dead == 1
    assert receiver.requests == []  # nothing was sent there
    endpoint = await strict.webhooks.get(created.endpoint.id)
    assert endpoint.disabled_reason is not None
    assert "loopback" in endpoint.disabled_reason


async def test_a_hanging_receiver_is_a_failure_that_is_retried(
    sqlite_store: Store, clock: FixedClock, receiver: Receiver
) -> None:
    from adapters.webhooks import Sender

    made = rig_for(sqlite_store, clock)
    made.adapter = WebhookAdapter(made.ctx, sender=Sender(made.ctx.webhook_policy, timeout=0.3))
    await made.adapter.start()
    try:
        await add(made, receiver)
        receiver.fail(Answer(200, hang=True))
        await made.admin.post(ADMIN, draft())
        stats = await made.deliver()
        assert stats.retried == 1
        [row] = await made.rows(DeliveryAction.POST)
        assert row.state is DeliveryState.PENDING
        assert "no answer within 0.3 s" in (row.last_error or "")
    finally:
        await made.adapter.stop()


async def test_removed_endpoints_get_nothing_more(rig: Rig, receiver: Receiver) -> None:
    created = await add(rig, receiver)
    await rig.admin.post(ADMIN, draft())
    await rig.webhooks.remove(ADMIN, created.endpoint.id)
    stats = await rig.deliver()
    assert stats.sent == 0 and receiver.requests == []
    assert await rig.webhooks.list() == []


async def test_a_queued_test_event_is_signed_and_delivered(rig: Rig, receiver: Receiver) -> None:
    created = await add(rig, receiver)
    delivery = await rig.webhooks.queue_test(ADMIN, created.endpoint.id)
    await rig.deliver()
    [request] = receiver.requests
    assert request.webhook_id == delivery and request.verified
    assert receiver.accepted[0]["type"] == "webhook.test"


async def test_a_receiver_added_with_a_briefing_time_gets_the_briefing_as_an_event(
    rig: Rig, receiver: Receiver, clock: FixedClock
) -> None:
    from datetime import time as clock_time

    from bot.briefings.runs import send_now

    created = await add(rig, receiver, language="es", briefing_time=clock_time(7, 0))
    await rig.admin.post(ADMIN, draft())
    await rig.deliver()
    delivery = await send_now(
        rig.store, rig.ctx.campaign, created.endpoint.subscription, clock(), ADMIN
    )
    await rig.deliver()
    briefing = [r for r in receiver.requests if r.webhook_id == delivery]
    assert len(briefing) == 1 and briefing[0].verified
    event = briefing[0].event
    assert event is not None and event["type"] == "briefing.sent"
    assert event["data"]["language"] == "es"
    assert event["data"]["message"]["title"].startswith("Resumen de la mañana")
