"""The one conversation texts and WhatsApp hold (`bot.people.conversation`), on both
channels at once: the same keywords do the same things, each channel says it in its own
sentences, and only the channel's rules differ (a web JOIN code and YES confirming by text;
YES joining and the 24-hour window on WhatsApp)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import pytest

from bot.clock import FixedClock
from bot.models import Contact
from bot.people.signups import Choice
from bot.store import Store
from tests.fakes.twilio import FakeTwilio
from tests.family_support import Families, families

ROSA = "+12135550123"
LINK = re.compile(r"https://strike\.example\.org((?:/es)?/p/[A-Za-z0-9_-]{20})")
CHANNELS = {"sms": Contact.PHONE, "whatsapp": Contact.WHATSAPP}
Send = Callable[[str, str, str], Awaitable[tuple[int, str]]]


@asynccontextmanager
async def both(store: Store, clock: FixedClock) -> AsyncIterator[Families]:
    """Texts and WhatsApp on one fake Twilio."""
    async with (
        FakeTwilio(clock=clock) as twilio,
        families(store, clock, twilio=twilio, sms={"sender_name": "UTLA"}, whatsapp=True) as f,
    ):
        yield f


def channel(f: Families, name: str) -> Send:
    return f.text_in if name == "sms" else f.whatsapp_in


@pytest.mark.parametrize("name", list(CHANNELS))
async def test_the_welcome_help_and_prefs_carry_the_link_on_both_channels(
    sqlite_store: Store, clock: FixedClock, name: str
) -> None:
    """Unified: WhatsApp's welcome now ends with the preferences link, as a text's always did."""
    async with both(sqlite_store, clock) as f:
        send = channel(f, name)
        status, welcome = await send(ROSA, "UNIRSE", "SM-1")
        found = LINK.search(welcome)
        assert status == 200 and found is not None and found.group(1).startswith("/es/p/")
        assert "noticias urgentes" in welcome and "Tus ajustes:" in welcome
        _, again = await send(ROSA, "unirse", "SM-2")
        assert "suscrito" in again and LINK.search(again) is None
        _, helped = await send(ROSA, "AYUDA", "SM-3")
        assert found.group(1) in helped and "Tus ajustes:" in helped
        _, prefs = await send(ROSA, "PREFS", "SM-4")  # in the person's language
        assert found.group(1) in prefs and "elige lo que sigues" in prefs
        _, menu = await send(ROSA, "What time is the rally?", "SM-5")  # hers, not the words'
        assert "ESTADO" in menu and "DEMANDAS" in menu
        _, stopped = await send(ROSA, "Baja", "SM-6")
        assert "borramos tu n" in stopped
        assert await f.signups.find(ROSA, CHANNELS[name]) is None
        _, stranger = await send(ROSA, "PREFS", "SM-7")
        assert LINK.search(stranger) is None and "JOIN" in stranger


@pytest.mark.parametrize("name", list(CHANNELS))
async def test_a_stranger_and_a_number_that_cannot_be_one_on_both_channels(
    sqlite_store: Store, clock: FixedClock, name: str
) -> None:
    async with both(sqlite_store, clock) as f:
        send = channel(f, name)
        _, menu = await send(ROSA, "¿Cuándo termina la huelga?", "SM-1")  # guessed: Spanish
        assert "ESTADO para las novedades" in menu
        _, stop = await send(ROSA, "STOP", "SM-2")
        assert "not signed up" in stop
        _, abroad = await send("+442079460958", "UNIRSE", "SM-3")
        assert "US" in abroad and "correo" in abroad
        status, silent = await send("+442079460958", "STOP", "SM-4")
        assert status == 200 and "<Message>" not in silent
        assert await f.signups.find(ROSA, CHANNELS[name]) is None


async def test_yes_confirms_by_text_and_joins_on_whatsapp(
    sqlite_store: Store, clock: FixedClock
) -> None:
    """The channels' own rules: a YES by text confirms a sign-up made on the page (none
    here); on WhatsApp, where none can wait for it, YES signs up as JOIN does."""
    async with both(sqlite_store, clock) as f:
        _, text = await f.text_in(ROSA, "YES", "SM-1")
        assert "there is no sign-up to confirm" in text
        assert await f.signups.find(ROSA, Contact.PHONE) is None
        _, message = await f.whatsapp_in(ROSA, "Sí", "SM-2")
        assert "noticias urgentes" in message and LINK.search(message) is not None
        person = await f.signups.find(ROSA, Contact.WHATSAPP)
        assert person is not None and person.confirmed and person.heard_at == clock()


async def test_the_web_code_works_by_text_and_is_a_site_code_on_whatsapp(
    sqlite_store: Store, clock: FixedClock
) -> None:
    async with both(sqlite_store, clock) as f:
        code = await f.signups.join_code(language="es", choice=Choice.ALL, client="192.0.2.1")
        _, text = await f.text_in(ROSA, f"JOIN {code}", "SM-1")  # the page's language, choice
        assert "todas las actualizaciones" in text and LINK.search(text) is not None
        code = await f.signups.join_code(language="es", choice=Choice.ALL, client="192.0.2.2")
        _, message = await f.whatsapp_in(ROSA, f"JOIN {code}", "SM-2")  # no code here
        assert "you will get urgent news" in message
        person = await f.signups.find(ROSA, Contact.WHATSAPP)
        assert person is not None and person.language == "en"
