"""Helpers shared by tests: outside components (PostgreSQL, Chromium) and fixed values.

A test needing an outside component skips with a reason on a newcomer's machine, but
fails under CI=true, where `.ci/run` provides it.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tomllib
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import make_url

from bot.admin import Admin
from bot.auth import AdminList
from bot.clock import Clock
from bot.config import Settings, StrikeConfig, admin_list, parse_config
from bot.context import PluginContext, plugin_context
from bot.models import Actor, Campaign
from bot.plugins import installed_plugins
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
    global _template
    if _template is not None:
        name, _template = _template, None
        await _execute_as_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


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
