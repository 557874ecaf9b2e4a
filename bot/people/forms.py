"""Tokens that make the public forms (sign-up, confirmation) answer only their own page,
and the signed links to a person's preferences page.

    forms = FormTokens(store, clock)
    cookie = forms.new_cookie()              # set once per browser (SameSite=Lax, HttpOnly)
    token = await forms.token(cookie)        # a hidden field of the form
    await forms.check(cookie, token)         # the POST: True only for a form we served it

A page on another site can make a visitor's browser POST to the form, but it cannot read
our page (so not the token), and the browser does not send our cookie along with a
cross-site POST (SameSite=Lax); the token is an HMAC of that cookie, so a token fetched by
the attacker for their own cookie is worth nothing in the visitor's browser ("double
submit", signed). The web plugin checks `Origin` (or `Referer`) too. The key lives in the
store (`meta`), made once by whichever instance needs it first, so any instance checks a
token another one issued.

The same key signs each person's preferences link (`person_token`): their opaque key and
an HMAC of it, 20 URL-safe characters, no address in it. Checking one (`person_of`) tells
a link we made (whose person may have left since) from a mistyped or changed one.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import re
import secrets
from datetime import timedelta

from bot.clock import Clock, utcnow
from bot.store import Store

KEY_NAME = "form_secret"  # the name of its row in the store's `meta` table
COOKIE_BYTES = 16
PERSON_KEY = re.compile(r"p([0-9a-f]{16})")  # a person's key (`SignUps`): "p" and 8 bytes
PERSON_MAC_BYTES = 7  # 56 bits: guessing one link online is out of reach
PERSON_TOKEN = re.compile(r"[A-Za-z0-9_-]{20}")  # base64url of 8 + 7 bytes


class FormTokens:
    """Issue and check the public forms' tokens; see the module's docstring."""

    def __init__(
        self, store: Store, clock: Clock = utcnow, *, max_age: timedelta = timedelta(hours=24)
    ) -> None:
        self.store = store
        self.clock = clock
        self.max_age = max_age
        self._secret: bytes | None = None
        self._lock = asyncio.Lock()

    @staticmethod
    def new_cookie() -> str:
        return secrets.token_urlsafe(COOKIE_BYTES)

    async def _key(self) -> bytes:
        if self._secret is None:
            async with self._lock:
                if self._secret is None:
                    async with self.store.write() as tx:
                        kept = await tx.meta_once(KEY_NAME, secrets.token_hex(32))
                    self._secret = bytes.fromhex(kept)
        return self._secret

    def _mac(self, key: bytes, cookie: str, issued: int) -> str:
        digest = hmac.new(key, f"{cookie}.{issued}".encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest[:18]).decode()

    async def token(self, cookie: str) -> str:
        """The form's hidden token for the browser holding `cookie`."""
        issued = int(self.clock().timestamp())
        return f"{issued}.{self._mac(await self._key(), cookie, issued)}"

    async def check(self, cookie: str | None, token: str | None) -> bool:
        """Whether `token` was issued for `cookie`, within `max_age`."""
        if not cookie or not token or len(token) > 64 or len(cookie) > 64:
            return False
        issued_text, _, mac = token.partition(".")
        if not issued_text.isdigit():
            return False
        issued = int(issued_text)
        age = self.clock().timestamp() - issued
        if not -300 <= age <= self.max_age.total_seconds():
            return False
        return hmac.compare_digest(mac, self._mac(await self._key(), cookie, issued))

    async def person_token(self, key: str) -> str:
        """The token of the preferences link of the person whose key is `key` ("" for a key
        of another shape, which gets no link)."""
        found = PERSON_KEY.fullmatch(key)
        if found is None:
            return ""
        raw = bytes.fromhex(found.group(1))
        return base64.urlsafe_b64encode(raw + await self._person_mac(raw)).decode()

    async def person_of(self, token: str) -> str | None:
        """The key a preferences link's token names, or None when we did not make it (cut
        short, mistyped, changed)."""
        if not PERSON_TOKEN.fullmatch(token or ""):
            return None
        raw = base64.urlsafe_b64decode(token)
        key, mac = raw[:8], raw[8:]
        if not hmac.compare_digest(mac, await self._person_mac(key)):
            return None
        return "p" + key.hex()

    async def _person_mac(self, raw: bytes) -> bytes:
        # "person\0" keeps these apart from the forms' tokens (a cookie holds no NUL).
        signed = hmac.new(await self._key(), b"person\0" + raw, hashlib.sha256)
        return signed.digest()[:PERSON_MAC_BYTES]
