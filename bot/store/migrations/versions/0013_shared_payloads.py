"""Morning briefings share their payload: one row per (briefing run, language) in
`shared_payloads`, named by each delivery's `shared_payload_id` (its own `payload` NULL).

100,000 briefings carried 100,000 copies of a ~3 KB message: on PostgreSQL most of the time
of queuing them went into compressing and storing each copy, on SQLite into writing ~300 MB
through the WAL. Rows written before keep their own payload; both kinds are read alike.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from bot.store.schema import UTCDateTime

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "shared_payloads",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("payload", sa.JSON, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
    )
    op.add_column("deliveries", sa.Column("shared_payload_id", sa.Integer, nullable=True))
    op.create_index(
        "ix_deliveries_shared_payload",
        "deliveries",
        ["shared_payload_id"],
        sqlite_where=sa.text("shared_payload_id IS NOT NULL"),
        postgresql_where=sa.text("shared_payload_id IS NOT NULL"),
    )


def downgrade() -> None:
    # Each delivery gets its own copy back before the shared rows go.
    op.execute(
        "UPDATE deliveries SET payload = (SELECT s.payload FROM shared_payloads s "
        "WHERE s.id = deliveries.shared_payload_id) WHERE shared_payload_id IS NOT NULL"
    )
    op.drop_index("ix_deliveries_shared_payload", table_name="deliveries")
    with op.batch_alter_table("deliveries") as batch:
        batch.drop_column("shared_payload_id")
    op.drop_table("shared_payloads")
