"""Stale translations: editing one language's wording marks the others stale until they are
updated or confirmed; the gaps (missing or stale) per language."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bot.clock import FixedClock
from bot.config import FamiliesSection
from bot.editorial.admin import Admin, Changes, Draft
from bot.editorial.translations import content_gaps
from bot.editorial.translator_files import content_messages
from bot.errors import InvalidInput, NotAllowed
from bot.models import CampaignKind, Status, UpdateText
from bot.store import Store
from tests.support import ADMIN, CAMPAIGN, MEMBER
from tests.test_admin import seed_demand

BOTH = {
    "en": UpdateText("Strike continues", "No deal yet.", "Talks Saturday"),
    "es": UpdateText("Sigue la huelga", "Aún no hay acuerdo.", "Negociación el sábado"),
}


async def stale(store: Store, target: str) -> list[str]:
    async with store.read() as tx:
        return [s.language for s in await tx.stale_texts(target)]


async def test_editing_one_language_marks_the_others_stale_until_updated(
    store: Store, admin: Admin, clock: FixedClock
) -> None:
    update = await admin.post(ADMIN, Draft(Status.STRIKE_ON, BOTH))
    target = f"update:{update.id}"
    assert await stale(store, target) == []

    en = UpdateText("Strike continues Monday", "No deal yet.", "Talks Saturday")
    await admin.edit(ADMIN, update.id, Changes(texts={"en": en}), reason="day")
    assert await stale(store, target) == ["es"]
    async with store.read() as tx:
        (mark,) = await tx.stale_texts(target)
    assert mark.edited == "en" and mark.editor == ADMIN.id and mark.since == clock()

    # A change that leaves the text as it was (status only) marks nothing.
    await admin.edit(ADMIN, update.id, Changes(status=Status.TALKS_SCHEDULED), reason="s")
    assert await stale(store, target) == ["es"]

    es = UpdateText("La huelga sigue el lunes", "Aún no hay acuerdo.", "Negociación el sábado")
    await admin.edit(ADMIN, update.id, Changes(texts={"es": es}), reason="traducción")
    assert await stale(store, target) == []  # the Spanish caught up
    es = UpdateText("La huelga sigue el lunes.", "Aún no hay acuerdo.", "Negociación el sábado")
    await admin.edit(ADMIN, update.id, Changes(texts={"es": es}), reason="punto")
    assert await stale(store, target) == ["en"]  # a current Spanish changed: the English is older
    # A form sends every language; only the ones that changed count as written.
    await admin.edit(ADMIN, update.id, Changes(texts={"en": en, "es": es}), reason="same")
    assert await stale(store, target) == ["en"]
    en = UpdateText("The strike continues Monday", "No deal yet.", "Talks Saturday")
    await admin.edit(ADMIN, update.id, Changes(texts={"en": en, "es": es}), reason="caught up")
    assert await stale(store, target) == []
    es = UpdateText("La huelga continúa el lunes", "Aún no hay acuerdo.", "Negociación el sábado")
    en = UpdateText("Strike goes on Monday", "No deal yet.", "Talks Saturday")
    await admin.edit(ADMIN, update.id, Changes(texts={"en": en, "es": es}), reason="both")
    assert await stale(store, target) == []


async def test_confirming_clears_the_mark_with_an_audit_entry(store: Store, admin: Admin) -> None:
    update = await admin.post(ADMIN, Draft(Status.STRIKE_ON, BOTH))
    en = UpdateText("Strike continues!", "No deal yet.", "Talks Saturday")
    await admin.edit(ADMIN, update.id, Changes(texts={"en": en}), reason="punctuation")
    target = f"update:{update.id}"

    with pytest.raises(NotAllowed):
        await admin.confirm_translation(MEMBER, target, "es")
    with pytest.raises(InvalidInput):
        await admin.confirm_translation(ADMIN, target, "fr")
    assert await admin.confirm_translation(ADMIN, target, "es", note="same meaning") is True
    assert await stale(store, target) == []
    assert await admin.confirm_translation(ADMIN, target, "es") is False  # nothing stale
    async with store.read() as tx:
        (entry, *_) = await tx.list_audit(limit=1)
    assert entry.action == "translation.confirm" and entry.target == target
    assert entry.after == {"language": "es", "note": "same meaning"}


async def test_an_offer_in_one_language_makes_the_others_stale(store: Store, admin: Admin) -> None:
    await seed_demand(store)
    await admin.record_demand(ADMIN, "pay", offer={"en": "6% over 2 years"}, source="LAUSD")
    assert await stale(store, "demand:pay") == ["es"]
    await admin.record_demand(
        ADMIN, "pay", offer={"es": "6% en 2 años"}, source="LAUSD (traducción)"
    )
    assert await stale(store, "demand:pay") == []  # the Spanish caught up
    await admin.record_demand(ADMIN, "pay", offer={"es": "6,5% en 2 años"}, source="LAUSD")
    assert await stale(store, "demand:pay") == ["en"]


async def test_gaps_list_missing_fields_and_stale_texts_per_language(
    store: Store, admin: Admin, clock: FixedClock
) -> None:
    await seed_demand(store)  # the Spanish has no employer offer
    only_en = await admin.post(ADMIN, Draft(Status.STRIKE_ON, {"en": BOTH["en"]}))
    both = await admin.post(ADMIN, Draft(Status.STRIKE_ON, BOTH))
    en = UpdateText("Strike continues Monday", "No deal yet.", "Talks Saturday")
    await admin.edit(ADMIN, both.id, Changes(texts={"en": en}), reason="day")

    async with store.read() as tx:
        gaps = await content_gaps(tx, CAMPAIGN, clock())

    found = {(g.target, g.language): g for g in gaps}
    assert set(found) == {
        (f"update:{only_en.id}", "es"),
        (f"update:{both.id}", "es"),
        ("demand:pay", "es"),
    }
    assert found[(f"update:{only_en.id}", "es")].missing == ("headline", "body", "next_step")
    assert found[(f"update:{only_en.id}", "es")].stale is None
    assert found[(f"update:{both.id}", "es")].missing == ()
    assert found[(f"update:{both.id}", "es")].stale is not None
    assert found[("demand:pay", "es")].missing == ("employer_offer",)
    assert found[(f"update:{both.id}", "es")].source["headline"] == "Strike continues Monday"


async def test_the_families_section_is_reported_but_not_exported(
    store: Store, clock: FixedClock
) -> None:
    campaign = replace(
        CAMPAIGN,
        families=FamiliesSection(
            meals={"en": "Grab-and-go meals at every school"},
            ask={"en": "Call 213-555-0100", "es": "Llama al 213-555-0100"},
        ).to_families(CampaignKind.SCHOOL),
    )
    async with store.read() as tx:
        gaps = await content_gaps(tx, campaign, clock())
    (gap,) = [g for g in gaps if g.target == "families"]
    assert gap.language == "es" and gap.missing == ("meals",)
    assert content_messages([gap]) == []
