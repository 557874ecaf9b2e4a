"""public changes: which updates each public version touched (none named: everything), so
the static site re-publishes only the pages a change touches

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "public_changes",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("version", sa.BigInteger(), nullable=False),
        sa.Column("update_id", sa.Integer(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_public_changes")),
    )
    with op.batch_alter_table("public_changes", schema=None) as batch_op:
        batch_op.create_index("ix_public_changes_version", ["version"], unique=False)


def downgrade() -> None:
    op.drop_table("public_changes")
