"""`strikebot webpush keys`: a new VAPID key pair for browser notifications."""

from __future__ import annotations

import argparse

from bot.ports import SubParsers, out


def register(sub: SubParsers[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("webpush", help="browser notifications (Web Push)")
    commands = parser.add_subparsers(dest="webpush_command", required=True)
    keys = commands.add_parser("keys", help="print a new VAPID key pair to set")
    keys.set_defaults(handler=handle_keys)


async def handle_keys(args: argparse.Namespace) -> int:
    from . import _keys as keys

    private = keys.new_private_key()
    public = keys.public_key(keys.load(private))
    out.print("# Keep the private key secret: a new one ends every browser's subscription.")
    out.print(f"WEBPUSH_VAPID_PRIVATE_KEY={private}")
    out.print("WEBPUSH_VAPID_SUBJECT=mailto:comms@example.org")
    out.print(f"# Browsers will subscribe with the public key {public}")
    return 0
