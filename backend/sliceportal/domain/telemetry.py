"""Telemetry arithmetic: counter deltas across wraps and resets, the poll schedule that keeps a
switch within its cell budget, and the metrics of a sample.

A sample holds *counts* (how much each of a slice's counter cells grew over a measured
interval), never rates. Counts add up, so a one-minute row is the sum of its samples and gives
exact rates, ratios and histogram percentiles; a percentile of percentiles would mean nothing.

The poll path works on matrices, one row per slice and one column per cell (``COLUMNS``), so
that 4,096 slices are differenced in a few numpy operations; a sample becomes Python objects
(``dataplane.SliceCounters``) only when its metrics are computed, by ``dataplane.slice_stats``.
Pure: no I/O.
"""

from __future__ import annotations

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
_PAIR_COUNTERS = frozenset({dp.FORWARDED, dp.VQ_DROPPED, dp.REAL_DROPPED, dp.ECN_MARKED})
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
_PAIR_CELLS = len(_PAIRS)


def slice_cells(dp_sids: Sequence[int]) -> list[tuple[str, int]]:
    """The counter cells of ``dp_sids``, slice after slice, as ``reading_matrix`` expects."""
    return [cell for sid in dp_sids for cell in dp.counter_cells(sid)]


def reading_matrix(
    cells: Sequence[tuple[str, int]], values: Mapping[tuple[str, int], tuple[int, int]]
) -> npt.NDArray[np.uint64]:
    """The readings (one row of ``COLUMNS`` per slice) of a read of ``slice_cells``.

    Values are taken modulo 2^64: P4Runtime carries counters as int64, so a uint64 switch
    counter past 2^63 may arrive negative.
    """
    slices = len(cells) // CELLS_PER_SLICE
    read = [values[cell] for cell in cells]
    try:
        pairs = np.array(read, dtype=np.int64).view(np.uint64)
    except OverflowError:  # a value at or above 2^63, sent unsigned
        pairs = np.array([(p % 2**64, b % 2**64) for p, b in read], dtype=np.uint64)
    pairs = pairs.reshape(slices, CELLS_PER_SLICE, 2)
    counters = pairs[:, :_PAIR_CELLS, :].reshape(slices, 2 * _PAIR_CELLS)
    return np.concatenate([counters, pairs[:, _PAIR_CELLS:, 0]], axis=1)


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
        """The measured part of each slice's sample JSON (docs/telemetry.md)."""
        buckets = np.concatenate([self.vq_buckets, self.rq_buckets], axis=1)
        delays = np.where(buckets >= 0, REPORTED_S[buckets], np.nan).tolist()
        edges = LOWER_S[1:].tolist()
        columns = {
            "interval_s": self.interval_s.tolist(),
            "throughput_bps": self.throughput_bps.tolist(),
            "packets_per_s": self.packets_per_s.tolist(),
            "offered_bps": self.offered_bps.tolist(),
            "drop_ratio": self.drop_ratio.tolist(),
            "vq_drop_ratio": self.vq_drop_ratio.tolist(),
            "rq_drop_ratio": self.rq_drop_ratio.tolist(),
            "mark_ratio": self.mark_ratio.tolist(),
        }
        cdfs = {"vq_cdf": self.vq_cdf.tolist(), "rq_cdf": self.rq_cdf.tolist()}
        documents = []
        for i in range(len(self)):
            document: dict[str, Any] = {name: values[i] for name, values in columns.items()}
            for name, value in zip(_DELAY_FIELDS, delays[i], strict=True):
                document[name] = None if math.isnan(value) else value  # no packet
            for name, rows in cdfs.items():
                row = rows[i]
                points = zip(edges, row, strict=True)
                document[name] = [] if math.isnan(row[0]) else [list(p) for p in points]
            documents.append(document)
        return documents


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


@dataclass(frozen=True)
class Registers:
    """A slice's virtual-queue registers, where the target can read them."""

    vq_delay_units: int
    vq_last_seen_ticks: int

    def to_dict(self) -> dict[str, float | int]:
        return {
            "vq_delay_s": dp.vq_units_to_seconds(self.vq_delay_units),
            "vq_last_seen_ticks": self.vq_last_seen_ticks,
        }


def register_cells(dp_sid: int) -> tuple[tuple[str, int], ...]:
    return ((dp.VQ_DELAY_REGISTER, dp_sid), (dp.VQ_LAST_SEEN_REGISTER, dp_sid))


def registers_of(dp_sid: int, values: Mapping[tuple[str, int], int]) -> Registers:
    delay, last_seen = (values[cell] for cell in register_cells(dp_sid))
    return Registers(delay, last_seen)
