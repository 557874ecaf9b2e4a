"""`strikebot doctor` for browser notifications: are the VAPID key and subject set and
usable, and what key the page offers browsers."""

from __future__ import annotations

from collections.abc import Sequence

from bot.ports import Check, DoctorRequest, Verdict

from . import _keys
from ._settings import NAME, WebPushSettings


async def doctor(request: DoctorRequest) -> Sequence[Check]:
    settings = request.settings
    assert isinstance(settings, WebPushSettings)
    checks: list[Check] = []
    make = "Make a key pair with `strikebot webpush keys` and set the variables it prints."
    if not settings.key:
        return [Check(NAME, "VAPID key", Verdict.FAIL, "WEBPUSH_VAPID_PRIVATE_KEY is not set",
                      make)]  # fmt: skip
    try:
        vapid = _keys.load(settings.key)
    except _keys.BadKey as exc:
        return [Check(NAME, "VAPID key", Verdict.FAIL, str(exc), make)]
    public = _keys.public_key(vapid)
    checks.append(Check(NAME, "VAPID key", Verdict.OK, f"browsers subscribe with {public}"))
    if settings.subject:
        checks.append(Check(NAME, "VAPID subject", Verdict.OK, settings.subject))
    else:
        checks.append(Check(NAME, "VAPID subject", Verdict.FAIL,
                            "WEBPUSH_VAPID_SUBJECT is not set: push services refuse messages "
                            "that do not say who sends them",
                            "Set WEBPUSH_VAPID_SUBJECT=mailto:<the operator's address>.")
                      )  # fmt: skip
    if request.campaign.public_url.startswith("http://"):
        checks.append(Check(NAME, "page", Verdict.WARN,
                            "the page is served over http: browsers offer notifications only "
                            "to https pages (and http://localhost)",
                            "Serve the page over https ([campaign] public_url).")
                      )  # fmt: skip
    return checks
