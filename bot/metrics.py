"""Prometheus metrics, one registry per process (served at /metrics by the web adapter).

Modules record through these objects; tests read them back with `registry.get_sample_value`.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram


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
        self.http_requests = Counter(
            "strikebot_http_requests_total",
            "Web requests by route and status",
            ["route", "status"],
            registry=r,
        )
