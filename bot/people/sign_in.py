"""Signing in to the web desk, one person at a time: a link by e-mail, then a session.

    door = SignIn(store, signups, clock, platform="web")
    await door.ask(address, allowed=rule, client=ip, message=link_mail)  # the sign-in form
    opened = await door.enter(link_token, allowed=rule)   # the button behind the link
    session = await door.who(cookie_token)                # every request: who, or None
    await door.leave(cookie_token)                        # sign out
    await door.leave_everywhere(session.person)           # sign out on every device

- The link goes to the address through the outbox, as a sign-up's confirmation does
  (`SignUps.tell`): the plugin that reaches e-mail addresses sends it, once; the plugin
  asking for it never talks to a mail server.
- Only digests are kept. A link's and a session's token are 32 random bytes; the store
  holds their SHA-256, so a copy of the database signs nobody in.
- Limits. A link works once, for 15 minutes; an address gets at most 3 links in 15
  minutes, silently (the answer is the same whoever asks, so nobody learns who may sign
  in); one client (an IP address) may ask 10 times in 15 minutes, then is refused with a
  sentence. A session ends after an hour unused, after 12 hours in any case, on signing
  out, or when its person signs out everywhere.
- Who may sign in is the caller's rule (`allowed`: the web plugin's `[admins.web]`). The
  caller checks it again on every request, so someone removed from the campaign file
  loses access at once; the desk's use cases check it once more.
- Every step is in the audit log as the person (`<platform>:<address>`).
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.clock import Clock, utcnow
from bot.errors import StrikebotError
from bot.i18n.sentences import localized_error
from bot.models import Actor, Contact
from bot.people.contacts import read_email
from bot.people.signups import SignUps, _Window
from bot.plugins.outbound import OutboundMessage
from bot.store import Store
from bot.store.sessions import DeskSession

TOKEN_BYTES = 32  # 43 URL-safe characters
KEEP_LINKS = timedelta(days=1)  # links are kept this long (used or not), then forgotten


@dataclass(frozen=True, slots=True)
class SignInLimits:
    link_lasts: timedelta = timedelta(minutes=15)
    links_per_address: int = 3
    address_window: timedelta = timedelta(minutes=15)
    asks_per_client: int = 10
    client_window: timedelta = timedelta(minutes=15)
    idle: timedelta = timedelta(hours=1)
    longest: timedelta = timedelta(hours=12)
    seen_every: timedelta = timedelta(minutes=1)  # how often a session's last use is written


@dataclass(frozen=True, slots=True)
class Opened:
    """A session just opened: the token for the cookie (never stored) and the session."""

    token: str
    session: DeskSession


class TooManySignIns(StrikebotError):
    """One client asked for too many sign-in links: wait, then try again."""

    exit_code = 5


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _token_shape(token: str) -> bool:
    return bool(token) and len(token) <= 64 and token.isascii()


class SignIn:
    """The web desk's door, bound to a store, the sign-up use cases (which send the link)
    and a clock. One per process: the per-client limit is counted in memory."""

    def __init__(
        self,
        store: Store,
        signups: SignUps,
        clock: Clock = utcnow,
        *,
        platform: str,
        limits: SignInLimits | None = None,
    ) -> None:
        self.store = store
        self.signups = signups
        self.clock = clock
        self.platform = platform
        self.limits = limits or SignInLimits()
        self._clients = _Window(self.limits.client_window)

    def actor(self, person: str) -> Actor:
        """Who `person` (an address from a session) is in the audit log and to the rules."""
        return Actor(platform=self.platform, user_id=person)

    async def ask(
        self,
        address: object,
        *,
        allowed: Callable[[Actor], bool],
        client: str,
        message: Callable[[str], OutboundMessage],
    ) -> None:
        """Send a sign-in link to `address` if `allowed` lets its person in and the address
        is under its limit; `message(token)` is the e-mail carrying the link. Returns the
        same either way. Raises `InvalidInput` for a malformed address, `TooManySignIns`
        when this client asked too often."""
        person = read_email(address)
        now = self.clock()
        key = digest(client)[:24]
        if self._clients.count(key, now) >= self.limits.asks_per_client:
            raise localized_error(TooManySignIns, "sign_in.too_many")
        self._clients.add(key, now)
        actor = self.actor(person)
        if not allowed(actor):
            return
        token = secrets.token_urlsafe(TOKEN_BYTES)
        async with self.store.write() as tx:
            since = now - self.limits.address_window
            if await tx.desk_links_since(person, since) >= self.limits.links_per_address:
                return
            await tx.insert_desk_link(digest(token), person, now, now + self.limits.link_lasts)
            await tx.audit(now, actor.id, "desk.link", f"desk:{self.platform}")
        await self.signups.tell(
            Contact.EMAIL, person, message(token), key=f"desk-link:{digest(token)[:32]}"
        )

    async def enter(self, token: str, *, allowed: Callable[[Actor], bool]) -> Opened | None:
        """Use the link behind `token` (once) and open a session for its person; None when
        the link is unknown, used or lapsed, or its person may no longer sign in."""
        if not _token_shape(token):
            return None
        now = self.clock()
        fresh = secrets.token_urlsafe(TOKEN_BYTES)
        async with self.store.write() as tx:
            person = await tx.use_desk_link(digest(token), now)
            if person is None or not allowed(self.actor(person)):
                return None
            ends = now + self.limits.longest
            await tx.insert_desk_session(digest(fresh), person, now, ends)
            await tx.audit(now, self.actor(person).id, "desk.sign_in", f"desk:{self.platform}")
        return Opened(fresh, DeskSession(person, now, now, ends))

    async def who(self, token: str, *, touch: bool = True) -> DeskSession | None:
        """The session behind a cookie's token, or None when there is none or it ended
        (unused for `idle`, or past its end). With `touch` (a person's request, not a page
        polling by itself) records the use, at most once a minute."""
        if not _token_shape(token):
            return None
        now = self.clock()
        key = digest(token)
        async with self.store.read() as tx:
            session = await tx.desk_session(key)
        if session is None:
            return None
        if session.expires_at <= now or session.seen_at + self.limits.idle <= now:
            async with self.store.write() as tx:
                await tx.end_desk_session(key)
            return None
        if touch and now - session.seen_at >= self.limits.seen_every:
            async with self.store.write() as tx:
                await tx.see_desk_session(key, now)
        return session

    async def leave(self, token: str) -> None:
        """Sign out of this session (nothing when there is none)."""
        if not _token_shape(token):
            return
        now = self.clock()
        async with self.store.write() as tx:
            person = await tx.end_desk_session(digest(token))
            if person is not None:
                await tx.audit(now, self.actor(person).id, "desk.sign_out", f"desk:{self.platform}")

    async def leave_everywhere(self, person: str) -> int:
        """End every session of `person` (a lost phone): how many there were."""
        now = self.clock()
        async with self.store.write() as tx:
            ended = await tx.end_desk_sessions(person)
            await tx.audit(
                now, self.actor(person).id, "desk.sign_out_everywhere", f"desk:{self.platform}",
                None, {"sessions": ended},
            )  # fmt: skip
        return ended


async def forget_old_access(store: Store, now: datetime, limits: SignInLimits) -> int:
    """Drop links older than a day and sessions that ended: `bot.runtime.housekeeping`."""
    async with store.write() as tx:
        return await tx.forget_desk_access(
            links_before=now - KEEP_LINKS, idle_before=now - limits.idle, now=now
        )
