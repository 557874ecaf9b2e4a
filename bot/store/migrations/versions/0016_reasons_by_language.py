"""A correction's or retraction's reason in each campaign language: `updates.
retraction_reasons` and `update_revisions.reasons` (JSON, language -> text). The single
`retraction_reason` and `reason` stay: they hold the main language's, and rows written
before this revision are read as that language's only.

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("updates", sa.Column("retraction_reasons", sa.JSON, nullable=True))
    op.add_column("update_revisions", sa.Column("reasons", sa.JSON, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("update_revisions") as batch:
        batch.drop_column("reasons")
    with op.batch_alter_table("updates") as batch:
        batch.drop_column("retraction_reasons")
