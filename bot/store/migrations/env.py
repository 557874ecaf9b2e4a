"""Alembic environment: always run with a connection handed in by `bot.store.engine.upgrade`."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

from bot.store.schema import metadata


def run_with(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    context.run_migrations()


connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run migrations with `strikebot db upgrade`, not the alembic command")
run_with(connection)
