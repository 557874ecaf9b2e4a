"""A damaged store is one sentence and exit 4, never a traceback with SQL in it.

Each fault is real, not imitated by patching our code:
- a damaged file: bytes overwritten in the middle of a real SQLite database;
- a read-only store: the data folder remounted read-only in a private mount namespace of
  the `strikebot` process (`unshare`), as a `:ro` volume or a file system remounted
  read-only after disk errors would be. `chmod` is no test of that here: the tests may run
  as root, whom file modes do not stop; without `unshare`, a non-root run uses `chmod`;
- a full disk: SQLite's `PRAGMA max_page_count` caps the file at its current size, and the
  next write that needs a page fails with SQLITE_FULL, the very error a full disk gives.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event

from bot.cli import main
from bot.clock import FixedClock
from bot.editorial.admin import Admin, Draft
from bot.errors import StoreUnavailable
from bot.models import Status, UpdateText, Urgency
from bot.store import Store
from tests.support import ADMIN, ADMINS, CAMPAIGN, need_outside

ROOT = Path(__file__).resolve().parent.parent
STRIKE = ROOT / "config" / "strike.toml"


def url_of(path: Path) -> str:
    return f"sqlite+aiosqlite:///{path}"


@pytest.fixture
def seeded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A real strikebot database, seeded by the CLI, closed cleanly (no -wal left)."""
    path = tmp_path / "data" / "strikebot.db"
    assert main(["--config", str(STRIKE), "--database-url", url_of(path), "status"]) == 0
    capsys.readouterr()
    return path


def assert_one_sentence(err: str) -> None:
    assert "Traceback" not in err
    assert "SELECT" not in err and "INSERT" not in err and "[SQL" not in err
    assert err.startswith("error: ")
    assert len(err.strip().splitlines()) == 1, err


def test_a_damaged_file_is_one_sentence_and_exit_4(
    seeded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    size = seeded.stat().st_size
    with seeded.open("r+b") as f:  # garbage over the middle half of the pages
        f.seek(size // 4)
        f.write(b"\xde\xad\xbe\xef" * (size // 8))

    code = main(["--config", str(STRIKE), "--database-url", url_of(seeded), "status"])

    err = capsys.readouterr().err
    assert code == 4, err
    assert_one_sentence(err)
    assert "is damaged" in err and "backup" in err


def _read_only_run(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`strikebot ARGS` with `folder` read-only for it."""
    strikebot = [sys.executable, "-m", "bot.cli", *args]
    unshare = shutil.which("unshare")
    if unshare is not None:
        script = (
            'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" "$1" && shift && exec "$@"'
        )
        command = [unshare, "--map-root-user", "--mount", "sh", "-c", script, "sh", str(folder)]
        result = subprocess.run(  # noqa: S603 (our own interpreter and arguments)
            [*command, *strikebot], cwd=ROOT, capture_output=True, text=True, check=False
        )
        if "mount" not in result.stderr.split(":")[0]:  # unshare and mount were allowed
            return result
    if os.geteuid() == 0:
        need_outside("a read-only mount", "run as root with unshare (util-linux) available")
    for path in [folder, *folder.iterdir()]:
        path.chmod(0o555 if path.is_dir() else 0o444)
    return subprocess.run(  # noqa: S603
        strikebot, cwd=ROOT, capture_output=True, text=True, check=False
    )


@pytest.mark.parametrize(
    "command", [["status"], ["post", "--status", "strike_on", "--headline", "Out"]]
)
def test_a_read_only_store_is_one_sentence_and_exit_4(seeded: Path, command: list[str]) -> None:
    result = _read_only_run(
        seeded.parent, "--config", str(STRIKE), "--database-url", url_of(seeded), *command
    )

    assert result.returncode == 4, result.stderr
    err = " ".join(result.stderr.split())  # rich wraps long lines
    assert "Traceback" not in err and "SELECT" not in err
    assert "writable" in err and str(seeded) in err
    with closing(sqlite3.connect(seeded)) as conn:  # and the file is as it was
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


async def test_a_full_disk_is_one_sentence_and_nothing_is_half_written(
    seeded: Path, clock: FixedClock
) -> None:
    async with Store.open(url_of(seeded)) as store:

        @event.listens_for(store.engine.sync_engine, "connect")
        def full_at_current_size(dbapi_connection: Any, _record: Any) -> None:
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA page_count")
            pages = cursor.fetchone()[0]
            cursor.execute(f"PRAGMA max_page_count = {pages}")
            cursor.close()

        await store.engine.dispose()  # every connection from now on sees the cap
        admin = Admin(store, CAMPAIGN, ADMINS, clock)
        async with store.read() as tx:
            before = len(await tx.list_updates(clock(), limit=None))

        with pytest.raises(StoreUnavailable) as full:
            await admin.post(
                ADMIN,
                Draft(Status.STRIKE_ON, {"en": UpdateText("Out", "x" * 19_000)}, Urgency.URGENT),
            )

        assert full.value.exit_code == 4
        assert "disk holding the database" in full.value.message and "full" in full.value.message
        assert "INSERT" not in full.value.message
        event.remove(store.engine.sync_engine, "connect", full_at_current_size)
        await store.engine.dispose()
        async with store.read() as tx:
            assert len(await tx.list_updates(clock(), limit=None)) == before
