"""Telegram updates in, `bot.commands` calls, HTML replies out. A translation table.

Commands. `/status`, `/demands`, `/demand pay`, `/timeline 5`, `/next`, `/help` and their
Spanish names (`/estado`, `/demandas`, `/demanda`, `/cronologia`, `/siguiente`, `/ayuda`),
`/strike status` too, and `/start` (Telegram's first command) as help. `/status@OtherBot`
is left to the other bot; in a group an unknown command is too (it may be another bot's).

Who. An `Actor` with the sender's Telegram user id, and as roles the chats of `[admins.
telegram] admin_chat_ids` they administer (getChatMember, cached). A post in a channel, or
by an anonymous group admin, comes from the chat itself: only its administrators can write
so, so the chat's id is their role.

Where. workspace = the chat id; channel = the forum topic's id, or the chat id again for the
whole chat (`telegram:-1001234567890/-1001234567890`).

Once. Each update is handled once across every instance: its `update_id` is recorded in the
store's `processed_events` first, and a repeat (Telegram retrying a webhook, a second
instance) is dropped.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from telegram import (
    Chat,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    LinkPreviewOptions,
    Message,
    ReplyParameters,
)
from telegram import Update as TgUpdate
from telegram.constants import ChatType, ParseMode
from telegram.error import TelegramError
from telegram.ext import (
    Application,
    ApplicationHandlerStop,
    CallbackQueryHandler,
    MessageHandler,
    TypeHandler,
    filters,
)

from adapters.telegram._forms import Buttons, Forms, Prompt, wants_form
from adapters.telegram._people import Membership
from adapters.telegram._render import esc, reply_text
from adapters.telegram._settings import NAME
from adapters.telegram._words import word
from bot.ports import (
    Actor,
    CommandContext,
    NotAllowed,
    OutboundMessage,
    PluginContext,
    Reply,
    command_named,
    i18n,
    is_command_prefix,
    say,
)

log = logging.getLogger("strikebot.telegram")

READ_ONLY = frozenset({"status", "demands", "demand", "timeline", "next", "help"})
FORMS = frozenset({"post", "edit", "retract", "approve"})
NO_PREVIEW = LinkPreviewOptions(is_disabled=True)
ALLOWED_UPDATES = ("message", "channel_post", "callback_query")


def where(chat: Chat, message: Message | None) -> tuple[str, str]:
    """(workspace, channel) of a message: the chat, and the forum topic or the chat."""
    thread = message.message_thread_id if message is not None and message.is_topic_message else None
    return str(chat.id), str(thread) if thread else str(chat.id)


def keyboard(buttons: Buttons) -> InlineKeyboardMarkup | None:
    if not buttons:
        return None
    return InlineKeyboardMarkup(
        [
            [InlineKeyboardButton(label[:64], callback_data=data) for label, data in row]
            for row in buttons
        ]
    )


class Inbound:
    """The handlers registered on the adapter's `Application`."""

    def __init__(self, ctx: PluginContext, membership: Membership, forms: Forms) -> None:
        self.ctx = ctx
        self.commands = ctx.commands
        self.membership = membership
        self.forms = forms

    def register(self, application: Application[Any, Any, Any, Any, Any, Any]) -> None:
        application.add_handler(TypeHandler(TgUpdate, self.once), group=-1)
        application.add_handler(CallbackQueryHandler(self.on_button), group=0)
        application.add_handler(
            MessageHandler(
                filters.TEXT & (filters.UpdateType.MESSAGE | filters.UpdateType.CHANNEL_POST),
                self.on_message,
            ),
            group=0,
        )
        application.add_error_handler(self.on_error)

    # ------------------------------------------------------------------ once

    async def once(self, update: TgUpdate, context: Any) -> None:
        if not await self.ctx.first_time(f"update:{update.update_id}"):
            log.info("Telegram delivered update %s again; it was already handled", update.update_id)
            raise ApplicationHandlerStop

    async def on_error(self, update: object, context: Any) -> None:
        log.error("handling a Telegram update failed", exc_info=context.error)

    # ------------------------------------------------------------------ who

    async def context_of(self, update: TgUpdate, *, admin_action: bool) -> CommandContext:
        chat = update.effective_chat
        message = update.effective_message
        assert chat is not None
        user = update.effective_user
        sender_chat = message.sender_chat if message is not None else None
        if user is None or (sender_chat is not None and sender_chat.id == chat.id):
            # A channel post, or an anonymous admin of the group: the chat speaks.
            actor = Actor(NAME, str(chat.id), chat.title or "", frozenset({str(chat.id)}))
            locale = None
        else:
            roles: frozenset[str] = frozenset()
            if admin_action and not self.ctx.admins.allows(Actor(NAME, str(user.id))):
                roles = await self.membership.admin_chats_of(user.id)
            actor = Actor(NAME, str(user.id), user.full_name, roles)
            locale = user.language_code
        workspace, channel = where(chat, message)
        return CommandContext(NAME, actor, workspace, channel, locale=locale)

    def language(self, update: TgUpdate) -> str:
        user = update.effective_user
        code = (user.language_code or "") if user is not None else ""
        if code and i18n.pick(code) == code.split("-")[0].lower():
            return i18n.pick(code)
        return i18n.pick(self.ctx.campaign.default_language)

    # ------------------------------------------------------------------ messages

    async def on_message(self, update: TgUpdate, context: Any) -> None:
        message = update.effective_message
        chat = update.effective_chat
        if message is None or chat is None or not message.text:
            return
        text = message.text.strip()
        if not text.startswith("/"):
            if chat.type == ChatType.PRIVATE and update.effective_user is not None:
                prompt = await self.forms.answer_text(chat.id, update.effective_user.id, text)
                if prompt is not None:
                    await self.show(context.bot, chat.id, prompt, reply_to=message)
            return
        head, _, rest = text.partition(" ")
        if "\n" in head:
            head, _, more = head.partition("\n")
            rest = f"{more} {rest}".strip()
        name, _, addressed = head[1:].partition("@")
        if addressed and addressed.lower() != (context.bot.username or "").lower():
            return  # another bot's command
        await self.command(update, context.bot, name.lower(), rest.strip())

    async def command(self, update: TgUpdate, bot: Any, name: str, rest: str) -> None:
        chat = update.effective_chat
        message = update.effective_message
        assert chat is not None and message is not None
        private = chat.type == ChatType.PRIVATE
        user = update.effective_user
        lang = self.language(update)
        if is_command_prefix(name):  # the other platforms' form: /strike status
            head, _, rest = rest.partition(" ")
            name, rest = head.lower() or "help", rest.strip()
        if name == "start":
            name = "help"
        if private and user is not None and name in ("cancel", "skip"):
            if name == "cancel":
                await self.forms.cancel(chat.id)
                await self.show(bot, chat.id, Prompt(word(lang, "cancelled")), reply_to=message)
                return
            prompt = await self.forms.skip(chat.id, user.id)
            await self.show(bot, chat.id, prompt or Prompt(word(lang, "no_form")), reply_to=message)
            return
        canonical = command_named(name)
        if canonical is None and not private:
            return  # perhaps another bot's command, in a group
        ctx = await self.context_of(update, admin_action=canonical not in READ_ONLY)
        if canonical in FORMS:
            if not private:
                link = f"https://t.me/{bot.username}" if bot.username else "@" + str(bot.id)
                text = word(lang, "private_only", link=link, command=f"/{name}")
                await self.show(bot, chat.id, Prompt(esc(text)), reply_to=message, html=True)
                return
            if wants_form(canonical, rest) and user is not None:
                try:
                    self.ctx.admins.require(ctx.actor, f"{canonical} updates")
                except NotAllowed as exc:
                    await self.reply(bot, message, _refusal(exc, lang))
                    return
                prompt = await self.forms.open(chat.id, ctx.actor, canonical, rest, lang)
                await self.show(bot, chat.id, prompt, reply_to=message)
                return
        if private and canonical in ("subscribe", "unsubscribe"):
            await self.subscribe_elsewhere(bot, message, ctx, name, rest, lang)
            return
        reply = await self.commands.handle(ctx, f"{name} {rest}".strip())
        await self.reply(bot, message, reply)

    async def subscribe_elsewhere(
        self, bot: Any, message: Message, ctx: CommandContext, name: str, rest: str, lang: str
    ) -> None:
        """`/subscribe @channel language=es` in a private chat: a channel has nobody to type
        there, so an admin subscribes it from here. The bot must administer it."""
        target, _, options = rest.partition(" ")
        if not target.startswith("@") and not target.lstrip("-").isdigit():
            await self.show(
                bot, message.chat.id, Prompt(word(lang, "subscribe_where")), reply_to=message
            )
            return
        chat_ref: int | str = int(target) if target.lstrip("-").isdigit() else target
        try:
            chat = await bot.get_chat(chat_ref)
            me = await bot.get_chat_member(chat.id, bot.id)
        except TelegramError:
            text = word(lang, "chat_unknown", chat=target)
            await self.show(bot, message.chat.id, Prompt(text), reply_to=message)
            return
        if me.status != "administrator":
            text = word(lang, "bot_not_admin", chat=target)
            await self.show(bot, message.chat.id, Prompt(text), reply_to=message)
            return
        there = replace(ctx, workspace=str(chat.id), channel=str(chat.id))
        reply = await self.commands.handle(there, f"{name} {options}".strip())
        await self.reply(bot, message, reply)

    # ------------------------------------------------------------------ buttons

    async def on_button(self, update: TgUpdate, context: Any) -> None:
        query = update.callback_query
        if query is None or query.message is None or not isinstance(query.data, str):
            return
        chat_id = query.message.chat.id
        ctx = await self.context_of(update, admin_action=True)
        try:
            await query.answer()
        except TelegramError as exc:
            log.info("answerCallbackQuery failed: %s", exc)
        prompt = await self.forms.button(chat_id, query.from_user.id, query.data, ctx)
        await self.show(context.bot, chat_id, prompt, edit=query.message.message_id)

    # ------------------------------------------------------------------ answering

    async def reply(self, bot: Any, message: Message, reply: Reply) -> None:
        text = reply_text([reply.message, *reply.extra])
        await self._send(bot, message.chat.id, text, reply_to=message)

    async def show(
        self,
        bot: Any,
        chat_id: int,
        prompt: Prompt,
        *,
        reply_to: Message | None = None,
        edit: int | None = None,
        html: bool = False,
    ) -> None:
        """A form's next question, its preview with buttons, or a command's result."""
        if prompt.reply is not None:
            text = reply_text([prompt.reply.message, *prompt.reply.extra])
        else:
            intro = prompt.text if html else esc(prompt.text)
            text = reply_text(list(prompt.preview)) if prompt.preview else ""
            text = f"<i>{intro}</i>\n\n{text}" if text else intro
        markup = keyboard(prompt.buttons)
        if edit is not None:
            try:
                await bot.edit_message_text(
                    text,
                    chat_id=chat_id,
                    message_id=edit,
                    parse_mode=ParseMode.HTML,
                    reply_markup=markup,
                    link_preview_options=NO_PREVIEW,
                )
                return
            except TelegramError as exc:
                log.info("could not edit the form message (%s); sending anew", exc)
        await self._send(bot, chat_id, text, reply_to=reply_to, markup=markup)

    async def _send(
        self,
        bot: Any,
        chat_id: int,
        text: str,
        *,
        reply_to: Message | None = None,
        markup: InlineKeyboardMarkup | None = None,
    ) -> None:
        thread = (
            reply_to.message_thread_id
            if reply_to is not None and reply_to.is_topic_message
            else None
        )
        try:
            await bot.send_message(
                chat_id,
                text,
                parse_mode=ParseMode.HTML,
                link_preview_options=NO_PREVIEW,
                reply_markup=markup,
                message_thread_id=thread,
                reply_parameters=None
                if reply_to is None
                else ReplyParameters(reply_to.message_id, allow_sending_without_reply=True),
            )
        except TelegramError as exc:
            log.warning("could not answer in Telegram chat %s: %s", chat_id, exc)


def _refusal(exc: NotAllowed, lang: str) -> Reply:
    message = OutboundMessage(
        title=say(lang, "error_title_not_allowed"), body=exc.localized(lang), language=lang
    )
    return Reply(message, ephemeral=True, ok=False)
