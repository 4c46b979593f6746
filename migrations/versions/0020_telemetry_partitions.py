"""Samples are partitioned by time: `telemetry_samples` is partitioned by LIST (downsampled)
into `telemetry_samples_raw` and `telemetry_samples_minute`, each partitioned by RANGE (t),
raw samples by the hour and minute rows by the day, each with a DEFAULT partition.

Why: at fleet volume (100,000 samples a second) downsampling and retention by `DELETE` rewrite
and vacuum hundreds of millions of rows an hour; by partition they are an `INSERT … SELECT`
of the minute sums and a `DROP TABLE` (`db.partitions`, docs/telemetry.md "Partitions").

A partition holds `(start, end]` like a sample's interval, a minute and a history bucket:
PostgreSQL's range bounds are `[from, to)`, so a partition is declared FROM start + 1 µs TO
end + 1 µs (timestamps have microsecond resolution). The minute rows of an hour's samples then
lie in the same hour and day. The key and every CHECK, the BRIN index and the column order are
those of the table before (`LIKE … INCLUDING DEFAULTS INCLUDING CONSTRAINTS`); both partition
keys, `downsampled` and `t`, are part of the primary key already.

The rows stored are copied into partitions made for them (one per hour of raw samples, one
per day of minute rows): a rewrite of the table, about a minute per 10 M rows. The partitions
ahead are made by the poller and the maintenance tasks, not here (the span is a setting).

Downgrade copies the rows back into one table of the former definition.

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-29 06:00:00
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

KEY = "slice_id, t, switch_id, downsampled, hist_target"
RAW_SPAN = dt.timedelta(hours=1)
"""`Settings.telemetry_partition_s` by default, as of this migration."""
MINUTE_SPAN = dt.timedelta(days=1)
"""`db.partitions.MINUTE_SPAN`, as of this migration."""
TICK = dt.timedelta(microseconds=1)
_BINS = """
SELECT DISTINCT date_bin(CAST(:span AS interval), t - interval '1 microsecond',
                         TIMESTAMPTZ '1970-01-01 00:00:00+00') AS start
FROM {table} WHERE downsampled = :downsampled ORDER BY start
"""


def _copy_of(source: str, target: str, partition_by: str) -> None:
    """Create `target` as `source` is (columns, defaults, CHECKs, key, BRIN index)."""
    op.execute(
        f"CREATE TABLE {target} (LIKE {source} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)"
        f"{partition_by}"
    )
    op.execute(f"ALTER TABLE {target} ADD CONSTRAINT pk_telemetry_samples PRIMARY KEY ({KEY})")
    op.execute(f"CREATE INDEX ix_telemetry_samples_t_brin ON {target} USING brin (t)")


def _set_aside(table: str) -> None:
    """Rename the table and its key and index, freeing their names for the new table."""
    op.execute(f"ALTER TABLE telemetry_samples RENAME TO {table}")
    op.execute(f"ALTER TABLE {table} RENAME CONSTRAINT pk_telemetry_samples TO pk_{table}")
    op.execute(f"ALTER INDEX ix_telemetry_samples_t_brin RENAME TO ix_{table}_t_brin")


def _partitions_for(source: str, parent: str, span: dt.timedelta, downsampled: bool) -> None:
    """A partition `(start, start + span]` of `parent` for each `span` in which `source`
    holds rows (`db.partitions` names and bounds them the same way)."""
    starts = op.get_bind().execute(
        sa.text(_BINS.format(table=source)), {"span": span, "downsampled": downsampled}
    )
    for (start,) in starts.all():
        start = start.astimezone(dt.UTC)
        op.execute(
            f"CREATE TABLE {parent}_{start:%Y%m%d_%H%M%S} PARTITION OF {parent} "
            f"FOR VALUES FROM ('{(start + TICK).isoformat()}') "
            f"TO ('{(start + span + TICK).isoformat()}')"
        )


def upgrade() -> None:
    _set_aside("telemetry_samples_0018")
    _copy_of("telemetry_samples_0018", "telemetry_samples", " PARTITION BY LIST (downsampled)")
    for kind, downsampled, span in (("raw", False, RAW_SPAN), ("minute", True, MINUTE_SPAN)):
        parent = f"telemetry_samples_{kind}"
        op.execute(
            f"CREATE TABLE {parent} PARTITION OF telemetry_samples "
            f"FOR VALUES IN ({str(downsampled).lower()}) PARTITION BY RANGE (t)"
        )
        op.execute(f"CREATE TABLE {parent}_default PARTITION OF {parent} DEFAULT")
        _partitions_for("telemetry_samples_0018", parent, span, downsampled)
    op.execute("INSERT INTO telemetry_samples SELECT * FROM telemetry_samples_0018")
    op.execute("DROP TABLE telemetry_samples_0018")


def downgrade() -> None:
    _set_aside("telemetry_samples_partitioned")
    _copy_of("telemetry_samples_partitioned", "telemetry_samples", "")
    op.execute("INSERT INTO telemetry_samples SELECT * FROM telemetry_samples_partitioned")
    op.execute("DROP TABLE telemetry_samples_partitioned")
