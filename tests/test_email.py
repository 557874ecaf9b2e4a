"""The e-mail plugin against a real SMTP server (aiosmtpd on 127.0.0.1): what arrives, read
with the standard `email` parser; permanent and temporary refusals; header injection;
the unsubscribe link and RFC 8058 one-click POST; the SMTP URL."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters.email import parse_smtp_url
from adapters.email._settings import EmailSettings
from bot.clock import FixedClock
from bot.config import Settings
from bot.editorial.admin import Draft
from bot.errors import ConfigError
from bot.models import DeliveryState, Status, UpdateText, Urgency
from bot.store import Store
from tests.fakes.smtp import PASSWORD, FakeSmtp
from tests.family_support import Families, confirm_path, families, text_of
from tests.support import ADMIN

MARIA = "maria@example.com"
FEW = {"max_attempts": 3}


async def subscribed(f: Families, address: str = MARIA, **form: str) -> None:
    """Sign up and confirm through the page and the link, as a person would."""
    assert f.smtp is not None
    before = len(f.smtp.messages)
    response = await f.sign_up(path="/subscribe", data={"email": address, **form})
    assert response.status == 200
    await f.drain()
    confirmation = f.smtp.messages[before]
    assert (await f.confirm(confirm_path(confirmation))).status == 200


def draft(headline: str, body: str = "", urgency: Urgency = Urgency.URGENT) -> Draft:
    return Draft(Status.STRIKE_ON, {"en": UpdateText(headline, body)}, urgency)


async def test_a_mailbox_that_does_not_exist_is_marked_broken_without_notices(
    sqlite_store: Store, clock: FixedClock
) -> None:
    async with FakeSmtp() as smtp, families(sqlite_store, clock, smtp=smtp) as f:
        await subscribed(f, "gone@example.com")
        smtp.refuse("gone@example.com", "550 5.1.1 <gone@example.com>: Recipient unknown")
        await f.admin.post(ADMIN, draft("Strike is on"))
        await f.drain()
        async with sqlite_store.read() as tx:
            rows = await tx.list_deliveries(limit=None)
            [sub] = await tx.list_subscriptions()
            audit = await tx.list_audit(limit=20)
        [post] = [r for r in rows if r.action == "post"]
        assert post.state is DeliveryState.DEAD and post.attempts == 1
        assert post.last_error is not None and "550" in post.last_error
        assert "gone@example.com" not in post.last_error  # the server's echo is scrubbed
        assert sub.broken_reason is not None and "gone@" not in sub.broken_reason
        assert not [r for r in rows if r.action == "notice"]  # admins see counts instead
        assert "subscriber.broken" in [a.action for a in audit]
        stats = await f.signups.stats()
        assert stats["people"]["email"]["broken"] == 1
        # Nothing more goes there.
        await f.admin.post(ADMIN, draft("Talks resume"))
        await f.drain()
        assert len(smtp.to("gone@example.com")) == 1  # its confirmation only


async def test_temporary_refusals_are_retried_until_delivered(
    sqlite_store: Store, clock: FixedClock
) -> None:
    async with FakeSmtp() as smtp, families(sqlite_store, clock, smtp=smtp) as f:
        await subscribed(f)
        smtp.fail_next_data("451 4.3.0 Temporary local problem, try again")
        smtp.fail_next_data("421 4.7.0 Too many connections, slow down")
        await f.admin.post(ADMIN, draft("Strike is on"))
        await f.drain()
        assert [m["Subject"] for m in smtp.to(MARIA)][-1] == "URGENT: Strike is on"
        async with sqlite_store.read() as tx:
            [post] = [d for d in await tx.list_deliveries(limit=None) if d.action == "post"]
        assert post.state is DeliveryState.SENT and post.attempts == 3  # two refusals, then sent


async def test_a_full_mailbox_is_not_a_broken_address(
    sqlite_store: Store, clock: FixedClock
) -> None:
    async with FakeSmtp() as smtp, families(sqlite_store, clock, smtp=smtp, delivery=FEW) as f:
        await subscribed(f)
        smtp.refuse(MARIA, "452 4.2.2 Mailbox full")
        await f.admin.post(ADMIN, draft("Strike is on"))
        await f.drain()
        async with sqlite_store.read() as tx:
            [sub] = await tx.list_subscriptions()
            [post] = [d for d in await tx.list_deliveries(limit=None) if d.action == "post"]
        assert sub.broken_reason is None
        assert post.last_error is not None and "gave up after 3 attempts" in post.last_error


async def test_header_injection_in_any_field_stays_in_its_field(
    sqlite_store: Store, clock: FixedClock
) -> None:
    async with FakeSmtp() as smtp, families(sqlite_store, clock, smtp=smtp) as f:
        await subscribed(f)
        evil = "Strike on\r\nBcc: everyone@example.com\r\nX-Injected: yes"
        await f.admin.post(ADMIN, draft(evil, "Line one\r\n.\r\nMAIL FROM:<x@y.z>\x00 done"))
        await f.drain()
        mail = smtp.to(MARIA)[-1]
        assert mail["Bcc"] is None and mail["X-Injected"] is None
        assert mail["Subject"] == "URGENT: Strike on Bcc: everyone@example.com X-Injected: yes"
        assert [r.recipients for r in smtp.received][-1] == [MARIA]
        assert "MAIL FROM:<x@y.z> done" in text_of(mail)


async def test_every_mail_is_multipart_with_the_visible_and_one_click_unsubscribe(
    sqlite_store: Store, clock: FixedClock
) -> None:
    async with FakeSmtp() as smtp, families(sqlite_store, clock, smtp=smtp) as f:
        await subscribed(f)
        await f.admin.post(ADMIN, draft("Strike is on", "Picket lines at <every> school & more"))
        await f.drain()
        mail = smtp.to(MARIA)[-1]
        assert mail["From"] == "UTLA Strike News <news@utla.example.org>"
        assert mail["Message-ID"].endswith("@utla.example.org>")
        assert (
            mail["List-Id"].strip()
            == "United Teachers Los Angeles strike updates <utla-2019.utla.example.org>"
        )
        plain = mail.get_body(("plain",))
        html = mail.get_body(("html",))
        assert plain is not None and html is not None
        assert "Picket lines at <every> school & more" in plain.get_content()
        assert "Picket lines at &lt;every&gt; school &amp; more" in html.get_content()
        url = mail["List-Unsubscribe"].strip("<>")
        assert f'href="{url}"' in html.get_content()


async def test_opening_the_unsubscribe_link_changes_nothing_and_one_click_does(
    sqlite_store: Store, clock: FixedClock
) -> None:
    async with FakeSmtp() as smtp, families(sqlite_store, clock, smtp=smtp) as f:
        await subscribed(f, language="es")
        await f.admin.post(ADMIN, draft("Strike is on"))
        await f.drain()
        path = smtp.to(MARIA)[-1]["List-Unsubscribe"].strip("<>").split(".org", 1)[1]
        page = await f.client.get(path)
        body = await page.text()
        assert page.status == 200 and 'lang="es"' in body and 'method="post"' in body
        assert "form-action 'self'" in page.headers["Content-Security-Policy"]
        assert await f.signups.find(MARIA) is not None  # a scanner opened it: still subscribed
        # Mail providers POST exactly this body (RFC 8058), with no cookie or login.
        done = await f.client.post(
            path,
            data="List-Unsubscribe=One-Click",
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
        assert done.status == 200 and "borrada" in await done.text()
        assert await f.signups.find(MARIA) is None
        again = await f.client.post(path, data="List-Unsubscribe=One-Click")
        assert again.status == 200
        forged = await f.client.post("/email/unsubscribe/not-a-token", data="x")
        assert forged.status == 200  # the same page: nobody learns which tokens exist


async def test_the_mail_server_being_down_is_retried(
    sqlite_store: Store, clock: FixedClock
) -> None:
    async with FakeSmtp() as smtp, families(sqlite_store, clock, smtp=smtp) as f:
        await subscribed(f)
    # The server is gone now; the adapter is still configured for it.
    async with FakeSmtp() as other, families(sqlite_store, clock, smtp=other, delivery=FEW) as g:
        assert g.email is not None
        g.email.pool.server = parse_smtp_url(smtp.url)  # the old port: connection refused
        await g.admin.post(ADMIN, draft("Strike is on"))
        await g.drain()
        async with sqlite_store.read() as tx:
            [post] = [d for d in await tx.list_deliveries(limit=None) if d.action == "post"]
            [sub] = await tx.list_subscriptions()
        assert post.state is DeliveryState.DEAD and post.attempts == 3
        assert post.last_error is not None
        assert "cannot connect to the mail server" in post.last_error
        assert "check the host and port in STRIKEBOT_SMTP_URL" in post.last_error
        assert sub.broken_reason is None  # the server's fault, not the address's


async def test_a_server_without_starttls_is_explained_with_what_to_write(
    sqlite_store: Store, clock: FixedClock
) -> None:
    """Issue 28: it was reported as "the mail server failed: SMTPException"."""
    async with FakeSmtp() as smtp, families(sqlite_store, clock, smtp=smtp, delivery=FEW) as f:
        await subscribed(f)
        assert f.email is not None
        await f.email.pool.close()
        f.email.pool.server = parse_smtp_url(smtp.url.removesuffix("?tls=off"))  # asks STARTTLS
        await f.admin.post(ADMIN, draft("Strike is on"))
        await f.drain()
        async with sqlite_store.read() as tx:
            [post] = [d for d in await tx.list_deliveries(limit=None) if d.action == "post"]
        assert post.last_error is not None
        assert post.last_error.endswith(
            f"the mail server at 127.0.0.1:{smtp.port} offers no STARTTLS; for a relay on this "
            "machine add ?tls=off to STRIKEBOT_SMTP_URL, else use the provider's submission "
            "port (587) or smtps:// (465)"
        )
        assert post.last_error.endswith(str(f.email.health()["last_error"]))


def test_smtp_urls() -> None:
    server = parse_smtp_url("smtp://news%40utla.org:p%40ss@mail.example.org:587")
    assert (server.host, server.port, server.username, server.password) == (
        "mail.example.org",
        587,
        "news@utla.org",
        "p@ss",
    )
    assert server.start_tls and not server.use_tls
    assert parse_smtp_url("smtps://u:p@mail.example.org").port == 465
    assert not parse_smtp_url("smtp://127.0.0.1:25?tls=off").start_tls
    for bad in ("http://mail.example.org", "smtp://mail.example.org:25?tls=off", "smtp://:25"):
        with pytest.raises(ValueError):
            parse_smtp_url(bad)


def test_settings_refuse_mistakes_and_redact_the_password() -> None:
    with pytest.raises(ConfigError) as refused:
        Settings.from_env(
            {"STRIKEBOT_SMTP_URL": "smtp://u:p@mail.example.org:25?tls=off"}
        ).secrets()
    assert "STRIKEBOT_SMTP_URL" in refused.value.message and "STARTTLS" in refused.value.message
    with pytest.raises(ConfigError):
        Settings.from_env({"STRIKEBOT_MAIL_FROM": "news@utla.org\r\nBcc: x@y.z"}).secrets()
    settings = EmailSettings.from_env(
        {
            "STRIKEBOT_SMTP_URL": f"smtp://u:{PASSWORD}@127.0.0.1:25?tls=off",
            "STRIKEBOT_MAIL_FROM": "a@b.org",
        }
    )
    assert settings.enabled and PASSWORD in settings.secrets()
    assert not EmailSettings.from_env({"STRIKEBOT_MAIL_FROM": "a@b.org"}).enabled


async def test_an_unsubscribed_address_is_in_neither_database_file(
    sqlite_url: str, clock: FixedClock
) -> None:
    """Issue 28: 55 copies of one address stayed in the SQLite WAL while the bot ran. After
    the one-click unsubscribe (and after a deletion request), the address is in neither the
    database file nor its write-ahead log."""
    path = Path(sqlite_url.split("///", 1)[1])

    def copies(address: str) -> int:
        found = 0
        for file in (path, path.with_name(path.name + "-wal")):
            if file.exists():
                found += file.read_bytes().count(address.encode())
        return found

    async with (
        Store.open(sqlite_url) as store,
        FakeSmtp() as smtp,
        families(store, clock, smtp=smtp) as f,
    ):
        for address in (MARIA, "rosa@example.com"):
            await subscribed(f, address)
            for n in range(3):  # the row is rewritten a few times as it is used
                await f.admin.post(ADMIN, draft(f"Update {n}"))
                await f.drain()
            assert copies(address) > 0
        link = smtp.to(MARIA)[-1]["List-Unsubscribe"].strip("<>").split(".org", 1)[1]
        assert (await f.client.post(link, data="List-Unsubscribe=One-Click")).status == 200
        await f.signups.scrubbed()
        assert copies(MARIA) == 0
        assert await f.signups.delete("rosa@example.com")
        assert copies("rosa@example.com") == 0
