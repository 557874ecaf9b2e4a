"""The SMS plugin: segment counting (GSM-7 against UCS-2), texts cut to their segments with
the link, the fake Twilio at its worst (429, 5xx with JSON, HTML and plain bodies, hangs,
resets, opted-out and landline numbers), webhooks signed the way Twilio signs them (and
unsigned, forged or replayed ones refused), keywords in both languages, quiet hours."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from adapters.twilio.sms import count, render_text
from adapters.twilio.sms._settings import SmsSection
from bot.clock import FixedClock
from bot.editorial.admin import Draft
from bot.editorial.reach import Spend, reach
from bot.models import Contact, DeliveryState, Status, UpdateText, Urgency
from bot.people.keywords import normalize
from bot.people.signups import Choice
from bot.plugins.outbound import Field, MessageKind, OutboundMessage
from bot.store import Store
from tests.fakes.twilio import (
    AUTH_TOKEN,
    FROM,
    FakeTwilio,
    Fault,
    Text,
    inbound,
    signed_request,
)
from tests.family_support import Families, families
from tests.support import ADMIN, CAMPAIGN

ROSA = "+12135550123"
SMS = {"sender_name": "UTLA"}
FEW = {"max_attempts": 3}
INBOUND = f"{CAMPAIGN.public_url}/sms/inbound"


# -- segments -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "encoding", "segments"),
    [
        ("a" * 160, "GSM-7", 1),
        ("a" * 161, "GSM-7", 2),
        ("a" * 306, "GSM-7", 2),
        ("a" * 307, "GSM-7", 3),
        ("{" * 80, "GSM-7", 1),  # extension characters take two septets
        ("{" * 81, "GSM-7", 2),
        ("Mañana, ¿huelga? ¡Sí! é ü Ñ", "UCS-2", 1),  # í is not GSM-7
        ("Mañana ¿huelga? ¡Se! é ü Ñ" + "a" * 133, "GSM-7", 1),  # ñ ¿ ¡ é ü Ñ are
        ("á" * 70, "UCS-2", 1),
        ("á" * 71, "UCS-2", 2),
        ("á" * 134, "UCS-2", 2),
        ("á" * 135, "UCS-2", 3),
        ("😀" * 35, "UCS-2", 1),  # an emoji is two UTF-16 units
        ("😀" * 36, "UCS-2", 2),
        ("", "GSM-7", 0),
    ],
)
def test_segments_are_counted_as_carriers_count_them(
    text: str, encoding: str, segments: int
) -> None:
    found = count(text)
    assert (found.encoding, found.count) == (encoding, segments)


def update(
    title: str, body: str, language: str = "en", urgency: Urgency = Urgency.ROUTINE
) -> OutboundMessage:
    step = ("Next step", "Picket at 6:30") if language == "en" else ("Próximo paso", "Piquete")
    return OutboundMessage(
        title=title,
        body=body,
        kind=MessageKind.UPDATE,
        language=language,
        urgency=urgency,
        fields=(Field(*step),),
        url="https://strike.example.org/es/updates/12",
    )


@pytest.mark.parametrize("limit", [1, 2, 3])
def test_a_long_spanish_update_is_cut_to_its_segments_with_the_link(limit: int) -> None:
    body = "La huelga continúa mañana en todas las escuelas del distrito. " * 20
    text = render_text(update("Continúa la huelga", body, "es"), sender="UTLA", max_segments=limit)
    assert count(text).count <= limit and count(text).encoding == "UCS-2"
    assert text.startswith("UTLA: Continúa la huelga\n")
    assert text.endswith("\nhttps://strike.example.org/es/updates/12")
    if limit > 1:  # the body is cut at a word; the next step stays after it
        assert "\nLa huelga continúa" in text and "…\nPróximo paso: Piquete\n" in text


def test_typographic_punctuation_keeps_an_english_text_in_gsm7() -> None:
    message = update(
        "Teachers’ strike — day 5", "“Hold the line”… see you at 6:30", urgency=Urgency.URGENT
    )
    text = render_text(message, sender="UTLA", max_segments=2)
    assert count(text).encoding == "GSM-7"
    assert text.startswith('UTLA: URGENT: Teachers\' strike - day 5\n"Hold the line"...')


def test_a_short_update_is_whole_and_a_confirmation_is_never_cut() -> None:
    short = render_text(update("Talks Saturday", "Rally at noon."), sender="UTLA", max_segments=2)
    assert short == (
        "UTLA: Talks Saturday\nRally at noon.\nNext step: Picket at 6:30\n"
        "https://strike.example.org/es/updates/12"
    )
    confirm = OutboundMessage(title="", body="x " * 400, kind=MessageKind.CONFIRM)
    assert count(render_text(confirm, sender="UTLA", max_segments=1)).count > 1


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("¡Sí!", "si"),
        ("  STOP please", "stop please"),
        ("Unirse", "unirse"),
        ("", ""),
        ("ＳＴＯＰ", "stop"),
    ],
)
def test_keywords_ignore_case_accents_and_punctuation(text: str, word: str) -> None:
    assert normalize(text) == word


# -- sending through Twilio ------------------------------------------------------------------


async def joined(f: Families, number: str = ROSA, word: str = "JOIN") -> None:
    status, reply = await f.text_in(number, word, f"SM-join-{number}-{word}")
    assert status == 200 and "<Message>" in reply


def urgent(headline: str) -> Draft:
    return Draft(Status.STRIKE_ON, {"en": UpdateText(headline)}, Urgency.URGENT)


async def post_row(store: Store) -> list[tuple[DeliveryState, int, str | None]]:
    async with store.read() as tx:
        rows = await tx.list_deliveries(limit=None)
    return [(d.state, d.attempts, d.last_error) for d in rows if d.action == "post"]


async def test_twilio_at_its_worst_is_retried_until_the_text_goes(
    sqlite_store: Store, clock: FixedClock
) -> None:
    async with (
        FakeTwilio(retry_after=0.01) as twilio,
        families(sqlite_store, clock, twilio=twilio, sms=SMS) as f,
    ):
        await joined(f)
        twilio.fail(
            Fault.RATE_LIMITED, Fault.JSON_500, Fault.HTML_502, Fault.PLAIN_503, Fault.RESET
        )
        await f.admin.post(ADMIN, urgent("Strike is on"))
        await f.drain()
        [(state, attempts, _)] = await post_row(sqlite_store)
        assert state is DeliveryState.SENT and attempts == 6
        assert [t.body.split("\n")[0] for t in twilio.to(ROSA)] == ["UTLA: URGENT: Strike is on"]


async def test_a_text_whose_answer_was_lost_is_found_at_twilio_not_sent_again(
    sqlite_store: Store, clock: FixedClock
) -> None:
    """Issue 28: 15 of 15 texts whose answer was lost after Twilio created them went twice.
    Now the retry looks first, among the messages to the number, newest first and page by
    page (here the lost one is on the third page, behind 120 newer texts); when Twilio's
    list fails, it waits and looks again: it never sends blind."""
    async with (
        FakeTwilio() as twilio,
        families(sqlite_store, clock, twilio=twilio, sms=SMS) as f,
    ):
        await joined(f)
        twilio.fail(Fault.LOSE_ANSWER)
        twilio.fail_list(Fault.PLAIN_503)
        later = datetime.now(UTC) + timedelta(minutes=1)
        for n in range(120):  # texts to the same number created after it: listed before it
            twilio.texts.append(
                Text(f"SM{n + 10**9:032x}", ROSA, f"note {n}", FROM, "", created=later)
            )
        await f.admin.post(ADMIN, urgent("Strike is on"))
        await f.drain()
        [(state, attempts, error)] = await post_row(sqlite_store)
        assert state is DeliveryState.SENT, (attempts, error)
        assert twilio.requests == 1  # created once, never again
        [text] = [t for t in twilio.to(ROSA) if "Strike is on" in t.body]
        async with sqlite_store.read() as tx:
            [post] = [d for d in await tx.list_deliveries(limit=None) if d.action == "post"]
        assert post.platform_message_id == text.sid
        assert twilio.lists == 3  # the one that failed is not counted; then three pages


async def test_a_hanging_twilio_times_out_and_errors_never_show_the_number(
    sqlite_store: Store, clock: FixedClock
) -> None:
    async with (
        FakeTwilio() as twilio,
        families(sqlite_store, clock, twilio=twilio, sms=SMS, delivery=FEW) as f,
    ):
        await joined(f)
        twilio.fail(Fault.HANG, Fault.HTML_502, Fault.PLAIN_503)
        await f.admin.post(ADMIN, urgent("Strike is on"))
        await f.drain()
        [(state, attempts, error)] = await post_row(sqlite_store)
        assert state is DeliveryState.DEAD and attempts == 3
        assert error is not None and "Twilio answered 503: upstream connect error" in error
        assert "555" not in error


async def test_a_number_that_texted_stop_to_the_carrier_is_forgotten(
    sqlite_store: Store, clock: FixedClock
) -> None:
    async with FakeTwilio() as twilio, families(sqlite_store, clock, twilio=twilio, sms=SMS) as f:
        await joined(f)
        twilio.opted_out.add(ROSA)
        await f.admin.post(ADMIN, urgent("Strike is on"))
        await f.drain()
        [(state, attempts, error)] = await post_row(sqlite_store)
        assert state is DeliveryState.DEAD and attempts == 1 and "21610" in (error or "")
        assert await f.signups.find(ROSA) is None
        async with sqlite_store.read() as tx:
            notices = [d for d in await tx.list_deliveries(limit=None) if d.action == "notice"]
        assert notices == []


async def test_a_landline_is_broken_at_send_or_by_its_delivery_receipt(
    sqlite_store: Store, clock: FixedClock
) -> None:
    other = "+13105550188"
    async with FakeTwilio() as twilio, families(sqlite_store, clock, twilio=twilio, sms=SMS) as f:
        await joined(f)
        await joined(f, other)
        twilio.landlines.add(other)
        await f.admin.post(ADMIN, urgent("Strike is on"))
        await f.drain()
        [sent] = twilio.to(ROSA)
        # Later, the carrier says Rosa's phone is unreachable (30003): broken too.
        assert await twilio.callback(sent.sid, "undelivered", "30003", server=f.server) == 204
        stats = await f.signups.stats()
        assert stats["people"]["phone"]["broken"] == 2
        assert stats["receipts"] == {"sms:undelivered": 1}
        await f.admin.post(ADMIN, urgent("Talks resume"))
        await f.drain()
        assert len(twilio.texts) == 1


async def test_routine_texts_wait_for_the_end_of_quiet_hours_urgent_ones_do_not(
    sqlite_store: Store, clock: FixedClock
) -> None:
    clock.now = datetime(2019, 1, 19, 6, 30, tzinfo=UTC)  # 22:30 in Los Angeles
    async with FakeTwilio() as twilio, families(sqlite_store, clock, twilio=twilio, sms=SMS) as f:
        await f.signups.join(Contact.PHONE, ROSA, language="en", via="test", choice=Choice.ALL)
        routine = Draft(Status.STRIKE_ON, {"en": UpdateText("Picket schedule")}, Urgency.ROUTINE)
        await f.admin.post(ADMIN, routine)
        await f.admin.post(ADMIN, urgent("No school tomorrow"))
        async with sqlite_store.read() as tx:
            rows = {d.update_id: d for d in await tx.list_deliveries(limit=None)}
        # Urgent at once; routine at 08:00 in Los Angeles (16:00 UTC).
        assert rows[2].not_before == clock.now
        assert rows[1].not_before == datetime(2019, 1, 19, 16, 0, tzinfo=UTC)
        await f.drain()
        assert [t.body.split("\n")[0] for t in twilio.texts] == ["UTLA: URGENT: No school tomorrow"]


# -- webhooks --------------------------------------------------------------------------------


async def test_unsigned_forged_and_misdirected_webhooks_are_refused(
    sqlite_store: Store, clock: FixedClock
) -> None:
    async with FakeTwilio() as twilio, families(sqlite_store, clock, twilio=twilio, sms=SMS) as f:
        params = inbound(ROSA, "JOIN", "SM-forged")
        client = f.client
        unsigned = await client.post("/sms/inbound", data=params)
        assert unsigned.status == 403
        wrong_key, _ = await signed_request(f.server, INBOUND, params, token="not-the-token")
        assert wrong_key == 403
        other_url, _ = await signed_request(
            f.server, INBOUND, params, signature=_sign("https://evil.example/sms/inbound", params)
        )
        assert other_url == 403
        tampered = dict(params, Body="STOP")  # signed JOIN, sent STOP
        status, _ = await signed_request(
            f.server, INBOUND, tampered, signature=_sign(INBOUND, params)
        )
        assert status == 403
        as_json = await client.post(
            "/sms/inbound", json=params, headers={"X-Twilio-Signature": _sign(INBOUND, params)}
        )
        assert as_json.status == 403
        callback = await client.post("/sms/status/abc", data={"MessageStatus": "failed"})
        assert callback.status == 403
        assert await f.signups.find(ROSA) is None  # none of them did anything
        assert f.sms is not None and f.sms.health()["refused_unsigned_webhooks"] == 6


async def test_a_replayed_text_is_handled_once(sqlite_store: Store, clock: FixedClock) -> None:
    async with FakeTwilio() as twilio, families(sqlite_store, clock, twilio=twilio, sms=SMS) as f:
        first = await f.text_in(ROSA, "JOIN", "SM-replay")
        await f.text_in(ROSA, "STOP", "SM-stop-1")
        replayed = await f.text_in(ROSA, "JOIN", "SM-replay")  # an attacker replays the JOIN
        assert "<Message>" in first[1] and replayed[0] == 200 and "<Message>" not in replayed[1]
        assert await f.signups.find(ROSA) is None


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("HELP", "UTLA strike updates: https://strike.example.org/ . Reply STOP"),
        ("ayuda", "UTLA, noticias de la huelga: https://strike.example.org/es/ . Responde STOP"),
        ("what is this?", "Reply STATUS for the latest"),
        ("YES", "there is no sign-up to confirm"),
        ("cancel", "this number is not signed up"),
        ("a" * 10_000, "STOP to stop"),
    ],
)
async def test_replies_say_who_is_sending_and_how_to_stop(
    sqlite_store: Store, clock: FixedClock, body: str, expected: str
) -> None:
    async with FakeTwilio() as twilio, families(sqlite_store, clock, twilio=twilio, sms=SMS) as f:
        status, reply = await f.text_in(ROSA, body, "SM-help")
        assert status == 200 and expected in reply


async def test_texts_from_numbers_abroad_or_garbage_get_a_clear_answer(
    sqlite_store: Store, clock: FixedClock
) -> None:
    async with FakeTwilio() as twilio, families(sqlite_store, clock, twilio=twilio, sms=SMS) as f:
        status, reply = await f.text_in("+442079460958", "JOIN", "SM-uk")
        assert status == 200 and "only go to mobile numbers in US" in reply
        status, reply = await f.text_in("not-a-number\r\nX: y", "UNIRSE", "SM-junk")
        assert status == 200 and "solo enviamos textos a celulares de US" in reply
        async with f.store.read() as tx:
            assert await tx.subscriber_counts() == {}


def _sign(url: str, params: dict[str, str]) -> str:
    from twilio.request_validator import RequestValidator

    return str(RequestValidator(AUTH_TOKEN).compute_signature(url, params))


async def test_the_preview_counts_segments_in_each_readers_language(
    sqlite_store: Store, clock: FixedClock
) -> None:
    async with FakeTwilio() as twilio, families(sqlite_store, clock, twilio=twilio, sms=SMS) as f:
        await f.signups.join(Contact.PHONE, ROSA, language="en", via="test")
        await f.signups.join(Contact.PHONE, "+13105550188", language="es", via="test")
        headline = "Strike continues Monday at every school in the district"
        headline_es = "La huelga continúa el lunes en todas las escuelas del distrito"
        draft = Draft(
            Status.STRIKE_ON,
            {"en": UpdateText(headline), "es": UpdateText(headline_es)},
            Urgency.URGENT,
        )
        update = await f.admin.post(ADMIN, draft)
        found = await reach(
            sqlite_store, CAMPAIGN, update, sections={"sms": SmsSection(sender_name="UTLA")}
        )
        # English stays in GSM-7 (1 segment); the Spanish accents make it UCS-2 (2 segments).
        assert found.spend("sms") == Spend("sms", 2, 3)
        assert found.sentence("en") == "It will go to 3 text segments (2 texts)."
        assert found.sentence("es") == "Se enviará a 3 segmentos (2 mensajes)."
        await f.drain()
        assert sorted(count(t.body).count for t in twilio.texts) == [1, 2]


async def test_a_retraction_text_waits_out_quiet_hours_like_the_update_did(
    sqlite_store: Store, clock: FixedClock
) -> None:
    async with FakeTwilio() as twilio, families(sqlite_store, clock, twilio=twilio, sms=SMS) as f:
        await f.signups.join(Contact.PHONE, ROSA, language="en", via="test", choice=Choice.ALL)
        routine = Draft(Status.STRIKE_ON, {"en": UpdateText("Picket schedule")}, Urgency.ROUTINE)
        posted = await f.admin.post(ADMIN, routine)  # Friday 10:00 in Los Angeles
        await f.drain()
        clock.now = datetime(2019, 1, 19, 6, 30, tzinfo=UTC)  # 22:30
        await f.admin.retract(ADMIN, posted.id, reason="Wrong schools listed")
        await f.drain()
        assert len(twilio.texts) == 1
        clock.now = datetime(2019, 1, 19, 16, 0, tzinfo=UTC)  # 08:00
        await f.drain()
        assert len(twilio.texts) == 2
        assert twilio.texts[1].body.startswith("UTLA: RETRACTED: Picket schedule\n")
        assert "Wrong schools listed" in twilio.texts[1].body


def test_a_mistake_in_the_sms_section_names_the_key() -> None:
    from bot.errors import ConfigError
    from tests.support import campaign_config

    with pytest.raises(ConfigError) as refused:
        campaign_config(CAMPAIGN, sms={"quiet_hours": "25:00-08:00"})
    assert "sms.quiet_hours" in refused.value.message
    with pytest.raises(ConfigError) as refused:
        campaign_config(CAMPAIGN, sms={"countries": ["USA"]})
    assert "two-letter country code" in refused.value.message
