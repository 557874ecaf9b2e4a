"""The Telegram adapter: python-telegram-bot's `Application` for what people send, the Bot
API's sendMessage / editMessageText for what we push.

How updates arrive (`[telegram] mode`, default "auto"):
- Long polling (no public address): one instance calls getUpdates. Telegram answers a second
  poller with 409 Conflict, so run one instance in this mode.
- Webhook (TELEGRAM_WEBHOOK_URL set): Telegram POSTs each update to `/telegram/webhook` on
  the bot's own web server with `X-Telegram-Bot-Api-Secret-Token`; any number of instances
  behind a load balancer (each update is handled once: see `_inbound`). Every instance
  calls setWebhook at start, which is idempotent.

Delivery. The dispatcher paces by `pacing` (about 30 messages/s for the bot, 20 a minute
into one chat); a 429 raises `TransientDeliveryError` with Telegram's `retry_after`, and the
chat is held back here too (its topics share the chat's limit). A chat the bot was removed
from, or that no longer exists, is a `PermanentDeliveryError`: the dispatcher parks the
channel and tells the admins. Copies are edited in place (editMessageText) for edits and
retractions. Like Slack, sendMessage takes no idempotency key: a crash between Telegram
accepting a post and the commit that records its message id posts it again on retry.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from aiohttp import web
from telegram import BotCommand, BotCommandScopeChat, LinkPreviewOptions
from telegram import Update as TgUpdate
from telegram.constants import ParseMode
from telegram.error import BadRequest, InvalidToken, NetworkError, TelegramError
from telegram.ext import Application, ApplicationBuilder
from telegram.request import HTTPXRequest

from adapters.telegram._errors import NOT_MODIFIED, brief, classify
from adapters.telegram._forms import KIND, Forms
from adapters.telegram._inbound import ALLOWED_UPDATES, Inbound
from adapters.telegram._people import Membership
from adapters.telegram._render import render
from adapters.telegram._settings import (
    DEFAULT_API_BASE,
    NAME,
    WEBHOOK_PATH,
    TelegramAdmins,
    TelegramDelivery,
    TelegramSection,
    TelegramSettings,
)
from adapters.telegram._words import ADMIN_COMMANDS, MEMBER_COMMANDS, word
from bot.ports import (
    LOCALIZED_NAMES,
    ChannelRef,
    ConfigError,
    OutboundMessage,
    Pacing,
    PermanentDeliveryError,
    PluginContext,
    TransientDeliveryError,
)

# What python-telegram-bot raises on an answer that is not the Bot API's shape.
UNREADABLE = (KeyError, TypeError, AttributeError, ValueError)
log = logging.getLogger("strikebot.telegram")

REQUEST_TIMEOUT = 10.0
POLL_TIMEOUT = 25  # seconds getUpdates waits for something to happen
NO_PREVIEW = LinkPreviewOptions(is_disabled=True)

TgApplication = Application[Any, Any, Any, Any, Any, Any]


def bot_api_base(base: str | None) -> str:
    """TELEGRAM_API_BASE (a local Bot API server, a fake) as python-telegram-bot's base_url."""
    root = (base or DEFAULT_API_BASE).rstrip("/")
    return root + "/bot{token}"


def connection_mode(configured: str, settings: TelegramSettings) -> str:
    """ "polling" or "webhook", or a ConfigError saying what to set."""
    if configured == "webhook" or (configured == "auto" and settings.webhook_url):
        if not settings.webhook_url:
            raise ConfigError(
                'Telegram is set to webhook mode ([telegram] mode = "webhook") but '
                "TELEGRAM_WEBHOOK_URL is empty. Set it to the public https://.../telegram/webhook "
                "address of this server."
            )
        if (
            not settings.webhook_url.startswith("https://")
            and "127.0.0.1" not in settings.webhook_url
        ):
            raise ConfigError(
                "TELEGRAM_WEBHOOK_URL must start with https:// (Telegram sends webhooks over "
                "HTTPS only)."
            )
        return "webhook"
    return "polling"


class TelegramAdapter:
    """`bot.ports.Adapter` for Telegram, plus the commands and the admin forms."""

    platform = NAME

    def __init__(
        self,
        ctx: PluginContext,
        *,
        request_timeout: float = REQUEST_TIMEOUT,
        poll_timeout: int = POLL_TIMEOUT,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        settings = ctx.settings_as(TelegramSettings)
        if settings.bot_token is None:
            raise ConfigError(
                "TELEGRAM_BOT_TOKEN is empty. Create a bot with @BotFather and set its token."
            )
        self.ctx = ctx
        self.settings = settings
        self.monotonic = monotonic  # the clock Telegram's retry_after pauses are kept on
        self.delivery = ctx.delivery_as(TelegramDelivery)
        self.mode = connection_mode(ctx.section_as(TelegramSection).mode, settings)
        self.poll_timeout = poll_timeout
        self.secret = settings.derived_secret()
        # httpx reports every request at INFO, token in the URL: keep it to warnings.
        logging.getLogger("httpx").setLevel(logging.WARNING)
        builder = (
            ApplicationBuilder()
            .token(settings.bot_token.get_secret_value())
            .base_url(bot_api_base(settings.api_base))
            .request(_request(request_timeout))
            .get_updates_request(_request(request_timeout + poll_timeout))
            .concurrent_updates(16)
        )
        if self.mode == "webhook":
            builder = builder.updater(None)
        self.application: TgApplication = builder.build()
        self.bot = self.application.bot
        admins = ctx.admin_rule_as(TelegramAdmins)
        self.membership = Membership(self.bot, admins.admin_chat_ids)
        self.forms = Forms(ctx)
        self.inbound = Inbound(ctx, self.membership, self.forms)
        self.inbound.register(self.application)
        self._started = False
        self._connected = False
        self._username: str | None = None
        self._last_error: str | None = None
        self._blocked_until: dict[str, float] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    # ------------------------------------------------------------------ lifecycle

    @property
    def pacing(self) -> Pacing:
        return self.delivery.pacing()

    async def start(self) -> None:
        """Check the token (getMe), register the command menus, start receiving updates.
        A refused token stops start-up with a sentence; an unreachable Telegram is logged
        and retried in the background."""
        try:
            await self.application.initialize()
        except InvalidToken:
            raise ConfigError(
                "Telegram refused TELEGRAM_BOT_TOKEN. Copy the token from @BotFather "
                "(/mybots → your bot → API Token) and set it again."
            ) from None
        except (NetworkError, TelegramError) as exc:
            self._last_error = str(exc)
            log.warning("Telegram is unreachable (%s); retrying in the background", exc)
            self._spawn(self._later(self.application.initialize, then=self._begin))
            return
        await self._begin()

    async def _later(
        self, step: Callable[[], Awaitable[object]], *, then: Callable[[], Awaitable[None]]
    ) -> None:
        """`step` again until Telegram takes it (after 2 s, then twice as long each time, at
        most 2 minutes apart), then `then`."""
        delay = 2.0
        while True:
            await asyncio.sleep(delay)
            try:
                await step()
            except TelegramError as exc:
                self._last_error = str(exc)
                delay = min(delay * 2, 120.0)
                continue
            await then()
            return

    async def _begin(self) -> None:
        self._username = self.bot.username
        self._connected = True
        self._last_error = None
        await self.application.start()
        self._started = True
        await self._register_menus()
        try:
            await self._receive()
        except TelegramError as exc:  # a hiccup: deliveries go on, and this is retried
            self._last_error = str(exc)
            log.warning("Telegram refused to start sending updates (%s); retrying", exc)
            self._spawn(self._later(self._receive, then=self._receiving))
            return
        await self._receiving()

    async def _receiving(self) -> None:
        log.info("Telegram: connected as @%s (%s mode)", self._username, self.mode)

    async def _receive(self) -> None:
        """setWebhook (webhook mode) or start long polling."""
        if self.mode == "webhook":
            assert self.settings.webhook_url is not None
            await self.bot.set_webhook(
                self.settings.webhook_url,
                secret_token=self.secret,
                allowed_updates=list(ALLOWED_UPDATES),
            )
            return
        assert self.application.updater is not None
        await self.application.updater.start_polling(
            timeout=self.poll_timeout,
            allowed_updates=list(ALLOWED_UPDATES),
            error_callback=self._poll_error,
        )

    def _poll_error(self, exc: TelegramError) -> None:
        self._last_error = str(exc)
        log.warning("Telegram getUpdates failed (%s); retrying", exc)

    async def stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._started:
            updater = self.application.updater
            if updater is not None and updater.running:
                with contextlib.suppress(TelegramError, RuntimeError):
                    await updater.stop()
            with contextlib.suppress(TelegramError, RuntimeError):
                await self.application.stop()
            self._started = False
        with contextlib.suppress(TelegramError, RuntimeError):
            await self.application.shutdown()

    def health(self) -> Mapping[str, object]:
        state: dict[str, object] = {
            "connected": self._connected,
            "mode": self.mode,
            "bot": self._username,
        }
        if self.mode == "polling":
            updater = self.application.updater
            state["polling"] = bool(updater is not None and updater.running)
        now = self.monotonic()
        limited = {chat: round(u - now, 1) for chat, u in self._blocked_until.items() if u > now}
        if limited:
            state["rate_limited_s"] = limited
        if self._last_error:
            state["last_error"] = self._last_error
        return state

    def _spawn(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _register_menus(self) -> None:
        """setMyCommands: the members' commands in each language (by the user's app
        language), and the admin commands too in each listed admin's private chat."""
        campaign = self.ctx.campaign
        for index, language in enumerate(campaign.languages):
            commands = menu(language, MEMBER_COMMANDS)
            try:
                await self.bot.set_my_commands(commands, language_code=language)
                if index == 0:  # everyone else sees the campaign's first language
                    await self.bot.set_my_commands(commands)
            except TelegramError as exc:
                log.warning("setMyCommands (%s) failed: %s", language, exc)
        admins = self.ctx.admin_rule_as(TelegramAdmins)
        everything = MEMBER_COMMANDS + ADMIN_COMMANDS
        for user_id in admins.user_ids:
            if not user_id.lstrip("-").isdigit():
                continue
            for language in campaign.languages:
                try:
                    await self.bot.set_my_commands(
                        menu(language, everything),
                        scope=BotCommandScopeChat(int(user_id)),
                        language_code=language,
                    )
                except TelegramError as exc:  # they have not opened a chat with the bot yet
                    log.info("admin menu for %s not set: %s", user_id, exc)
                    break

    # ------------------------------------------------------------------ webhook mode

    def mount(self, app: web.Application) -> None:
        """Add POST /telegram/webhook to the bot's web server (webhook mode only)."""
        if self.mode != "webhook":
            log.info("Telegram uses long polling; %s is not served", WEBHOOK_PATH)
            return
        app.router.add_post(WEBHOOK_PATH, self.handle_webhook)

    async def handle_webhook(self, request: web.Request) -> web.Response:
        given = request.headers.get("X-Telegram-Bot-Api-Secret-Token", "")
        if not hmac.compare_digest(given.encode(), self.secret.encode()):
            return web.json_response({"ok": False, "error": "bad secret token"}, status=401)
        try:
            data = json.loads(await request.read())
            if not isinstance(data, dict):
                raise TypeError(f"a JSON object is expected, not {type(data).__name__}")
            update = TgUpdate.de_json(data, self.bot)
            if update is None:
                raise ValueError("empty update")
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
            # Anything that is not an Update, even behind the right secret: a 400, never a
            # 500 (python-telegram-bot raises AttributeError/TypeError on a wrong shape).
            reason = " ".join(str(exc).split())[:120]
            return web.json_response({"ok": False, "error": f"not an update: {reason}"}, status=400)
        if not self._started:  # not connected yet: Telegram will deliver it again
            return web.json_response({"ok": False, "error": "starting"}, status=503)
        await self.application.process_update(update)
        return web.json_response({"ok": True})

    # ------------------------------------------------------------------ outbound

    async def send(
        self, channel: ChannelRef, message: OutboundMessage, *, idempotency_key: str
    ) -> str:
        """sendMessage; returns the message id (what edits need)."""
        self._check_blocked(channel)
        chat = _chat_id(channel.workspace)
        thread = None if channel.channel == channel.workspace else int(channel.channel)
        try:
            sent = await self.bot.send_message(
                chat,
                render(message),
                parse_mode=ParseMode.HTML,
                link_preview_options=NO_PREVIEW,
                message_thread_id=thread,
            )
        except TelegramError as exc:
            raise self._failure(exc, "sendMessage", channel) from None
        except UNREADABLE as exc:
            raise self._unreadable(exc, "sendMessage", channel) from None
        self._ok()
        return str(sent.message_id)

    async def edit(self, channel: ChannelRef, message_id: str, message: OutboundMessage) -> None:
        """editMessageText: the copy changes in place (a retraction too)."""
        self._check_blocked(channel)
        try:
            await self.bot.edit_message_text(
                render(message),
                chat_id=_chat_id(channel.workspace),
                message_id=int(message_id),
                parse_mode=ParseMode.HTML,
                link_preview_options=NO_PREVIEW,
            )
        except BadRequest as exc:
            if NOT_MODIFIED in str(exc).lower():
                return  # already reads this way: what we wanted
            raise self._failure(exc, "editMessageText", channel) from None
        except TelegramError as exc:
            raise self._failure(exc, "editMessageText", channel) from None
        except UNREADABLE as exc:
            raise self._unreadable(exc, "editMessageText", channel) from None
        self._ok()

    async def delete(self, channel: ChannelRef, message_id: str) -> None:
        try:
            await self.bot.delete_message(_chat_id(channel.workspace), int(message_id))
        except BadRequest as exc:
            if "not found" in str(exc).lower():
                return  # already gone
            raise self._failure(exc, "deleteMessage", channel) from None
        except TelegramError as exc:
            raise self._failure(exc, "deleteMessage", channel) from None
        except UNREADABLE as exc:
            raise self._unreadable(exc, "deleteMessage", channel) from None

    def _unreadable(
        self, exc: Exception, method: str, channel: ChannelRef
    ) -> TransientDeliveryError:
        """An answer python-telegram-bot could not read as the Bot API's (a 200 whose body
        says `"ok": false`, a proxy's page): it raises KeyError or TypeError, not a
        TelegramError. Nothing says the chat is unusable, so it is retried."""
        self._last_error = f"{type(exc).__name__}: {exc}"
        return TransientDeliveryError(
            f"Telegram {method} to {channel.workspace} got an answer it could not read "
            f"({type(exc).__name__}: {brief(str(exc))}), perhaps from a proxy; will retry"
        )

    def _check_blocked(self, channel: ChannelRef) -> None:
        left = self._blocked_until.get(channel.workspace, 0.0) - self.monotonic()
        if left > 0:
            raise TransientDeliveryError(
                f"Telegram asked for a pause in {channel.workspace}; {left:.1f} s left", left
            )

    def _ok(self) -> None:
        self._connected = True
        self._last_error = None

    def _failure(self, exc: TelegramError, method: str, channel: ChannelRef) -> Exception:
        error = classify(exc, method, channel.workspace)
        self._last_error = str(exc)
        if isinstance(error, TransientDeliveryError) and error.retry_after is not None:
            self._blocked_until[channel.workspace] = self.monotonic() + error.retry_after
        if isinstance(error, PermanentDeliveryError):
            log.warning("Telegram %s to %s refused: %s", method, channel.workspace, exc)
        return error


def menu(language: str, names: tuple[str, ...]) -> list[BotCommand]:
    localized = LOCALIZED_NAMES[language]
    return [BotCommand(localized[name], word(language, f"menu_{name}")[:256]) for name in names]


def _chat_id(value: str) -> int | str:
    return int(value) if value.lstrip("-").isdigit() else value


def _request(timeout: float) -> HTTPXRequest:
    return HTTPXRequest(
        connection_pool_size=32,
        read_timeout=timeout,
        write_timeout=timeout,
        connect_timeout=min(timeout, 10.0),
        pool_timeout=timeout,
    )


__all__ = ["KIND", "TelegramAdapter", "bot_api_base", "connection_mode", "menu"]
