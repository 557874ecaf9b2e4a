"""`strikebot doctor` for Discord: is the token valid, and can the bot post in every
subscribed channel?

Over REST only, with the bot token: `GET /users/@me` (the token), `GET
/oauth2/applications/@me` (Public Bot, intents), then per channel `GET /channels/{id}`, its
server's roles (`GET /guilds/{id}`) and the bot's roles there (`GET
/guilds/{id}/members/{bot}`), from which the bot's permissions in the channel are computed
the way Discord does: @everyone's, plus every role's, Administrator grants all, then the
channel's overwrites for @everyone, the roles and the bot itself, each deny before allow.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import aiohttp

from adapters.discord._endpoints import normalise_api_base
from adapters.discord._settings import NAME, DiscordSection, DiscordSettings
from bot.ports import Check, DoctorRequest, Subscription, Verdict

DEFAULT_API = "https://discord.com/api/v10"
TIMEOUT = aiohttp.ClientTimeout(total=10)

# Discord's permission bits (discord.com/developers/docs/topics/permissions).
ADMINISTRATOR = 1 << 3
VIEW_CHANNEL = 1 << 10
SEND_MESSAGES = 1 << 11
EMBED_LINKS = 1 << 14
READ_MESSAGE_HISTORY = 1 << 16
NEEDED = {
    VIEW_CHANNEL: "View Channel",
    SEND_MESSAGES: "Send Messages",
    EMBED_LINKS: "Embed Links",
    READ_MESSAGE_HISTORY: "Read Message History",
}
# Application flags for the privileged intents (strikebot asks for Guilds only, which is
# not privileged, so none has to be switched on).
INTENT_FLAGS = {1 << 12: "Presence", 1 << 14: "Server Members", 1 << 18: "Message Content"}


class _Api:
    def __init__(self, session: aiohttp.ClientSession, base: str, token: str) -> None:
        self.session = session
        self.base = base
        self.headers = {"Authorization": f"Bot {token}", "User-Agent": "strikebot-doctor"}

    async def get(self, path: str) -> tuple[int, Any]:
        async with self.session.get(self.base + path, headers=self.headers) as response:
            try:
                body = await response.json(content_type=None)
            except ValueError:
                body = None
            return response.status, body


async def doctor(request: DoctorRequest) -> Sequence[Check]:
    settings = request.settings
    assert isinstance(settings, DiscordSettings)
    if settings.token is None:
        return []
    base = normalise_api_base(settings.api_base) if settings.api_base else DEFAULT_API
    async with aiohttp.ClientSession(timeout=TIMEOUT) as session:
        api = _Api(session, base, settings.token.get_secret_value())
        section = request.section
        guild_ids = section.guild_ids if isinstance(section, DiscordSection) else []
        try:
            return await _checks(api, request.channels, guild_ids)
        except (aiohttp.ClientError, TimeoutError) as exc:
            return [
                Check(NAME, "reachable", Verdict.FAIL,
                      f"could not reach Discord's API ({type(exc).__name__})",
                      "Check this machine's internet access (or DISCORD_API_BASE).")
            ]  # fmt: skip


async def _checks(
    api: _Api, channels: Sequence[Subscription], guild_ids: Sequence[str]
) -> list[Check]:
    status, me = await api.get("/users/@me")
    if status == 401:
        return [
            Check(NAME, "token", Verdict.FAIL, "Discord refused DISCORD_TOKEN (401 Unauthorized)",
                  "In the Developer Portal, Bot → Reset Token, and set the new token as "
                  "DISCORD_TOKEN.")
        ]  # fmt: skip
    if status != 200 or not isinstance(me, dict):
        return [
            Check(NAME, "token", Verdict.FAIL, f"Discord answered {status} to the token check",
                  "Try again in a minute; if it persists, see discordstatus.com.")
        ]  # fmt: skip
    bot_id = str(me.get("id"))
    checks = [Check(NAME, "token", Verdict.OK, f"valid: the bot is {me.get('username')}")]
    status, app = await api.get("/oauth2/applications/@me")
    if status == 200 and isinstance(app, dict):
        checks.append(_intents(int(app.get("flags") or 0)))
        if app.get("bot_public"):
            checks.append(
                Check(NAME, "public bot", Verdict.WARN,
                      "Public Bot is on: anyone with the invite link can add the bot to a server",
                      "Developer Portal → Installation: set Install Link to None and save; then "
                      "Bot → turn Public Bot off.")
            )  # fmt: skip
    for guild_id in guild_ids:  # [discord] guild_ids: where commands are pushed at start
        status, _ = await api.get(f"/guilds/{guild_id}")
        if status == 200:
            checks.append(Check(NAME, f"server {guild_id}", Verdict.OK,
                                "in [discord] guild_ids, and the bot is there"))  # fmt: skip
        else:
            checks.append(
                Check(NAME, f"server {guild_id}", Verdict.FAIL,
                      "in [discord] guild_ids, but the bot is not in that server",
                      "Add the bot with the link from `strikebot discord invite`, or remove the "
                      "id from [discord] guild_ids.")
            )  # fmt: skip
    guilds: dict[str, tuple[int, Any, Any]] = {}
    for sub in channels:
        checks.append(await _channel(api, sub, bot_id, guilds))
    return checks


def _intents(flags: int) -> Check:
    on = [name for bit, name in INTENT_FLAGS.items() if flags & bit or flags & (bit << 1)]
    detail = "strikebot needs only the Guilds intent, which is not privileged"
    if on:
        detail += f" (also switched on: {', '.join(on)}; not needed)"
    return Check(NAME, "intents", Verdict.OK, detail)


async def _channel(
    api: _Api, sub: Subscription, bot_id: str, guilds: dict[str, tuple[int, Any, Any]]
) -> Check:
    subject = sub.address
    status, channel = await api.get(f"/channels/{sub.channel}")
    if status == 404:
        return Check(NAME, subject, Verdict.FAIL, "the channel does not exist (deleted?)",
                     f"Remove it: strikebot subscriptions remove {sub.id}")  # fmt: skip
    if status == 403:
        return Check(NAME, subject, Verdict.FAIL,
                     "the bot cannot see this channel (Missing Access)",
                     "Invite the bot to the server (strikebot discord invite), or give its role "
                     "View Channel in this channel's permissions.")  # fmt: skip
    if status != 200 or not isinstance(channel, dict):
        return Check(NAME, subject, Verdict.SKIP, f"Discord answered {status}", "Run doctor again.")
    guild_id = str(channel.get("guild_id") or sub.workspace)
    if guild_id not in guilds:
        g_status, guild = await api.get(f"/guilds/{guild_id}")
        m_status, member = await api.get(f"/guilds/{guild_id}/members/{bot_id}")
        guilds[guild_id] = (g_status if g_status != 200 else m_status, guild, member)
    g_status, guild, member = guilds[guild_id]
    if g_status != 200 or not isinstance(guild, dict) or not isinstance(member, dict):
        return Check(NAME, subject, Verdict.FAIL, "the bot is not in this server",
                     "Add it with the link from `strikebot discord invite`.")  # fmt: skip
    allowed = permissions(guild_id, bot_id, guild.get("roles") or [], member.get("roles") or [],
                          channel.get("permission_overwrites") or [])  # fmt: skip
    missing = [name for bit, name in NEEDED.items() if not allowed & bit]
    name = channel.get("name") or sub.channel
    if missing:
        return Check(NAME, subject, Verdict.FAIL,
                     f"in #{name} the bot lacks: {', '.join(missing)}",
                     f"Server Settings → Roles (or #{name} → Edit Channel → Permissions): allow "
                     f"{', '.join(missing)} for the bot's role.")  # fmt: skip
    return Check(NAME, subject, Verdict.OK, f"can post in #{name}")


def permissions(
    guild_id: str,
    member_id: str,
    roles: Sequence[Mapping[str, Any]],
    member_roles: Sequence[str],
    overwrites: Sequence[Mapping[str, Any]],
) -> int:
    """A member's permissions in a channel, as Discord computes them."""
    by_id = {str(r["id"]): int(r.get("permissions") or 0) for r in roles}
    mine = {str(r) for r in member_roles}
    allowed = by_id.get(guild_id, 0)  # @everyone's role has the server's id
    for role_id in mine:
        allowed |= by_id.get(role_id, 0)
    if allowed & ADMINISTRATOR:
        return ~0
    by_target = {str(o["id"]): o for o in overwrites}

    def apply(value: int, overwrite: Mapping[str, Any] | None) -> int:
        if overwrite is None:
            return value
        return (value & ~int(overwrite.get("deny") or 0)) | int(overwrite.get("allow") or 0)

    allowed = apply(allowed, by_target.get(guild_id))
    deny = allow = 0
    for role_id in mine:
        overwrite = by_target.get(role_id)
        if overwrite is not None:
            deny |= int(overwrite.get("deny") or 0)
            allow |= int(overwrite.get("allow") or 0)
    allowed = (allowed & ~deny) | allow
    return apply(allowed, by_target.get(member_id))
