"""E-mail rendered once per message and language (issue 31): each person's copy is the
rendition's bytes with their address, Message-ID, date and unsubscribe link filled in,
and says exactly what an e-mail built for them alone says; through the real adapter and
aiosmtpd, read back with the standard `email` parser."""

from __future__ import annotations

import asyncio
import re
import secrets
from dataclasses import replace
from datetime import UTC, datetime
from email import message_from_bytes, policy
from email.headerregistry import Address
from email.message import EmailMessage

import pytest

from adapters.email._render import Envelope, build_email
from adapters.email._rendition import Marks, Rendition, _flatten, rendition
from bot.clock import FixedClock
from bot.editorial.admin import Draft
from bot.models import Status, UpdateText, Urgency
from bot.plugins.outbound import Field, Link, MessageKind, OutboundMessage
from bot.store import Store
from tests.fakes.smtp import FakeSmtp
from tests.family_support import Families, confirm_path, families, html_of, text_of
from tests.support import ADMIN, recording

SENDER = Address("UTLA Strike News", "news", "utla.example.org")
NOW = datetime(2019, 1, 18, 18, 0, 7, tzinfo=UTC)
TOKEN = "Abc_def-123456789012345678901234"


def message(language: str = "es", **extra: object) -> OutboundMessage:
    fields = (Field("Próximo paso", "Mitin en el Ayuntamiento, 10 AM"),)
    links = (Link("Leer más", "https://strike.example.org/es/updates/4"),)
    values: dict[str, object] = {
        "title": "Sin acuerdo: la huelga continúa el lunes en todas las escuelas del distrito",
        "body": "Piquetes en todas las escuelas desde las 6:30.\n\nLleven agua y un cartel. " * 4,
        "kind": MessageKind.UPDATE,
        "language": language,
        "status": Status.STRIKE_ON,
        "status_label": "Huelga",
        "urgency": Urgency.URGENT,
        "fields": fields,
        "links": links,
        "footer": "UTLA · 3303 Wilshire Blvd",
    }
    values.update(extra)
    return OutboundMessage(**values)  # type: ignore[arg-type]


def envelope(to: str, key: str, token: str, base: str = "https://strike.example.org") -> Envelope:
    return Envelope(
        sender=SENDER,
        to=to,
        message_id=f"<{key}@utla.example.org>",
        union="United Teachers Los Angeles",
        list_id="utla-2019.utla.example.org",
        unsubscribe_url=f"{base}/email/unsubscribe/{token}?lang=es",
        reply_to="families@utla.example.org",
    )


def made(msg: OutboundMessage, base: str = "https://strike.example.org") -> Rendition:
    marks = Marks.new()
    mail = build_email(msg, envelope(marks.address, marks.key, marks.token, base), now=marks.now)
    found = rendition(mail, marks)
    assert found is not None
    return found


def said(raw: bytes) -> tuple[list[tuple[str, str]], list[str]]:
    """What a mail client reads: every header's value in order (the MIME boundary aside),
    and every part's decoded text."""
    mail = message_from_bytes(raw, policy=policy.default)
    assert isinstance(mail, EmailMessage)
    headers = [(k, re.sub(r'boundary="[^"]+"', "", str(v))) for k, v in mail.items()]
    return headers, [part.get_content() for part in mail.iter_parts()]


@pytest.mark.parametrize("base", ["https://strike.example.org", "https://" + "x" * 120 + ".org"])
@pytest.mark.parametrize("language", ["en", "es"])
def test_a_copy_says_what_the_e_mail_built_for_that_person_says(base: str, language: str) -> None:
    msg = message(language)
    copy = made(msg, base).fill("maria.lopez+news@example.com", "0123456789abcdef0123", TOKEN, NOW)
    assert copy is not None
    alone = build_email(
        msg, envelope("maria.lopez+news@example.com", "0123456789abcdef0123", TOKEN, base), now=NOW
    )
    assert said(copy) == said(_flatten(alone))


@pytest.mark.parametrize("language", ["en", "es"])
def test_a_copy_holds_the_persons_own_preferences_link(language: str) -> None:
    """The preferences link (`Marks.prefs`) is filled in per person like the unsubscribe
    link, and the copy still says what the e-mail built for them alone says."""
    msg = message(language)
    marks = Marks.new()
    base = "https://strike.example.org"
    made_with = replace(
        envelope(marks.address, marks.key, marks.token), preferences_url=f"{base}/p/{marks.prefs}"
    )
    found = rendition(build_email(msg, made_with, now=marks.now), marks)
    assert found is not None
    mine = "AbCdEfGhIjKlMnOpQrSt"
    copy = found.fill("maria@example.com", "0123456789abcdef0123", TOKEN, NOW, mine)
    assert copy is not None and found.fill("maria@example.com", "k", TOKEN, NOW) is None
    alone = replace(
        envelope("maria@example.com", "0123456789abcdef0123", TOKEN),
        preferences_url=f"{base}/p/{mine}",
    )
    assert said(copy) == said(_flatten(build_email(msg, alone, now=NOW)))
    assert f"{base}/p/{mine}" in said(copy)[1][0] and f"{base}/p/{mine}" in said(copy)[1][1]


def test_the_recipients_headers_are_whole_lines_with_the_one_click_pair() -> None:
    """RFC 8058: `List-Unsubscribe: <https://…>` whole (no encoded-word, not folded inside
    the URL) with `List-Unsubscribe-Post: List-Unsubscribe=One-Click`; every line CRLF and
    under 998 octets, and nothing but ASCII on the wire (quoted-printable parts)."""
    copy = made(message()).fill("maria@example.com", "0123456789abcdef0123", TOKEN, NOW)
    assert copy is not None
    lines = copy.split(b"\r\n")
    url = f"https://strike.example.org/email/unsubscribe/{TOKEN}?lang=es"
    assert f"List-Unsubscribe: <{url}>".encode() in lines
    assert b"List-Unsubscribe-Post: List-Unsubscribe=One-Click" in lines
    assert b"To: maria@example.com" in lines
    assert b"Message-ID: <0123456789abcdef0123@utla.example.org>" in lines
    assert b"Date: Fri, 18 Jan 2019 18:00:07 +0000" in lines
    assert copy.isascii() and b"\n" not in copy.replace(b"\r\n", b"")
    assert max(len(line) for line in lines) <= 998
    assert all(len(line) <= 76 for line in copy.split(b"\r\n\r\n", 1)[1].split(b"\r\n"))


def test_each_copy_holds_its_own_values_and_nobody_elses() -> None:
    found = made(message())
    people = [
        (f"parent{n}@example.com", secrets.token_hex(10), secrets.token_urlsafe(24))
        for n in range(5)
    ]
    copies = [found.fill(a, k, t, NOW) for a, k, t in people]
    for (address, key, token), copy in zip(people, copies, strict=True):
        assert copy is not None
        headers, parts = said(copy)
        read = " ".join(f"{k}: {v}" for k, v in headers) + " ".join(parts)
        others = [p for p in people if p[0] != address]
        assert address in read and key in read
        assert read.count(token) == 3  # the header, the text part, the HTML part
        assert not any(o in read for other in others for o in other)


@pytest.mark.parametrize(
    ("address", "key", "token"),
    [
        ("o'brien@example.com", "0123456789abcdef0123", TOKEN),  # a quote: parsed by email
        ("maría@ejemplo.es", "0123456789abcdef0123", TOKEN),  # needs SMTPUTF8
        ("maria@example.com", "bad key\r\nBcc: x", TOKEN),
        ("maria@example.com", "0123456789abcdef0123", "tok?en=1"),
    ],
)
def test_values_that_cannot_go_in_as_they_are_ask_for_the_full_build(
    address: str, key: str, token: str
) -> None:
    assert made(message()).fill(address, key, token, NOW) is None


def draft() -> Draft:
    return Draft(
        Status.STRIKE_ON,
        {
            "en": UpdateText("No deal: strike continues", "Picket lines at 6:30 AM.", "Rally"),
            "es": UpdateText("Sin acuerdo: sigue la huelga", "Piquetes a las 6:30.", "Mitin"),
        },
        Urgency.URGENT,
    )


async def signed_up(f: Families, address: str, language: str) -> None:
    assert f.smtp is not None
    before = len(f.smtp.messages)
    data = {"email": address, "language": language}
    assert (await f.sign_up(data)).status == 200
    await f.drain()
    assert (await f.confirm(confirm_path(f.smtp.messages[before]))).status == 200


async def test_an_update_is_rendered_once_per_language_for_everyone(
    sqlite_store: Store, clock: FixedClock
) -> None:
    people = {f"parent{n}@example.com": ("es" if n % 2 else "en") for n in range(6)}
    people["o'brien@example.com"] = "en"  # built for them alone, and just as right
    async with FakeSmtp() as smtp, families(sqlite_store, clock, smtp=smtp) as f:
        for address, language in people.items():
            await signed_up(f, address, language)
        assert f.email is not None
        f.email.renditions.clear()  # the confirmations were each built alone
        await f.admin.post(ADMIN, draft())
        await f.drain()
        assert len(f.email.renditions) == 2  # one per language
        ids = set()
        for address, language in people.items():
            mail = smtp.to(address)[-1]
            assert mail["To"] == address
            ids.add(mail["Message-ID"])
            headline = "Sin acuerdo: sigue la huelga" if language == "es" else "No deal"
            assert headline in mail["Subject"] and headline in text_of(mail)
            url = mail["List-Unsubscribe"].strip("<>")
            assert url in text_of(mail) and f'href="{url}"' in html_of(mail)
            assert mail["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
            # The link is this person's: following it unsubscribes them and nobody else.
            path = url.split(".org", 1)[1]
            assert (await f.client.post(path, data="List-Unsubscribe=One-Click")).status == 200
            assert await f.signups.find(address) is None
        assert len(ids) == len(people)


async def test_sends_paced_apart_share_one_read_of_their_addresses(
    sqlite_store: Store, clock: FixedClock
) -> None:
    """Each send waits a moment (`within`) for the next ones' lookups, so a fan-out paced
    at 100 a second reads five addresses at a time, not one."""
    async with FakeSmtp() as smtp, families(sqlite_store, clock, smtp=smtp) as f:
        addresses = [f"parent{n}@example.com" for n in range(3)]
        for address in addresses:
            await signed_up(f, address, "en")
        async with sqlite_store.read() as tx:
            keys = [s.channel for s in await tx.list_subscriptions() if s.platform == "email"]
        with recording(sqlite_store, lambda sql: "FROM subscribers" in sql) as reads:
            lookups = []
            for key in keys:
                lookups.append(asyncio.create_task(f.signups.contactable(key, within=0.05)))
                await asyncio.sleep(0.01)  # sends paced 10 ms apart
            found = await asyncio.gather(*lookups)
        assert len(reads) == 1
        assert sorted(p.address for p in found if p is not None) == addresses
