"""Several processes writing at once to one SQLite file lose nothing.

Each worker is a separate Python process running `strikebot post`, `edit` and `demand set`
(through `bot.cli.main`) repeatedly. They start together: every worker imports, says
"ready" and waits for one "go" line, so their writes overlap. Edits and demand changes read
before they write, which with a plain deferred BEGIN fails with "database is locked" under
WAL; BEGIN IMMEDIATE and the busy timeout must turn that into queued writers, never an
error and never a lost or doubled row.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from bot.cli import main

ROOT = Path(__file__).resolve().parent.parent
STRIKE = ROOT / "config" / "strike.toml"
WORKERS = 4
POSTS_EACH = 10

WORKER = """
import contextlib, io, json, sys
from bot.cli import main
config, url, worker, posts = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
common = ["--config", config, "--database-url", url]

def strikebot(*args):
    captured = io.StringIO()
    with contextlib.redirect_stdout(captured):
        code = main([*common, *args])
    return code, captured.getvalue()

print("ready", flush=True)
sys.stdin.readline()
codes = []
for n in range(posts):
    # A post (writes first), an edit and a demand change (both read, then write).
    code, out = strikebot(
        "post", "--headline", f"worker {worker} post {n}", "--urgency", "urgent", "--json"
    )
    codes.append(code)
    number = str(json.loads(out)["update"]["id"]) if code == 0 else "0"
    codes.append(strikebot("edit", number, "--body", f"edited by {worker}", "--reason", "more")[0])
    codes.append(
        strikebot("demand", "set", "pay", "--offer", f"offer {worker}.{n}", "--source", "table")[0]
    )
print(json.dumps({"codes": codes}), flush=True)
"""


def run_cli(*args: str) -> None:
    assert main(list(args)) == 0


def test_posts_from_several_processes_are_all_kept(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'shared.db'}"
    common = ["--config", str(STRIKE), "--database-url", url]
    channels = ["discord:g1/c1", "discord:g1/c2", "slack:T1/C1"]
    for address in channels:
        run_cli(*common, "subscriptions", "add", address)

    env = {k: v for k, v in os.environ.items() if not k.startswith("STRIKEBOT_")}
    env["PYTHONPATH"] = str(ROOT)
    workers = [
        subprocess.Popen(  # noqa: S603 -- our own interpreter and script
            [sys.executable, "-c", WORKER, str(STRIKE), url, str(w), str(POSTS_EACH)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
            env=env,
        )
        for w in range(WORKERS)
    ]
    try:
        for proc in workers:  # everyone has imported and is waiting
            assert proc.stdout is not None and proc.stdin is not None
            assert proc.stdout.readline().strip() == "ready"
        for proc in workers:  # go, all at once
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        results = [proc.communicate(timeout=120) for proc in workers]
    finally:
        for proc in workers:
            if proc.poll() is None:
                proc.kill()

    for proc, (out, err) in zip(workers, results, strict=True):
        assert proc.returncode == 0, err
        assert "locked" not in err.lower(), err
        summary = json.loads(out.strip().splitlines()[-1])
        assert summary["codes"] == [0] * (3 * POSTS_EACH), err

    export = tmp_path / "after.json"
    run_cli(*common, "export", str(export), "--deliveries")
    data = json.loads(export.read_text(encoding="utf-8"))
    posted = [u for u in data["updates"] if u["seed_key"] is None]
    headlines = sorted(u["texts"]["en"]["headline"] for u in posted)
    assert headlines == sorted(
        f"worker {w} post {n}" for w in range(WORKERS) for n in range(POSTS_EACH)
    )
    assert len({u["id"] for u in posted}) == WORKERS * POSTS_EACH
    assert all(u["revision"] == 2 and len(u["revisions"]) == 1 for u in posted)
    for action in ("post", "edit"):
        rows = [d for d in data["deliveries"] if d["action"] == action]
        assert len(rows) == WORKERS * POSTS_EACH * len(channels), action
        assert {(d["update_id"], d["subscription_id"]) for d in rows} == {
            (u["id"], s["id"]) for u in posted for s in data["subscriptions"]
        }
    keys = [d["dedupe_key"] for d in data["deliveries"]]
    assert len(keys) == len(set(keys))
    pay = next(d for d in data["demands"] if d["key"] == "pay")
    offers = sorted(e["offer"]["en"] for e in pay["history"][1:])  # after the seeded one
    assert offers == sorted(f"offer {w}.{n}" for w in range(WORKERS) for n in range(POSTS_EACH))
    actions = [a["action"] for a in data["audit"]]
    for action in ("update.post", "update.edit", "demand.record"):
        assert actions.count(action) == WORKERS * POSTS_EACH, action
