"""pace indexes: the next lease to lapse read per platform from an index of leased rows
(`ix_deliveries_leases`), and the pending rows' index carrying `claimed_until`, so that
`next_due` and a claim pass over the rows a dispatcher holds without reading them

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None

PENDING = sa.text("state = 'pending'")
LEASED = sa.text("state = 'pending' AND claimed_until IS NOT NULL")


def upgrade() -> None:
    with op.batch_alter_table("deliveries", schema=None) as batch_op:
        batch_op.drop_index("ix_deliveries_leased")
        batch_op.drop_index("ix_deliveries_pending")
        batch_op.create_index(
            "ix_deliveries_pending",
            ["platform", "not_before", "created_at", "id", "claimed_until"],
            unique=False,
            sqlite_where=PENDING,
            postgresql_where=PENDING,
        )
        batch_op.create_index(
            "ix_deliveries_leases",
            ["platform", "claimed_until", "not_before"],
            unique=False,
            sqlite_where=LEASED,
            postgresql_where=LEASED,
        )


def downgrade() -> None:
    with op.batch_alter_table("deliveries", schema=None) as batch_op:
        batch_op.drop_index("ix_deliveries_leases")
        batch_op.drop_index("ix_deliveries_pending")
        batch_op.create_index(
            "ix_deliveries_pending",
            ["platform", "not_before", "created_at", "id"],
            unique=False,
            sqlite_where=PENDING,
            postgresql_where=PENDING,
        )
        batch_op.create_index(
            "ix_deliveries_leased",
            ["claimed_until"],
            unique=False,
            sqlite_where=LEASED,
            postgresql_where=LEASED,
        )
