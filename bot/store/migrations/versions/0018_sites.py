"""Audiences: sites in groups (`sites`, `site_groups`), whom an update addresses
(`updates.audience`) and what a subscription follows (`subscriptions.follows`, with one
`subscription_follows` row per code for the recipients query). Everything existing keeps
addressing and following everyone.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from bot.store.schema import UTCDateTime

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "site_groups",
        sa.Column("code", sa.String(32), primary_key=True),
        sa.Column("names", sa.JSON, nullable=False),
        sa.Column("example", sa.Boolean, nullable=False),
        sa.Column("updated_at", UTCDateTime, nullable=False),
    )
    op.create_table(
        "sites",
        sa.Column("code", sa.String(32), primary_key=True),
        sa.Column(
            "group_code",
            sa.String(32),
            sa.ForeignKey("site_groups.code", name="fk_sites_group_code_site_groups"),
            nullable=False,
        ),
        sa.Column("names", sa.JSON, nullable=False),
        sa.Column("address", sa.Text, nullable=False),
        sa.Column("example", sa.Boolean, nullable=False),
        sa.Column("updated_at", UTCDateTime, nullable=False),
    )
    op.create_index("ix_sites_group_code", "sites", ["group_code"])
    op.create_table(
        "subscription_follows",
        sa.Column(
            "subscription_id",
            sa.Integer,
            sa.ForeignKey(
                "subscriptions.id", name="fk_subscription_follows_subscription_id_subscriptions"
            ),
            primary_key=True,
        ),
        sa.Column("kind", sa.String(8), primary_key=True),
        sa.Column("code", sa.String(32), primary_key=True),
    )
    op.create_index(
        "ix_subscription_follows_code",
        "subscription_follows",
        ["kind", "code", "subscription_id"],
    )
    op.add_column("updates", sa.Column("audience", sa.JSON, nullable=True))
    op.add_column("subscriptions", sa.Column("follows", sa.JSON, nullable=True))


def downgrade() -> None:
    op.drop_table("subscription_follows")
    op.drop_table("sites")
    op.drop_table("site_groups")
    # ALTER TABLE ... DROP COLUMN (SQLite 3.35+), not a batch: rebuilding `subscriptions` or
    # `updates` would drop a table the deliveries still refer to.
    op.drop_column("subscriptions", "follows")
    op.drop_column("updates", "audience")
