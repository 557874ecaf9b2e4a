"""The pages as the Nu HTML Checker reads them: `/`, `/es/`, `/subscribe` (e-mail and texts
on) and an update page with its revision history, 0 errors. Skipped with the reason where
Java or the checker is missing; required under CI=true (`.ci/run` installs both)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from bot.clock import FixedClock
from bot.editorial.admin import Changes
from bot.models import Contact
from bot.people.signups import Offer
from bot.store import Store
from tests.strike_week import MONDAY_6AM, strike_week
from tests.support import ADMIN
from tests.test_for_families import WITH_FAMILIES
from tests.vnu import check, java_path, vnu_jar
from tests.web_support import client_for, web_context


async def test_the_nu_checker_finds_no_errors_on_the_pages(
    sqlite_store: Store, clock: FixedClock, tmp_path: Path
) -> None:
    java_path()  # skip (or fail under CI) before doing any work
    vnu_jar()
    runtime = web_context(sqlite_store, clock, campaign=WITH_FAMILIES)
    week = await strike_week(sqlite_store, clock, runtime.admin)
    # Moments as a running bot records them, to the microsecond (the strike week's are whole
    # seconds): a `<time datetime>` must not carry the six digits Python writes.
    clock.advance(seconds=61.123456)
    await runtime.admin.edit(
        ADMIN, week.friday.id, Changes(next_step_at=MONDAY_6AM + timedelta(microseconds=654321)),
        reason="The exact time",
    )  # fmt: skip
    await runtime.admin.record_demand(
        ADMIN, "pay", offer={"en": "A 6% raise"}, source="district", at=clock()
    )
    runtime.people.offer(Offer(Contact.EMAIL, "email"))
    runtime.people.offer(Offer(Contact.PHONE, "sms"))
    paths = [
        "/",
        "/es/",
        "/subscribe",
        f"/updates/{week.friday.id}",
        f"/es/updates/{week.retracted.id}",
    ]
    files = []
    async with client_for(runtime) as client:
        for n, path in enumerate(paths):
            page = await client.get(path)
            assert page.status == 200, path
            file = tmp_path / f"page-{n}.html"
            file.write_bytes(await page.read())
            files.append(file)
    # The check can fail: a page with a fraction-of-a-second `<time>` is caught.
    control = tmp_path / "control.html"
    control.write_text(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>x</title></head>'
        '<body><time datetime="2019-01-21T14:00:00.123456+00:00">x</time></body></html>'
    )
    assert check([control]), "the checker found nothing wrong with a bad page"
    errors = check(files)
    where = {f"file:{file}": path for file, path in zip(files, paths, strict=True)}
    shown = [f"{where.get(e['url'], e['url'])}: line {e.get('lastLine')}: {e.get('message')}"
             for e in errors]  # fmt: skip
    assert errors == [], "\n".join(shown)
