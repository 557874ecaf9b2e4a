"""One rig per delivery plugin for the fault matrix (`tests/test_fault_matrix.py`): the plugin
as `strikebot run` builds it, against its fake on 127.0.0.1, with one subscribed channel,
and a way to make the fake answer the next send with each failure shape.

A new delivery plugin joins the matrix with a rig here (`RIGS`) and a row in
`tests/faults.py`; `test_every_installed_delivery_plugin_is_in_the_matrix` fails until then.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.clock import FixedClock
from bot.delivery.pacing import Monotonic
from bot.editorial.admin import Admin
from bot.models import Subscription
from bot.plugins.admins import CLI_ACTOR
from bot.plugins.outbound import Adapter
from bot.store import Store
from tests.faults import Shape

HEADLINE = "Fault matrix: the strike continues"
SHORT = 2.0  # seconds of a short Retry-After
LONG = 30.0  # a long one: past the 25 s request timeout the Discord adapter once had
# Each adapter's own request timeout: short where the fake hangs (so the test is quick),
# patient otherwise (a loaded machine's slow answer must not look like a hang).
HANG_TIMEOUT = 0.5
PATIENT = 10.0

JSON_503 = ("application/json", '{"message": "upstream unavailable", "code": 0}')
HTML_502 = ("text/html", "<html><body><h1>502 Bad Gateway</h1><p>nginx</p></body></html>")
TEXT_503 = ("text/plain", "upstream connect error or disconnect/reset before headers")


@dataclass
class Rig:
    """A started plugin: `adapter` delivers to the subscribed channel; `inject(shape)` makes
    the next send fail that way; `copies()` counts what reached the platform's channel and
    `sends()` the send requests it saw."""

    platform: str
    adapter: Adapter
    store: Store
    admin: Admin
    inject: Callable[[Shape], None]
    copies: Callable[[], int]
    sends: Callable[[], int]
    # Platforms that change a copy in place: the next edit fails that way; whether the
    # copy on the platform now reads as retracted.
    inject_edit: Callable[[Shape], None] | None = None
    retracted: Callable[[], bool] | None = None
    unmet: Callable[[], int] | None = None  # injected edit faults no request has met yet
    ids: Callable[[], list[str]] | None = None  # the copies' message ids (e-mail's Message-ID)


RigFactory = Callable[[Store, FixedClock, Path, float, Monotonic], AbstractAsyncContextManager[Rig]]


def _count(items: Any) -> int:
    return sum(1 for item in items if HEADLINE in json.dumps(item, default=str))


# ---------------------------------------------------------------------------- discord


@asynccontextmanager
async def discord_rig(
    store: Store, clock: FixedClock, tmp: Path, patience: float, monotonic: Monotonic
) -> AsyncIterator[Rig]:
    from tests.fakes.discord import GUILD_ID, FakeDiscord, discord_bot

    channel = "700000000000000301"
    route = "POST /channels/{channel_id}/messages"
    async with FakeDiscord() as fake:
        url = f"sqlite+aiosqlite:///{tmp / 'discord.db'}"
        async with discord_bot(fake, url, clock, connect=False, request_timeout=patience) as bot:
            admin = bot.ctx.admin
            await admin.subscribe(
                CLI_ACTOR, Subscription(0, "discord", GUILD_ID, channel, "en", timezone="UTC")
            )

            def inject(shape: Shape, at_route: str = route) -> None:
                at: dict[str, Any] = {"route": at_route, "channel_id": channel}
                if shape is Shape.RATE_LIMITED:
                    fake.inject(429, retry_after=SHORT, **at)
                elif shape is Shape.RATE_LIMITED_LONG:
                    fake.inject(429, retry_after=LONG, **at)
                elif shape is Shape.GLOBAL_RATE_LIMITED:
                    fake.inject(429, retry_after=SHORT, is_global=True, **at)
                elif shape is Shape.GLOBAL_RATE_LIMITED_LONG:
                    fake.inject(429, retry_after=LONG, is_global=True, **at)
                elif shape is Shape.JSON_5XX:
                    fake.inject(503, raw=(JSON_503[0], JSON_503[1].encode()), **at)
                elif shape is Shape.HTML_5XX:
                    fake.inject(502, raw=(HTML_502[0], HTML_502[1].encode()), **at)
                elif shape is Shape.TEXT_5XX:
                    fake.inject(503, raw=(TEXT_503[0], TEXT_503[1].encode()), **at)
                elif shape is Shape.TRUNCATED_JSON:
                    fake.inject(200, raw=("application/json", b'{"id": "1234'), **at)
                elif shape is Shape.HANG:
                    fake.inject("timeout", **at)
                elif shape is Shape.RESET:
                    fake.inject("reset", **at)
                elif shape is Shape.ACCEPTED_LOST:
                    fake.inject("lost", **at)

            def copies() -> int:
                return _count(m.embeds for m in fake.channel_messages(channel))

            def sends() -> int:  # those answered (a hang or a reset is not recorded)
                return sum(
                    1
                    for _, method, path, _ in fake.requests
                    if method == "POST" and path.endswith(f"/channels/{channel}/messages")
                )

            def inject_edit(shape: Shape) -> None:
                inject(shape, "PATCH /channels/{channel_id}/messages/{message_id}")

            def retracted() -> bool:
                (message,) = fake.channel_messages(channel)
                return "RETRACTED" in json.dumps(message.embeds)

            # discord_bot opens (and seeds) its own store: the dispatcher uses that one.
            yield Rig(
                "discord", bot.adapter, bot.store, admin, inject, copies, sends,
                inject_edit, retracted, fake.unmet_injections,
            )  # fmt: skip


# ---------------------------------------------------------------------------- slack


@asynccontextmanager
async def slack_rig(
    store: Store, clock: FixedClock, tmp: Path, patience: float, monotonic: Monotonic
) -> AsyncIterator[Rig]:
    from tests.fakes.slack import FakeSlack, SlackBot

    channel = "C0FAULTS"
    async with (
        FakeSlack() as slack,
        SlackBot(store, clock, slack, request_timeout=patience, monotonic=monotonic) as bot,
    ):
        slack.add_channel(channel)
        await bot.admin.subscribe(
            CLI_ACTOR, Subscription(0, "slack", "T0STRIKE", channel, "en", timezone="UTC")
        )

        def inject(shape: Shape, post: str = "chat.postMessage") -> None:
            if shape is Shape.RATE_LIMITED:
                slack.fail(post, "ratelimited", status=429, retry_after=int(SHORT), channel=channel)
            elif shape is Shape.RATE_LIMITED_LONG:
                slack.fail(post, "ratelimited", status=429, retry_after=int(LONG), channel=channel)
            elif shape is Shape.JSON_5XX:
                slack.fail(post, status=503, raw=JSON_503, channel=channel)
            elif shape is Shape.HTML_5XX:
                slack.fail(post, status=502, raw=HTML_502, channel=channel)
            elif shape is Shape.TEXT_5XX:
                slack.fail(post, status=503, raw=TEXT_503, channel=channel)
            elif shape is Shape.TRUNCATED_JSON:
                cut = ("application/json", '{"ok": true, "channel": "C0F')
                slack.fail(post, status=200, raw=cut, channel=channel)
            elif shape is Shape.ERROR_200:
                slack.fail(post, "internal_error", status=200, channel=channel)
            elif shape is Shape.HANG:
                slack.fail(post, channel=channel, hang=True)
            elif shape is Shape.RESET:
                slack.fail(post, channel=channel, reset=True)
            elif shape is Shape.ACCEPTED_LOST:
                slack.fail(post, channel=channel, lose_answer=True)

        def copies() -> int:
            return _count(slack.messages(channel))

        def sends() -> int:
            return sum(
                1 for c in slack.calls_to("chat.postMessage") if c.args.get("channel") == channel
            )

        def retracted() -> bool:
            (message,) = slack.messages(channel)
            current = {k: v for k, v in message.items() if k != "history"}
            return "RETRACTED" in json.dumps(current)

        yield Rig(
            "slack", bot.adapter, store, bot.admin, inject, copies, sends,
            lambda shape: inject(shape, "chat.update"), retracted,
            lambda: sum(f.times or 0 for f in slack.failures),
        )  # fmt: skip


# ---------------------------------------------------------------------------- telegram


@asynccontextmanager
async def telegram_rig(
    store: Store, clock: FixedClock, tmp: Path, patience: float, monotonic: Monotonic
) -> AsyncIterator[Rig]:
    from tests.fakes.telegram import FakeTelegram
    from tests.telegram_support import GROUP, TelegramRig

    async with FakeTelegram() as tg:
        tg.add_chat(GROUP, "supergroup", "UTLA members")
        async with TelegramRig(
            store, clock, tg, request_timeout=patience, monotonic=monotonic
        ) as rig:
            await rig.admin.subscribe(
                CLI_ACTOR,
                Subscription(0, "telegram", str(GROUP), str(GROUP), "en", timezone="UTC"),
            )

            def inject(shape: Shape, send: str = "sendMessage") -> None:
                if shape in (Shape.RATE_LIMITED, Shape.RATE_LIMITED_LONG):
                    seconds = SHORT if shape is Shape.RATE_LIMITED else LONG
                    tg.rate_limit(send, int(seconds), chat=GROUP)
                elif shape is Shape.JSON_5XX:
                    tg.fail(send, 503, JSON_503[1], content_type=JSON_503[0], chat=GROUP)
                elif shape is Shape.HTML_5XX:
                    tg.fail(send, 502, HTML_502[1], content_type=HTML_502[0], chat=GROUP)
                elif shape is Shape.TEXT_5XX:
                    tg.fail(send, 503, TEXT_503[1], content_type=TEXT_503[0], chat=GROUP)
                elif shape is Shape.TRUNCATED_JSON:
                    tg.fail(send, 200, '{"ok": true, "result": {"message_id": 1', chat=GROUP)
                elif shape is Shape.ERROR_200:
                    body = (
                        '{"ok": false, "error_code": 500, "description": "Internal Server Error"}'
                    )
                    tg.fail(send, 200, body, chat=GROUP)
                elif shape is Shape.HANG:
                    tg.fail(send, chat=GROUP, hang=True)
                elif shape is Shape.RESET:
                    tg.fail(send, chat=GROUP, reset=True)
                elif shape is Shape.ACCEPTED_LOST:
                    tg.fail(send, chat=GROUP, lose_answer=True)

            def copies() -> int:
                return _count(tg.messages(GROUP))

            def sends() -> int:
                return sum(
                    1
                    for c in tg.calls
                    if c.method == "sendMessage" and str(c.args.get("chat_id")) == str(GROUP)
                )

            def retracted() -> bool:
                (message,) = tg.messages(GROUP)
                return "RETRACTED" in str(message.get("text", ""))

            yield Rig(
                "telegram", rig.adapter, store, rig.admin, inject, copies, sends,
                lambda shape: inject(shape, "editMessageText"), retracted,
                lambda: len(tg.failures),
            )  # fmt: skip


# ---------------------------------------------------------------------------- e-mail, texts


@asynccontextmanager
async def email_rig(
    store: Store, clock: FixedClock, tmp: Path, patience: float, monotonic: Monotonic
) -> AsyncIterator[Rig]:
    from tests.fakes.smtp import HANG, LOSE_ANSWER, RESET, FakeSmtp
    from tests.family_support import confirm_path, families

    address = "maria@example.com"
    async with FakeSmtp() as smtp, families(store, clock, smtp=smtp, email_timeout=patience) as f:
        before = len(smtp.messages)
        assert (await f.sign_up(path="/subscribe", data={"email": address})).status == 200
        await f.drain()
        assert (await f.confirm(confirm_path(smtp.messages[before]))).status == 200
        assert f.email is not None

        def inject(shape: Shape) -> None:
            if shape is Shape.TRANSIENT_REPLY:
                smtp.fail_next_data("451 4.3.0 Temporary local problem, try again later")
            elif shape is Shape.HANG:
                smtp.fail_next_data(HANG)
            elif shape is Shape.RESET:
                smtp.fail_next_data(RESET)
            elif shape is Shape.ACCEPTED_LOST:
                smtp.fail_next_data(LOSE_ANSWER)

        def copies() -> int:
            return sum(1 for m in smtp.to(address) if HEADLINE in str(m["Subject"]))

        def sends() -> int:
            return smtp.handler.transactions

        def ids() -> list[str]:
            return [str(m["Message-ID"]) for m in smtp.to(address) if HEADLINE in str(m["Subject"])]

        yield Rig("email", f.email, store, f.admin, inject, copies, sends, ids=ids)


@asynccontextmanager
async def sms_rig(
    store: Store, clock: FixedClock, tmp: Path, patience: float, monotonic: Monotonic
) -> AsyncIterator[Rig]:
    from tests.fakes.twilio import FakeTwilio, Fault

    number = "+12135550123"
    from tests.family_support import families

    async with (
        FakeTwilio(retry_after=SHORT) as twilio,
        families(
            store, clock, twilio=twilio, sms={"sender_name": "UTLA"}, sms_timeout=patience
        ) as f,
    ):
        status, reply = await f.text_in(number, "JOIN", "SM-join-faults")
        assert status == 200 and "<Message>" in reply
        await f.drain()
        assert f.sms is not None

        def inject(shape: Shape) -> None:
            if shape is Shape.RATE_LIMITED:
                twilio.retry_after = SHORT
                twilio.fail(Fault.RATE_LIMITED)
            elif shape is Shape.RATE_LIMITED_LONG:
                twilio.retry_after = LONG
                twilio.fail(Fault.RATE_LIMITED)
            elif shape is Shape.JSON_5XX:
                twilio.fail(Fault.JSON_500)
            elif shape is Shape.HTML_5XX:
                twilio.fail(Fault.HTML_502)
            elif shape is Shape.TEXT_5XX:
                twilio.fail(Fault.PLAIN_503)
            elif shape is Shape.TRUNCATED_JSON:
                twilio.fail(Fault.TRUNCATED_JSON)
            elif shape is Shape.HANG:
                twilio.fail(Fault.HANG)
            elif shape is Shape.RESET:
                twilio.fail(Fault.RESET)
            elif shape is Shape.ACCEPTED_LOST:
                twilio.fail(Fault.LOSE_ANSWER)

        def copies() -> int:
            return sum(1 for t in twilio.to(number) if HEADLINE in t.body)

        def sends() -> int:
            return twilio.requests

        yield Rig("sms", f.sms, store, f.admin, inject, copies, sends)


@asynccontextmanager
async def whatsapp_rig(
    store: Store, clock: FixedClock, tmp: Path, patience: float, monotonic: Monotonic
) -> AsyncIterator[Rig]:
    from tests.fakes.twilio import FakeTwilio, Fault
    from tests.family_support import families

    number = "+12135550123"
    async with (
        FakeTwilio(retry_after=SHORT, clock=clock) as twilio,
        families(
            store, clock, twilio=twilio, whatsapp=True, sms_timeout=patience,
            whatsapp_section={"sender_name": "UTLA"},
        ) as f,
    ):  # fmt: skip
        status, reply = await f.whatsapp_in(number, "JOIN", "SM-join-faults")
        assert status == 200 and "<Message>" in reply
        assert f.whatsapp is not None
        faults = {
            Shape.RATE_LIMITED: Fault.RATE_LIMITED,
            Shape.RATE_LIMITED_LONG: Fault.RATE_LIMITED,
            Shape.JSON_5XX: Fault.JSON_500,
            Shape.HTML_5XX: Fault.HTML_502,
            Shape.TEXT_5XX: Fault.PLAIN_503,
            Shape.TRUNCATED_JSON: Fault.TRUNCATED_JSON,
            Shape.HANG: Fault.HANG,
            Shape.RESET: Fault.RESET,
            Shape.ACCEPTED_LOST: Fault.LOSE_ANSWER,
        }

        def inject(shape: Shape) -> None:
            twilio.retry_after = LONG if shape is Shape.RATE_LIMITED_LONG else SHORT
            twilio.fail(faults[shape])

        def copies() -> int:
            return sum(1 for t in twilio.whatsapp(number) if HEADLINE in t.body)

        def sends() -> int:
            return twilio.requests

        yield Rig("whatsapp", f.whatsapp, store, f.admin, inject, copies, sends)


@asynccontextmanager
async def webpush_rig(
    store: Store, clock: FixedClock, tmp: Path, patience: float, monotonic: Monotonic
) -> AsyncIterator[Rig]:
    from tests.fakes.push import FakePushService, PushFault
    from tests.push_support import VAPID_PUBLIC, push_bot

    async with (
        FakePushService(retry_after=SHORT) as push,
        push_bot(store, clock, push, request_timeout=patience) as bot,
    ):
        sub = push.subscribe(VAPID_PUBLIC)
        status, _ = await bot.subscribe(sub, "en", "all")
        assert status == 201
        faults = {
            Shape.RATE_LIMITED: PushFault.RATE_LIMITED,
            Shape.RATE_LIMITED_LONG: PushFault.RATE_LIMITED,
            Shape.JSON_5XX: PushFault.JSON_500,
            Shape.HTML_5XX: PushFault.HTML_502,
            Shape.TEXT_5XX: PushFault.PLAIN_503,
            Shape.HANG: PushFault.HANG,
            Shape.RESET: PushFault.RESET,
            Shape.ACCEPTED_LOST: PushFault.LOSE_ANSWER,
        }

        def inject(shape: Shape) -> None:
            push.retry_after = LONG if shape is Shape.RATE_LIMITED_LONG else SHORT
            push.fail(faults[shape])

        def copies() -> int:
            return sum(1 for m in push.received(sub) if HEADLINE in m["title"])

        def sends() -> int:
            return push.requests

        yield Rig("webpush", bot.adapter, store, bot.admin, inject, copies, sends)


# ---------------------------------------------------------------------------- webhooks


@asynccontextmanager
async def webhooks_rig(
    store: Store, clock: FixedClock, tmp: Path, patience: float, monotonic: Monotonic
) -> AsyncIterator[Rig]:
    from adapters.webhooks import Sender, WebhookAdapter
    from tests.fakes.receiver import Answer, Receiver
    from tests.support import campaign_config, plugin_ctx

    config = campaign_config(webhooks={"allowed_networks": ["127.0.0.0/8"]})
    ctx = plugin_ctx("webhooks", store, clock, config=config)
    adapter = WebhookAdapter(ctx, sender=Sender(ctx.webhook_policy, timeout=patience))
    async with Receiver() as receiver:
        await adapter.start()
        try:
            created = await ctx.webhooks.add(CLI_ACTOR, receiver.url)
            receiver.secret = created.secret

            def inject(shape: Shape) -> None:
                if shape is Shape.RATE_LIMITED:
                    receiver.fail(Answer(429, "slow down", retry_after=f"{SHORT:g}"))
                elif shape is Shape.RATE_LIMITED_LONG:
                    receiver.fail(Answer(429, "slow down", retry_after=f"{LONG:g}"))
                elif shape is Shape.JSON_5XX:
                    receiver.fail(Answer(503, JSON_503[1], JSON_503[0]))
                elif shape is Shape.HTML_5XX:
                    receiver.fail(Answer(502, HTML_502[1], HTML_502[0]))
                elif shape is Shape.TEXT_5XX:
                    receiver.fail(Answer(503, TEXT_503[1], TEXT_503[0]))
                elif shape is Shape.HANG:
                    receiver.fail(Answer(200, hang=True))
                elif shape is Shape.RESET:
                    receiver.fail(Answer(200, reset=True))
                elif shape is Shape.ACCEPTED_LOST:
                    receiver.fail(Answer(204, lost=True))

            def copies() -> int:  # what a receiver keeps: one event per webhook-id
                return len(
                    {r.webhook_id for r in receiver.requests if r.verified and _count([r.event])}
                )

            def sends() -> int:
                return len(receiver.requests)

            yield Rig("webhooks", adapter, store, ctx.admin, inject, copies, sends)
        finally:
            await adapter.stop()


RIGS: dict[str, RigFactory] = {
    "discord": discord_rig,
    "slack": slack_rig,
    "telegram": telegram_rig,
    "email": email_rig,
    "sms": sms_rig,
    "webhooks": webhooks_rig,
    "whatsapp": whatsapp_rig,
    "webpush": webpush_rig,
}
