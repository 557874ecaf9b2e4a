"""Webhook endpoints: add, list, remove, enable and test the receivers of events.

    created = await webhooks.add(actor, "https://hooks.example.org/strike")
    print(created.secret)          # whsec_...: shown this once, never again

An endpoint is a subscription on the `webhooks` platform (so its events travel through the
outbox like any delivery: retried, paced, never doubled) plus a row in `webhook_endpoints`
with its URL and the `whsec_` secret that signs each request (Standard Webhooks). The
`webhooks` plugin (adapters/webhooks) delivers them; the web plugin's admin API and the
plugin's `strikebot webhooks` commands both call the use cases here.

Addresses. A URL whose host resolves to a private, loopback, link-local or otherwise
non-public address is refused when it is added, and again before every request (a name can
be pointed elsewhere after it was checked), unless the campaign file allows it:
`[webhooks] allow_private = true`, or a narrower `allowed_networks = ["10.1.0.0/16"]`.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import ipaddress
import secrets
import socket
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, time
from typing import Any
from urllib.parse import SplitResult, urlsplit

from bot.clock import Clock
from bot.delivery import events
from bot.delivery.planning import plan_events
from bot.editorial.parsing import parse_timezone
from bot.errors import Conflict, InvalidInput, NotFound
from bot.i18n.sentences import localized_error
from bot.models import Actor, Campaign, Subscription, WebhookEndpoint
from bot.plugins.admins import AdminList
from bot.store import Store

PLATFORM = "webhooks"  # the platform (plugin) name of webhook subscriptions
WORKSPACE = "endpoint"
SECRET_PREFIX = "whsec_"  # noqa: S105 (the format's prefix, not a secret)
SECRET_BYTES = 24
URL_MAX = 2000
DESCRIPTION_MAX = 200

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True, slots=True)
class AddressPolicy:
    """Which addresses webhooks may go to: public ones, plus what the campaign file allows.
    `disable_after_hours`: an endpoint failing that long is disabled and the admins told."""

    allow_private: bool = False
    allowed_networks: tuple[IPNetwork, ...] = ()
    disable_after_hours: float = 48.0

    def refusal(self, address: str) -> str | None:
        """Why `address` (an IP) may not be sent to, or None when it may. An IPv6 address
        that carries an IPv4 one (`embedded_ipv4`) is judged by that too: a translator or
        tunnel in the path would deliver to it."""
        try:
            ip: IPAddress = ipaddress.ip_address(address.split("%", 1)[0])
        except ValueError:
            return f"{address!r} is not an IP address"
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        if isinstance(ip, ipaddress.IPv6Address):
            if ip in _LOCAL_NAT64 and not any(ip in net for net in self.allowed_networks):
                return f"{ip} is a local-use NAT64 address (64:ff9b:1::/48)"
            for inner in embedded_ipv4(ip):
                why = self._refusal(inner)
                if why is not None:
                    return f"{ip} carries {inner}; {why}"
        return self._refusal(ip)

    def _refusal(self, ip: IPAddress) -> str | None:
        if any(ip in network for network in self.allowed_networks):
            return None
        if ip.is_global and not ip.is_multicast:
            return None
        if self.allow_private and (ip.is_private or ip.is_loopback or ip.is_link_local):
            return None
        kind = (
            "a loopback"
            if ip.is_loopback
            else "a link-local"
            if ip.is_link_local
            else "a private"
            if ip.is_private
            else "a non-public"
        )
        return f"{ip} is {kind} address"


# IPv6 ranges whose addresses carry an IPv4 address in their last 32 bits: IPv4-compatible
# (::/96, deprecated), IPv4-translated (::ffff:0:0:0/96, RFC 2765), and NAT64 (64:ff9b::/96,
# RFC 6052; 64:ff9b:1::/48, RFC 8215, read at every RFC 6052 prefix length below).
_LAST_32 = (
    ipaddress.IPv6Network("::/96"),
    ipaddress.IPv6Network("::ffff:0:0:0/96"),
    ipaddress.IPv6Network("64:ff9b::/96"),
)
_LOCAL_NAT64 = ipaddress.IPv6Network("64:ff9b:1::/48")


def embedded_ipv4(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """Every IPv4 address `ip` carries: IPv4-mapped (::ffff:0:0/96), IPv4-translated
    (::ffff:0:0:0/96), IPv4-compatible (::/96), NAT64 (64:ff9b::/96, 64:ff9b:1::/48), 6to4
    (2002::/16) and Teredo (2001::/32: its server and its client). Empty for the others."""
    found: list[ipaddress.IPv4Address] = []
    value = int(ip)
    if ip.ipv4_mapped is not None:
        found.append(ip.ipv4_mapped)
    if any(ip in network for network in _LAST_32) and ip not in (
        ipaddress.IPv6Address("::"),
        ipaddress.IPv6Address("::1"),
    ):
        found.append(ipaddress.IPv4Address(value & 0xFFFFFFFF))
    if ip in _LOCAL_NAT64:
        # RFC 6052 2.2: where the IPv4 address sits for each prefix length; bits 64-71 are
        # left out (the "u" octet). Which length the network uses is not known from here.
        found.append(ipaddress.IPv4Address(value & 0xFFFFFFFF))  # /96
        for length in (48, 56, 64):
            bits = f"{value:0128b}"
            payload = (bits[length:64] + bits[72:])[:32]
            found.append(ipaddress.IPv4Address(int(payload, 2)))
    if ip.sixtofour is not None:
        found.append(ip.sixtofour)
    if ip.teredo is not None:
        found.extend(ip.teredo)
    return list(dict.fromkeys(found))


def parse_networks(values: Sequence[str]) -> tuple[IPNetwork, ...]:
    return tuple(ipaddress.ip_network(v.strip(), strict=False) for v in values)


def check_url(url: str) -> SplitResult:
    """The URL's parts, or `InvalidInput` saying what to write instead."""
    text = url.strip()
    example = "e.g. https://hooks.example.org/strikebot"
    if not text or len(text) > URL_MAX:
        raise InvalidInput(
            f"Give the receiver's full address (at most {URL_MAX} characters), {example}."
        )
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        raise InvalidInput(f"{text[:100]!r} is not a URL; write one like {example}.") from None
    if parts.scheme not in ("https", "http"):
        raise InvalidInput(
            f"{text[:100]!r} is not a web address: it must start with https:// or http:// "
            f"({example})."
        )
    if not parts.hostname:
        raise InvalidInput(
            f"{text[:100]!r} names no host: write the receiver's name or address after "
            f"{parts.scheme}:// ({example})."
        )
    if parts.username is not None or parts.password is not None:
        raise InvalidInput(
            "Leave user names and passwords out of the URL: every request is signed with the "
            "endpoint's secret instead, which the receiver checks."
        )
    if parts.fragment:
        raise InvalidInput("Leave the #fragment out of the URL; receivers never see it.")
    if port == 0:
        raise InvalidInput(f"{text[:100]!r} names port 0; give a real port or none.")
    return parts


async def resolve(host: str, port: int) -> list[str]:
    """Every address `host` resolves to (an IP literal resolves to itself)."""
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        pass
    else:
        return [host.strip("[]")]
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return sorted({str(info[4][0]) for info in infos})


async def check_destination(url: str, policy: AddressPolicy) -> list[str]:
    """Resolve the URL's host and check every address against `policy`; returns them."""
    parts = check_url(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        addresses = await resolve(host, port)
    except (OSError, UnicodeError, ValueError):  # no such name, or not a name at all
        raise localized_error(InvalidInput, "webhooks.unknown_host", host=host) from None
    for address in addresses:
        why = policy.refusal(address)
        if why is not None:
            raise localized_error(InvalidInput, "webhooks.private_address", host=host, why=why)
    return addresses


def new_secret() -> str:
    """A Standard Webhooks secret: `whsec_` and 24 random bytes in base64."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def channel_for(url: str) -> str:
    """The subscription's channel id for a URL: adding the same URL twice finds it again."""
    return hashlib.sha256(url.encode()).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class Created:
    endpoint: WebhookEndpoint
    secret: str  # shown once


class Webhooks:
    """The webhook use cases, bound to a store, the campaign, who is an admin and a clock."""

    def __init__(
        self,
        store: Store,
        campaign: Campaign,
        admins: AdminList,
        clock: Clock,
        policy: AddressPolicy,
    ) -> None:
        self.store = store
        self.campaign = campaign
        self.admins = admins
        self.clock = clock
        self.policy = policy

    async def add(
        self,
        actor: Actor,
        url: str,
        *,
        description: str = "",
        language: str | None = None,
        briefing_time: time | None = None,
        timezone: str | None = None,
    ) -> Created:
        """Add a receiver (checked: a public address, unless allowed). Its events start with
        the next change; `briefing_time` also sends it the morning briefing."""
        self.admins.require(actor, "manage webhooks")
        url = url.strip()
        await check_destination(url, self.policy)
        description = " ".join(description.split())
        if len(description) > DESCRIPTION_MAX:
            raise InvalidInput(f"Keep the description to {DESCRIPTION_MAX} characters.")
        language = language or self.campaign.default_language
        if language not in self.campaign.languages:
            raise InvalidInput(
                f"Language {language!r} is not one of this campaign's languages "
                f"({', '.join(self.campaign.languages)})."
            )
        zone = parse_timezone(timezone or self.campaign.timezone)
        now = self.clock()
        secret = new_secret()
        async with self.store.write() as tx:
            channel = channel_for(url)
            existing = await tx.find_subscription(PLATFORM, WORKSPACE, channel)
            if existing is not None:
                raise Conflict(
                    f"{url} is already webhook #{existing.id}. Remove it first to start afresh "
                    "with a new secret."
                )
            sub_id = await tx.save_subscription(
                Subscription(
                    id=0,
                    platform=PLATFORM,
                    workspace=WORKSPACE,
                    channel=channel,
                    language=language,
                    briefing_time=briefing_time,
                    timezone=zone,
                    label=(description or url)[:200],
                ),
                now,
            )
            await tx.save_webhook_endpoint(
                sub_id,
                url=url,
                secret=secret,
                description=description,
                created_by=actor.id,
                now=now,
            )
            endpoint = await tx.get_webhook_endpoint(sub_id)
            assert endpoint is not None
            await tx.audit(
                now, actor.id, "webhook.add", f"subscription:{sub_id}", None, _audit(endpoint)
            )
        return Created(endpoint, secret)

    async def list(self) -> list[WebhookEndpoint]:
        async with self.store.read() as tx:
            return await tx.list_webhook_endpoints()

    async def get(self, endpoint_id: int) -> WebhookEndpoint:
        async with self.store.read() as tx:
            endpoint = await tx.get_webhook_endpoint(endpoint_id)
        if endpoint is None or not endpoint.active:
            raise NotFound(f"No webhook #{endpoint_id}. List them with `strikebot webhooks list`.")
        return endpoint

    async def find(self, target: str) -> WebhookEndpoint:
        """An endpoint by its number (`3`, `#3`) or its URL."""
        text = target.strip().lstrip("#")
        if text.isdigit() and int(text) < 2**31:
            return await self.get(int(text))
        for endpoint in await self.list():
            if endpoint.url == target.strip():
                return endpoint
        raise NotFound(
            f"No webhook {target[:200]!r}. Give its number or URL as `strikebot webhooks list` "
            "shows them."
        )

    async def remove(self, actor: Actor, endpoint_id: int) -> WebhookEndpoint:
        """Stop sending to it; events not yet sent are cancelled."""
        self.admins.require(actor, "manage webhooks")
        endpoint = await self.get(endpoint_id)
        now = self.clock()
        async with self.store.write() as tx:
            await tx.deactivate_subscription(endpoint.id)
            await tx.audit(
                now,
                actor.id,
                "webhook.remove",
                f"subscription:{endpoint.id}",
                _audit(endpoint),
                None,
            )
        return replace(endpoint, active=False)

    async def enable(self, actor: Actor, endpoint_id: int) -> WebhookEndpoint:
        """Send to a disabled endpoint again (its failing streak forgotten). Events that died
        meanwhile come back with `strikebot deliveries retry`."""
        self.admins.require(actor, "manage webhooks")
        endpoint = await self.get(endpoint_id)
        now = self.clock()
        async with self.store.write() as tx:
            await tx.mark_subscription_broken(endpoint.id, None)
            await tx.reset_webhook_failures(endpoint.id)
            after = await tx.get_webhook_endpoint(endpoint.id)
            assert after is not None
            await tx.audit(
                now,
                actor.id,
                "webhook.enable",
                f"subscription:{endpoint.id}",
                _audit(endpoint),
                _audit(after),
            )
        return after

    # -- what delivering to an endpoint records ------------------------------------

    async def receiver(self, workspace: str, channel: str) -> WebhookEndpoint | None:
        """The endpoint a subscription delivers to; None once it was removed."""
        async with self.store.read() as tx:
            found = await tx.find_webhook_endpoint(PLATFORM, workspace, channel)
        return found if found is not None and found.active else None

    async def answered(self, endpoint_id: int) -> None:
        """The receiver took an event: its failing streak, if any, is over."""
        async with self.store.write() as tx:
            await tx.record_webhook_success(endpoint_id, self.clock())

    async def failed(
        self, endpoint_id: int, detail: str, *, for_good: bool
    ) -> tuple[datetime, bool]:
        """The receiver failed an event: when its failing streak began, and whether the
        endpoint is now disabled (`for_good`, or failing for `disable_after_hours`; a new
        streak starts if it is enabled again)."""
        now = self.clock()
        async with self.store.write() as tx:
            since = await tx.record_webhook_failure(endpoint_id, now, detail)
            hours = (now - since).total_seconds() / 3600
            disable = for_good or hours >= self.policy.disable_after_hours
            if disable:
                await tx.reset_webhook_failures(endpoint_id)
        return since, disable

    async def queue_test(self, actor: Actor, endpoint_id: int) -> str:
        """Queue a `webhook.test` event to the endpoint; returns its delivery id (the
        `webhook-id` the receiver will see)."""
        self.admins.require(actor, "manage webhooks")
        endpoint = await self.get(endpoint_id)
        if endpoint.disabled_reason is not None:
            raise Conflict(
                f"Webhook #{endpoint.id} is disabled ({endpoint.disabled_reason}). Enable it "
                "first: `strikebot webhooks enable`."
            )
        now = self.clock()
        event = events.ping_event(self.campaign, now, f"Test from {actor.id}")
        rows = plan_events(event, [endpoint.subscription], now, key=f"test:{secrets.token_hex(8)}")
        async with self.store.write() as tx:
            await tx.enqueue(rows, now)
            await tx.audit(
                now,
                actor.id,
                "webhook.test",
                f"subscription:{endpoint.id}",
                None,
                {"delivery": rows[0].id},
            )
        return rows[0].id


def summary(endpoint: WebhookEndpoint) -> dict[str, Any]:
    """An endpoint for listings (CLI, admin API): never its secret. `state` is ok, failing
    (since `failing_since`), disabled (`disabled_reason`) or removed."""
    sub = endpoint.subscription
    state = "ok"
    if not endpoint.active:
        state = "removed"
    elif endpoint.disabled_reason is not None:
        state = "disabled"
    elif endpoint.failing_since is not None:
        state = "failing"
    return {
        "id": endpoint.id,
        "url": endpoint.url,
        "description": endpoint.description,
        "language": sub.language,
        "briefing_time": None if sub.briefing_time is None else sub.briefing_time.strftime("%H:%M"),
        "timezone": sub.timezone,
        "state": state,
        "disabled_reason": endpoint.disabled_reason,
        "failing_since": endpoint.failing_since,
        "last_error": endpoint.last_error,
        "last_success_at": endpoint.last_success_at,
        "created_at": endpoint.created_at,
        "created_by": endpoint.created_by,
    }


def _audit(endpoint: WebhookEndpoint) -> dict[str, object]:
    """What the audit log records of an endpoint: never its secret."""
    return {
        "url": endpoint.url,
        "description": endpoint.description,
        "language": endpoint.subscription.language,
        "briefing_time": endpoint.subscription.briefing_time,
        "disabled": endpoint.disabled_reason,
    }
