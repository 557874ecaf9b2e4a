"""The web desk signs people in one by one: sign-in links e-mailed to the addresses under
`[admins.web]` (`desk_links`) and the sessions they open (`desk_sessions`). Only the
SHA-256 of each token is kept, so a copy of the database signs nobody in.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from bot.store.schema import UTCDateTime

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "desk_links",
        sa.Column("digest", sa.String(64), primary_key=True),
        sa.Column("person", sa.String(254), nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("expires_at", UTCDateTime, nullable=False),
        sa.Column("used_at", UTCDateTime, nullable=True),
    )
    op.create_index("ix_desk_links_person_created", "desk_links", ["person", "created_at"])
    op.create_table(
        "desk_sessions",
        sa.Column("digest", sa.String(64), primary_key=True),
        sa.Column("person", sa.String(254), nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("seen_at", UTCDateTime, nullable=False),
        sa.Column("expires_at", UTCDateTime, nullable=False),
    )
    op.create_index("ix_desk_sessions_person", "desk_sessions", ["person"])


def downgrade() -> None:
    op.drop_table("desk_sessions")
    op.drop_table("desk_links")
