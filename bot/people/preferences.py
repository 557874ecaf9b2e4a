"""A person's preferences behind a signed link, no login: what they follow, their language,
what they receive, and leaving.

    prefs = Preferences(signups)
    url = await prefs.url(key, "es")                  # https://.../es/p/<20 characters>
    mine = await prefs.open(token)                    # or LinkRefused, saying what happened
    mine = await prefs.change(token, language="es", choice="all",
                              follows=["Preparatoria Roosevelt", "east"], via="web page")
    await prefs.leave(token, via="web page")          # deleted, as STOP deletes

The link's token is the person's opaque key and an HMAC of it (`FormTokens.person_token`,
the key of the public forms): no address in it, and it works as long as the person is
signed up. A token we did not make (cut short, mistyped, changed) and one whose person has
left (or signed up afresh since, with a new key) are told apart, each with a sentence
saying what to do. Changes keep the consent record and are audited by key, with counts
rather than the schools chosen (`docs/privacy.md`). Every e-mail links to it, and the
texts that welcome a person, answer HELP or PREFS (`docs/email-sms.md`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from bot import i18n
from bot.errors import InvalidInput, NotFound
from bot.i18n.sentences import in_every_language
from bot.messages.compose import page_url
from bot.models import EVERYONE, Audience, Campaign, Contact, Site, SiteGroup, Subscriber
from bot.people.signups import ACTOR, Choice, SignUps, audience_named, parse_choice
from bot.store import Tx

FOLLOW_MOST = 50  # schools and districts one person may follow


class LinkRefused(NotFound):
    """A preferences link that opens nothing: `left` when we made it and its person has
    gone since (left, or signed up again with a new link); else it is not a link of ours."""

    left: bool = False


@dataclass(frozen=True, slots=True)
class Chosen:
    """What a person has chosen, as their page shows it."""

    key: str
    contact: Contact
    language: str
    choice: Choice
    follows: Audience
    sites: tuple[Site, ...] = ()  # the sites and groups `follows` names, for their names
    groups: tuple[SiteGroup, ...] = ()

    def names(self, language: str) -> list[str]:
        """What they follow, by name in `language` (groups first); empty for everything."""
        return [g.name(language) for g in self.groups] + [s.name(language) for s in self.sites]


class Preferences:
    """The preferences page's use cases, over the sign-ups they change."""

    def __init__(self, signups: SignUps) -> None:
        self.signups = signups

    async def token(self, key: str) -> str:
        return await self.signups.forms.person_token(key)

    async def url(self, key: str, language: str) -> str:
        """The person's link in `language` ("" for a key that gets none)."""
        token = await self.token(key)
        return self.signups.preferences_url(token, language) if token else ""

    async def link_of(self, contact: Contact, address: str) -> tuple[str, str] | None:
        """The link of the signed-up person at `address` and their language (what a text's
        PREFS is answered with); None for anyone not signed up and confirmed."""
        person = await self.signups.find(address, contact)
        if person is None or not person.confirmed:
            return None
        url = await self.url(person.key, person.language)
        return (url, person.language) if url else None

    async def open(self, token: str) -> Chosen:
        """What the person behind `token` has chosen; `LinkRefused` when nobody is."""
        key = await self._key(token)
        async with self.signups.store.read() as tx:
            return await self._chosen(tx, key)

    async def change(
        self,
        token: str,
        *,
        language: object,
        choice: object,
        follows: Iterable[str] | None,
        via: str,
    ) -> Chosen:
        """Keep what the person chose on their page: `follows` None for everything, else
        the sites' and groups' codes or names (in any language). Raises `LinkRefused`, or
        `InvalidInput` naming what no site or group is called."""
        key = await self._key(token)
        wanted = parse_choice(choice)
        people = self.signups
        lang = people.language_of(language)
        now = people.clock()
        async with people.store.write() as tx:
            person = await self._person(tx, key)
            audience = await _audience(tx, follows)
            offer = people.offers.get(Contact(person.kind))
            await people.activate(tx, person, offer, lang, wanted, now)
            sub = await tx.get_subscription(person.subscription_id or 0)
            if sub is not None and sub.follows != audience:
                await tx.save_subscription(replace(sub, follows=audience), now)
            await tx.set_subscriber(person.id, {"language": lang, "choice": str(wanted)})
            await tx.audit(
                now,
                ACTOR,
                "subscriber.preferences",
                f"subscriber:{key}",
                None,
                {
                    "language": lang,
                    "choice": str(wanted),
                    # How many, not which: a person's school says something about them.
                    "sites": len(audience.sites),
                    "groups": len(audience.groups),
                    "via": via,
                },
            )
            return await self._chosen(tx, key)

    async def leave(self, token: str, *, via: str) -> None:
        """Unsubscribe the person behind `token` and delete their data, as STOP does."""
        key = await self._key(token)
        people = self.signups
        async with people.store.write() as tx:
            person = await tx.subscriber_by_key(key)
            if person is None:
                raise _refused(self.signups.campaign, left=True)
            await people.forget(tx, person, "subscriber.unsubscribe", via, people.clock())
        people.scrub_soon()

    async def _key(self, token: str) -> str:
        key = await self.signups.forms.person_of(token)
        if key is None:
            raise _refused(self.signups.campaign, left=False)
        return key

    async def _person(self, tx: Tx, key: str) -> Subscriber:
        person = await tx.subscriber_by_key(key)
        if person is None or not person.confirmed or person.subscription_id is None:
            raise _refused(self.signups.campaign, left=True)
        return person

    async def _chosen(self, tx: Tx, key: str) -> Chosen:
        person = await self._person(tx, key)
        sub = await tx.get_subscription(person.subscription_id or 0)
        follows = sub.follows if sub is not None else EVERYONE
        sites = [s for s in [await tx.get_site(c) for c in follows.sites] if s is not None]
        groups = [g for g in [await tx.get_group(c) for c in follows.groups] if g is not None]
        return Chosen(
            key,
            Contact(person.kind),
            person.language,
            Choice(person.choice),
            follows,
            tuple(sites),
            tuple(groups),
        )


async def _audience(tx: Tx, follows: Iterable[str] | None) -> Audience:
    """The sites and groups `follows` names (codes or names); `InvalidInput` for the first
    that names neither. None, or nothing named, is everything."""
    if follows is None:
        return EVERYONE
    audience = await audience_named(tx, follows, refuse=_unknown)
    if len(audience.sites) + len(audience.groups) > FOLLOW_MOST:
        raise in_every_language(
            InvalidInput, lambda lang: i18n.say(lang, "preferences.too_many", most=FOLLOW_MOST)
        )
    return audience


def _unknown(name: str) -> InvalidInput:
    return in_every_language(
        InvalidInput, lambda lang: i18n.say(lang, "preferences.unknown", name=name)
    )


def _refused(campaign: Campaign, *, left: bool) -> LinkRefused:
    key = "preferences.left" if left else "preferences.bad_link"
    error = in_every_language(
        LinkRefused,
        lambda lang: i18n.say(lang, key, url=page_url(campaign, lang, "/subscribe")),
    )
    error.left = left
    return error
