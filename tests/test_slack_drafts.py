"""Form drafts kept between Preview and Confirm: taken once, abandoned ones forgotten."""

from __future__ import annotations

from datetime import timedelta

from adapters.slack._drafts import forget_drafts, save_draft, take_draft
from bot.clock import FixedClock
from bot.store import Store


async def test_a_draft_is_taken_once(store: Store, clock: FixedClock) -> None:
    token = await save_draft(store, {"action": "post", "headline": "Día 5"}, clock())
    draft = await take_draft(store, token)
    assert draft is not None and draft["headline"] == "Día 5"
    assert await take_draft(store, token) is None
    assert await take_draft(store, "") is None


async def test_abandoned_drafts_are_forgotten(store: Store, clock: FixedClock) -> None:
    old = await save_draft(store, {"action": "retract"}, clock() - timedelta(days=2))
    fresh = await save_draft(store, {"action": "approve"}, clock())
    assert await forget_drafts(store, clock() - timedelta(days=1)) == 1
    assert await take_draft(store, old) is None
    assert await take_draft(store, fresh) is not None
