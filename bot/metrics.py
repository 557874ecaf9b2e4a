"""Prometheus metrics, one registry per process (served at /metrics by the web adapter).

Modules record through these objects; tests read them back with `registry.get_sample_value`.
"""

from __future__ import annotations

from collections import Counter as Counts
from collections.abc import Iterator, Sequence

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector


class Tally(Collector):
    """A counter by labels kept as plain integers, read at each scrape: for counting on a hot
    path (every web request), where a `Counter` child's lock and checks cost more than the
    count. `inc(*labels)` with the label values in `labelnames`' order."""

    def __init__(
        self,
        name: str,
        documentation: str,
        labelnames: Sequence[str],
        registry: CollectorRegistry,
    ) -> None:
        self.name = name
        self.documentation = documentation
        self.labelnames = tuple(labelnames)
        self.counts: Counts[tuple[str, ...]] = Counts()
        registry.register(self)

    def inc(self, *labels: str) -> None:
        if len(labels) != len(self.labelnames):
            raise ValueError(f"{self.name} takes the labels {', '.join(self.labelnames)}")
        self.counts[labels] += 1

    def describe(self) -> Iterator[CounterMetricFamily]:
        yield CounterMetricFamily(self.name, self.documentation, labels=self.labelnames)

    def collect(self) -> Iterator[CounterMetricFamily]:
        family = CounterMetricFamily(self.name, self.documentation, labels=self.labelnames)
        for labels, value in list(self.counts.items()):
            family.add_metric(labels, value)
        yield family


class Metrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.deliveries = Counter(
            "strikebot_deliveries_total",
            "Delivery attempts by platform and outcome (sent, retried, dead)",
            ["platform", "outcome"],
            registry=r,
        )
        self.queue_depth = Gauge(
            "strikebot_outbox_pending", "Deliveries waiting in the outbox", ["platform"], registry=r
        )
        self.command_latency = Histogram(
            "strikebot_command_seconds",
            "Time to answer a slash command, by platform and command",
            ["platform", "command"],
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
            registry=r,
        )
        self.briefing_runs = Counter(
            "strikebot_briefing_runs_total",
            "Morning briefings by outcome (queued, skipped_late, duplicate)",
            ["outcome"],
            registry=r,
        )
        self.http_requests = Tally(
            "strikebot_http_requests_total",
            "Web requests by route and status",
            ["route", "status"],
            registry=r,
        )
        self.http_refused = Tally(
            "strikebot_http_refused_total",
            "Connections and requests the web server refused or cut, by reason "
            "(connections_full, client_full, evicted_idle, header_timeout, body_timeout, "
            "keepalive_requests, accept_failed, admin_token, admin_limited, signup_limit, "
            "form_token)",
            ["reason"],
            registry=r,
        )
        self.http_connections = Gauge(
            "strikebot_http_connections", "Connections open to the web server", registry=r
        )
