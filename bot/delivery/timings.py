"""How long the dispatcher holds a claim, waits, retries and looks again: one frozen set of
timings, production's by default (tests pass shorter ones)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Timings:
    """The dispatcher's timings, in seconds."""

    lease: float = 60.0  # a claim held without renewal
    retry_base: float = 1.0  # backoff: the first retry's ceiling, doubled each attempt
    retry_cap: float = 300.0  # backoff: the longest wait
    inline_retry_limit: float = 10.0  # retry waits up to this long happen in memory
    send_timeout: float = 30.0  # no answer by then: a transient failure, in doubt
    idle_recheck: float = 2.0  # the longest sleep, so other processes' rows are noticed
    update_state_ttl: float = 1.0  # how long POSTs trust their view of a retraction
    depth_every: float = 5.0  # between counts of the queue for the queue-depth gauge
    mark_window: float = 1.0  # SENT marks gather this long before one commit
    history_every: float = 3600.0  # between purges of old history
    election_seconds: float = 1.0  # between tries for a platform's lock
