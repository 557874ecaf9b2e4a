"""Helpers shared by tests: outside components (PostgreSQL, Chromium) and fixed values.

A test needing an outside component skips with a reason on a newcomer's machine, but
fails under CI=true, where `.ci/run` provides it.
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, date, datetime

import pytest
from sqlalchemy.engine import make_url

from bot.auth import AdminList
from bot.models import Actor, Campaign, Platform

IN_CI = os.environ.get("CI", "").lower() == "true"

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

ADMINS = AdminList(
    discord_user_ids=frozenset({"1001"}),
    discord_role_ids=frozenset({"2002"}),
    slack_user_ids=frozenset({"U0ADMIN"}),
    slack_usergroup_ids=frozenset({"S0COMMS"}),
    console_user_ids=frozenset({"console"}),
)

ADMIN = Actor(platform=Platform.DISCORD, user_id="1001", display_name="Arlene")
SECOND_ADMIN = Actor(platform=Platform.SLACK, user_id="U0ADMIN", display_name="Alex")
MEMBER = Actor(platform=Platform.DISCORD, user_id="5555", display_name="Member")

# Friday January 18, 2019, 10:00 in Los Angeles.
FRIDAY = datetime(2019, 1, 18, 18, 0, tzinfo=UTC)


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


@asynccontextmanager
async def fresh_postgres_database() -> AsyncIterator[str]:
    """A new, empty PostgreSQL database for one test; dropped afterwards."""
    import asyncpg

    base = make_url(postgres_url())
    dsn = base.set(drivername="postgresql").render_as_string(hide_password=False)
    name = f"sbtest_{secrets.token_hex(6)}"
    try:
        admin = await asyncpg.connect(dsn)
    except (OSError, asyncpg.PostgresError) as exc:
        if IN_CI:
            pytest.fail(f"PostgreSQL at {base.host}:{base.port} is unreachable: {exc}")
        pytest.skip(f"PostgreSQL at {base.host}:{base.port} is unreachable: {exc}")
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    try:
        yield base.set(database=name).render_as_string(hide_password=False)
    finally:
        admin = await asyncpg.connect(dsn)
        try:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await admin.close()
