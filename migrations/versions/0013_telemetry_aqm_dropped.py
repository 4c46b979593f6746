"""Samples count the packets and bytes the slice's queue management dropped (`aqm_dropped`).

CoDel drops a packet before the burst limit would (the P4 counter `aqm_dropped`), so a
sample has a third cause of drops beside the burst limit (`vq_dropped`) and the real queue
(`real_dropped`). Two BIGINT columns, `aqm_dropped_packets` and `aqm_dropped_bytes`, join the
counts of `telemetry_samples`. Rows stored before are 0: no scheme dropped packets there then.
The columns are added with that default, which is then dropped: every writer gives all counts.

Downgrade drops the columns, and with them the CoDel drops of the samples stored since (the
former table has nowhere to keep them apart from the other causes).

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-27 09:10:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_COLUMNS = ("aqm_dropped_packets", "aqm_dropped_bytes")


def upgrade() -> None:
    for column in _COLUMNS:
        op.add_column(
            "telemetry_samples",
            sa.Column(column, sa.BigInteger(), nullable=False, server_default="0"),
        )
        op.alter_column("telemetry_samples", column, server_default=None)


def downgrade() -> None:
    for column in reversed(_COLUMNS):
        op.drop_column("telemetry_samples", column)
