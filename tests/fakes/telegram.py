"""A fake Telegram Bot API on 127.0.0.1 that the real python-telegram-bot talks to in tests.

What it serves, at `/bot<token>/<method>` (form-encoded or JSON arguments, JSON answers
shaped like the Bot API's: `{"ok": true, "result": ...}` or `{"ok": false, "error_code",
"description", "parameters"}`):
- getMe, getUpdates (long polling with `offset` and `timeout`; 409 while a webhook is set),
  setWebhook / deleteWebhook / getWebhookInfo, sendMessage, editMessageText, deleteMessage,
  setMyCommands / getMyCommands (per scope and language_code), getChat, getChatMember,
  getChatAdministrators, answerCallbackQuery.
- Telegram's rules, refused the way Telegram refuses them: HTML that does not parse ("can't
  parse entities"), more than 4096 characters of text, an empty text, a command name that is
  not 1-32 of a-z0-9_, an edit that changes nothing ("message is not modified").
- Its limits: 20 messages a minute into one group or channel, 30 a second overall; past
  them a 429 with `parameters.retry_after`.
- Chats the bot was removed from (403 "bot was kicked"), chats that do not exist (400 "chat
  not found"), and injected failures: any status with a JSON, HTML or plain-text body, a
  429, or a request that hangs.
- Webhook delivery: with a webhook set, new updates are POSTed to it with the secret header.
- `pings(chat)`: the @mentions Telegram *would* turn into notifications in what was posted.
"""

from __future__ import annotations

import asyncio
import html
import itertools
import json
import math
import re
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web

from tests.fakes._server import serve

TOKEN = "123456:TEST-telegram-token"
BOT_ID = 123456
BOT_USERNAME = "utla_strike_bot"
TEXT_MAX = 4096
GROUP_PER_MINUTE = 20
GLOBAL_PER_SECOND = 30
ALLOWED_TAGS = {"b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "a", "code", "pre",
                "tg-spoiler", "span", "blockquote", "tg-emoji"}  # fmt: skip
JSON_ARGS = {"reply_markup", "link_preview_options", "reply_parameters", "commands", "scope",
             "allowed_updates", "entities"}  # fmt: skip
INT_ARGS = {"message_id", "message_thread_id", "user_id", "offset", "limit", "timeout"}
_TAG = re.compile(r"<(/?)([a-zA-Z-]+)([^>]*)>")
_ENTITY = re.compile(r"&(?:lt|gt|amp|quot|#\d+|#x[0-9a-fA-F]+);")
_MENTION = re.compile(r"(?<![\w@])@([A-Za-z][A-Za-z0-9_]{4,31})\b")
_COMMAND = re.compile(r"^/[A-Za-z0-9_]+(?:@[A-Za-z0-9_]+)?")


class ApiError(Exception):
    def __init__(self, status: int, description: str, **parameters: Any) -> None:
        super().__init__(description)
        self.status = status
        self.description = description
        self.parameters = parameters


@dataclass(slots=True)
class Failure:
    method: str
    status: int
    body: str
    content_type: str
    times: int | None
    chat: str | None
    hang: bool
    reset: bool = False  # drop the connection without an answer
    lose_answer: bool = False  # carry the call out, then drop the connection unanswered


@dataclass(slots=True)
class Chat:
    id: int
    type: str  # private | group | supergroup | channel
    title: str = ""
    username: str | None = None
    member: bool = True  # is the bot in it?
    bot_status: str = "member"  # the bot's status there: member | administrator
    members: dict[int, str] = field(default_factory=dict)  # user id -> status
    messages: dict[int, dict[str, Any]] = field(default_factory=dict)
    next_id: int = 1
    kicked_reason: str = "Forbidden: bot was kicked from the group chat"

    def json(self) -> dict[str, Any]:
        shown: dict[str, Any] = {"id": self.id, "type": self.type}
        if self.type == "private":
            shown["first_name"] = self.title or "Member"
        else:
            shown["title"] = self.title or f"chat {self.id}"
        if self.username:
            shown["username"] = self.username
        return shown


@dataclass(slots=True)
class Person:
    id: int
    first_name: str
    language_code: str = "en"
    username: str | None = None

    def json(self) -> dict[str, Any]:
        shown: dict[str, Any] = {
            "id": self.id,
            "is_bot": False,
            "first_name": self.first_name,
            "language_code": self.language_code,
        }
        if self.username:
            shown["username"] = self.username
        return shown


@dataclass(slots=True)
class Call:
    method: str
    args: dict[str, Any]
    status: int


class FakeTelegram:
    """`async with FakeTelegram() as tg:` then TELEGRAM_API_BASE=tg.base_url."""

    def __init__(self, *, token: str = TOKEN) -> None:
        self.token = token
        self.chats: dict[int, Chat] = {}
        self.people: dict[int, Person] = {}
        self.calls: list[Call] = []
        self.failures: list[Failure] = []
        self.commands: dict[tuple[str, str], list[dict[str, str]]] = {}
        self.webhook: dict[str, Any] | None = None
        self.webhook_answers: list[int] = []
        self.group_per_minute = GROUP_PER_MINUTE
        self.global_per_second = GLOBAL_PER_SECOND
        self._updates: list[dict[str, Any]] = []
        self._update_ids = itertools.count(1000)
        self._callback_ids = itertools.count(1)
        self._arrived = asyncio.Event()
        self._sent_by_chat: dict[int, deque[float]] = {}
        self._sent_all: deque[float] = deque()
        self._release = asyncio.Event()
        self._changed = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self._port = 0
        self._session: aiohttp.ClientSession | None = None

    # ------------------------------------------------------------------ lifecycle

    async def __aenter__(self) -> FakeTelegram:
        app = web.Application()
        app.router.add_route("*", "/bot{token}/{method}", self._api)
        self._runner, self._port = await serve(app, access_log=None)
        self._session = aiohttp.ClientSession()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._release.set()
        self._arrived.set()
        if self._session is not None:
            await self._session.close()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def base_url(self) -> str:
        """What TELEGRAM_API_BASE takes."""
        return f"http://127.0.0.1:{self._port}"

    # ------------------------------------------------------------------ the world

    def add_chat(
        self, chat_id: int, kind: str = "supergroup", title: str = "", *, admin: bool = False,
        username: str | None = None,
    ) -> Chat:  # fmt: skip
        chat = Chat(
            chat_id, kind, title, username, bot_status="administrator" if admin else "member"
        )
        self.chats[chat_id] = chat
        return chat

    def add_person(
        self, user_id: int, name: str, *, language: str = "en", username: str | None = None
    ) -> Person:
        person = Person(user_id, name, language, username)
        self.people[user_id] = person
        if user_id not in self.chats:
            self.add_chat(user_id, "private", name)
        return person

    def kick(
        self, chat_id: int, reason: str = "Forbidden: bot was kicked from the group chat"
    ) -> None:
        self.chats[chat_id].member = False
        self.chats[chat_id].kicked_reason = reason

    def fail(
        self,
        method: str,
        status: int = 500,
        body: str = '{"ok": false, "error_code": 500, "description": "Internal Server Error"}',
        *,
        content_type: str = "application/json",
        times: int | None = 1,
        chat: int | None = None,
        hang: bool = False,
        reset: bool = False,
        lose_answer: bool = False,
    ) -> None:
        self.failures.append(
            Failure(
                method, status, body, content_type, times, None if chat is None else str(chat),
                hang, reset, lose_answer,
            )
        )  # fmt: skip

    def rate_limit(self, method: str, retry_after: int, *, chat: int | None = None) -> None:
        body = json.dumps({
            "ok": False, "error_code": 429,
            "description": f"Too Many Requests: retry after {retry_after}",
            "parameters": {"retry_after": retry_after},
        })  # fmt: skip
        self.fail(method, 429, body, chat=chat)

    def messages(self, chat_id: int) -> list[dict[str, Any]]:
        return list(self.chats[chat_id].messages.values())

    def pings(self, chat_id: int) -> list[str]:
        """Usernames Telegram would notify from the texts posted in `chat_id`."""
        found: list[str] = []
        for message in self.messages(chat_id):
            found += _MENTION.findall(message["text"])
            found += re.findall(r"tg://user\?id=\d+", message.get("html", ""))
        return found

    async def until(self, check: Any, patience: float = 15.0) -> None:
        """Wait until `check()` holds; it is looked at after every API call and update."""
        async with asyncio.timeout(patience):
            while not check():
                self._changed.clear()
                await self._changed.wait()

    def sent(self, method: str) -> list[dict[str, Any]]:
        return [c.args for c in self.calls if c.method == method and c.status == 200]

    # ------------------------------------------------------------------ updates people send

    def command(
        self, chat_id: int, user_id: int | None, text: str, *, thread: int | None = None
    ) -> int:
        """Someone sends `text` in a chat (a channel post when `user_id` is None)."""
        chat = self.chats[chat_id]
        message = self._message(chat, text, user_id, thread)
        match = _COMMAND.match(text)
        if match:
            message["entities"] = [{"type": "bot_command", "offset": 0, "length": match.end()}]
        kind = "channel_post" if chat.type == "channel" else "message"
        return self.push({kind: message})

    def press(self, chat_id: int, user_id: int, message_id: int, data: str) -> int:
        """Someone taps an inline button under one of the bot's messages."""
        chat = self.chats[chat_id]
        shown = chat.messages[message_id]
        query = {
            "id": str(next(self._callback_ids)),
            "from": self.people[user_id].json(),
            "chat_instance": f"ci{chat_id}",
            "data": data,
            "message": {k: v for k, v in shown.items() if k != "html"},
        }
        return self.push({"callback_query": query})

    def push(self, payload: dict[str, Any]) -> int:
        update_id = next(self._update_ids)
        update = {"update_id": update_id, **payload}
        self._updates.append(update)
        self._arrived.set()
        self._changed.set()
        if self.webhook is not None:
            asyncio.get_running_loop().create_task(self._deliver_webhook(update))
        return update_id

    async def deliver_again(self, update_id: int) -> int:
        """Telegram retrying a webhook: the same update POSTed again."""
        update = next(u for u in self._updates if u["update_id"] == update_id)
        return await self._deliver_webhook(update)

    async def _deliver_webhook(self, update: dict[str, Any]) -> int:
        assert self.webhook is not None and self._session is not None
        headers = {}
        if self.webhook.get("secret_token"):
            headers["X-Telegram-Bot-Api-Secret-Token"] = self.webhook["secret_token"]
        async with self._session.post(self.webhook["url"], json=update, headers=headers) as r:
            self.webhook_answers.append(r.status)
            self._changed.set()
            return r.status

    def _message(
        self, chat: Chat, text: str, user_id: int | None, thread: int | None
    ) -> dict[str, Any]:
        message_id = chat.next_id
        chat.next_id += 1
        message: dict[str, Any] = {
            "message_id": message_id,
            "date": int(time.time()),
            "chat": chat.json(),
            "text": text,
        }
        if user_id is None:
            message["sender_chat"] = chat.json()
        else:
            message["from"] = self.people[user_id].json()
        if thread is not None:
            message["message_thread_id"] = thread
            message["is_topic_message"] = True
        chat.messages[message_id] = message
        return message

    # ------------------------------------------------------------------ the API

    async def _api(self, request: web.Request) -> web.StreamResponse:
        method = request.match_info["method"]
        args = await _arguments(request)
        if request.match_info["token"] != self.token:
            return self._answer(method, args, ApiError(401, "Unauthorized"))
        failure = self._failure_for(method, args)
        lose_answer = failure is not None and failure.lose_answer
        if failure is not None and not lose_answer:
            self.calls.append(Call(method, args, failure.status))
            if failure.hang:
                await self._release.wait()
            if failure.reset:
                if request.transport is not None:
                    request.transport.abort()
                return web.Response(status=500)
            return web.Response(status=failure.status, body=failure.body.encode(),
                                content_type=failure.content_type)  # fmt: skip
        handler = getattr(self, "_m_" + method.lower(), None)
        if handler is None:
            return self._answer(method, args, ApiError(404, "Not Found: method not found"))
        try:
            result = await handler(args)
        except ApiError as exc:
            return self._answer(method, args, exc)
        answer = self._answer(method, args, result)
        if lose_answer and request.transport is not None:
            request.transport.abort()  # carried out; the answer never leaves
            return web.Response(status=500)
        return answer

    def _answer(self, method: str, args: dict[str, Any], outcome: Any) -> web.Response:
        self._changed.set()
        if isinstance(outcome, ApiError):
            self.calls.append(Call(method, args, outcome.status))
            body: dict[str, Any] = {
                "ok": False, "error_code": outcome.status, "description": outcome.description,
            }  # fmt: skip
            if outcome.parameters:
                body["parameters"] = outcome.parameters
            return web.json_response(body, status=outcome.status)
        self.calls.append(Call(method, args, 200))
        return web.json_response({"ok": True, "result": outcome})

    def _failure_for(self, method: str, args: dict[str, Any]) -> Failure | None:
        for failure in self.failures:
            if failure.method != method:
                continue
            if failure.chat is not None and str(args.get("chat_id")) != failure.chat:
                continue
            if failure.times is not None:
                failure.times -= 1
                if failure.times <= 0:
                    self.failures.remove(failure)
            return failure
        return None

    def _chat(self, args: dict[str, Any]) -> Chat:
        ref = args.get("chat_id")
        chat = None
        if isinstance(ref, str) and ref.startswith("@"):
            chat = next((c for c in self.chats.values() if c.username == ref[1:]), None)
        elif ref is not None:
            chat = self.chats.get(int(ref))
        if chat is None:
            raise ApiError(400, "Bad Request: chat not found")
        if not chat.member:
            raise ApiError(403, chat.kicked_reason)
        return chat

    def _throttle(self, chat: Chat) -> None:
        now = time.monotonic()
        window = self._sent_all
        while window and now - window[0] >= 1.0:
            window.popleft()
        if len(window) >= self.global_per_second:
            wait = max(math.ceil(1.0 - (now - window[0])), 1)
            raise ApiError(429, f"Too Many Requests: retry after {wait}", retry_after=wait)
        if chat.type != "private":
            sent = self._sent_by_chat.setdefault(chat.id, deque())
            while sent and now - sent[0] >= 60.0:
                sent.popleft()
            if len(sent) >= self.group_per_minute:
                wait = max(math.ceil(60.0 - (now - sent[0])), 1)
                raise ApiError(429, f"Too Many Requests: retry after {wait}", retry_after=wait)
            sent.append(now)
        window.append(now)

    async def _m_getme(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"id": BOT_ID, "is_bot": True, "first_name": "UTLA Strike", "username": BOT_USERNAME,
                "can_join_groups": True, "can_read_all_group_messages": False,
                "supports_inline_queries": False}  # fmt: skip

    async def _m_getupdates(self, args: dict[str, Any]) -> list[dict[str, Any]]:
        if self.webhook is not None:
            raise ApiError(409, "Conflict: can't use getUpdates method while webhook is active; "
                           "use deleteWebhook to delete the webhook first")  # fmt: skip
        offset = int(args.get("offset") or 0)
        if offset:
            self._updates = [u for u in self._updates if u["update_id"] >= offset]
        deadline = time.monotonic() + float(args.get("timeout") or 0)
        while not self._updates and time.monotonic() < deadline and not self._release.is_set():
            self._arrived.clear()
            try:
                await asyncio.wait_for(self._arrived.wait(), deadline - time.monotonic())
            except TimeoutError:
                break
        return list(self._updates[:100])

    async def _m_setwebhook(self, args: dict[str, Any]) -> bool:
        self.webhook = {"url": args["url"], "secret_token": args.get("secret_token"),
                        "allowed_updates": args.get("allowed_updates")}  # fmt: skip
        return True

    async def _m_deletewebhook(self, args: dict[str, Any]) -> bool:
        self.webhook = None
        return True

    async def _m_getwebhookinfo(self, args: dict[str, Any]) -> dict[str, Any]:
        url = self.webhook["url"] if self.webhook else ""
        return {"url": url, "has_custom_certificate": False, "pending_update_count": 0}

    async def _m_sendmessage(self, args: dict[str, Any]) -> dict[str, Any]:
        chat = self._chat(args)
        text, visible = _parsed(args)
        self._throttle(chat)
        message_id = chat.next_id
        chat.next_id += 1
        message: dict[str, Any] = {
            "message_id": message_id,
            "date": int(time.time()),
            "chat": chat.json(),
            "from": await self._m_getme({}),
            "text": visible,
            "html": text,
        }
        if args.get("message_thread_id"):
            message["message_thread_id"] = args["message_thread_id"]
            message["is_topic_message"] = True
        if args.get("reply_markup"):
            message["reply_markup"] = args["reply_markup"]
        chat.messages[message_id] = message
        return {k: v for k, v in message.items() if k != "html"}

    async def _m_editmessagetext(self, args: dict[str, Any]) -> dict[str, Any]:
        chat = self._chat(args)
        message = chat.messages.get(int(args.get("message_id") or 0))
        if message is None:
            raise ApiError(400, "Bad Request: message to edit not found")
        text, visible = _parsed(args)
        markup = args.get("reply_markup")
        if message.get("html") == text and message.get("reply_markup") == markup:
            raise ApiError(400, "Bad Request: message is not modified: specified new message "
                           "content and reply markup are exactly the same as a current content "
                           "and reply markup of the message")  # fmt: skip
        message.update(text=visible, html=text, edit_date=int(time.time()))
        if markup:
            message["reply_markup"] = markup
        else:
            message.pop("reply_markup", None)
        return {k: v for k, v in message.items() if k != "html"}

    async def _m_deletemessage(self, args: dict[str, Any]) -> bool:
        chat = self._chat(args)
        if chat.messages.pop(int(args.get("message_id") or 0), None) is None:
            raise ApiError(400, "Bad Request: message to delete not found")
        return True

    async def _m_setmycommands(self, args: dict[str, Any]) -> bool:
        commands = args.get("commands") or []
        for command in commands:
            if not re.fullmatch(r"[a-z0-9_]{1,32}", command.get("command", "")):
                raise ApiError(400, "Bad Request: BOT_COMMAND_INVALID")
            if not 1 <= len(command.get("description", "")) <= 256:
                raise ApiError(400, "Bad Request: command description is too long")
        scope = args.get("scope") or {"type": "default"}
        if scope.get("type") == "chat" and int(scope["chat_id"]) not in self.chats:
            raise ApiError(400, "Bad Request: chat not found")
        key = (json.dumps(scope, sort_keys=True), str(args.get("language_code") or ""))
        self.commands[key] = commands
        return True

    def menu(self, language: str = "", scope: dict[str, Any] | None = None) -> list[str]:
        key = (json.dumps(scope or {"type": "default"}, sort_keys=True), language)
        return [c["command"] for c in self.commands.get(key, [])]

    async def _m_getchat(self, args: dict[str, Any]) -> dict[str, Any]:
        chat = self._chat(args)
        return {**chat.json(), "accent_color_id": 0, "max_reaction_count": 11,
                "accepted_gift_types": {"unlimited_gifts": False, "limited_gifts": False,
                                        "unique_gifts": False, "premium_subscription": False,
                                        "gifts_from_channels": False}}  # fmt: skip

    async def _m_getchatmember(self, args: dict[str, Any]) -> dict[str, Any]:
        chat = self._chat(args)
        user_id = int(args["user_id"])
        if user_id == BOT_ID:
            return _member(await self._m_getme({}), chat.bot_status)
        status = chat.members.get(user_id)
        if status is None:
            raise ApiError(400, "Bad Request: user not found")
        return _member(self.people[user_id].json(), status)

    async def _m_getchatadministrators(self, args: dict[str, Any]) -> list[dict[str, Any]]:
        chat = self._chat(args)
        return [
            _member(self.people[uid].json(), status)
            for uid, status in chat.members.items()
            if status in ("creator", "administrator")
        ]

    async def _m_answercallbackquery(self, args: dict[str, Any]) -> bool:
        return True


async def _arguments(request: web.Request) -> dict[str, Any]:
    if request.content_type == "application/json":
        raw = await request.json()
        return dict(raw) if isinstance(raw, dict) else {}
    form = dict(await request.post()) if request.can_read_body else {}
    args: dict[str, Any] = {}
    for key, value in {**dict(request.query), **form}.items():
        text = str(value)
        if key in JSON_ARGS:
            args[key] = json.loads(text)
        elif key in INT_ARGS:
            args[key] = int(text)
        elif key == "chat_id":
            args[key] = int(text) if text.lstrip("-").isdigit() else text
        else:
            args[key] = text
    return args


def _parsed(args: dict[str, Any]) -> tuple[str, str]:
    """(the text as sent, the text Telegram shows), refusing what Telegram refuses."""
    text = str(args.get("text", ""))
    visible = text
    if args.get("parse_mode") == "HTML":
        visible = _check_html(text)
    if not visible.strip():
        raise ApiError(400, "Bad Request: message text is empty")
    if len(visible) > TEXT_MAX:
        raise ApiError(400, "Bad Request: message is too long")
    return text, visible


def _check_html(text: str) -> str:
    stack: list[str] = []
    position = 0
    for match in _TAG.finditer(text):
        _check_plain(text[position : match.start()], position)
        closing, name, _attrs = match.group(1), match.group(2).lower(), match.group(3)
        if name not in ALLOWED_TAGS:
            raise ApiError(400, f"Bad Request: can't parse entities: Unsupported start tag "
                                f"\"{name}\" at byte offset {match.start()}")  # fmt: skip
        if closing:
            if not stack or stack[-1] != name:
                raise ApiError(400, f"Bad Request: can't parse entities: Unexpected end tag at "
                                    f"byte offset {match.start()}")  # fmt: skip
            stack.pop()
        else:
            stack.append(name)
        position = match.end()
    _check_plain(text[position:], position)
    if stack:
        raise ApiError(400, f"Bad Request: can't parse entities: Can't find end tag "
                            f"corresponding to start tag \"{stack[-1]}\"")  # fmt: skip
    return html.unescape(_TAG.sub("", text))


def _check_plain(chunk: str, offset: int) -> None:
    if "<" in chunk or ">" in chunk.replace("&gt;", ""):
        raise ApiError(400, f"Bad Request: can't parse entities: Unsupported start tag at byte "
                            f"offset {offset + chunk.find('<')}")  # fmt: skip
    for at in (m.start() for m in re.finditer("&", chunk)):
        if not _ENTITY.match(chunk, at):
            raise ApiError(400, f"Bad Request: can't parse entities: Character '&' is reserved "
                                f"at byte offset {offset + at}")  # fmt: skip


def _member(user: dict[str, Any], status: str) -> dict[str, Any]:
    member: dict[str, Any] = {"status": status, "user": user}
    if status == "creator":
        member["is_anonymous"] = False
    elif status == "administrator":
        member.update({name: False for name in (
            "can_be_edited", "is_anonymous", "can_manage_chat", "can_delete_messages",
            "can_manage_video_chats", "can_restrict_members", "can_promote_members",
            "can_change_info", "can_invite_users", "can_post_stories", "can_edit_stories",
            "can_delete_stories")})  # fmt: skip
        member["can_post_messages"] = True
    elif status == "kicked":
        member["until_date"] = 0
    return member
