"""One proposal through all six admin surfaces — the CLI, typed chat, Discord, Slack,
Telegram and the admin HTTP API — each through its real library against its fake: every one
shows the same preview (the update as members will see it, and the same reach, counted by
the desk) and stores the same update, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from bot.cli import main
from bot.clock import FixedClock
from bot.commands import CommandContext, Commands
from bot.editorial.admin import Admin
from bot.models import Status, Subscription, Update, UpdateText, Urgency
from bot.store import Store
from tests.fakes.discord import (
    COMMS_ROLE_ID,
    FakeDiscord,
    as_member,
    button_payload,
    buttons,
    discord_bot,
    load_payload,
    modal_submit_payload,
)
from tests.fakes.slack import FakeSlack, SlackBot, chosen, typed
from tests.fakes.telegram import BOT_ID, FakeTelegram
from tests.support import ADMIN, ADMINS, CAMPAIGN, FRIDAY, ROOT
from tests.telegram_support import ADMIN_GROUP, ADMIN_ID, TelegramRig
from tests.web_support import TOKEN, client_for, web_context

EN = UpdateText("Strike continues Tuesday", "Picket lines at 6:30 AM.", "Rally at Grand Park")
ES = UpdateText("La huelga sigue el martes", "Piquetes a las 6:30.", "Mitin en Grand Park")
REACH = "It will go to 2 chat channels."  # the console channels subscribed below

Surface = Callable[[Store, str, Path], Awaitable[str]]


async def typed_chat(store: Store, url: str, tmp_path: Path) -> str:
    clock = FixedClock(FRIDAY)
    commands = Commands(store, CAMPAIGN, Admin(store, CAMPAIGN, ADMINS, clock), clock)
    ctx = CommandContext("discord", ADMIN, "G1", "C1")
    typed_post = (
        f'post strike_on "{EN.headline}" "{EN.body}" next="{EN.next_step}" urgency=important '
        f'headline_es="{ES.headline}" body_es="{ES.body}" next_es="{ES.next_step}"'
    )
    preview = await commands.handle(ctx, typed_post + " preview")
    assert preview.ok, preview.message.body
    posted = await commands.handle(ctx, typed_post)
    assert posted.ok, posted.message.body
    return " ".join([preview.message.body, *(m.title + " " + m.body for m in preview.extra)])


async def command_line(store: Store, url: str, tmp_path: Path) -> str:
    args = [
        "--config", str(ROOT / "config" / "strike.toml"), "--database-url", url, "post",
        "--status", "strike_on", "--urgency", "important", "--headline", EN.headline,
        "--body", EN.body, "--next-step", EN.next_step, "--es-headline", ES.headline,
        "--es-body", ES.body, "--es-next-step", ES.next_step,
    ]  # fmt: skip
    preview = await asyncio.to_thread(_run, [*args, "--dry-run", "--json"])
    assert await asyncio.to_thread(_run, args) == ""
    shown = json.loads(preview)
    assert shown["channels"] == 2
    dry_text = await asyncio.to_thread(_run, [*args, "--dry-run"])
    return dry_text + " " + json.dumps(shown["preview"], ensure_ascii=False)


def _run(args: list[str]) -> str:
    """`strikebot ARGS`, in its own event loop as from a shell; what it printed."""
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        from bot.cli import out as console

        console.file = out
        try:
            code = main(args)
        finally:
            console.file = None  # type: ignore[assignment]
    assert code == 0, out.getvalue()
    return out.getvalue() if "--dry-run" in args else ""


async def http_api(store: Store, url: str, tmp_path: Path) -> str:
    clock = FixedClock(FRIDAY)
    body = {
        "status": "strike_on",
        "urgency": "important",
        "texts": {
            "en": {"headline": EN.headline, "body": EN.body, "next_step": EN.next_step},
            "es": {"headline": ES.headline, "body": ES.body, "next_step": ES.next_step},
        },
    }
    auth = {"Authorization": f"Bearer {TOKEN}"}
    async with client_for(web_context(store, clock)) as client:
        dry = await client.post("/api/v1/admin/updates?dry_run=true", json=body, headers=auth)
        assert dry.status == 200, await dry.text()
        shown = await dry.json()
        posted = await client.post("/api/v1/admin/updates", json=body, headers=auth)
        assert posted.status == 201, await posted.text()
    assert shown["channels"] == 2
    return str(shown["sentence"]) + " " + json.dumps(shown["preview"], ensure_ascii=False)


async def slack(store: Store, url: str, tmp_path: Path) -> str:
    async with FakeSlack() as fake:
        fake.add_channel("C0GENERAL")
        fake.add_user("U0ADMIN", "alex")
        async with SlackBot(store, FixedClock(FRIDAY), fake) as bot:
            assert (await bot.command("post", user="U0ADMIN")).status == 200
            form = fake.views[list(fake.views)[-1]]
            answer = await bot.submit(
                form,
                {
                    "status": chosen(form, "status", "strike_on"),
                    "urgency": chosen(form, "urgency", "important"),
                    "headline": typed(EN.headline),
                    "body": typed(EN.body),
                    "next_step": typed(EN.next_step),
                    "headline_es": typed(ES.headline),
                    "body_es": typed(ES.body),
                    "next_step_es": typed(ES.next_step),
                },
            )
            preview = answer.json()["view"]
            done = await bot.submit(preview, {})
            assert done.json()["response_action"] == "update"
    return json.dumps(preview["blocks"], ensure_ascii=False)


async def discord(store: Store, url: str, tmp_path: Path) -> str:
    async with FakeDiscord() as fake, discord_bot(fake, url, FixedClock(FRIDAY)) as bot:
        command = as_member(load_payload("interaction_command_post"), roles=(COMMS_ROLE_ID,))
        first = await _discord_modal(bot, command, EN, {"urgency": ["important"]})
        shown = bot.fake.original_message(first)
        add = buttons(shown)["Add Spanish"]
        click = await bot.fake.send_interaction(button_payload(shown, add, like=command))
        (modal,) = await bot.fake.wait_reply(click)
        second = await _discord_submit(bot, modal, command, ES)
        preview = bot.fake.original_message(second)
        post = await bot.fake.send_interaction(
            button_payload(preview, buttons(preview)["Post"], like=command)
        )
        await bot.fake.wait_reply(post, count=2)
    return " ".join(json.dumps(e, ensure_ascii=False) for e in preview["embeds"])


async def _discord_modal(bot: Any, command: Any, text: UpdateText, extra: Any) -> str:
    iid = await bot.fake.send_interaction(command)
    (modal,) = await bot.fake.wait_reply(iid)
    return await _discord_submit(bot, modal, command, text, extra)


async def _discord_submit(
    bot: Any, modal: Any, command: Any, text: UpdateText, extra: Any = None
) -> str:
    values = {"headline": text.headline, "body": text.body, "next_step": text.next_step}
    iid = await bot.fake.send_interaction(
        modal_submit_payload(modal, {**values, **(extra or {})}, like=command)
    )
    await bot.fake.wait_reply(iid, count=2)
    return str(iid)


async def telegram(store: Store, url: str, tmp_path: Path) -> str:
    async with FakeTelegram() as tg:
        tg.add_chat(ADMIN_GROUP, "supergroup", "UTLA comms team")
        tg.add_person(ADMIN_ID, "Arlene")
        async with TelegramRig(store, FixedClock(FRIDAY), tg):
            return await _telegram_form(tg)


async def _telegram_form(tg: FakeTelegram) -> str:
    """The step-by-step form in a private chat with the bot, then Post."""
    form = await _ask(tg, "/post")
    tg.press(ADMIN_ID, ADMIN_ID, form["message_id"], _button(form, ":s:strike_on"))
    await tg.until(lambda: "headline" in _replies(tg)[-1]["text"])
    for answer in (EN.headline, EN.body, EN.next_step, ES.headline, ES.body):
        await _ask(tg, answer)
    urgency = await _ask(tg, ES.next_step)
    tg.press(ADMIN_ID, ADMIN_ID, urgency["message_id"], _button(urgency, ":g:important"))
    await tg.until(lambda: "Nothing has been sent yet" in _replies(tg)[-1]["text"])
    preview = _replies(tg)[-1]
    shown = " ".join(m["text"] for m in _replies(tg)[-3:])
    tg.press(ADMIN_ID, ADMIN_ID, preview["message_id"], _button(preview, ":ok"))
    await tg.until(lambda: any("Posted" in m["text"] for m in _replies(tg)))
    return shown


def _replies(tg: FakeTelegram) -> list[dict[str, Any]]:
    return [m for m in tg.messages(ADMIN_ID) if m.get("from", {}).get("id") == BOT_ID]


async def _ask(tg: FakeTelegram, text: str) -> dict[str, Any]:
    before = len(_replies(tg))
    tg.command(ADMIN_ID, ADMIN_ID, text)
    await tg.until(lambda: len(_replies(tg)) > before)
    return _replies(tg)[-1]


def _button(message: dict[str, Any], suffix: str) -> str:
    rows = message["reply_markup"]["inline_keyboard"]
    found = [str(b["callback_data"]) for row in rows for b in row]
    return next(data for data in found if data.endswith(suffix))


SURFACES: dict[str, Surface] = {
    "cli": command_line,
    "typed chat": typed_chat,
    "discord": discord,
    "slack": slack,
    "telegram": telegram,
    "http": http_api,
}


@pytest.mark.parametrize("surface", list(SURFACES))
async def test_one_proposal_reads_and_lands_the_same_on_every_surface(
    surface: str, db_url: str, tmp_path: Path
) -> None:
    async with Store.open(db_url) as store:
        admin = Admin(store, CAMPAIGN, ADMINS, FixedClock(FRIDAY))
        for channel, language in (("general", "en"), ("familias", "es")):
            await admin.subscribe(
                ADMIN,
                Subscription(0, "console", "local", channel, language),
            )
        shown = await SURFACES[surface](store, db_url, tmp_path)
        async with store.read() as tx:
            [update] = await tx.recent_updates(FRIDAY.replace(year=2100), limit=1)
    assert REACH in shown, shown
    for text in (EN, ES):
        assert text.headline in shown and text.body in shown, shown
    _assert_stored(update)


def _assert_stored(update: Update) -> None:
    assert dict(update.texts) == {"en": EN, "es": ES}
    assert update.status is Status.STRIKE_ON and update.urgency is Urgency.IMPORTANT
