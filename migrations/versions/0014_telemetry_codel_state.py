"""Samples keep CoDel's state at the reading: `codel_dropping` and `codel_count`.

The poller reads a codel slice's registers `codel_dropping` (bit<1>) and `codel_count`
(bit<32>) with the virtual queue's, where the switch can read registers (the emulator; BMv2
cannot, p4lang/PI#376). Two nullable columns keep them: NULL for the slices of other schemes,
on switches that cannot read registers, in minute rows (a state at an instant does not add
up) and in the rows stored before. A CHECK holds them both NULL or both set, the count not
negative.

Downgrade drops the columns, and with them the CoDel states stored since (nothing else
derives from them).

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-28 10:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_CHECK = "ck_telemetry_samples_codel_state"


def upgrade() -> None:
    op.add_column("telemetry_samples", sa.Column("codel_dropping", sa.Boolean(), nullable=True))
    op.add_column("telemetry_samples", sa.Column("codel_count", sa.BigInteger(), nullable=True))
    op.create_check_constraint(
        op.f(_CHECK),
        "telemetry_samples",
        "(codel_dropping IS NULL) = (codel_count IS NULL) AND codel_count >= 0",
    )


def downgrade() -> None:
    op.drop_constraint(op.f(_CHECK), "telemetry_samples", type_="check")
    op.drop_column("telemetry_samples", "codel_count")
    op.drop_column("telemetry_samples", "codel_dropping")
