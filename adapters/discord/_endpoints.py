"""Where discord.py connects: `DISCORD_API_BASE` and `DISCORD_GATEWAY_URL` overrides.

discord.py keeps both as class attributes (`discord.http.Route.BASE`, which interaction
callbacks and webhooks also use, and `DiscordWebSocket.DEFAULT_GATEWAY`), so they apply to
every client in the process. A shared REST rate-limit proxy in production, the fake Discord
in tests.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import discord.gateway
import discord.http
import yarl

from bot.ports import ConfigError

_VERSIONED = re.compile(r"/api/v\d+$")


@dataclass(frozen=True, slots=True)
class Endpoints:
    api_base: str
    gateway: yarl.URL | None  # None: the URL Discord's /gateway/bot returns


def normalise_api_base(value: str) -> str:
    """`https://proxy:8080` → `https://proxy:8080/api/v10`; a versioned base is kept."""
    base = value.strip().rstrip("/")
    if not base.startswith(("http://", "https://")):
        raise ConfigError(
            f"DISCORD_API_BASE={value!r} is not a URL; write it like "
            "http://127.0.0.1:8081/api/v10 (or leave it unset for discord.com)."
        )
    if not _VERSIONED.search(base):
        base += f"/api/v{discord.http.INTERNAL_API_VERSION}"
    return base


def normalise_gateway(value: str) -> yarl.URL:
    url = yarl.URL(value.strip())
    if url.scheme not in ("ws", "wss") or not url.host:
        raise ConfigError(
            f"DISCORD_GATEWAY_URL={value!r} is not a websocket URL; write it like "
            "wss://gateway.discord.gg/ (or leave it unset)."
        )
    return url


class EndpointOverride:
    """Apply the overrides; `restore()` puts discord.py's previous values back."""

    def __init__(self, api_base: str | None, gateway_url: str | None) -> None:
        self.endpoints = Endpoints(
            api_base=normalise_api_base(api_base) if api_base else discord.http.Route.BASE,
            gateway=normalise_gateway(gateway_url) if gateway_url else None,
        )
        self._saved: tuple[str, yarl.URL] | None = None

    def apply(self) -> None:
        if self._saved is None:
            self._saved = (
                discord.http.Route.BASE,
                discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY,
            )
        discord.http.Route.BASE = self.endpoints.api_base
        if self.endpoints.gateway is not None:
            discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = self.endpoints.gateway

    def restore(self) -> None:
        if self._saved is not None:
            discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = self._saved
            self._saved = None
