"""`strikebot doctor` for texts: does Twilio take the account SID and auth token, is the
account active (and not a trial, which texts only verified numbers), and, where the campaign
texts US numbers, is the sender registered with the carriers? Nothing is sent."""

from __future__ import annotations

from collections.abc import Sequence

import aiohttp

from adapters.twilio.sms._settings import NAME, SmsSection, SmsSettings
from bot.ports import Check, DoctorRequest, Verdict

TIMEOUT = 10.0
TOLL_FREE = ("+1800", "+1833", "+1844", "+1855", "+1866", "+1877", "+1888")
REGISTER = (
    "Register in the Twilio console (Messaging → Regulatory compliance): {what}. It takes days "
    "to weeks (docs/email-sms.md#us-texting-registration); then set [sms] us_registered = true."
)


async def doctor(request: DoctorRequest) -> Sequence[Check]:
    settings = request.settings
    assert isinstance(settings, SmsSettings)
    if not settings.enabled or settings.account_sid is None:
        return []
    client = settings.client(NAME, timeout=TIMEOUT)
    try:
        status, account = await client.account_info()
    except (aiohttp.ClientError, TimeoutError, OSError) as exc:
        return [
            Check(NAME, "reachable", Verdict.FAIL,
                  f"could not reach Twilio's API ({type(exc).__name__})",
                  "Check this machine's internet access (or TWILIO_API_BASE).")
        ]  # fmt: skip
    finally:
        await client.close()
    if status in (401, 403, 404):
        return [
            Check(NAME, "account", Verdict.FAIL,
                  f"Twilio refused TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN ({status})",
                  "Copy both from the Twilio console's Account Info into the environment.")
        ]  # fmt: skip
    if status != 200 or account is None:
        return [
            Check(NAME, "account", Verdict.FAIL, f"Twilio answered {status} to the account check",
                  "Run doctor again in a minute; see status.twilio.com if it persists.")
        ]  # fmt: skip
    state = str(account.get("status") or "unknown")
    if state != "active":
        return [
            Check(NAME, "account", Verdict.FAIL, f"the Twilio account is {state}",
                  "Reactivate it in the Twilio console (Billing), then run doctor again.")
        ]  # fmt: skip
    checks = [Check(NAME, "account", Verdict.OK, "the account is active and takes the token")]
    if str(account.get("type")) == "Trial":
        checks.append(
            Check(NAME, "trial", Verdict.WARN,
                  "a trial account texts only numbers verified in its console, each text "
                  "prefixed by Twilio", "Upgrade the account in the Twilio console.")
        )  # fmt: skip
    section = request.section
    countries = section.countries if isinstance(section, SmsSection) else ["US"]
    registered = isinstance(section, SmsSection) and section.us_registered
    if "US" in countries and not registered:
        sender = settings.sender or ""
        if sender.startswith(TOLL_FREE):
            what = "toll-free verification of the number"
        elif settings.messaging_service and not sender:
            what = "an A2P 10DLC brand and campaign for the messaging service's numbers"
        else:
            what = "an A2P 10DLC brand and campaign, with the number in it"
        checks.append(
            Check(NAME, "US registration", Verdict.WARN,
                  "US carriers block texts from senders not registered for application-to-"
                  "person messaging", REGISTER.format(what=what))
        )  # fmt: skip
    return checks
