"""`strikebot doctor` for WhatsApp: does Twilio take the account's login, is the sender
set, and is every template the campaign file names known to Twilio and approved at
WhatsApp, for every kind of message and every campaign language?"""

from __future__ import annotations

from collections.abc import Sequence

import aiohttp

from bot.ports import Check, DoctorRequest, Verdict

from ._content import Approvals
from ._settings import KINDS, NAME, WhatsAppSection, WhatsAppSettings

TIMEOUT = 8.0


async def doctor(request: DoctorRequest) -> Sequence[Check]:
    settings = request.settings
    assert isinstance(settings, WhatsAppSettings)
    if not settings.account_sid or not settings.auth_token:
        return []
    section = request.section if isinstance(request.section, WhatsAppSection) else None
    section = section or WhatsAppSection()
    client = settings.client(NAME, timeout=TIMEOUT)
    try:
        try:
            login, _ = await client.account_info()
        except (aiohttp.ClientError, TimeoutError, OSError):
            fix = "Check this machine's internet access (or TWILIO_API_BASE)."
            return [Check(NAME, "reachable", Verdict.FAIL, "could not reach Twilio", fix)]
        if login != 200:
            return [Check(NAME, "credentials", Verdict.FAIL,
                          f"Twilio refused the account's login (HTTP {login})",
                          "Copy the Account SID and Auth Token from the Twilio console into "
                          "TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN.")]  # fmt: skip
        checks = [Check(NAME, "credentials", Verdict.OK, "Twilio takes the account's login")]
        if settings.number:
            checks.append(Check(NAME, "sender", Verdict.OK, f"sending as {settings.number}"))
        else:
            checks.append(Check(NAME, "sender", Verdict.FAIL, "no WhatsApp sender is set",
                                "Set TWILIO_WHATSAPP_FROM to the number registered as your "
                                "WhatsApp sender (Twilio console, Messaging, Senders).")
                          )  # fmt: skip
        approvals = Approvals(client, settings.content_base)
        checks += await _templates(approvals, section, request.campaign.languages)
        return checks
    finally:
        await client.close()


async def _templates(
    approvals: Approvals, section: WhatsAppSection, languages: Sequence[str]
) -> list[Check]:
    checks = []
    for kind in KINDS:
        template = section.templates.for_kind(kind)
        for language in languages:
            subject = f"template {kind} ({language})"
            sid = template.content.get(language) if template is not None else None
            if sid is None:
                checks.append(Check(
                    NAME, subject, Verdict.FAIL,
                    f"no template for {kind} messages in {language}: outside the 24-hour "
                    "window they cannot be sent",
                    f'Add [whatsapp.templates.{kind}] content.{language} = "HX..." (or '
                    "[whatsapp.templates.update]) to the campaign file: docs/whatsapp.md.",
                ))  # fmt: skip
                continue
            approval = await approvals.fetch(sid)
            if approval is None:
                checks.append(Check(NAME, subject, Verdict.SKIP,
                                    f"could not ask Twilio about {sid}"))  # fmt: skip
            elif approval.status == "unknown":
                checks.append(Check(NAME, subject, Verdict.FAIL, f"Twilio has no content {sid}",
                                    "Copy the content SID (HX...) from the Content Template "
                                    "Builder into the campaign file."))  # fmt: skip
            elif not approval.approved:
                why = f": {approval.reason}" if approval.reason else ""
                checks.append(Check(
                    NAME, subject, Verdict.FAIL,
                    f"{approval.name or sid} is {approval.status} at WhatsApp{why}",
                    "Submit it for WhatsApp's approval in the Content Template Builder (as a "
                    "Utility template), or fix what WhatsApp rejected and submit it again.",
                ))  # fmt: skip
            else:
                checks.append(Check(NAME, subject, Verdict.OK,
                                    f"{approval.name or sid} is approved"))  # fmt: skip
    return checks
