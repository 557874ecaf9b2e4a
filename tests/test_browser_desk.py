"""The web desk in a real browser: Debian's Chromium, driven by Playwright's Python client
(`executable_path`: no browser is ever downloaded), at a phone's size.

A strike day without a shell: the lead signs in through the link the e-mail plugin sent
(caught by aiosmtpd), writes an update (a problem shown under its field first), reads the
preview with each surface's card, and posts it; a second person approves it; it reaches
the fake chat platform, live on the update's page; the copy that failed is retried; the
update is corrected, an offer recorded, a demand re-worded, a stale translation confirmed,
and the update retracted. axe-core finds nothing on any desk page, in both languages.
The audit log names the person for every action.

The security cases each fail without their protection: a form without its CSRF token, a
form from another origin, the cookie's flags, a session after its person is removed from
the campaign file, sign-in links limited per address and per client, idle expiry, and
signing out everywhere. A failing test leaves phone-size screenshots in its tmp dir.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import (
    Browser,
    BrowserContext,
    Page,
    ViewportSize,
    async_playwright,
    expect,
)

from bot.audiences import Sites, read_sites_csv
from bot.clock import FixedClock
from bot.editorial.demands import DemandWording
from bot.models import DeliveryState
from bot.plugins.admins import CLI_ACTOR
from bot.store import Store
from tests.axe import WCAG_21_AA, axe_source
from tests.desk_support import LEAD, SECOND, Rig, desk_rig, sign_in_link, subscribe_channels
from tests.fakes.platform import FakePlatform
from tests.fakes.smtp import FakeSmtp
from tests.support import FRIDAY, ROOT, chromium_path, free_port

pytestmark = pytest.mark.browser

PHONE: ViewportSize = {"width": 390, "height": 844}
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
NURSES = "A nurse in every school"
WAIT = 15_000  # ms a live change may take to show (the page polls every 3 s)


@asynccontextmanager
async def chromium(shots: Path) -> AsyncIterator[Browser]:
    """Debian's Chromium, headless, in a fresh profile (Playwright makes a new user-data
    directory for each launch). On a failure inside, every open page is screenshotted."""
    path = chromium_path()
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=path, args=FLAGS)
        try:
            yield browser
        except BaseException:
            for i, context in enumerate(browser.contexts):
                for j, page in enumerate(context.pages):
                    await page.screenshot(path=shots / f"context{i}-page{j}.png", full_page=True)
            print(f"screenshots of the failure: {shots}")
            raise
        finally:
            await browser.close()


async def person(browser: Browser) -> tuple[BrowserContext, Page]:
    context = await browser.new_context(viewport=PHONE, locale="en-US", is_mobile=True)
    return context, await context.new_page()


async def sign_in(page: Page, rig: Rig, address: str, axe: Axe | None = None) -> None:
    """Through the desk's own pages and the e-mail the e-mail plugin sends."""
    before = len(rig.mails_to(address))
    await page.goto(f"{rig.url}/desk")
    await expect(page.get_by_role("heading", level=1)).to_have_text("Sign in to the desk")
    if axe is not None:
        await axe.check(page)
    await page.get_by_label("E-mail address").fill(address)
    await page.get_by_role("button", name="E-mail me a sign-in link").click()
    await expect(page.get_by_role("heading", level=1)).to_have_text("Check your e-mail")
    if axe is not None:
        await axe.check(page)
    await rig.drain()
    mails = rig.mails_to(address)
    assert len(mails) == before + 1, "the e-mail plugin sent no link"
    assert mails[-1]["Subject"] == "Sign in to the United Teachers Los Angeles desk"
    await page.goto(sign_in_link(mails[-1]))
    if axe is not None:
        await axe.check(page)
    await page.get_by_role("button", name="Sign in").click()
    await expect(page.get_by_role("heading", level=1)).to_have_text("The desk")


class Axe:
    """axe-core's WCAG 2.1 A and AA rules on each page visited, collected."""

    def __init__(self) -> None:
        self.found: dict[str, list[str]] = {}
        self.pages: set[str] = set()
        self.largest = 0  # bytes of the largest page's HTML

    async def check(self, page: Page) -> None:
        await page.evaluate(axe_source())
        tags = json.dumps(WCAG_21_AA)
        violations: list[dict[str, Any]] = await page.evaluate(
            f"axe.run(document, {{runOnly: {{type: 'tag', values: {tags}}}}})"
            ".then(r => r.violations.map(v => ({id: v.id, help: v.help, "
            "nodes: v.nodes.map(n => n.target.join(' '))})))"
        )
        where = re.sub(r"https?://[^/]+", "", page.url)
        self.pages.add(re.sub(r"/[\w-]{30,}|\d+", "N", where.split("?")[0]))
        for v in violations:
            self.found.setdefault(where, []).append(f"{v['id']}: {v['help']} {v['nodes'][:3]}")
        size = await page.evaluate("performance.getEntriesByType('navigation')[0].encodedBodySize")
        self.largest = max(self.largest, int(size or 0))
        width = await page.evaluate("document.documentElement.scrollWidth")
        if width > PHONE["width"]:
            self.found.setdefault(where, []).append(f"scrolls sideways ({width}px)")


async def tab_to(page: Page, name: str, most: int = 120) -> None:
    """Press Tab until the focused control's text is `name` (keyboard only)."""
    for _ in range(most):
        await page.keyboard.press("Tab")
        focused = await page.evaluate("document.activeElement && document.activeElement.innerText")
        if (focused or "").strip() == name:
            return
    raise AssertionError(f"Tab never reached {name!r}")


# -- a strike day ---------------------------------------------------------------------------


async def test_a_strike_day_on_the_desk_without_a_shell(
    sqlite_store: Store, tmp_path: Path
) -> None:
    chromium_path()  # skip (or fail under CI) before any work
    axe_source()
    clock = FixedClock(FRIDAY)
    axe = Axe()
    async with desk_rig(sqlite_store, clock) as rig, chromium(tmp_path) as browser:
        subs = await subscribe_channels(rig)
        await rig.admin.add_demand(
            CLI_ACTOR,
            "nurses",
            {
                "en": DemandWording(title="A nurse in every school"),
                "es": DemandWording(title="Una enfermera en cada escuela"),
            },
        )
        lead_context, lead = await person(browser)
        await sign_in(lead, rig, LEAD, axe)
        await axe.check(lead)

        # On a slow phone connection (400 ms round trips, 50 KB/s) the form is there in
        # a few seconds: one small page, one cached style sheet, one small script.
        network = await lead_context.new_cdp_session(lead)
        await network.send("Network.enable")
        slow = {"offline": False, "latency": 400, "downloadThroughput": 50_000,
                "uploadThroughput": 20_000}  # fmt: skip
        await network.send("Network.emulateNetworkConditions", slow)
        started = asyncio.get_running_loop().time()
        await lead.goto(f"{rig.url}/desk/new")
        await expect(lead.get_by_label("Status")).to_be_visible()
        took = asyncio.get_running_loop().time() - started
        print(f"the form on a slow connection: {took:.2f} s")
        assert took < 8
        await network.send("Network.emulateNetworkConditions", {**slow, "latency": 0,
                           "downloadThroughput": -1, "uploadThroughput": -1})  # fmt: skip
        await lead.goto(f"{rig.url}/desk")

        # Write it: a problem shows under its field, in the desk's words.
        await lead.get_by_role("link", name="Write an update").first.click()
        await axe.check(lead)
        await lead.get_by_label("Status").select_option("strike_on")
        await lead.get_by_label("Urgency").select_option("urgent")
        english = lead.get_by_role("group", name="English (the campaign's main language)")
        await english.get_by_label("What happened").fill("Picket lines at every school, 6:30 AM.")
        await lead.get_by_role("button", name="Preview").click()
        headline = english.get_by_label("Headline")
        await expect(headline).to_have_attribute("aria-invalid", "true")
        await expect(lead.get_by_role("alert")).to_contain_text("headline")
        await axe.check(lead)
        await headline.fill("The strike is on Monday")
        await english.get_by_label("Next step").fill("Rally at Grand Park")
        spanish = lead.get_by_role("group", name="Spanish (leave empty to post without it)")
        await spanish.get_by_label("Headline").fill("La huelga empieza el lunes")
        await lead.get_by_label("Time of the next step").fill("2019-01-21T12:00")
        await lead.get_by_role("button", name="Preview").click()

        # The preview: what confirming does, and each surface's card with its reach.
        await expect(lead.get_by_role("heading", level=1)).to_have_text("Preview: a new update")
        await expect(lead.locator(".intro")).to_contain_text("Nothing has been sent yet")
        discord = lead.locator(".card", has=lead.get_by_role("heading", name="Discord")).first
        await expect(discord).to_contain_text("It reaches 2 channels")
        await expect(discord).to_contain_text("The strike is on Monday")
        texts = lead.locator(".card", has=lead.get_by_role("heading", name="Text messages")).first
        await expect(texts).to_contain_text("segment")
        await axe.check(lead)
        await lead.get_by_role("button", name="Post it").click()
        await expect(lead.get_by_role("status").first).to_contain_text("awaits approval")
        await expect(
            lead.get_by_text("You wrote it: another admin must approve it.")
        ).to_be_visible()
        update_id = await _update_id(rig)
        update_url = f"{rig.url}/desk/updates/{update_id}"
        await lead.goto(update_url)
        await axe.check(lead)

        # One channel has lost the bot's access: its copy will fail.
        rig.chat.refuse("G1", "familias")

        # A second person approves it, with the keyboard only.
        second_context, second = await person(browser)
        await sign_in(second, rig, SECOND)
        await second.get_by_role("link", name=f"#{update_id} The strike is on Monday").first.click()
        await tab_to(second, "Approve…")
        await second.keyboard.press("Enter")
        await expect(second.get_by_role("heading", level=1)).to_have_text("Preview: approving")
        await axe.check(second)
        await tab_to(second, "Approve and send")
        await second.keyboard.press("Enter")
        await expect(second.locator(".done")).to_contain_text("Approved")
        progress = second.locator("#progress")
        await expect(progress).to_contain_text("Waiting")

        # Watch it go out: the section changes by itself as the dispatcher delivers.
        await rig.drain()
        await expect(progress.locator("tbody tr").first).to_contain_text("1", timeout=WAIT)
        await expect(progress).to_contain_text("Missing Access (403)", timeout=WAIT)
        await axe.check(second)
        assert len(rig.chat.messages_in("G1", "picket-news")) == 1

        # The access is back: retry the failure from the page.
        rig.chat.allow("G1", "familias")
        await second.get_by_role("button", name=re.compile("^Retry")).first.click()
        await rig.drain()
        await expect(progress).not_to_contain_text("Missing Access", timeout=WAIT)
        assert len(rig.chat.messages_in("G1", "familias")) == 1

        # Correct it from its own page.
        await lead.goto(update_url)
        await lead.get_by_text("Correct or edit").click()
        edit = lead.locator("#edit")
        await (
            edit.get_by_role("group", name=re.compile("^English"))
            .get_by_label("What happened")
            .fill("Picket lines at every school from 6:30 AM; bring water.")
        )
        await edit.get_by_label("Reason", exact=True).fill("Added what to bring")
        await edit.get_by_label("Also send a correction note").check()
        await edit.get_by_role("button", name="Preview").click()
        await expect(lead.get_by_role("heading", level=1)).to_have_text("Preview: a correction")
        await expect(lead.locator(".intro")).to_contain_text("2 copies")
        await axe.check(lead)
        await lead.get_by_role("button", name="Save with a correction note").click()
        await expect(lead.locator(".done")).to_contain_text("Edited")
        await rig.drain()
        posted = rig.chat.messages_in("G1", "picket-news")[0]
        assert "bring water" in json.dumps(posted.current)

        # Demands: record the district's offer, re-word a title.
        await lead.get_by_role("link", name="Demands").click()
        nurses = lead.locator(
            "section", has=lead.get_by_role("heading", name="A nurse in every school")
        )
        await nurses.get_by_text("Record an offer").click()
        await nurses.get_by_label("The offer, in English").fill("A nurse two days a week")
        await nurses.get_by_label("Source").fill("District proposal, Jan 18")
        await nurses.get_by_role("button", name="Record it").click()
        await expect(lead.get_by_role("status")).to_contain_text("Recorded")
        await expect(lead.locator("section").first).to_contain_text("A nurse two days a week")
        await axe.check(lead)
        nurses = lead.locator(
            "section", has=lead.get_by_role("heading", name="A nurse in every school")
        )
        await nurses.get_by_text("Edit the wording").click()
        english_title = nurses.get_by_role("group", name="English").get_by_label("Title")
        await english_title.fill("A full-time nurse in every school")
        await nurses.get_by_label("Reason").fill("Clearer")
        await nurses.get_by_role("button", name="Save").click()
        await expect(lead.get_by_role("status")).to_contain_text(
            "A full-time nurse in every school"
        )

        # Translations: the Spanish wording was written before the English changed.
        await lead.get_by_role("link", name="Translations").click()
        await expect(lead.get_by_role("heading", level=1)).to_have_text("Translations to check")
        await axe.check(lead)
        confirm = lead.get_by_role("button", name="The Spanish still says the same").first
        await confirm.click()
        await expect(lead.get_by_role("status")).to_contain_text("Confirmed")

        # Sign-ups count people, never who; the desk's own links are not sign-ups.
        await lead.get_by_role("link", name="Sign-ups").click()
        await expect(lead.get_by_text("Nobody has signed up yet.")).to_be_visible()
        await axe.check(lead)
        await lead.get_by_role("link", name="Briefings").click()
        await expect(lead.get_by_role("heading", name="What it would say now")).to_be_visible()
        await axe.check(lead)

        # In Spanish too.
        await lead.get_by_role("link", name="español").click()
        await expect(lead.get_by_role("heading", level=1)).to_have_text("Resumen de la mañana")
        await axe.check(lead)
        await lead.goto(update_url)
        await expect(lead.get_by_role("heading", level=2, name="Envío")).to_be_visible()
        await axe.check(lead)
        await lead.goto(f"{rig.url}/desk/new")
        await axe.check(lead)
        await lead.get_by_role("link", name="English").click()

        # Retract it, from its own page.
        await lead.goto(update_url)
        await lead.get_by_text("Retract", exact=True).click()
        await lead.get_by_label("Why it is retracted").fill("Talks resumed; the strike is off")
        await lead.locator("#retract").get_by_role("button", name="Preview").click()
        await expect(lead.get_by_role("heading", level=1)).to_have_text("Preview: a retraction")
        await axe.check(lead)
        await lead.get_by_role("button", name="Retract it").click()
        await expect(lead.locator(".done")).to_contain_text("Retracted")
        await rig.drain()
        copies = [m for m in rig.chat.messages.values() if m.message["kind"] == "update"]
        assert len(copies) == 2 and all(m.current["retracted"] for m in copies)
        await axe.check(lead)

        # The Sites screen, with the demo's districts and schools.
        text = (ROOT / "config" / "lausd-sites.csv").read_text(encoding="utf-8")
        await Sites(sqlite_store, rig.admin.admins, clock).import_file(
            CLI_ACTOR, read_sites_csv(text, ("en", "es"), "en")
        )
        await lead.get_by_role("link", name="Sites").click()
        await expect(lead.get_by_role("heading", level=1)).to_have_text("Sites and groups")
        await lead.get_by_text("Change or remove Roosevelt High School").click()
        await axe.check(lead)

        # What the desk says when something cannot be done.
        await lead.goto(f"{rig.url}/desk/updates/999")
        await expect(lead.get_by_text("There is no update #999.")).to_be_visible()
        await axe.check(lead)
        await second_context.close()
        await lead_context.close()

    assert axe.found == {}, axe.found
    assert len(axe.pages) >= 14, sorted(axe.pages)
    print(f"axe-core: {len(axe.pages)} desk pages, 0 violations; largest page {axe.largest} B")
    assert axe.largest < 40_000, axe.largest  # the preview's cards, every surface, included
    async with sqlite_store.read() as tx:
        audit = await tx.list_audit(limit=200)
        dead = await tx.list_deliveries(state=DeliveryState.DEAD)
    assert dead == []
    by_action = {(e.action, e.actor) for e in audit}
    lead_id, second_id = f"web:{LEAD}", f"web:{SECOND}"
    for action, actor in [
        ("desk.link", lead_id), ("desk.sign_in", lead_id), ("desk.sign_in", second_id),
        ("update.submit", lead_id), ("update.approve", second_id),
        ("delivery.retry", second_id), ("subscription.resume", second_id),
        ("update.correct", lead_id), ("demand.record", lead_id), ("demand.edit", lead_id),
        ("translation.confirm", lead_id), ("update.retract", lead_id),
    ]:  # fmt: skip
        assert (action, actor) in by_action, (action, actor, sorted(by_action))
    assert subs


async def _update_id(rig: Rig) -> int:
    async with rig.store.read() as tx:
        latest = await tx.recent_updates(rig.clock(), limit=1)
    return latest[0].id


# -- what the desk refuses ------------------------------------------------------------------

COOKIE = "__Host-strikebot-desk"


async def _signed_in(page: Page, rig: Rig) -> bool:
    await page.goto(f"{rig.url}/desk")
    return await page.get_by_role("heading", level=1).inner_text() == "The desk"


async def _form_token(page: Page) -> str:
    return str(await page.locator("input[name=csrf]").first.get_attribute("value"))


async def test_forms_need_their_token_and_this_origin_and_the_cookie_is_locked_down(
    sqlite_store: Store, tmp_path: Path
) -> None:
    chromium_path()
    clock = FixedClock(FRIDAY)
    async with desk_rig(sqlite_store, clock) as rig, chromium(tmp_path) as browser:
        context, page = await person(browser)
        await sign_in(page, rig, LEAD)

        # The session cookie: HttpOnly, Secure, SameSite=Strict, for the whole site only.
        (cookie,) = [c for c in await context.cookies() if c["name"] == COOKIE]
        assert (cookie["httpOnly"], cookie["secure"], cookie["sameSite"]) == (True, True, "Strict")
        assert cookie["path"] == "/" and cookie["domain"] == "127.0.0.1"
        assert f"{COOKIE}=" not in await page.evaluate("document.cookie")  # no script reads it

        # A form without its token, or with another session's, does nothing.
        everywhere = f"{rig.url}/desk/sign-out-everywhere"
        same = {"Origin": rig.url}
        forms: list[dict[str, str | float | bool]] = [{}, {"csrf": "0" * 64}]
        for form in forms:
            refused = await context.request.post(everywhere, form=form, headers=same)
            assert refused.status == 403 and "form had expired" in await refused.text()
        assert await _signed_in(page, rig)

        # The right token from another site (or from nowhere) does nothing either.
        token = await _form_token(page)
        for origin in ("https://evil.example", "null"):
            refused = await context.request.post(
                everywhere, form={"csrf": token}, headers={"Origin": origin}
            )
            assert refused.status == 403 and "did not come from" in await refused.text()
        assert await _signed_in(page, rig)

        # The same request from the desk itself works: the refusals were the checks'.
        done = await context.request.post(everywhere, form={"csrf": token}, headers=same)
        assert done.ok
        assert not await _signed_in(page, rig)


async def test_removed_people_idle_sessions_and_every_device_are_signed_out(
    sqlite_store: Store, tmp_path: Path
) -> None:
    chromium_path()
    clock = FixedClock(FRIDAY)
    async with chromium(tmp_path) as browser, FakeSmtp() as smtp, FakePlatform() as chat:
        lead_context, lead = await person(browser)
        second_context, second = await person(browser)
        port = free_port()
        async with desk_rig(sqlite_store, clock, port=port, smtp=smtp, chat=chat) as rig:
            await sign_in(lead, rig, LEAD)
            await sign_in(second, rig, SECOND)
            stale_token = await _form_token(second)
        # The bot restarts with a campaign file that no longer lists the second person.
        async with desk_rig(
            sqlite_store, clock, emails=(LEAD,), port=port, smtp=smtp, chat=chat
        ) as rig:
            assert await _signed_in(lead, rig)
            assert not await _signed_in(second, rig)  # the same cookie, refused
            refused = await second_context.request.post(
                f"{rig.url}/desk/sign-out-everywhere",
                form={"csrf": stale_token},
                headers={"Origin": rig.url},
            )
            assert refused.status == 403 and "not signed in" in await refused.text()
            # Asking for a new link answers the same, and sends nothing.
            sent = len(rig.mails_to(SECOND))
            await second.get_by_label("E-mail address").fill(SECOND)
            await second.get_by_role("button", name="E-mail me a sign-in link").click()
            await expect(second.get_by_role("heading", level=1)).to_have_text("Check your e-mail")
            await rig.drain()
            assert len(rig.mails_to(SECOND)) == sent

            # Signing out on every device: the lead's phone and laptop both.
            laptop_context, laptop = await person(browser)
            await sign_in(laptop, rig, LEAD)
            await laptop.get_by_role("button", name="Sign out on every device").click()
            await expect(laptop.get_by_text("You are signed out.")).to_be_visible()
            assert not await _signed_in(lead, rig)

            # An hour unused ends a session.
            await sign_in(lead, rig, LEAD)
            clock.advance(minutes=59)
            assert await _signed_in(lead, rig)
            clock.advance(minutes=61)
            assert not await _signed_in(lead, rig)
            await laptop_context.close()
        await lead_context.close()
        await second_context.close()
    async with sqlite_store.read() as tx:
        audit = await tx.list_audit(limit=100)
    assert ("desk.sign_out_everywhere", f"web:{LEAD}") in {(e.action, e.actor) for e in audit}


async def test_sign_in_links_are_limited_per_address_and_per_client(
    sqlite_store: Store, tmp_path: Path
) -> None:
    chromium_path()
    clock = FixedClock(FRIDAY)
    async with desk_rig(sqlite_store, clock) as rig, chromium(tmp_path) as browser:
        context, page = await person(browser)

        async def ask(address: str) -> str:
            await page.goto(f"{rig.url}/desk/sign-in")
            await page.get_by_label("E-mail address").fill(address)
            await page.get_by_role("button", name="E-mail me a sign-in link").click()
            return await page.get_by_role("heading", level=1).inner_text()

        # Per address: three links in 15 minutes, then the same answer and no e-mail.
        for _ in range(4):
            assert await ask(LEAD) == "Check your e-mail"
        await rig.drain()
        assert len(rig.mails_to(LEAD)) == 3
        # Per client: ten requests in 15 minutes, whatever the address, then a refusal.
        for n in range(6):
            assert await ask(f"someone{n}@example.org") == "Check your e-mail"
        assert await ask(SECOND) == "Too many requests"
        await expect(page.get_by_text("Too many sign-in requests from here")).to_be_visible()
        await rig.drain()
        assert rig.mails_to(SECOND) == []
        # Later, the lead may ask again.
        clock.advance(minutes=16)
        assert await ask(LEAD) == "Check your e-mail"
        await rig.drain()
        assert len(rig.mails_to(LEAD)) == 4
        await context.close()
