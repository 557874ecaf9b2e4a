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
