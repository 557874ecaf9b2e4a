"""The sign-up use case (bot/people/signups.py) and address reading (bot/people/contacts.py): double
opt-in, limits per address, per client and overall, the same answer for every address,
the consent record, and what is stored (only in `subscribers`, never in logs or audits)."""

from __future__ import annotations

import io
import json
import logging
from datetime import timedelta

import pytest

from bot.clock import FixedClock
from bot.errors import InvalidInput, NotFound
from bot.models import Contact, DeliveryAction, Urgency
from bot.people.contacts import mask, read_email, read_phone
from bot.people.signups import Choice, Offer, Outcome, SignupLimits, SignUps, TooManySignups
from bot.runtime.logging import configure_logging
from bot.store import Store
from tests.support import CAMPAIGN

EMAIL = "maria.lopez@example.com"
PHONE = "+12135550123"


def signups_of(store: Store, clock: FixedClock, **limits: object) -> SignUps:
    people = SignUps(store, CAMPAIGN, clock, limits=SignupLimits(**limits))  # type: ignore[arg-type]
    people.offer(Offer(Contact.EMAIL, "email"))
    people.offer(Offer(Contact.PHONE, "sms"))
    return people


async def confirmations(store: Store) -> list[str]:
    async with store.read() as tx:
        rows = await tx.list_deliveries(limit=None)
    return [d.id for d in rows if d.action is DeliveryAction.CONFIRM]


# -- reading addresses ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (" Maria.Lopez@Example.COM ", "maria.lopez@example.com"),
        ("ｍａｒｉａ@example.com", "maria@example.com"),  # full-width letters, NFKC
        ("a+strike@sub.example.org", "a+strike@sub.example.org"),
    ],
)
def test_email_addresses_are_normalised(given: str, expected: str) -> None:
    assert read_email(given) == expected


@pytest.mark.parametrize(
    "given",
    [
        "",
        "maria",
        "maria@",
        "@example.com",
        "maria@@example.com",
        "maria@example.com\r\nBcc: everyone@example.com",  # header injection
        "maria@example.com\nX-Injected: 1",
        "maría@example.com",  # accented: refused, the person is asked to check
        "mаria@example.com",  # a Cyrillic а that looks like a Latin a
        "maria@exаmple.com",  # a look-alike in the domain
        "maria\u200b@example.com",  # an invisible character
        "x" * 10_000 + "@example.com",  # 10 kB
        '"maria lopez"@example.com',
        "Maria <maria@example.com>",
    ],
)
def test_bad_email_addresses_are_refused_in_both_languages(given: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        read_email(given)
    assert refused.value.message and refused.value.localized("es") != refused.value.message


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("(213) 555-0123", PHONE),
        ("213.555.0123", PHONE),
        ("+1 213 555 0123", PHONE),
        ("２１３５５５０１２３", PHONE),  # full-width digits typed on a phone
    ],
)
def test_phone_numbers_become_e164(given: str, expected: str) -> None:
    assert read_phone(given, ("US",)) == expected


@pytest.mark.parametrize(
    "given",
    [
        "",
        "555-0123",  # too short
        "(213) 555-0123\r\nX: y",
        "+44 20 7946 0958",  # a London landline, and not a US number
        "+52 55 1234 5678",  # Mexico: not an allowed country here
        "1" * 10_000,
        "call me maybe",
        "+1 800 555 0199",  # toll-free: cannot receive texts
    ],
)
def test_bad_phone_numbers_are_refused(given: str) -> None:
    with pytest.raises(InvalidInput):
        read_phone(given, ("US",))


def test_masks_show_no_more_than_a_hint() -> None:
    assert mask(EMAIL) == "m•••@e•••.com"
    assert mask(PHONE).startswith("+1") and mask(PHONE).endswith("123") and "555" not in mask(PHONE)


# -- double opt-in ---------------------------------------------------------------------------


async def test_a_sign_up_queues_only_a_confirmation_and_subscribes_nobody(
    sqlite_store: Store, clock: FixedClock
) -> None:
    people = signups_of(sqlite_store, clock)
    await people.request(
        Contact.EMAIL, EMAIL, language="es", choice="all", client="1.2.3.4", via="web /es/subscribe"
    )
    async with sqlite_store.read() as tx:
        active = await tx.list_subscriptions()
        person = await tx.find_subscriber("email", EMAIL)
        rows = await tx.list_deliveries(limit=None)
    assert active == []  # receives nothing
    assert person is not None and person.state == "pending" and person.language == "es"
    assert person.signed_up_via == "web /es/subscribe" and person.signed_up_at == clock()
    assert [r.action for r in rows] == [DeliveryAction.CONFIRM]
    message = rows[0].payload and rows[0].payload["message"]
    assert isinstance(message, dict) and "/es/subscribe/confirm/" in message["url"]
    assert EMAIL not in repr(person)  # no log line can carry the address


async def test_confirming_makes_an_ordinary_subscription_with_the_choices(
    sqlite_store: Store, clock: FixedClock
) -> None:
    people = signups_of(sqlite_store, clock)
    people.offers[Contact.EMAIL] = Offer(Contact.EMAIL, "email")
    await people.request(
        Contact.EMAIL, EMAIL, language="es", choice="briefing", client="c", via="web"
    )
    token = await _token(sqlite_store)
    pending = await people.pending(token)
    assert pending is not None and pending.choice is Choice.BRIEFING
    done = await people.confirm(token)
    assert done.language == "es"
    async with sqlite_store.read() as tx:
        [sub] = await tx.list_subscriptions()
        person = await tx.find_subscriber("email", EMAIL)
    assert sub.platform == "email" and sub.workspace == "people"
    assert person is not None and sub.channel == person.key and EMAIL not in sub.address
    assert sub.urgencies == frozenset({Urgency.URGENT}) and sub.briefing_time is not None
    assert sub.briefing_days == frozenset(range(5)) and sub.language == "es"
    assert person.confirmed and person.confirmed_via == "link"
    with pytest.raises(NotFound) as used:  # the link works once
        await people.confirm(token)
    assert "Sign up again" in used.value.message and "/es/subscribe" in used.value.localized("es")


async def test_a_link_expires_and_the_unconfirmed_address_is_deleted(
    sqlite_store: Store, clock: FixedClock
) -> None:
    people = signups_of(sqlite_store, clock)
    await people.request(Contact.EMAIL, EMAIL, client="c", via="web")
    token = await _token(sqlite_store)
    clock.advance(hours=49)
    assert await people.pending(token) is None
    await people.request(Contact.EMAIL, "someone.else@example.com", client="d", via="web")
    async with sqlite_store.read() as tx:
        assert await tx.find_subscriber("email", EMAIL) is None  # purged
        audit = await tx.list_audit(limit=10)
    assert "subscriber.expire" in [a.action for a in audit]


async def test_the_same_answer_and_at_most_one_confirmation_per_ten_minutes(
    sqlite_store: Store, clock: FixedClock
) -> None:
    people = signups_of(sqlite_store, clock)
    for client in ("a", "b", "c"):  # three people type the same address: no error, ever
        await people.request(Contact.EMAIL, EMAIL, client=client, via="web")
    assert len(await confirmations(sqlite_store)) == 1
    clock.advance(minutes=11)
    await people.request(Contact.EMAIL, EMAIL, client="d", via="web")
    assert len(await confirmations(sqlite_store)) == 2
    for _ in range(10):  # and five a day at most, however patient the sender
        clock.advance(minutes=11)
        await people.request(Contact.EMAIL, EMAIL, client="e", via="web")
    assert len(await confirmations(sqlite_store)) == 5


async def test_a_confirmed_address_asked_again_gets_a_confirmation_for_new_choices(
    store: Store, clock: FixedClock
) -> None:
    people = signups_of(store, clock)
    await people.request(Contact.EMAIL, EMAIL, choice="urgent", client="a", via="web")
    await people.confirm(await _token(store))
    clock.advance(minutes=11)
    await people.request(Contact.EMAIL, EMAIL, choice="all", language="es", client="b", via="web")
    async with store.read() as tx:
        [sub] = await tx.list_subscriptions()
    assert sub.urgencies == frozenset({Urgency.URGENT})  # unchanged until confirmed
    await people.confirm(await _token(store))
    async with store.read() as tx:
        [sub] = await tx.list_subscriptions()
    assert sub.urgencies == frozenset(Urgency) and sub.language == "es"


async def test_a_flood_from_one_client_is_capped(sqlite_store: Store, clock: FixedClock) -> None:
    people = signups_of(sqlite_store, clock, client_per_hour=5)
    for n in range(5):
        await people.request(Contact.EMAIL, f"parent{n}@example.com", client="9.9.9.9", via="w")
    with pytest.raises(TooManySignups) as capped:
        await people.request(Contact.EMAIL, "parent6@example.com", client="9.9.9.9", via="w")
    assert "hour" in capped.value.message and "hora" in capped.value.localized("es")
    await people.request(Contact.EMAIL, "parent7@example.com", client="8.8.8.8", via="w")
    clock.advance(minutes=61)
    await people.request(Contact.EMAIL, "parent8@example.com", client="9.9.9.9", via="w")
    assert len(await confirmations(sqlite_store)) == 7
    async with sqlite_store.read() as tx:
        assert await tx.find_subscriber("email", "parent6@example.com") is None


async def test_past_the_overall_cap_a_flood_waits_and_other_networks_do_not(
    sqlite_store: Store, clock: FixedClock
) -> None:
    people = signups_of(
        sqlite_store, clock, total_per_hour=20, busy_network_per_hour=3, hard_total_per_hour=30
    )

    async def flood(clients: list[str]) -> int:
        refused = 0
        for n, client in enumerate(clients):
            try:
                await people.request(
                    Contact.EMAIL, f"p{n}.{client}@example.com", client=client, via="w"
                )
            except TooManySignups:
                refused += 1
        return refused

    # Forty addresses of one network: twenty get through, then the network waits.
    assert await flood([f"203.0.113.{n}" for n in range(40)]) == 20
    # A family on another network still signs up, and the ones after it, up to the hard cap.
    assert await flood([f"198.51.{n}.7" for n in range(12)]) == 2
    assert len(await confirmations(sqlite_store)) == 30


async def test_bad_input_stores_and_sends_nothing(sqlite_store: Store, clock: FixedClock) -> None:
    people = signups_of(sqlite_store, clock)
    for bad in ("not-an-address", "x@y.z\r\nBcc: a@b.c", "é" * 10_000):
        with pytest.raises(InvalidInput):
            await people.request(Contact.EMAIL, bad, client="c", via="web")
    with pytest.raises(InvalidInput):
        await people.request(Contact.EMAIL, EMAIL, choice="everything!" * 1000, client="c", via="w")
    async with sqlite_store.read() as tx:
        assert await tx.subscriber_counts() == {}
        assert await tx.list_deliveries(limit=None) == []


async def test_a_channel_not_offered_is_refused(sqlite_store: Store, clock: FixedClock) -> None:
    people = SignUps(sqlite_store, CAMPAIGN, clock)
    people.offer(Offer(Contact.EMAIL, "email"))
    with pytest.raises(InvalidInput) as refused:
        await people.request(Contact.PHONE, PHONE, client="c", via="web")
    assert (
        "text message" in refused.value.message
        and "mensaje de texto" in refused.value.localized("es")
    )


# -- texts ---------------------------------------------------------------------------------


async def test_a_number_is_never_signed_up_from_the_web_only_by_its_own_text(
    sqlite_store: Store, clock: FixedClock
) -> None:
    """Issue 28: each web sign-up by number sent a real text (SMS pumping). A number now
    signs up only by texting; YES from a number with nothing pending confirms nothing."""
    people = signups_of(sqlite_store, clock)
    with pytest.raises(InvalidInput) as refused:
        await people.request(Contact.PHONE, PHONE, client="c", via="web")
    assert "send JOIN" in refused.value.message
    assert "UNIRSE" in refused.value.localized("es")
    assert await people.confirm_by_reply(Contact.PHONE, PHONE, via="reply YES") is (
        Outcome.NOTHING_PENDING
    )
    code = await people.join_code(language="es", choice="all", client="c")
    assert len(code) == 6 and code.isdigit()
    assert await confirmations(sqlite_store) == []  # a code costs nobody a text
    outcome = await people.join(Contact.PHONE, PHONE, language="en", via="text JOIN", code=code)
    assert outcome is Outcome.JOINED
    person = await people.find(PHONE)
    assert person is not None and (person.language, person.choice) == ("es", "all")
    assert await people.confirm_by_reply(Contact.PHONE, PHONE, via="reply YES") is Outcome.ALREADY
    # A code works once, and not after a day.
    other = "+12135550199"
    assert await people.join(Contact.PHONE, other, language="en", via="t", code=code) is (
        Outcome.JOINED
    )
    stranger = await people.find(other)
    assert stranger is not None and (stranger.language, stranger.choice) == ("en", "urgent")
    late = await people.join_code(language="es", choice="all", client="c")
    clock.advance(hours=25)
    third = "+12135550198"
    await people.join(Contact.PHONE, third, language="en", via="t", code=late)
    found = await people.find(third)
    assert found is not None and found.choice == "urgent"


async def test_join_switches_language_and_stop_deletes_the_number(
    sqlite_store: Store, clock: FixedClock
) -> None:
    people = signups_of(sqlite_store, clock)
    assert await people.join(Contact.PHONE, PHONE, language="en", via="text JOIN") is Outcome.JOINED
    assert await people.join(Contact.PHONE, PHONE, language="es", via="text UNIRSE") is (
        Outcome.ALREADY
    )
    person = await people.find(PHONE)
    assert person is not None and person.language == "es"
    assert await people.unsubscribe_address(Contact.PHONE, PHONE, via="text STOP") is (
        Outcome.UNSUBSCRIBED
    )
    assert await people.find(PHONE) is None
    await people.scrubbed()  # the number is cleared from the database's files, after
    async with sqlite_store.read() as tx:
        assert await tx.list_subscriptions() == []


# -- privacy -------------------------------------------------------------------------------


async def test_no_address_in_audit_log_subscriptions_or_logs(
    store: Store, clock: FixedClock, caplog: pytest.LogCaptureFixture
) -> None:
    configure_logging(level=logging.DEBUG, stream=io.StringIO())  # as `strikebot run --debug`
    caplog.set_level(logging.DEBUG)
    people = signups_of(store, clock)
    await people.request(Contact.EMAIL, EMAIL, client="c", via="web")
    await people.confirm(await _token(store))
    await people.join(Contact.PHONE, PHONE, language="en", via="text JOIN")
    person = await people.find(PHONE)
    assert person is not None
    await people.mark_broken(person.key, "the number cannot receive texts")
    clock.advance(days=31)
    await people.stats()  # purges addresses broken for longer than 30 days
    async with store.read() as tx:
        audit = json.dumps([[a.target, a.before, a.after] for a in await tx.list_audit()])
        subs = json.dumps([s.address for s in await tx.list_subscriptions(active_only=False)])
        rows = json.dumps([str(d) for d in await tx.list_deliveries(limit=None)])
        assert await tx.find_subscriber("phone", PHONE) is None
    for text in (audit, subs, rows, caplog.text):
        assert EMAIL not in text and PHONE not in text and "2135550123" not in text


async def test_export_and_delete_answer_a_persons_request(store: Store, clock: FixedClock) -> None:
    people = signups_of(store, clock)
    await people.request(Contact.EMAIL, EMAIL, language="es", client="c", via="web /es/subscribe")
    await people.confirm(await _token(store))
    found = await people.export("  MARIA.LOPEZ@example.com ")
    assert found is not None
    assert found["address"] == EMAIL and found["language"] == "es"
    assert found["consent"]["signed_up_via"] == "web /es/subscribe"
    assert found["consent"]["confirmed_via"] == "link"
    assert [m["action"] for m in found["messages"]] == ["confirm"]
    assert await people.delete(EMAIL)
    assert await people.export(EMAIL) is None
    assert not await people.delete(EMAIL)
    stats = await people.stats()
    assert stats["people"] == {}


async def _token(store: Store) -> str:
    """The token in the newest confirmation's link (as the person would click it)."""
    async with store.read() as tx:
        rows = [d for d in await tx.list_deliveries(limit=None) if d.action == "confirm"]
    message = rows[-1].payload and rows[-1].payload["message"]
    assert isinstance(message, dict)
    return str(message["url"]).rsplit("/", 1)[1]


def test_limits_default_to_the_issue() -> None:
    limits = SignupLimits()
    assert limits.address_every == timedelta(minutes=10) and limits.address_per_day == 5
