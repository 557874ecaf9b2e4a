"""A correction's or retraction's reason in each campaign language: given through the core
use case, the command line and the admin HTTP API; stored on SQLite and PostgreSQL; read
by every surface in the reader's language (else the main language's, marked)."""

from __future__ import annotations

import json

import pytest

from bot.briefings.compose import compose_briefing
from bot.clock import FixedClock
from bot.editorial.admin import Admin, Changes, Draft
from bot.errors import InvalidInput
from bot.messages.compose import correction_message, retraction_message
from bot.models import Status, Subscription, UpdateText, Urgency
from bot.runtime.transfer import dumps, export_document, import_document, parse_document
from bot.store import Store
from tests.support import ADMIN, ADMINS, CAMPAIGN
from tests.test_cli import Cli, cli, seeded_database
from tests.web_support import TOKEN, client_for, parse_html, web_context

__all__ = ["cli", "seeded_database"]

WHY = {"en": "Posted by mistake", "es": "Publicado por error"}


async def _posted(admin: Admin) -> int:
    update = await admin.post(
        ADMIN,
        Draft(
            Status.STRIKE_ON,
            {"en": UpdateText("Deal reached!"), "es": UpdateText("¡Hay acuerdo!")},
            Urgency.URGENT,
        ),
    )
    return update.id


async def test_a_retraction_reason_in_each_language_reaches_each_reader(
    store: Store, clock: FixedClock
) -> None:
    admin = Admin(store, CAMPAIGN, ADMINS, clock)
    update_id = await _posted(admin)
    await admin.retract(ADMIN, update_id, reason=WHY)
    async with store.read() as tx:  # read back from the database
        update = await tx.get_update(update_id, clock())
    assert update is not None and update.retraction_reason == WHY["en"]
    assert retraction_message(update, "es", CAMPAIGN).body.endswith("Motivo: Publicado por error")
    assert retraction_message(update, "en", CAMPAIGN).body.endswith("Reason: Posted by mistake")
    sub = Subscription(1, "discord", "g", "c", "es", timezone=CAMPAIGN.timezone)
    briefing = compose_briefing(CAMPAIGN, sub, None, [update], [], [], clock())
    assert "(Publicado por error)" in briefing.body


async def test_a_correction_reason_in_each_language_reaches_each_reader(
    store: Store, clock: FixedClock
) -> None:
    admin = Admin(store, CAMPAIGN, ADMINS, clock)
    update_id = await _posted(admin)
    why = {"en": "The time was wrong", "es": "La hora estaba mal"}
    changes = Changes(texts={"en": UpdateText("Deal reached at 6")})
    await admin.edit(ADMIN, update_id, changes, reason=why, correction=True)
    async with store.read() as tx:
        update = await tx.get_update(update_id, clock())
    assert update is not None and update.revisions[-1].reason == why["en"]
    assert "La hora estaba mal" in correction_message(update, "es", CAMPAIGN).body
    assert "The time was wrong" in correction_message(update, "en", CAMPAIGN).body


async def test_one_reason_still_works_and_is_marked_for_other_readers(
    sqlite_store: Store, clock: FixedClock
) -> None:
    admin = Admin(sqlite_store, CAMPAIGN, ADMINS, clock)
    update = await admin.retract(ADMIN, await _posted(admin), reason="Posted by mistake")
    assert retraction_message(update, "es", CAMPAIGN).body.endswith(
        "Motivo: Posted by mistake (en inglés)"
    )


async def test_a_reason_needs_the_main_language_and_campaign_languages_only(
    sqlite_store: Store, clock: FixedClock
) -> None:
    admin = Admin(sqlite_store, CAMPAIGN, ADMINS, clock)
    update_id = await _posted(admin)
    with pytest.raises(InvalidInput) as missing:
        await admin.retract(ADMIN, update_id, reason={"es": "Publicado por error"})
    assert "English" in missing.value.message and "inglés" in missing.value.localized("es")
    with pytest.raises(InvalidInput):
        await admin.retract(ADMIN, update_id, reason={"en": "x", "fr": "y"})


async def test_the_page_and_the_feed_give_the_spanish_reason(
    sqlite_store: Store, clock: FixedClock
) -> None:
    admin = Admin(sqlite_store, CAMPAIGN, ADMINS, clock)
    update_id = await _posted(admin)
    await admin.retract(ADMIN, update_id, reason=WHY)
    async with client_for(web_context(sqlite_store, clock)) as client:
        page = parse_html(await (await client.get(f"/es/updates/{update_id}")).text())
        feed = await (await client.get("/es/feed.atom")).text()
        english = await (await client.get(f"/updates/{update_id}")).text()
    assert "Publicado por error" in page.one("p", class_="notice").text()
    assert "Publicado por error" in feed
    assert "Posted by mistake" in english and "Publicado" not in english


async def test_the_admin_api_takes_a_reason_per_language(
    sqlite_store: Store, clock: FixedClock
) -> None:
    admin = Admin(sqlite_store, CAMPAIGN, ADMINS, clock)
    update_id = await _posted(admin)
    auth = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    async with client_for(web_context(sqlite_store, clock)) as client:
        answer = await client.post(
            f"/api/v1/admin/updates/{update_id}/retract",
            data=json.dumps({"reason": WHY["en"], "reasons": {"es": WHY["es"]}}),
            headers=auth,
        )
        assert answer.status == 200, await answer.text()
        spanish = await (await client.get(f"/api/v1/updates/{update_id}?lang=es")).json()
    assert spanish["retraction_reason"] == WHY["es"]


def test_the_command_line_takes_a_reason_per_language(cli: Cli) -> None:
    posted = cli.json("post", "--status", "strike_on", "--headline", "Deal reached!",
                      "--es-headline", "¡Hay acuerdo!")  # fmt: skip
    update_id = str(posted["update"]["id"])
    cli.ok("edit", update_id, "--headline", "Deal reached at 6", "--correction",
           "--reason", "The time was wrong", "--es-reason", "La hora estaba mal")  # fmt: skip
    out = cli.ok("retract", update_id, "--reason", WHY["en"], "--reason-in", "es", WHY["es"])
    assert "Publicado por error" in out
    shown = cli.json("show", update_id)
    assert shown["update"]["retraction_reasons"] == WHY
    assert shown["update"]["revisions"][-1]["reasons"]["es"] == "La hora estaba mal"


async def test_an_export_keeps_the_reasons(sqlite_store: Store, clock: FixedClock) -> None:
    admin = Admin(sqlite_store, CAMPAIGN, ADMINS, clock)
    update_id = await _posted(admin)
    await admin.retract(ADMIN, update_id, reason=WHY)
    text = dumps(await export_document(sqlite_store, CAMPAIGN.slug))
    doc = parse_document(text, source="export", campaign_slug=CAMPAIGN.slug)
    await import_document(sqlite_store, doc, replace=True)
    async with sqlite_store.read() as tx:
        update = await tx.get_update(update_id, clock())
    assert update is not None and update.retraction_reasons == WHY
