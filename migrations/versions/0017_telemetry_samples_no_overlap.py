"""Raw samples of one slice on one switch cannot overlap in time: storing a sample twice (two
pollers reading the same switch) is impossible.

A raw sample counts what happened in its interval `(t - interval_s, t]`. Two pollers reading
one switch in the same period would each store the counts of overlapping intervals: the same
traffic twice. An exclusion constraint (GiST, `btree_gist` for the `=` on the ids) refuses a
raw row whose interval's second half, `(t - interval_s / 2, t]`, overlaps another raw row's of
the same slice and switch. Half, not all: consecutive samples of one poller abut (each
interval starts where the previous one ended, measured on a monotonic clock while `t` is the
wall clock, so they may overlap by microseconds), while two pollers that both read a switch
every period produce overlapping second halves within a period (docs/telemetry.md). Minute
rows (`downsampled`) are sums and are left out.

`telemetry_sample_span(t, interval_s)` is declared IMMUTABLE: an index expression must be, and
`timestamptz - interval` is only STABLE because days and months depend on the time zone; an
interval of seconds alone does not.

Downgrade drops the constraint and the function (the extension stays: other objects may use
it).

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-27 01:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_CONSTRAINT = "ex_telemetry_samples_no_overlap"


def upgrade() -> None:
    op.execute("CREATE EXTENSION IF NOT EXISTS btree_gist")
    op.execute(
        """
        CREATE FUNCTION telemetry_sample_span(t timestamptz, interval_s double precision)
        RETURNS tstzrange LANGUAGE sql IMMUTABLE PARALLEL SAFE
        RETURN tstzrange(t - make_interval(secs => interval_s / 2), t, '(]')
        """
    )
    op.execute(
        f"""
        ALTER TABLE telemetry_samples ADD CONSTRAINT {_CONSTRAINT}
        EXCLUDE USING gist (
            slice_id WITH =, switch_id WITH =, telemetry_sample_span(t, interval_s) WITH &&
        ) WHERE (NOT downsampled)
        """
    )


def downgrade() -> None:
    op.execute(f"ALTER TABLE telemetry_samples DROP CONSTRAINT {_CONSTRAINT}")
    op.execute("DROP FUNCTION telemetry_sample_span(timestamptz, double precision)")
