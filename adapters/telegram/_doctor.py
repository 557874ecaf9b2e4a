"""`strikebot doctor` for Telegram: is the bot token valid, and can the bot post in every
subscribed group, topic and channel?

`getMe` checks the token; per chat, `getChat` (a chat the bot was removed from, or never
added to, answers 403 or "chat not found") and `getChatMember` for the bot itself: in a
channel it must be an administrator allowed to post; in a group it must not be restricted
from sending messages.
"""

from __future__ import annotations

from collections.abc import Sequence

from telegram import Bot, ChatMemberAdministrator, ChatMemberRestricted
from telegram.constants import ChatType
from telegram.error import Forbidden, InvalidToken, NetworkError, TelegramError
from telegram.request import HTTPXRequest

from adapters.telegram._adapter import bot_api_base
from adapters.telegram._settings import NAME, TelegramSettings
from bot.ports import Check, DoctorRequest, Subscription, Verdict

GONE = {"left", "kicked"}


async def doctor(request: DoctorRequest) -> Sequence[Check]:
    settings = request.settings
    assert isinstance(settings, TelegramSettings)
    if settings.bot_token is None:
        return []
    bot = Bot(
        settings.bot_token.get_secret_value(),
        base_url=bot_api_base(settings.api_base),
        request=HTTPXRequest(connect_timeout=10, read_timeout=10),
    )
    try:
        await bot.initialize()  # getMe
    except InvalidToken:
        return [
            Check(NAME, "token", Verdict.FAIL, "Telegram refused TELEGRAM_BOT_TOKEN",
                  "Ask @BotFather for the token (/token), and set it as TELEGRAM_BOT_TOKEN.")
        ]  # fmt: skip
    except (NetworkError, TelegramError) as exc:
        return [
            Check(NAME, "reachable", Verdict.FAIL,
                  f"could not reach the Bot API ({type(exc).__name__})",
                  "Check this machine's internet access (or TELEGRAM_API_BASE).")
        ]  # fmt: skip
    try:
        checks = [Check(NAME, "token", Verdict.OK, f"valid: the bot is @{bot.username}")]
        for sub in request.channels:
            checks.append(await _chat(bot, sub))
        return checks
    finally:
        await bot.shutdown()


async def _chat(bot: Bot, sub: Subscription) -> Check:
    subject = sub.address
    ref = int(sub.workspace) if sub.workspace.lstrip("-").isdigit() else sub.workspace
    add = "Add the bot to it again (a channel: as an administrator allowed to post)."
    try:
        chat = await bot.get_chat(ref)
        member = await bot.get_chat_member(chat.id, bot.id)
    except Forbidden:
        return Check(NAME, subject, Verdict.FAIL, "the bot was removed from this chat", add)
    except TelegramError as exc:
        gone = f"If the chat is gone: strikebot subscriptions remove {sub.id}."
        return Check(NAME, subject, Verdict.FAIL, f"Telegram answered: {exc.message}",
                     f"{add} {gone}")  # fmt: skip
    name = chat.title or chat.username or str(chat.id)
    if member.status in GONE:
        return Check(NAME, subject, Verdict.FAIL, f"the bot is not in {name}", add)
    if chat.type == ChatType.CHANNEL:
        if not isinstance(member, ChatMemberAdministrator) or not member.can_post_messages:
            return Check(NAME, subject, Verdict.FAIL,
                         f"in the channel {name} the bot may not post",
                         "Channel → Administrators → the bot: allow Post Messages.")  # fmt: skip
    elif isinstance(member, ChatMemberRestricted) and not member.can_send_messages:
        fix = "Group → Permissions (or the bot's exceptions): allow it to send messages."
        return Check(NAME, subject, Verdict.FAIL, f"the bot is muted in {name}", fix)
    return Check(NAME, subject, Verdict.OK, f"can post in {name}")
