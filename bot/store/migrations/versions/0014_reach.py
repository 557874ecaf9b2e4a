"""Reach families where they are: WhatsApp numbers and browser push subscriptions are
people too (`subscribers`).

A push subscription is its endpoint (the address: a URL that can be longer than an e-mail
address, hence 2048 characters) and the keys its messages are encrypted to (`keys`). A
WhatsApp number carries when the person last wrote (`heard_at`): WhatsApp takes free-form
messages only within 24 hours of it, approved templates otherwise.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from bot.store.schema import UTCDateTime

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("subscribers", sa.Column("keys", sa.JSON, nullable=True))
    op.add_column("subscribers", sa.Column("heard_at", UTCDateTime, nullable=True))
    if op.get_bind().dialect.name == "postgresql":  # SQLite does not enforce a length
        op.alter_column(
            "subscribers",
            "address",
            type_=sa.String(2048),
            existing_type=sa.String(320),
            existing_nullable=False,
        )


def downgrade() -> None:
    # People reached by WhatsApp or a browser go first: the older schema cannot hold them.
    op.execute("DELETE FROM subscribers WHERE kind IN ('whatsapp', 'push')")
    if op.get_bind().dialect.name == "postgresql":
        op.alter_column(
            "subscribers",
            "address",
            type_=sa.String(320),
            existing_type=sa.String(2048),
            existing_nullable=False,
        )
    with op.batch_alter_table("subscribers") as batch:
        batch.drop_column("heard_at")
        batch.drop_column("keys")
