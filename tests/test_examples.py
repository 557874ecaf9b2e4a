"""Every example in README.md runs as written, in the order a newcomer meets them, on a fresh
`make run` database: each shell line of a ```sh block, each `strikebot ...` and `/strike ...`
in the text (the chat commands through the console, as the admin it is). `make run` and
`make test` themselves are what this test stands in for. Syntax summaries with placeholders
(`<address>`, `URL`, `a|b`, `...`) are not examples and are left out."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.plugins import installed_plugins
from tests.support import free_port, get

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
FENCE = re.compile(r"```(\w*)\n(.*?)```", re.DOTALL)
SPAN = re.compile(r"`([^`\n]+)`")
PLACEHOLDER = re.compile(r"<[^>]*>|\.\.\.|…\"?$|\||\b[A-Z]{3,}\b")
# Examples whose answer depends on the world outside this machine: the webhook receiver's
# host must resolve. Offline, the example must fail for exactly that reason.
NEEDS_NETWORK = {"strikebot webhooks add https://hooks.example.org/strike": "cannot be found"}
# `doctor` with no platform token (as here) exits 5, saying nothing reaches anyone yet.
EXPLAINED_EXITS = {"strikebot doctor": (5, "nothing reaches anyone yet")}
# A chat example that, on the shipped campaign (require_approval = false), says why it
# does nothing, as its row in the README explains.
EXPLAINED_REFUSALS = {"/strike approve 4": "not waiting for approval"}


@dataclass(frozen=True)
class Example:
    kind: str  # "shell" or "chat"
    text: str
    line: int


def examples(readme: str) -> list[Example]:
    """The README's examples in reading order."""
    found: list[Example] = []
    position = 0
    for fence in FENCE.finditer(readme):
        found += _spans(readme, position, fence.start())
        if fence.group(1) == "sh":
            first_line = readme.count("\n", 0, fence.start()) + 2
            for offset, command in _shell_lines(fence.group(2)):
                found.append(Example("shell", command, first_line + offset))
        position = fence.end()
    found += _spans(readme, position, len(readme))
    return found


def _spans(readme: str, start: int, end: int) -> list[Example]:
    found = []
    for span in SPAN.finditer(readme, start, end):
        text = span.group(1).strip()
        line = readme.count("\n", 0, span.start()) + 1
        command = text.startswith(("/strike ", "strikebot ", ".venv/bin/strikebot "))
        if command and not PLACEHOLDER.search(text):
            kind = "chat" if text.startswith("/strike") else "shell"
            found.append(Example(kind, text, line))
    return found


def _shell_lines(block: str) -> list[tuple[int, str]]:
    lines: list[tuple[int, str]] = []
    pending, began = "", 0
    for number, raw in enumerate(block.splitlines()):
        if not pending:
            began = number
        if raw.rstrip().endswith("\\"):
            pending += raw.rstrip()[:-1] + " "
            continue
        command = (pending + raw).strip()
        pending = ""
        if command and not command.startswith("#"):
            lines.append((began, command))
    return lines


@pytest.fixture
def fresh(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A checkout's working directory after `make run`: the shipped campaign file, `.venv`,
    and no database yet (the first command creates and seeds it, as `make run` does)."""
    shutil.copytree(ROOT / "config", tmp_path / "config")
    (tmp_path / ".venv").symlink_to(ROOT / ".venv")
    variables = {
        info.alias or name
        for plugin in installed_plugins().values()
        for name, info in plugin.settings.model_fields.items()
    }
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("STRIKEBOT_") and k not in variables
    }
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["STRIKEBOT_HTTP_PORT"] = str(free_port())
    return tmp_path, env


def run_shell(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 (the README's own examples, in a temporary directory)
        ["bash", "-c", command],  # noqa: S607 (bash from PATH, as a reader's shell)
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120,
        stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip


def run_server(command: str, cwd: Path, env: dict[str, str]) -> None:
    """`strikebot run ...`: it must serve, then stop cleanly on SIGTERM."""
    proc = subprocess.Popen(  # noqa: S603 (the README's own example)
        shlex.split(command), cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert proc.poll() is None, proc.stdout.read().decode() if proc.stdout else ""
            try:
                status, _ = get(f"http://127.0.0.1:{env['STRIKEBOT_HTTP_PORT']}/healthz")
                assert status == 200
                break
            except OSError:
                time.sleep(0.2)
        else:
            pytest.fail(f"{command!r} did not serve within 60 s")
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0


def test_the_readme_has_examples_to_run() -> None:
    found = examples(README.read_text(encoding="utf-8"))
    texts = [e.text for e in found]
    assert len([e for e in found if e.kind == "chat"]) >= 10
    assert any(t.startswith(".venv/bin/strikebot init") for t in texts)
    assert "/strike status" in texts and "/strike demand pay" in texts


def chat_session(batch: list[Example], cwd: Path, env: dict[str, str]) -> list[str]:
    """Consecutive chat examples, typed into one console session in order (as a reader
    would); each reply is checked against its own example."""
    lines = " ".join(shlex.quote(e.text) for e in batch)
    result = run_shell(f"printf '%s\\n' {lines} | .venv/bin/strikebot console --json", cwd, env)
    replies = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    replies = [r for r in replies if r.get("event") == "reply"]
    if len(replies) != len(batch):
        return [f"README.md:{batch[0].line}: {len(replies)} replies to {len(batch)} commands: "
                f"{result.stderr[-500:]}"]  # fmt: skip
    failures = []
    for example, reply in zip(batch, replies, strict=True):
        where = f"README.md:{example.line}: {example.text}"
        body = f"{reply['message']['title']} {reply['message']['body']}"
        expected = EXPLAINED_REFUSALS.get(example.text)
        if reply["input"] != example.text:
            failures.append(f"{where}\n  answered another input: {reply['input']}")
        elif expected is not None:
            if reply["ok"] or expected not in body:
                failures.append(f"{where}\n  expected a refusal saying {expected!r}: {body}")
        elif not reply["ok"]:
            failures.append(f"{where}\n  refused: {body}")
    return failures


def test_every_readme_example_runs_as_written(fresh: tuple[Path, dict[str, str]]) -> None:
    cwd, env = fresh
    failures: list[str] = []
    batch: list[Example] = []
    for example in [*examples(README.read_text(encoding="utf-8")), None]:
        if example is not None and example.kind == "chat":
            batch.append(example)
            continue
        if batch:
            failures += chat_session(batch, cwd, env)
            batch = []
        if example is None:
            break
        where = f"README.md:{example.line}: {example.text}"
        command = example.text
        if command.startswith("make "):
            continue  # the set-up this test stands in for
        if command.startswith("export "):
            for assignment in shlex.split(command, comments=True)[1:]:
                name, _, value = assignment.partition("=")
                env[name] = value
            continue
        if re.match(r"^(\.venv/bin/)?strikebot (--[a-z-]+ )*run\b", command):
            run_server(command, cwd, env)
            continue
        result = run_shell(command, cwd, env)
        bare = command.split("  #")[0].strip()
        bare = re.sub(r"^(?:[A-Z_]+=\S+\s+)*(?:\.venv/bin/)?", "", bare)
        if bare in EXPLAINED_EXITS:
            code, said = EXPLAINED_EXITS[bare]
            if result.returncode != code or said not in result.stdout:
                failures.append(f"{where}\n  expected exit {code} saying {said!r}: {result.stdout}")
            continue
        if bare in NEEDS_NETWORK and result.returncode != 0:
            if NEEDS_NETWORK[bare] not in result.stderr:
                failures.append(f"{where}\n  exit {result.returncode}: {result.stderr[-500:]}")
            continue
        if result.returncode != 0:
            failures.append(f"{where}\n  exit {result.returncode}: {result.stderr[-800:]}")
    assert failures == [], "\n".join(failures)
