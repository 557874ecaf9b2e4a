"""Reading a failed Slack call safely, whatever came back.

slack-sdk's `SlackApiError.response` is usually a `SlackResponse` whose `data` is a dict,
but not always: a body that is not JSON (a proxy's plain-text 503, an HTML error page)
gives `data` as a str; JSON cut short raises `SlackApiError` carrying aiohttp's raw
response, which has `status` instead of `status_code` and no `data`; and a 200 whose body
is not JSON makes slack-sdk itself fail while validating it, with an `AttributeError`.
Nothing here assumes a dict, so an error path never raises an error of its own.
"""

from __future__ import annotations

import aiohttp
from slack_sdk.errors import SlackApiError, SlackClientError

# What one Web API call may raise when Slack, or something in between, misbehaves: its own
# errors, timeouts and broken connections, and what slack-sdk raises on a 200 whose body is
# not JSON (it then calls `.get` on a str).
CALL_FAILURES: tuple[type[BaseException], ...] = (
    SlackClientError,
    TimeoutError,
    OSError,
    aiohttp.ClientError,
    AttributeError,
    TypeError,
    ValueError,
)


def error_code(exc: BaseException) -> str:
    """Slack's `error` field ("channel_not_found"...), or "" when the answer had none."""
    value = field(exc, "error")
    return value if isinstance(value, str) else ""


def field(exc: BaseException, key: str) -> object:
    """`key` from the JSON Slack answered with, or None when there was no JSON object."""
    data = getattr(getattr(exc, "response", None), "data", None)
    return data.get(key) if isinstance(data, dict) else None


def status_of(exc: BaseException) -> int:
    """The HTTP status of the answer (0 when none arrived)."""
    response = getattr(exc, "response", None)
    for name in ("status_code", "status"):
        value = getattr(response, name, None)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return 0


def describe(exc: BaseException) -> str:
    """A few words for a log line: Slack's error code, else the HTTP status and what kind of
    body came back, else the exception's type. Never the body itself."""
    code = error_code(exc)
    if code:
        return code
    status = status_of(exc)
    if isinstance(exc, SlackApiError) and status:
        data = getattr(getattr(exc, "response", None), "data", None)
        body = "no JSON body" if not isinstance(data, dict) else "no error code"
        return f"HTTP {status}, {body}"
    if isinstance(exc, AttributeError | TypeError | ValueError):
        return f"an answer that is not Slack's JSON ({type(exc).__name__})"
    return type(exc).__name__
