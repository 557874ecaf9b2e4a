"""stale translations: a language's text written before another language's was edited

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "stale_texts",
        sa.Column("target", sa.String(length=80), nullable=False),
        sa.Column("language", sa.String(length=16), nullable=False),
        sa.Column("since", sa.DateTime(timezone=True), nullable=False),
        sa.Column("edited", sa.String(length=80), nullable=False),
        sa.Column("editor", sa.String(length=200), nullable=False),
        sa.PrimaryKeyConstraint("target", "language", name=op.f("pk_stale_texts")),
    )


def downgrade() -> None:
    op.drop_table("stale_texts")
