"""Following, on SQLite and PostgreSQL: a channel follows some sites or groups by typed chat
or the CLI, a person by texting JOIN and a site's code; a site-targeted post then reaches
exactly them (and whoever follows everything); `all` follows everything again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.audiences import Sites, parse_follows, read_sites_csv
from bot.clock import FixedClock
from bot.commands import CommandContext, Commands
from bot.editorial.admin import Admin, Draft
from bot.models import EVERYONE, Audience, Contact, DeliveryAction, Status, UpdateText, Urgency
from bot.people.keywords import Keywords, Kind
from bot.people.signups import Offer, Outcome, SignUps
from bot.store import Store
from tests.support import ADMIN, ADMINS, CAMPAIGN, ROOT

PHONE = "+12135550123"


@pytest.fixture
async def sites(store: Store, clock: FixedClock) -> Sites:
    found = Sites(store, ADMINS, clock)
    text = (ROOT / "config" / "lausd-sites.csv").read_text(encoding="utf-8")
    await found.import_file(ADMIN, read_sites_csv(text, ("en", "es"), "en"))
    return found


async def reached(
    store: Store, admin: Admin, audience: Audience, urgency: Urgency = Urgency.ROUTINE
) -> set[str]:
    """The channels (platform:channel) a post for `audience` is queued for."""
    update = await admin.post(
        ADMIN, Draft(Status.STRIKE_ON, {"en": UpdateText("News")}, urgency, audience=audience)
    )
    async with store.read() as tx:
        rows = await tx.list_deliveries(update_id=update.id, limit=None)
        subs = await tx.subscriptions_by_id(d.subscription_id for d in rows)
    assert all(d.action is DeliveryAction.POST for d in rows)
    return {f"{s.platform}:{s.channel}" for s in subs}


async def test_a_channel_follows_sites_and_groups_by_typed_chat(
    store: Store, sites: Sites, admin: Admin, clock: FixedClock
) -> None:
    commands = Commands(store, CAMPAIGN, admin, clock)
    for channel, typed in (
        ("C-ROOSEVELT", "subscribe sites=Roosevelt"),
        ("C-EAST", "subscribe grupos=east"),  # the option's Spanish name
        ("C-ALL", "subscribe"),
        ("C-WEST", "subscribe groups=west"),
    ):
        reply = await commands.handle(CommandContext("discord", ADMIN, "G1", channel), typed)
        assert reply.ok, reply.message.body
    card = await commands.handle(
        CommandContext("discord", ADMIN, "G1", "C-ROOSEVELT"), "subscribe quiet=22:00-06:00"
    )
    follows = {f.name: f.value for f in card.message.fields}["Follows"]
    assert follows == "Roosevelt High School"  # changing another setting keeps what it follows
    assert await reached(store, admin, Audience.of(["roosevelt"])) == {
        "discord:C-ROOSEVELT",
        "discord:C-EAST",
        "discord:C-ALL",
    }
    wrong = await commands.handle(
        CommandContext("discord", ADMIN, "G1", "C-X"), "subscribe sites=x1"
    )
    assert not wrong.ok and "There is no site 'x1'" in wrong.message.body
    again = await commands.handle(
        CommandContext("discord", ADMIN, "G1", "C-WEST", locale="es-ES"), "subscribe sites=todo"
    )
    assert {f.name: f.value for f in again.message.fields}["Sigue"].startswith("Todo")
    assert "discord:C-WEST" in await reached(store, admin, Audience.of(["roosevelt"]))


def test_follows_are_read_as_typed() -> None:
    assert parse_follows("roosevelt, Grant", None) == Audience(("grant", "roosevelt"), ())
    assert parse_follows("all", "east") == EVERYONE
    assert parse_follows(None, "east") == Audience((), ("east",))


async def test_texting_join_and_a_site_code_follows_it(
    store: Store, sites: Sites, admin: Admin, clock: FixedClock
) -> None:
    words = Keywords(CAMPAIGN.languages, CAMPAIGN.default_language)
    heard = words.read("JOIN Roosevelt")
    assert (heard.kind, heard.argument) == (Kind.JOIN, "roosevelt")
    assert words.read("unirse distrito_este").argument == "distrito_este"
    people = SignUps(store, CAMPAIGN, clock)
    people.offer(Offer(Contact.PHONE, "sms"))
    joined = await people.join(
        Contact.PHONE, PHONE, language="en", via="text JOIN", follow=heard.argument
    )
    assert joined is Outcome.JOINED
    person = await people.find(PHONE, Contact.PHONE)
    assert person is not None and person.subscription_id is not None
    async with store.read() as tx:
        sub = await tx.get_subscription(person.subscription_id)
    assert sub is not None and sub.follows == Audience.of(["roosevelt"])
    # A second school is added, an unknown code changes nothing.
    assert (
        await people.join(Contact.PHONE, PHONE, language="en", via="text JOIN", follow="grant")
        is Outcome.ALREADY
    )
    await people.join(Contact.PHONE, PHONE, language="en", via="text JOIN", follow="nowhere")
    async with store.read() as tx:
        sub = await tx.get_subscription(person.subscription_id)
    assert sub is not None and sub.follows == Audience.of(["grant", "roosevelt"])
    phone = f"sms:{person.key}"
    urgent = Urgency.URGENT  # what JOIN alone signs up for
    assert phone in await reached(store, admin, Audience.of(["grant"]), urgent)
    assert phone not in await reached(store, admin, Audience.of(["venice"]), urgent)
    assert phone in await reached(store, admin, EVERYONE, urgent)


def test_the_command_line_sets_what_a_channel_follows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bot.cli import main

    url = f"sqlite+aiosqlite:///{tmp_path / 'cli.db'}"
    base = ["--config", str(ROOT / "config" / "strike.toml"), "--database-url", url]
    add = [*base, "subscriptions", "add", "console:local/roosevelt"]
    assert main([*add, "--sites", "roosevelt", "--groups", "west", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["follows"] == {"sites": ["roosevelt"], "groups": ["west"]}
    assert main([*add, "--label", "Roosevelt parents", "--json"]) == 0  # kept
    assert json.loads(capsys.readouterr().out)["follows"]["sites"] == ["roosevelt"]
    assert main([*add, "--sites", "lincoln"]) != 0
    assert "There is no site 'lincoln'" in capsys.readouterr().err
    assert main([*add, "--sites", "all", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["follows"] == {"sites": [], "groups": []}


async def test_a_text_join_roosevelt_through_twilio_gets_roosevelts_news_only(
    sqlite_store: Store, clock: FixedClock
) -> None:
    from tests.fakes.twilio import FakeTwilio
    from tests.family_support import families

    text = (ROOT / "config" / "lausd-sites.csv").read_text(encoding="utf-8")
    await Sites(sqlite_store, ADMINS, clock).import_file(
        ADMIN, read_sites_csv(text, ("en", "es"), "en")
    )
    async with (
        FakeTwilio() as twilio,
        families(sqlite_store, clock, twilio=twilio, sms={"sender_name": "UTLA"}) as f,
    ):
        status, reply = await f.text_in(PHONE, "JOIN ROOSEVELT", "SM-join-roosevelt")
        assert status == 200 and "<Message>" in reply
        for audience, headline in (
            (Audience.of(["venice"]), "Venice: rally at noon"),
            (Audience.of(["roosevelt"]), "Roosevelt: breakfast at 7"),
        ):
            await f.admin.post(
                ADMIN,
                Draft(
                    Status.STRIKE_ON,
                    {"en": UpdateText(headline)},
                    Urgency.URGENT,
                    audience=audience,
                ),
            )
        await f.drain()
        bodies = [t.body for t in twilio.to(PHONE)]
        assert any("Roosevelt: breakfast at 7" in b for b in bodies)
        assert not any("Venice" in b for b in bodies)


async def test_a_person_who_leaves_leaves_no_trace_of_the_school_they_followed(
    store: Store, sites: Sites, clock: FixedClock
) -> None:
    from sqlalchemy import select

    from bot.store import schema as t

    people = SignUps(store, CAMPAIGN, clock)
    people.offer(Offer(Contact.PHONE, "sms"))
    await people.join(Contact.PHONE, PHONE, language="en", via="text JOIN", follow="roosevelt")
    person = await people.find(PHONE, Contact.PHONE)
    assert person is not None and person.subscription_id is not None
    assert await people.unsubscribe_address(Contact.PHONE, PHONE, via="text STOP")
    await people.scrubbed()  # the deleted number cleared from the files, as a command waits
    async with store.read() as tx:
        sub = await tx.get_subscription(person.subscription_id)
        rows = (await tx.conn.execute(select(t.subscription_follows))).all()
    assert sub is not None and sub.follows == EVERYONE and rows == []


async def test_a_sign_up_by_e_mail_follows_the_school_named_once_confirmed(
    store: Store, sites: Sites, admin: Admin, clock: FixedClock
) -> None:
    import re

    people = SignUps(store, CAMPAIGN, clock)
    people.offer(Offer(Contact.EMAIL, "email"))
    await people.request(
        Contact.EMAIL, "rosa@example.org", client="c", via="web", site="Preparatoria Roosevelt"
    )
    async with store.read() as tx:
        rows = await tx.list_deliveries(limit=None)
    found = re.search(r"/subscribe/confirm/([\w-]+)", str(rows[-1].payload))
    assert found is not None
    await people.confirm(found.group(1))
    person = await people.find("rosa@example.org", Contact.EMAIL)
    assert person is not None and person.subscription_id is not None
    async with store.read() as tx:
        sub = await tx.get_subscription(person.subscription_id)
    assert sub is not None and sub.follows == Audience.of(["roosevelt"])  # by its Spanish name
    # A phone: the code the form gave carries the school to its JOIN.
    people.offer(Offer(Contact.PHONE, "sms"))
    code = await people.join_code(language="es", choice="all", client="c", site="east")
    await people.join(Contact.PHONE, PHONE, language="en", via="text JOIN", code=code)
    phone = await people.find(PHONE, Contact.PHONE)
    assert phone is not None and phone.subscription_id is not None
    async with store.read() as tx:
        texted = await tx.get_subscription(phone.subscription_id)
    assert texted is not None and texted.follows == Audience.of([], ["east"])


async def test_the_sign_up_page_offers_the_schools_and_follows_the_one_chosen(
    sqlite_store: Store, clock: FixedClock, tmp_path: Path
) -> None:
    from tests.axe import axe_source, chromium_page, violations
    from tests.fakes.smtp import FakeSmtp
    from tests.family_support import confirm_path, families
    from tests.support import chromium_path

    text = (ROOT / "config" / "lausd-sites.csv").read_text(encoding="utf-8")
    await Sites(sqlite_store, ADMINS, clock).import_file(
        ADMIN, read_sites_csv(text, ("en", "es"), "en")
    )
    async with FakeSmtp() as smtp, families(sqlite_store, clock, smtp=smtp) as f:
        page = await (await f.client.get("/es/subscribe")).text()
        assert '<label for="site">Tu escuela o centro (opcional)</label>' in page
        assert '<option value="Preparatoria Roosevelt">' in page
        data = {"email": "rosa@example.org", "site": "Preparatoria Roosevelt"}
        answer = await f.sign_up(path="/es/subscribe", data=data)
        assert answer.status == 200
        await f.drain()
        await f.confirm(confirm_path(smtp.messages[0]))
        person = await f.signups.find("rosa@example.org", Contact.EMAIL)
        assert person is not None and person.subscription_id is not None
        async with sqlite_store.read() as tx:
            sub = await tx.get_subscription(person.subscription_id)
        assert sub is not None and sub.follows == Audience.of(["roosevelt"])
        # axe-core finds nothing wrong with the form and its school field.
        chromium_path()
        axe_source()
        async with chromium_page(tmp_path) as browser:
            found = []
            for width, height in ((1280, 900), (320, 640)):
                url = str(f.client.make_url("/es/subscribe"))
                found += [v["id"] for v in await violations(browser, url, width, height)]
        assert found == []
        # And the Nu HTML Checker finds no error in it.
        from tests.vnu import check, java_path, vnu_jar

        java_path()
        vnu_jar()
        file = tmp_path / "subscribe.html"
        file.write_text(page, encoding="utf-8")
        assert check([file]) == []
