"""Targeting through the surfaces — the CLI, typed chat and the admin HTTP API — each as in
tests/test_six_surfaces.py: a post for one school reaches exactly the followers of that
school, of its local district and of everything, its preview counted exactly those, and
its correction and retraction reach the same set, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable

import pytest

from bot.audiences import Sites, read_sites_csv
from bot.clock import FixedClock
from bot.commands import CommandContext, Commands
from bot.editorial.admin import Admin
from bot.models import EVERYONE, Audience, DeliveryAction, Subscription
from bot.store import Store
from tests.support import ADMIN, ADMINS, CAMPAIGN, FRIDAY, ROOT
from tests.test_six_surfaces import _run
from tests.web_support import TOKEN, client_for, web_context

FOLLOWING = {
    "everything": EVERYONE,
    "roosevelt": Audience.of(["roosevelt"]),
    "east": Audience.of([], ["east"]),
    "venice": Audience.of(["venice"]),
    "west": Audience.of([], ["west"]),
}
REACHED = {"everything", "roosevelt", "east"}
HEADLINE = "Roosevelt: breakfast at the north gate"

# A surface posts HEADLINE for Roosevelt, corrects it and retracts it, and returns the
# update's id and the channels its preview counted.
Surface = Callable[[Store, str], Awaitable[tuple[int, int]]]


async def command_line(store: Store, url: str) -> tuple[int, int]:
    base = ["--config", str(ROOT / "config" / "strike.toml"), "--database-url", url]
    post = [*base, "post", "--status", "strike_on", "--headline", HEADLINE, "--sites", "roosevelt"]
    shown = json.loads(await asyncio.to_thread(_run, [*post, "--dry-run", "--json"]))
    assert shown["audience"] == {"sites": ["roosevelt"], "groups": []}
    await asyncio.to_thread(_run, post)
    async with store.read() as tx:
        uid = str(await tx.count_updates())  # after the seeded ones
    await asyncio.to_thread(
        _run,
        [*base, "edit", uid, "--headline", HEADLINE + ", 7 AM", "--reason", "time", "--correction"],
    )
    await asyncio.to_thread(_run, [*base, "retract", uid, "--reason", "wrong school"])
    return int(uid), int(shown["channels"])


async def typed_chat(store: Store, url: str) -> tuple[int, int]:
    clock = FixedClock(FRIDAY)
    commands = Commands(store, CAMPAIGN, Admin(store, CAMPAIGN, ADMINS, clock), clock)
    ctx = CommandContext("discord", ADMIN, "G1", "C1")
    typed = f'post strike_on "{HEADLINE}" sites=Roosevelt'
    preview = await commands.handle(ctx, typed + " preview")
    assert preview.ok, preview.message.body
    assert "For Roosevelt High School only" in preview.message.body
    assert (await commands.handle(ctx, typed)).ok
    clock.advance(minutes=1)
    fixed = await commands.handle(ctx, f'edit 1 correction reason="time" headline="{HEADLINE}, 7"')
    assert fixed.ok, fixed.message.body
    clock.advance(minutes=1)
    assert (await commands.handle(ctx, 'retract 1 "wrong school"')).ok
    wrong = await commands.handle(ctx, f'post strike_on "{HEADLINE}" sites=lincoln')
    assert not wrong.ok and "There is no site 'lincoln'" in wrong.message.body
    return 1, int(preview.message.body.split("It will go to ")[1].split()[0])


async def http_api(store: Store, url: str) -> tuple[int, int]:
    clock = FixedClock(FRIDAY)
    body = {"status": "strike_on", "texts": {"en": {"headline": HEADLINE}}, "sites": ["roosevelt"]}
    auth = {"Authorization": f"Bearer {TOKEN}"}
    async with client_for(web_context(store, clock)) as client:
        dry = await client.post("/api/v1/admin/updates?dry_run=true", json=body, headers=auth)
        assert dry.status == 200, await dry.text()
        shown = await dry.json()
        posted = await client.post("/api/v1/admin/updates", json=body, headers=auth)
        assert posted.status == 201, await posted.text()
        clock.advance(minutes=1)
        fix = {
            "texts": {"en": {"headline": HEADLINE + ", 7"}},
            "reason": "time",
            "correction": True,
        }
        fixed = await client.patch("/api/v1/admin/updates/1", json=fix, headers=auth)
        assert fixed.status == 200, await fixed.text()
        clock.advance(minutes=1)
        retract = {"reason": "wrong school"}
        gone = await client.post("/api/v1/admin/updates/1/retract", json=retract, headers=auth)
        assert gone.status == 200, await gone.text()
        bad = await client.post(
            "/api/v1/admin/updates", json=body | {"groups": ["north"]}, headers=auth
        )
        assert bad.status == 422
        assert (await bad.json())["error"]["details"][0]["field"] == "audience"
    return 1, int(shown["channels"])


async def slack(store: Store, url: str) -> tuple[int, int]:
    from tests.fakes.slack import FakeSlack, SlackBot, chosen, picked, typed

    async with FakeSlack() as fake:
        fake.add_channel("C0GENERAL")
        fake.add_user("U0ADMIN", "alex")
        async with SlackBot(store, FixedClock(FRIDAY), fake) as bot:
            assert (await bot.command("post", user="U0ADMIN")).status == 200
            form = fake.views[list(fake.views)[-1]]
            opened = (await bot.suggest(form, "audience", "")).json()  # the menu opened
            options = [o for g in opened["option_groups"] for o in g["options"]]
            assert [o["value"] for o in options][:3] == [
                "group:central",
                "group:east",
                "group:northeast",
            ]
            found = (await bot.suggest(form, "audience", "roosevelt")).json()
            roosevelt = found["option_groups"][0]["options"]
            answer = await bot.submit(
                form,
                {
                    "status": chosen(form, "status", "strike_on"),
                    "headline": typed(HEADLINE),
                    "audience": picked(*roosevelt),
                },
            )
            preview = answer.json()["view"]
            shown = json.dumps(preview["blocks"], ensure_ascii=False)
            assert "For Roosevelt High School only" in shown
            done = await bot.submit(preview, {})
            assert done.json()["response_action"] == "update"
            fix = f'edit 1 correction reason="time" headline="{HEADLINE}, 7"'
            assert (await bot.command(fix, user="U0ADMIN")).status == 200
            assert (await bot.command('retract 1 "wrong school"', user="U0ADMIN")).status == 200
    return 1, int(shown.split("It will go to ")[1].split()[0])


async def telegram(store: Store, url: str) -> tuple[int, int]:
    from tests.fakes.telegram import FakeTelegram
    from tests.telegram_support import ADMIN_GROUP, ADMIN_ID, TelegramRig
    from tests.test_six_surfaces import _ask, _button, _replies

    async with FakeTelegram() as tg:
        tg.add_chat(ADMIN_GROUP, "supergroup", "UTLA comms team")
        tg.add_person(ADMIN_ID, "Arlene")
        async with TelegramRig(store, FixedClock(FRIDAY), tg):
            form = await _ask(tg, "/post")
            tg.press(ADMIN_ID, ADMIN_ID, form["message_id"], _button(form, ":s:strike_on"))
            await tg.until(lambda: "headline" in _replies(tg)[-1]["text"])
            for answer in (HEADLINE, "/skip", "/skip"):
                await _ask(tg, answer)
            urgency = await _ask(tg, "/skip")  # no Spanish wording
            tg.press(ADMIN_ID, ADMIN_ID, urgency["message_id"], _button(urgency, ":g:routine"))
            await tg.until(lambda: "Who is it for?" in _replies(tg)[-1]["text"])
            asked = _replies(tg)[-1]
            assert _button(asked, ":a:east")  # each group is a button
            await _ask(tg, "Roosevelt")  # a site is typed
            await tg.until(lambda: "Nothing has been sent yet" in _replies(tg)[-1]["text"])
            preview = _replies(tg)[-1]
            shown = str(preview["text"])  # the message is edited in place once posted
            assert "For Roosevelt High School only" in shown
            tg.press(ADMIN_ID, ADMIN_ID, preview["message_id"], _button(preview, ":ok"))
            await tg.until(lambda: any("Posted" in m["text"] for m in _replies(tg)))
            await _ask(tg, f'/edit 1 correction reason="time" headline="{HEADLINE}, 7"')
            await _ask(tg, '/retract 1 "wrong school"')
    return 1, int(shown.split("It will go to ")[1].split()[0])


async def discord(store: Store, url: str) -> tuple[int, int]:
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

    async with FakeDiscord() as fake, discord_bot(fake, url, FixedClock(FRIDAY)) as bot:
        command = as_member(load_payload("interaction_command_post"), roles=(COMMS_ROLE_ID,))
        iid = await bot.fake.send_interaction(command)
        (modal,) = await bot.fake.wait_reply(iid)
        values: dict[str, str | list[str]] = {
            "headline": HEADLINE,
            "urgency": ["routine"],
            "audience": "Roosevelt",
        }
        submitted = await bot.fake.send_interaction(
            modal_submit_payload(modal, values, like=command)
        )
        await bot.fake.wait_reply(submitted, count=2)
        preview = bot.fake.original_message(str(submitted))
        shown = json.dumps(preview, ensure_ascii=False)
        assert "For Roosevelt High School only" in shown
        post = await bot.fake.send_interaction(
            button_payload(preview, buttons(preview)["Post"], like=command)
        )
        await bot.fake.wait_reply(post, count=2)
    async with store.read() as tx:
        uid = await tx.count_updates()  # after the campaign file's seeded ones, if any
    # The follow-ups through the desk, as every surface's are.
    await _correct_and_retract(store, uid)
    return uid, int(shown.split("It will go to ")[1].split()[0])


async def _correct_and_retract(store: Store, update_id: int) -> None:
    from bot.editorial.desk import Action, Desk, Proposal, TextPatch
    from bot.plugins import installed_plugins

    clock = FixedClock(FRIDAY)
    desk = Desk(
        store, Admin(store, CAMPAIGN, ADMINS, clock), plugins=installed_plugins(), clock=clock
    )
    clock.advance(minutes=1)
    fix = {"en": TextPatch(HEADLINE + ", 7")}
    await desk.commit(
        ADMIN, Proposal(Action.CORRECT, update_id=update_id, texts=fix, reason="time")
    )
    clock.advance(minutes=1)
    await desk.commit(ADMIN, Proposal(Action.RETRACT, update_id=update_id, reason="wrong school"))


@pytest.mark.parametrize("surface", [command_line, typed_chat, http_api, slack, telegram, discord])
async def test_a_site_post_its_correction_and_retraction_reach_its_followers_only(
    store: Store, db_url: str, surface: Surface, clock: FixedClock
) -> None:
    await Sites(store, ADMINS, clock).import_file(
        ADMIN,
        read_sites_csv(
            (ROOT / "config" / "lausd-sites.csv").read_text(encoding="utf-8"), ("en", "es"), "en"
        ),
    )
    admin = Admin(store, CAMPAIGN, ADMINS, clock)
    ids = {}
    for channel, follows in FOLLOWING.items():
        sub = Subscription(0, "console", "local", channel, "en", follows=follows)
        ids[(await admin.subscribe(ADMIN, sub)).id] = channel
    update_id, previewed = await surface(store, db_url)
    async with store.read() as tx:
        rows = await tx.list_deliveries(update_id=update_id, limit=None)
    reached = {
        action: {ids[d.subscription_id] for d in rows if d.action is action}
        for action in (DeliveryAction.POST, DeliveryAction.CORRECTION, DeliveryAction.RETRACT)
    }
    assert reached == {action: REACHED for action in reached}
    assert previewed == len(REACHED)
