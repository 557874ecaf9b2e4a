"""Who is asking: a Slack user's locale and time zone (users.info) and which admin user
groups they belong to (usergroups.users.list), cached.

Lookups never hold up a reply for long (a short timeout) and fail conservatively: an unknown
locale falls back to the channel's language, and a group that cannot be read grants nothing
(the refusal then says how to be added by user id). Whatever comes back, a plain-text 503
from a proxy included, a failed lookup is a warning in the log, never a failed command.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack._errors import CALL_FAILURES, describe, error_code

log = logging.getLogger(__name__)

PERSON_TTL = 3600.0  # locales and time zones rarely change
MISSING_TTL = 300.0  # a failed lookup is retried after this long
GROUP_TTL = 300.0  # group membership: an admin removed from a group loses access within 5 min
LOOKUP_TIMEOUT = 1.5  # seconds; the whole slash command must be answered within 3


@dataclass(frozen=True, slots=True)
class Person:
    user_id: str
    name: str = ""
    locale: str | None = None
    timezone: str | None = None


class Directory:
    """Cached answers about users, shared by every request of one adapter."""

    def __init__(
        self,
        client: AsyncWebClient,
        admin_groups: Iterable[str] = (),
        *,
        timeout: float = LOOKUP_TIMEOUT,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.admin_groups = frozenset(admin_groups)
        self.timeout = timeout
        self._now = monotonic
        self._people: dict[str, tuple[float, Person | None]] = {}
        self._groups: dict[str, tuple[float, frozenset[str]]] = {}
        self._group_locks: dict[str, asyncio.Lock] = {}
        self._warned: set[str] = set()

    def cached(self, user_id: str) -> Person | None:
        entry = self._people.get(user_id)
        return entry[1] if entry is not None else None

    async def person(self, user_id: str) -> Person | None:
        """Locale and time zone of `user_id`, or None when Slack will not say."""
        entry = self._people.get(user_id)
        if entry is not None and entry[0] > self._now():
            return entry[1]
        try:
            response = await asyncio.wait_for(
                self.client.users_info(user=user_id, include_locale=True), self.timeout
            )
            user = response.get("user")
            if not isinstance(user, dict):
                raise ValueError("users.info answered without a user object")
            found: Person | None = Person(
                user_id=user_id,
                name=str(user.get("name") or ""),
                locale=user.get("locale") or None,
                timezone=user.get("tz") or None,
            )
            ttl = PERSON_TTL
        except CALL_FAILURES as exc:
            self._warn_once("users.info", exc, "answering in the channel's language")
            found, ttl = None, MISSING_TTL
        self._people[user_id] = (self._now() + ttl, found)
        return found

    async def admin_groups_of(self, user_id: str) -> frozenset[str]:
        """The configured admin user groups `user_id` belongs to."""
        if not self.admin_groups:
            return frozenset()
        found = set()
        for group in sorted(self.admin_groups):
            if user_id in await self._members(group):
                found.add(group)
        return frozenset(found)

    async def _members(self, group: str) -> frozenset[str]:
        entry = self._groups.get(group)
        if entry is not None and entry[0] > self._now():
            return entry[1]
        lock = self._group_locks.setdefault(group, asyncio.Lock())
        async with lock:  # one lookup per group at a time; the others wait for its answer
            entry = self._groups.get(group)
            if entry is not None and entry[0] > self._now():
                return entry[1]
            try:
                response = await asyncio.wait_for(
                    self.client.usergroups_users_list(usergroup=group), self.timeout
                )
                users = response.get("users")
                if not isinstance(users, list):
                    raise ValueError("usergroups.users.list answered without a list of users")
                members = frozenset(str(u) for u in users)
                ttl = GROUP_TTL
            except CALL_FAILURES as exc:
                self._warn_once(
                    f"usergroups.users.list {group}",
                    exc,
                    f"nobody counts as an admin through group {group} until it answers",
                )
                members, ttl = frozenset(), MISSING_TTL
            self._groups[group] = (self._now() + ttl, members)
            return members

    def _warn_once(self, what: str, exc: BaseException, meanwhile: str) -> None:
        reason = describe(exc)
        key = f"{what}:{reason}"
        if key in self._warned:
            return
        self._warned.add(key)
        hint = ""
        if error_code(exc) == "missing_scope":
            hint = " Add the users:read and usergroups:read scopes (config/slack-manifest.yml)."
        log.warning("Slack %s failed (%s); %s.%s", what, reason, meanwhile, hint)
