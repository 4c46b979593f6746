"""Time partitions of `telemetry_samples` (migration 0020, docs/telemetry.md "Partitions"):
made ahead, downsampled and expired whole, so that neither rewrites nor vacuums rows.

`telemetry_samples` is partitioned by LIST (downsampled) into `telemetry_samples_raw` (raw
samples, by RANGE (t) in partitions of `telemetry_partition_s`, an hour by default) and
`telemetry_samples_minute` (minute rows, by RANGE (t) a day each). A partition holds
`(start, end]` like a sample's interval, so it is declared FROM start + 1 µs TO end + 1 µs; the
minute rows of a raw partition then lie within its range. Each has a DEFAULT partition: a
sample outside every partition (written before maintenance made its partition, or far off in
time) is stored there rather than refused, and moves to its partition when that is made.

- Ahead: the poller (and the downsampling task) make the raw partitions of the current span
  and the `PARTITIONS_AHEAD` next, and the minute partitions of their days.
- Downsampling: a raw partition wholly older than `telemetry_downsample_after_s` becomes its
  minute rows (one `INSERT … SELECT … GROUP BY`) and is dropped, in one transaction; the raw
  DEFAULT partition's few rows are moved by `DELETE … RETURNING` as before.
- Retention: partitions wholly older than `telemetry_retention_s` are dropped; the DEFAULT
  partitions' old rows are deleted.

Dropping or attaching a partition takes a brief ACCESS EXCLUSIVE lock on its parent (attach:
on the DEFAULT partition), which waits for the statements in progress on it and holds up those
that come after: each such step runs in its own transaction with `LOCK_TIMEOUT`, and one that
times out is tried again at the next run. One maintainer runs at a time (an advisory lock);
making partitions ahead has a lock of its own, so a long downsampling never holds up a poller.
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass

import sqlalchemy as sa

from sliceportal.db import samples as store

logger = logging.getLogger(__name__)

RAW = "telemetry_samples_raw"
MINUTE = "telemetry_samples_minute"
MINUTE_SPAN = dt.timedelta(days=1)
"""Minute rows are 60 times fewer than raw samples at 1 Hz: a day per partition."""
PARTITIONS_AHEAD = 2
"""Raw partitions made beyond the current one: time for maintenance to fail and be noticed
before samples land in the DEFAULT partition."""
LOCK_TIMEOUT = "2s"
"""Longest wait for the lock that attaches or drops a partition; the statements queued behind
that wait (the poller's COPY, history queries) wait as long at most."""
MAINTENANCE_LOCK = 0x511CE_0019
"""Advisory lock of downsampling and retention (one maintainer at a time)."""
CREATION_LOCK = 0x511CE_0020
"""Advisory lock of making partitions (one maker at a time)."""
TICK = dt.timedelta(microseconds=1)
EPOCH = store.EPOCH


@dataclass(frozen=True, order=True)
class Partition:
    """One range partition: rows with ``start < t <= end``."""

    start: dt.datetime
    end: dt.datetime
    name: str


_BOUNDS = sa.text(
    r"""
SELECT m[1]::timestamptz - interval '1 microsecond' AS start,
       m[2]::timestamptz - interval '1 microsecond' AS end, c.relname AS name
FROM pg_inherits i
JOIN pg_class c ON c.oid = i.inhrelid
CROSS JOIN LATERAL regexp_match(pg_get_expr(c.relpartbound, c.oid),
                                $$FROM \('([^']+)'\) TO \('([^']+)'\)$$) AS m
WHERE i.inhparent = to_regclass(:parent) AND m IS NOT NULL
ORDER BY 1
"""
)


def partitions(connection: sa.Connection, parent: str) -> list[Partition]:
    """The range partitions of ``parent`` (RAW or MINUTE), oldest first, from the catalog."""
    rows = connection.execute(_BOUNDS, {"parent": parent}).all()
    return [Partition(row.start, row.end, row.name) for row in rows]


def span_start(moment: dt.datetime, span: dt.timedelta) -> dt.datetime:
    """The start of the span ``(start, start + span]``, aligned on the epoch, holding it."""
    return EPOCH + (moment - TICK - EPOCH) // span * span


def _gaps(
    start: dt.datetime, end: dt.datetime, taken: list[Partition]
) -> list[tuple[dt.datetime, dt.datetime]]:
    """The parts of ``(start, end]`` no partition in ``taken`` (sorted) holds."""
    gaps = []
    for partition in taken:
        if partition.end <= start:
            continue
        if partition.start >= end:
            break
        if partition.start > start:
            gaps.append((start, partition.start))
        start = max(start, partition.end)
    if start < end:
        gaps.append((start, end))
    return gaps


def _literal(moment: dt.datetime) -> str:
    """A partition bound: the start or end of ``(start, end]`` as `[from, to)` takes it."""
    return f"'{(moment + TICK).astimezone(dt.UTC).isoformat()}'"


def _make(connection: sa.Connection, parent: str, start: dt.datetime, end: dt.datetime) -> str:
    """Make the partition ``(start, end]`` of ``parent``: a table like it, given the rows of
    the DEFAULT partition that belong there, then attached (which, unlike `CREATE TABLE …
    PARTITION OF`, leaves the parent open to reads and writes)."""
    name = f"{parent}_{start.astimezone(dt.UTC):%Y%m%d_%H%M%S}"
    connection.execute(
        sa.text(f"CREATE TABLE {name} (LIKE {parent} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)")
    )
    connection.execute(
        sa.text(
            f"WITH moved AS (DELETE FROM {parent}_default WHERE t > :start AND t <= :end "
            f"RETURNING *) INSERT INTO {name} SELECT * FROM moved"
        ),
        {"start": start, "end": end},
    )
    connection.execute(
        sa.text(
            f"ALTER TABLE {parent} ATTACH PARTITION {name} "
            f"FOR VALUES FROM ({_literal(start)}) TO ({_literal(end)})"
        )
    )
    return name


def ensure_partitions(
    engine: sa.Engine, parent: str, start: dt.datetime, end: dt.datetime, span: dt.timedelta
) -> list[str]:
    """Make the partitions of ``parent`` missing in ``(start, end]`` (widened to whole spans
    aligned on the epoch; a part held by a partition of another span, made before the span
    was changed, is left to it). Returns the names made."""
    start, end = span_start(start, span), span_start(end, span) + span
    made = []
    with engine.begin() as connection:
        connection.execute(sa.text(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'"))
        connection.execute(sa.select(sa.func.pg_advisory_xact_lock(CREATION_LOCK)))
        taken = partitions(connection, parent)
        moment = start
        while moment < end:
            for gap_start, gap_end in _gaps(moment, moment + span, taken):
                made.append(_make(connection, parent, gap_start, gap_end))
            moment += span
    if made:
        logger.info("telemetry partitions made: %s", ", ".join(made))
    return made


def ensure_ahead(engine: sa.Engine, now: dt.datetime, span: dt.timedelta) -> dt.datetime:
    """Make the raw partitions of the span holding ``now`` and of the `PARTITIONS_AHEAD`
    next ones, and the minute partitions of their days. Returns when the last one ends."""
    end = span_start(now, span) + (PARTITIONS_AHEAD + 1) * span
    ensure_partitions(engine, RAW, now, end, span)
    ensure_partitions(engine, MINUTE, now, end, MINUTE_SPAN)
    return end


def _maintaining(connection: sa.Connection) -> bool:
    """Take the maintenance lock for this transaction; False when another maintainer has it."""
    connection.execute(sa.text(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'"))
    return bool(connection.scalar(sa.select(sa.func.pg_try_advisory_xact_lock(MAINTENANCE_LOCK))))


def _exists(connection: sa.Connection, name: str) -> bool:
    return connection.scalar(sa.select(sa.func.to_regclass(name))) is not None


def downsample(engine: sa.Engine, now: dt.datetime, after_s: int, span: dt.timedelta) -> int:
    """Fold each raw partition wholly older than ``after_s`` into minute rows and drop it,
    one transaction each; then the raw DEFAULT partition's samples of whole minutes older
    than ``after_s``, and the polls as old. Makes the partitions ahead first. Returns the
    minute rows written; a partition whose drop waited past `LOCK_TIMEOUT` is left for the
    next run (its minute rows rolled back with it)."""
    ensure_ahead(engine, now, span)
    cutoff = store.minute_cutoff(now, after_s)
    with engine.connect() as connection:
        old = [p for p in partitions(connection, RAW) if p.end <= cutoff]
    written = 0
    for partition in old:
        ensure_partitions(engine, MINUTE, partition.start, partition.end, MINUTE_SPAN)
        try:
            with engine.begin() as connection:
                if not _maintaining(connection) or not _exists(connection, partition.name):
                    continue
                rows = store.fold_into_minutes(connection, partition.name)
                connection.execute(sa.text(f"DROP TABLE {partition.name}"))
            written += rows
        except sa.exc.OperationalError as exc:
            logger.warning("raw partition %s not downsampled yet: %s", partition.name, exc)
    with engine.begin() as connection:
        if _maintaining(connection):
            written += store.fold_stragglers(connection, f"{RAW}_default", cutoff)
            store.forget_polls(connection, cutoff)
    return written


def expire(engine: sa.Engine, now: dt.datetime, retention_s: int) -> int:
    """Drop the partitions wholly older than ``retention_s``, one transaction each, and
    delete the DEFAULT partitions' rows as old. Returns the partitions dropped."""
    before = now - dt.timedelta(seconds=retention_s)
    with engine.connect() as connection:
        old = [p for parent in (RAW, MINUTE) for p in partitions(connection, parent)]
    dropped = 0
    for partition in (p for p in old if p.end < before):
        try:
            with engine.begin() as connection:
                if _maintaining(connection) and _exists(connection, partition.name):
                    connection.execute(sa.text(f"DROP TABLE {partition.name}"))
                    dropped += 1
        except sa.exc.OperationalError as exc:
            logger.warning("partition %s not dropped yet: %s", partition.name, exc)
    with engine.begin() as connection:
        if _maintaining(connection):
            for parent in (RAW, MINUTE):
                connection.execute(
                    sa.text(f"DELETE FROM {parent}_default WHERE t < :before"), {"before": before}
                )
    return dropped
