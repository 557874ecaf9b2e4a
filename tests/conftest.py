from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from hypothesis import settings

from bot.clock import FixedClock
from bot.editorial.admin import Admin
from bot.store import Store
from tests.support import (
    ADMINS,
    CAMPAIGN,
    FRIDAY,
    IN_CI,
    clean_postgres_database,
    drop_postgres_template,
)

# Locally, property tests explore new inputs on every run; in CI they replay a fixed set,
# so a landing is never decided by the luck of the draw.
settings.register_profile("ci", derandomize=True, database=None)
if IN_CI:
    settings.load_profile("ci")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    asyncio.run(drop_postgres_template())  # only if a test made one


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(FRIDAY)


@pytest.fixture
async def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite+aiosqlite:///{tmp_path / 'strikebot.db'}"


@pytest.fixture(params=["sqlite", "postgres"])
async def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    """Runs the test once on SQLite and once on PostgreSQL."""
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'strikebot.db'}"
        return
    yield await clean_postgres_database()


@pytest.fixture
async def store(db_url: str) -> AsyncIterator[Store]:
    async with Store.open(db_url) as opened:
        yield opened


@pytest.fixture
async def sqlite_store(sqlite_url: str) -> AsyncIterator[Store]:
    async with Store.open(sqlite_url) as opened:
        yield opened


@pytest.fixture
def admin(store: Store, clock: FixedClock) -> Admin:
    return Admin(store, CAMPAIGN, ADMINS, clock)
