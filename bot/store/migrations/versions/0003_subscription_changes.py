"""subscription changes: a version per change, and an index per briefing schedule

The briefing scheduler reads only the subscriptions changed since the version it saw, and
the channels of one schedule through an index, instead of every subscription each minute.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

ACTIVE_WITH_BRIEFING = sa.text("active AND briefing_time IS NOT NULL")


def upgrade() -> None:
    with op.batch_alter_table("subscriptions", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("change_seq", sa.Integer(), nullable=False, server_default="0")
        )
        batch_op.create_index("ix_subscriptions_change_seq", ["change_seq"], unique=False)
        batch_op.create_index(
            "ix_subscriptions_schedule",
            ["briefing_time", "timezone", "briefing_days", "id"],
            unique=False,
            sqlite_where=ACTIVE_WITH_BRIEFING,
            postgresql_where=ACTIVE_WITH_BRIEFING,
        )
    meta = sa.table("meta", sa.column("key", sa.String), sa.column("value", sa.Text))
    op.execute(meta.insert().values(key="subscriptions_version", value="0"))


def downgrade() -> None:
    op.execute(sa.text("DELETE FROM meta WHERE key = 'subscriptions_version'"))
    with op.batch_alter_table("subscriptions", schema=None) as batch_op:
        batch_op.drop_index("ix_subscriptions_schedule")
        batch_op.drop_index("ix_subscriptions_change_seq")
        batch_op.drop_column("change_seq")
