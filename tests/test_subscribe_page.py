"""The sign-up pages: `/subscribe`, `/es/subscribe` and the confirmation page. No JavaScript,
labelled fields, errors in the reader's language that keep what they typed, the same answer
for every address, 429 for a flood, and a link from the status page only when e-mail or
texts are switched on."""

from __future__ import annotations

import re

from adapters.web._app import STATE
from bot.clock import FixedClock
from bot.store import Store
from tests.fakes.smtp import FakeSmtp
from tests.fakes.twilio import FakeTwilio
from tests.family_support import confirm_path, families

MARIA = "maria@example.com"


async def test_the_form_is_plain_html_with_labels_in_each_language(
    sqlite_store: Store, clock: FixedClock
) -> None:
    async with (
        FakeSmtp() as smtp,
        FakeTwilio() as twilio,
        families(sqlite_store, clock, smtp=smtp, twilio=twilio) as f,
    ):
        for path, lang, words in (
            ("/subscribe", "en", "E-mail address"),
            ("/es/subscribe", "es", "Correo electrónico"),
        ):
            response = await f.client.get(path)
            page = await response.text()
            assert response.status == 200 and f'<html lang="{lang}">' in page and words in page
            assert "<script" not in page and 'method="post"' in page
            assert f'action="{"/es" if lang == "es" else ""}/subscribe"' in page
            for field in ("email", "phone"):
                assert f'<label for="{field}">' in page and f'id="{field}" name="{field}"' in page
            assert page.count('type="radio" id="receive-') == 3
            assert "<legend>" in page
            assert "form-action 'self'" in response.headers["Content-Security-Policy"]
            assert response.headers["Cache-Control"] == "no-store"
        status = await (await f.client.get("/es/")).text()
        assert 'href="/es/subscribe"' in status


async def test_without_email_or_texts_there_is_no_link_and_the_page_says_so(
    sqlite_store: Store, clock: FixedClock
) -> None:
    async with families(sqlite_store, clock) as f:
        assert "/subscribe" not in await (await f.client.get("/")).text()
        page = await (await f.client.get("/subscribe")).text()
        assert "not available yet" in page and "<form" not in page


async def test_mistakes_are_explained_in_the_readers_language_keeping_what_was_typed(
    sqlite_store: Store, clock: FixedClock
) -> None:
    async with FakeSmtp() as smtp, families(sqlite_store, clock, smtp=smtp) as f:
        typed = '"><script>alert(1)</script>@example.com'
        response = await f.client.post("/es/subscribe", data={"email": typed})
        page = await response.text()
        assert response.status == 422 and 'role="alert"' in page
        assert "Eso no es un correo electrónico" in page
        assert "<script>alert" not in page and "&lt;script&gt;alert(1)" in page
        assert 'aria-invalid="true"' in page
        empty = await f.client.post("/subscribe", data={"email": "  "})
        assert empty.status == 422 and "Write your e-mail address" in await empty.text()
        huge = await f.client.post(
            "/subscribe",
            data={"email": "a" * 10_000, "receive": "b" * 10_000, "language": "c" * 10_000},
        )
        assert huge.status == 422
        await f.drain()
        assert smtp.messages == []
        async with sqlite_store.read() as tx:
            assert await tx.subscriber_counts() == {}


async def test_the_answer_is_the_same_for_a_new_a_known_and_a_limited_address(
    sqlite_store: Store, clock: FixedClock
) -> None:
    async with FakeSmtp() as smtp, families(sqlite_store, clock, smtp=smtp) as f:

        def clean(page: str) -> str:
            return re.sub(r"\s+", " ", page)

        new = clean(await (await f.client.post("/subscribe", data={"email": MARIA})).text())
        await f.drain()
        await f.client.post(confirm_path(smtp.messages[0]))
        clock.advance(minutes=11)
        known = clean(await (await f.client.post("/subscribe", data={"email": MARIA})).text())
        limited = clean(await (await f.client.post("/subscribe", data={"email": MARIA})).text())
        assert new == known == limited
        await f.drain()
        assert len(smtp.messages) == 2  # the first, and one for the known address's new choices


async def test_a_flood_of_sign_ups_from_one_connection_gets_429(
    sqlite_store: Store, clock: FixedClock
) -> None:
    async with FakeSmtp() as smtp, families(sqlite_store, clock, smtp=smtp) as f:
        statuses = []
        for n in range(25):
            response = await f.client.post("/subscribe", data={"email": f"p{n}@example.com"})
            statuses.append(response.status)
        assert statuses.count(200) == 20 and statuses.count(429) == 5
        last = await (await f.client.post("/es/subscribe", data={"email": "x@example.com"})).text()
        assert "Inténtalo de nuevo en una hora" in last
        await f.drain()
        assert len(smtp.messages) == 20


async def test_behind_a_proxy_each_family_counts_on_its_own(
    sqlite_store: Store, clock: FixedClock
) -> None:
    async with FakeSmtp() as smtp, families(sqlite_store, clock, smtp=smtp) as f:
        object.__setattr__(f.client.app[STATE].settings, "proxy_hops", 1)  # pydantic frozen
        for n in range(30):  # a parents' meeting behind one proxy, each phone its own address
            headers = {"X-Forwarded-For": f"203.0.113.7, 198.51.100.{n}"}
            response = await f.client.post(
                "/subscribe", data={"email": f"p{n}@example.com"}, headers=headers
            )
            assert response.status == 200


async def test_a_confirmation_link_that_does_not_work_says_what_to_do(
    sqlite_store: Store, clock: FixedClock
) -> None:
    async with FakeSmtp() as smtp, families(sqlite_store, clock, smtp=smtp) as f:
        for method in ("GET", "POST"):
            response = await f.client.request(method, "/es/subscribe/confirm/not-a-token")
            page = await response.text()
            assert response.status == 404 and "Este enlace ya no funciona" in page
            assert 'href="/es/subscribe"' in page
        await f.client.post("/subscribe", data={"email": MARIA})
        await f.drain()
        path = confirm_path(smtp.messages[0])
        clock.advance(hours=49)
        assert (await f.client.post(path)).status == 404
