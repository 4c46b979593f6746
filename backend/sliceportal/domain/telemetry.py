"""Telemetry arithmetic: counter deltas across wraps and resets, the poll schedule that keeps a
switch within its cell budget, and the metrics of a sample.

A sample holds *counts* (how much each of a slice's counter cells grew over a measured
interval), never rates. Counts add up, so a one-minute row is the sum of its samples and gives
exact rates, ratios and histogram percentiles; a percentile of percentiles would mean nothing.

The poll path works on arrays: the cells to read per counter array (``counter_indices``), the
values read per array, and matrices with one row per slice and one column per cell
(``COLUMNS``), so that 4,096 slices are read, differenced, measured and rendered as JSON in a
few numpy operations, without a Python object per cell or per sample. Pure: no I/O.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from sliceportal.domain import dataplane as dp
from sliceportal.domain import p4constants as c

Matrix = npt.NDArray[np.int64]

COUNTER_WIDTH = 64
"""Bits of a P4Runtime counter (``CounterData`` holds int64; BMv2 keeps uint64)."""

_PAIRS = ("forwarded", "vq_dropped", "real_dropped", "ecn_marked")
COLUMNS: tuple[str, ...] = (
    *(f"{name}_{unit}" for name in _PAIRS for unit in ("packets", "bytes")),
    *(f"vq_hist_{b}" for b in range(c.HIST_BUCKETS)),
    *(f"rq_hist_{b}" for b in range(c.HIST_BUCKETS)),
)
"""The cells of one slice in ``SliceCounters.cells()`` order: packets and bytes of the four
packets-and-bytes counters, then the virtual- and real-queue histogram buckets."""

REGISTER_CELLS_PER_SLICE = 2
"""vq_delay and vq_last_seen, read where the target can (not BMv2)."""

_EDGES_S = tuple(us / 1e6 for us in c.HIST_BUCKET_EDGES_US)


CELLS_PER_SLICE = len(dp.counter_cells(0))
_PAIR_COUNTER_NAMES = (dp.FORWARDED, dp.VQ_DROPPED, dp.REAL_DROPPED, dp.ECN_MARKED)
_HIST_NAMES = (dp.VQ_DELAY_HIST, dp.REAL_DELAY_HIST)
_BUCKETS = np.arange(c.HIST_BUCKETS, dtype=np.int64)

Indices = npt.NDArray[np.int64]
Column = npt.NDArray[np.uint64]


def _dp_sids(dp_sids: Sequence[int]) -> Indices:
    sids = np.asarray(dp_sids, dtype=np.int64).reshape(-1)
    if len(sids) and (sids.min() < 0 or sids.max() >= c.MAX_SLICES):
        raise ValueError(f"DP_SIDs must be in [0, {c.MAX_SLICES})")
    return sids


def counter_indices(dp_sids: Sequence[int]) -> dict[str, Indices]:
    """The counter cells of ``dp_sids`` (``dataplane.counter_cells``) by counter array: the
    slices' own cells, and their histogram buckets slice after slice, as ``readings`` expects."""
    sids = _dp_sids(dp_sids)
    buckets = ((sids[:, None] << c.HIST_BUCKET_BITS) | _BUCKETS).reshape(-1)
    return {
        **dict.fromkeys(_PAIR_COUNTER_NAMES, sids),
        **dict.fromkeys(_HIST_NAMES, buckets),
    }


def readings(values: Mapping[str, tuple[Column, Column]]) -> npt.NDArray[np.uint64]:
    """The readings (one row of ``COLUMNS`` per slice) of a read of ``counter_indices``:
    (packets, bytes) per counter array. Values are the counters' 64 bits, unsigned (P4Runtime
    carries them as int64, so a switch's uint64 past 2^63 arrives negative)."""
    pairs = [column for name in _PAIR_COUNTER_NAMES for column in values[name]]
    slices = len(pairs[0])
    histograms = [values[name][0].reshape(slices, c.HIST_BUCKETS) for name in _HIST_NAMES]
    matrix: npt.NDArray[np.uint64] = np.column_stack([*pairs, *histograms]).astype(
        np.uint64, copy=False
    )
    return matrix.reshape(slices, len(COLUMNS))


def counter_deltas(
    before: npt.NDArray[np.uint64], now: npt.NDArray[np.uint64]
) -> tuple[Matrix, npt.NDArray[np.bool_]]:
    """What each slice counted between two readings, and which slices' counters were reset.

    A cell that went down either wrapped (it was near the top of its 64 bits and the modular
    difference is under half the range, as SNMP treats Counter64) or was reset (switch restart,
    pipeline pushed again). A reset clears every cell, so a slice with any reset cell takes its
    whole current reading as the counts since: one cell that grew past its old value across
    the reset cannot be told apart, and is undercounted for that one interval.
    """
    if before.shape != now.shape or now.ndim != 2 or now.shape[1] != len(COLUMNS):
        raise ValueError(f"readings must both be (slices, {len(COLUMNS)}) matrices")
    delta = now - before  # uint64 arithmetic is modulo 2^64
    # Below half the range: grew, or wrapped. At or above: went down for real (or "grew" by
    # 2^63, which no link can do between two polls): a reset.
    reset: npt.NDArray[np.bool_] = np.any(delta >= np.uint64(1 << (COUNTER_WIDTH - 1)), axis=1)
    delta[reset] = now[reset]
    return delta.astype(np.int64), reset


# --- The poll schedule ------------------------------------------------------------------------


def poll_groups(
    dp_sids: Sequence[int], cells_per_slice: int, budget_cells: int
) -> tuple[tuple[int, ...], ...]:
    """The slices of a switch in as few balanced groups as the cell budget allows.

    One group is read per period, so each slice is read every ``len(groups)`` periods (its
    effective interval). Groups are interleaved by DP_SID (slice i in group i mod k), so their
    sizes differ by at most one and a new slice moves the others little.
    """
    if cells_per_slice < 1 or budget_cells < 1:
        raise ValueError("cells per slice and the budget must be positive")
    ordered = sorted(set(dp_sids))
    per_period = max(1, budget_cells // cells_per_slice)
    count = max(1, math.ceil(len(ordered) / per_period))
    return tuple(tuple(ordered[g::count]) for g in range(count))


def fitting_budget(
    configured: int, period_s: float, cells_read: int, elapsed_s: float, headroom: float = 0.8
) -> int:
    """The cells to read next period: the configured budget, or fewer when the last read of
    ``cells_read`` cells took ``elapsed_s``, so that a read takes ``headroom`` of the period.

    Scaling the whole last read (fixed RPC cost included) converges on the largest read that
    fits, instead of shrinking ever further as a per-cell estimate would for small reads.
    """
    if cells_read <= 0 or elapsed_s <= 0:
        return configured
    return max(1, min(configured, int(cells_read * headroom * period_s / elapsed_s)))


# --- Metrics ----------------------------------------------------------------------------------

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]

NO_BUCKET = -1
"""A percentile bucket of a histogram that counted no packet."""
PERCENTILES = (50, 95, 99)
_EDGES_US = c.HIST_BUCKET_EDGES_US
LOWER_S: Floats = np.array([0, *_EDGES_US]) / 1e6
"""The lower edge of each delay bucket, seconds."""
REPORTED_S: Floats = np.array([*_EDGES_US, _EDGES_US[-1]]) / 1e6
"""A delay bucket as one number: its upper edge ("below this"), or for the open last bucket
its lower edge (the histogram cannot tell how far beyond it a delay went)."""
_PAIR_COLUMN = {name: 2 * i for i, name in enumerate(_PAIRS)}
_DELAY_FIELDS = tuple(
    f"{queue}_delay_{name}_s"
    for queue in ("vq", "rq")
    for name in ("p50", "p95", "p99", "max_bucket")
)
_VQ_HIST = slice(2 * len(_PAIRS), 2 * len(_PAIRS) + c.HIST_BUCKETS)
_RQ_HIST = slice(_VQ_HIST.stop, _VQ_HIST.stop + c.HIST_BUCKETS)


def _ratio(part: Floats, whole: Floats) -> Floats:
    """part / whole, 0 where nothing was counted."""
    ratio: Floats = np.divide(part, whole, out=np.zeros_like(part), where=whole > 0)
    return ratio


def _buckets(histograms: Ints) -> Ints:
    """Per slice, the buckets holding the 50th, 95th and 99th percentile and the largest delay
    (``NO_BUCKET`` without packets): as ``dataplane.delay_percentiles``, for a whole batch."""
    total = histograms.sum(axis=1)
    running = histograms.cumsum(axis=1)
    found = [np.argmax(running * 100 >= p * total[:, None], axis=1) for p in PERCENTILES]
    found.append(histograms.shape[1] - 1 - np.argmax(histograms[:, ::-1] > 0, axis=1))
    return np.where(total[:, None] > 0, np.stack(found, axis=1), NO_BUCKET)


def _cdf(histograms: Ints) -> Floats:
    """Per slice, the share of packets below each finite bucket edge (NaN without packets)."""
    total = histograms.sum(axis=1).astype(np.float64)
    below = histograms.cumsum(axis=1)[:, :-1].astype(np.float64)
    fractions: Floats = np.divide(
        below, total[:, None], out=np.full_like(below, np.nan), where=total[:, None] > 0
    )
    return fractions


@dataclass(frozen=True)
class BatchMetrics:
    """What each slice of a batch did over its interval, one array entry per slice.

    The arithmetic of ``dataplane.slice_stats`` and ``delay_percentiles`` (drop ratios over the
    packets offered, the mark ratio over the packets forwarded, a percentile as the bucket
    holding it), done on the whole batch at once: a poller with thousands of slices cannot
    afford Python objects per slice and per second. ``tests/unit/domain`` checks the two agree.
    """

    interval_s: Floats
    throughput_bps: Floats
    packets_per_s: Floats
    offered_bps: Floats
    vq_drop_ratio: Floats
    rq_drop_ratio: Floats
    mark_ratio: Floats
    vq_buckets: Ints
    """(slices, 4): p50, p95, p99 and max bucket of the virtual-queue delay."""
    rq_buckets: Ints
    """(slices, 4): the same for the real queue."""
    vq_cdf: Floats
    rq_cdf: Floats

    def __len__(self) -> int:
        return len(self.interval_s)

    @property
    def drop_ratio(self) -> Floats:
        return self.vq_drop_ratio + self.rq_drop_ratio

    def documents(self) -> list[dict[str, Any]]:
        """The measured part of each slice's sample JSON (docs/telemetry.md), as dicts."""
        return [json.loads("{" + members + "}") for members in self.json_members()]

    def json_members(self) -> list[str]:
        """The measured part of each slice's sample JSON, as the text of the members of a JSON
        object, exactly as `json.dumps` writes them.

        Built column by column (each column's numbers rendered by one `json.dumps` call):
        ~9 µs a sample, where a dict per sample and `json.dumps` of each take ~22 µs, on the
        sink that serves every switch each second.
        """
        if not len(self):
            return []
        scalars = [
            _json_numbers(column)
            for column in (
                self.interval_s,
                self.throughput_bps,
                self.packets_per_s,
                self.offered_bps,
                self.drop_ratio,
                self.vq_drop_ratio,
                self.rq_drop_ratio,
                self.mark_ratio,
            )
        ]
        buckets = np.concatenate([self.vq_buckets, self.rq_buckets], axis=1)
        delays = _REPORTED_JSON[buckets].T.tolist()  # NO_BUCKET (-1) is "null", the last
        cdfs = [_json_cdfs(self.vq_cdf), _json_cdfs(self.rq_cdf)]
        return [_MEMBERS % values for values in zip(*scalars, *delays, *cdfs, strict=True)]


_SCALAR_FIELDS = (
    "interval_s",
    "throughput_bps",
    "packets_per_s",
    "offered_bps",
    "drop_ratio",
    "vq_drop_ratio",
    "rq_drop_ratio",
    "mark_ratio",
)
_MEMBERS = ", ".join(
    f"{json.dumps(name)}: %s" for name in (*_SCALAR_FIELDS, *_DELAY_FIELDS, "vq_cdf", "rq_cdf")
)
_REPORTED_JSON = np.array([json.dumps(edge) for edge in REPORTED_S.tolist()] + ["null"])
_CDF = "[" + ", ".join(f"[{json.dumps(edge)}, %s]" for edge in LOWER_S[1:].tolist()) + "]"


def _json_numbers(values: Floats) -> list[str]:
    """Each number as `json.dumps` writes it (NaN as NaN): one call for the whole column."""
    return json.dumps(values.tolist())[1:-1].split(", ") if len(values) else []


def _json_cdfs(fractions: Floats) -> list[str]:
    """Each slice's CDF, ``[[edge, fraction], …]``, or ``[]`` without packets (NaN)."""
    rendered = _json_numbers(fractions.reshape(-1))
    width = fractions.shape[1]
    empty = np.isnan(fractions[:, 0]).tolist()
    return [
        "[]" if empty[i] else _CDF % tuple(rendered[i * width : (i + 1) * width])
        for i in range(len(fractions))
    ]


def batch_metrics(counts: Ints, interval_s: Floats) -> BatchMetrics:
    """The metrics of ``counts`` (one row of ``COLUMNS`` per slice, as ``counter_deltas``
    gives) over each slice's ``interval_s``."""
    if counts.ndim != 2 or counts.shape[1] != len(COLUMNS) or len(interval_s) != len(counts):
        raise ValueError(f"needs (slices, {len(COLUMNS)}) counts and one interval per slice")
    if not np.all(interval_s > 0):
        raise ValueError("intervals must be positive")
    packets = {name: counts[:, i].astype(np.float64) for name, i in _PAIR_COLUMN.items()}
    byte_counts = {name: counts[:, i + 1].astype(np.float64) for name, i in _PAIR_COLUMN.items()}
    offered = packets["forwarded"] + packets["vq_dropped"] + packets["real_dropped"]
    offered_bytes = (
        byte_counts["forwarded"] + byte_counts["vq_dropped"] + byte_counts["real_dropped"]
    )
    vq_hist, rq_hist = counts[:, _VQ_HIST], counts[:, _RQ_HIST]
    return BatchMetrics(
        interval_s=interval_s.astype(np.float64),
        throughput_bps=byte_counts["forwarded"] * dp.BITS_PER_BYTE / interval_s,
        packets_per_s=packets["forwarded"] / interval_s,
        offered_bps=offered_bytes * dp.BITS_PER_BYTE / interval_s,
        vq_drop_ratio=_ratio(packets["vq_dropped"], offered),
        rq_drop_ratio=_ratio(packets["real_dropped"], offered),
        mark_ratio=_ratio(packets["ecn_marked"], packets["forwarded"]),
        vq_buckets=_buckets(vq_hist),
        rq_buckets=_buckets(rq_hist),
        vq_cdf=_cdf(vq_hist),
        rq_cdf=_cdf(rq_hist),
    )


def register_indices(dp_sids: Sequence[int]) -> dict[str, Indices]:
    """The virtual-queue register cells of ``dp_sids``, by register array."""
    sids = _dp_sids(dp_sids)
    return {dp.VQ_DELAY_REGISTER: sids, dp.VQ_LAST_SEEN_REGISTER: sids}


def register_readings(values: Mapping[str, Column]) -> npt.NDArray[np.uint64]:
    """(slices, 2): each slice's virtual-queue delay (vq units) and last-seen timestamp
    (ticks), from a read of ``register_indices``."""
    readings: npt.NDArray[np.uint64] = np.column_stack(
        [values[dp.VQ_DELAY_REGISTER], values[dp.VQ_LAST_SEEN_REGISTER]]
    ).astype(np.uint64, copy=False)
    return readings


def register_json(readings: npt.NDArray[np.uint64]) -> list[str]:
    """The ``registers`` member of each slice's sample JSON (docs/telemetry.md), as text."""
    delays = _json_numbers(readings[:, 0] / dp.VQ_UNITS_PER_S)
    last_seen = readings[:, 1].tolist()
    return [
        f'{{"vq_delay_s": {delay}, "vq_last_seen_ticks": {seen}}}'
        for delay, seen in zip(delays, last_seen, strict=True)
    ]
