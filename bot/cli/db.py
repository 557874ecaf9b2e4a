"""The database itself: `db upgrade` applies the migrations (also done at every start).

strikebot db upgrade
STRIKEBOT_DATABASE_URL=postgresql+asyncpg://strikebot@db/strikebot strikebot db upgrade
"""

from __future__ import annotations

import argparse

from sqlalchemy import text
from sqlalchemy.engine import make_url

from bot.cli import add_json_flag, out, print_json
from bot.config import Settings
from bot.errors import Conflict
from bot.runtime.transfer import known_schema_revisions
from bot.store import Store
from bot.store.engine import upgrade


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    db = sub.add_parser(
        "db",
        help="database maintenance (db upgrade)",
        description="Database maintenance. The campaign file is not needed here.",
    )
    actions = db.add_subparsers(dest="db_command", metavar="ACTION")
    actions.required = True
    upgrade = actions.add_parser(
        "upgrade",
        help="create or migrate the database to this version's schema",
        description="Apply every pending migration (safe to run any time, and by several "
        "instances at once). `strikebot run` does this at start-up too.",
    )
    add_json_flag(upgrade)
    upgrade.set_defaults(handler=upgrade_handler)


async def upgrade_handler(args: argparse.Namespace) -> int:
    url = args.database_url or Settings.from_env().database_url
    async with Store.open(url, migrate=False) as store:
        before = await _revision(store)
        if before is not None and before not in known_schema_revisions():
            raise Conflict(
                f"This database has schema {before!r}, written by a newer strikebot; "
                "upgrade strikebot instead of the database."
            )
        await upgrade(store.engine)
        after = await _revision(store)
    shown = make_url(url).render_as_string(hide_password=True)
    if args.json:
        print_json({"database": shown, "dialect": store.dialect, "from": before, "to": after})
        return 0
    if before == after:
        out.print(f"Database {shown} is up to date (schema {after}).")
    else:
        out.print(
            f"Database {shown} upgraded from schema {before or 'none (new database)'} to {after}."
        )
    return 0


async def _revision(store: Store) -> str | None:
    async with store.engine.connect() as conn:
        has_table = await conn.run_sync(
            lambda sync: sync.dialect.has_table(sync, "alembic_version")
        )
        if not has_table:
            return None
        value = await conn.scalar(text("SELECT version_num FROM alembic_version"))
    return None if value is None else str(value)
