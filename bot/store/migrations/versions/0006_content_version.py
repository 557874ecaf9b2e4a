"""public content version: one row bumped with every change a public view shows; the
indexes the public queries need (calendar by next-step time, corrections by audit target)

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    table = op.create_table(
        "public_version",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("version", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_public_version")),
    )
    op.bulk_insert(table, [{"id": 1, "version": 1}])
    with op.batch_alter_table("updates", schema=None) as batch_op:
        batch_op.create_index("ix_updates_published_at", ["published_at"], unique=False)
        batch_op.create_index("ix_updates_next_step_at", ["next_step_at"], unique=False)
    with op.batch_alter_table("audit_log", schema=None) as batch_op:
        batch_op.create_index("ix_audit_log_target", ["target"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("audit_log", schema=None) as batch_op:
        batch_op.drop_index("ix_audit_log_target")
    with op.batch_alter_table("updates", schema=None) as batch_op:
        batch_op.drop_index("ix_updates_next_step_at")
        batch_op.drop_index("ix_updates_published_at")
    op.drop_table("public_version")
