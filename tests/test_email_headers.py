"""Mail headers as a mailbox provider reads them: real messages through a real SMTP server
(aiosmtpd on 127.0.0.1), parsed from their raw bytes by Python's `email` parser. With a
long https address (every real one passes 78 columns), in every language, the RFC 8058
pair is exactly `List-Unsubscribe: <https://...>` on one line, never an encoded-word, and
`List-Unsubscribe-Post: List-Unsubscribe=One-Click`; the address works with one POST."""

from __future__ import annotations

import re
from dataclasses import replace
from email import policy
from email.parser import BytesParser
from urllib.parse import urlsplit

import pytest

from bot import i18n
from bot.clock import FixedClock
from bot.editorial.admin import Draft
from bot.models import Status, UpdateText, Urgency
from bot.store import Store
from tests.fakes.smtp import FakeSmtp
from tests.family_support import families, text_of
from tests.support import ADMIN, CAMPAIGN, campaign_config

LONG = "https://strike-news-and-updates.united-teachers-of-los-angeles-and-allies.example.org"
LINK = re.compile(re.escape(LONG) + r"(/(?:[a-z]{2}/)?subscribe/confirm/[\w-]+)")


def _raw_headers(raw: bytes) -> list[str]:
    """The header lines as sent, each with its folded continuations joined (as read)."""
    head = raw.split(b"\r\n\r\n", 1)[0].decode("ascii")
    lines: list[str] = []
    for line in head.split("\r\n"):
        if line[:1] in (" ", "\t") and lines:
            lines[-1] += "\r\n" + line
        else:
            lines.append(line)
    return lines


@pytest.mark.parametrize("language", i18n.languages())
async def test_one_click_unsubscribe_headers_survive_a_long_address_in_every_language(
    sqlite_store: Store, clock: FixedClock, language: str
) -> None:
    config = campaign_config(replace(CAMPAIGN, public_url=LONG))
    async with FakeSmtp() as smtp, families(sqlite_store, clock, smtp=smtp, config=config) as f:
        address = f"parent-{language}@example.com"
        form = {"email": address, "language": language, "receive": "all"}
        assert (await f.sign_up(form)).status == 200
        await f.drain()
        found = LINK.search(text_of(smtp.to(address)[0]))
        assert found is not None
        assert (await f.confirm(found.group(1))).status == 200
        texts = {lang: UpdateText("Strike is on", "Picket lines at 6:30") for lang in ("en", "es")}
        await f.admin.post(ADMIN, Draft(Status.STRIKE_ON, texts, Urgency.URGENT))
        await f.drain()
        raws = [r.raw for r in smtp.received if address in r.recipients]
        assert len(raws) == 2  # the confirmation, then the update
        update_raw = raws[-1]
        for raw in raws:
            for line in _raw_headers(raw):
                value = line.partition(":")[2]
                if "http" in value:
                    assert "=?" not in value, line  # no URL is ever an encoded-word
                    assert "\r\n" not in value, line  # nor folded
        lines = _raw_headers(update_raw)
        [unsubscribe] = [x for x in lines if x.lower().startswith("list-unsubscribe:")]
        [post] = [x for x in lines if x.lower().startswith("list-unsubscribe-post:")]
        assert post == "List-Unsubscribe-Post: List-Unsubscribe=One-Click"
        assert re.fullmatch(r"List-Unsubscribe: <https://[!-~]+>", unsubscribe), unsubscribe
        assert len(unsubscribe) > 78  # the case Python's default folding got wrong
        parsed = BytesParser(policy=policy.default).parsebytes(update_raw)
        url = str(parsed["List-Unsubscribe"]).strip()
        assert url.startswith(f"<{LONG}/email/unsubscribe/") and url.endswith(">")
        assert parsed["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
        # A provider's one-click POST to that very address unsubscribes, without a login.
        target = urlsplit(url.strip("<>"))
        done = await f.client.post(
            f"{target.path}?{target.query}" if target.query else target.path,
            data="List-Unsubscribe=One-Click",
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
        assert done.status == 200
        assert await f.signups.find(address) is None
