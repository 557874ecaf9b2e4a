"""the delivery engine's indexes: claims and next-due read only what is pending (partial
indexes ordered like the claim), leases by their end; history purged by its age; the
purged history's summary

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

PENDING = sa.text("state = 'pending'")
LEASED = sa.text("state = 'pending' AND claimed_until IS NOT NULL")


def upgrade() -> None:
    with op.batch_alter_table("deliveries", schema=None) as batch_op:
        batch_op.drop_index("ix_deliveries_due")
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
        batch_op.create_index("ix_deliveries_created_at", ["created_at"], unique=False)
    op.create_table(
        "delivery_history",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("purged_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("update_id", sa.Integer(), nullable=True),
        sa.Column("platform", sa.String(length=16), nullable=False),
        sa.Column("action", sa.String(length=16), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.Column("retried", sa.Integer(), nullable=False),
        sa.Column("first_created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_delivery_history")),
    )
    with op.batch_alter_table("delivery_history", schema=None) as batch_op:
        batch_op.create_index("ix_delivery_history_update", ["update_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("delivery_history", schema=None) as batch_op:
        batch_op.drop_index("ix_delivery_history_update")
    op.drop_table("delivery_history")
    with op.batch_alter_table("deliveries", schema=None) as batch_op:
        batch_op.drop_index("ix_deliveries_created_at")
        batch_op.drop_index("ix_deliveries_leased")
        batch_op.drop_index("ix_deliveries_pending")
        batch_op.create_index("ix_deliveries_due", ["state", "not_before"], unique=False)
