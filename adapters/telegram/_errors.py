"""Telegram's refusals, as the dispatcher understands them.

python-telegram-bot raises `RetryAfter` for a 429 (with `parameters.retry_after`),
`Forbidden` for 403, `BadRequest` (a subclass of `NetworkError`: check it first) for 400,
`ChatMigrated` when a group became a supergroup, `InvalidToken` for 401/404, and
`NetworkError`/`TimedOut` for 5xx pages (JSON, HTML or plain text), resets and timeouts.
"""

from __future__ import annotations

import re
import warnings
from datetime import timedelta

from telegram.error import (
    BadRequest,
    ChatMigrated,
    Forbidden,
    InvalidToken,
    NetworkError,
    RetryAfter,
    TelegramError,
    TimedOut,
)
from telegram.warnings import PTBDeprecationWarning

from bot.ports import PermanentDeliveryError, TransientDeliveryError

NOT_MODIFIED = "message is not modified"
GONE_MESSAGE = ("message to edit not found", "message to delete not found", "message_id_invalid")


def retry_seconds(exc: RetryAfter) -> float:
    with warnings.catch_warnings():  # an int now, a timedelta in a later major version
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        value = exc.retry_after
    if isinstance(value, timedelta):
        return max(value.total_seconds(), 0.0)
    return max(float(value), 0.0)


def brief(text: str, limit: int = 160) -> str:
    """One short line of an error for the store, a log or an admin notice: a proxy's page
    that python-telegram-bot quotes whole ("Parsing the server response b'<html>...'") loses
    its tags and is cut, as no admin needs the page."""
    plain = " ".join(re.sub(r"<[^>]*>?", " ", text).split())
    return plain if len(plain) <= limit else plain[: limit - 1] + "…"


def classify(exc: TelegramError, method: str, chat: str) -> Exception:
    """The dispatcher's error for a failed call: transient (retry) or permanent (park)."""
    text = exc.message if isinstance(exc.message, str) else str(exc)
    lowered = text.lower()
    if isinstance(exc, RetryAfter):
        seconds = retry_seconds(exc)
        return TransientDeliveryError(
            f"Telegram asked to slow down in {chat}; retrying after {seconds:g} s", seconds
        )
    if isinstance(exc, ChatMigrated):
        new = exc.new_chat_id
        return PermanentDeliveryError(
            f"group {chat} became a supergroup with id {new}: subscribe telegram:{new}/{new} "
            "instead (strikebot subscriptions add), or /subscribe there again"
        )
    if isinstance(exc, Forbidden):
        return PermanentDeliveryError(
            f"{text}: the bot cannot post in {chat} any more (removed, blocked or without the "
            "right to post). Add it back, then run `strikebot deliveries retry`."
        )
    if isinstance(exc, InvalidToken):
        return PermanentDeliveryError(
            f"{text}: Telegram refused TELEGRAM_BOT_TOKEN. Copy the token from @BotFather "
            "again and restart."
        )
    if isinstance(exc, BadRequest):
        if "chat not found" in lowered or "thread not found" in lowered:
            return PermanentDeliveryError(
                f"{text}: Telegram has no chat {chat} the bot can see. Check the address, add "
                "the bot to the chat, or unsubscribe it."
            )
        if any(gone in lowered for gone in GONE_MESSAGE):
            return PermanentDeliveryError(
                f"{text}: the message in {chat} is gone (deleted in Telegram); nothing to change"
            )
        return PermanentDeliveryError(
            f"{text}: Telegram refused {method} for {chat}; retrying will not help. If this "
            "keeps happening, report it with this error."
        )
    if isinstance(exc, TimedOut | NetworkError):
        return TransientDeliveryError(
            f"Telegram {method} to {chat} failed ({brief(text)}); will retry"
        )
    return TransientDeliveryError(f"Telegram {method} to {chat} failed ({text}); will retry")
