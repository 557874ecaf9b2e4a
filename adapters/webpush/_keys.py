"""The VAPID key pair (RFC 8292): read from the setting, or made for a new campaign."""

from __future__ import annotations

import base64

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from py_vapid import Vapid, Vapid01


class BadKey(ValueError):
    """WEBPUSH_VAPID_PRIVATE_KEY is not a P-256 private key."""


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def load(text: str) -> Vapid01:
    """The key from WEBPUSH_VAPID_PRIVATE_KEY: base64url (raw 32 bytes or DER) or PEM."""
    try:
        if "-----BEGIN" in text:
            return Vapid.from_pem(text.strip().encode())
        return Vapid.from_string(text.strip())
    except Exception as exc:  # py_vapid raises what cryptography and base64 raise
        raise BadKey(
            "WEBPUSH_VAPID_PRIVATE_KEY is not a P-256 private key; make one with "
            f"`strikebot webpush keys` ({type(exc).__name__})"
        ) from None


def public_key(vapid: Vapid01) -> str:
    """The application server key a browser subscribes with: the public key as an
    uncompressed point, base64url."""
    point = vapid.public_key.public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )
    return b64url(point)


def new_private_key() -> str:
    """A new key, as WEBPUSH_VAPID_PRIVATE_KEY takes it (base64url of the raw 32 bytes)."""
    key = ec.generate_private_key(ec.SECP256R1())
    return b64url(key.private_numbers().private_value.to_bytes(32, "big"))
