"""Wrong admin tokens, counted per client: after `LIMIT` wrong ones in `WINDOW`, that client
gets 429 for the rest of the window, right token or not (so guessing stops there), and the
log says so once a minute per network, with a count, never a line per attempt.

    attempts = AdminAttempts()
    wait = attempts.waiting(client, now)     # seconds to wait, or 0.0 to go on
    attempts.failed(client, now)             # a wrong or missing token

Every wrong token is also counted in `strikebot_http_refused_total{reason="admin_token"}`
(and each 429 under `admin_limited`). The token itself is 32+ random bytes: guessing it is
hopeless anyway; this keeps a guesser from costing the server, or the log, anything.
"""

from __future__ import annotations

import logging
from collections import deque
from dataclasses import dataclass, field

from bot.ports import Metrics, network_of

log = logging.getLogger("strikebot.web")

LIMIT = 10  # wrong tokens from one client...
WINDOW = 600.0  # ...in this many seconds, then it waits
REPORT_EVERY = 60.0  # seconds between log lines about one network
MAX_CLIENTS = 10_000  # clients remembered at once (the oldest are forgotten first)


@dataclass(slots=True)
class AdminAttempts:
    """Wrong admin tokens per client, in memory (one instance's own count)."""

    limit: int = LIMIT
    window: float = WINDOW
    _failures: dict[str, deque[float]] = field(default_factory=dict)
    _unreported: dict[str, int] = field(default_factory=dict)
    _reported_at: dict[str, float] = field(default_factory=dict)

    def waiting(self, client: str, now: float) -> float:
        """How many seconds `client` must wait before trying again (0.0: it may try)."""
        failures = self._recent(client, now)
        if len(failures) < self.limit:
            return 0.0
        return max(failures[0] + self.window - now, 1.0)

    def failed(self, client: str, now: float, metrics: Metrics | None = None) -> None:
        """Count a wrong or missing token from `client`; log about its network at most once
        per `REPORT_EVERY`."""
        if metrics is not None:
            metrics.http_refused.inc("admin_token")
        failures = self._failures.setdefault(client, deque())
        failures.append(now)
        if len(self._failures) > MAX_CLIENTS:
            for old in list(self._failures)[: MAX_CLIENTS // 10]:
                del self._failures[old]
        network = network_of(client)
        self._unreported[network] = self._unreported.get(network, 0) + 1
        if now - self._reported_at.get(network, float("-inf")) >= REPORT_EVERY:
            count = self._unreported.pop(network)
            self._reported_at[network] = now
            if len(self._reported_at) > MAX_CLIENTS:
                self._reported_at.clear()
            log.warning(
                "%d wrong admin token%s from %s since the last report; a client waits %.0f "
                "min after %d",
                count,
                "" if count == 1 else "s",
                network,
                self.window / 60,
                self.limit,
            )

    def _recent(self, client: str, now: float) -> deque[float]:
        failures = self._failures.get(client)
        if failures is None:
            return deque()
        while failures and failures[0] <= now - self.window:
            failures.popleft()
        if not failures:
            del self._failures[client]
        return failures
