"""Discord's Interactions Endpoint URL: `POST /discord/interactions` on the bot's web server.

With the URL set in the Developer Portal (General Information → Interactions Endpoint URL,
the public `https://` address of any instance or of a load balancer in front of several),
Discord sends every interaction there instead of over the gateway: any instance can answer
any interaction, and no gateway session is needed for commands at all.

Each request is checked before its body is read as JSON: `X-Signature-Ed25519` over
`X-Signature-Timestamp` + the raw body, against the application's public key
(`DISCORD_PUBLIC_KEY`, PyNaCl). A bad or missing signature gets 401 (Discord's portal tests
this before it accepts the URL); a signed body that is not an interaction gets 400. PING
gets PONG. The interaction's id is claimed in the store first (`Handlers.claim`), so a
replayed request is answered 409 and handled by nobody a second time.

discord.py has no HTTP mode, so the interaction goes through the same handlers as over the
gateway, with one difference: the first response becomes the body of Discord's request.
`CapturingWebhookAdapter` (installed for the handling task through discord.py's
`async_context`) hands that response to the waiting request instead of POSTing it to the
callback endpoint. Handlers defer what takes longer than `defer_after` (1.5 s) by
themselves; if none has answered within `ANSWER_WITHIN` seconds, the endpoint defers on its
behalf and the late answer is edited into the deferred reply.
"""

from __future__ import annotations

import asyncio
import binascii
import json
import logging
from typing import TYPE_CHECKING, Any

import aiohttp
from aiohttp import web
from discord.http import MultipartParameters
from discord.webhook.async_ import AsyncWebhookAdapter, async_context
from nacl.exceptions import BadSignatureError
from nacl.signing import VerifyKey

if TYPE_CHECKING:
    from adapters.discord._client import StrikeClient
    from adapters.discord._interactions import Handlers

log = logging.getLogger("strikebot.discord")

INTERACTIONS_PATH = "/discord/interactions"
ANSWER_WITHIN = 2.5  # seconds: Discord waits 3 s for the answer to its request
PING, APPLICATION_COMMAND, COMPONENT, AUTOCOMPLETE, MODAL_SUBMIT = 1, 2, 3, 4, 5
PONG, DEFERRED_MESSAGE, DEFERRED_UPDATE, AUTOCOMPLETE_RESULT = 1, 5, 6, 8
EPHEMERAL = 1 << 6


def verify_key(public_key: str) -> VerifyKey:
    """The application's public key (64 hex characters, from the Developer Portal)."""
    try:
        raw = bytes.fromhex(public_key.strip())
        return VerifyKey(raw)
    except (ValueError, TypeError) as exc:
        raise ValueError(
            "DISCORD_PUBLIC_KEY is not a Discord public key: copy the 64 hexadecimal characters "
            "of Public Key from the Developer Portal (General Information)."
        ) from exc


def signature_valid(key: VerifyKey, signature: str, timestamp: str, body: bytes) -> bool:
    try:
        key.verify(timestamp.encode() + body, bytes.fromhex(signature))
    except (BadSignatureError, ValueError, binascii.Error, TypeError):
        return False
    return True


def _callback_result(interaction_id: int, payload: dict[str, Any]) -> dict[str, Any]:
    """What Discord answers a callback `with_response` (discord.py reads `interaction`)."""
    flags = int((payload.get("data") or {}).get("flags") or 0)
    return {
        "interaction": {
            "id": str(interaction_id),
            "type": payload.get("type"),
            "response_message_loading": payload.get("type") == DEFERRED_MESSAGE,
            "response_message_ephemeral": bool(flags & EPHEMERAL),
        }
    }


class UnreadableInteraction(Exception):
    """A signed request whose body discord.py cannot read as an interaction."""


class CapturingWebhookAdapter(AsyncWebhookAdapter):
    """discord.py's webhook REST adapter, except for interactions received over HTTP: their
    first response is handed to the waiting request (`waiting`), and a response that comes
    after the endpoint deferred on the handler's behalf (`deferred`) is edited in."""

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]  # discord.py leaves it untyped
        self.waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.deferred: dict[int, int] = {}  # interaction id -> application id

    async def create_interaction_response(
        self,
        interaction_id: int,
        token: str,
        *,
        session: aiohttp.ClientSession,
        proxy: str | None = None,
        proxy_auth: aiohttp.BasicAuth | None = None,
        params: MultipartParameters,
    ) -> Any:
        key = int(interaction_id)
        payload = dict(params.payload or {})
        waiter = self.waiting.get(key)
        if waiter is not None and not waiter.done():
            waiter.set_result(payload)
            return _callback_result(key, payload)
        application_id = self.deferred.pop(key, None)
        if application_id is not None:
            if payload.get("type") in (4, 7):  # a message, or an update of the clicked one
                await self.edit_original_interaction_response(
                    application_id,
                    token,
                    session=session,
                    proxy=proxy,
                    proxy_auth=proxy_auth,
                    payload=payload.get("data") or {},
                )
            else:
                log.warning(
                    "Discord interaction %s: a %s answer came after the endpoint deferred",
                    key,
                    payload.get("type"),
                )
            return _callback_result(key, payload)
        return await super().create_interaction_response(
            interaction_id,
            token,
            session=session,
            proxy=proxy,
            proxy_auth=proxy_auth,
            params=params,
        )


def _deferral(data: dict[str, Any]) -> dict[str, Any]:
    """What the endpoint answers for a handler that has not answered in time."""
    kind = data.get("type")
    if kind == AUTOCOMPLETE:
        return {"type": AUTOCOMPLETE_RESULT, "data": {"choices": []}}
    if kind == COMPONENT:
        return {"type": DEFERRED_UPDATE}
    return {"type": DEFERRED_MESSAGE, "data": {"flags": EPHEMERAL}}


class InteractionsEndpoint:
    """`POST /discord/interactions`, answered by `client` (logged in, never connected)."""

    def __init__(
        self,
        public_key: str,
        handlers: Handlers,
        client: StrikeClient,
        *,
        answer_within: float = ANSWER_WITHIN,
    ) -> None:
        self.key = verify_key(public_key)
        self.handlers = handlers
        self.client = client
        self.answer_within = answer_within
        self.webhooks = CapturingWebhookAdapter()
        self._tasks: set[asyncio.Task[None]] = set()

    def mount(self, app: web.Application) -> None:
        app.router.add_post(INTERACTIONS_PATH, self.handle)

    async def handle(self, request: web.Request) -> web.Response:
        raw = await request.read()  # over the server's client_max_size: 413 from aiohttp
        signature = request.headers.get("X-Signature-Ed25519", "")
        timestamp = request.headers.get("X-Signature-Timestamp", "")
        if (
            not signature
            or not timestamp
            or not signature_valid(self.key, signature, timestamp, raw)
        ):
            return web.json_response({"error": "invalid request signature"}, status=401)
        try:
            data = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            return web.json_response({"error": "the body is not JSON"}, status=400)
        if not isinstance(data, dict) or not isinstance(data.get("type"), int):
            return web.json_response({"error": "not a Discord interaction"}, status=400)
        if data["type"] == PING:
            return web.json_response({"type": PONG})
        if not str(data.get("id") or "").isdigit() or not data.get("token"):
            return web.json_response({"error": "the interaction has no id or token"}, status=400)
        if not await self.handlers.claim(data):
            return web.json_response({"error": "this interaction was already handled"}, status=409)
        try:
            return web.json_response(await self.answer(data))
        except UnreadableInteraction as exc:
            return web.json_response({"error": str(exc)}, status=400)

    async def answer(self, data: dict[str, Any]) -> dict[str, Any]:
        """Run the handlers on `data`; return their first response (or a deferral)."""
        key = int(data["id"])
        waiter: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.webhooks.waiting[key] = waiter
        task = asyncio.create_task(self._dispatch(data), name=f"discord-interaction-{key}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        try:
            async with asyncio.timeout(self.answer_within):
                return await asyncio.shield(waiter)
        except TimeoutError:
            if waiter.done():  # answered at the last moment
                return waiter.result()
            application_id = int(data.get("application_id") or self.client.application_id or 0)
            self.webhooks.deferred[key] = application_id
            waiter.cancel()
            log.warning(
                "Discord interaction %s: no answer within %gs; deferred", key, self.answer_within
            )
            return _deferral(data)
        finally:
            self.webhooks.waiting.pop(key, None)

    async def _dispatch(self, data: dict[str, Any]) -> None:
        # Tasks discord.py starts from here copy this context, so their first response goes
        # to the waiting request rather than to the callback endpoint.
        async_context.set(self.webhooks)
        await self.client.login_once()
        state = self.client._connection
        try:
            await self.handlers.restore_modal(state, data)
            state.parse_interaction_create(data)  # type: ignore[arg-type]
        except (KeyError, ValueError, TypeError, AttributeError) as exc:
            # Signed, yet not an interaction discord.py can read (a field missing, an id that
            # is not a number): a 400 at once, not a deferral nobody will ever follow up.
            reason = f"not an interaction discord.py can read ({type(exc).__name__}: {exc})"
            log.warning("Discord interaction %s: %s", data.get("id"), reason)
            waiter = self.webhooks.waiting.get(int(data["id"]))
            if waiter is not None and not waiter.done():
                waiter.set_exception(UnreadableInteraction(reason[:200]))

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
