"""The issue's "done when", end to end through real protocols on 127.0.0.1: a parent signs up
on the status page, confirms, gets an urgent update in the language they chose, a
correction, a retraction and a morning briefing, unsubscribes with one click (e-mail) or
STOP (text), and then gets nothing more; a sign-up never confirmed gets only its
confirmation. E-mail goes to a real SMTP server (aiosmtpd) and is read back with the
standard `email` parser; texts go to a fake Twilio REST API, and the replies come back as
webhooks signed the way Twilio signs them."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from bot.briefings.runs import queue_briefing
from bot.clock import FixedClock
from bot.editorial.admin import Changes, Draft
from bot.models import Status, UpdateText, Urgency
from bot.store import Store
from tests.fakes.smtp import FakeSmtp
from tests.fakes.twilio import FakeTwilio
from tests.family_support import Families, confirm_path, families, html_of, text_of
from tests.support import ADMIN

MARIA = "maria.lopez@example.com"
ROSA = "+12135550123"  # a Los Angeles mobile number
MONDAY_7AM = datetime(2019, 1, 21, 15, 0, tzinfo=UTC)  # 07:00 in Los Angeles
SMS = {"sender_name": "UTLA"}


def urgent(headline: str, headline_es: str, body_es: str = "") -> Draft:
    return Draft(
        Status.STRIKE_ON,
        {
            "en": UpdateText(headline, "Details on the page."),
            "es": UpdateText(headline_es, body_es),
        },
        Urgency.URGENT,
    )


async def correct_the_time(f: Families, update_id: int) -> None:
    """A correction (a visible note, not a silent edit) of the Spanish headline."""
    await f.admin.edit(
        ADMIN,
        update_id,
        Changes(texts={"es": UpdateText("Piquete a las 7:00")}),
        reason="La hora correcta es 7:00",
        correction=True,
    )
    await f.drain()


async def _sign_up_by_email(f: Families, *, language: str, receive: str) -> None:
    response = await f.sign_up(
        path="/es/subscribe", data={"email": MARIA, "language": language, "receive": receive}
    )
    assert response.status == 200
    assert "Revisa tu correo" in await response.text()


async def test_email_full_path(store: Store, clock: FixedClock) -> None:
    async with FakeSmtp() as smtp, families(store, clock, smtp=smtp) as f:
        await _sign_up_by_email(f, language="es", receive="briefing")
        await f.drain()
        assert len(smtp.messages) == 1
        confirmation = smtp.messages[0]
        assert confirmation["To"] == MARIA
        assert confirmation["Subject"].startswith("Confirma:")
        assert confirmation["List-Unsubscribe"] is None  # not subscribed yet

        # Before confirming, an urgent update reaches nobody.
        await f.admin.post(ADMIN, urgent("Strike is on", "Comienza la huelga"))
        await f.drain()
        assert len(smtp.messages) == 1

        # Opening the link (a mail scanner does) confirms nothing; the button does.
        path = confirm_path(confirmation)
        page = await f.client.get(path)
        assert page.status == 200 and 'method="post"' in await page.text()
        await f.admin.post(ADMIN, urgent("Still on strike", "Seguimos en huelga"))
        await f.drain()
        assert len(smtp.messages) == 1
        done = await f.confirm(path)
        assert done.status == 200 and "Quedaste suscrito" in await done.text()

        # An urgent update, in Spanish, with one-click unsubscribe.
        update = await f.admin.post(
            ADMIN, urgent("Picket at 6:30", "Piquete a las 6:30", "En cada escuela.")
        )
        await f.drain()
        assert len(smtp.messages) == 2
        mail = smtp.messages[1]
        assert mail["Subject"] == "URGENTE: Piquete a las 6:30"
        assert mail["Content-Language"] == "es"
        assert mail["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
        unsubscribe = mail["List-Unsubscribe"].strip("<>")
        assert unsubscribe.startswith("https://strike.example.org/email/unsubscribe/")
        assert mail.get_content_type() == "multipart/alternative"
        assert "En cada escuela." in text_of(mail) and "En cada escuela." in html_of(mail)
        assert unsubscribe in text_of(mail) and unsubscribe.replace("&", "&amp;") in html_of(mail)

        # A silent edit sends nothing; a correction is a short new e-mail.
        await f.admin.edit(
            ADMIN, update.id, Changes(texts={"es": UpdateText("Piquete a las 6:45")}), reason="hora"
        )
        await f.drain()
        assert len(smtp.messages) == 2
        await correct_the_time(f, update.id)
        assert len(smtp.messages) == 3
        assert smtp.messages[2]["Subject"] == "Corrección: Piquete a las 7:00"
        assert "La hora correcta es 7:00" in text_of(smtp.messages[2])

        # A retraction is a new e-mail too.
        await f.admin.retract(ADMIN, update.id, reason="Se canceló el piquete")
        await f.drain()
        assert len(smtp.messages) == 4
        assert smtp.messages[3]["Subject"].startswith("RETIRADA: Piquete")
        assert "Se canceló el piquete" in text_of(smtp.messages[3])

        # The morning briefing (Monday 7:00 in Los Angeles), in Spanish.
        clock.now = MONDAY_7AM
        person = await f.signups.find(MARIA)
        assert person is not None and person.subscription_id is not None
        await queue_briefing(store, f.admin.campaign, person.subscription_id, clock.now, clock.now)
        await f.drain()
        assert len(smtp.messages) == 5
        assert "resumen" in smtp.messages[4]["Subject"].lower()

        # One click unsubscribes, twice is harmless; then nothing more.
        local = unsubscribe.replace("https://strike.example.org", "")
        for _ in range(2):
            gone = await f.client.post(local, data={"List-Unsubscribe": "One-Click"})
            assert gone.status == 200
        assert await f.signups.find(MARIA) is None
        await f.admin.post(ADMIN, urgent("Tentative agreement", "Acuerdo tentativo"))
        await f.drain()
        assert len(smtp.messages) == 5


async def test_sms_full_path(store: Store, clock: FixedClock) -> None:
    async with FakeTwilio() as twilio, families(store, clock, twilio=twilio, sms=SMS) as f:
        response = await f.sign_up(
            path="/subscribe", data={"texts": "yes", "language": "es", "receive": "briefing"}
        )
        page = await response.text()
        assert response.status == 200 and "send JOIN" in page and "+1 213-555-0100" in page
        code = re.search(r"JOIN (\d{6})", page)
        assert code is not None
        await f.drain()
        assert twilio.texts == []  # nothing goes to a number that has not written

        await f.admin.post(ADMIN, urgent("Strike is on", "Comienza la huelga"))
        await f.drain()
        assert twilio.texts == []

        # The reply to their text is the confirmation, with the choices made on the page.
        status, reply = await f.text_in(ROSA, f"join {code.group(1)}", "SM-in-1")
        assert status == 200 and "resumen cada mañana" in reply, reply

        update = await f.admin.post(ADMIN, urgent("Picket at 6:30", "Piquete a las 6:30"))
        await f.drain()
        assert len(twilio.texts) == 1
        text = twilio.texts[0]
        assert text.body.startswith("UTLA: URGENTE: Piquete a las 6:30")
        assert text.body.endswith(f"https://strike.example.org/es/updates/{update.id}")
        # Twilio reports delivery: recorded.
        assert await twilio.callback(text.sid, "delivered", server=f.server) == 204

        await correct_the_time(f, update.id)
        assert twilio.texts[1].body.startswith("UTLA: Corrección: Piquete a las 7:00")

        clock.now = MONDAY_7AM
        person = await f.signups.find(ROSA)
        assert person is not None and person.subscription_id is not None
        await queue_briefing(store, f.admin.campaign, person.subscription_id, clock.now, clock.now)
        await f.drain()
        assert len(twilio.texts) == 3 and "resumen" in twilio.texts[2].body.lower()

        status, reply = await f.text_in(ROSA, "STOP", "SM-in-2")
        assert status == 200 and "<Message>" in reply
        assert await f.signups.find(ROSA) is None
        await f.admin.post(ADMIN, urgent("Tentative agreement", "Acuerdo tentativo"))
        await f.drain()
        assert len(twilio.texts) == 3


async def test_join_by_text_then_stop(store: Store, clock: FixedClock) -> None:
    async with FakeTwilio() as twilio, families(store, clock, twilio=twilio, sms=SMS) as f:
        status, reply = await f.text_in(ROSA, "unirse", "SM-join")
        assert status == 200 and "recibiras noticias urgentes" in reply
        await f.admin.post(ADMIN, urgent("Strike is on", "Comienza la huelga"))
        await f.drain()
        assert [t.body.split("\n")[0] for t in twilio.texts] == [
            "UTLA: URGENTE: Comienza la huelga"
        ]
        status, reply = await f.text_in(ROSA, "stop", "SM-stop")
        assert "STOP" not in reply or "UNIRSE" in reply or "JOIN" in reply
        await f.admin.post(ADMIN, urgent("Talks", "Negociaciones"))
        await f.drain()
        assert len(twilio.texts) == 1


async def test_unconfirmed_sign_up_gets_only_its_confirmation(
    store: Store, clock: FixedClock
) -> None:
    async with (
        FakeSmtp() as smtp,
        FakeTwilio() as twilio,
        families(store, clock, smtp=smtp, twilio=twilio, sms=SMS) as f,
    ):
        # A page from before texts began with a text still posts a number: it gets no text.
        response = await f.sign_up(
            path="/subscribe", data={"email": MARIA, "phone": ROSA, "receive": "all"}
        )
        assert response.status == 200 and "send JOIN" in await response.text()
        for headline in ("Routine note", "Important note", "Urgent note"):
            await f.admin.post(ADMIN, urgent(headline, headline))
        await f.drain()
        assert len(smtp.messages) == 1 and smtp.messages[0]["Subject"].startswith("Confirm:")
        assert twilio.texts == []
