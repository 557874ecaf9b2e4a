"""The "Notify me" button in Debian's headless Chromium, driven over the DevTools protocol
as `tests/axe.py` drives it (the project's way: no browser-automation library).

What it covers: on the Spanish page the button appears (the script found a service worker
and PushManager), a click asks for permission (granted through DevTools), registers
`/sw.js` and subscribes; the page posts the subscription, which the bot keeps as a person
in Spanish; an update is encrypted (RFC 8291) and signed (RFC 8292) by the webpush plugin
and accepted by the fake push service on 127.0.0.1, which decrypts it with the
subscription's keys; the decrypted message is handed to the page's service worker, which
shows it as a notification, read back from the browser: in Spanish. axe-core finds no
WCAG 2.1 AA violation on the page with the button.

What it cannot cover: Chromium's own push service (Google's FCM, reached through GCM's
registration and a binary connection) cannot be pointed at 127.0.0.1, so
`PushManager.subscribe` is replaced in the page by one returning the fake service's
subscription, and the last hop (push service to browser) is DevTools'
`ServiceWorker.deliverPushMessage` with the payload the fake decrypted. Everything on the
bot's side is real.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from bot.clock import FixedClock
from bot.editorial.admin import Draft
from bot.models import Contact, Status, UpdateText, Urgency
from bot.store import Store
from tests.axe import DevTools, axe_source, chromium_page, violations
from tests.fakes.push import FakePushService
from tests.push_support import VAPID_PUBLIC, push_bot
from tests.support import ADMIN, chromium_path

pytestmark = pytest.mark.browser

FAKE_SUBSCRIBE = """
(() => {
  const SUB = %s;
  PushManager.prototype.getSubscription = async function () { return window.__sub || null; };
  PushManager.prototype.subscribe = async function (options) {
    const key = new Uint8Array(options.applicationServerKey);
    window.__key = btoa(String.fromCharCode.apply(null, key))
      .replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, "");
    window.__sub = { endpoint: SUB.endpoint, toJSON() { return SUB; },
                     unsubscribe: async () => { window.__sub = null; return true; } };
    return window.__sub;
  };
})();
"""


async def until(page: DevTools, expression: str, within: float = 60.0) -> Any:
    """The value of `expression` once it is truthy."""
    async with asyncio.timeout(within):
        while True:
            value = await page.evaluate(expression)
            if value:
                return value
            await asyncio.sleep(0.1)


async def browser_call(page: DevTools, method: str, **params: Any) -> dict[str, Any]:
    """A call to the browser itself rather than the page's session."""
    session, page.session = page.session, ""
    try:
        return await page.send(method, **params)
    finally:
        page.session = session


async def test_notify_me_subscribes_and_shows_an_update_in_spanish(
    sqlite_store: Store, clock: FixedClock, tmp_path: Path
) -> None:
    chromium_path()
    axe_source()
    async with FakePushService() as push, push_bot(sqlite_store, clock, push) as bot:
        subscription = push.subscribe(VAPID_PUBLIC)
        url = str(bot.client.make_url("/es/"))
        origin = url.rsplit("/es/", 1)[0]
        async with chromium_page(tmp_path) as page:
            await browser_call(page, "Browser.grantPermissions", origin=origin,
                               permissions=["notifications"])  # fmt: skip
            await page.send(
                "Page.addScriptToEvaluateOnNewDocument",
                source=FAKE_SUBSCRIBE % json.dumps(subscription),
            )
            await page.send("ServiceWorker.enable")
            await page.open(url, 412, 915)
            label = await until(
                page,
                "(() => { const b = document.getElementById('notify');"
                " return b && !b.hidden && document.getElementById('notify-button')"
                ".textContent; })()",
            )
            assert label == "Avísame"
            await page.evaluate("document.getElementById('notify-button').click()")
            said = await until(page, "document.getElementById('notify-status').textContent")
            assert "activadas" in said
            assert await page.evaluate("window.__key") == VAPID_PUBLIC
            person = await bot.signups.find(subscription["endpoint"], Contact.PUSH)
            assert person is not None and person.language == "es"

            await bot.admin.post(ADMIN, Draft(
                Status.STRIKE_ON,
                {"en": UpdateText("Strike is on", "Picket at 6:30."),
                 "es": UpdateText("Empieza la huelga", "Piquete a las 6:30.")},
                Urgency.URGENT,
            ))  # fmt: skip
            await bot.dispatcher.drain()
            [message] = push.received(subscription)  # decrypted with the browser's keys
            ids: list[str] = []
            while not ids:  # the first updates may come before the page's worker registers
                registration = await page.wait_for("ServiceWorker.workerRegistrationUpdated")
                ids = [
                    r["registrationId"]
                    for r in registration["params"]["registrations"]
                    if r["scopeURL"].startswith(origin)
                ]
            shown: Any = []
            async with asyncio.timeout(90):  # a loaded machine may take its time
                while not shown:  # the same tag: a second delivery replaces the first
                    await page.send(
                        "ServiceWorker.deliverPushMessage",
                        origin=origin + "/",
                        registrationId=ids[-1],
                        data=json.dumps(message),
                    )
                    for _ in range(30):
                        shown = await page.evaluate(
                            "navigator.serviceWorker.ready.then(r => r.getNotifications())"
                            ".then(ns => ns.map(n => [n.title, n.body, n.lang]))"
                        )
                        if shown:
                            break
                        await asyncio.sleep(0.2)
            assert shown == [["URGENTE: Empieza la huelga", "Piquete a las 6:30.", "es"]], shown

            found = await violations(page, url, 1280, 900)
            await until(page, "!document.getElementById('notify').hidden")
            found += await page.evaluate(
                "axe.run(document, {runOnly: {type: 'tag', values: "
                "['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']}})"
                ".then(r => r.violations.map(v => v.id + ': ' + v.help))"
            )
            assert found == []
