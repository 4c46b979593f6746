"""A sample cannot be stored twice: `telemetry_polls`, one row per stored poll of a switch,
whose time spans may not overlap.

Two pollers reading one switch would each store the counts of overlapping intervals: the
same traffic twice. The sink stores every poll's samples in one transaction with a row of
`telemetry_polls` (switch, reading time `t`, `interval_s` since the poller's previous poll of
that switch); an exclusion constraint (GiST, `btree_gist` for the `=` on the switch) refuses a
poll whose span's second half, `(t - interval_s / 2, t]`, overlaps another's of the same
switch, and the samples go with it. Half, not all: one poller's consecutive polls abut (each
interval starts where the previous one ended, measured on a monotonic clock while `t` is the
wall clock, so they may overlap by microseconds), while two pollers that both read a switch
every period produce overlapping second halves within a period (docs/telemetry.md).

Why a table of polls rather than the constraint on `telemetry_samples` itself: a GiST entry
per sample made the COPY of a 4,096-slice batch 3.3 times slower (179 ms against 55 ms), one
per poll costs nothing; and an exclusion constraint on a range of `t` could not stay on a
table partitioned by time.

`telemetry_poll_span(t, interval_s)` is declared IMMUTABLE: an index expression must be, and
`timestamptz - interval` is only STABLE because days and months depend on the time zone; an
interval of seconds alone does not.

Downgrade drops the table and the function (the extension stays: other objects may use it).

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-27 01:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("CREATE EXTENSION IF NOT EXISTS btree_gist")
    op.execute(
        """
        CREATE FUNCTION telemetry_poll_span(t timestamptz, interval_s double precision)
        RETURNS tstzrange LANGUAGE sql IMMUTABLE PARALLEL SAFE
        RETURN tstzrange(t - make_interval(secs => interval_s / 2), t, '(]')
        """
    )
    op.create_table(
        "telemetry_polls",
        sa.Column("switch_id", sa.Integer(), nullable=False),
        sa.Column("t", sa.DateTime(timezone=True), nullable=False),
        sa.Column("interval_s", sa.Double(), nullable=False),
        sa.CheckConstraint("interval_s > 0", name=op.f("ck_telemetry_polls_interval_positive")),
        sa.PrimaryKeyConstraint("switch_id", "t", name=op.f("pk_telemetry_polls")),
    )
    op.execute(
        """
        ALTER TABLE telemetry_polls ADD CONSTRAINT ex_telemetry_polls_no_overlap
        EXCLUDE USING gist (switch_id WITH =, telemetry_poll_span(t, interval_s) WITH &&)
        """
    )


def downgrade() -> None:
    op.drop_table("telemetry_polls")
    op.execute("DROP FUNCTION telemetry_poll_span(timestamptz, double precision)")
