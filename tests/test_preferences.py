"""The signed, login-free preferences page, end to end through the web app, the e-mail
plugin (a real SMTP server, aiosmtpd) and the SMS plugin (the Twilio fake), on SQLite and
PostgreSQL: the link every e-mail carries (beside the one-click unsubscribe, unchanged), the
one a text's PREFS, HELP and welcome carry; what the page changes (schools, language, what
to receive), its CSRF guard, its audit; leaving, and what an old, a tampered or a cut link
says; several schools on the sign-up form, kept through the double opt-in."""

from __future__ import annotations

import re
from email.message import EmailMessage
from pathlib import Path

from aiohttp import ClientResponse
from multidict import MultiDict

from bot.audiences import Sites, read_sites_csv
from bot.clock import FixedClock
from bot.editorial.admin import Draft
from bot.models import Audience, Contact, DeliveryAction, Status, UpdateText, Urgency
from bot.store import Store
from tests.fakes.smtp import FakeSmtp
from tests.fakes.twilio import FakeTwilio
from tests.family_support import Families, confirm_path, families, html_of, text_of
from tests.support import ADMIN, ADMINS, ROOT

ROSA = "rosa@example.org"
PHONE = "+12135550123"
LINK = re.compile(r"https://strike\.example\.org((?:/es)?/p/[A-Za-z0-9_-]{20})")


async def with_sites(store: Store, clock: FixedClock) -> None:
    text = (ROOT / "config" / "lausd-sites.csv").read_text(encoding="utf-8")
    await Sites(store, ADMINS, clock).import_file(ADMIN, read_sites_csv(text, ("en", "es"), "en"))


async def post_form(
    f: Families, path: str, fields: list[tuple[str, str]], *, page: str | None = None
) -> ClientResponse:
    """Send a form as a browser would: its page first (token and cookie), then the POST."""
    token = await f.form_token(page or path)
    return await f.client.post(path, data=MultiDict([*fields, ("form_token", token)]))


async def follows(f: Families, address: str, contact: Contact) -> Audience:
    person = await f.signups.find(address, contact)
    assert person is not None and person.subscription_id is not None
    async with f.store.read() as tx:
        sub = await tx.get_subscription(person.subscription_id)
    assert sub is not None
    return sub.follows


def link_in(mail: EmailMessage) -> str:
    found = LINK.search(text_of(mail))
    assert found is not None, text_of(mail)
    return found.group(1)


async def test_a_family_picks_two_schools_then_changes_them_on_the_page_from_its_e_mail(
    store: Store, clock: FixedClock
) -> None:
    await with_sites(store, clock)
    async with FakeSmtp() as smtp, families(store, clock, smtp=smtp) as f:
        # The sign-up form: several school fields sharing one list typed to search.
        form = await (await f.client.get("/es/subscribe")).text()
        assert form.count('list="site-names"') == 3
        assert '<option value="Distrito Local Este">' in form
        fields = [("email", ROSA), ("language", "es"), ("site", "Preparatoria Roosevelt")]
        fields += [("site", "venice"), ("site", "")]
        answer = await post_form(f, "/es/subscribe", fields)
        assert answer.status == 200
        await f.drain()
        confirmation = smtp.to(ROSA)[-1]
        assert LINK.search(text_of(confirmation)) is None  # not subscribed yet: no settings
        confirmed = await f.confirm(confirm_path(confirmation))
        assert confirmed.status == 200
        assert await follows(f, ROSA, Contact.EMAIL) == Audience.of(["roosevelt", "venice"])
        # The page saying she is signed up links to her settings, in her language.
        shown = await confirmed.text()
        settings = re.search(r'href="https://strike\.example\.org(/es/p/[^"]+)"', shown)
        assert settings is not None and "Tu página de ajustes" in shown

        # Every e-mail links to the page, beside the one-click unsubscribe (unchanged).
        update = Draft(Status.STRIKE_ON, {"en": UpdateText("Strike is on")}, Urgency.URGENT)
        await f.admin.post(ADMIN, update)
        await f.drain()
        mail = smtp.to(ROSA)[-1]
        path = link_in(mail)
        assert path.startswith("/es/p/") and path == settings.group(1)
        assert f"https://strike.example.org{path}" in html_of(mail)
        assert "Tus ajustes" in html_of(mail)
        assert ROSA not in path and "rosa" not in path
        assert mail["List-Unsubscribe"].startswith("<https://strike.example.org/email/")
        assert mail["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"

        # The page, in Spanish: what she follows, ticked; the address nowhere.
        page = await f.client.get(path)
        body = await page.text()
        assert page.status == 200 and 'lang="es"' in body
        assert page.headers["Cache-Control"] == "no-store"
        assert 'value="Preparatoria Roosevelt" checked' in body
        assert 'value="Preparatoria Venice" checked' in body
        assert ROSA not in body

        # She keeps Roosevelt, drops Venice, adds her district, and wants every update.
        change = [("site", "Preparatoria Roosevelt"), ("site", "Distrito Local Este")]
        change += [("site", ""), ("receive", "all"), ("language", "es")]
        saved = await post_form(f, path, change)
        text = await saved.text()
        assert saved.status == 200
        assert (
            "Guardado: sigues Distrito Local Este y Preparatoria Roosevelt y recibes todas las "
            "actualizaciones, en español."
        ) in text.replace("\n", " ")
        assert await follows(f, ROSA, Contact.EMAIL) == Audience.of(["roosevelt"], ["east"])
        person = await f.signups.find(ROSA, Contact.EMAIL)
        assert person is not None and person.choice == "all"

        # Audited by key, with counts: no address, no school.
        async with f.store.read() as tx:
            entries = [e for e in await tx.list_audit(limit=50) if "preferences" in e.action]
        assert len(entries) == 1
        logged = repr(entries[0])
        assert ROSA not in logged and "roosevelt" not in logged and "east" not in logged
        assert entries[0].after == {
            "language": "es",
            "choice": "all",
            "sites": 1,
            "groups": 1,
            "via": "web /es/p/",
        }

        # A name no site or group has: said on the page, nothing changed.
        wrong = await post_form(f, path, [("site", "Lincoln"), ("receive", "urgent")])
        assert wrong.status == 422
        assert "Ninguna escuela ni distrito se llama «Lincoln»" in await wrong.text()
        assert await follows(f, ROSA, Contact.EMAIL) == Audience.of(["roosevelt"], ["east"])

        # Nothing ticked or typed: everything again; in English now, the page follows.
        back = await post_form(f, path, [("receive", "urgent"), ("language", "en")])
        assert "Saved: you follow everything, and get urgent news, in English." in (
            await back.text()
        ).replace("\n", " ")
        assert await follows(f, ROSA, Contact.EMAIL) == Audience()


async def test_the_page_refuses_forms_from_elsewhere_and_bad_links_say_what_to_do(
    store: Store, clock: FixedClock
) -> None:
    await with_sites(store, clock)
    async with FakeSmtp() as smtp, families(store, clock, smtp=smtp) as f:
        await post_form(f, "/subscribe", [("email", ROSA), ("site", "roosevelt")])
        await f.drain()
        assert (await f.confirm(confirm_path(smtp.to(ROSA)[-1]))).status == 200
        await f.admin.post(
            ADMIN, Draft(Status.STRIKE_ON, {"en": UpdateText("News")}, Urgency.URGENT)
        )
        await f.drain()
        path = link_in(smtp.to(ROSA)[-1])
        assert path.startswith("/p/")

        # No token, or another site's page: refused, nothing changed.
        bare = await f.client.post(path, data={"receive": "all"})
        assert bare.status == 403 and "settings page" in await bare.text()
        token = await f.form_token(path)
        elsewhere = await f.client.post(
            path,
            data={"receive": "all", "form_token": token},
            headers={"Origin": "https://evil.example"},
        )
        assert elsewhere.status == 403
        leave_elsewhere = await f.client.post(
            f"{path}/leave", data={"form_token": token}, headers={"Origin": "https://evil.example"}
        )
        assert leave_elsewhere.status == 403
        assert await f.signups.find(ROSA) is not None

        # A changed character, a cut link: a clear page, not a 500.
        token_part = path.rsplit("/", 1)[1]
        changed = path[:-1] + ("A" if token_part[-1] != "A" else "B")
        for bad in (changed, path[:-3], "/p/" + "x" * 300):
            answer = await f.client.get(bad)
            assert answer.status == 404, bad
            assert "is not complete or was changed" in await answer.text()
        tampered = await post_form(f, changed, [("receive", "all")], page=path)
        assert tampered.status == 404
        person = await f.signups.find(ROSA)
        assert person is not None and person.choice == "urgent"

        # Leaving deletes her, at once; the same link then says what happened.
        left = await post_form(f, f"{path}/leave", [], page=path)
        assert left.status == 200 and "You are unsubscribed" in await left.text()
        assert await f.signups.find(ROSA) is None
        again = await f.client.get(path)
        said = await again.text()
        assert again.status == 410
        assert "belonged to a sign-up that has ended" in said and "/subscribe" in said
        assert (await post_form(f, path, [("receive", "all")], page="/subscribe")).status == 410
        # Signing up again gives a new link; the old one still says she left.
        await post_form(f, "/subscribe", [("email", ROSA)])
        await f.drain()
        assert (await f.confirm(confirm_path(smtp.to(ROSA)[-1]))).status == 200
        assert (await f.client.get(path)).status == 410


async def test_texts_link_to_the_page_in_the_welcome_help_and_prefs(
    store: Store, clock: FixedClock
) -> None:
    from tests.fakes.twilio import FakeTwilio

    await with_sites(store, clock)
    async with FakeTwilio() as twilio, families(store, clock, twilio=twilio) as f:
        status, welcome = await f.text_in(PHONE, "UNIRSE ROOSEVELT", "SM1")
        assert status == 200
        found = LINK.search(welcome)
        assert found is not None and found.group(1).startswith("/es/p/"), welcome
        assert "Tus ajustes:" in welcome
        path = found.group(1)
        _, prefs = await f.text_in(PHONE, "ajustes", "SM2")
        assert LINK.search(prefs) is not None and "elige lo que sigues" in prefs
        assert LINK.search(prefs).group(1) == path  # type: ignore[union-attr]
        _, helped = await f.text_in(PHONE, "HELP", "SM3")
        assert path in helped and "STOP" in helped
        # A number not signed up gets no link, and is told how to sign up.
        _, stranger = await f.text_in("+12135550999", "PREFS", "SM4")
        assert LINK.search(stranger) is None and "Text JOIN" in stranger

        # The page from the text: the school she texted, ticked; she adds a second.
        body = await (await f.client.get(path)).text()
        assert 'value="Preparatoria Roosevelt" checked' in body
        saved = await post_form(f, path, [("site", "roosevelt"), ("site", "Grant High School")])
        assert saved.status == 200
        assert await follows(f, PHONE, Contact.PHONE) == Audience.of(["grant", "roosevelt"])
        # An update for Grant reaches her; STOP still deletes her, and the link says so.
        await f.admin.post(
            ADMIN,
            Draft(
                Status.STRIKE_ON,
                {"en": UpdateText("Grant: rally at noon")},
                Urgency.URGENT,
                audience=Audience.of(["grant"]),
            ),
        )
        await f.drain()
        assert any("Grant: rally at noon" in m.body for m in twilio.to(PHONE))
        await f.text_in(PHONE, "STOP", "SM5")
        assert (await f.client.get(path)).status == 410


async def test_the_schools_picked_on_the_form_go_with_its_join_code(
    store: Store, clock: FixedClock
) -> None:
    await with_sites(store, clock)
    async with FakeTwilio() as twilio, families(store, clock, twilio=twilio) as f:
        fields = [("texts", "yes"), ("site", "Grant High School"), ("site", "Distrito Local Sur")]
        page = await (await post_form(f, "/subscribe", fields)).text()
        found = re.search(r"JOIN (\d{6})", page)
        assert found is not None, page
        _, welcome = await f.text_in(PHONE, f"JOIN {found.group(1)}", "SM1")
        assert LINK.search(welcome) is not None
        assert await follows(f, PHONE, Contact.PHONE) == Audience.of(["grant"], ["south"])


async def test_no_text_of_an_update_carries_the_link(
    sqlite_store: Store, clock: FixedClock
) -> None:
    """The decision docs/email-sms.md explains: a link in every text would cut ~45
    characters of news from every update and double a headline's segments (bench.sms_link),
    so only the welcome, HELP and PREFS carry it."""
    from bench.sms_link import measure

    figures = measure("https://strike.utla.net", 2)
    for lang in ("en", "es"):
        assert figures[lang]["words_cut_at_budget"] == figures[lang]["texts"]
        flashes = figures[lang]["headline_only_segments"]
        assert isinstance(flashes, list) and all(b > a for a, b in flashes)
    async with FakeTwilio() as twilio, families(sqlite_store, clock, twilio=twilio) as f:
        await f.text_in(PHONE, "JOIN", "SM1")
        await f.admin.post(
            ADMIN, Draft(Status.STRIKE_ON, {"en": UpdateText("Strike is on")}, Urgency.URGENT)
        )
        await f.drain()
        texts = [m.body for m in twilio.to(PHONE)]
        assert texts and not any(LINK.search(t) for t in texts)
        async with f.store.read() as tx:
            rows = await tx.list_deliveries(limit=None)
        assert any(r.action is DeliveryAction.POST for r in rows)


async def test_the_page_with_its_picker_passes_axe_and_the_nu_checker(
    sqlite_store: Store, clock: FixedClock, tmp_path: Path
) -> None:
    from tests.axe import axe_source, chromium_page, violations
    from tests.support import chromium_path
    from tests.vnu import check, java_path, vnu_jar

    await with_sites(sqlite_store, clock)
    async with FakeSmtp() as smtp, families(sqlite_store, clock, smtp=smtp) as f:
        await post_form(f, "/es/subscribe", [("email", ROSA), ("language", "es"), ("site", "east")])
        await f.drain()
        assert (await f.confirm(confirm_path(smtp.to(ROSA)[-1]))).status == 200
        await f.admin.post(
            ADMIN, Draft(Status.STRIKE_ON, {"en": UpdateText("News")}, Urgency.URGENT)
        )
        await f.drain()
        path = link_in(smtp.to(ROSA)[-1])
        saved = await post_form(f, path, [("site", "east"), ("site", "Lincoln")])
        pages = {
            "prefs.html": await (await f.client.get(path)).text(),
            "problem.html": await saved.text(),
            "bad.html": await (await f.client.get("/es/p/" + "A" * 20)).text(),
        }
        chromium_path()
        axe_source()
        found = []
        async with chromium_page(tmp_path) as browser:
            for width, height in ((1280, 900), (320, 640)):
                url = str(f.client.make_url(path))
                found += [v["id"] for v in await violations(browser, url, width, height)]
        assert found == []
        java_path()
        vnu_jar()
        files = []
        for name, page in pages.items():
            file = tmp_path / name
            file.write_text(page, encoding="utf-8")
            files.append(file)
        assert check(files) == []
