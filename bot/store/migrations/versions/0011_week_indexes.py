"""Indexes for "what changed this week" (the morning briefing's read): updates by when they
were retracted, revisions by when they were made, so the read costs the week, not the
campaign's whole history

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-30
"""

from __future__ import annotations

from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_updates_retracted_at", "updates", ["retracted_at"])
    op.create_index("ix_update_revisions_created_at", "update_revisions", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_update_revisions_created_at", table_name="update_revisions")
    op.drop_index("ix_updates_retracted_at", table_name="updates")
