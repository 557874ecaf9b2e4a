"""Sign-ups: families and members who get updates by e-mail or text, on their own say-so.

    signups = SignUps(store, campaign, clock)
    signups.offer(Offer(Contact.EMAIL, platform="email"))        # a plugin, when built
    await signups.request(Contact.EMAIL, "maria@example.com",    # the web form
                          language="es", choice="urgent", client=ip, via="web /es/subscribe")
    await signups.confirm(token)                                 # the button behind the link
    await signups.tell(Contact.EMAIL, "lead@utla.example.org",   # one message, not a sign-up
                       message, key="desk-link:...")             # (a web desk sign-in link)

Every surface (the web form, a text to the number, the command line) goes through this one
use case, so the rules hold everywhere:

- Double opt-in. A sign-up is a `subscribers` row and a subscription that receives nothing
  (inactive) until the person confirms: by the button behind the e-mailed link (a GET shows
  the page; only its POST confirms, so mail scanners that open links confirm nothing), by
  replying YES to the text, or by texting JOIN from the phone itself. Only the confirmation
  (`DeliveryAction.CONFIRM`) reaches an unconfirmed address.
- No text to a number that has not written first. A phone is signed up only by a text
  from it: JOIN (or UNIRSE, START), answered with the confirmation; the web form gives a
  short code to text with it (`join_code`: JOIN 482913), which carries the language and
  the choice made on the form. The number is never typed on the web, so nobody can make the
  union text a stranger, or pay for texts to numbers an attacker picks.
- No enumeration, no bombing. `ask` (the web form) checks the address and the limits, then
  does the rest off the answer's path: the answer is the same, and takes as long, whether
  the address is new, pending, confirmed or over its limit. One confirmation per address
  per 10 minutes and five a day. Limits per client (an IP address), per network (its /24 or
  /48) and across everyone per hour; past the overall one, a network that already signed
  up a few people waits, while one that has not still gets through: a flood degrades for
  the networks it comes from, not for families elsewhere.
- Personal data in one place. The address lives only in its `subscribers` row. Everything
  else (subscriptions, deliveries, audit entries, logs) names the person by `key`, an opaque
  random id that is also their subscription's channel. Unsubscribing deletes the row;
  unconfirmed sign-ups are deleted when their link expires (docs/privacy.md).
- Once confirmed, a person is an ordinary `Subscription`: the dispatcher, pacing, quiet
  hours, urgency filters, briefings and retractions treat them like any channel. Adapters
  find the address at send time with `contactable(key)`.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import secrets
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, time, timedelta
from enum import StrEnum
from typing import Any

from bot import i18n
from bot.audiences.codes import CODE
from bot.clock import Clock, utcnow
from bot.config import StrikeConfig
from bot.errors import (
    InvalidInput,
    NotFound,
    PermanentDeliveryError,
    StoreUnavailable,
    StrikebotError,
)
from bot.i18n.sentences import in_every_language
from bot.messages.compose import page_url
from bot.messages.kinds import briefing_days_choice
from bot.models import (
    ALL_URGENCIES,
    EVERYONE,
    Audience,
    Campaign,
    Contact,
    DeliveryAction,
    QuietHours,
    Site,
    SiteGroup,
    Subscriber,
    Subscription,
    Urgency,
)
from bot.network import network_of
from bot.people.contacts import read_contact, read_email, read_phone
from bot.people.forms import FormTokens
from bot.plugins.outbound import Link, MessageKind, OutboundMessage
from bot.store import NewDelivery, Store, Tx

log = logging.getLogger("strikebot.signups")

ACTOR = "strikebot:signups"
PENDING = "pending"
# An address that was sent one message it did not sign up for (`SignUps.tell`: a web desk
# sign-in link): kept only as long as that message needs, never counted as a sign-up.
DIRECT = "direct"
WORKSPACE = "people"  # the workspace of every person's subscription: `email:people/<key>`
TOKEN_BYTES = 24  # 32 URL-safe characters
VIA_MAX = 64
FOLLOW_MAX = 200  # a site's code or name, as typed on the sign-up form
FOLLOW_FORM_MOST = 50  # schools one form may name
PREFERENCES_PATH = "/p/{token}"  # a person's preferences page, under each language's prefix
CODE_KIND = "signup_code"  # a JOIN code from the web form, kept as a draft
CODE_DIGITS = 6


class Choice(StrEnum):
    """What a person asked to receive."""

    URGENT = "urgent"  # urgent updates only
    ALL = "all"  # every update
    BRIEFING = "briefing"  # the morning briefing on the campaign's days, plus urgent updates


class Outcome(StrEnum):
    """What a text to the number did; the SMS plugin words the reply."""

    JOINED = "joined"
    ALREADY = "already"
    CONFIRMED = "confirmed"
    NOTHING_PENDING = "nothing_pending"
    UNSUBSCRIBED = "unsubscribed"
    NOT_SUBSCRIBED = "not_subscribed"


@dataclass(frozen=True, slots=True)
class Offer:
    """A way to reach people that an installed, switched-on plugin offers: registered by the
    plugin when it is built. `quiet_hours` (campaign time) apply to everyone it reaches
    except for urgent updates and the briefing they chose; `countries` limit phone numbers
    (the first is assumed)."""

    contact: Contact
    platform: str
    quiet_hours: QuietHours | None = None
    countries: tuple[str, ...] = ("US",)
    sender_name: str = ""  # how its messages say who sends them ("UTLA")
    # Whether the page's sign-up form asks for this address (e-mail, a mobile number). A
    # WhatsApp number signs up by writing first; a browser by its "Notify me" button.
    by_form: bool = True
    # For the page, per language: a link that starts the sign-up elsewhere (WhatsApp's
    # click-to-chat, https://wa.me/<number>?text=UNIRSE) and what it says.
    invites: Mapping[str, Link] = field(default_factory=dict)
    # For the page's "Notify me" button: the push service's application server key (the
    # VAPID public key, RFC 8292) and where the browser posts its subscription.
    key: str = ""
    path: str = ""
    number: str = ""  # where people text to sign up, as they would dial it ("+1 213-555-0100")


@dataclass(frozen=True, slots=True)
class SignupLimits:
    """How many sign-ups, from whom, per hour (see the module's docstring)."""

    address_every: timedelta = timedelta(minutes=10)
    address_per_day: int = 5
    client_per_hour: int = 20
    network_per_hour: int = 60  # one /24 or /48
    total_per_hour: int = 1000  # past this, the busy rule below applies
    busy_network_per_hour: int = 3  # while busy: a network that asked this many waits
    hard_total_per_hour: int = 5000  # never more confirmations an hour than this
    confirm_within: timedelta = timedelta(hours=48)
    code_within: timedelta = timedelta(hours=24)  # a JOIN code from the web form
    broken_kept: timedelta = timedelta(days=30)
    queued_at_most: int = 2000  # sign-ups waiting to be written (off the answer's path)


@dataclass(frozen=True, slots=True)
class Contactable:
    """What an adapter needs at send time to reach one person."""

    key: str
    kind: Contact
    address: str = field(repr=False)
    language: str
    manage_token: str = field(repr=False)
    confirmed: bool
    preferences: str = field(default="", repr=False)  # their preferences link's token
    keys: Mapping[str, str] = field(default_factory=dict, repr=False)  # a browser's (push)
    heard_at: datetime | None = None  # when they last wrote (WhatsApp's window)


@dataclass(frozen=True, slots=True)
class Pending:
    """What a confirmation link confirms (shown on the page behind the link)."""

    contact: Contact
    language: str
    choice: Choice
    key: str = ""  # the person's opaque key, for their preferences link once confirmed


@dataclass(frozen=True, slots=True)
class _Asked:
    """A sign-up checked and counted, waiting to be written."""

    offer: Offer
    address: str = field(repr=False)
    language: str
    choice: Choice
    via: str
    follow: tuple[str, ...] = ()  # sites' or groups' codes or names, followed once confirmed


class TooManySignups(StrikebotError):
    """The per-client or overall cap on sign-ups was reached: try again later."""

    exit_code = 5


_WORDS = i18n.Words("signups")


def words(language: str, key: str, **values: object) -> str:
    """Sentence `key` of the sign-ups' table, whole in one language (`bot.i18n.say`)."""
    return _WORDS.say(language, key, **values)


def _both(key: str, **values: object) -> tuple[str, dict[str, str]]:
    source = i18n.source_language()
    others = {lang: words(lang, key, **values) for lang in i18n.languages() if lang != source}
    return words(source, key, **values), others


def choice_text(choice: Choice | str, language: str, campaign: Campaign | None = None) -> str:
    """ "urgent news", "todas las actualizaciones", "a morning summary on school days, plus
    urgent news" (the briefing's days are the campaign's: `bot.messages.kinds`)."""
    return choice_term(choice, campaign).render(i18n.pick(language))


def choice_term(choice: Choice | str, campaign: Campaign | None = None) -> i18n.Term:
    """What a person chose, as a piece of another sentence: said in that sentence's
    language (a half-translated catalogue never mixes two in one sentence)."""
    chosen = Choice(choice)
    if chosen is not Choice.BRIEFING or campaign is None:
        return _WORDS.term(str(chosen))
    context = briefing_days_choice(campaign)
    days = sorted(campaign.briefing_days)
    names = i18n.local(lambda lang: i18n.format_list([i18n.day_names(lang)[d] for d in days], lang))
    return i18n.phrase(context, days=names)


def parse_choice(value: object) -> Choice:
    text = str(value or "").strip().lower()
    try:
        return Choice(text or Choice.URGENT)
    except ValueError:
        options = ", ".join(c.value for c in Choice)
        raise in_every_language(
            InvalidInput, lambda lang: words(lang, "choose", options=options)
        ) from None


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class _Window:
    """How many events fell in the last `span` (sliding), per key, in memory."""

    def __init__(self, span: timedelta) -> None:
        self.span = span
        self._events: dict[str, deque[datetime]] = {}

    def count(self, key: str, now: datetime) -> int:
        events = self._events.get(key)
        if events is None:
            return 0
        while events and events[0] <= now - self.span:
            events.popleft()
        if not events:
            del self._events[key]
            return 0
        return len(events)

    def add(self, key: str, now: datetime) -> None:
        self._events.setdefault(key, deque()).append(now)
        if len(self._events) > 50_000:  # a flood of distinct clients: forget the oldest
            for stale in list(self._events)[:10_000]:
                del self._events[stale]


class SignUps:
    """The sign-up use cases. One instance per process, shared by every plugin (through
    `PluginContext.signups`); plugins that reach people register their `Offer`."""

    def __init__(
        self,
        store: Store,
        campaign: Campaign,
        clock: Clock = utcnow,
        *,
        briefing_time: time = time(7, 0),
        limits: SignupLimits | None = None,
    ) -> None:
        self.store = store
        self.campaign = campaign
        self.clock = clock
        self.briefing_time = briefing_time
        self.limits = limits or SignupLimits()
        self.offers: dict[Contact, Offer] = {}
        self.forms = FormTokens(store, clock)
        self._clients = _Window(timedelta(hours=1))
        self._networks = _Window(timedelta(hours=1))
        self._everyone = _Window(timedelta(hours=1))
        self._asked: asyncio.Queue[_Asked] = asyncio.Queue(self.limits.queued_at_most)
        self._worker: asyncio.Task[None] | None = None
        self._lookups: dict[str, asyncio.Future[Subscriber | None]] = {}
        self._scrubbing: asyncio.Task[None] | None = None
        self._scrub_again = False
        self._lookup_task: asyncio.Task[None] | None = None

    # -- what is on offer --------------------------------------------------------

    def offer(self, offer: Offer) -> None:
        self.offers[offer.contact] = offer

    @property
    def offered(self) -> list[Contact]:
        """The addresses the page's sign-up form asks for (`Offer.by_form`)."""
        return [c for c in Contact if c in self.offers and self.offers[c].by_form]

    def _offer(self, contact: Contact | str) -> Offer:
        try:
            return self.offers[Contact(contact)]
        except (ValueError, KeyError):
            what = str(contact) if str(contact) in ("email", "phone") else "email"
            raise in_every_language(
                InvalidInput, lambda lang: words(lang, "not_offered", what=_WORDS.term(what))
            ) from None

    def read(self, contact: Contact | str, address: object) -> str:
        """The normalised address, or `InvalidInput` in en and es."""
        offer = self._offer(contact)
        return read_contact(offer.contact, address, offer.countries)

    # -- signing up ----------------------------------------------------------------

    async def request(
        self,
        contact: Contact | str,
        address: object,
        *,
        language: object = None,
        choice: object = None,
        client: str,
        via: str,
        site: object = None,
    ) -> None:
        """Ask `address` to confirm. Returns nothing either way: the caller answers the same
        "check your inbox / phone" whether the address was new, known or rate-limited.
        Raises `InvalidInput` (a malformed address or choice) or `TooManySignups`.
        E-mail only: a phone signs up by texting (`join_code`, `join`). `site`: a site's
        (or group's) code or name, followed once the address is confirmed."""
        asked = self._read_ask(contact, address, language, choice, via, site)
        self._charge(client, self.clock())
        await self._write(asked)

    def ask(
        self,
        contact: Contact | str,
        address: object,
        *,
        language: object = None,
        choice: object = None,
        client: str,
        via: str,
        site: object = None,
    ) -> None:
        """`request` for the web form: the address, the choice and the limits are checked
        now (raising as `request` does); the store and the confirmation are done after the
        answer, in the order asked (`settled` waits for them). So the answer is the same,
        and as quick, whatever the address's state."""
        asked = self._read_ask(contact, address, language, choice, via, site)
        now = self.clock()
        self._charge(client, now)
        try:
            self._asked.put_nowait(asked)
        except asyncio.QueueFull:
            message, translations = _both("too_many_total")
            raise TooManySignups(message, translations=translations) from None
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._work(), name="sign-ups")

    async def settled(self) -> None:
        """Wait until every sign-up asked so far is written (tests; before shutting down)."""
        await self._asked.join()

    async def _work(self) -> None:
        """Write what was asked, in order, until nothing waits (`ask` starts it again)."""
        while not self._asked.empty():
            asked = self._asked.get_nowait()
            try:
                await self._write(asked)
            except Exception as exc:  # one bad write must not stop the others
                log.warning(
                    "a sign-up could not be written (%s: %s); the person may sign up again",
                    type(exc).__name__,
                    exc,
                )
            finally:
                self._asked.task_done()

    def _read_ask(
        self,
        contact: Contact | str,
        address: object,
        language: object,
        choice: object,
        via: str,
        site: object = None,
    ) -> _Asked:
        offer = self._offer(contact)
        if offer.contact is Contact.PHONE:
            raise in_every_language(InvalidInput, lambda lang: words(lang, "text_first"))
        normalized = read_contact(offer.contact, address, offer.countries)
        follow = named(site)
        return _Asked(
            offer, normalized, self.language_of(language), parse_choice(choice), via, follow
        )

    async def _write(self, asked: _Asked) -> None:
        now = self.clock()
        offer, normalized, lang, wanted, via = (
            asked.offer, asked.address, asked.language, asked.choice, asked.via
        )  # fmt: skip
        async with self.store.write() as tx:
            purged = await self._purge(tx, now)
            person = await tx.find_subscriber(offer.contact, normalized)
            if person is None:
                person = await self._create(tx, offer, normalized, lang, wanted, via, now)
            elif not self._may_confirm(person, now):
                person = None  # the same answer: nothing is sent, nothing is said
            if person is not None:
                await self._send_confirmation(
                    tx, offer, person, lang, wanted, via, now, follow=asked.follow
                )
        if purged:  # off the answer's path already (`ask`), or a caller that waits
            self.scrub_soon()
            await self.scrubbed()

    def _charge(self, client: str, now: datetime) -> None:
        """Count a sign-up from `client` (an IP address), or raise `TooManySignups` when its
        address, its network or everyone is over the hour's limit. While everyone is over
        `total_per_hour`, only networks that have asked fewer than `busy_network_per_hour`
        get through: the flood's own networks wait, a family elsewhere does not."""
        limits = self.limits
        key = digest(client)[:24]
        network = digest(network_of(client))[:24]
        total = self._everyone.count("*", now)
        from_network = self._networks.count(network, now)
        if total >= limits.hard_total_per_hour or (
            total >= limits.total_per_hour and from_network >= limits.busy_network_per_hour
        ):
            message, translations = _both("too_many_total")
            raise TooManySignups(message, translations=translations)
        if (
            self._clients.count(key, now) >= limits.client_per_hour
            or from_network >= limits.network_per_hour
        ):
            message, translations = _both("too_many_client")
            raise TooManySignups(message, translations=translations)
        self._clients.add(key, now)
        self._networks.add(network, now)
        self._everyone.add("*", now)

    async def join_code(
        self, *, language: object, choice: object, client: str, site: object = None
    ) -> str:
        """A short code for the web form's "get texts": texted with JOIN from the phone, it
        signs that phone up with the language and choice made here (`join`). Counts as a
        sign-up for the limits; nothing is sent to anyone."""
        lang = self.language_of(language)
        wanted = parse_choice(choice)
        now = self.clock()
        self._charge(client, now)
        until = (now + self.limits.code_within).isoformat()
        payload: dict[str, object] = {"language": lang, "choice": str(wanted), "until": until}
        follow = named(site)
        if follow:
            payload["follow"] = list(follow)  # followed once the phone texts the code
        async with self.store.write() as tx:
            for _ in range(10):
                code = f"{secrets.randbelow(10**CODE_DIGITS):0{CODE_DIGITS}d}"
                if await tx.claim_draft(CODE_KIND, code, payload, now):
                    return code
        raise StoreUnavailable("no free sign-up code; try again")  # 10 collisions in a row

    def _may_confirm(self, person: Subscriber, now: datetime) -> bool:
        """At most one confirmation per address per 10 minutes, and five a day."""
        last = person.last_confirmation_at
        if last is not None and now - last < self.limits.address_every:
            return False
        since = person.confirmations_since
        fresh_day = since is None or now - since >= timedelta(days=1)
        return fresh_day or person.confirmations_today < self.limits.address_per_day

    async def _create(
        self,
        tx: Tx,
        offer: Offer,
        address: str,
        language: str,
        choice: Choice,
        via: str,
        now: datetime,
        *,
        state: str = PENDING,
    ) -> Subscriber:
        key = "p" + secrets.token_hex(8)
        sub_id = await tx.insert_quiet_subscription(
            Subscription(
                id=0,
                platform=offer.platform,
                workspace=WORKSPACE,
                channel=key,
                language=language,
                urgencies=frozenset(),
                timezone=self.campaign.timezone,
            ),
            now,
        )
        subscriber_id = await tx.insert_subscriber(
            {
                "key": key,
                "kind": str(offer.contact),
                "address": address,
                "language": language,
                "choice": str(choice),
                "state": state,
                "subscription_id": sub_id,
                "manage_token": secrets.token_urlsafe(TOKEN_BYTES),
                "signed_up_at": now,
                "signed_up_via": via[:VIA_MAX],
                "confirmations_today": 0,
            }
        )
        await tx.audit(
            now,
            ACTOR,
            "subscriber.signup" if state == PENDING else "subscriber.told",
            f"subscriber:{key}",
            None,
            {"kind": str(offer.contact), "language": language, "choice": str(choice), "via": via},
        )
        person = await tx.subscriber_by_key(key)
        assert person is not None and person.id == subscriber_id
        return person

    async def _send_confirmation(
        self,
        tx: Tx,
        offer: Offer,
        person: Subscriber,
        language: str,
        choice: Choice,
        via: str,
        now: datetime,
        *,
        follow: tuple[str, ...] = (),
    ) -> None:
        """A fresh token, the choices it confirms (and the site to follow), and the
        confirmation in the outbox."""
        token = secrets.token_urlsafe(TOKEN_BYTES)
        fresh_day = (
            person.confirmations_since is None
            or now - person.confirmations_since >= timedelta(days=1)
        )
        values: dict[str, Any] = {
            "confirm_digest": digest(token),
            "confirm_expires": now + self.limits.confirm_within,
            "requested": {"language": language, "choice": str(choice), "via": via[:VIA_MAX]}
            | ({"follow": list(follow)} if follow else {}),
            "last_confirmation_at": now,
            "confirmations_today": 1 if fresh_day else person.confirmations_today + 1,
            "confirmations_since": now if fresh_day else person.confirmations_since,
            # A new sign-up is a new try: an address that bounced before may work now.
            "broken_reason": None,
            "broken_at": None,
        }
        if not person.confirmed:
            values |= {"language": language, "choice": str(choice), "state": PENDING}
        await tx.set_subscriber(person.id, values)
        if person.subscription_id is not None and person.broken_reason is not None:
            await tx.mark_subscription_broken(person.subscription_id, None)
        message = self.confirmation_message(offer.contact, token, language, choice)
        assert person.subscription_id is not None
        await tx.enqueue(
            [
                NewDelivery(
                    dedupe_key=f"confirm:{person.key}:{digest(token)[:16]}",
                    subscription_id=person.subscription_id,
                    platform=offer.platform,
                    action=DeliveryAction.CONFIRM,
                    not_before=now,
                    payload={"message": message.to_json()},
                )
            ],
            now,
        )

    def confirm_url(self, token: str, language: str) -> str:
        return page_url(self.campaign, language, f"/subscribe/confirm/{token}")

    def preferences_url(self, token: str, language: str) -> str:
        """The address of a person's preferences page (`Contactable.preferences`, the token;
        `bot.people.preferences`), in `language`."""
        return page_url(self.campaign, language, PREFERENCES_PATH.format(token=token))

    def confirmation_message(
        self, contact: Contact, token: str, language: str, choice: Choice
    ) -> OutboundMessage:
        lang = i18n.pick(language)
        union = self.campaign.union
        what = choice_term(choice, self.campaign)
        if contact is Contact.PHONE:
            offer = self.offers.get(contact)
            who = offer.sender_name if offer and offer.sender_name else self.campaign.short_union
            return OutboundMessage(
                title="",
                body=words(lang, "sms_body", union=who, choice=what),
                kind=MessageKind.CONFIRM,
                language=lang,
            )
        url = self.confirm_url(token, lang)
        hours = int(self.limits.confirm_within.total_seconds() // 3600)
        return OutboundMessage(
            title=words(lang, "email_title", union=union),
            body=words(lang, "email_body", union=union, choice=what, hours=hours),
            kind=MessageKind.CONFIRM,
            language=lang,
            links=(Link(words(lang, "email_link"), url),),
            url=url,
            footer=union,
        )

    # -- telling one address one thing ---------------------------------------------

    async def tell(
        self,
        contact: Contact | str,
        address: object,
        message: OutboundMessage,
        *,
        key: str,
        keep: timedelta = timedelta(hours=1),
    ) -> None:
        """Send `message` to `address`, whether or not it signed up for anything (a web desk
        sign-in link to an address in the campaign file), through the outbox as a
        confirmation goes: the plugin reaching such addresses (`Offer`) sends it once
        (`key` names it), and nothing else ever goes to the address because of this. An
        address nobody signed up with is kept only for `keep`, then forgotten like a lapsed
        sign-up. Raises `InvalidInput` when no plugin reaches `contact` addresses or the
        address is malformed."""
        offer = self._offer(contact)
        normalized = read_contact(offer.contact, address, offer.countries)
        now = self.clock()
        async with self.store.write() as tx:
            person = await tx.find_subscriber(offer.contact, normalized)
            if person is None:
                person = await self._create(
                    tx, offer, normalized, i18n.pick(message.language), Choice.URGENT,
                    "told", now, state=DIRECT,
                )  # fmt: skip
            if person.state == DIRECT:
                await tx.set_subscriber(person.id, {"confirm_expires": now + keep})
            assert person.subscription_id is not None
            await tx.enqueue(
                [
                    NewDelivery(
                        dedupe_key=f"tell:{key}"[:200],
                        subscription_id=person.subscription_id,
                        platform=offer.platform,
                        action=DeliveryAction.CONFIRM,
                        not_before=now,
                        # A message for someone not subscribed goes as a confirmation does.
                        payload={"message": replace(message, kind=MessageKind.CONFIRM).to_json()},
                    )
                ],
                now,
            )

    # -- confirming ----------------------------------------------------------------

    async def pending(self, token: str) -> Pending | None:
        """What the link's token would confirm, or None (unknown, used or expired)."""
        now = self.clock()
        async with self.store.read() as tx:
            person = await self._by_token(tx, token, now)
        if person is None:
            return None
        wanted = person.requested or {}
        return Pending(
            Contact(person.kind),
            str(wanted.get("language", person.language)),
            Choice(wanted.get("choice", person.choice)),
        )

    async def confirm(self, token: str, *, via: str = "link") -> Pending:
        """Confirm the sign-up behind a link (the button's POST). Raises `NotFound` with a
        sentence saying what to do when the link is unknown, used or expired."""
        now = self.clock()
        async with self.store.write() as tx:
            person = await self._by_token(tx, token, now)
            if person is None:
                campaign = self.campaign
                raise in_every_language(
                    NotFound,
                    lambda lang: words(lang, "expired", url=page_url(campaign, lang, "/subscribe")),
                )
            return await self._confirm(tx, person, via, now)

    async def _by_token(self, tx: Tx, token: str, now: datetime) -> Subscriber | None:
        if not token or len(token) > 64 or not token.isascii():
            return None
        person = await tx.subscriber_by_digest(digest(token))
        if person is None or person.confirm_expires is None or person.confirm_expires <= now:
            return None
        return person

    async def _confirm(self, tx: Tx, person: Subscriber, via: str, now: datetime) -> Pending:
        wanted = person.requested or {}
        language = self.language_of(wanted.get("language", person.language))
        choice = Choice(wanted.get("choice", person.choice))
        offer = self.offers.get(Contact(person.kind))
        await self.activate(tx, person, offer, language, choice, now)
        await self._follow(tx, person.key, wanted.get("follow"), now)
        await tx.set_subscriber(
            person.id,
            {
                "state": "confirmed",
                "language": language,
                "choice": str(choice),
                "confirmed_at": now,
                "confirmed_via": via[:VIA_MAX],
                "signed_up_via": str(wanted.get("via", person.signed_up_via))[:VIA_MAX],
                "signed_up_at": person.signed_up_at if not person.confirmed else now,
                "confirm_digest": None,
                "confirm_expires": None,
                "requested": None,
                "broken_reason": None,
                "broken_at": None,
            },
        )
        await tx.audit(
            now,
            ACTOR,
            "subscriber.confirm",
            f"subscriber:{person.key}",
            None,
            {"language": language, "choice": str(choice), "via": via},
        )
        return Pending(Contact(person.kind), language, choice, key=person.key)

    async def activate(
        self,
        tx: Tx,
        person: Subscriber,
        offer: Offer | None,
        language: str,
        choice: Choice,
        now: datetime,
    ) -> None:
        sub_id = person.subscription_id
        existing = await tx.get_subscription(sub_id) if sub_id is not None else None
        platform = offer.platform if offer else (existing.platform if existing else "")
        sub = Subscription(
            id=0,
            platform=platform,
            workspace=WORKSPACE,
            channel=person.key,
            language=language,
            urgencies=ALL_URGENCIES if choice is Choice.ALL else frozenset({Urgency.URGENT}),
            briefing_time=self.briefing_time if choice is Choice.BRIEFING else None,
            briefing_days=self.campaign.briefing_days,
            timezone=self.campaign.timezone,
            quiet_hours=offer.quiet_hours if offer else None,
            follows=existing.follows if existing else EVERYONE,  # kept through a new choice
        )
        sub_id = await tx.save_subscription(sub, now)
        if sub_id != person.subscription_id:
            await tx.set_subscriber(person.id, {"subscription_id": sub_id})

    # -- texts to the number ---------------------------------------------------------

    async def confirm_by_reply(self, contact: Contact, address: str, *, via: str) -> Outcome:
        """A YES reply from the number a confirmation went to."""
        now = self.clock()
        async with self.store.write() as tx:
            person = await tx.find_subscriber(contact, address)
            if person is None or person.confirm_expires is None or person.confirm_expires <= now:
                if person is not None and person.confirmed:
                    return Outcome.ALREADY
                return Outcome.NOTHING_PENDING
            await self._confirm(tx, person, via, now)
            return Outcome.CONFIRMED

    async def join(
        self,
        contact: Contact,
        address: str,
        *,
        language: str,
        via: str,
        choice: Choice = Choice.URGENT,
        keys: Mapping[str, str] | None = None,
        client: str | None = None,
        code: str | None = None,
        follow: object = None,
    ) -> Outcome:
        """A keyword (JOIN, UNIRSE, START) texted from the phone itself, or a browser's push
        subscription made by its own "Notify me" button: the sender has shown the address
        is theirs, so this signs up and confirms at once. `keys`: what a browser's messages
        are encrypted to (kept with the endpoint). `client`: who asked over the web (counted
        against the per-client cap, as the form is). With the `code` the web form gave
        (`join_code`), the language and choice made there apply; an unknown or expired
        code is ignored (the keyword's language, urgent news). `follow`, a site's or a
        group's code ("JOIN ROOSEVELT"), is added to what the person follows (who followed
        everything then follows it alone); an unknown code is ignored."""
        offer = self._offer(contact)
        normalized = read_contact(offer.contact, address, offer.countries)
        lang = self.language_of(language)
        now = self.clock()
        if client is not None:
            self._charge(client, now)
        async with self.store.write() as tx:
            made = await tx.take_draft(CODE_KIND, code) if code else None
            if made is not None and str(made.get("until", "")) > now.isoformat():
                lang = self.language_of(made.get("language"))
                choice = Choice(str(made.get("choice", choice)))
                follow = follow or made.get("follow")
                via = f"{via} (web code)"
            person = await tx.find_subscriber(offer.contact, normalized)
            if person is not None and keys is not None and person.keys != keys:
                await tx.set_subscriber(person.id, {"keys": dict(keys)})
            if person is not None and person.confirmed and person.broken_reason is None:
                if choice is not Choice(person.choice) and client is not None:
                    await self._set_choice(tx, person, offer, choice, now, via)
                elif person.language != lang or (made is not None and person.choice != choice):
                    await self._confirm_choice(tx, person, offer, lang, now, via, choice)
                await self._follow(tx, person.key, follow, now)
                return Outcome.ALREADY
            if person is None:
                person = await self._create(tx, offer, normalized, lang, choice, via, now)
                if keys is not None:
                    await tx.set_subscriber(person.id, {"keys": dict(keys)})
            else:
                await tx.set_subscriber(
                    person.id, {"requested": {"language": lang, "choice": str(choice)}}
                )
                person = await tx.subscriber_by_key(person.key)
                assert person is not None
            await self._confirm(tx, person, via, now)
            await self._follow(tx, person.key, follow, now)
            return Outcome.JOINED

    async def _follow(self, tx: Tx, key: str, names: object, now: datetime) -> None:
        """Add the sites or groups `names` names (a code or name, or a list of them, as a
        sign-up kept them) to what the person `key` follows; unknown names are passed by."""
        texts = [names] if isinstance(names, str) else names if isinstance(names, list) else []
        found = await audience_named(tx, texts)
        person = await tx.subscriber_by_key(key)
        if found == EVERYONE or person is None or person.subscription_id is None:
            return
        sub = await tx.get_subscription(person.subscription_id)
        if sub is None:
            return
        had = sub.follows
        follows = Audience.of([*had.sites, *found.sites], [*had.groups, *found.groups])
        if follows != had:
            await tx.save_subscription(replace(sub, follows=follows), now)
            await tx.audit(
                now, ACTOR, "subscriber.follow", f"subscriber:{key}", had.to_json(),
                follows.to_json(),
            )  # fmt: skip

    async def _set_choice(
        self, tx: Tx, person: Subscriber, offer: Offer, choice: Choice, now: datetime, via: str
    ) -> None:
        """A subscribed browser asked again with another choice: keep what it asks now."""
        await tx.set_subscriber(
            person.id, {"requested": {"language": person.language, "choice": str(choice)}}
        )
        fresh = await tx.subscriber_by_key(person.key)
        assert fresh is not None
        await self._confirm(tx, fresh, via, now)

    async def heard(self, contact: Contact, address: str) -> None:
        """The person at `address` wrote just now (WhatsApp's 24-hour window opens again)."""
        now = self.clock()
        async with self.store.write() as tx:
            person = await tx.find_subscriber(contact, address)
            if person is not None:
                await tx.set_subscriber(person.id, {"heard_at": now})

    async def send_again(self, delivery_id: str, platform: str, *, why: str) -> bool:
        """The provider said later that a copy it had accepted was not delivered for a
        reason the next try avoids (WhatsApp's 63016: the 24-hour window had closed, so a
        template goes instead): queue that copy again, due now, and forget the person's
        window. False when there is no such sent copy (it was queued again already)."""
        now = self.clock()
        async with self.store.write() as tx:
            again = await tx.send_again(delivery_id, platform, why, now)
            if again is None:
                return False
            sub = await tx.get_subscription(again)
            person = await tx.subscriber_by_key(sub.channel) if sub is not None else None
            if person is not None:
                await tx.set_subscriber(person.id, {"heard_at": None})
            return True

    async def _confirm_choice(
        self,
        tx: Tx,
        person: Subscriber,
        offer: Offer,
        language: str,
        now: datetime,
        via: str,
        choice: Choice | None = None,
    ) -> None:
        """A subscribed person texted the other language's keyword, or a code with other
        choices: switch to them."""
        wanted = str(choice) if choice is not None else person.choice
        await tx.set_subscriber(person.id, {"requested": {"language": language, "choice": wanted}})
        fresh = await tx.subscriber_by_key(person.key)
        assert fresh is not None
        await self._confirm(tx, fresh, via, now)

    # -- leaving -----------------------------------------------------------------------

    async def unsubscribe(self, manage_token: str, *, via: str) -> bool:
        """One-click unsubscribe (and the visible link's button). Idempotent: an unknown or
        already-used token changes nothing and returns False."""
        if not manage_token or len(manage_token) > 64:
            return False
        async with self.store.write() as tx:
            person = await tx.subscriber_by_token(manage_token)
            if person is None:
                return False
            await self.forget(tx, person, "subscriber.unsubscribe", via, self.clock())
        self.scrub_soon()
        return True

    async def unsubscribe_address(self, contact: Contact, address: str, *, via: str) -> Outcome:
        """STOP (and the other opt-out words) from a number."""
        async with self.store.write() as tx:
            person = await tx.find_subscriber(contact, address)
            if person is None:
                return Outcome.NOT_SUBSCRIBED
            await self.forget(tx, person, "subscriber.unsubscribe", via, self.clock())
        self.scrub_soon()
        return Outcome.UNSUBSCRIBED

    async def forget(
        self, tx: Tx, person: Subscriber, action: str, via: str, now: datetime
    ) -> None:
        """In `tx`, stop everything to `person` and delete their address and consent record: only
        the audit entry (no address) remains."""
        if person.subscription_id is not None:
            await tx.deactivate_subscription(person.subscription_id)
        await tx.delete_subscriber(person.id)
        await tx.audit(
            now,
            ACTOR,
            action,
            f"subscriber:{person.key}",
            {"kind": person.kind, "state": person.state},
            {"via": via},
        )

    def scrub_soon(self) -> None:
        """After a deletion committed: clear the database's files of what was deleted
        (`Store.scrub`), in the background, off the request's path. One scrub at a time;
        deletions meanwhile get one more after it."""
        if self._scrubbing is not None and not self._scrubbing.done():
            self._scrub_again = True
            return
        self._scrubbing = asyncio.create_task(self._scrub(), name="scrub deleted addresses")

    async def _scrub(self) -> None:
        while True:
            self._scrub_again = False
            try:
                await self.store.scrub()
            except Exception as exc:
                log.warning(
                    "could not clear deleted addresses from the database's log (%s); the next "
                    "deletion tries again",
                    type(exc).__name__,
                )
                return
            if not self._scrub_again:
                return

    async def scrubbed(self) -> None:
        """Wait until the scrub after the last deletion is done (before a command exits)."""
        while self._scrubbing is not None and not self._scrubbing.done():
            await asyncio.shield(self._scrubbing)

    # -- what providers report -----------------------------------------------------------

    async def contactable(self, key: str, *, within: float = 0.0) -> Contactable | None:
        """The address behind a subscription's channel, for an adapter about to send.
        Lookups made while one is on its way share the next read (one query for a batch of
        sends, not one per message). `within`: the first lookup of a batch waits that many
        seconds for others to join it (sends paced apart each wait for their own read
        otherwise)."""
        waiting = self._lookups.get(key)
        if waiting is None:
            waiting = asyncio.get_running_loop().create_future()
            self._lookups[key] = waiting
            if len(self._lookups) == 1:
                self._lookup_task = asyncio.create_task(self._look_up(within))
        person = await asyncio.shield(waiting)
        if person is None:
            return None
        return Contactable(
            key=person.key,
            kind=Contact(person.kind),
            address=person.address,
            language=person.language,
            manage_token=person.manage_token,
            confirmed=person.confirmed,
            preferences=await self.forms.person_token(person.key),
            keys=dict(person.keys or {}),
            heard_at=person.heard_at,
        )

    async def recipient(
        self, key: str, message: OutboundMessage, *, within: float = 0.0
    ) -> Contactable:
        """Who `message` goes to, for an adapter about to send it to the channel `key`
        (`within`: see `contactable`). Raises `PermanentDeliveryError` (one person's: no
        notice to admins) when they unsubscribed meanwhile, or when an unconfirmed sign-up
        would get anything but its confirmation."""
        person = await self.contactable(key, within=within)
        if person is None:
            raise PermanentDeliveryError(
                "the person unsubscribed before it went", tell_admins=False
            )
        if not person.confirmed and message.kind is not MessageKind.CONFIRM:
            raise PermanentDeliveryError("the sign-up is not confirmed", tell_admins=False)
        return person

    async def _look_up(self, within: float = 0.0) -> None:
        await asyncio.sleep(within)  # let the sends started meanwhile add their keys
        batch, self._lookups = self._lookups, {}
        try:
            async with self.store.read() as tx:
                found = await tx.subscribers_by_keys(list(batch))
        except Exception as exc:
            for waiting in batch.values():
                waiting.set_exception(exc)
            return
        for key, waiting in batch.items():
            waiting.set_result(found.get(key))

    async def mark_broken(self, key: str, reason: str) -> None:
        """The address cannot receive (a permanent bounce, a landline): nothing more goes
        to it until the person signs up again. Admins see counts, not a notice each."""
        now = self.clock()
        async with self.store.write() as tx:
            person = await tx.subscriber_by_key(key)
            if person is None or person.broken_reason is not None:
                return
            await tx.set_subscriber(person.id, {"broken_reason": reason[:500], "broken_at": now})
            if person.subscription_id is not None:
                await tx.mark_subscription_broken(person.subscription_id, reason[:500])
                await tx.cancel_pending(subscription_id=person.subscription_id)
            await tx.audit(
                now,
                ACTOR,
                "subscriber.broken",
                f"subscriber:{key}",
                None,
                {"reason": reason[:500]},
            )

    async def mark_broken_by_delivery(self, delivery_id: str, reason: str) -> None:
        """`mark_broken` for the person delivery `delivery_id` went to (a provider's receipt
        names the delivery, not the person); nothing when it is not a person's."""
        async with self.store.read() as tx:
            sub_id = await tx.subscription_of_delivery(delivery_id)
            sub = await tx.get_subscription(sub_id) if sub_id is not None else None
        if sub is not None:
            await self.mark_broken(sub.channel, reason)

    async def record_receipt(
        self, delivery_id: str, platform: str, status: str, error: str | None = None
    ) -> bool:
        async with self.store.write() as tx:
            return await tx.record_receipt(delivery_id, platform, status, error, self.clock())

    # -- a person's own data (the command line) ---------------------------------------------

    async def find(self, address: str, contact: Contact | None = None) -> Subscriber | None:
        """The record for `address` (an e-mail address or a phone number, any common form;
        `contact` when the kind is known: a number that wrote on WhatsApp, a browser's push
        endpoint)."""
        kind, normalized = self._guess(address) if contact is None else self._read(contact, address)
        async with self.store.read() as tx:
            return await tx.find_subscriber(kind, normalized)

    async def export(self, address: str) -> dict[str, Any] | None:
        """Everything kept about the person at `address`, and what was sent to them."""
        kind, normalized = self._guess(address)
        async with self.store.read() as tx:
            person = await tx.find_subscriber(kind, normalized)
            if person is None:
                return None
            sent = []
            if person.subscription_id is not None:
                for d in await tx.list_deliveries(
                    subscription_id=person.subscription_id, limit=None
                ):
                    sent.append(
                        {
                            "action": str(d.action),
                            "update": d.update_id,
                            "state": str(d.state),
                            "queued_at": d.created_at,
                            "sent_at": d.sent_at,
                        }
                    )
        return {
            "address": person.address,
            "kind": person.kind,
            "language": person.language,
            "receives": person.choice,
            "state": person.state,
            "consent": {
                "signed_up_at": person.signed_up_at,
                "signed_up_via": person.signed_up_via,
                "confirmed_at": person.confirmed_at,
                "confirmed_via": person.confirmed_via,
            },
            "broken_reason": person.broken_reason,
            "messages": sent,
        }

    async def delete(self, address: str, *, via: str = "cli") -> bool:
        """Forget the person at `address` at once (a deletion request)."""
        kind, normalized = self._guess(address)
        async with self.store.write() as tx:
            person = await tx.find_subscriber(kind, normalized)
            if person is None:
                return False
            await self.forget(tx, person, "subscriber.delete", via, self.clock())
        self.scrub_soon()
        await self.scrubbed()
        return True

    async def delete_all(self, *, via: str = "cli") -> int:
        """Forget everyone (the campaign is over). Returns how many."""
        count = 0
        while True:
            async with self.store.write() as tx:
                batch = await tx.all_subscribers(limit=500)
                for person in batch:
                    await self.forget(tx, person, "subscriber.delete", via, self.clock())
            count += len(batch)
            if len(batch) < 500:
                self.scrub_soon()
                await self.scrubbed()
                return count

    async def stats(self) -> dict[str, Any]:
        """Counts only: by kind, state, language and choice; broken; provider receipts."""
        async with self.store.write() as tx:
            purged = await self._purge(tx, self.clock())
            counts = await tx.subscriber_counts()
            receipts = await tx.receipt_counts()
        if purged:
            self.scrub_soon()
            await self.scrubbed()
        by_kind: dict[str, dict[str, Any]] = {}
        for (kind, state, language, choice, broken), n in counts.items():
            if state == DIRECT:
                continue  # told one thing (a sign-in link), never signed up
            entry = by_kind.setdefault(
                kind,
                {"confirmed": 0, "pending": 0, "broken": 0, "languages": {}, "receives": {}},
            )
            entry[state] = entry.get(state, 0) + n
            if broken:
                entry["broken"] += n
            if state == "confirmed":
                entry["languages"][language] = entry["languages"].get(language, 0) + n
                entry["receives"][choice] = entry["receives"].get(choice, 0) + n
        return {
            "people": by_kind,
            "receipts": {f"{p}:{s}": n for (p, s), n in sorted(receipts.items())},
        }

    def _read(self, contact: Contact, address: str) -> tuple[Contact, str]:
        if contact is Contact.EMAIL or contact is Contact.PUSH:
            return contact, read_contact(contact, address)
        offer = self.offers.get(contact)
        countries = offer.countries if offer else ("US",)
        return contact, read_phone(address, countries, anywhere=True, mobile=False)

    def _guess(self, address: str) -> tuple[Contact, str]:
        text = str(address).strip()
        if "@" in text:
            return Contact.EMAIL, read_email(text)
        offer = self.offers.get(Contact.PHONE)
        countries = offer.countries if offer else ("US",)
        return Contact.PHONE, read_phone(text, countries, anywhere=True)

    # -- helpers ----------------------------------------------------------------------------

    def language_of(self, value: object) -> str:
        """`value` if it is a campaign language, else the campaign's main one."""
        text = str(value or "").strip().lower()[:8]
        return text if text in self.campaign.languages else self.campaign.default_language

    async def _purge(self, tx: Tx, now: datetime) -> int:
        """Delete unconfirmed sign-ups whose link expired, and addresses broken for long."""
        await tx.forget_drafts(now - self.limits.code_within, kind=CODE_KIND)
        stale = await tx.expired_subscribers(
            pending_before=now, broken_before=now - self.limits.broken_kept
        )
        for person in stale:
            await self.forget(tx, person, "subscriber.expire", "retention", now)
        if stale:
            log.info("forgot %d expired sign-ups and broken addresses", len(stale))
        return len(stale)


def signups_for(store: Store, config: StrikeConfig, clock: Clock) -> SignUps:
    """The sign-up use cases for a campaign file (`[signups]`, `[briefings] default_time`)."""
    section = config.signups
    return SignUps(
        store,
        config.to_campaign(),
        clock,
        briefing_time=time.fromisoformat(config.briefings.default_time),
        limits=SignupLimits(
            client_per_hour=section.per_client_per_hour,
            network_per_hour=section.per_network_per_hour,
            total_per_hour=section.per_hour,
            busy_network_per_hour=section.per_network_when_busy,
            hard_total_per_hour=max(section.per_hour, section.at_most_per_hour),
            confirm_within=timedelta(hours=section.confirm_hours),
        ),
    )


async def place_named(tx: Tx, text: str) -> tuple[Site | None, SiteGroup | None]:
    """The site, else the group, that `text` names: by its code, else by a name in any
    language (what the sign-up form's list offers), case and spaces ignored."""
    code = text.strip().lower()
    site = await tx.get_site(code) if CODE.fullmatch(code) else None
    group = None if site or not CODE.fullmatch(code) else await tx.get_group(code)
    if site or group:
        return site, group
    wanted = " ".join(code.split())
    for found in await tx.list_sites():
        if wanted in {" ".join(n.lower().split()) for n in found.names.values()}:
            return found, None
    for named in await tx.list_groups():
        if wanted in {" ".join(n.lower().split()) for n in named.names.values()}:
            return None, named
    return None, None


async def audience_named(
    tx: Tx, texts: Iterable[object], refuse: Callable[[str], Exception] | None = None
) -> Audience:
    """The sites and groups `texts` name (codes or names, tidied; empty ones passed by); one
    that names neither is passed by, or raises `refuse(text)`."""
    sites: list[str] = []
    groups: list[str] = []
    for text in texts:
        typed = " ".join(str(text or "").split())[:FOLLOW_MAX]
        site, group = await place_named(tx, typed) if typed else (None, None)
        if site is not None:
            sites.append(site.code)
        elif group is not None:
            groups.append(group.code)
        elif typed and refuse is not None:
            raise refuse(typed)
    return Audience.of(sites, groups)


def named(site: object) -> tuple[str, ...]:
    """The schools a form named: one value or several (a code or a name each), tidied, the
    empty ones left out, each once."""
    values = site if isinstance(site, list | tuple) else [site]
    found: dict[str, None] = {}
    for value in values[:FOLLOW_FORM_MOST]:
        text = " ".join(str(value or "").split())[:FOLLOW_MAX]
        if text:
            found.setdefault(text)
    return tuple(found)
