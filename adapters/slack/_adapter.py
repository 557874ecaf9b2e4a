"""The Slack adapter: slack-bolt's AsyncApp for what people type, chat.* for what we push.

Connection modes (`[slack] mode` in config/strike.toml, default "auto"):
- Socket Mode when SLACK_APP_TOKEN is set: no public URL; Slack pushes over a WebSocket.
- HTTP mode otherwise (SLACK_SIGNING_SECRET): Slack posts to `/slack/events` on the bot's
  own web server (`mount`), each request's signature and timestamp checked by bolt. Any
  number of instances can sit behind a load balancer.

Outbound sends never block on Slack's limits: a 429 raises `TransientDeliveryError` with
Slack's Retry-After and the dispatcher (which paces by `pacing`) schedules the retry.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable, Coroutine, Mapping
from datetime import datetime
from typing import Any
from urllib.parse import parse_qsl

import aiohttp
from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.signature import SignatureVerifier
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack._blocks import render
from adapters.slack._errors import describe, error_code, field, status_of
from adapters.slack._forms import Forms
from adapters.slack._inbound import BUDGET, Inbound
from adapters.slack._people import Directory
from adapters.slack._settings import (
    EVENTS_PATH,
    NAME,
    SlackAdmins,
    SlackDelivery,
    SlackSection,
    SlackSettings,
)
from bot.ports import (
    ChannelRef,
    ConfigError,
    OutboundMessage,
    Pacing,
    PermanentDeliveryError,
    PluginContext,
    TransientDeliveryError,
)

log = logging.getLogger("strikebot.slack")

DEFAULT_API_URL = "https://slack.com/api/"
REQUEST_TIMEOUT = 10.0  # seconds for one Web API call
CONNECT_WAIT = 15.0  # how long start() waits for the Socket Mode connection before moving on
HISTORY_PAGES = 5  # 200 messages each: how far back a copy in doubt is looked for

# Errors that say the token or the whole workspace is unusable (every channel would fail).
WORKSPACE_ERRORS = {
    "invalid_auth", "not_authed", "token_revoked", "token_expired", "account_inactive",
    "team_access_not_granted", "no_permission", "missing_scope", "ekm_access_denied",
    "org_login_required", "team_not_found", "enterprise_is_restricted",
}  # fmt: skip
TRANSIENT_ERRORS = {
    "ratelimited", "internal_error", "fatal_error", "service_unavailable", "request_timeout",
    "team_added_to_org",
}  # fmt: skip


def api_base(url: str | None) -> str:
    """SLACK_API_URL (GovSlack: https://slack-gov.com/api/) with the trailing slash slack-sdk
    needs; Slack's own API by default."""
    if not url:
        return DEFAULT_API_URL
    return url if url.endswith("/") else url + "/"


def connection_mode(configured: str, settings: SlackSettings) -> str:
    """ "socket" or "http", or a ConfigError saying which variable to set."""
    if configured == "socket" or (configured == "auto" and settings.app_token):
        if not settings.app_token:
            raise ConfigError(
                'Slack is set to Socket Mode ([slack] mode = "socket") but SLACK_APP_TOKEN is '
                "empty. Create an app-level token with connections:write (xapp-...) and set it."
            )
        return "socket"
    if configured == "http" and not settings.signing_secret:
        raise ConfigError(
            'Slack is set to HTTP mode ([slack] mode = "http") but SLACK_SIGNING_SECRET is '
            "empty. Copy the Signing Secret from the app's Basic Information page and set it."
        )
    if not settings.signing_secret:
        raise ConfigError(
            "Slack needs SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET (HTTP mode at "
            "/slack/events). Set one; see docs/platforms.md, Slack."
        )
    return "http"


class SlackAdapter:
    """`bot.ports.Adapter` for Slack, plus the slash command and the admin forms."""

    platform = NAME

    def __init__(
        self,
        ctx: PluginContext,
        *,
        budget: float | None = None,
        request_timeout: float = REQUEST_TIMEOUT,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        settings = ctx.settings_as(SlackSettings)
        if settings.bot_token is None:
            raise ConfigError(
                "SLACK_BOT_TOKEN is empty. Install the app (config/slack-manifest.yml) and set "
                "SLACK_BOT_TOKEN to its Bot User OAuth Token (xoxb-...)."
            )
        self.ctx = ctx
        self.settings = settings
        self.delivery = ctx.delivery_as(SlackDelivery)
        self.request_timeout = request_timeout
        self.monotonic = monotonic  # the clock Slack's Retry-After pauses are kept on
        self.mode = connection_mode(ctx.section_as(SlackSection).mode, settings)
        self.client = AsyncWebClient(
            token=settings.bot_token.get_secret_value(),
            base_url=api_base(settings.api_url),
            timeout=max(int(request_timeout), 1),
            logger=logging.getLogger("strikebot.slack.sdk"),
        )
        self.directory = Directory(
            self.client, frozenset(ctx.admin_rule_as(SlackAdmins).usergroup_ids)
        )
        self.app = AsyncApp(
            client=self.client,
            signing_secret=(
                settings.signing_secret.get_secret_value() if settings.signing_secret else ""
            ),
            # Listeners answer within their own time budget; the ack goes out when they return.
            process_before_response=True,
            name="strikebot",
            logger=logging.getLogger("strikebot.slack.bolt"),
        )
        # Socket Mode needs no signing secret (slack-sdk refuses an empty one): without it,
        # every HTTP request to /slack/events is refused as unsigned.
        self._verifier = (
            SignatureVerifier(settings.signing_secret.get_secret_value())
            if settings.signing_secret
            else None
        )
        self.inbound = Inbound(
            commands=ctx.commands,
            seen=ctx.first_time,
            campaign=ctx.campaign,
            clock=ctx.clock,
            admins=ctx.admins,
            directory=self.directory,
            spawn=self._spawn,
            budget=BUDGET if budget is None else budget,
        )
        self.forms = Forms(
            commands=ctx.commands,
            campaign=ctx.campaign,
            context=self.inbound.form_context,
            spawn=self._spawn,
            budget=self.inbound.budget,
        )
        self.inbound.register(self.app)
        self.forms.register(self.app)
        self._tasks: set[asyncio.Task[None]] = set()
        self._socket: AsyncSocketModeHandler | None = None
        self._session: aiohttp.ClientSession | None = None
        self._blocked_until: dict[str, float] = {}
        self._history_refused: str | None = None  # why the history cannot be read, if so
        self._team_id: str | None = None
        self._bot_user_id: str | None = None
        self._auth_error: str | None = None
        self._reachable = False
        self._last_error: str | None = None

    # ------------------------------------------------------------------ lifecycle

    @property
    def pacing(self) -> Pacing:
        return self.delivery.pacing()

    async def start(self) -> None:
        """Check the bot token, then (Socket Mode) connect. Refuses bad tokens with a
        sentence naming the variable; an unreachable Slack is logged and retried."""
        self._session = aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=self.request_timeout)
        )
        self.client.session = self._session
        try:
            auth = await self.client.auth_test()
            self._team_id = str(auth.get("team_id") or "") or None
            self._bot_user_id = str(auth.get("user_id") or "") or None
            self._reachable = True
            log.info(
                "Slack: connected to %s as %s (%s mode)",
                auth.get("team"),
                auth.get("user"),
                self.mode,
            )
        except SlackApiError as exc:
            error = describe(exc)
            if error in WORKSPACE_ERRORS:
                await self._close_session()
                raise ConfigError(
                    f"Slack refused SLACK_BOT_TOKEN ({error}). Copy the Bot User OAuth Token "
                    "(xoxb-...) from the app's OAuth & Permissions page and set it again."
                ) from None
            self._last_error = error
            log.warning("Slack auth.test failed (%s); carrying on and retrying on use", error)
        except (TimeoutError, aiohttp.ClientError, OSError, SlackClientError, ValueError) as exc:
            self._last_error = describe(exc)
            log.warning("Slack is unreachable (%s); carrying on and retrying on use", exc)
        except (AttributeError, TypeError) as exc:  # a 200 that is not JSON: see _errors
            self._last_error = describe(exc)
            log.warning("Slack auth.test: %s; carrying on and retrying on use", describe(exc))
        if self.mode == "socket":
            await self._connect_socket()

    async def _connect_socket(self) -> None:
        assert self.settings.app_token is not None
        token = self.settings.app_token.get_secret_value()
        url: str | None = None
        try:  # asked here once so that a refused token stops start() instead of looping
            url = str((await self.client.apps_connections_open(app_token=token))["url"])
        except SlackApiError as exc:
            error = describe(exc)
            if error in WORKSPACE_ERRORS or error == "not_allowed_token_type":
                await self._close_session()
                raise ConfigError(
                    f"Slack refused SLACK_APP_TOKEN ({error}). Create an app-level token "
                    "with the connections:write scope (xapp-...) and set it again."
                ) from None
            log.warning("Slack apps.connections.open failed (%s); retrying", error)
        except (TimeoutError, aiohttp.ClientError, OSError, SlackClientError) as exc:
            log.warning("Slack is unreachable (%s); Socket Mode keeps retrying", describe(exc))
        except (AttributeError, TypeError, ValueError) as exc:  # not JSON: see _errors
            log.warning("Slack apps.connections.open: %s; retrying", describe(exc))
        handler = AsyncSocketModeHandler(self.app, token, web_client=self.client)
        if url is not None:
            handler.client.wss_uri = url
        self._socket = handler
        connecting = asyncio.ensure_future(handler.connect_async())  # type: ignore[no-untyped-call]
        done, _ = await asyncio.wait({connecting}, timeout=CONNECT_WAIT)
        if not done:  # slack-sdk keeps trying in the background; do not hold up the rest
            log.warning("Slack Socket Mode is not connected yet; still trying")

    async def wait_idle(self) -> None:
        """Return once every late answer started so far has been delivered."""
        while busy := list(self._tasks):
            await asyncio.gather(*busy, return_exceptions=True)

    async def stop(self) -> None:
        """Disconnect, let replies already under way finish (briefly), close the session."""
        if self._socket is not None:
            with contextlib.suppress(Exception):
                await self._socket.close_async()  # type: ignore[no-untyped-call]
            self._socket = None
        pending = [t for t in self._tasks if not t.done()]
        if pending:
            _, late = await asyncio.wait(pending, timeout=5.0)
            for task in late:
                task.cancel()
            await asyncio.gather(*late, return_exceptions=True)
        await self._close_session()

    async def _close_session(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
            self.client.session = None

    def health(self) -> Mapping[str, object]:
        if self.mode == "socket":
            session = self._socket.client.current_session if self._socket is not None else None
            connected = session is not None and not session.closed
        else:
            connected = self._reachable and self._auth_error is None
        state: dict[str, object] = {
            "connected": connected,
            "mode": self.mode,
            "team_id": self._team_id,
            "bot_user_id": self._bot_user_id,
        }
        now = self.monotonic()
        limited = {m: round(u - now, 1) for m, u in self._blocked_until.items() if u > now}
        if limited:
            state["rate_limited_s"] = limited
        if self._auth_error:
            state["auth_error"] = self._auth_error
        if self._last_error:
            state["last_error"] = self._last_error
        return state

    def _spawn(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("a Slack background task failed", exc_info=task.exception())

    # ------------------------------------------------------------------ HTTP mode

    def mount(self, app: web.Application) -> None:
        """Add POST /slack/events to the bot's web server (HTTP mode only)."""
        if self.mode != "http":
            log.info("Slack uses Socket Mode; %s is not served", EVENTS_PATH)
            return
        app.router.add_post(EVENTS_PATH, self.handle_http)

    async def handle_http(self, request: web.Request) -> web.Response:
        """Check the signature over the raw bytes first, then parse: nothing unsigned reaches
        bolt's parser or the store, and a signed body bolt could not read is refused too.
        (bolt parses the body, `payload=` JSON included, before its own signature check, and
        a malformed one raised there: a 500 for anyone, signed or not.)"""
        raw = await request.read()  # over the server's client_max_size: 413 from aiohttp
        refusal = self._refusal(request, raw)
        if refusal is not None:
            return refusal
        bolt_request = AsyncBoltRequest(
            body=raw.decode("utf-8"),
            query=request.query_string,
            headers=request.headers,  # type: ignore[arg-type]
        )
        bolt_response = await self.app.async_dispatch(bolt_request)
        return await to_aiohttp_response(bolt_response)

    def _refusal(self, request: web.Request, raw: bytes) -> web.Response | None:
        """401 unless signed with SLACK_SIGNING_SECRET in the last five minutes; 400 unless
        the body is what Slack sends (a form, `payload=` holding a JSON object, or a JSON
        object). None: let bolt have it."""
        timestamp = request.headers.get("X-Slack-Request-Timestamp", "")
        signature = request.headers.get("X-Slack-Signature", "")
        try:
            text = raw.decode("utf-8")  # Slack signs UTF-8; nothing else can be its request
        except UnicodeDecodeError:
            text = None
        signed = (
            text is not None
            and timestamp.isascii()
            and timestamp.isdigit()
            and len(timestamp) <= 12
            and signature.isascii()
            and self._verifier is not None
            and self._verifier.is_valid(body=text, timestamp=timestamp, signature=signature)
        )
        if not signed:
            return _refused(
                401,
                "invalid_signature",
                "This address takes only requests signed by Slack in the last five minutes "
                "(X-Slack-Signature, X-Slack-Request-Timestamp). If this is your Slack app, "
                "check that SLACK_SIGNING_SECRET matches its Signing Secret.",
            )
        if _slack_body(raw, request.content_type) is None:
            return _refused(
                400,
                "bad_body",
                "The body is not what Slack sends: a form, a form whose payload is a JSON "
                "object, or a JSON object.",
            )
        return None

    # ------------------------------------------------------------------ outbound

    async def send(
        self, channel: ChannelRef, message: OutboundMessage, *, idempotency_key: str
    ) -> str:
        """chat.postMessage; returns the message's `ts` (what edit and delete need)."""
        rendered = render(message)
        data = await self._call(
            "chat.postMessage",
            channel,
            text=rendered.text,
            blocks=rendered.blocks,
            unfurl_links=False,
            unfurl_media=False,
            parse="none",
            link_names=False,
            # Which delivery made this message, for tracing a doubtful retry in Slack.
            metadata={
                "event_type": "strikebot_delivery",
                "event_payload": {"delivery": idempotency_key},
            },
        )
        ts = data.get("ts")
        if not isinstance(ts, str) or not ts:
            # Slack said ok but named no message: whether it was posted is unknown.
            raise TransientDeliveryError(
                f"Slack chat.postMessage to {channel.channel} answered without a message ts; "
                "will retry"
            )
        return ts

    async def find_sent(
        self,
        channel: ChannelRef,
        idempotency_key: str,
        message: OutboundMessage,
        *,
        since: datetime,
    ) -> str | None:
        """The `ts` of the message a send of `idempotency_key` created, found in the
        channel's history by its metadata (`strikebot_delivery`). chat.postMessage has no
        idempotency key, so this is what keeps a copy in doubt from being posted twice. It
        needs the history scopes (`channels:history`, `groups:history`); without them the
        copy is sent again (a duplicate only if the first did go out)."""
        if self._history_refused is not None:
            return None
        oldest = f"{max(since.timestamp() - 60, 0):.6f}"
        cursor: str | None = None
        for _ in range(HISTORY_PAGES):
            params: dict[str, Any] = {
                "channel": channel.channel,
                "oldest": oldest,
                "limit": 200,
                "include_all_metadata": "true",
            }
            if cursor:
                params["cursor"] = cursor
            try:
                response = await self.client.api_call(
                    "conversations.history", http_verb="GET", params=params
                )
            except SlackApiError as exc:
                error = error_code(exc)
                if error in ("missing_scope", "not_in_channel", "channel_not_found"):
                    self._history_refused = error
                    log.warning(
                        "Slack refused to read %s's history (%s): a copy in doubt is sent "
                        "again; add the history scopes to look for it instead",
                        channel.channel,
                        error,
                    )
                    return None
                raise self._failure("conversations.history", channel, exc, "") from None
            except (TimeoutError, aiohttp.ClientError, OSError, SlackClientError) as exc:
                raise TransientDeliveryError(
                    f"Slack conversations.history for {channel.channel} failed "
                    f"({type(exc).__name__}); will retry"
                ) from None
            data = response.data if isinstance(response.data, dict) else {}
            for found in data.get("messages") or []:
                meta = found.get("metadata") if isinstance(found, dict) else None
                payload = (meta or {}).get("event_payload") or {}
                if (meta or {}).get("event_type") == "strikebot_delivery" and (
                    payload.get("delivery") == idempotency_key
                ):
                    return str(found.get("ts"))
            cursor = ((data.get("response_metadata") or {}).get("next_cursor")) or None
            if not data.get("has_more") or not cursor:
                return None
        return None

    async def edit(self, channel: ChannelRef, message_id: str, message: OutboundMessage) -> None:
        rendered = render(message)
        await self._call(
            "chat.update",
            channel,
            ts=message_id,
            text=rendered.text,
            blocks=rendered.blocks,
            parse="none",
            link_names=False,
        )

    async def delete(self, channel: ChannelRef, message_id: str) -> None:
        try:
            await self._call("chat.delete", channel, ts=message_id)
        except PermanentDeliveryError as exc:
            if exc.reason.startswith("message_not_found"):
                return  # already gone: what we wanted
            raise

    async def _call(self, method: str, channel: ChannelRef, **args: Any) -> dict[str, Any]:
        now = self.monotonic()
        blocked = self._blocked_until.get(method, 0.0)
        if blocked > now:
            wait = blocked - now
            raise TransientDeliveryError(
                f"Slack asked for a pause on {method}; {wait:.1f}s left", wait, is_global=True
            )
        try:
            response = await self.client.api_call(method, json={"channel": channel.channel, **args})
        except SlackApiError as exc:
            raise self._failure(method, channel, exc, str(args.get("ts", ""))) from None
        except (TimeoutError, aiohttp.ClientError, OSError, SlackClientError) as exc:
            self._last_error = type(exc).__name__
            # No answer: Slack may have posted it all the same (the copy is looked for first).
            raise TransientDeliveryError(
                f"Slack {method} to {channel.channel} failed ({type(exc).__name__}); will retry",
                in_doubt=True,
            ) from None
        except (AttributeError, TypeError, ValueError) as exc:
            # A 200 whose body is not JSON (slack-sdk fails validating it; see _errors).
            self._last_error = describe(exc)
            raise TransientDeliveryError(
                f"Slack {method} to {channel.channel} got {describe(exc)}, perhaps from a "
                "proxy in between; will retry"
            ) from None
        self._auth_error = None
        self._reachable = True
        data: dict[str, Any] = dict(response.data) if isinstance(response.data, dict) else {}
        return data

    def _failure(
        self, method: str, channel: ChannelRef, exc: SlackApiError, ts: str
    ) -> PermanentDeliveryError | TransientDeliveryError:
        status = status_of(exc)
        error = error_code(exc)
        self._last_error = error or str(status)
        where = channel.channel
        if status == 429 or error == "ratelimited":
            retry_after = _retry_after(exc)
            self._blocked_until[method] = self.monotonic() + retry_after
            # Slack's limits are per method per workspace: every channel waits.
            return TransientDeliveryError(
                f"Slack rate-limited {method}; retrying after {retry_after:g}s",
                retry_after,
                is_global=True,
            )
        if status >= 500 or error in TRANSIENT_ERRORS or not error:
            # No error code: not Slack's JSON (a proxy's page, a body cut short), so nothing
            # says the channel is unusable.
            return TransientDeliveryError(f"Slack {method} failed ({describe(exc)}); will retry")
        if error in WORKSPACE_ERRORS:
            self._auth_error = error
            needed = field(exc, "needed") if error == "missing_scope" else None
            scope = f" (needs {needed})" if needed else ""
            return PermanentDeliveryError(
                f"{error}: Slack refused the bot token for the whole workspace{scope}. Reinstall "
                "the app from config/slack-manifest.yml and set the new SLACK_BOT_TOKEN."
            )
        reasons = {
            "channel_not_found": f"Slack cannot find channel {where} (deleted, or private "
            "without the app). Invite the app there or unsubscribe the channel.",
            "not_in_channel": f"The app is not in channel {where}. Invite it with /invite "
            "@strikebot, or unsubscribe the channel.",
            "is_archived": f"Channel {where} is archived. Unarchive it or unsubscribe it.",
            "channel_is_archived": f"Channel {where} is archived. Unarchive it or unsubscribe it.",
            "restricted_action": f"Only some members may post in {where}. Allow the app to "
            "post there, or unsubscribe the channel.",
            "restricted_action_read_only_channel": f"Channel {where} is read-only. Allow the "
            "app to post there, or unsubscribe the channel.",
            "message_not_found": f"The message {ts} in {where} is gone (deleted in "
            "Slack); there is nothing to change.",
            "cant_update_message": f"Slack will not let the app change message {ts} "
            f"in {where}; post a correction instead.",
        }
        sentence = reasons.get(error or "")
        if sentence is None:
            sentence = (
                f"Slack refused {method} for {where}; retrying will not help. If this keeps "
                "happening, report it with this error code."
            )
        return PermanentDeliveryError(f"{error or status}: {sentence}")


def _refused(status: int, code: str, message: str) -> web.Response:
    body = {"error": {"code": code, "message": message}}
    return web.json_response(body, status=status)


def _slack_body(raw: bytes, content_type: str) -> dict[str, Any] | None:
    """The body as bolt will read it, or None when bolt could not (see `parse_body`)."""
    try:
        text = raw.decode("utf-8")
        if content_type == "application/json" or text.startswith("{"):
            data: object = json.loads(text)
        else:
            form = dict(parse_qsl(text, keep_blank_values=True))
            data = json.loads(form["payload"]) if "payload" in form else form
    except (ValueError, RecursionError):  # not UTF-8, not JSON, nested past reason
        return None
    return data if isinstance(data, dict) else None


def _retry_after(exc: SlackApiError) -> float:
    headers = getattr(exc.response, "headers", None) or {}
    try:
        return max(float(headers.get("Retry-After", 1)), 0.0)
    except (TypeError, ValueError):
        return 1.0
