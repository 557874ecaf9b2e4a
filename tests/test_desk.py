"""The editorial desk on SQLite and PostgreSQL: a proposal is checked, previewed, kept as a
draft that is confirmed once by the admin who wrote it, and carried out; the rules every
surface shares (a language an update lacks, problems per field) hold here, once."""

from __future__ import annotations

from datetime import timedelta

import pytest

from bot.clock import FixedClock
from bot.editorial.admin import Admin
from bot.editorial.desk import Action, Desk, Problems, Proposal, TextPatch
from bot.editorial.rules import BODY_MAX
from bot.errors import Conflict, NotAllowed, NotFound
from bot.models import Status, Subscription, UpdateState, Urgency
from bot.plugins import installed_plugins
from bot.runtime.housekeeping import forget_old
from bot.store import Store
from tests.support import ADMIN, MEMBER, SECOND_ADMIN

EN = {"en": TextPatch("Strike continues", "No deal yet.", "Talks Saturday")}


@pytest.fixture
def desk(store: Store, admin: Admin, clock: FixedClock) -> Desk:
    return Desk(store, admin, plugins=installed_plugins(), clock=clock)


async def _subscribe(admin: Admin, channel: str, language: str = "en") -> None:
    await admin.subscribe(
        ADMIN,
        Subscription(
            id=0,
            platform="console",
            workspace="local",
            channel=channel,
            language=language,
            timezone="America/Los_Angeles",
        ),
    )


async def test_a_preview_renders_counts_and_keeps_a_draft_confirmed_once(
    desk: Desk, admin: Admin, store: Store
) -> None:
    await _subscribe(admin, "general")
    await _subscribe(admin, "familias", "es")
    proposal = Proposal(
        Action.POST,
        texts={**EN, "es": TextPatch("La huelga sigue")},
        status=Status.STRIKE_ON,
        urgency=Urgency.URGENT,
    )
    preview = await desk.preview(ADMIN, proposal)
    assert preview.ready and preview.token is not None
    assert preview.reach.channels == 2
    assert preview.sentence("en") == "It will go to 2 chat channels."
    assert preview.messages["es"].title == "La huelga sigue"
    assert preview.messages["en"].fields[0].value == "Talks Saturday"
    async with store.read() as tx:
        assert await tx.count_updates() == 0  # a preview changes nothing

    with pytest.raises(NotAllowed):  # another admin cannot post someone else's draft
        await desk.confirm(SECOND_ADMIN, preview.token)
    done = await desk.confirm(ADMIN, preview.token)
    assert done.update.id == 1 and done.copies == 2
    assert done.update.texts["es"].body == ""  # never borrowed from another language
    with pytest.raises(Conflict, match="already used"):  # a double click posts once
        await desk.confirm(ADMIN, preview.token)


async def test_problems_are_named_by_field_and_in_every_language(desk: Desk) -> None:
    proposal = Proposal(
        Action.POST,
        texts={"en": TextPatch("", body="x" * (BODY_MAX + 1)), "es": TextPatch(body="Sin titular")},
        status=Status.STRIKE_ON,
        publish_at=desk.clock() - timedelta(hours=1),
    )
    preview = await desk.preview(ADMIN, proposal)
    assert not preview.ready and preview.token is None  # nothing kept while it is wrong
    assert set(preview.problems) == {
        "texts.en.headline",
        "texts.en.body",
        "texts.es.headline",
        "publish_at",
    }
    assert preview.problems_in("es")["texts.es.headline"].startswith("Añade el titular en español")
    with pytest.raises(Problems) as refused:
        await desk.commit(ADMIN, proposal)
    assert refused.value.problems.keys() == preview.problems.keys()


async def test_reading_typed_values_names_what_cannot_be_read(desk: Desk) -> None:
    with pytest.raises(Problems) as refused:
        desk.read(
            "edit",
            update_id="twelve",
            status="on_holiday",
            next_step_at="next monday",
            texts={"fr": {"headline": "Grève"}},
        )
    assert set(refused.value.problems) == {"update_id", "status", "next_step_at", "language"}
    proposal = desk.read(
        "post", texts={"es": {"headline": "Hola"}}, next_step_at="2019-01-22T06:00"
    )
    assert proposal.next_step_at is not None and proposal.next_step_at.hour == 14  # PST
    cleared = desk.read("edit", update_id="#3", next_step_at="off", reason="done")
    assert cleared.clear_next_step and cleared.update_id == 3


async def test_editing_a_language_the_update_lacks_needs_its_headline(
    desk: Desk, store: Store
) -> None:
    posted = await desk.commit(ADMIN, Proposal(Action.POST, texts=EN, status=Status.STRIKE_ON))
    body_only = Proposal(
        Action.EDIT,
        update_id=posted.update.id,
        texts={"es": TextPatch(body="Sin acuerdo")},
        reason="Spanish for families",
    )
    preview = await desk.preview(ADMIN, body_only)
    assert list(preview.problems) == ["texts.es.headline"]
    assert "no Spanish wording yet" in preview.problems["texts.es.headline"].message
    added = await desk.commit(
        ADMIN, body_only.with_texts({"es": TextPatch("La huelga sigue", body="Sin acuerdo")})
    )
    assert added.update.text("es").body == "Sin acuerdo"
    assert added.update.text("en").body == "No deal yet."  # the other language untouched


async def test_edits_retractions_and_approvals_say_what_they_will_do(
    desk: Desk, store: Store, admin: Admin
) -> None:
    await _subscribe(admin, "general")
    posted = await desk.commit(ADMIN, Proposal(Action.POST, texts=EN, status=Status.STRIKE_ON))
    uid = posted.update.id
    nothing = await desk.preview(ADMIN, Proposal(Action.EDIT, update_id=uid, reason="r"))
    assert list(nothing.problems) == ["texts"]
    edit = Proposal(Action.CORRECT, update_id=uid, texts={"en": TextPatch(body="Deal")}, reason="r")
    preview = await desk.preview(ADMIN, edit)
    assert preview.reach.channels == 1  # the channels holding a copy
    assert preview.sentence("en").startswith("Its 1 copy will be edited in place")
    assert preview.update.revision == 2 and preview.before is not None
    retract = await desk.preview(ADMIN, Proposal(Action.RETRACT, update_id=uid))
    assert list(retract.problems) == ["reason"]
    gone = await desk.commit(ADMIN, Proposal(Action.RETRACT, update_id=uid, reason="wrong"))
    # The post never left (no dispatcher ran), so it was withdrawn: no copy to mark.
    assert gone.update.state is UpdateState.RETRACTED and gone.copies == 0
    with pytest.raises(Conflict, match="already retracted"):
        await desk.commit(ADMIN, Proposal(Action.RETRACT, update_id=uid, reason="again"))
    with pytest.raises(Conflict, match="not waiting for approval"):
        await desk.commit(SECOND_ADMIN, Proposal(Action.APPROVE, update_id=uid))
    with pytest.raises(NotFound):
        await desk.preview(ADMIN, Proposal(Action.EDIT, update_id=99, reason="r"))
    with pytest.raises(NotAllowed):
        await desk.preview(MEMBER, Proposal(Action.POST, texts=EN))


async def test_abandoned_drafts_and_old_event_ids_are_forgotten(
    desk: Desk, store: Store, clock: FixedClock
) -> None:
    proposal = Proposal(Action.POST, texts=EN, status=Status.STRIKE_ON)
    old = (await desk.preview(ADMIN, proposal)).token
    clock.advance(hours=25)
    fresh = (await desk.preview(ADMIN, proposal)).token
    assert old is not None and fresh is not None
    await forget_old(store, clock)
    with pytest.raises(Conflict):
        await desk.confirm(ADMIN, old)
    assert (await desk.draft(ADMIN, fresh)).texts == EN
