"""On a phone, the status page's first screen says what happens next and when: measured in
Debian's headless Chromium at a small phone's size (360 x 640 CSS pixels), the next step's
wording and time lie above the fold, in both languages, with the families' answers shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.clock import FixedClock
from bot.store import Store
from tests.axe import chromium_page
from tests.strike_week import strike_week
from tests.support import chromium_path
from tests.test_for_families import WITH_FAMILIES
from tests.web_support import client_for, web_context

PHONE = (360, 640)


@pytest.mark.parametrize("path", ["/", "/es/"])
async def test_the_next_step_is_in_the_first_screen_on_a_phone(
    sqlite_store: Store, clock: FixedClock, tmp_path: Path, path: str
) -> None:
    chromium_path()  # skip (or fail under CI) before doing any work
    runtime = web_context(sqlite_store, clock, campaign=WITH_FAMILIES)
    await strike_week(sqlite_store, clock, runtime.admin)
    async with client_for(runtime) as client, chromium_page(tmp_path) as page:
        await page.open(str(client.make_url(path)), *PHONE)
        found = await page.evaluate(
            "(() => { const s = document.querySelector('section.next');"
            " const t = s && s.querySelector('time');"
            " return s && t ? {top: s.getBoundingClientRect().top,"
            " bottom: t.getBoundingClientRect().bottom, fold: window.innerHeight,"
            " families: !!document.querySelector('section.families')} : null; })()"
        )
    assert found is not None, "no next step on the page"
    assert found["families"]
    assert found["bottom"] <= found["fold"], f"the next step's time is below the fold: {found}"
