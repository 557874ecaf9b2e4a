"""Who administers the chats listed in `[admins.telegram] admin_chat_ids`: asked with
getChatMember and remembered for a few minutes, so an admin's next command asks nobody."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from typing import Any

from telegram.constants import ChatMemberStatus
from telegram.error import TelegramError

log = logging.getLogger("strikebot.telegram")

TTL = 300.0
ADMIN_STATUSES = frozenset({ChatMemberStatus.OWNER, ChatMemberStatus.ADMINISTRATOR})


class Membership:
    """`admin_chats_of(user)`: the listed chats where `user` is an owner or administrator."""

    def __init__(
        self,
        bot: Any,
        chat_ids: Iterable[str],
        *,
        ttl: float = TTL,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.bot = bot
        self.chat_ids = tuple(chat_ids)
        self.ttl = ttl
        self._now = monotonic
        self._known: dict[tuple[str, int], tuple[float, bool]] = {}

    async def admin_chats_of(self, user_id: int) -> frozenset[str]:
        found = set()
        for chat in self.chat_ids:
            if await self._administers(chat, user_id):
                found.add(chat)
        return frozenset(found)

    async def _administers(self, chat: str, user_id: int) -> bool:
        key = (chat, user_id)
        cached = self._known.get(key)
        if cached is not None and self._now() - cached[0] < self.ttl:
            return cached[1]
        try:
            member = await self.bot.get_chat_member(chat_id=_chat_id(chat), user_id=user_id)
            answer = member.status in ADMIN_STATUSES
        except TelegramError as exc:
            # Not in that chat, or the bot is not: not an admin through it (not remembered, so
            # a fixed chat counts at once).
            log.info("getChatMember(%s, %s) failed: %s", chat, user_id, exc)
            return False
        self._known[key] = (self._now(), answer)
        return answer


def _chat_id(chat: str) -> int | str:
    text = chat.strip()
    return int(text) if text.lstrip("-").isdigit() else text
