"""`strikebot run` end to end: a real process serving the seeded campaign, stopped by a signal."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import free_port, get, run_env, wait_until_serving


def start_run(tmp_path: Path, port: int) -> subprocess.Popen[bytes]:
    """`strikebot run` in `tmp_path` on `port`, its output (both streams) kept."""
    return subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "run"],
        cwd=tmp_path,
        env=run_env(tmp_path, port),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


@pytest.fixture
def running(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    port = free_port()
    proc = start_run(tmp_path, port)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(proc, f"{base}/healthz")
        yield proc, base
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_run_serves_the_seeded_campaign_and_stops_cleanly(
    running: tuple[subprocess.Popen[bytes], str],
) -> None:
    proc, base = running
    status, body = get(f"{base}/healthz")
    assert status == 200
    assert json.loads(body)["ok"] is True

    status, body = get(f"{base}/api/v1/status")
    current = json.loads(body)
    assert status == 200
    assert current["status"] == "strike_on"

    status, page = get(f"{base}/")
    assert status == 200
    assert b"United Teachers Los Angeles" in page

    demands = json.loads(get(f"{base}/api/v1/demands")[1])
    assert len(demands["items"]) >= 4

    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == 0
    output = proc.stdout.read().decode() if proc.stdout else ""
    assert "stopped cleanly" in output


def test_a_sigterm_as_soon_as_the_page_listens_still_stops_cleanly(tmp_path: Path) -> None:
    """The page listens before the adapters and the scheduler start; a signal then is not fatal."""
    port = free_port()
    proc = start_run(tmp_path, port)
    try:
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.005)
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=30)
        output = proc.stdout.read().decode() if proc.stdout else ""
        assert code == 0, output
        assert "stopped cleanly" in output
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_run_restart_does_not_duplicate_the_seed(
    running: tuple[subprocess.Popen[bytes], str], tmp_path: Path
) -> None:
    proc, base = running
    first = json.loads(get(f"{base}/api/v1/updates")[1])
    assert len(first["items"]) >= 3  # the seeded timeline
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=20) == 0

    port = free_port()
    again = start_run(tmp_path, port)
    try:
        wait_until_serving(again, f"http://127.0.0.1:{port}/healthz")
        second = json.loads(get(f"http://127.0.0.1:{port}/api/v1/updates")[1])
        assert [u["id"] for u in second["items"]] == [u["id"] for u in first["items"]]
    finally:
        again.send_signal(signal.SIGTERM)
        assert again.wait(timeout=20) == 0


def test_a_replay_under_now_sends_the_morning_briefing_of_the_replayed_day(
    tmp_path: Path,
) -> None:
    """`strikebot run --now`: the scheduler follows the shifted clock, and a channel
    subscribed with `strikebot --now` carries the replayed date, so the seeded week's 07:00
    briefing goes out when the replay reaches 07:00."""
    port = free_port()
    env = run_env(tmp_path, port)
    added = subprocess.run(
        [sys.executable, "-m", "bot.cli", "--now", "2019-01-17T12:00-08:00",
         "subscriptions", "add", "console:local/main", "--briefing-time", "07:00", "--json"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    assert json.loads(added.stdout)["created_at"].startswith("2019-01-17")
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "run", "--now", "2019-01-18T06:59:58-08:00"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    seen: list[str] = []
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = proc.stdout.readline().decode()
            if not line:
                break
            seen.append(line)
            if "Morning briefing" in line:
                break
        assert any("Morning briefing" in line for line in seen), "".join(seen)
        briefing = next(line for line in seen if "Morning briefing" in line)
        assert "18" in briefing and "2026" not in briefing
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)
