"""An `OutboundMessage` as a push message's payload: the JSON the page's service worker
shows as a notification (`adapters/web/static/sw.js`). Pure, no I/O.

    payload(message) -> {"title": "URGENT: The strike is on", "body": "Picket lines...",
                         "url": "https://strike.example.org/es/updates/7", "lang": "es",
                         "tag": "update-7"}

A push service takes 4096 bytes of encrypted payload (RFC 8291 adds 86 with aes128gcm's
header and padding); the body is cut at a word so the JSON stays under `PAYLOAD_MAX`.
"""

from __future__ import annotations

import json

from bot.ports import MessageKind, OutboundMessage, Urgency, fit, i18n

PAYLOAD_MAX = 3000  # bytes of JSON: room for the encryption's overhead below 4096
TITLE_MAX = 120
BODY_MAX = 600


def title(message: OutboundMessage) -> str:
    text = " ".join(message.title.split())
    if message.kind is MessageKind.UPDATE and message.urgency is Urgency.URGENT:
        text = f"{i18n.text(message.language, 'webpush.urgent')}: {text}"
    return fit(text, TITLE_MAX, None, message.language)


def payload(message: OutboundMessage, *, sender: str) -> bytes:
    lines = [message.body.strip()] if message.body.strip() else []
    if not message.retracted:
        lines += [f"{f.name}: {f.value}" for f in message.fields[:2] if f.value.strip()]
    body = fit("\n".join(lines), BODY_MAX, None, message.language)
    url = message.url or (message.links[0].url if message.links else "")
    data = {
        "title": title(message),
        "body": body,
        "url": url,
        "lang": message.language,
        "tag": url or str(message.kind),
        "sender": sender,
    }
    encoded = json.dumps(data, ensure_ascii=False).encode()
    while len(encoded) > PAYLOAD_MAX and data["body"]:
        data["body"] = fit(str(data["body"]), len(str(data["body"])) // 2, None, message.language)
        encoded = json.dumps(data, ensure_ascii=False).encode()
    return encoded
