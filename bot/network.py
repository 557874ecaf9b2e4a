"""Who is asking: a client's address behind the proxies the operator trusts, and the network
it belongs to.

    clients = Clients(parse_proxies(["10.0.0.5/32"]))
    clients.address(peer="10.0.0.5", forwarded_for="198.51.100.7, 10.0.0.5")  # "198.51.100.7"
    network_of("198.51.100.7")        # "198.51.100.0/24": what the sign-up limits count
    network_of("2001:db8:1:2::9")     # "2001:db8:1::/48"

`X-Forwarded-For` is believed only from a trusted proxy (`[server] trusted_proxies`, CIDRs, or
`STRIKEBOT_TRUSTED_PROXIES`), never by counting hops: a client that reaches the port directly
is its own address, whatever it writes in the header. Behind trusted proxies the client is
the right-most address in the header that is not itself a trusted proxy (each proxy appends
the address it saw; anything further left was written by the client and proves nothing).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

UNKNOWN = "unknown"


def parse_proxies(values: Iterable[str]) -> tuple[IPNetwork, ...]:
    """CIDRs (or single addresses) of trusted proxies; `ValueError` with what to write."""
    networks = []
    for value in values:
        text = value.strip()
        if not text:
            continue
        try:
            networks.append(ipaddress.ip_network(text, strict=False))
        except ValueError:
            raise ValueError(
                f"{text!r} is not an address or network; write the proxy's address as "
                "10.0.0.5/32 or its network as 10.0.0.0/24"
            ) from None
    return tuple(networks)


def ip_of(text: str | None) -> IPAddress | None:
    """The address in `text` (IPv4-mapped IPv6 as IPv4, zone and port-less), or None."""
    if not text:
        return None
    candidate = text.strip().strip('"')
    if candidate.startswith("["):  # [2001:db8::1]:443
        candidate = candidate[1:].split("]", 1)[0]
    elif candidate.count(":") == 1:  # 198.51.100.7:5000
        candidate = candidate.split(":", 1)[0]
    try:
        ip: IPAddress = ipaddress.ip_address(candidate.split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def network_of(address: str, *, v4: int = 24, v6: int = 48) -> str:
    """The network `address` belongs to for limits: its /24 (IPv4) or /48 (IPv6), where one
    household, office or hosting customer usually sits. An unreadable address is its own."""
    ip = ip_of(address)
    if ip is None:
        return address[:64] or UNKNOWN
    length = v4 if ip.version == 4 else v6
    return str(ipaddress.ip_network(f"{ip}/{length}", strict=False))


def connection_key(address: str) -> str:
    """Whose connection this is, for the per-client connection cap: the IPv4 address, or the
    IPv6 /64 (one host can hold a whole /64)."""
    ip = ip_of(address)
    if ip is None:
        return address[:64] or UNKNOWN
    if ip.version == 6:
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


@dataclass(frozen=True, slots=True)
class Clients:
    """The proxies whose `X-Forwarded-For` is believed; see the module's docstring."""

    trusted: tuple[IPNetwork, ...] = ()

    def is_trusted(self, address: str | None) -> bool:
        ip = ip_of(address)
        return ip is not None and any(ip in network for network in self.trusted)

    def address(self, peer: str | None, forwarded_for: str | None = None) -> str:
        """The client's address: `peer` itself unless it is a trusted proxy; then the
        right-most address in `forwarded_for` that is not a trusted proxy (the left-most one
        when all are)."""
        peer_ip = ip_of(peer)
        if peer_ip is None:
            return UNKNOWN
        if not forwarded_for or not self.is_trusted(peer):
            return str(peer_ip)
        hops = [part for part in forwarded_for.split(",") if part.strip()][-32:]
        client = str(peer_ip)
        for hop in reversed(hops):
            ip = ip_of(hop)
            if ip is None:
                break  # written by someone we do not trust: stop at the last good one
            client = str(ip)
            if not any(ip in network for network in self.trusted):
                break
        return client
