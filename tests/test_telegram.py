"""Telegram end to end: the real python-telegram-bot against the fake Bot API on 127.0.0.1.

A group asks in English and Spanish; an admin posts from a private chat through the form
and its preview; every subscribed Telegram chat (a group, a forum topic, a channel) and a
webhook receiver get the update once; edits and retractions reach the Telegram copies in
place; a chat that removed the bot is parked and the admins told; 429s, 5xx pages and
hangs are retried; webhook mode checks its secret and handles a repeated update once.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from adapters.telegram import inert, render, visible_length
from bot.clock import FixedClock
from bot.editorial.admin import Changes, Draft
from bot.errors import PermanentDeliveryError, TransientDeliveryError
from bot.models import (
    Actor,
    Demand,
    DemandStatus,
    DemandText,
    Status,
    Subscription,
    UpdateText,
    Urgency,
)
from bot.plugins.outbound import ChannelRef, Field, MessageKind, OutboundMessage
from bot.store import Store
from tests.fakes.receiver import Receiver
from tests.fakes.telegram import BOT_ID, FakeTelegram
from tests.telegram_support import (
    ADMIN_GROUP,
    ADMIN_ID,
    CHANNEL,
    CHAT_ADMIN_ID,
    FORUM,
    GROUP,
    MEMBER_ID,
    SECOND_GROUP,
    SPANISH_ID,
    TelegramRig,
)

ADMIN = Actor(platform="cli", user_id="cli", display_name="command line")


@pytest.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as fake:
        for chat in (GROUP, SECOND_GROUP, FORUM):
            fake.add_chat(chat, "supergroup", f"Group {chat}")
        fake.add_chat(CHANNEL, "channel", "UTLA updates", admin=True, username="utla_updates")
        admins = fake.add_chat(ADMIN_GROUP, "supergroup", "UTLA comms team")
        fake.add_person(ADMIN_ID, "Arlene")
        fake.add_person(CHAT_ADMIN_ID, "Camila")
        fake.add_person(MEMBER_ID, "Marcus")
        fake.add_person(SPANISH_ID, "Lucía", language="es")
        admins.members.update({CHAT_ADMIN_ID: "administrator", MEMBER_ID: "member"})
        yield fake


@pytest.fixture
async def rig(
    sqlite_store: Store, clock: FixedClock, tg: FakeTelegram
) -> AsyncIterator[TelegramRig]:
    async with TelegramRig(sqlite_store, clock, tg) as running:
        await seed_demands(sqlite_store, clock)
        yield running


async def seed_demands(store: Store, clock: FixedClock) -> None:
    async with store.write() as tx:
        await tx.insert_demand(
            Demand(
                "pay",
                0,
                DemandStatus.OFFER_ON_TABLE,
                {
                    "en": DemandText("Fair pay", union_position="A 6.5% raise"),
                    "es": DemandText("Salario justo", union_position="Un aumento del 6.5%"),
                },
                clock(),
            )
        )


async def subscribe(rig: TelegramRig, chat: int, channel: int | None = None, **extra: Any) -> None:
    await rig.admin.subscribe(
        ADMIN,
        Subscription(
            id=0,
            platform="telegram",
            workspace=str(chat),
            channel=str(channel or chat),
            language=extra.pop("language", "en"),
            **extra,
        ),
    )


def replies(tg: FakeTelegram, chat: int) -> list[dict[str, Any]]:
    return [m for m in tg.messages(chat) if m.get("from", {}).get("id") == BOT_ID]


async def ask(
    tg: FakeTelegram, chat: int, user: int | None, text: str, **kw: Any
) -> dict[str, Any]:
    """Send `text`, wait for the bot's answer, and return it."""
    before = len(replies(tg, chat))
    tg.command(chat, user, text, **kw)
    await tg.until(lambda: len(replies(tg, chat)) > before)
    return replies(tg, chat)[-1]


def draft(headline: str = "30,000 teachers walk out") -> Draft:
    return Draft(
        Status.STRIKE_ON,
        {
            "en": UpdateText(headline, "Picket at your school at 6:30.", "Picket at 6:30"),
            "es": UpdateText("30.000 docentes en huelga", "Piquete a las 6:30."),
        },
        Urgency.URGENT,
    )


# ---------------------------------------------------------------------------- members ask


async def test_a_group_asks_status_and_demands_in_english_and_spanish(
    rig: TelegramRig, tg: FakeTelegram
) -> None:
    await rig.admin.post(ADMIN, draft())
    status = await ask(tg, GROUP, MEMBER_ID, "/status")
    assert status["text"].startswith("Where things stand: On strike\n")
    assert "Day 5 of the strike." in status["text"]
    assert "30,000 teachers walk out" in status["text"]
    demands = await ask(tg, GROUP, MEMBER_ID, "/demands@utla_strike_bot")
    assert "Fair pay" in demands["text"] and "A 6.5% raise" in demands["text"]
    estado = await ask(tg, GROUP, SPANISH_ID, "/estado")
    assert "En huelga" in estado["text"] and "Día 5 de la huelga" in estado["text"]
    assert "30.000 docentes en huelga" in estado["text"]
    demandas = await ask(tg, GROUP, SPANISH_ID, "/demandas")
    assert "Salario justo" in demandas["text"] and "Un aumento del 6.5%" in demandas["text"]
    one = await ask(tg, GROUP, SPANISH_ID, "/demanda pay")
    assert "Salario justo" in one["text"]
    helped = await ask(tg, GROUP, MEMBER_ID, "/help")
    assert "/status" in helped["text"] and "/strike status" not in helped["text"]
    also = await ask(tg, GROUP, MEMBER_ID, "/strike timeline 1")
    assert "30,000 teachers walk out" in also["text"]
    # Each answer is a reply to the question, parsed as HTML by Telegram.
    sent = tg.sent("sendMessage")
    assert all(s["parse_mode"] == "HTML" for s in sent)
    assert all(s["reply_parameters"]["allow_sending_without_reply"] for s in sent)
    assert all(s["link_preview_options"] == {"is_disabled": True} for s in sent)


async def test_commands_for_other_bots_are_left_alone(rig: TelegramRig, tg: FakeTelegram) -> None:
    tg.command(GROUP, MEMBER_ID, "/status@some_other_bot")
    tg.command(GROUP, MEMBER_ID, "/ban everyone")  # not ours, in a group: silence
    marker = await ask(tg, GROUP, MEMBER_ID, "/next")
    assert [m["message_id"] for m in replies(tg, GROUP)] == [marker["message_id"]]


async def test_menus_are_registered_in_each_language_and_admins_see_theirs(
    rig: TelegramRig, tg: FakeTelegram
) -> None:
    assert tg.menu("en") == ["status", "demands", "demand", "timeline", "next", "help"]
    assert tg.menu("es") == ["estado", "demandas", "demanda", "cronologia", "siguiente", "ayuda"]
    assert tg.menu("") == tg.menu("en")  # everyone else: the campaign's first language
    admin_menu = tg.menu("es", {"type": "chat", "chat_id": ADMIN_ID})
    assert "publicar" in admin_menu and "retirar" in admin_menu and "estado" in admin_menu


# ---------------------------------------------------------------------------- admins post


async def test_an_admin_posts_from_telegram_and_every_chat_and_webhook_gets_it_once(
    rig: TelegramRig, tg: FakeTelegram
) -> None:
    for chat in (GROUP, SECOND_GROUP, CHANNEL):
        await subscribe(rig, chat)
    await subscribe(rig, FORUM, 7)  # one topic of a forum
    await subscribe(rig, ADMIN_GROUP)
    webhooks = await rig.with_webhooks()
    async with Receiver() as receiver:
        created = await webhooks.ctx.webhooks.add(ADMIN, receiver.url)
        receiver.secret = created.secret

        form = await ask(tg, ADMIN_ID, ADMIN_ID, "/publicar")  # Spanish name, English admin
        assert "Which status" in form["text"]
        buttons = [b for row in form["reply_markup"]["inline_keyboard"] for b in row]
        strike_on = next(b for b in buttons if b["text"] == "On strike")
        tg.press(ADMIN_ID, ADMIN_ID, form["message_id"], strike_on["callback_data"])
        await tg.until(lambda: "headline" in replies(tg, ADMIN_ID)[-1]["text"])
        await ask(tg, ADMIN_ID, ADMIN_ID, "Strike is on: picket at 6:30 <everywhere> & @utla_comms")
        await ask(tg, ADMIN_ID, ADMIN_ID, "All 900 schools. Bring water.")
        # No next step; then the campaign's other language, for the families who read it.
        spanish = await ask(tg, ADMIN_ID, ADMIN_ID, "/skip")
        assert spanish["text"].startswith("Now in Spanish, for the members who read it")
        body = await ask(tg, ADMIN_ID, ADMIN_ID, "La huelga empezó: piquete a las 6:30")
        assert body["text"] == "Send the details in Spanish, or /skip."
        urgency = await ask(tg, ADMIN_ID, ADMIN_ID, "Las 900 escuelas. Traigan agua.")
        urgent = next(
            b
            for row in urgency["reply_markup"]["inline_keyboard"]
            for b in row
            if b["text"] == "Urgent"
        )
        tg.press(ADMIN_ID, ADMIN_ID, urgency["message_id"], urgent["callback_data"])
        await tg.until(lambda: "Nothing has been sent yet" in replies(tg, ADMIN_ID)[-1]["text"])
        preview = replies(tg, ADMIN_ID)[-1]
        assert "It will go to 5 chat channels and 1 webhook receiver." in preview["text"]
        assert "Strike is on: picket at 6:30 <everywhere> & @\u200butla_comms" in preview["text"]
        assert "La huelga empezó: piquete a las 6:30" in preview["text"]  # each wording shown
        async with rig.store.read() as tx:
            assert await tx.count_updates() == 0  # nothing before Post
        post = preview["reply_markup"]["inline_keyboard"][0][0]
        assert post["text"] == "Post"
        tg.press(ADMIN_ID, ADMIN_ID, preview["message_id"], post["callback_data"])
        await tg.until(
            lambda: (
                "Posted" in tg.messages(ADMIN_ID)[-1]["text"]
                or any("Posted" in m["text"] for m in replies(tg, ADMIN_ID))
            )
        )
        # A second tap on the same (now used) button changes nothing.
        tg.press(ADMIN_ID, ADMIN_ID, preview["message_id"], post["callback_data"])
        stats = await rig.deliver()
        assert stats.dead == 0
        async with rig.store.read() as tx:
            assert await tx.count_updates() == 1
            [update] = await tx.list_updates(rig.clock())
        assert update.author == f"telegram:{ADMIN_ID} (Arlene)"
        assert update.texts["es"] == UpdateText(
            "La huelga empezó: piquete a las 6:30", "Las 900 escuelas. Traigan agua."
        )
        for chat in (GROUP, SECOND_GROUP, CHANNEL, FORUM, ADMIN_GROUP):
            [copy] = [m for m in replies(tg, chat) if "Strike is on" in m["text"]]
            assert tg.pings(chat) == []
        topic = replies(tg, FORUM)[0]
        assert topic["message_thread_id"] == 7
        assert [e["type"] for e in receiver.accepted] == ["update.published"]
        assert all(r.verified for r in receiver.requests)

        # Edits and retractions reach the Telegram copies, in place.
        await rig.admin.edit(
            ADMIN, update.id, Changes(texts={"en": UpdateText("Strike is on: day 1")}), reason="Day"
        )
        await rig.deliver()
        for chat in (GROUP, SECOND_GROUP, CHANNEL, FORUM):
            [copy] = replies(tg, chat)
            assert copy["text"].startswith("Strike is on: day 1") and copy.get("edit_date")
        await rig.admin.retract(ADMIN, update.id, reason="Posted too early")
        await rig.deliver()
        for chat in (GROUP, SECOND_GROUP, CHANNEL, FORUM):
            [copy] = replies(tg, chat)
            assert copy["text"].startswith("RETRACTED: Strike is on: day 1")
            assert "Posted too early" in copy["text"]
            assert "<s>" in tg.chats[chat].messages[copy["message_id"]]["html"]
        assert [e["type"] for e in receiver.accepted] == [
            "update.published", "update.edited", "update.retracted",
        ]  # fmt: skip


async def test_members_cannot_open_admin_forms_and_groups_send_admins_to_a_private_chat(
    rig: TelegramRig, tg: FakeTelegram
) -> None:
    refused = await ask(tg, MEMBER_ID, MEMBER_ID, "/post")
    assert "Only union admins" in refused["text"] and f"“{MEMBER_ID}”" in refused["text"]
    assert "[admins.telegram]" in refused["text"]
    in_group = await ask(tg, GROUP, ADMIN_ID, "/post")
    assert "private chat" in in_group["text"] and "https://t.me/utla_strike_bot" in in_group["text"]


async def test_administrators_of_the_admin_group_are_admins(
    rig: TelegramRig, tg: FakeTelegram
) -> None:
    form = await ask(tg, CHAT_ADMIN_ID, CHAT_ADMIN_ID, "/post")
    assert "Which status" in form["text"]
    asked = [c.args for c in tg.calls if c.method == "getChatMember"]
    assert {"chat_id": ADMIN_GROUP, "user_id": CHAT_ADMIN_ID} in asked


def button(message: dict[str, Any], data_suffix: str) -> str:
    """The callback data of the button under `message` whose data ends with `data_suffix`."""
    rows = message["reply_markup"]["inline_keyboard"]
    return next(
        str(b["callback_data"]) for row in rows for b in row
        if b["callback_data"].endswith(data_suffix)
    )  # fmt: skip


async def test_an_admin_writes_in_their_own_language_and_adds_the_campaigns_main_one(
    rig: TelegramRig, tg: FakeTelegram
) -> None:
    rosa = 555  # an administrator of the admin group whose Telegram speaks Spanish
    tg.add_person(rosa, "Rosa", language="es")
    tg.chats[ADMIN_GROUP].members[rosa] = "administrator"
    form = await ask(tg, rosa, rosa, "/publicar")
    tg.press(rosa, rosa, form["message_id"], button(form, ":s:strike_on"))
    await tg.until(lambda: "titular" in replies(tg, rosa)[-1]["text"])
    await ask(tg, rosa, rosa, "Mañana seguimos en huelga")
    await ask(tg, rosa, rosa, "/skip")  # no details
    english = await ask(tg, rosa, rosa, "/skip")  # no next step
    assert english["text"].startswith("Ahora en inglés, el idioma principal de la campaña")
    again = await ask(tg, rosa, rosa, "/skip")  # every post has the main language
    assert again["text"] == english["text"]
    urgency = await ask(tg, rosa, rosa, "We stay on strike tomorrow")
    tg.press(rosa, rosa, urgency["message_id"], button(urgency, ":g:routine"))
    await tg.until(lambda: "Mañana seguimos en huelga" in replies(tg, rosa)[-1]["text"])
    preview = replies(tg, rosa)[-1]
    assert "We stay on strike tomorrow" in preview["text"]  # each wording, as its readers see it
    tg.press(rosa, rosa, preview["message_id"], button(preview, ":ok"))
    await tg.until(lambda: any("#1 publicada" in m["text"] for m in tg.messages(rosa)))
    async with rig.store.read() as tx:
        [update] = await tx.list_updates(rig.clock())
    assert update.texts == {
        "es": UpdateText("Mañana seguimos en huelga"),
        "en": UpdateText("We stay on strike tomorrow"),
    }
    assert update.status is Status.STRIKE_ON and update.urgency is Urgency.ROUTINE


async def test_typed_admin_commands_run_at_once_and_retract_previews(
    rig: TelegramRig, tg: FakeTelegram
) -> None:
    posted = await ask(
        tg, ADMIN_ID, ADMIN_ID, '/post talks_scheduled "Talks resume Saturday" urgency=important'
    )
    assert "Posted" in posted["text"] and "Talks resume Saturday" in posted["text"]
    form = await ask(tg, ADMIN_ID, ADMIN_ID, "/retract")
    pick = form["reply_markup"]["inline_keyboard"][0][0]
    assert pick["text"].startswith("#1")
    tg.press(ADMIN_ID, ADMIN_ID, form["message_id"], pick["callback_data"])
    await tg.until(lambda: "Why is it retracted" in replies(tg, ADMIN_ID)[-1]["text"])
    preview = await ask(tg, ADMIN_ID, ADMIN_ID, "Wrong day")
    assert "RETRACTED: Talks resume Saturday" in preview["text"]
    go = preview["reply_markup"]["inline_keyboard"][0][0]
    tg.press(ADMIN_ID, ADMIN_ID, preview["message_id"], go["callback_data"])
    await tg.until(lambda: "retracted" in replies(tg, ADMIN_ID)[-1]["text"].lower() and
                   "reply_markup" not in replies(tg, ADMIN_ID)[-1])  # fmt: skip
    async with rig.store.read() as tx:
        update = await tx.get_update(1, rig.clock())
    assert update is not None and update.retracted and update.retraction_reason == "Wrong day"


# ---------------------------------------------------------------------------- subscribing


async def test_groups_and_channels_subscribe_like_any_channel(
    rig: TelegramRig, tg: FakeTelegram
) -> None:
    member = await ask(tg, GROUP, MEMBER_ID, "/subscribe")
    assert "Only union admins" in member["text"]
    done = await ask(tg, GROUP, ADMIN_ID, "/suscribir language=es")
    assert done["text"].startswith("This channel is subscribed")
    in_topic = await ask(tg, FORUM, ADMIN_ID, "/subscribe", thread=42)
    assert in_topic["text"].startswith("This channel is subscribed")
    assert in_topic["message_thread_id"] == 42
    # A channel has nobody to type there: an admin subscribes it from a private chat.
    tg.chats[CHANNEL].bot_status = "member"
    not_admin = await ask(tg, ADMIN_ID, ADMIN_ID, "/subscribe @utla_updates")
    assert "not an administrator of @\u200butla_updates" in not_admin["text"]
    tg.chats[CHANNEL].bot_status = "administrator"
    subscribed = await ask(tg, ADMIN_ID, ADMIN_ID, "/subscribe @utla_updates language=es")
    assert subscribed["text"].startswith("This channel is subscribed")
    async with rig.store.read() as tx:
        subs = {s.address: s for s in await tx.list_subscriptions(platform="telegram")}
    assert set(subs) == {
        f"telegram:{GROUP}/{GROUP}", f"telegram:{FORUM}/42", f"telegram:{CHANNEL}/{CHANNEL}",
    }  # fmt: skip
    assert subs[f"telegram:{GROUP}/{GROUP}"].language == "es"


async def test_a_post_in_an_admin_channel_counts_as_its_administrators(
    sqlite_store: Store, clock: FixedClock, tg: FakeTelegram
) -> None:
    from tests.telegram_support import telegram_config

    config = telegram_config(
        telegram={"mode": "polling"},
        admins={"telegram": {"admin_chat_ids": [str(CHANNEL)]}},
    )
    async with TelegramRig(sqlite_store, clock, tg, config=config):
        tg.command(CHANNEL, None, "/subscribe")
        await tg.until(lambda: len(replies(tg, CHANNEL)) == 1)
    assert replies(tg, CHANNEL)[0]["text"].startswith("This channel is subscribed")


# ---------------------------------------------------------------------------- delivery


async def test_a_chat_that_removed_the_bot_is_parked_and_the_admins_are_told(
    rig: TelegramRig, tg: FakeTelegram
) -> None:
    await subscribe(rig, GROUP)
    await subscribe(rig, ADMIN_GROUP)
    tg.kick(GROUP)
    await rig.admin.post(ADMIN, draft())
    await rig.deliver()
    async with rig.store.read() as tx:
        sub = await tx.find_subscription("telegram", str(GROUP), str(GROUP))
    assert sub is not None and sub.broken_reason is not None
    assert "bot was kicked" in sub.broken_reason
    notice = [m for m in replies(tg, ADMIN_GROUP) if "Channel paused" in m["text"]]
    assert len(notice) == 1 and f"telegram:{GROUP}/{GROUP}" in notice[0]["text"]


async def test_chat_not_found_is_permanent_and_5xx_pages_are_transient(
    rig: TelegramRig, tg: FakeTelegram
) -> None:
    message = OutboundMessage(title="Picket at 6:30", kind=MessageKind.UPDATE)
    with pytest.raises(PermanentDeliveryError, match=r"(?i)chat not found"):
        await rig.adapter.send(ChannelRef("-1009999", "-1009999"), message, idempotency_key="k1")
    for status, body, kind in (
        (502, "<html><body>Bad Gateway</body></html>", "text/html"),
        (500, '{"ok": false, "error_code": 500, "description": "Internal Server Error"}',
         "application/json"),
        (503, "upstream connect error", "text/plain"),
    ):  # fmt: skip
        tg.fail("sendMessage", status, body, content_type=kind)
        with pytest.raises(TransientDeliveryError):
            await rig.adapter.send(ChannelRef(str(GROUP), str(GROUP)), message, idempotency_key="k")
    sent = await rig.adapter.send(ChannelRef(str(GROUP), str(GROUP)), message, idempotency_key="k")
    assert tg.messages(GROUP)[-1]["message_id"] == int(sent)


async def test_a_429_is_honoured_with_its_retry_after(rig: TelegramRig, tg: FakeTelegram) -> None:
    channel = ChannelRef(str(GROUP), str(GROUP))
    message = OutboundMessage(title="Update", kind=MessageKind.UPDATE)
    tg.rate_limit("sendMessage", 7)
    with pytest.raises(TransientDeliveryError) as limited:
        await rig.adapter.send(channel, message, idempotency_key="k")
    assert limited.value.retry_after == 7 and not limited.value.is_global
    calls = len(tg.calls)
    with pytest.raises(TransientDeliveryError, match="pause"):  # held back here, not sent
        await rig.adapter.send(ChannelRef(str(GROUP), "12"), message, idempotency_key="k")
    assert len(tg.calls) == calls
    assert rig.adapter.health()["rate_limited_s"]


async def test_a_hung_request_times_out_and_is_retried(
    sqlite_store: Store, clock: FixedClock, tg: FakeTelegram
) -> None:
    async with TelegramRig(sqlite_store, clock, tg, request_timeout=0.5) as rig:
        tg.fail("sendMessage", hang=True)
        with pytest.raises(TransientDeliveryError):
            await rig.adapter.send(
                ChannelRef(str(GROUP), str(GROUP)),
                OutboundMessage(title="Update", kind=MessageKind.UPDATE),
                idempotency_key="k",
            )


async def test_the_pace_stays_under_telegrams_limits(rig: TelegramRig) -> None:
    pacing = rig.adapter.pacing
    assert pacing.global_per_second <= 30
    assert pacing.per_workspace_per_second is not None
    assert pacing.per_workspace_per_second * 60 <= 20
    assert pacing.per_channel_per_second * 60 <= 20


def test_rendering_escapes_html_and_pings_nobody() -> None:
    message = OutboundMessage(
        title="<b>Strike</b> & @utla_comms",
        body="Write to strike@utla.net; ask @organizer_maria. " + "x" * 5000,
        kind=MessageKind.UPDATE,
        status_label="On strike",
        fields=(Field("Next step", "Picket <now>"),),
        url="https://strike.example.org/updates/1",
        footer="Update #1",
    )
    text = render(message)
    assert text.startswith("<b>&lt;b&gt;Strike&lt;/b&gt; &amp; @\u200butla_comms</b>")
    assert "strike@utla.net" in text  # an e-mail address is not a mention
    assert "@\u200borganizer_maria" in text
    assert visible_length(text) <= 4096
    assert "https://strike.example.org/updates/1" in text
    assert inert(inert("@someone_here")) == "@\u200bsomeone_here"


# ---------------------------------------------------------------------------- webhook mode


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_webhook_mode_checks_the_secret_and_handles_an_update_once(
    sqlite_store: Store, clock: FixedClock, tg: FakeTelegram
) -> None:
    from aiohttp import ClientSession, web

    from tests.fakes._server import serve

    port = free_port()
    url = f"http://127.0.0.1:{port}/telegram/webhook"
    rig = TelegramRig(sqlite_store, clock, tg, webhook_url=url)
    app = web.Application()
    rig.adapter.mount(app)
    runner, _ = await serve(app, port=port)
    try:
        async with rig:
            assert tg.webhook is not None and tg.webhook["url"] == url
            secret = tg.webhook["secret_token"]
            assert secret and secret not in repr(rig.adapter.health())
            await seed_demands(sqlite_store, clock)
            update_id = tg.command(GROUP, MEMBER_ID, "/demands")
            await tg.until(lambda: len(replies(tg, GROUP)) == 1)
            assert await tg.deliver_again(update_id) == 200  # Telegram retrying
            assert len(replies(tg, GROUP)) == 1  # answered once
            async with ClientSession() as http:
                forged = await http.post(
                    url, json={"update_id": 1}, headers={"X-Telegram-Bot-Api-Secret-Token": "x"}
                )
                assert forged.status == 401
                bad = await http.post(
                    url, data=b"{not json", headers={"X-Telegram-Bot-Api-Secret-Token": secret}
                )
                assert bad.status == 400
            assert rig.adapter.health()["mode"] == "webhook"
    finally:
        await runner.cleanup()


async def test_a_second_instance_does_not_answer_the_same_update_again(
    sqlite_store: Store, clock: FixedClock, tg: FakeTelegram
) -> None:
    """Two instances behind a load balancer share the store: the update is handled once."""
    from aiohttp import web

    from tests.fakes._server import serve

    ports = [free_port(), free_port()]
    urls = [f"http://127.0.0.1:{p}/telegram/webhook" for p in ports]
    rigs = [TelegramRig(sqlite_store, clock, tg, webhook_url=u) for u in urls]
    runners = []
    for rig, port in zip(rigs, ports, strict=True):
        app = web.Application()
        rig.adapter.mount(app)
        runners.append((await serve(app, port=port))[0])
    try:
        async with rigs[0], rigs[1]:  # the second's setWebhook wins: updates go to it
            assert tg.webhook is not None and tg.webhook["url"] == urls[1]
            update_id = tg.command(GROUP, MEMBER_ID, "/next")
            await tg.until(lambda: len(replies(tg, GROUP)) == 1)
            tg.webhook = {**tg.webhook, "url": urls[0]}  # the load balancer picks the other
            assert await tg.deliver_again(update_id) == 200
            assert len(replies(tg, GROUP)) == 1
    finally:
        for runner in runners:
            await runner.cleanup()


async def test_a_refused_set_webhook_does_not_stop_the_bot_from_delivering(
    sqlite_store: Store, clock: FixedClock, tg: FakeTelegram
) -> None:
    tg.fail("setWebhook", 502, "<html>Bad Gateway</html>", content_type="text/html")
    url = f"http://127.0.0.1:{free_port()}/telegram/webhook"
    async with TelegramRig(sqlite_store, clock, tg, webhook_url=url) as rig:
        assert tg.webhook is None  # not set yet: it is retried in the background
        assert "Bad Gateway" in str(rig.adapter.health()["last_error"])
        sent = await rig.adapter.send(
            ChannelRef(str(GROUP), str(GROUP)),
            OutboundMessage(title="Update", kind=MessageKind.UPDATE),
            idempotency_key="k",
        )
        assert tg.messages(GROUP)[-1]["message_id"] == int(sent)


async def test_telegram_down_at_start_is_asked_again_until_it_answers(
    sqlite_store: Store, clock: FixedClock, tg: FakeTelegram
) -> None:
    """getMe, then setWebhook, fail once each: the adapter starts anyway, asks again two
    seconds later each time, and is connected once Telegram answers."""
    tg.fail("getMe", 502)
    tg.fail("setWebhook")
    rig = TelegramRig(
        sqlite_store, clock, tg, webhook_url="https://bot.example.org/telegram/webhook"
    )
    async with rig:
        assert rig.adapter.health()["connected"] is False
        await tg.until(lambda: tg.webhook is not None, patience=10)
        health = rig.adapter.health()
        assert health["connected"] is True and "Internal Server Error" in str(health["last_error"])
        assert [c.status for c in tg.calls if c.method == "setWebhook"] == [500, 200]
