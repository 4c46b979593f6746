"""Samples keep ABC's state at the reading: `abc`, the slice's average activity and its
busiest aggregates.

The poller reads an abc slice's meter registers (`abc_meter_last`, `abc_meter_s`,
`abc_meter_n`: 64 aggregate slots) and its average (`abc_a_avg` with `abc_average_last` and
`abc_average_n`) with the virtual queue's, where the switch can read registers (the emulator;
BMv2 cannot, p4lang/PI#376), and turns them into a small document
(`domain.telemetry.abc_json`): `{average_activity, active_slots, aggregates: [{slot,
rate_bps, activity, idle_s}, ...]}`, the busiest five slots first. One nullable JSONB column
keeps it: NULL for the slices of other schemes, on switches that cannot read registers, in
minute rows (a state at an instant does not add up) and in the rows stored before. A CHECK
holds it an object and absent from minute rows.

Downgrade drops the column, and with it the ABC states stored since (nothing else derives
from them).

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-29 12:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_CHECK = "ck_telemetry_samples_abc_state"


def upgrade() -> None:
    op.add_column("telemetry_samples", sa.Column("abc", postgresql.JSONB(), nullable=True))
    op.create_check_constraint(
        op.f(_CHECK),
        "telemetry_samples",
        "abc IS NULL OR (jsonb_typeof(abc) = 'object' AND NOT downsampled)",
    )


def downgrade() -> None:
    op.drop_constraint(op.f(_CHECK), "telemetry_samples", type_="check")
    op.drop_column("telemetry_samples", "abc")
