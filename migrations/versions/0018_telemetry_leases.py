"""Pollers share the switches: `telemetry_pollers` (who is running, until when) and
`telemetry_leases` (which poller polls which switch, until when).

Every `sliceportal poller` renews its membership and its leases each lease round (a third of
the lease) on the database's clock; the live pollers split the switches by rendezvous hashing
with a cap (`domain.telemetry.assign_switches`), and a switch changes hands only when its
lease is released or expired (docs/telemetry.md "Pollers share the switches"). They replace
the advisory lock that let one poller work per database.

Downgrade drops both tables: they hold only the current, expiring state.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-27 01:10:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "telemetry_pollers",
        sa.Column("poller_id", sa.Text(), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("poller_id", name=op.f("pk_telemetry_pollers")),
    )
    op.create_table(
        "telemetry_leases",
        sa.Column("switch_id", sa.Integer(), nullable=False),
        sa.Column("poller_id", sa.Text(), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["switch_id"],
            ["switches.id"],
            name=op.f("fk_telemetry_leases_switch_id_switches"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("switch_id", name=op.f("pk_telemetry_leases")),
    )


def downgrade() -> None:
    op.drop_table("telemetry_leases")
    op.drop_table("telemetry_pollers")
