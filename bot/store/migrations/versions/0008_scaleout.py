"""deliveries.in_doubt_since: when a copy's send outcome became unknown (a lease that lapsed
or was taken over, a send that timed out), so the dispatcher looks for it on the platform
before sending it again

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from bot.store.schema import UTCDateTime

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("deliveries", schema=None) as batch_op:
        batch_op.add_column(sa.Column("in_doubt_since", UTCDateTime(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("deliveries", schema=None) as batch_op:
        batch_op.drop_column("in_doubt_since")
