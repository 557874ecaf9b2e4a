"""Helpers shared by tests: outside components (PostgreSQL, Chromium) and fixed values.

A test needing an outside component skips with a reason on a newcomer's machine, but
fails under CI=true, where `.ci/run` provides it.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import time
import tomllib
import urllib.request
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, text
from sqlalchemy.engine import make_url

from bot.clock import Clock
from bot.config import Settings, StrikeConfig, admin_list, parse_config
from bot.editorial.admin import Admin
from bot.models import Actor, Campaign
from bot.plugins import installed_plugins
from bot.plugins.admins import AdminList
from bot.runtime.context import PluginContext, plugin_context
from bot.store import Store

IN_CI = os.environ.get("CI", "").lower() == "true"
ROOT = Path(__file__).resolve().parent.parent

CAMPAIGN = Campaign(
    slug="utla-2019",
    union="United Teachers Los Angeles",
    employer="Los Angeles Unified School District",
    start_date=date(2017, 4, 1),
    timezone="America/Los_Angeles",
    languages=("en", "es"),
    public_url="https://strike.example.org",
    strike_start=date(2019, 1, 14),
)

ADMINS = admin_list(
    {
        "discord": {"user_ids": ["1001"], "role_ids": ["2002"]},
        "slack": {"user_ids": ["U0ADMIN"], "usergroup_ids": ["S0COMMS"]},
        "console": {"user_ids": ["console"]},
    }
)

ADMIN = Actor(platform="discord", user_id="1001", display_name="Arlene")
SECOND_ADMIN = Actor(platform="slack", user_id="U0ADMIN", display_name="Alex")
MEMBER = Actor(platform="discord", user_id="5555", display_name="Member")

# Friday January 18, 2019, 10:00 in Los Angeles.
FRIDAY = datetime(2019, 1, 18, 18, 0, tzinfo=UTC)


def campaign_config(campaign: Campaign = CAMPAIGN, **sections: Any) -> StrikeConfig:
    """A campaign file for `campaign`, validated like a real one, plus any other sections
    (`slack={"mode": "http"}`, `delivery={...}`)."""
    return parse_config(
        {
            "campaign": {
                "slug": campaign.slug,
                "union": campaign.union,
                "employer": campaign.employer,
                "start_date": campaign.start_date,
                "strike_start": campaign.strike_start,
                "timezone": campaign.timezone,
                "languages": list(campaign.languages),
                "public_url": campaign.public_url,
                "require_approval": campaign.require_approval,
            },
            **sections,
        }
    )


def shipped_config(**sections: Any) -> StrikeConfig:
    """The shipped campaign file (config/strike.toml) with these top-level sections replaced
    (`admins={"discord": {...}}`, `discord={"guild_ids": [...]}`), validated like any file."""
    raw = tomllib.loads((ROOT / "config" / "strike.toml").read_text(encoding="utf-8"))
    return parse_config({**raw, **sections}, source="config/strike.toml (test)")


def plugin_ctx(
    name: str,
    store: Store,
    clock: Clock,
    *,
    env: Mapping[str, str] | None = None,
    config: StrikeConfig | None = None,
    admins: AdminList = ADMINS,
    campaign: Campaign | None = None,
) -> PluginContext:
    """The context `strikebot run` would hand plugin `name`, from `env` and a campaign file."""
    config = config or campaign_config(campaign or CAMPAIGN)
    admin = Admin(store, campaign or config.to_campaign(), admins, clock)
    return plugin_context(
        installed_plugins()[name], Settings.from_env(env or {}), config,
        store=store, admin=admin, clock=clock,
    )  # fmt: skip


def need_outside(what: str, how: str) -> None:
    """Skip (newcomer) or fail (CI) because an outside component is missing."""
    message = f"{what} is not available: {how}"
    if IN_CI:
        pytest.fail(f"{message} (required under CI=true)")
    pytest.skip(message)


def postgres_url() -> str:
    url = os.environ.get("STRIKEBOT_TEST_POSTGRES_URL")
    if not url:
        need_outside(
            "PostgreSQL",
            "set STRIKEBOT_TEST_POSTGRES_URL=postgresql+asyncpg://postgres@127.0.0.1:5432/test",
        )
    assert url is not None
    return url


def chromium_path() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        need_outside("Chromium", "install Debian's chromium package (apt-get install chromium)")
    assert path is not None
    return path


# A database migrated to head once per test session; `fresh_postgres_database(migrated=True)`
# copies it (CREATE DATABASE ... TEMPLATE), which is about twice as fast as migrating every
# test's database. Dropped by `drop_postgres_template()` at the end of the session.
_template: str | None = None


def _admin_dsn() -> str:
    return (
        make_url(postgres_url()).set(drivername="postgresql").render_as_string(hide_password=False)
    )


async def _execute_as_admin(*statements: str) -> None:
    import asyncpg

    base = make_url(postgres_url())
    try:
        admin = await asyncpg.connect(_admin_dsn())
    except (OSError, asyncpg.PostgresError) as exc:
        if IN_CI:
            pytest.fail(f"PostgreSQL at {base.host}:{base.port} is unreachable: {exc}")
        pytest.skip(f"PostgreSQL at {base.host}:{base.port} is unreachable: {exc}")
    try:
        for statement in statements:
            await admin.execute(statement)
    finally:
        await admin.close()


def _database_url(name: str) -> str:
    return make_url(postgres_url()).set(database=name).render_as_string(hide_password=False)


async def _migrated_template() -> str:
    global _template
    if _template is None:
        from bot.store import Store

        name = f"sbtemplate_{secrets.token_hex(6)}"
        await _execute_as_admin(f'CREATE DATABASE "{name}"')
        try:
            async with Store.open(_database_url(name)):
                pass  # migrated; disposing closes every connection, as a template needs
        except BaseException:
            await _execute_as_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            raise
        _template = name
    return _template


async def drop_postgres_template() -> None:
    global _template, _shared
    for name in (_template, _shared):
        if name is not None:
            await _execute_as_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    _template = _shared = None


# One migrated database shared by every test of the session that needs only "a database at
# the schema's head with every table empty": `clean_postgres_database()` empties it (one
# TRUNCATE) instead of creating and dropping a database per test.
_shared: str | None = None


async def clean_postgres_database() -> str:
    """The session's shared database, migrated and emptied (ids start again at 1)."""
    import asyncpg

    global _shared
    if _shared is None:
        name = f"sbshared_{secrets.token_hex(6)}"
        await _execute_as_admin(f'CREATE DATABASE "{name}" TEMPLATE "{await _migrated_template()}"')
        _shared = name
    url = _database_url(_shared)
    conn = await asyncpg.connect(make_url(url).set(drivername="postgresql").render_as_string(
        hide_password=False))  # fmt: skip
    try:
        # A connection a previous test left behind (a crashed worker, a leaked pool) must
        # not hold a lock that would make the TRUNCATE wait.
        await conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        tables = await conn.fetch(
            "SELECT quote_ident(tablename) AS name FROM pg_tables "
            "WHERE schemaname = 'public' AND tablename <> 'alembic_version'"
        )
        names = ", ".join(row["name"] for row in tables)
        await conn.execute(f"TRUNCATE {names} RESTART IDENTITY CASCADE")
        await conn.execute("SELECT pg_advisory_unlock_all()")
    finally:
        await conn.close()
    return url


@asynccontextmanager
async def fresh_postgres_database(*, migrated: bool = False) -> AsyncIterator[str]:
    """A new PostgreSQL database for one test; dropped afterwards. Empty, or with
    `migrated=True` already at the schema's head (every table empty)."""
    name = f"sbtest_{secrets.token_hex(6)}"
    template = f' TEMPLATE "{await _migrated_template()}"' if migrated else ""
    await _execute_as_admin(f'CREATE DATABASE "{name}"{template}')
    try:
        yield _database_url(name)
    finally:
        await _execute_as_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# ---------------------------------------------------------------------------- processes


Recorded = list[tuple[str, Any]]  # statements with their parameters


@contextmanager
def recording(store: Store, keep: Callable[[str], bool] = lambda _: True) -> Iterator[Recorded]:
    """The statements (those `keep` accepts) `store` runs meanwhile, with their parameters."""
    recorded: Recorded = []

    def record(*args: Any) -> None:
        if keep(str(args[2])):
            recorded.append((str(args[2]), args[3]))

    engine = store.engine.sync_engine
    event.listen(engine, "before_cursor_execute", record)
    try:
        yield recorded
    finally:
        event.remove(engine, "before_cursor_execute", record)


async def end_backend(store: Store, pid: int) -> None:
    """Cut one PostgreSQL session at the server, as when its process dies or its network
    goes, and wait (up to 5 s) until it is gone: its advisory locks are free when this
    returns, not a moment later."""
    async with store.write() as tx:
        ended = await tx.conn.scalar(text("SELECT pg_terminate_backend(:pid, 5000)"), {"pid": pid})
    assert ended, f"PostgreSQL backend {pid} did not end within 5 s"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get(url: str) -> tuple[int, bytes]:
    with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 (loopback only)
        return response.status, response.read()


def wait_until_serving(proc: subprocess.Popen[bytes], url: str, within: float = 30.0) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            out = proc.stdout.read().decode() if proc.stdout else ""
            pytest.fail(f"strikebot run exited early with {proc.returncode}:\n{out}")
        try:
            get(url)
            return
        except OSError:
            time.sleep(0.1)
    pytest.fail(f"strikebot run did not serve {url} within {within}s")


def run_env(tmp_path: Path, port: int) -> dict[str, str]:
    """This machine's environment without any plugin's variables or our own settings, then
    ours."""
    plugin_variables = {
        info.alias or name
        for plugin in installed_plugins().values()
        for name, info in plugin.settings.model_fields.items()
    }
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("STRIKEBOT_") and k not in plugin_variables
    }
    return env | {
        "STRIKEBOT_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'run.db'}",
        "STRIKEBOT_HTTP_PORT": str(port),
        "STRIKEBOT_CONFIG": str(ROOT / "config" / "strike.toml"),
    }
