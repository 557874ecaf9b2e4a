"""A deployment that works as written (issue 29): `deploy/compose.yaml` (PostgreSQL, two
strikebot instances, Caddy in front obtaining its certificate) against the Compose
specification's JSON schema (vendored: tests/fixtures/README.md), the proxy really in front,
`deploy/strikebot.service` through `systemd-analyze verify`; and the two steps a volunteer
follows: `make run` installs only what running needs, the README says one command form."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft201909Validator

from bot.config import CoreSettings
from bot.plugins import installed_plugins
from tests.support import need_outside

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
SCHEMA = ROOT / "tests" / "fixtures" / "compose-spec.json"


def compose() -> dict[str, Any]:
    loaded = yaml.safe_load((DEPLOY / "compose.yaml").read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def test_the_compose_file_keeps_to_the_compose_specification() -> None:
    import json

    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    assert schema["$schema"].startswith("http://json-schema.org/draft/2019-09/")
    validator = Draft201909Validator(schema)
    errors = sorted(validator.iter_errors(compose()), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors)
    # The schema is strict where it matters: a misspelt key is an error, not ignored.
    broken = compose()
    broken["services"]["caddy"]["port"] = ["443:443"]
    assert not validator.is_valid(broken)


def test_postgresql_two_instances_and_the_proxy_in_front() -> None:
    services = compose()["services"]
    instances = {name: s for name, s in services.items() if s.get("image") == "strikebot:local"}
    assert sorted(instances) == ["strikebot-1", "strikebot-2"]
    for name, service in instances.items():
        env = service["environment"]
        assert env["STRIKEBOT_DATABASE_URL"].startswith("postgresql+asyncpg://"), name
        assert env["STRIKEBOT_TRUSTED_PROXIES"] == "172.30.0.0/24"  # Caddy's X-Forwarded-For
        assert "ports" not in service, f"{name} is published: the proxy must be in front"
        assert service["depends_on"]["postgres"]["condition"] == "service_healthy"
        dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
        mounted = {v.split(":")[1] for v in service["volumes"]}
        assert re.search(r"STRIKEBOT_CONFIG=(\S+)", dockerfile)[1] in mounted  # type: ignore[index]
    assert "ports" not in services["postgres"]
    assert {"80:80", "443:443"} <= set(services["caddy"]["ports"])
    caddyfile = (DEPLOY / "Caddyfile").read_text(encoding="utf-8")
    upstreams = re.search(r"reverse_proxy ([^{]+)\{", caddyfile)
    assert upstreams is not None
    assert upstreams[1].split() == [f"{name}:8080" for name in sorted(instances)]
    assert "health_uri /readyz" in caddyfile
    assert "./Caddyfile:/etc/caddy/Caddyfile:ro" in services["caddy"]["volumes"]


def test_every_variable_the_deployment_reads_is_explained_and_real() -> None:
    text = (DEPLOY / "compose.yaml").read_text(encoding="utf-8")
    example = (DEPLOY / "env.example").read_text(encoding="utf-8")
    given = set(re.findall(r"^([A-Z][A-Z0-9_]+)=", example, re.MULTILINE))
    interpolated = set(re.findall(r"\$\{([A-Z][A-Z0-9_]+)", text))
    assert interpolated <= given, interpolated - given
    known = {info.alias for info in CoreSettings.model_fields.values()} | {
        info.alias
        for plugin in installed_plugins().values()
        for info in plugin.settings.model_fields.values()
    }
    assert given - known == {"POSTGRES_PASSWORD", "STRIKEBOT_DOMAIN"}, given - known


def test_the_systemd_unit_verifies(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        need_outside("systemd-analyze", "install Debian's systemd package (.ci/run does)")
        return
    unit = (DEPLOY / "strikebot.service").read_text(encoding="utf-8")
    command = "/opt/strikebot/.venv/bin/strikebot"
    assert f"ExecStart={command} run" in unit
    # verify checks that ExecStart names an executable: a stand-in where the venv would be.
    stand_in = tmp_path / "strikebot"
    stand_in.write_text("#!/bin/sh\n", encoding="utf-8")
    stand_in.chmod(0o755)
    copy = tmp_path / "strikebot.service"
    copy.write_text(unit.replace(command, str(stand_in)), encoding="utf-8")
    done = subprocess.run(  # noqa: S603 (a fixed program on a file of ours)
        [analyze, "verify", str(copy)], capture_output=True, text=True, timeout=60, check=False
    )
    # verify exits 0 even for unknown keys: any line it prints about the unit is a failure.
    said = [line for line in (done.stdout + done.stderr).splitlines() if "strikebot" in line]
    assert done.returncode == 0 and not said, done.stdout + done.stderr


# ---------------------------------------------------------------------------- two steps


def _make(target: str, tmp_path: Path) -> str:
    """What `make TARGET` would run in a fresh clone (no .venv yet), without running it."""
    make = shutil.which("make")
    if make is None:
        need_outside("make", "install Debian's make package")
        raise AssertionError  # unreachable: need_outside skips or fails
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    done = subprocess.run(  # noqa: S603
        [make, "-n", target], cwd=tmp_path, capture_output=True, text=True, timeout=60,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_make_run_installs_only_what_running_needs(tmp_path: Path) -> None:
    """Issue 29: `make run` installed the developer tools too (a 453 MB .venv)."""
    run = _make("run", tmp_path)
    assert "pip install" in run and ".[dev]" not in run, run
    assert "strikebot run" in run
    test = _make("test", tmp_path)
    assert "'.[dev]'" in test and "pytest" in test and "mypy" in test, test


def test_the_readme_uses_one_form_of_the_command() -> None:
    """Issue 29: "Your own campaign" called a bare `strikebot`, which is not on the PATH."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```sh\n(.*?)```", readme, re.DOTALL)
    bare = [
        line
        for block in blocks
        for line in block.splitlines()
        if re.match(r"\s*(?:[A-Z_]+=\S+\s+)*strikebot\b", line)
    ]
    assert bare == [], bare
    prose = re.findall(r"`(strikebot [a-z][^`]*)`", readme)
    assert prose == [], prose
