"""`strikebot doctor` for the web plugin: is the admin API's bearer token strong enough?

Anyone who knows STRIKEBOT_ADMIN_TOKEN can post to every channel, so a short, repetitive or
well-known token is a failure. Strength is estimated as bits: the length times log2 of the
alphabet the token draws from (capped by how many distinct characters it uses).
`openssl rand -hex 32` gives 256 bits.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from bot.ports import Check, DoctorRequest, Verdict

from ._settings import WebSettings

NAME = "web"
SUBJECT = "admin token"
WEAK_BITS = 64  # below: guessable by anyone with time and a script
GOOD_BITS = 128
MAKE_ONE = "Set STRIKEBOT_ADMIN_TOKEN to the output of `openssl rand -hex 32`, and restart."
KNOWN = frozenset({"changeme", "change-me", "secret", "password", "token", "admin", "test"})


def token_bits(token: str) -> float:
    """An estimate of the token's strength in bits (see the module docstring)."""
    alphabet = (
        10 * any(c.isdigit() for c in token)
        + 26 * any(c.islower() for c in token)
        + 26 * any(c.isupper() for c in token)
        + 33 * any(not c.isalnum() for c in token)
    )
    distinct = len(set(token))
    return len(token) * math.log2(max(min(alphabet, distinct), 2))


async def doctor(request: DoctorRequest) -> Sequence[Check]:
    settings = request.settings
    assert isinstance(settings, WebSettings)
    if settings.admin_token is None:
        return [
            Check(NAME, SUBJECT, Verdict.OFF,
                  "STRIKEBOT_ADMIN_TOKEN is not set: the admin API is off",
                  f"Only to post over HTTP: {MAKE_ONE[0].lower()}{MAKE_ONE[1:]}")
        ]  # fmt: skip
    token = settings.admin_token.get_secret_value()
    bits = token_bits(token)
    if token.lower() in KNOWN or bits < WEAK_BITS:
        return [
            Check(NAME, SUBJECT, Verdict.FAIL,
                  f"STRIKEBOT_ADMIN_TOKEN is guessable (about {bits:.0f} bits, {len(token)} "
                  "characters): whoever guesses it posts to every channel", MAKE_ONE)
        ]  # fmt: skip
    if bits < GOOD_BITS:
        return [
            Check(NAME, SUBJECT, Verdict.WARN,
                  f"STRIKEBOT_ADMIN_TOKEN is weaker than it should be (about {bits:.0f} bits; "
                  f"{GOOD_BITS} or more is safe)", MAKE_ONE)
        ]  # fmt: skip
    return [Check(NAME, SUBJECT, Verdict.OK, f"strong (about {bits:.0f} bits)")]
