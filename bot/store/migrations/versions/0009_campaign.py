"""demands as living data: a demand can be retired (kept, with its history); each history
entry says what kind of change it was (an offer, an edit, added, retired), what changed,
and when it was recorded (an offer may be dated earlier than that)

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("demands", schema=None) as batch_op:
        batch_op.add_column(sa.Column("retired_at", sa.DateTime(timezone=True), nullable=True))
    with op.batch_alter_table("demand_events", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("kind", sa.String(length=16), nullable=False, server_default="offer")
        )
        batch_op.add_column(sa.Column("changes", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("demand_events", schema=None) as batch_op:
        batch_op.drop_column("recorded_at")
        batch_op.drop_column("changes")
        batch_op.drop_column("kind")
    with op.batch_alter_table("demands", schema=None) as batch_op:
        batch_op.drop_column("retired_at")
