"""`strikebot doctor` for Slack: is the bot token valid, does the app have its scopes, and
can the bot post in every subscribed channel?

`auth.test` checks the token; Slack lists the token's scopes in the `x-oauth-scopes` header
of every Web API response. Then `conversations.info` per channel: an archived channel takes
no posts; a private channel takes them only once the bot is invited (Slack answers
`channel_not_found` for a private channel the bot is not in); a public one also needs the
invitation unless the app has `chat:write.public`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack._adapter import api_base
from adapters.slack._settings import NAME, SlackSettings
from bot.ports import Check, DoctorRequest, Subscription, Verdict

# What the app needs (config/slack-manifest.yml), and what lets doctor see membership.
REQUIRED = ("commands", "chat:write", "users:read", "usergroups:read")
TO_CHECK_CHANNELS = ("channels:read", "groups:read")
PUBLIC = "chat:write.public"
REINSTALL = (
    "In the app's settings (api.slack.com/apps) → OAuth & Permissions → Bot Token Scopes, add "
    "{scopes} (config/slack-manifest.yml lists them), then Reinstall to Workspace."
)
TOKEN_ERRORS = {"invalid_auth", "not_authed", "account_inactive", "token_revoked",
                "token_expired"}  # fmt: skip


async def doctor(request: DoctorRequest) -> Sequence[Check]:
    settings = request.settings
    assert isinstance(settings, SlackSettings)
    if settings.bot_token is None:
        return []
    client = AsyncWebClient(
        token=settings.bot_token.get_secret_value(), base_url=api_base(settings.api_url),
        timeout=10,
    )  # fmt: skip
    try:
        auth = await client.auth_test()
    except SlackApiError as exc:
        error = _error(exc)
        if error in TOKEN_ERRORS:
            return [
                Check(NAME, "token", Verdict.FAIL, f"Slack refused SLACK_BOT_TOKEN ({error})",
                      "In the app's settings → OAuth & Permissions, copy the Bot User OAuth "
                      "Token (xoxb-...) into SLACK_BOT_TOKEN.")
            ]  # fmt: skip
        return [Check(NAME, "token", Verdict.FAIL, f"auth.test failed ({error})", "Run again.")]
    except Exception as exc:  # connection errors: aiohttp's, timeouts
        return [
            Check(NAME, "reachable", Verdict.FAIL,
                  f"could not reach Slack's API ({type(exc).__name__})",
                  "Check this machine's internet access (or SLACK_API_URL).")
        ]  # fmt: skip
    scopes = _scopes(auth.headers)
    checks = [
        Check(NAME, "token", Verdict.OK,
              f"valid: {auth.get('user')} in {auth.get('team')} ({auth.get('team_id')})")
    ]  # fmt: skip
    missing = [s for s in REQUIRED if s not in scopes]
    if missing:
        checks.append(Check(NAME, "scopes", Verdict.FAIL, f"missing: {', '.join(missing)}",
                            REINSTALL.format(scopes=", ".join(missing))))  # fmt: skip
    else:
        checks.append(Check(NAME, "scopes", Verdict.OK, ", ".join(sorted(scopes))))
    unseen = [s for s in TO_CHECK_CHANNELS if s not in scopes]
    if unseen and request.channels:
        checks.append(
            Check(NAME, "channel checks", Verdict.WARN,
                  f"without {', '.join(unseen)} doctor cannot see whether the bot is in a channel",
                  REINSTALL.format(scopes=", ".join(unseen)))
        )  # fmt: skip
    for sub in request.channels:
        checks.append(await _channel(client, sub, PUBLIC in scopes))
    return checks


async def _channel(client: AsyncWebClient, sub: Subscription, public_ok: bool) -> Check:
    subject = sub.address
    invite = "In that channel, type /invite @ followed by the bot's name."
    try:
        found = await client.conversations_info(channel=sub.channel)
    except SlackApiError as exc:
        error = _error(exc)
        if error == "channel_not_found":
            gone = f"If it was deleted: strikebot subscriptions remove {sub.id}."
            return Check(NAME, subject, Verdict.FAIL,
                         "Slack does not show the bot this channel: it is private and the bot "
                         "was not invited, or it was deleted", f"{invite} {gone}")  # fmt: skip
        if error == "missing_scope":
            scopes = "channels:read, groups:read"
            return Check(NAME, subject, Verdict.SKIP, f"cannot check without {scopes}",
                         REINSTALL.format(scopes=scopes))  # fmt: skip
        return Check(NAME, subject, Verdict.SKIP, f"conversations.info failed ({error})",
                     "Run doctor again.")  # fmt: skip
    channel: Mapping[str, Any] = found.get("channel") or {}
    name = f"#{channel.get('name') or sub.channel}"
    if channel.get("is_archived"):
        return Check(NAME, subject, Verdict.FAIL, f"{name} is archived: nothing can be posted",
                     f"Unarchive it, or: strikebot subscriptions remove {sub.id}.")  # fmt: skip
    if channel.get("is_member"):
        return Check(NAME, subject, Verdict.OK, f"can post in {name}")
    if channel.get("is_private"):
        return Check(NAME, subject, Verdict.FAIL,
                     f"{name} is private and the bot is not in it", invite)  # fmt: skip
    if public_ok:
        return Check(NAME, subject, Verdict.OK, f"can post in {name} (chat:write.public)")
    return Check(NAME, subject, Verdict.FAIL, f"the bot is not in {name}",
                 f"{invite} Or add the chat:write.public scope.")  # fmt: skip


def _scopes(headers: Mapping[str, Any]) -> set[str]:
    for key, value in headers.items():
        if key.lower() == "x-oauth-scopes":
            text = value[0] if isinstance(value, list) else value
            return {s.strip() for s in str(text).split(",") if s.strip()}
    return set()


def _error(exc: SlackApiError) -> str:
    data = exc.response.data
    if isinstance(data, dict):
        return str(data.get("error") or "error")
    return f"HTTP {exc.response.status_code}"
