"""Samples in PostgreSQL: appended with COPY, read back over time ranges at any resolution,
and folded into one row per minute (`db.partitions` decides when, by partition).

Rows hold counts (``domain.telemetry.COLUMNS``), so every coarser view is a SUM in SQL: a
one-minute row is exactly the sum of its samples, and a history bucket of any width is the sum
of the rows in it. Rates, ratios and percentiles are computed from the sums on the way out.
Each row keeps the histogram target its histograms were counted with (``hist_target``, part of
the key): histograms on different edges cannot be added, so every sum is per target too, and a
minute or bucket in which a slice's target changed has one row per target.
"""

from __future__ import annotations

import datetime as dt
import json
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql
from sqlalchemy.orm import Session

from sliceportal.db.models import TelemetryPoll, TelemetrySample
from sliceportal.domain import p4constants as c
from sliceportal.domain.telemetry import COLUMNS, NO_CODEL, BatchMetrics, batch_metrics

PAIR_COLUMNS = COLUMNS[: -2 * c.HIST_BUCKETS]
"""The packets-and-bytes columns; the histograms are the arrays vq_hist and rq_hist."""
HISTOGRAMS = ("vq_hist", "rq_hist")
COPY_COLUMNS = (
    "slice_id",
    "t",
    "switch_id",
    "downsampled",
    "hist_target",
    "interval_s",
    *PAIR_COLUMNS,
    *HISTOGRAMS,
    "counters_reset",
    "registers",
    "codel_dropping",
    "codel_count",
    "abc",
)
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
MINUTE = dt.timedelta(minutes=1)


@dataclass(frozen=True)
class SampleRecord:
    """A stored sample: what the slice counted on one switch in ``interval_s`` up to ``t``, its
    histograms on the edges of ``hist_target`` (vq units, or ``LEGACY_HIST_TARGET``)."""

    slice_id: int
    switch_id: int
    t: dt.datetime
    interval_s: float
    counts: tuple[int, ...]
    hist_target: int
    counters_reset: bool = False
    registers: dict[str, Any] | None = None
    downsampled: bool = False
    codel: tuple[bool, int] | None = None
    """CoDel's dropping and count at the reading: a codel slice's raw sample, where the
    switch reads registers."""
    abc: dict[str, Any] | None = None
    """ABC's state at the reading (`domain.telemetry.abc_json`): an abc slice's raw sample,
    where the switch reads registers."""


def metrics_of(records: Sequence[SampleRecord]) -> BatchMetrics:
    counts = np.array([r.counts for r in records], dtype=np.int64).reshape(len(records), -1)
    intervals = np.array([r.interval_s for r in records], dtype=np.float64)
    targets = np.array([r.hist_target for r in records], dtype=np.int64)
    return batch_metrics(counts, intervals, targets)


def sample_documents(
    records: Sequence[SampleRecord], metrics: BatchMetrics | None = None
) -> list[dict[str, Any]]:
    """The sample JSON of the API and the streams (docs/telemetry.md), as dicts; pass the
    batch's metrics when the caller has them already."""
    if not records:
        return []
    heads = [
        (
            record.t.isoformat(),
            record.slice_id,
            record.switch_id,
            record.downsampled,
            record.counters_reset,
            json.dumps(record.registers),
            _codel_json(record.codel),
            json.dumps(record.abc),
        )
        for record in records
    ]
    return [json.loads(text) for text in sample_json(heads, metrics or metrics_of(records))]


SampleHead = tuple[str, int, int, bool, bool, str, str, str]
"""What a sample says besides its metrics: t (ISO 8601), slice id, switch id, downsampled,
counters reset, its registers, CoDel's state and ABC's as JSON text ("null" when not read)."""
_SAMPLE = (
    '{"t": "%s", "slice_id": %d, "switch_id": %d, "downsampled": %s, "counters_reset": %s, '
    '%s, "registers": %s, "codel": %s, "abc": %s}'
)
_JSON_BOOL = ("false", "true")


def _codel_json(codel: tuple[bool, int] | None) -> str:
    """A record's CoDel state as its sample's ``codel`` member (`domain.telemetry.codel_json`)."""
    if codel is None:
        return "null"
    return f'{{"dropping": {_JSON_BOOL[codel[0]]}, "count": {codel[1]}}}'


def sample_json(heads: Sequence[SampleHead], metrics: BatchMetrics) -> list[str]:
    """Each sample's JSON text (docs/telemetry.md), as `json.dumps` writes it: the poller
    publishes thousands a second, and builds no dict for them (`BatchMetrics.json_members`)."""
    return [
        _SAMPLE
        % (t, slice_id, switch_id, _JSON_BOOL[down], _JSON_BOOL[reset], members, regs, codel, abc)
        for (t, slice_id, switch_id, down, reset, regs, codel, abc), members in zip(
            heads, metrics.json_members(), strict=True
        )
    ]


def insert_samples(session: Session, samples: Iterable[SampleRecord]) -> int:
    """Append samples with COPY, in the session's transaction. Returns how many were written."""
    records = list(samples)
    return _copy(
        session,
        slice_ids=[r.slice_id for r in records],
        times=[_micros(r.t) for r in records],
        switch_ids=[r.switch_id for r in records],
        downsampled=[r.downsampled for r in records],
        hist_targets=[r.hist_target for r in records],
        intervals=[r.interval_s for r in records],
        counts=np.array([r.counts for r in records], dtype=np.int64).reshape(len(records), -1),
        resets=[r.counters_reset for r in records],
        states=[
            _state(
                None if r.registers is None else json.dumps(r.registers),
                r.codel,
                None if r.abc is None else json.dumps(r.abc),
            )
            for r in records
        ],
    )


_POLL = sa.text("INSERT INTO telemetry_polls (switch_id, t, interval_s) VALUES (:s, :t, :i)")


def record_poll(session: Session, switch_id: int, t: str, interval_s: float) -> None:
    """The poll whose samples the transaction stores (`t` in ISO 8601, `interval_s` since
    the poller's previous poll of the switch). Raises IntegrityError when it overlaps another
    poll of the switch (`ex_telemetry_polls_no_overlap`): the switch was read by two pollers,
    and the transaction, samples included, must be rolled back."""
    session.execute(_POLL, {"s": switch_id, "t": t, "i": interval_s})


def insert_batch(
    session: Session,
    switch_id: int,
    t: str,
    slice_ids: Sequence[int],
    intervals: Sequence[float],
    counts: npt.NDArray[np.int64],
    hist_targets: npt.NDArray[np.int64],
    resets: Sequence[bool],
    registers: Sequence[str] | None,
    codel: npt.NDArray[np.int64] | None = None,
    abc: Sequence[str] | None = None,
) -> int:
    """`insert_samples` of one poll of one switch, from its columns (`t` in ISO 8601 with its
    zone, `registers` as JSON text, `codel` as `domain.telemetry.codel_readings`, `abc` as
    `domain.telemetry.abc_json`, "null" for none): no object per sample."""
    states = None
    if registers is not None or codel is not None or abc is not None:
        readings = [None] * len(slice_ids) if codel is None else codel.tolist()
        states = [
            _state(
                None if registers is None else registers[i],
                None
                if reading is None or reading[1] == NO_CODEL
                else (bool(reading[0]), reading[1]),
                None if abc is None or abc[i] == "null" else abc[i],
            )
            for i, reading in enumerate(readings)
        ]
    return _copy(
        session,
        slice_ids=slice_ids,
        times=_micros(dt.datetime.fromisoformat(t)),
        switch_ids=switch_id,
        downsampled=False,
        hist_targets=hist_targets,
        intervals=intervals,
        counts=counts,
        resets=resets,
        states=states,
    )


# COPY's binary format: a header, then each row as a field count and each field as its length
# and its value, big-endian (NULL: length -1), then a trailer. Every column but the last four
# has a fixed size, so a batch's rows up to counters_reset are one numpy array filled by
# columns; the four after it (registers, codel_dropping, codel_count, abc) are NULL in most
# samples (`_NO_STATE`) and appended row by row otherwise.
_HEADER = b"PGCOPY\n\xff\r\n\x00" + bytes(8)
_TRAILER = b"\xff\xff"
_PG_EPOCH = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)
_BIGINT_OID = 20
_NULL = struct.pack(">i", -1)
_NO_STATE = _NULL * 4
_STATE_BYTES = len(_NO_STATE)


def _row_type() -> np.dtype[Any]:
    """A row up to counters_reset, then the four NULLs of a sample without state."""
    fields: list[tuple[Any, ...]] = [("fields", ">i2")]
    for name, kind in (
        ("slice_id", ">i4"),
        ("t", ">i8"),
        ("switch_id", ">i4"),
        ("downsampled", "u1"),
        ("hist_target", ">i8"),
        ("interval_s", ">f8"),
        *((name, ">i8") for name in PAIR_COLUMNS),
    ):
        fields += [(f"{name}_len", ">i4"), (name, kind)]
    for name in HISTOGRAMS:
        # One dimension, no NULLs, bigint elements, HIST_BUCKETS of them from index 1.
        fields += [(f"{name}_len", ">i4"), (f"{name}_head", ">i4", (5,))]
        fields += [(name, [("len", ">i4"), ("value", ">i8")], (c.HIST_BUCKETS,))]
    fields += [("counters_reset_len", ">i4"), ("counters_reset", "u1")]
    fields += [("state", ">i4", (4,))]
    return np.dtype(fields)


_ROW = _row_type()
_TEMPLATE = np.zeros(1, _ROW)
"""A row's field count, lengths and array headers, which every row shares."""
_TEMPLATE["fields"] = len(COPY_COLUMNS)
for _name in _ROW.names or ():
    if _name.endswith("_len"):
        _TEMPLATE[_name] = _ROW[_name[: -len("_len")]].itemsize
for _name in HISTOGRAMS:
    _TEMPLATE[f"{_name}_len"] = 20 + 12 * c.HIST_BUCKETS
    _TEMPLATE[f"{_name}_head"] = (1, 0, _BIGINT_OID, c.HIST_BUCKETS, 1)
    _TEMPLATE[_name]["len"] = 8
_TEMPLATE["state"] = -1


def _micros(moment: dt.datetime) -> int:
    """A timestamptz as COPY's binary format holds it: microseconds since 2000 UTC (a time
    without zone is taken as UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return (moment - _PG_EPOCH) // dt.timedelta(microseconds=1)


def _jsonb(text: str | None) -> bytes:
    """A JSONB field: its length, format version 1 and the JSON text; or NULL."""
    if text is None:
        return _NULL
    data = text.encode()
    return struct.pack(">ib", len(data) + 1, 1) + data


def _state(registers: str | None, codel: tuple[bool, int] | None, abc: str | None) -> bytes:
    """The last four fields of a row: registers, CoDel's dropping and count, ABC's state."""
    dropping_and_count = (
        _NULL * 2 if codel is None else struct.pack(">ib iq", 1, codel[0], 8, codel[1])
    )
    return _jsonb(registers) + dropping_and_count + _jsonb(abc)


def _copy(
    session: Session,
    *,
    slice_ids: Sequence[int],
    times: int | Sequence[int],
    switch_ids: int | Sequence[int],
    downsampled: bool | Sequence[bool],
    hist_targets: Sequence[int] | npt.NDArray[np.int64],
    intervals: Sequence[float],
    counts: npt.NDArray[np.int64],
    resets: Sequence[bool],
    states: Sequence[bytes] | None,
) -> int:
    """Append rows, given by columns (a single value: the same for every row), with one COPY
    in binary format (`_ROW`): no value is formatted as text by the client nor parsed by the
    server, where text cost 8-10 µs a row in Python (bench/bench_ingest.py). Returns how many
    were written."""
    rows = np.repeat(_TEMPLATE, len(slice_ids))
    rows["slice_id"] = slice_ids
    rows["t"] = times
    rows["switch_id"] = switch_ids
    rows["downsampled"] = downsampled
    rows["hist_target"] = hist_targets
    rows["interval_s"] = intervals
    for i, name in enumerate(PAIR_COLUMNS):
        rows[name] = counts[:, i]
    for i, name in enumerate(HISTOGRAMS):
        first = len(PAIR_COLUMNS) + i * c.HIST_BUCKETS
        rows[name]["value"] = counts[:, first : first + c.HIST_BUCKETS]
    rows["counters_reset"] = resets
    data = rows.tobytes()
    if states is not None:  # the fixed part of each row, then its own state
        size, fixed = _ROW.itemsize, _ROW.itemsize - _STATE_BYTES
        data = b"".join(
            [data[i * size : i * size + fixed] + state for i, state in enumerate(states)]
        )
    raw = session.connection().connection.driver_connection
    columns = ", ".join(COPY_COLUMNS)
    with raw.cursor() as cursor:  # type: ignore[union-attr]
        with cursor.copy(f"COPY telemetry_samples ({columns}) FROM STDIN (FORMAT binary)") as copy:
            copy.write(_HEADER + data + _TRAILER)
    return len(slice_ids)


# --- Reading history --------------------------------------------------------------------------

MAX_POINTS = 10_000
"""Most buckets per switch a history request may ask for."""
AUTO_POINTS = 1000
"""Buckets per switch a history request gets when it names no resolution."""

_table = TelemetrySample.__table__
_TICK = dt.timedelta(microseconds=1)
"""Buckets are (start, end] like the intervals of the samples: binned on ``t`` minus a tick."""


def hist_sum(name: str) -> sa.ColumnElement[Any]:
    """The bucket-by-bucket sum of histogram column ``name`` over a group, as one array."""
    column = _table.c[name]
    return postgresql.array(
        [sa.cast(sa.func.sum(column[i]), sa.BigInteger) for i in range(1, c.HIST_BUCKETS + 1)]
    )


def auto_resolution(start: dt.datetime, end: dt.datetime) -> int:
    """Seconds per bucket giving at most ``AUTO_POINTS`` buckets (1: the raw samples)."""
    return max(1, -int(-(end - start).total_seconds() // AUTO_POINTS))


def _record(row: sa.Row[Any], slice_id: int) -> SampleRecord:
    m = row._mapping
    counts = (*(m[name] for name in PAIR_COLUMNS), *m["vq_hist"], *m["rq_hist"])
    return SampleRecord(
        slice_id=slice_id,
        switch_id=m["switch_id"],
        t=m["t"],
        interval_s=m["interval_s"],
        counts=tuple(int(v) for v in counts),
        hist_target=m["hist_target"],
        counters_reset=m["counters_reset"],
        registers=m.get("registers"),
        downsampled=m["downsampled"],
        codel=None if m.get("codel_dropping") is None else (m["codel_dropping"], m["codel_count"]),
        abc=m.get("abc"),
    )


def history(
    session: Session,
    slice_id: int,
    start: dt.datetime,
    end: dt.datetime,
    resolution_s: int,
) -> list[SampleRecord]:
    """The samples of a slice with ``start < t <= end``, per switch, in time order.

    Resolution 1 returns the stored rows as they are (raw samples, and one-minute rows where
    the raw ones were downsampled); a coarser one sums the rows into buckets (start, end] of
    that many seconds aligned on the epoch, each stamped with the end of its last row, one per
    switch and histogram target (a bucket in which the slice's target changed gives two). A
    one-minute row falls in the bucket its samples fell in, so a history reads the same
    before and after downsampling whenever the resolution is a whole number of minutes.
    """
    in_range = sa.and_(_table.c.slice_id == slice_id, _table.c.t > start, _table.c.t <= end)
    if resolution_s == 1:
        rows = session.execute(
            sa.select(_table)
            .where(in_range)
            .order_by(_table.c.t, _table.c.switch_id, _table.c.hist_target)
        ).all()
        return [_record(row, slice_id) for row in rows]
    bucket = sa.func.date_bin(
        sa.literal(dt.timedelta(seconds=resolution_s)), _table.c.t - _TICK, sa.literal(EPOCH)
    ).label("bucket")
    query = (
        sa.select(
            _table.c.switch_id,
            _table.c.hist_target,
            sa.func.max(_table.c.t).label("t"),
            sa.func.sum(_table.c.interval_s).label("interval_s"),
            *(sa.cast(sa.func.sum(_table.c[n]), sa.BigInteger).label(n) for n in PAIR_COLUMNS),
            *(hist_sum(name).label(name) for name in HISTOGRAMS),
            sa.func.bool_or(_table.c.counters_reset).label("counters_reset"),
            sa.true().label("downsampled"),  # a sum, whatever its rows were
        )
        .where(in_range)
        .group_by(bucket, _table.c.switch_id, _table.c.hist_target)
        .order_by(bucket, _table.c.switch_id, sa.func.max(_table.c.t), _table.c.hist_target)
    )
    return [_record(row, slice_id) for row in session.execute(query).all()]


# --- Downsampling and retention ---------------------------------------------------------------


def _sums(prefix: str) -> str:
    return ", ".join(f"sum({prefix}{name})::bigint" for name in PAIR_COLUMNS)


def _hist_sums(name: str) -> str:
    cells = ", ".join(f"sum({name}[{i}])::bigint" for i in range(1, c.HIST_BUCKETS + 1))
    return f"ARRAY[{cells}]"


def _hist_add(name: str) -> str:
    cells = ", ".join(
        f"telemetry_samples.{name}[{i}] + excluded.{name}[{i}]"
        for i in range(1, c.HIST_BUCKETS + 1)
    )
    return f"{name} = ARRAY[{cells}]"


_NEWER = sa.text(
    f"""
SELECT s.slice_id, s.switch_id, s.hist_target, max(s.t) AS t, sum(s.interval_s) AS interval_s,
       {", ".join(f"sum(s.{n})::bigint AS {n}" for n in PAIR_COLUMNS)},
       {_hist_sums("s.vq_hist")} AS vq_hist, {_hist_sums("s.rq_hist")} AS rq_hist,
       bool_or(s.counters_reset) AS counters_reset, true AS downsampled
FROM telemetry_samples s
LEFT JOIN unnest(CAST(:slices AS bigint[]), CAST(:switches AS bigint[]),
                 CAST(:since AS timestamptz[])) AS w(slice_id, switch_id, since)
    ON w.slice_id = s.slice_id AND w.switch_id = s.switch_id
WHERE NOT s.downsampled AND s.t > :floor AND s.t > coalesce(w.since, :floor)
GROUP BY s.slice_id, s.switch_id, s.hist_target
"""
)


def newer_sums(
    session: Session,
    since: Mapping[tuple[int, int], dt.datetime],
    floor: dt.datetime,
) -> list[SampleRecord]:
    """The raw samples newer than ``floor`` and than their (slice, switch)'s mark in
    ``since``, summed per slice, switch and histogram target (as a history bucket: ``t`` the
    newest row's time, ``downsampled`` true). What Prometheus's counters advance by
    (`telemetry.exposition`): the rows of one slice on one switch are committed in time order
    (one sink, one COPY per batch), so a row committed after a read is still newer than the
    mark that read left."""
    keys = list(since)
    rows = session.execute(
        _NEWER,
        {
            "slices": [k[0] for k in keys],
            "switches": [k[1] for k in keys],
            "since": [since[k] for k in keys],
            "floor": floor,
        },
    ).all()
    return [_record(row, row.slice_id) for row in rows]


_MINUTE_END = "date_bin('1 minute', t - interval '1 microsecond', :epoch) + interval '1 minute'"
"""The end of the minute a row belongs to: minutes are (start, end], like a sample's interval."""
_MINUTE_ROWS = f"""
{{moving}}
INSERT INTO telemetry_samples ({", ".join(COPY_COLUMNS)})
SELECT slice_id, {_MINUTE_END}, switch_id, true, hist_target,
       sum(interval_s), {_sums("")}, {_hist_sums("vq_hist")}, {_hist_sums("rq_hist")},
       bool_or(counters_reset), NULL, NULL, NULL, NULL
FROM {{source}}
GROUP BY slice_id, switch_id, hist_target, {_MINUTE_END}
ORDER BY slice_id, switch_id, hist_target, {_MINUTE_END}
ON CONFLICT (slice_id, t, switch_id, downsampled, hist_target) DO UPDATE SET
    interval_s = telemetry_samples.interval_s + excluded.interval_s,
    {", ".join(f"{n} = telemetry_samples.{n} + excluded.{n}" for n in PAIR_COLUMNS)},
    {_hist_add("vq_hist")}, {_hist_add("rq_hist")},
    counters_reset = telemetry_samples.counters_reset OR excluded.counters_reset
"""
"""One row per slice, switch, histogram target and minute of the raw rows of ``source``
(stamped with the minute's end: histograms counted on different edges are never added),
added to a minute row already there. Written in slice order, so that a slice's minute rows
of an hour share a page or two (its raw samples lie a page apart, among the other slices')."""


def fold_into_minutes(session: Session | sa.Connection, table: str) -> int:
    """Write the minute rows of every raw sample in ``table`` (a partition of
    `telemetry_samples_raw`, which the caller then drops). Returns the minute rows written."""
    result = session.execute(
        sa.text(_MINUTE_ROWS.format(moving="", source=table)), {"epoch": EPOCH}
    )
    return result.rowcount  # type: ignore[attr-defined, no-any-return]


def fold_stragglers(session: Session | sa.Connection, table: str, cutoff: dt.datetime) -> int:
    """Move the raw samples of ``table`` (the DEFAULT partition of `telemetry_samples_raw`,
    which holds only samples outside every partition: a few, late or far off) up to
    ``cutoff`` into minute rows, in one statement: running it twice, or in two workers at
    once, moves each sample once. Returns the minute rows written."""
    moving = f"WITH moved AS (DELETE FROM {table} WHERE t <= :cutoff RETURNING *)"
    result = session.execute(
        sa.text(_MINUTE_ROWS.format(moving=moving, source="moved")),
        {"epoch": EPOCH, "cutoff": cutoff},
    )
    return result.rowcount  # type: ignore[attr-defined, no-any-return]


def forget_polls(session: Session | sa.Connection, cutoff: dt.datetime) -> None:
    """Delete the polls up to ``cutoff``: polls only refuse a second reading of a recent
    period, and these samples are being downsampled."""
    session.execute(sa.delete(TelemetryPoll).where(TelemetryPoll.t <= cutoff))


def minute_cutoff(now: dt.datetime, after_s: int) -> dt.datetime:
    """The end of the last whole minute older than ``after_s``."""
    return EPOCH + (now - dt.timedelta(seconds=after_s) - EPOCH) // MINUTE * MINUTE
