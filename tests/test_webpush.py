"""Browser notifications (Web Push) through pywebpush, against a fake push service on
127.0.0.1 that checks the VAPID JWT (RFC 8292) and decrypts each payload with the
subscription's keys (RFC 8291): a subscription from the page is a person (endpoint and keys
only), an update reaches it in the language chosen on the page, 404 and 410 forget it, 413
and 429 with Retry-After are handled, a subscription naming another service is refused."""

from __future__ import annotations

import pytest

from adapters.webpush import plugin
from bot.clock import FixedClock
from bot.editorial.admin import Draft
from bot.models import Contact, DeliveryState, Status, UpdateText, Urgency
from bot.plugins import DoctorRequest, Verdict
from bot.store import Store
from tests.fakes.push import FakePushService, PushFault
from tests.push_support import SUBJECT, VAPID_PRIVATE, VAPID_PUBLIC, PushBot, push_bot
from tests.support import ADMIN, CAMPAIGN

HEADLINE = "Strike is on"
TITULAR = "La huelga empieza"


def urgent(headline: str = HEADLINE, titular: str = TITULAR) -> Draft:
    return Draft(
        Status.STRIKE_ON,
        {
            "en": UpdateText(headline, "Picket lines at every school from 6:30 AM."),
            "es": UpdateText(titular, "Piquetes en todas las escuelas desde las 6:30."),
        },
        Urgency.URGENT,
    )


async def rows(bot: PushBot) -> list[tuple[DeliveryState, str | None]]:
    async with bot.store.read() as tx:
        found = await tx.list_deliveries(limit=None)
    # In the order of the updates: rows made at one (fixed) moment are otherwise in the
    # order of their random ids.
    posts = sorted((d for d in found if d.update_id is not None), key=lambda d: d.update_id or 0)
    return [(d.state, d.last_error) for d in posts]


async def test_a_subscription_from_the_page_gets_the_update_in_its_language(
    sqlite_store: Store, clock: FixedClock
) -> None:
    async with FakePushService() as push, push_bot(sqlite_store, clock, push) as bot:
        spanish, english = push.subscribe(VAPID_PUBLIC), push.subscribe(VAPID_PUBLIC)
        status, answer = await bot.subscribe(spanish, "es")
        assert status == 201 and answer == {
            "ok": True,
            "message": "Las notificaciones están activadas. Puedes desactivarlas aquí cuando "
            "quieras.",
        }
        assert (await bot.subscribe(english, "en"))[0] == 201
        await bot.admin.post(ADMIN, urgent())
        await bot.dispatcher.drain()
        [es] = push.received(spanish)
        assert es["title"] == f"URGENTE: {TITULAR}" and es["lang"] == "es"
        assert es["body"].startswith("Piquetes en todas las escuelas")
        assert es["url"] == f"{CAMPAIGN.public_url}/es/updates/1"
        [en] = push.received(english)
        assert en["title"] == f"URGENT: {HEADLINE}" and en["lang"] == "en"
        headers = push.browser(spanish).headers[0]
        assert headers["urgency"] == "high" and int(headers["ttl"]) == 24 * 3600
        assert push.refusals == []


async def test_nothing_is_kept_but_the_endpoint_and_keys(
    sqlite_store: Store, clock: FixedClock
) -> None:
    async with FakePushService() as push, push_bot(sqlite_store, clock, push) as bot:
        sub = push.subscribe()
        await bot.subscribe(sub, "es", receive="urgent")
        person = await bot.signups.find(sub["endpoint"], Contact.PUSH)
        assert person is not None and person.confirmed and person.language == "es"
        assert person.address == sub["endpoint"] and person.keys == sub["keys"]
        assert person.signed_up_via == "web notify button"
        off = await bot.client.post(
            "/push/subscriptions/delete", json={"endpoint": sub["endpoint"], "language": "es"}
        )
        assert off.status == 200 and "desactivadas" in (await off.json())["message"]
        assert await bot.signups.find(sub["endpoint"], Contact.PUSH) is None


@pytest.mark.parametrize("fault", [PushFault.NOT_FOUND, PushFault.GONE])
async def test_a_subscription_the_push_service_says_is_gone_is_forgotten(
    sqlite_store: Store, clock: FixedClock, fault: PushFault
) -> None:
    async with FakePushService() as push, push_bot(sqlite_store, clock, push) as bot:
        sub = push.subscribe()
        await bot.subscribe(sub)
        push.fail(fault)
        await bot.admin.post(ADMIN, urgent())
        await bot.dispatcher.drain()
        [(state, error)] = await rows(bot)
        assert state is DeliveryState.DEAD and f"gone ({fault.value})" in (error or "")
        assert await bot.signups.find(sub["endpoint"], Contact.PUSH) is None
        await bot.admin.post(ADMIN, urgent("Talks resume", "Siguen las negociaciones"))
        await bot.dispatcher.drain()
        assert push.requests == 1  # nothing more is tried
        async with bot.store.read() as tx:
            notices = [d for d in await tx.list_deliveries(limit=None) if d.action == "notice"]
        assert notices == []  # one person's: admins are not told


async def test_413_stops_the_copy_and_tells_admins_429_waits_for_retry_after(
    sqlite_store: Store, clock: FixedClock
) -> None:
    async with (
        FakePushService(retry_after=0.01) as push,
        push_bot(sqlite_store, clock, push) as bot,
    ):
        sub = push.subscribe()
        await bot.subscribe(sub)
        push.fail(PushFault.RATE_LIMITED, PushFault.JSON_500, PushFault.HTML_502)
        await bot.admin.post(ADMIN, urgent())
        await bot.dispatcher.drain()
        assert [m["title"] for m in push.received(sub)] == [f"URGENT: {HEADLINE}"]
        push.fail(PushFault.TOO_LARGE)
        await bot.admin.post(ADMIN, urgent("Second", "Segundo"))
        await bot.dispatcher.drain()
        states = await rows(bot)
        assert states[0] == (DeliveryState.SENT, None)
        assert states[1][0] is DeliveryState.DEAD and "too large (413)" in (states[1][1] or "")
        assert await bot.signups.find(sub["endpoint"], Contact.PUSH) is not None


@pytest.mark.parametrize(
    ("body", "status", "said"),
    [
        ({"subscription": {"endpoint": "https://evil.example/push/1",
                           "keys": {"p256dh": VAPID_PUBLIC, "auth": "AAAAAAAAAAAAAAAAAAAAAA"}}},
         400, "not one we send to"),
        ({"subscription": {"endpoint": "x", "keys": {"p256dh": "bad", "auth": "bad"}}}, 400,
         "not a notification subscription"),
        ({"subscription": "nope"}, 400, "not a notification subscription"),
    ],
)  # fmt: skip
async def test_a_subscription_that_is_not_one_is_refused_with_a_sentence(
    sqlite_store: Store, clock: FixedClock, body: dict[str, object], status: int, said: str
) -> None:
    async with FakePushService() as push, push_bot(sqlite_store, clock, push) as bot:
        response = await bot.client.post("/push/subscriptions", json=body)
        assert response.status == status and said in (await response.json())["message"]
        form = await bot.client.post("/push/subscriptions", data={"subscription": "x"})
        assert form.status == 415
        other_site = await bot.client.post(
            "/push/subscriptions", json=body, headers={"Origin": "https://evil.example"}
        )
        assert other_site.status == 403
        async with bot.store.read() as tx:
            assert await tx.subscriber_counts() == {}


async def test_a_wrong_vapid_key_is_refused_by_the_push_service(
    sqlite_store: Store, clock: FixedClock
) -> None:
    """The fake checks what the real services check: the JWT's signature and the key the
    subscription was made with (here another application server's)."""
    async with FakePushService() as push, push_bot(sqlite_store, clock, push) as bot:
        from adapters.webpush import _keys

        sub = push.subscribe(_keys.public_key(_keys.load(_keys.new_private_key())))
        await bot.subscribe(sub)
        await bot.admin.post(ADMIN, urgent())
        await bot.dispatcher.drain()
        assert push.refusals and push.refusals[0][0] == 403
        assert push.received(sub) == []


async def test_doctor_checks_the_vapid_key_and_subject() -> None:
    assert plugin.doctor is not None
    good = plugin.settings.from_env(
        {"WEBPUSH_VAPID_PRIVATE_KEY": VAPID_PRIVATE, "WEBPUSH_VAPID_SUBJECT": SUBJECT}
    )
    checks = await plugin.doctor(DoctorRequest(good, None, None, CAMPAIGN, ()))
    assert [(c.subject, c.verdict) for c in checks] == [
        ("VAPID key", Verdict.OK),
        ("VAPID subject", Verdict.OK),
    ]
    assert VAPID_PUBLIC in checks[0].detail
    bad = plugin.settings.from_env(
        {"WEBPUSH_VAPID_PRIVATE_KEY": "not-a-key", "WEBPUSH_VAPID_SUBJECT": SUBJECT}
    )
    [refused] = await plugin.doctor(DoctorRequest(bad, None, None, CAMPAIGN, ()))
    assert refused.verdict is Verdict.FAIL and "strikebot webpush keys" in refused.fix
    missing = plugin.settings.from_env({})
    [absent] = await plugin.doctor(DoctorRequest(missing, None, None, CAMPAIGN, ()))
    assert absent.verdict is Verdict.FAIL and "not set" in absent.detail


async def test_the_page_offers_the_button_only_through_script_and_a_manifest(
    sqlite_store: Store, clock: FixedClock
) -> None:
    from tests.web_support import parse_html

    async with FakePushService() as push, push_bot(sqlite_store, clock, push) as bot:
        page = await bot.client.get("/es/")
        html = await page.text()
        box = parse_html(html).one("div", id="notify")
        assert "hidden" in box.attrs and box.attrs["data-key"] == VAPID_PUBLIC
        assert box.attrs["data-lang"] == "es" and box.attrs["data-path"] == "/push/subscriptions"
        assert "Avísame" in box.text()
        assert "script-src 'self'" in page.headers["Content-Security-Policy"]
        assert '<link rel="manifest" href="/es/manifest.webmanifest">' in html
        manifest = await (await bot.client.get("/es/manifest.webmanifest")).json()
        assert manifest["lang"] == "es" and manifest["start_url"] == "/es/"
        assert manifest["display"] == "standalone"
        worker = await bot.client.get("/sw.js")
        assert worker.status == 200 and worker.content_type == "text/javascript"
        assert "showNotification" in await worker.text()
