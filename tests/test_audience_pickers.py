"""The site and group pickers: one matching rule (`bot.audiences.picker`), and the real
libraries asking it as an admin types — Slack's external select through signed HTTP
requests and Socket Mode, Discord's option autocomplete over the gateway and the
Interactions Endpoint URL — in English and Spanish, at LAUSD's thousand schools."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.audiences import PlaceIndex, PlacePicker, SiteFile, Sites
from bot.clock import FixedClock
from bot.models import Actor, Audience, Site, SiteGroup
from bot.store import Store
from tests.fakes.slack import (
    FakeSlack,
    SlackBot,
    block_suggestion,
    chosen,
    form_body,
    interaction_body,
    options_errors,
    picked,
    typed,
    view_errors,
)
from tests.picker_support import many_places
from tests.support import ADMIN, ADMINS, FRIDAY

GROUPS, SITES = many_places(1000)
INDEX = PlaceIndex(GROUPS, SITES)
ODD = ("%%%", "🏫", "Roosevelt'; DROP TABLE sites;--", "<script>", "\u202e\x00")


async def import_places(store: Store, groups: list[SiteGroup], sites: list[Site]) -> None:
    found = SiteFile(tuple(groups), tuple(sites))
    await Sites(store, ADMINS, FixedClock(FRIDAY)).import_file(ADMIN, found)


def codes(found: list[Any]) -> list[str]:
    return [m.code for m in found]


# ---------------------------------------------------------------------------- the rule


def test_a_code_typed_comes_first_then_codes_then_names() -> None:
    assert codes(INDEX.find("roosevelt", "en"))[:1] == ["roosevelt"]
    assert codes(INDEX.find("s000", "en", limit=3)) == ["s0001", "s0002", "s0003"]
    # A word of a name, in any case, with its accents or without.
    assert codes(INDEX.find("ROOS", "en")) == ["roosevelt"]
    assert {m.name for m in INDEX.find("jose marti", "en")} == {
        m.name for m in INDEX.find("José Martí", "en")
    }
    assert all("José Martí" in m.name for m in INDEX.find("jose marti", "en"))
    # Every word typed must begin a word of the name.
    found = INDEX.find("marti acad", "en", limit=100)
    assert found and all("Martí Academy" in m.name for m in found)


def test_names_are_the_readers_language_and_ranked_in_it() -> None:
    english = INDEX.find("roosevelt", "en")[0]
    spanish = INDEX.find("roosevelt", "es")[0]
    assert (english.name, english.group_name) == ("Roosevelt High School", "Local District East")
    assert (spanish.name, spanish.group_name) == ("Preparatoria Roosevelt", "Distrito Local Este")
    # "prepa" begins a Spanish name: in Spanish those come before anything else.
    assert {m.code for m in INDEX.find("prepa", "es", limit=6)} == {
        "marshall", "roosevelt", "grant", "chatsworth", "banning", "venice"
    }  # fmt: skip
    # A group by a word of its name in either language: the reader's first.
    assert codes(INDEX.find("este", "es")) == ["east"]
    assert codes(INDEX.find("noro", "es")) == ["northwest"]


def test_an_empty_query_offers_the_groups_first_and_a_kind_can_be_left_out() -> None:
    first = INDEX.find("", "en", limit=8)
    assert [m.kind for m in first] == ["group"] * 6 + ["site"] * 2
    assert codes(INDEX.find("", "en", kinds={"group"})) == [
        "central", "east", "northeast", "northwest", "south", "west"
    ]  # fmt: skip
    assert all(m.kind == "site" for m in INDEX.find("local", "en", kinds={"site"}))
    assert INDEX.find("local", "en", kinds={"site"}) == []


def test_a_query_matching_nothing_or_of_odd_characters_finds_nothing() -> None:
    assert INDEX.find("zzzz", "en") == []
    assert INDEX.find("roosevelt zzzz", "es") == []
    for odd in ODD:
        assert INDEX.find(odd, "en") == [], odd
    # Letters among odd characters are still read: "Roosevelt';" is Roosevelt.
    assert codes(INDEX.find("Roosevelt';", "en")) == ["roosevelt"]


def test_the_answer_is_capped_and_named_codes_come_back_in_order() -> None:
    assert len(INDEX.find("s", "en", limit=100)) == 100
    assert len(INDEX.find("", "es", limit=25)) == 25
    named = INDEX.named(["Venice", "nowhere", "east"], "es")
    assert [(m.code, m.name) for m in named] == [
        ("venice", "Preparatoria Venice"),
        ("east", "Distrito Local Este"),
    ]


async def test_the_picker_reads_a_new_import_once_and_answers_from_memory(
    sqlite_store: Store,
) -> None:
    picker = PlacePicker(sqlite_store)
    assert await picker.find("", "en") == []
    await import_places(sqlite_store, GROUPS[:1], SITES[:1])
    assert codes(await picker.find("", "en")) == ["central", "marshall"]
    index = await picker.index()
    assert await picker.index() is index  # nothing changed: the same index
    await import_places(sqlite_store, GROUPS[:2], SITES[:2])
    assert codes(await picker.find("roos", "en")) == ["roosevelt"]


# ---------------------------------------------------------------------------- Slack


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as fake:
        fake.add_channel("C0GENERAL")
        fake.add_user("U0ADMIN", "alex")
        fake.add_user("U0ADMINES", "rocio", locale="es-LA")
        fake.add_usergroup("S0COMMS", ["U0ADMINES"])  # an admin through the comms group
        yield fake


@pytest.fixture
async def places(sqlite_store: Store) -> Store:
    await import_places(sqlite_store, GROUPS, SITES)
    return sqlite_store


async def post_form(bot: SlackBot, slack: FakeSlack, user: str = "U0ADMIN") -> dict[str, Any]:
    assert (await bot.command("post", user=user)).status == 200
    form: dict[str, Any] = slack.views[list(slack.views)[-1]]
    return form


def option_values(answer: dict[str, Any]) -> list[str]:
    groups = answer.get("option_groups") or [{"options": answer.get("options", [])}]
    return [o["value"] for g in groups for o in g["options"]]


async def test_slack_post_form_asks_for_its_options_as_the_admin_types(
    places: Store, clock: FixedClock, slack: FakeSlack
) -> None:
    async with SlackBot(places, clock, slack) as bot:
        form = await post_form(bot, slack)
        assert view_errors(form) == []
        [picker] = [b for b in form["blocks"] if b["block_id"] == "audience"]
        assert picker["element"]["type"] == "multi_external_select"
        assert "options" not in picker["element"]  # a thousand schools do not fit in 100

        answer = (await bot.suggest(form, "audience", "roos")).json()
        assert options_errors(answer) == []
        [group] = answer["option_groups"]
        assert group["label"]["text"] == "Local District East"
        [roosevelt] = group["options"]
        assert roosevelt["value"] == "site:roosevelt"
        assert roosevelt["text"]["text"] == "Roosevelt High School (roosevelt)"

        # Opening the menu: the districts first, then schools, at most Slack's 100.
        opened = (await bot.suggest(form, "audience", "")).json()
        assert options_errors(opened) == []
        assert opened["option_groups"][0]["label"]["text"] == "Groups (with all their sites)"
        values = option_values(opened)
        assert len(values) == 100 and values[:2] == ["group:central", "group:east"]

        # A letter matching hundreds of schools: still 100 at most, each valid.
        many = (await bot.suggest(form, "audience", "a")).json()
        assert options_errors(many) == [] and len(option_values(many)) == 100

        for nothing in ("zzzz", "%%%", "🏫", "<>&", "roosevelt zzzz"):
            assert (await bot.suggest(form, "audience", nothing)).json() == {"options": []}
        odd = (await bot.suggest(form, "audience", "Roosevelt'; DROP TABLE sites;--")).json()
        assert odd == {"options": []}  # "drop", "table" begin no word of Roosevelt's
        assert option_values((await bot.suggest(form, "audience", "<Roosevelt>")).json()) == [
            "site:roosevelt"
        ]

        # What was picked is what the post is for.
        east = next(o for g in opened["option_groups"] for o in g["options"]
                    if o["value"] == "group:east")  # fmt: skip
        preview = await bot.submit(
            form,
            {
                "status": chosen(form, "status", "strike_on"),
                "headline": typed("Roosevelt: breakfast at the north gate"),
                "audience": picked(roosevelt),
            },
        )
        shown = json.dumps(preview.json()["view"]["blocks"], ensure_ascii=False)
        assert "For Roosevelt High School only" in shown
        both = await bot.submit(
            form,
            {
                "status": chosen(form, "status", "strike_on"),
                "headline": typed("East district rally"),
                "audience": picked(roosevelt, east),
            },
        )
        assert both.json()["response_action"] == "push"
        token = json.loads(both.json()["view"]["private_metadata"])["d"]
        draft = await bot.commands.desk.draft(Actor("slack", "U0ADMIN", "alex"), token)
        assert draft.audience == Audience.of(["roosevelt"], ["east"])


async def test_slack_picker_speaks_the_forms_language(
    places: Store, clock: FixedClock, slack: FakeSlack
) -> None:
    async with SlackBot(places, clock, slack) as bot:
        form = await post_form(bot, slack, user="U0ADMINES")
        [picker] = [b for b in form["blocks"] if b["block_id"] == "audience"]
        assert picker["label"]["text"] == "Solo para"
        answer = (await bot.suggest(form, "audience", "prepa roos")).json()
        assert options_errors(answer) == []
        [group] = answer["option_groups"]
        assert group["label"]["text"] == "Distrito Local Este"
        assert group["options"][0]["text"]["text"] == "Preparatoria Roosevelt (roosevelt)"
        opened = (await bot.suggest(form, "audience", "")).json()
        assert opened["option_groups"][0]["label"]["text"] == "Grupos (con todos sus centros)"
        assert opened["option_groups"][0]["options"][0]["text"]["text"] == (
            "Todo Distrito Local Central (central)"
        )
        assert (await bot.suggest(form, "audience", "ñuñoa")).json()["option_groups"]
        assert (await bot.suggest(form, "audience", "nada-de-nada")).json() == {"options": []}


async def test_slack_picker_answers_over_socket_mode(
    places: Store, clock: FixedClock, slack: FakeSlack
) -> None:
    async with SlackBot(places, clock, slack, mode="socket") as bot:
        await slack.wait_connected()
        from tests.fakes.slack import block_action, slash_command

        opened = await slack.send_envelope(
            "slash_commands", slash_command(slack, "post", user="U0ADMIN")
        )
        await slack.wait_ack(opened)
        form = slack.views[list(slack.views)[-1]]
        envelope = await slack.send_envelope(
            "interactive", block_suggestion(form, "audience", "venice")
        )
        answer = (await slack.wait_ack(envelope))["payload"]
        assert options_errors(answer) == []
        assert option_values(answer)[0] == "site:venice"
        nothing = await slack.send_envelope("interactive", block_suggestion(form, "audience", "🏫"))
        assert (await slack.wait_ack(nothing))["payload"] == {"options": []}

        # What the channel follows, picked in the message after /strike subscribe.
        asked = slash_command(slack, "subscribe", user="U0ADMIN")
        await slack.wait_ack(await slack.send_envelope("slash_commands", asked))
        [offer] = await slack.wait_for_responses(asked["response_url"])
        [block] = offer["blocks"]
        assert "initial_options" not in block["accessory"]  # everything, so far
        # A Spanish name finds it too, named in the message's language (English here).
        found = await slack.send_envelope(
            "interactive", block_suggestion(offer, block["block_id"], "distrito este")
        )
        [east] = (await slack.wait_ack(found))["payload"]["option_groups"][0]["options"]
        assert east["text"]["text"] == "All of Local District East (east)"
        change = block_action(slack, offer, block["block_id"], [east])
        await slack.wait_ack(await slack.send_envelope("interactive", change))
        await slack.wait_for_responses(change["response_url"])
        async with places.read() as tx:
            [sub] = await tx.list_subscriptions(platform="slack")
        assert sub.follows == Audience.of([], ["east"])
        assert bot.adapter.health()["connected"] is True


async def test_slack_subscribe_offers_a_picker_of_what_the_channel_follows(
    places: Store, clock: FixedClock, slack: FakeSlack
) -> None:
    from tests.fakes.slack import block_action, message_error, slash_command

    async with SlackBot(places, clock, slack) as bot:
        asked = slash_command(slack, "subscribe sites=roosevelt", user="U0ADMINES")
        answer = await bot.post_signed(form_body(asked))
        assert answer.json()["response_type"] == "in_channel"  # the channel's card
        [offer] = await slack.wait_for_responses(asked["response_url"])
        assert offer["response_type"] == "ephemeral" and message_error(offer) is None
        [block] = offer["blocks"]
        assert block["text"]["text"].startswith("¿Qué centros y grupos sigue este canal?")
        picker = block["accessory"]
        assert picker["type"] == "multi_external_select"
        assert [o["value"] for o in picker["initial_options"]] == ["site:roosevelt"]
        assert picker["initial_options"][0]["text"]["text"] == (
            "Preparatoria Roosevelt (roosevelt)"
        )

        # Its options come in the message's language, like the form's.
        typed_in = block_suggestion(offer, block["block_id"], "oes")
        found = (await bot.post_signed(interaction_body(typed_in))).json()
        assert options_errors(found) == []
        assert found["option_groups"][0]["options"][0]["text"]["text"] == (
            "Todo Distrito Local Oeste (west)"
        )
        west = found["option_groups"][0]["options"][0]

        # Picking a group and a school: the channel follows them, and the card says so.
        roosevelt = picker["initial_options"][0]
        change = block_action(slack, offer, block["block_id"], [roosevelt, west], user="U0ADMINES")
        assert (await bot.act(change)).status == 200
        [changed] = await slack.wait_for_responses(change["response_url"])
        assert changed["replace_original"] is True and message_error(changed) is None
        assert [o["value"] for o in changed["blocks"][-1]["accessory"]["initial_options"]] == [
            "site:roosevelt",
            "group:west",
        ]
        async with places.read() as tx:
            [sub] = await tx.list_subscriptions(platform="slack")
        assert sub.follows == Audience.of(["roosevelt"], ["west"])

        # Nothing picked: everything again. A member who is no admin changes nothing.
        cleared = block_action(slack, changed, block["block_id"], [], user="U0ADMINES")
        await bot.act(cleared)
        await slack.wait_for_responses(cleared["response_url"])
        async with places.read() as tx:
            [sub] = await tx.list_subscriptions(platform="slack")
        assert sub.follows == Audience()
        slack.add_user("U0MEMBER", "maria")
        refused = block_action(slack, changed, block["block_id"], [west], user="U0MEMBER")
        await bot.act(refused)
        [no] = await slack.wait_for_responses(refused["response_url"])
        assert "replace_original" not in no and "admin" in no["text"].lower()
        async with places.read() as tx:
            [sub] = await tx.list_subscriptions(platform="slack")
        assert sub.follows == Audience()


async def test_slack_post_form_without_sites_has_no_picker(
    sqlite_store: Store, clock: FixedClock, slack: FakeSlack
) -> None:
    async with SlackBot(sqlite_store, clock, slack) as bot:
        form = await post_form(bot, slack)
        assert "audience" not in [b.get("block_id") for b in form["blocks"]]


# ---------------------------------------------------------------------------- Discord


@pytest.fixture
async def discord(tmp_path: Path) -> AsyncIterator[Any]:
    from tests.fakes.discord import FakeDiscord, discord_bot

    async with FakeDiscord() as fake:
        env = {"DISCORD_PUBLIC_KEY": fake.public_key}
        url = f"sqlite+aiosqlite:///{tmp_path / 'db.sqlite'}"
        async with discord_bot(fake, url, FixedClock(FRIDAY), env=env) as bot:
            await import_places(bot.store, GROUPS, SITES)
            yield bot


async def choices(bot: Any, name: str, focused: str, value: str, **given: Any) -> list[Any]:
    from tests.fakes.discord import AUTOCOMPLETE_RESULT, autocomplete_payload

    iid = await bot.fake.send_interaction(autocomplete_payload(name, focused, value, **given))
    (reply,) = await bot.fake.wait_reply(iid)
    assert reply.type == AUTOCOMPLETE_RESULT and reply.after < 3.0  # Discord's deadline
    found: list[Any] = reply.data["choices"]
    assert len(found) <= 25
    assert all(len(c["name"]) <= 100 and len(c["value"]) <= 100 for c in found)
    return found


async def test_discord_subscribe_completes_site_and_group_codes(discord: Any) -> None:
    [roosevelt] = await choices(discord, "subscribe", "sites", "roos")
    assert roosevelt == {
        "name": "Roosevelt High School (roosevelt) · Local District East",
        "value": "roosevelt",
    }
    # Several codes, comma-separated: the last is completed, the ones before kept.
    [both] = await choices(discord, "subscribe", "sites", "roosevelt, venice h")
    assert both["value"] == "roosevelt,venice"
    assert both["name"] == "roosevelt, Venice High School (venice) · Local District West"
    assert await choices(discord, "subscribe", "sites", "roosevelt,roosevelt") == []
    # Sites only for `sites`, groups only for `groups`; a thousand schools, 25 choices.
    assert len(await choices(discord, "subscribe", "sites", "")) == 25
    groups = await choices(discord, "subscribe", "groups", "")
    assert [c["value"] for c in groups] == [
        "central", "east", "northeast", "northwest", "south", "west"
    ]  # fmt: skip
    assert groups[1]["name"] == "Local District East (east), all its sites"
    spanish = await choices(discord, "subscribe", "groups", "nor", locale="es-ES")
    assert [c["name"] for c in spanish] == [
        "Distrito Local Noreste (northeast), todos sus centros",
        "Distrito Local Noroeste (northwest), todos sus centros",
    ]
    for nothing in ("zzzz", "%%%", "🏫", "<script>", "roosevelt,'; --"):
        assert await choices(discord, "subscribe", "sites", nothing) == [], nothing


async def test_discord_subscribe_with_the_picked_codes_follows_them(discord: Any) -> None:
    from tests.fakes.discord import COMMS_ROLE_ID, interaction_payload

    payload = interaction_payload(
        "subscribe", options={"sites": "roosevelt,venice", "groups": "east"},
        roles=(COMMS_ROLE_ID,),
    )  # fmt: skip
    iid = await discord.fake.send_interaction(payload)
    await discord.fake.wait_reply(iid, count=2)
    async with discord.store.read() as tx:
        [sub] = await tx.list_subscriptions(platform="discord")
    assert sub.follows == Audience.of(["roosevelt", "venice"], ["east"])
    wrong = interaction_payload(
        "subscribe", options={"sites": "lincoln"}, roles=(COMMS_ROLE_ID,), locale="es-ES"
    )
    iid = await discord.fake.send_interaction(wrong)
    *_, answer = await discord.fake.wait_reply(iid, count=3)  # only the admin sees it
    assert "lincoln" in answer.text and answer.ephemeral


async def test_discord_status_completes_a_site_and_answers_for_it(discord: Any) -> None:
    from tests.fakes.discord import CHANNEL_MESSAGE, interaction_payload

    found = await choices(discord, "status", "site", "prepa roos", locale="es-419")
    assert found[0] == {
        "name": "Preparatoria Roosevelt (roosevelt) · Distrito Local Este",
        "value": "roosevelt",
    }
    # One place only: a comma is no separator here.
    assert await choices(discord, "status", "site", "venice,roos") == []
    east = await choices(discord, "status", "site", "east")  # Eastman's schools after it
    assert east[0]["value"] == "east" and "Eastman" in east[1]["name"]
    iid = await discord.fake.send_interaction(
        interaction_payload("status", options={"site": "roosevelt"})
    )
    (reply,) = await discord.fake.wait_reply(iid)
    assert reply.type == CHANNEL_MESSAGE and "Roosevelt High School" in reply.text


async def test_discord_post_fills_the_forms_audience_with_the_codes_picked(
    discord: Any,
) -> None:
    from tests.fakes.discord import (
        COMMS_ROLE_ID,
        MODAL,
        as_member,
        load_payload,
        modal_submit_payload,
    )

    [east] = await choices(discord, "post", "only_for", "roosevelt,local east",
                           options={"status": "strike_on"})  # fmt: skip
    assert east["value"] == "roosevelt,east"
    command = as_member(load_payload("interaction_command_post"), roles=(COMMS_ROLE_ID,))
    command["data"]["options"][0]["options"].append(
        {"name": "only_for", "type": 3, "value": east["value"]}
    )
    iid = await discord.fake.send_interaction(command)
    (modal,) = await discord.fake.wait_reply(iid)
    assert modal.type == MODAL
    [audience] = [
        row["component"] for row in modal.data["components"]
        if row.get("component", {}).get("custom_id") == "audience"
    ]  # fmt: skip
    assert audience["value"] == "roosevelt,east"
    values: dict[str, str | list[str]] = {
        "headline": "East district rally",
        "urgency": ["routine"],
        "audience": "roosevelt,east",
    }
    submitted = await discord.fake.send_interaction(
        modal_submit_payload(modal, values, like=command)
    )
    await discord.fake.wait_reply(submitted, count=2)
    shown = json.dumps(discord.fake.original_message(str(submitted)), ensure_ascii=False)
    assert "Local District East" in shown and "Roosevelt High School" in shown


async def test_discord_autocomplete_over_the_interactions_endpoint(discord: Any) -> None:
    from tests.fakes.discord import AUTOCOMPLETE_RESULT, autocomplete_payload
    from tests.test_discord_scaleout import endpoint

    async with endpoint(discord) as url:
        asked = autocomplete_payload("subscribe", "sites", "grant", locale="es-ES")
        iid = await discord.fake.post_interaction(asked, url)
        (reply,) = await discord.fake.wait_reply(iid)
        assert reply.type == AUTOCOMPLETE_RESULT
        assert reply.data["choices"][0] == {
            "name": "Preparatoria Grant (grant) · Distrito Local Noreste",
            "value": "grant",
        }
        odd = await discord.fake.post_interaction(
            autocomplete_payload("status", "site", "\u202e🏫"), url
        )
        (none,) = await discord.fake.wait_reply(odd)
        assert none.type == AUTOCOMPLETE_RESULT and none.data["choices"] == []
