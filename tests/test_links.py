"""Every message links to the update's page in the reader's language."""

from __future__ import annotations

from bot.admin import Admin, Draft
from bot.clock import FixedClock
from bot.messages import correction_message, update_message, update_url
from bot.models import Status, UpdateText
from bot.store import Store
from tests.support import ADMIN, ADMINS, CAMPAIGN


async def test_spanish_messages_link_to_the_spanish_page(
    sqlite_store: Store, clock: FixedClock
) -> None:
    admin = Admin(sqlite_store, CAMPAIGN, ADMINS, clock)
    update = await admin.post(
        ADMIN,
        Draft(
            Status.STRIKE_ON,
            {"en": UpdateText("On strike"), "es": UpdateText("En huelga")},
        ),
    )
    base = CAMPAIGN.public_url
    assert update_url(update, CAMPAIGN) == f"{base}/updates/{update.id}"
    assert update_message(update, "en", CAMPAIGN).url == f"{base}/updates/{update.id}"
    assert update_message(update, "es-MX", CAMPAIGN).url == f"{base}/es/updates/{update.id}"
    assert correction_message(update, "es", CAMPAIGN).url == f"{base}/es/updates/{update.id}"


def test_a_translation_without_body_or_next_step_falls_back_to_the_original() -> None:
    from datetime import UTC, datetime

    from bot.models import Update, UpdateState, Urgency

    update = Update(
        id=1,
        status=Status.STRIKE_ON,
        urgency=Urgency.URGENT,
        texts={
            "en": UpdateText("Strike resumes Monday", "Picket at 6:30 AM.", "Rally at noon"),
            "es": UpdateText("La huelga se reanuda el lunes"),
        },
        author="cli",
        created_at=datetime(2019, 1, 18, tzinfo=UTC),
        state=UpdateState.PUBLISHED,
    )
    spanish = update.text("es")
    assert spanish.headline == "La huelga se reanuda el lunes"
    assert spanish.body == "Picket at 6:30 AM."
    assert spanish.next_step == "Rally at noon"
    assert update.text("en").body == "Picket at 6:30 AM."
    assert update.text("fr") == update.texts["en"]


async def test_the_main_language_is_stored_first_whatever_order_it_was_written_in(
    sqlite_store: Store, clock: FixedClock
) -> None:
    admin = Admin(sqlite_store, CAMPAIGN, ADMINS, clock)
    update = await admin.post(
        ADMIN,
        Draft(
            Status.STRIKE_ON,
            {"es": UpdateText("En huelga"), "en": UpdateText("On strike", "Picket at 6.")},
        ),
    )
    assert list(update.texts) == ["en", "es"]
    assert update.text("es").body == "Picket at 6."
