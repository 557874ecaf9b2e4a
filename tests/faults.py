"""The fault matrix: each delivery plugin × each way its platform fails, and what strikebot
does about it. `tests/test_fault_matrix.py` checks every cell against the plugin's fake;
`docs/faults.md` is this table rendered (`python -m tests.faults > docs/faults.md`), and a
test keeps it current.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Shape(StrEnum):
    RATE_LIMITED = "429, Retry-After 2 s, this route"
    RATE_LIMITED_LONG = "429, Retry-After 30 s, this route"
    GLOBAL_RATE_LIMITED = "429, Retry-After 2 s, global"
    GLOBAL_RATE_LIMITED_LONG = "429, Retry-After 30 s, global"
    JSON_5XX = "503, JSON body"
    HTML_5XX = "502, HTML body"
    TEXT_5XX = "503, plain-text body"
    TRUNCATED_JSON = "200, JSON cut short"
    ERROR_200 = "200 with an error in the body"
    TRANSIENT_REPLY = "451, SMTP try-later reply"
    HANG = "no answer (timeout)"
    RESET = "connection reset, no answer"
    ACCEPTED_LOST = "accepted, answer lost"  # done (a 201, a 250), then the connection drops


class How(StrEnum):
    """What happens to the copy whose send met the fault."""

    QUEUED = "queued again"  # the dispatcher records the error and retries later
    PAUSED = "channel paused for Retry-After"  # ...and holds that channel's sends till then
    PAUSED_ALL = "platform paused for Retry-After"  # ...and every channel of the platform's
    LIBRARY = "retried by the client library"  # the platform's own library retried, at once


@dataclass(frozen=True, slots=True)
class Cell:
    how: How
    error: str = ""  # what the dispatcher records (a regular expression); "" for LIBRARY
    # What reaches the person in the end: 1 (delivered once) unless a remaining window is
    # stated (e-mail's lost 250: a second copy with the same Message-ID).
    copies: int = 1
    then: str = "delivered once"

    def describe(self) -> str:
        said = f" (recorded error matches `{self.error}`)" if self.error else ""
        return f"{self.how}{said}; then {self.then}".replace("|", "\\|")


NOT_APPLICABLE = {
    "console": "prints to the terminal: no remote service to fail",
}

_SMTP_ONLY = "an SMTP reply, not HTTP"
_NO_GLOBAL = "its 429s carry no global flag"
_HTTP_ONLY = "SMTP has no HTTP status or body; a try-later reply is its equivalent"

# Shapes a platform does not have (its protocol has no such answer).
NOT_THERE: dict[str, dict[Shape, str]] = {
    "discord": {
        Shape.ERROR_200: "Discord answers errors with their status code",
        Shape.TRANSIENT_REPLY: _SMTP_ONLY,
    },
    "slack": {
        Shape.GLOBAL_RATE_LIMITED: "every 429 holds the method for the whole workspace "
        "(see the 429 rows)",
        Shape.GLOBAL_RATE_LIMITED_LONG: "as above",
        Shape.TRANSIENT_REPLY: _SMTP_ONLY,
    },
    "telegram": {
        Shape.GLOBAL_RATE_LIMITED: _NO_GLOBAL,
        Shape.GLOBAL_RATE_LIMITED_LONG: _NO_GLOBAL,
        Shape.TRANSIENT_REPLY: _SMTP_ONLY,
    },
    "email": {
        shape: _HTTP_ONLY
        for shape in Shape
        if shape not in (Shape.TRANSIENT_REPLY, Shape.HANG, Shape.RESET)
    },
    "sms": {
        Shape.GLOBAL_RATE_LIMITED: "Twilio's 429 (20429) is for the whole account: see the "
        "429 rows",
        Shape.GLOBAL_RATE_LIMITED_LONG: "as above",
        Shape.ERROR_200: "Twilio answers errors with their status code",
        Shape.TRANSIENT_REPLY: _SMTP_ONLY,
    },
    "webpush": {
        Shape.GLOBAL_RATE_LIMITED: "a push service's 429 is for the subscriptions it holds, "
        "not a global limit",
        Shape.GLOBAL_RATE_LIMITED_LONG: "as above",
        Shape.TRUNCATED_JSON: "a push service answers 201 with no body to read",
        Shape.ERROR_200: "push services answer errors with their status code",
        Shape.TRANSIENT_REPLY: _SMTP_ONLY,
    },
    "whatsapp": {
        Shape.GLOBAL_RATE_LIMITED: "Twilio's 429 (20429) is for the whole account: see the "
        "429 rows",
        Shape.GLOBAL_RATE_LIMITED_LONG: "as above",
        Shape.ERROR_200: "Twilio answers errors with their status code; 63016 (outside the "
        "24-hour window) comes in the status callback, and the copy goes again as the "
        "approved template (tests/test_whatsapp.py)",
        Shape.TRANSIENT_REPLY: _SMTP_ONLY,
    },
    "webhooks": {
        Shape.GLOBAL_RATE_LIMITED: "a receiver's 429 is its own",
        Shape.GLOBAL_RATE_LIMITED_LONG: "as above",
        Shape.TRUNCATED_JSON: "a receiver's 2xx is accepted whatever its body",
        Shape.ERROR_200: "as above",
        Shape.TRANSIENT_REPLY: _SMTP_ONLY,
    },
}

_MAIL = r"^the mail server at 127\.0\.0\.1:\d+ "
_WEBHOOK = r"webhook #\d+ \(http://127\.0\.0\.1:\d+/hooks/strike\): "

EXPECTED: dict[str, dict[Shape, Cell]] = {
    "discord": {
        # discord.py sleeps out a short per-route 429 inside the request and sends again.
        Shape.RATE_LIMITED: Cell(How.LIBRARY),
        Shape.RATE_LIMITED_LONG: Cell(How.PAUSED, r"^Discord rate-limited Discord channel \d+ "
                                      r"for 30\.0s\.$"),
        Shape.GLOBAL_RATE_LIMITED: Cell(How.PAUSED_ALL, r"\(global 429\) for 2s"),
        Shape.GLOBAL_RATE_LIMITED_LONG: Cell(How.PAUSED_ALL, r"\(global 429\) for 30s"),
        Shape.JSON_5XX: Cell(How.QUEUED, r"^Discord had a server error \(503\) for Discord "
                             r"channel \d+; it will be retried\.$"),
        # discord.py retries a 502 itself, after a second.
        Shape.HTML_5XX: Cell(How.LIBRARY),
        Shape.TEXT_5XX: Cell(How.QUEUED, r"^Discord had a server error \(503\)"),
        Shape.TRUNCATED_JSON: Cell(How.QUEUED, r"^Discord's answer for Discord channel \d+ "
                                   r"could not be read \(JSONDecodeError\); it will be retried "
                                   r"\(the nonce prevents a duplicate\)\.$"),
        Shape.HANG: Cell(How.QUEUED, r"^Discord did not answer within 0\.5s .*the nonce "
                         r"prevents a duplicate"),
        Shape.RESET: Cell(How.QUEUED, r"^The connection to Discord failed for Discord channel "
                          r"\d+ \(ServerDisconnectedError\); it will be retried\.$"),
        # The message is posted and its answer held: the nonce returns it on the retry.
        Shape.ACCEPTED_LOST: Cell(How.QUEUED, r"^Discord did not answer within \d+s .*the "
                                  r"nonce prevents a duplicate"),
    },
    "slack": {
        Shape.RATE_LIMITED: Cell(How.PAUSED_ALL, r"^Slack rate-limited chat\.postMessage; "
                                 r"retrying after 2s$"),
        Shape.RATE_LIMITED_LONG: Cell(How.PAUSED_ALL, r"retrying after 30s$"),
        Shape.JSON_5XX: Cell(How.QUEUED, r"^Slack chat\.postMessage failed \(HTTP 503, no "
                             r"error code\); will retry$"),
        Shape.HTML_5XX: Cell(How.QUEUED, r"\(HTTP 502, no error code\); will retry$"),
        Shape.TEXT_5XX: Cell(How.QUEUED, r"\(HTTP 503, no JSON body\); will retry$"),
        Shape.TRUNCATED_JSON: Cell(How.QUEUED, r"\(HTTP 200, no JSON body\); will retry$"),
        Shape.ERROR_200: Cell(How.QUEUED, r"^Slack chat\.postMessage failed \(internal_error\); "
                              r"will retry$"),
        Shape.HANG: Cell(How.QUEUED, r"^Slack chat\.postMessage to C0FAULTS failed "
                         r"\(TimeoutError\); will retry$"),
        # slack-sdk retries a dropped connection once by itself.
        Shape.RESET: Cell(How.LIBRARY),
        # ...which, when Slack had posted it, posts it again: chat.postMessage takes no key,
        # and the library's retry comes before the dispatcher could look in the history.
        Shape.ACCEPTED_LOST: Cell(How.LIBRARY, copies=2, then="posted twice (a gap: "
                                  "slack-sdk's own retry of a dropped connection)"),
    },
    "telegram": {
        Shape.RATE_LIMITED: Cell(How.PAUSED, r"^Telegram asked to slow down in -\d+; "
                                 r"retrying after 2 s$"),
        Shape.RATE_LIMITED_LONG: Cell(How.PAUSED, r"retrying after 30 s$"),
        Shape.JSON_5XX: Cell(How.QUEUED, r"failed \(Service Unavailable \(503\)\); will "
                             r"retry$"),
        Shape.HTML_5XX: Cell(How.QUEUED, r"failed \(Bad Gateway \(502\)\. Parsing the "
                             r"server response b' 502 Bad Gateway nginx ' failed\)"),
        Shape.TEXT_5XX: Cell(How.QUEUED, r"\(Service Unavailable \(503\)\. Parsing the "
                             r"server response b'upstream connect error"),
        Shape.TRUNCATED_JSON: Cell(How.QUEUED, r"failed \(Invalid server response\); will "
                                   r"retry$"),
        Shape.ERROR_200: Cell(How.QUEUED, r"got an answer it could not read \(KeyError: "
                              r"'result'\), perhaps from a proxy; will retry$"),
        Shape.HANG: Cell(How.QUEUED, r"failed \(Timed out\); will retry$"),
        Shape.RESET: Cell(How.QUEUED, r"Server disconnected without sending a response"),
        # sendMessage takes no key and a bot cannot read a group's history: no way to know.
        Shape.ACCEPTED_LOST: Cell(How.QUEUED, r"Server disconnected without sending a "
                                  r"response", copies=2, then="posted twice (a gap: the Bot "
                                  "API has no idempotency key and no history to look in)"),
    },
    "email": {
        Shape.TRANSIENT_REPLY: Cell(How.QUEUED, r"^the mail server answered 451: 4\.3\.0 "
                                    r"Temporary local problem, try again later$"),
        Shape.HANG: Cell(How.QUEUED, _MAIL + r"did not answer within 0\.5 s after the message "
                         r"went out: it may have it; sent again later with the same "
                         r"Message-ID$"),
        Shape.RESET: Cell(How.QUEUED, _MAIL + r"dropped the connection "
                          r"\(SMTPServerDisconnected\) after the message went out"),
        # The window SMTP leaves (docs/faults.md, "E-mail's remaining window"): the server
        # stored it, its 250 was lost, and nothing in SMTP can ask whether it has it.
        Shape.ACCEPTED_LOST: Cell(How.QUEUED, _MAIL + r"dropped the connection "
                                  r"\(SMTPServerDisconnected\) after the message went out: "
                                  r"it may have it", copies=2, then="delivered twice, both "
                                  "with one Message-ID (the remaining window)"),
    },
    "sms": {
        Shape.RATE_LIMITED: Cell(How.PAUSED_ALL, r"^Twilio answered 429 \(error 20429\): "
                                 r"Too Many Requests$"),
        Shape.RATE_LIMITED_LONG: Cell(How.PAUSED_ALL, r"^Twilio answered 429 \(error 20429\)"),
        Shape.JSON_5XX: Cell(How.QUEUED, r"^Twilio answered 500 \(error 20500\): Internal "
                             r"Server Error$"),
        Shape.HTML_5XX: Cell(How.QUEUED, r"^Twilio answered 502: 502 Bad Gateway$"),
        Shape.TEXT_5XX: Cell(How.QUEUED, r"^Twilio answered 503: upstream connect error$"),
        # Created, the answer cut short: found at Twilio by its text, not sent again.
        Shape.TRUNCATED_JSON: Cell(How.QUEUED, r"^Twilio answered 201 without a message SID; "
                                   r"it may have taken the text, which is looked for before "
                                   r"it is sent again$"),
        Shape.HANG: Cell(How.QUEUED, r"^Twilio did not answer: TimeoutError; it may have"),
        Shape.RESET: Cell(How.QUEUED, r"^Twilio did not answer: ServerDisconnectedError; it "
                          r"may have"),
        Shape.ACCEPTED_LOST: Cell(How.QUEUED, r"^Twilio did not answer: "
                                  r"ServerDisconnectedError; it may have taken the text, "
                                  r"which is looked for before it is sent again$"),
    },
    "webpush": {
        Shape.RATE_LIMITED: Cell(How.PAUSED, r"^127\.0\.0\.1:\d+ answered 429: slow down$"),
        Shape.RATE_LIMITED_LONG: Cell(How.PAUSED, r"answered 429: slow down$"),
        Shape.JSON_5XX: Cell(How.QUEUED, r"^127\.0\.0\.1:\d+ answered 500$"),
        Shape.HTML_5XX: Cell(How.QUEUED, r"^127\.0\.0\.1:\d+ answered 502$"),
        Shape.TEXT_5XX: Cell(How.QUEUED, r"^127\.0\.0\.1:\d+ answered 503$"),
        Shape.HANG: Cell(How.QUEUED, r"^the push service did not answer: TimeoutError$"),
        Shape.RESET: Cell(How.QUEUED, r"^the push service did not answer: "
                          r"ServerDisconnectedError$"),
        # A push service keeps no key of ours to look a copy up by: the second copy goes,
        # with the same Topic (a copy still held is replaced) and notification tag (the
        # browser shows one).
        Shape.ACCEPTED_LOST: Cell(How.QUEUED, r"^the push service did not answer: "
                                  r"ServerDisconnectedError$", copies=2,
                                  then="pushed twice, shown once (same Topic and tag)"),
    },
    "whatsapp": {
        Shape.RATE_LIMITED: Cell(How.PAUSED_ALL, r"^Twilio answered 429 \(error 20429\): "
                                 r"Too Many Requests$"),
        Shape.RATE_LIMITED_LONG: Cell(How.PAUSED_ALL, r"^Twilio answered 429 \(error 20429\)"),
        Shape.JSON_5XX: Cell(How.QUEUED, r"^Twilio answered 500 \(error 20500\): Internal "
                             r"Server Error$"),
        Shape.HTML_5XX: Cell(How.QUEUED, r"^Twilio answered 502: 502 Bad Gateway$"),
        Shape.TEXT_5XX: Cell(How.QUEUED, r"^Twilio answered 503: upstream connect error$"),
        # Created, the answer cut short or lost: found at Twilio by its words (free-form) or
        # its template's values, not sent again.
        Shape.TRUNCATED_JSON: Cell(How.QUEUED, r"^Twilio answered 201 without a message SID; "
                                   r"it may have taken the message, which is looked for "
                                   r"before it is sent again$"),
        Shape.HANG: Cell(How.QUEUED, r"^Twilio did not answer: TimeoutError; it may have"),
        Shape.RESET: Cell(How.QUEUED, r"^Twilio did not answer: ServerDisconnectedError; it "
                          r"may have"),
        Shape.ACCEPTED_LOST: Cell(How.QUEUED, r"^Twilio did not answer: "
                                  r"ServerDisconnectedError; it may have taken the message, "
                                  r"which is looked for before it is sent again$"),
    },
    # A receiver's failures follow the webhooks schedule (docs/webhooks.md): each is a
    # Retry-After for that endpoint, and the retry carries the same webhook-id.
    "webhooks": {
        Shape.RATE_LIMITED: Cell(How.PAUSED, _WEBHOOK + r"HTTP 429: slow down$"),
        Shape.RATE_LIMITED_LONG: Cell(How.PAUSED, _WEBHOOK + r"HTTP 429: slow down$"),
        Shape.JSON_5XX: Cell(How.PAUSED, _WEBHOOK + r'HTTP 503: \{"message": "upstream '),
        Shape.HTML_5XX: Cell(How.PAUSED, _WEBHOOK + r"HTTP 502: 502 Bad Gateway nginx$"),
        Shape.TEXT_5XX: Cell(How.PAUSED, _WEBHOOK + r"HTTP 503: upstream connect error"),
        Shape.HANG: Cell(How.PAUSED, _WEBHOOK + r"no answer within 0\.5 s$"),
        Shape.RESET: Cell(How.PAUSED, _WEBHOOK + r"ServerDisconnectedError"),
        # Taken and the answer lost: the retry's webhook-id is the same; the receiver keeps one.
        Shape.ACCEPTED_LOST: Cell(How.PAUSED, _WEBHOOK + r"ServerDisconnectedError"),
    },
}  # fmt: skip


# Answers of a platform's own that end a copy some other way than delivered: each tested in
# the plugin's own tests, and listed under its table.
OWN_ROWS: dict[str, list[tuple[str, str]]] = {
    "webpush": [
        ("404 or 410, subscription gone", "the person is forgotten at once; nothing more is "
         "sent to them; admins are not told (tests/test_webpush.py)"),
        ("413, payload too large", "that copy stops and admins are told (payloads are cut "
         "below 4096 bytes, so it is a bug to report)"),
    ],
    "whatsapp": [
        ("63016 in the status callback, free-form", "the 24-hour window had closed: the copy "
         "is queued again and goes as the approved template, once (tests/test_whatsapp.py)"),
        ("template missing, unknown (21655) or not approved", "that copy stops and admins "
         "are told which template and how to fix it; `strikebot deliveries retry` sends it"),
    ],
}  # fmt: skip


def render() -> str:
    shapes = list(Shape)
    lines = [
        "# Faults: what each platform's failures do",
        "",
        "<!-- Generated by `python -m tests.faults > docs/faults.md` from tests/faults.py;",
        "     tests/test_fault_matrix.py checks every cell against the platform's fake. -->",
        "",
        "Each delivery plugin is run against its fake platform on 127.0.0.1, which answers one",
        "send with each failure shape below. In every cell the copy ends up delivered exactly",
        "once (a webhook receiver sees one `webhook-id`) unless the cell says otherwise, the",
        "error recorded meanwhile says what happened, and nothing crashes; the cell says how it",
        "got there.",
        "",
        "*Accepted, answer lost* is the worst shape: the platform did the work (Twilio's 201,",
        "the SMTP server's 250, Discord's message) and the connection dropped before the answer",
        "arrived. A send whose answer is lost after it went out is *in doubt*: before it is",
        "sent again, a plugin that can look for its copy does (`bot.ports.FindsSent`):",
        "Discord by its nonce and the marker in its link, Slack by its metadata, texts and",
        "WhatsApp messages at Twilio by their words among the messages to that number",
        "(`adapters/twilio/_client.py`).",
        "A webhook's retry carries the same `webhook-id`, which receivers keep once.",
        "",
        "On the platforms that change a copy in place (Discord, Slack, Telegram) the edit that",
        "retracts a copy meets every one of its platform's shapes too: the retraction is",
        "retried until the copy reads as retracted, in place, one message.",
        "",
    ]
    for platform, cells in EXPECTED.items():
        lines += [f"## {platform}", "", "| failure | what happens |", "|---|---|"]
        for shape in shapes:
            if shape in cells:
                lines.append(f"| {shape} | {cells[shape].describe()} |")
            elif shape in NOT_THERE.get(platform, {}):
                lines.append(f"| {shape} | not applicable: {NOT_THERE[platform][shape]} |")
        for answer, what in OWN_ROWS.get(platform, []):
            lines.append(f"| {answer} | {what} |")
        lines.append("")
    for platform, why in NOT_APPLICABLE.items():
        lines += [f"## {platform}", "", f"Not in the matrix: {why}.", ""]
    lines += WINDOWS
    return "\n".join(lines)


# What remains where no cell can say "delivered once" (measured by the cells above, and for
# texts by tests/test_sms.py).
WINDOWS = """## E-mail's remaining window

SMTP has no idempotency key and no way to ask a server whether it holds a message. What
strikebot does to narrow the window:

- Every copy of a delivery carries the same `Message-ID: <delivery id@sender's domain>`,
  on every retry: a mailbox that keeps one message per Message-ID (Gmail does) shows one.
- A kept connection that the server closed while idle fails before the message goes out
  (at MAIL FROM or RCPT TO): it is tried again at once on a new connection, not counted as
  in doubt, and never sent twice.
- Only a failure after the message itself went out (after DATA) is in doubt, and says so:
  "... after the message went out: it may have it; sent again later with the same
  Message-ID".

What remains, exactly: the server stored the message and its `250` did not reach strikebot
(the connection dropped, or no answer within the adapter's timeout, 30 s: RFC 5321 asks a
client to wait up to 10 minutes for it, which the dispatcher's own 30 s `send_timeout` does
not allow), or strikebot was killed between the `250` and the commit recording it (the
dispatcher gathers those commits for up to a second).
Then the message is sent again, and the person's mailbox receives a second copy with the
same Message-ID. The cell *accepted, answer lost* above measures it: two copies, one
Message-ID, nothing lost. A provider with an HTTP API and an idempotency key would close it;
strikebot speaks SMTP only.

## Texts

A text whose answer was lost after Twilio created it is looked for at Twilio before it is
sent again, and recorded as sent when found: delivered once (the *accepted, answer lost*
and *200, JSON cut short* rows). Twilio's Message resource carries none of strikebot's keys
(the delivery id is in the status callback URL, which Twilio does not return), so the text's
words are the marker, compared with the spacing and the characters Smart Encoding swaps
folded: two deliveries with the very same words to one number in the same span would be
taken for one. When Twilio's list does not answer, the text waits and is looked for again;
it is never sent blind.
""".splitlines()


if __name__ == "__main__":
    print(render(), end="")
