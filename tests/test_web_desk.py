"""The web desk's core, on SQLite and PostgreSQL: one message to an address that never signed
up (`SignUps.tell`), signing in (`bot.people.sign_in`: links once, digests only, idle and
absolute ends, signing out everywhere), how far an update has gone (`bot.delivery.progress`),
and each surface's rendering of an update (`Plugin.preview`), declared by every plugin."""

from __future__ import annotations

import re
from datetime import timedelta

from sqlalchemy import select

from bot.clock import FixedClock
from bot.delivery.progress import progress
from bot.editorial.admin import Admin, Draft
from bot.editorial.reach import reach
from bot.messages.compose import update_message
from bot.models import Actor, Contact, DeliveryAction, Status, Subscription, UpdateText
from bot.people.sign_in import SignIn, SignInLimits, digest, forget_old_access
from bot.people.signups import Offer, SignUps
from bot.plugins import installed_plugins
from bot.plugins.admins import CLI_ACTOR
from bot.plugins.outbound import MessageKind, OutboundMessage
from bot.store import Store
from bot.store import schema as t
from bot.store.sessions import DeskSession
from tests.support import ADMINS, CAMPAIGN, campaign_config

LEAD = "lead@utla.example.org"
SURFACES = {"discord", "slack", "telegram", "email", "sms", "whatsapp", "web"}


def people(store: Store, clock: FixedClock) -> SignUps:
    signups = SignUps(store, CAMPAIGN, clock)
    signups.offer(Offer(Contact.EMAIL, "email"))
    return signups


def mail(token: str) -> OutboundMessage:
    return OutboundMessage(title="Sign in", body=f"https://desk/{token}", language="en")


def everyone(actor: Actor) -> bool:
    return True


class Mails:
    """The sign-in e-mails the door asks for, keeping each link's token."""

    def __init__(self) -> None:
        self.tokens: list[str] = []

    def __call__(self, token: str) -> OutboundMessage:
        self.tokens.append(token)
        return mail(token)


async def test_telling_an_address_sends_once_and_is_no_sign_up(
    store: Store, clock: FixedClock
) -> None:
    signups = people(store, clock)
    for _ in range(2):  # the same key: one message
        await signups.tell(Contact.EMAIL, LEAD, mail("x"), key="k1", keep=timedelta(hours=1))
    async with store.read() as tx:
        rows = await tx.list_deliveries(limit=None)
    assert [(d.action, d.platform) for d in rows] == [(DeliveryAction.CONFIRM, "email")]
    payload = rows[0].payload or {}
    sent = OutboundMessage.from_json(payload["message"])  # type: ignore[arg-type]
    assert sent.kind is MessageKind.CONFIRM  # how a message reaches someone not subscribed
    assert (await signups.stats())["people"] == {}  # not counted as a sign-up
    told = await signups.find(LEAD)
    assert told is not None  # the e-mail plugin finds the address behind the channel
    assert (await signups.recipient(told.key, sent)).address == LEAD
    clock.advance(hours=2)
    await signups.stats()  # purges what lapsed
    assert await signups.find(LEAD) is None  # forgotten once its time is up


async def test_an_address_that_was_told_something_can_still_sign_up(
    store: Store, clock: FixedClock
) -> None:
    signups = people(store, clock)
    await signups.tell(Contact.EMAIL, LEAD, mail("x"), key="k1")
    await signups.request(Contact.EMAIL, LEAD, language="en", choice="all", client="c", via="t")
    assert (await signups.stats())["people"]["email"]["pending"] == 1


async def test_a_link_signs_in_once_and_only_its_digest_is_kept(
    store: Store, clock: FixedClock
) -> None:
    door = SignIn(store, people(store, clock), clock, platform="web")
    sent = Mails()
    await door.ask(LEAD.upper(), allowed=everyone, client="c", message=sent)
    (token,) = sent.tokens
    opened = await door.enter(token, allowed=everyone)
    assert opened is not None and opened.session.person == LEAD
    assert await door.enter(token, allowed=everyone) is None  # once
    async with store.read() as tx:
        links = (await tx.conn.execute(select(t.desk_links))).all()
        sessions = (await tx.conn.execute(select(t.desk_sessions))).all()
    assert [r.digest for r in links] == [digest(token)]
    assert [r.digest for r in sessions] == [digest(opened.token)]
    assert token not in str(links) and opened.token not in str(sessions)
    session = await door.who(opened.token)
    assert isinstance(session, DeskSession) and session.person == LEAD
    audit = await _audit(store)
    assert ("desk.link", f"web:{LEAD}") in audit and ("desk.sign_in", f"web:{LEAD}") in audit


async def test_a_link_lapses_and_a_person_no_longer_allowed_cannot_use_one(
    store: Store, clock: FixedClock
) -> None:
    door = SignIn(store, people(store, clock), clock, platform="web")
    sent = Mails()
    await door.ask(LEAD, allowed=everyone, client="c", message=sent)
    await door.ask(LEAD, allowed=everyone, client="c", message=sent)
    await door.ask(LEAD, allowed=lambda actor: False, client="c", message=sent)
    assert len(sent.tokens) == 2  # nothing for someone the rule refuses
    assert await door.enter(sent.tokens[0], allowed=lambda actor: False) is None
    clock.advance(minutes=16)
    assert await door.enter(sent.tokens[1], allowed=everyone) is None


async def test_sessions_end_when_idle_at_their_end_and_everywhere(
    store: Store, clock: FixedClock
) -> None:
    limits = SignInLimits()
    door = SignIn(store, people(store, clock), clock, platform="web", limits=limits)

    async def session() -> str:
        sent = Mails()
        await door.ask(LEAD, allowed=everyone, client="c", message=sent)
        opened = await door.enter(sent.tokens[-1], allowed=everyone)
        assert opened is not None
        return opened.token

    phone = await session()
    for _ in range(13):  # used every 59 minutes: alive until its twelve hours are up
        clock.advance(minutes=59)
        alive = await door.who(phone)
    assert alive is None
    polled = await session()
    clock.advance(minutes=40)
    assert await door.who(polled, touch=False) is not None  # a page polling is not a use
    clock.advance(minutes=21)
    assert await door.who(polled) is None
    laptop, tablet = await session(), await session()
    assert await door.leave_everywhere(LEAD) == 2
    assert await door.who(laptop) is None and await door.who(tablet) is None
    clock.advance(days=2)
    await forget_old_access(store, clock(), limits)
    async with store.read() as tx:
        assert (await tx.conn.execute(select(t.desk_links))).all() == []


async def test_progress_counts_per_platform_and_names_no_person(
    store: Store, clock: FixedClock
) -> None:
    admin = Admin(store, CAMPAIGN, ADMINS, clock)
    channel = Subscription(0, "console", "local", "general", "en", label="#general")
    await admin.subscribe(CLI_ACTOR, channel)
    signups = people(store, clock)
    await signups.request(Contact.EMAIL, "maria@example.com", language="es", choice="all",
                          client="c", via="t")  # fmt: skip
    await signups.confirm(await _confirm_token(store, signups))
    posted = await admin.post(CLI_ACTOR, Draft(Status.STRIKE_ON, {"en": UpdateText("On")}))
    async with store.write() as tx:
        for d in await tx.list_deliveries(update_id=posted.id, limit=None):
            if d.platform == "email":
                await tx.conn.execute(
                    t.deliveries.update()
                    .where(t.deliveries.c.id == d.id)
                    .values(state="dead", last_error="the mail server answered 550")
                )
    shown = await progress(store, posted.id, installed_plugins())
    assert {(r.platform, r.action, r.waiting, r.failed) for r in shown.rows} == {
        ("console", DeliveryAction.POST, 1, 0),
        ("email", DeliveryAction.POST, 0, 1),
    }
    (failure,) = shown.failures
    assert failure.where == "" and failure.reason == "the mail server answered 550"
    assert shown.failed == 1 and shown.waiting == 1


async def test_every_surface_previews_an_update_with_its_notes(
    store: Store, clock: FixedClock
) -> None:
    plugins = installed_plugins()
    assert {name for name, p in plugins.items() if p.preview is not None} >= SURFACES
    admin = Admin(store, CAMPAIGN, ADMINS, clock)
    update = await admin.post(
        CLI_ACTOR,
        Draft(Status.STRIKE_ON, {"en": UpdateText("The strike is on", "Pickets *6:30*.", "Rally")}),
    )
    message = update_message(update, "es", CAMPAIGN)
    config = campaign_config(sms={"segment_price": 0.0083})
    for name in sorted(SURFACES):
        preview = plugins[name].preview
        assert preview is not None
        shown = preview(message, CAMPAIGN, config.plugin_config(name).section, "es")
        assert shown.title and shown.notes, name
        text = " ".join((shown.title, *shown.lines))
        assert "The strike is on" in text and "Rally" in text, (name, text)
        assert "\\*" not in text and "](" not in text, (name, text)  # no markup left in
    sms = plugins["sms"].preview
    assert sms is not None
    notes = sms(message, CAMPAIGN, config.plugin_config("sms").section, "es").notes
    assert notes[0] == "2 segmentos (UCS-2, 129 caracteres) por mensaje"  # with "(en inglés)" twice
    assert notes[1] == "Unos 0,02\xa0US$ por mensaje"  # 2 x $0.0083, in CLDR's Spanish
    found = await reach(store, CAMPAIGN, update, plugins=plugins)
    assert found.platforms == {}


async def _confirm_token(store: Store, signups: SignUps) -> str:
    async with store.read() as tx:
        (row,) = [
            d for d in await tx.list_deliveries(limit=None) if d.action is DeliveryAction.CONFIRM
        ]
    found = re.search(r"/subscribe/confirm/([\w-]+)", str(row.payload))
    assert found is not None
    return found.group(1)


async def _audit(store: Store) -> set[tuple[str, str]]:
    async with store.read() as tx:
        return {(e.action, e.actor) for e in await tx.list_audit(limit=100)}
