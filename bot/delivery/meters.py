"""What the dispatcher counts: a run's tallies (`DrainStats`), the Prometheus counters and
queue gauge, and the timed round trips that tell when an in-flight setting caps a rate."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from bot.metrics import Metrics
from bot.models import Platform
from bot.plugins.outbound import Pacing

log = logging.getLogger("strikebot.dispatcher")

# A platform's sends are timed (round trip, averaged) and, after this many, compared with
# what its places in flight allow: a setting that caps the rate is said once in the log.
ROUND_TRIPS_BEFORE_VERDICT = 200


@dataclass(slots=True)
class DrainStats:
    """What one `drain()` (or one `run()`) did."""

    claimed: int = 0
    sent: int = 0
    retried: int = 0
    dead: int = 0
    cancelled: int = 0
    postponed: int = 0
    found: int = 0  # copies in doubt found already posted, recorded instead of sent again


class Meter:
    """The dispatcher's metrics and its verdict on in-flight settings, per platform."""

    def __init__(
        self,
        platforms: list[Platform],
        pacing: Callable[[Platform], Pacing],
        metrics: Metrics | None,
    ) -> None:
        self.platforms = platforms
        self.pacing = pacing
        self.metrics = metrics
        self.stats = DrainStats()
        self._counters: dict[tuple[Platform, str], Any] = {}
        self._round_trips: dict[Platform, tuple[int, float]] = {}  # sends timed, mean seconds
        self._capped_said: set[Platform] = set()

    def count(self, platform: Platform, outcome: Literal["sent", "retried", "dead"]) -> None:
        """One row sent, retried or dead: in `stats` and the deliveries counter."""
        setattr(self.stats, outcome, getattr(self.stats, outcome) + 1)
        if self.metrics is None:
            return
        # The labelled child is looked up once per (platform, outcome), not once per send.
        child = self._counters.get((platform, outcome))
        if child is None:
            child = self.metrics.deliveries.labels(platform=str(platform), outcome=outcome)
            self._counters[(platform, outcome)] = child
        child.inc()

    def record_depth(self, counts: Mapping[str, int]) -> None:
        if self.metrics is None:
            return
        for platform in {*map(str, self.platforms), *counts}:
            self.metrics.queue_depth.labels(platform=platform).set(counts.get(platform, 0))

    def say_caps(self) -> list[str]:
        """Log, for each platform with an in-flight setting, when its places in flight keep
        it below its configured rate unless every send is answered quickly (the round trip
        they allow); returns the lines."""
        lines = []
        for platform in sorted(self.platforms):
            pacing = self.pacing(platform)
            allowed = pacing.max_in_flight / pacing.global_per_second
            if allowed >= 0.25 or not pacing.in_flight_setting:
                continue  # quick enough, or nothing an operator could raise (the console)
            setting = f" ({pacing.in_flight_setting})"
            lines.append(
                f"{platform}: {pacing.max_in_flight} sends in flight{setting} reach "
                f"{pacing.global_per_second:g} a second only while each is answered within "
                f"{allowed * 1000:.0f} ms; raise it if the provider answers slower"
            )
        for line in lines:
            log.info("%s", line)
        return lines

    def timed(self, platform: Platform, seconds: float) -> None:
        """One send's round trip; once enough are timed, say whether the places in flight
        cap the platform's rate (once per run)."""
        n, mean = self._round_trips.get(platform, (0, 0.0))
        n += 1
        mean += (seconds - mean) / min(n, 100)
        self._round_trips[platform] = (n, mean)
        if n < ROUND_TRIPS_BEFORE_VERDICT or platform in self._capped_said or mean <= 0:
            return
        self._capped_said.add(platform)
        pacing = self.pacing(platform)
        reach = pacing.max_in_flight / mean
        if reach < 0.95 * pacing.global_per_second:
            setting = f" ({pacing.in_flight_setting})" if pacing.in_flight_setting else ""
            log.warning(
                "%s sends at most %.0f a second, below its configured %g: %d in flight%s "
                "at a %.0f ms round trip; raise the places in flight to reach the rate",
                platform,
                reach,
                pacing.global_per_second,
                pacing.max_in_flight,
                setting,
                mean * 1000,
            )
