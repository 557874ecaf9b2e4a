"""`bot.metrics.Tally`: a counter by labels kept as plain integers, read at each scrape."""

from __future__ import annotations

import pytest
from prometheus_client import generate_latest

from bot.metrics import Metrics


def test_a_tally_reads_as_a_prometheus_counter() -> None:
    metrics = Metrics()
    tally = metrics.http_requests
    for _ in range(3):
        tally.inc("/", "200")
    tally.inc("unmatched", "404")
    registry = metrics.registry
    name = "strikebot_http_requests_total"
    assert registry.get_sample_value(name, {"route": "/", "status": "200"}) == 3
    assert registry.get_sample_value(name, {"route": "unmatched", "status": "404"}) == 1
    text = generate_latest(registry).decode()
    assert "# TYPE strikebot_http_requests_total counter" in text
    assert 'strikebot_http_requests_total{route="/",status="200"} 3.0' in text
    # Each process's metrics are its own.
    assert Metrics().registry.get_sample_value(name, {"route": "/", "status": "200"}) is None


def test_a_tally_refuses_labels_it_does_not_have() -> None:
    with pytest.raises(ValueError, match="takes the labels route, status"):
        Metrics().http_requests.inc("/")
