"""signups: people who signed up for e-mail and text messages, and delivery receipts

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "subscribers",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("key", sa.String(length=24), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("address", sa.String(length=320), nullable=False),
        sa.Column("language", sa.String(length=8), nullable=False),
        sa.Column("choice", sa.String(length=16), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("subscription_id", sa.Integer(), nullable=True),
        sa.Column("manage_token", sa.String(length=64), nullable=False),
        sa.Column("signed_up_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("signed_up_via", sa.String(length=64), nullable=False),
        sa.Column("confirmed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("confirmed_via", sa.String(length=64), nullable=True),
        sa.Column("confirm_digest", sa.String(length=64), nullable=True),
        sa.Column("confirm_expires", sa.DateTime(timezone=True), nullable=True),
        sa.Column("requested", sa.JSON(), nullable=True),
        sa.Column("last_confirmation_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("confirmations_today", sa.Integer(), nullable=False),
        sa.Column("confirmations_since", sa.DateTime(timezone=True), nullable=True),
        sa.Column("broken_reason", sa.Text(), nullable=True),
        sa.Column("broken_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["subscription_id"],
            ["subscriptions.id"],
            name=op.f("fk_subscribers_subscription_id_subscriptions"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_subscribers")),
        sa.UniqueConstraint("key", name=op.f("uq_subscribers_key")),
        sa.UniqueConstraint("manage_token", name=op.f("uq_subscribers_manage_token")),
        sa.UniqueConstraint("confirm_digest", name=op.f("uq_subscribers_confirm_digest")),
        sa.UniqueConstraint("kind", "address", name="uq_subscribers_address"),
    )
    with op.batch_alter_table("subscribers", schema=None) as batch_op:
        batch_op.create_index(
            "ix_subscribers_state_signed_up", ["state", "signed_up_at"], unique=False
        )
    op.create_table(
        "receipts",
        sa.Column("delivery_id", sa.String(length=25), nullable=False),
        sa.Column("platform", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("error", sa.String(length=64), nullable=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("delivery_id", name=op.f("pk_receipts")),
    )


def downgrade() -> None:
    op.drop_table("receipts")
    with op.batch_alter_table("subscribers", schema=None) as batch_op:
        batch_op.drop_index("ix_subscribers_state_signed_up")
    op.drop_table("subscribers")
