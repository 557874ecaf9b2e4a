"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "audit_log",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("actor", sa.String(length=200), nullable=False),
        sa.Column("action", sa.String(length=64), nullable=False),
        sa.Column("target", sa.String(length=200), nullable=False),
        sa.Column("before", sa.JSON(), nullable=True),
        sa.Column("after", sa.JSON(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_log")),
    )
    with op.batch_alter_table("audit_log", schema=None) as batch_op:
        batch_op.create_index("ix_audit_log_at", ["at"], unique=False)

    op.create_table(
        "demands",
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("texts", sa.JSON(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_demands")),
    )
    op.create_table(
        "meta",
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_meta")),
    )
    op.create_table(
        "processed_events",
        sa.Column("platform", sa.String(length=16), nullable=False),
        sa.Column("event_id", sa.String(length=128), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("platform", "event_id", name=op.f("pk_processed_events")),
    )
    op.create_table(
        "subscriptions",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("platform", sa.String(length=16), nullable=False),
        sa.Column("workspace", sa.String(length=64), nullable=False),
        sa.Column("channel", sa.String(length=64), nullable=False),
        sa.Column("label", sa.String(length=200), nullable=False),
        sa.Column("language", sa.String(length=8), nullable=False),
        sa.Column("urgencies", sa.String(length=64), nullable=False),
        sa.Column("briefing_time", sa.String(length=5), nullable=True),
        sa.Column("timezone", sa.String(length=64), nullable=False),
        sa.Column("briefing_days", sa.String(length=16), nullable=False),
        sa.Column("quiet_start", sa.String(length=5), nullable=True),
        sa.Column("quiet_end", sa.String(length=5), nullable=True),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("broken_reason", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_subscriptions")),
        sa.UniqueConstraint("platform", "workspace", "channel", name="uq_subscriptions_address"),
    )
    op.create_table(
        "updates",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("seed_key", sa.String(length=120), nullable=True),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("urgency", sa.String(length=16), nullable=False),
        sa.Column("state", sa.String(length=24), nullable=False),
        sa.Column("texts", sa.JSON(), nullable=False),
        sa.Column("next_step_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("author", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("publish_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("published_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("approved_by", sa.String(length=200), nullable=True),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("retracted_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("retracted_by", sa.String(length=200), nullable=True),
        sa.Column("retraction_reason", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_updates")),
        sa.UniqueConstraint("seed_key", name=op.f("uq_updates_seed_key")),
    )
    with op.batch_alter_table("updates", schema=None) as batch_op:
        batch_op.create_index("ix_updates_state_published", ["state", "published_at"], unique=False)

    op.create_table(
        "briefing_runs",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("subscription_id", sa.Integer(), nullable=False),
        sa.Column("local_date", sa.Date(), nullable=False),
        sa.Column("scheduled_for", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("outcome", sa.String(length=16), nullable=False),
        sa.Column("delivery_id", sa.String(length=25), nullable=True),
        sa.ForeignKeyConstraint(
            ["subscription_id"],
            ["subscriptions.id"],
            name=op.f("fk_briefing_runs_subscription_id_subscriptions"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_briefing_runs")),
        sa.UniqueConstraint("subscription_id", "local_date", name="uq_briefing_runs_sub_date"),
    )
    op.create_table(
        "deliveries",
        sa.Column("id", sa.String(length=25), nullable=False),
        sa.Column("dedupe_key", sa.String(length=200), nullable=False),
        sa.Column("subscription_id", sa.Integer(), nullable=False),
        sa.Column("platform", sa.String(length=16), nullable=False),
        sa.Column("action", sa.String(length=16), nullable=False),
        sa.Column("update_id", sa.Integer(), nullable=True),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("not_before", sa.DateTime(timezone=True), nullable=False),
        sa.Column("claimed_by", sa.String(length=64), nullable=True),
        sa.Column("claimed_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("platform_message_id", sa.String(length=128), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("payload", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["subscription_id"],
            ["subscriptions.id"],
            name=op.f("fk_deliveries_subscription_id_subscriptions"),
        ),
        sa.ForeignKeyConstraint(
            ["update_id"], ["updates.id"], name=op.f("fk_deliveries_update_id_updates")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_deliveries")),
        sa.UniqueConstraint("dedupe_key", name=op.f("uq_deliveries_dedupe_key")),
    )
    with op.batch_alter_table("deliveries", schema=None) as batch_op:
        batch_op.create_index("ix_deliveries_due", ["state", "not_before"], unique=False)
        batch_op.create_index(
            "ix_deliveries_update", ["update_id", "subscription_id"], unique=False
        )

    op.create_table(
        "demand_events",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("demand_key", sa.String(length=64), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("offer", sa.JSON(), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("recorded_by", sa.String(length=200), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["demand_key"], ["demands.key"], name=op.f("fk_demand_events_demand_key_demands")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_demand_events")),
    )
    with op.batch_alter_table("demand_events", schema=None) as batch_op:
        batch_op.create_index("ix_demand_events_key_at", ["demand_key", "at"], unique=False)

    op.create_table(
        "update_revisions",
        sa.Column("update_id", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("texts", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("urgency", sa.String(length=16), nullable=False),
        sa.Column("next_step_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("editor", sa.String(length=200), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["update_id"], ["updates.id"], name=op.f("fk_update_revisions_update_id_updates")
        ),
        sa.PrimaryKeyConstraint("update_id", "number", name=op.f("pk_update_revisions")),
    )


def downgrade() -> None:
    op.drop_table("update_revisions")
    with op.batch_alter_table("demand_events", schema=None) as batch_op:
        batch_op.drop_index("ix_demand_events_key_at")

    op.drop_table("demand_events")
    with op.batch_alter_table("deliveries", schema=None) as batch_op:
        batch_op.drop_index("ix_deliveries_update")
        batch_op.drop_index("ix_deliveries_due")

    op.drop_table("deliveries")
    op.drop_table("briefing_runs")
    with op.batch_alter_table("updates", schema=None) as batch_op:
        batch_op.drop_index("ix_updates_state_published")

    op.drop_table("updates")
    op.drop_table("subscriptions")
    op.drop_table("processed_events")
    op.drop_table("meta")
    op.drop_table("demands")
    with op.batch_alter_table("audit_log", schema=None) as batch_op:
        batch_op.drop_index("ix_audit_log_at")

    op.drop_table("audit_log")
