"""Telemetry arithmetic: counter deltas across wraps and resets, the poll schedule that keeps a
switch within its cell budget, and the metrics of a sample.

A sample holds *counts* (how much each of a slice's counter cells grew over a measured
interval), never rates. Counts add up, so a one-minute row is the sum of its samples and gives
exact rates, ratios and histogram percentiles; a percentile of percentiles would mean nothing.
Histograms add up only when counted on the same edges: each slice's edges derive from its
histogram target (``dataplane.histogram_edges``), so a sample carries the target it was counted
with, and only samples of one target are summed.

The poll path works on arrays: the cells to read per counter array (``counter_indices``), the
values read per array, and matrices with one row per slice and one column per cell
(``COLUMNS``), so that 4,096 slices are read, differenced, measured and rendered as JSON in a
few numpy operations, without a Python object per cell or per sample. Pure: no I/O.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from sliceportal.domain import dataplane as dp
from sliceportal.domain import p4constants as c
from sliceportal.domain import units

Matrix = npt.NDArray[np.int64]

COUNTER_WIDTH = 64
"""Bits of a P4Runtime counter (``CounterData`` holds int64; BMv2 keeps uint64)."""

_PAIRS = ("forwarded", "vq_dropped", "real_dropped", "ecn_marked", "aqm_dropped")
COLUMNS: tuple[str, ...] = (
    *(f"{name}_{unit}" for name in _PAIRS for unit in ("packets", "bytes")),
    *(f"vq_hist_{b}" for b in range(c.HIST_BUCKETS)),
    *(f"rq_hist_{b}" for b in range(c.HIST_BUCKETS)),
)
"""The cells of one slice in ``SliceCounters.cells()`` order: packets and bytes of the five
packets-and-bytes counters (``dataplane.PAIR_COUNTERS``), then the virtual- and real-queue
histogram buckets."""

REGISTER_CELLS_PER_SLICE = 2
"""vq_delay and vq_last_seen, read where the target can (not BMv2)."""
CODEL_REGISTER_CELLS = 2
"""codel_dropping and codel_count, read with them, for the codel slices only."""
NO_CODEL = -1
"""A CoDel reading of a slice that runs no CoDel (``codel_readings``)."""
ABC_REGISTER_CELLS = len(dp.ABC_METER_REGISTERS) * c.ABC_SLOTS + len(dp.ABC_AVERAGE_REGISTERS)
"""An abc slice's meters (``last``, S and N of its 64 aggregate slots) and activity average
(``last``, N and A_avg), read with them, for the abc slices only: 195 cells."""
ABC_TOP_AGGREGATES = 5
"""The busiest aggregates a sample names (``abc_json``)."""


CELLS_PER_SLICE = len(dp.counter_cells(0))
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
        **dict.fromkeys(dp.PAIR_COUNTERS, sids),
        **dict.fromkeys(_HIST_NAMES, buckets),
    }


def readings(values: Mapping[str, tuple[Column, Column]]) -> npt.NDArray[np.uint64]:
    """The readings (one row of ``COLUMNS`` per slice) of a read of ``counter_indices``:
    (packets, bytes) per counter array. Values are the counters' 64 bits, unsigned (P4Runtime
    carries them as int64, so a switch's uint64 past 2^63 arrives negative)."""
    pairs = [column for name in dp.PAIR_COUNTERS for column in values[name]]
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


def rendezvous_rank(switch_id: int, pollers: Sequence[str]) -> list[str]:
    """The pollers in the order a switch prefers them (highest random weight first: a hash of
    poller and switch, the same in every process)."""

    def weight(poller: str) -> bytes:
        return hashlib.blake2b(f"{poller}/{switch_id}".encode(), digest_size=8).digest()

    return sorted(pollers, key=lambda poller: (weight(poller), poller), reverse=True)


def assign_switches(switch_ids: Sequence[int], pollers: Sequence[str]) -> dict[int, str]:
    """Which poller should poll each switch: rendezvous hashing with a cap of
    ceil(switches / pollers) each, switches taken in id order, each by the first poller of its
    ranking that is under the cap. Every poller computes the same answer from the same
    switches and live pollers; a poller that joins or leaves moves few switches (those that
    rank it first, and the ones the caps push along)."""
    if not pollers:
        return {}
    cap = math.ceil(len(switch_ids) / len(pollers))
    load = dict.fromkeys(pollers, 0)
    assignment = {}
    for switch_id in sorted(switch_ids):
        for poller in rendezvous_rank(switch_id, pollers):
            if load[poller] < cap:
                load[poller] += 1
                assignment[switch_id] = poller
                break
    return assignment


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
HIST_EDGES = c.HIST_BUCKETS - 1
"""Finite edges of a delay histogram (the last bucket is open)."""

LEGACY_HIST_TARGET = -1
"""The histogram target of the samples stored before per-slice edges (migration 0009): they
were counted on one global set of edges, ``LEGACY_EDGES_US``, which no target reproduces."""
LEGACY_EDGES_US = (100, 500, 1000, 2000, 5000, 10000, 20000)
"""The global edges of those samples, microseconds (the former ``HIST_BUCKET_EDGES_US``)."""
_LEGACY_EDGES_VQ = np.array(LEGACY_EDGES_US, dtype=np.int64) * 1000 * c.VQ_UNITS_PER_NS
_SHIFTS = np.array([4, 3, 2, 1], dtype=np.int64)


def histogram_edges_vq(hist_targets: Ints) -> Ints:
    """(slices, 7): each slice's finite bucket edges in vq units for its histogram target,
    ``dataplane.histogram_edges`` for a whole batch; ``LEGACY_HIST_TARGET`` gives the legacy
    global edges."""
    targets = np.asarray(hist_targets, dtype=np.int64).reshape(-1, 1)
    legacy = targets[:, 0] == LEGACY_HIST_TARGET
    if np.any((targets[:, 0] < 0) & ~legacy):
        raise ValueError(f"histogram targets must be at least 0, or {LEGACY_HIST_TARGET} (legacy)")
    edges: Ints = np.concatenate(
        [targets >> _SHIFTS, targets - (targets >> 2), targets - (targets >> 3), targets], axis=1
    )
    if legacy.any():
        edges[legacy] = _LEGACY_EDGES_VQ
    return edges


def histogram_edges_s(hist_targets: Ints) -> Floats:
    """(slices, 7): ``histogram_edges_vq`` in seconds (``dataplane.histogram_edges_s``)."""
    edges: Floats = histogram_edges_vq(hist_targets) / units.VQ_UNITS_PER_S
    return edges


def lower_edges(edges: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """(slices, 8): the lower edge of each bucket, from the finite edges (slices, 7)."""
    return np.concatenate([np.zeros_like(edges[:, :1]), edges], axis=1)


def reported_edges(edges: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """(slices, 8): a delay bucket as one number: its upper edge ("below this"), or for the
    open last bucket its lower edge, the target (the histogram cannot tell how far beyond it a
    delay went)."""
    return np.concatenate([edges, edges[:, -1:]], axis=1)


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
    aqm_drop_ratio: Floats
    """Dropped by the slice's queue management (CoDel), over offered packets."""
    mark_ratio: Floats
    vq_buckets: Ints
    """(slices, 4): p50, p95, p99 and max bucket of the virtual-queue delay."""
    rq_buckets: Ints
    """(slices, 4): the same for the real queue."""
    vq_cdf: Floats
    rq_cdf: Floats
    """(slices, 7): the share of forwarded packets below each of the slice's finite edges."""
    hist_target: Ints
    """The histogram target each slice's histograms were counted with (vq units, or
    ``LEGACY_HIST_TARGET``)."""
    edges_vq: Ints
    """(slices, 7): each slice's finite bucket edges, vq units (``histogram_edges_vq``)."""
    edges_s: Floats
    """(slices, 7): the same in seconds."""
    rq_hist: Ints
    """(slices, 8): the real-queue histograms (``sla`` counts the packets above a threshold)."""

    def __len__(self) -> int:
        return len(self.interval_s)

    @property
    def drop_ratio(self) -> Floats:
        """Dropped for any reason over offered packets: what an SLA's loss ratio bounds."""
        return self.vq_drop_ratio + self.rq_drop_ratio + self.aqm_drop_ratio

    @property
    def lower_s(self) -> Floats:
        """(slices, 8): the lower edge of each slice's buckets, seconds."""
        lower: Floats = lower_edges(self.edges_s)
        return lower

    @property
    def reported_s(self) -> Floats:
        """(slices, 8): each slice's buckets as one number (``reported_edges``), seconds."""
        reported: Floats = reported_edges(self.edges_s)
        return reported

    def delays_s(self, buckets: Ints, *, lower: bool = False) -> list[float | None]:
        """The delays ``buckets`` stand for, one bucket per slice, on each slice's own edges:
        the reported delay (``reported_edges``), or the bucket's ``lower`` edge; None for
        ``NO_BUCKET``."""
        edges = self.lower_s if lower else self.reported_s
        found = edges[np.arange(len(self)), buckets].tolist()
        return [None if b == NO_BUCKET else v for v, b in zip(found, buckets.tolist(), strict=True)]

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
                self.aqm_drop_ratio,
                self.mark_ratio,
            )
        ]
        # The edges as text once per target in the batch (few: one per kind of slice).
        targets, inverse = np.unique(self.hist_target, return_inverse=True)
        rendered = _edge_texts(targets.tolist())
        reported = np.array([r[0] for r in rendered])
        buckets = np.concatenate([self.vq_buckets, self.rq_buckets], axis=1)
        # NO_BUCKET (-1) picks the last column, "null".
        delays = reported[inverse.reshape(-1, 1), buckets].T.tolist()
        templates = [rendered[k][1] for k in inverse.tolist()]
        cdfs = [_json_cdfs(self.vq_cdf, templates), _json_cdfs(self.rq_cdf, templates)]
        return [_MEMBERS % values for values in zip(*scalars, *delays, *cdfs, strict=True)]


_SCALAR_FIELDS = (
    "interval_s",
    "throughput_bps",
    "packets_per_s",
    "offered_bps",
    "drop_ratio",
    "vq_drop_ratio",
    "rq_drop_ratio",
    "aqm_drop_ratio",
    "mark_ratio",
)
_MEMBERS = ", ".join(
    f"{json.dumps(name)}: %s" for name in (*_SCALAR_FIELDS, *_DELAY_FIELDS, "vq_cdf", "rq_cdf")
)


EdgeText = tuple[tuple[str, ...], str]
_EDGE_TEXT: dict[int, EdgeText] = {}
"""The text of each histogram target's edges seen lately (``_edge_texts``)."""


def _edge_texts(hist_targets: list[int]) -> list[EdgeText]:
    """For each target, the JSON text of its reported delays (the 8 buckets, then "null" for
    ``NO_BUCKET``) and its CDF template (``%s`` for each fraction). Targets change rarely, so
    their text is kept; the ones not seen yet are rendered together, in one `json.dumps`.
    Threads share the kept texts: each works on its own copy of what it needs."""
    found = {target: _EDGE_TEXT.get(target) for target in hist_targets}
    missing = [target for target, text in found.items() if text is None]
    fresh: dict[int, EdgeText] = {}
    if missing:
        texts = _json_numbers(histogram_edges_s(np.array(missing, dtype=np.int64)).reshape(-1))
        for k, target in enumerate(missing):
            own = texts[k * HIST_EDGES : (k + 1) * HIST_EDGES]
            cdf = "[" + ", ".join(f"[{text}, %s]" for text in own) + "]"
            fresh[target] = ((*own, own[-1], "null"), cdf)
        if len(_EDGE_TEXT) + len(fresh) > 2 * c.MAX_SLICES:  # a bound, not reached in use
            _EDGE_TEXT.clear()
        _EDGE_TEXT.update(fresh)
    return [found[target] or fresh[target] for target in hist_targets]


def _json_numbers(values: Floats) -> list[str]:
    """Each number as `json.dumps` writes it (NaN as NaN): one call for the whole column."""
    return json.dumps(values.tolist())[1:-1].split(", ") if len(values) else []


def _json_cdfs(fractions: Floats, templates: Sequence[str]) -> list[str]:
    """Each slice's CDF, ``[[edge, fraction], …]`` on its own edges (its template), or ``[]``
    without packets (NaN)."""
    rendered = _json_numbers(fractions.reshape(-1))
    width = fractions.shape[1]
    empty = np.isnan(fractions[:, 0]).tolist()
    return [
        "[]" if empty[i] else templates[i] % tuple(rendered[i * width : (i + 1) * width])
        for i in range(len(fractions))
    ]


def batch_metrics(counts: Ints, interval_s: Floats, hist_targets: Ints) -> BatchMetrics:
    """The metrics of ``counts`` (one row of ``COLUMNS`` per slice, as ``counter_deltas``
    gives) over each slice's ``interval_s``, its histograms counted with its histogram target
    in ``hist_targets`` (vq units, ``dataplane.histogram_target``, or ``LEGACY_HIST_TARGET``)."""
    if counts.ndim != 2 or counts.shape[1] != len(COLUMNS) or len(interval_s) != len(counts):
        raise ValueError(f"needs (slices, {len(COLUMNS)}) counts and one interval per slice")
    if len(hist_targets) != len(counts):
        raise ValueError("needs one histogram target per slice")
    if not np.all(interval_s > 0):
        raise ValueError("intervals must be positive")
    targets = np.asarray(hist_targets, dtype=np.int64)
    edges_vq = histogram_edges_vq(targets)
    packets = {name: counts[:, i].astype(np.float64) for name, i in _PAIR_COLUMN.items()}
    byte_counts = {name: counts[:, i + 1].astype(np.float64) for name, i in _PAIR_COLUMN.items()}
    offered = (
        packets["forwarded"]
        + packets["vq_dropped"]
        + packets["real_dropped"]
        + packets["aqm_dropped"]
    )
    offered_bytes = (
        byte_counts["forwarded"]
        + byte_counts["vq_dropped"]
        + byte_counts["real_dropped"]
        + byte_counts["aqm_dropped"]
    )
    vq_hist, rq_hist = counts[:, _VQ_HIST], counts[:, _RQ_HIST]
    return BatchMetrics(
        interval_s=interval_s.astype(np.float64),
        throughput_bps=byte_counts["forwarded"] * units.BITS_PER_BYTE / interval_s,
        packets_per_s=packets["forwarded"] / interval_s,
        offered_bps=offered_bytes * units.BITS_PER_BYTE / interval_s,
        vq_drop_ratio=_ratio(packets["vq_dropped"], offered),
        rq_drop_ratio=_ratio(packets["real_dropped"], offered),
        aqm_drop_ratio=_ratio(packets["aqm_dropped"], offered),
        mark_ratio=_ratio(packets["ecn_marked"], packets["forwarded"]),
        vq_buckets=_buckets(vq_hist),
        rq_buckets=_buckets(rq_hist),
        vq_cdf=_cdf(vq_hist),
        rq_cdf=_cdf(rq_hist),
        hist_target=targets,
        edges_vq=edges_vq,
        edges_s=edges_vq / units.VQ_UNITS_PER_S,
        rq_hist=rq_hist,
    )


def register_indices(
    dp_sids: Sequence[int], codel_sids: Sequence[int] = (), abc_sids: Sequence[int] = ()
) -> dict[str, Indices]:
    """The register cells of ``dp_sids`` by register array: every slice's virtual queue,
    CoDel's state of the slices in ``codel_sids`` and ABC's meters and average of those in
    ``abc_sids`` (the others' cells hold nothing of use). A slice's meters are the cells
    ``dp_sid * ABC_SLOTS + slot``, slot 0 to 63, slice after slice."""
    sids = _dp_sids(dp_sids)
    cells = {dp.VQ_DELAY_REGISTER: sids, dp.VQ_LAST_SEEN_REGISTER: sids}
    codel = _dp_sids(codel_sids)
    if len(codel):
        cells |= {dp.CODEL_DROPPING_REGISTER: codel, dp.CODEL_COUNT_REGISTER: codel}
    abc = _dp_sids(abc_sids)
    if len(abc):
        slots = (abc[:, None] * c.ABC_SLOTS + np.arange(c.ABC_SLOTS, dtype=np.int64)).reshape(-1)
        cells |= dict.fromkeys(dp.ABC_METER_REGISTERS, slots)
        cells |= dict.fromkeys(dp.ABC_AVERAGE_REGISTERS, abc)
    return cells


def register_readings(values: Mapping[str, Column]) -> npt.NDArray[np.uint64]:
    """(slices, 2): each slice's virtual-queue delay (vq units) and last-seen timestamp
    (ticks), from a read of ``register_indices``."""
    readings: npt.NDArray[np.uint64] = np.column_stack(
        [values[dp.VQ_DELAY_REGISTER], values[dp.VQ_LAST_SEEN_REGISTER]]
    ).astype(np.uint64, copy=False)
    return readings


def codel_readings(values: Mapping[str, Column], codel: npt.NDArray[np.bool_]) -> Matrix:
    """(slices, 2): each slice's CoDel ``dropping`` (0 or 1) and ``count``, from a read of
    ``register_indices`` whose ``codel_sids`` are the slices marked in ``codel``, in order;
    ``NO_CODEL`` in both columns for the other slices."""
    found: Matrix = np.full((len(codel), 2), NO_CODEL, dtype=np.int64)
    if codel.any():
        found[codel, 0] = values[dp.CODEL_DROPPING_REGISTER].astype(np.int64) & 1
        found[codel, 1] = values[dp.CODEL_COUNT_REGISTER].astype(np.int64)
    return found


def register_json(readings: npt.NDArray[np.uint64]) -> list[str]:
    """The ``registers`` member of each slice's sample JSON (docs/telemetry.md), as text."""
    delays = _json_numbers(readings[:, 0] / units.VQ_UNITS_PER_S)
    last_seen = readings[:, 1].tolist()
    return [
        f'{{"vq_delay_s": {delay}, "vq_last_seen_ticks": {seen}}}'
        for delay, seen in zip(delays, last_seen, strict=True)
    ]


def codel_json(codel: Matrix) -> list[str]:
    """The ``codel`` member of each slice's sample JSON (docs/telemetry.md), as text: "null"
    for a slice that runs no CoDel."""
    return [
        "null" if count == NO_CODEL else f'{{"dropping": {_JSON_BOOL[dropping]}, "count": {count}}}'
        for dropping, count in codel.tolist()
    ]


_JSON_BOOL = ("false", "true")


@dataclass(frozen=True)
class AbcWatch:
    """What reading an abc slice's meters needs of its parameters: the reference rate (the
    rate of activity 0) and the meters' memory."""

    reference_rate_bps: float
    meter_memory_s: float


_TIMESTAMP_HALF = units.TIMESTAMP_MOD // 2
_STATE_ONE = float(c.ABC_STATE_ONE)
_AVERAGE_ONE = float(1 << (c.ABC_AVERAGE_EXTRA_BITS + c.ABC_ACTIVITY_FRAC_BITS))
_ACTIVITY_LIMIT = c.ABC_ACTIVITY_SPAN / 2


def abc_json(
    values: Mapping[str, Column],
    abc: npt.NDArray[np.bool_],
    watches: Sequence[AbcWatch],
    top: int = ABC_TOP_AGGREGATES,
) -> list[str]:
    """The ``abc`` member of each slice's sample JSON (docs/telemetry.md), as text, from a
    read of ``register_indices`` whose ``abc_sids`` are the slices marked in ``abc`` (in
    order, with ``watches`` their parameters); "null" for the other slices.

    An aggregate slot's registers say its meter at its own last packet: S (bytes, Q16) and N
    (µs, Q16) decayed to ``last``. To rank the slots at one instant, each is decayed as the
    meter would, ``f = exp(-idle/M)``, ``S' = f S``, ``N' = M - f (M - N)``, to the slice's
    most recent meter update (the newest ``last``; ``idle`` the slot's time before it), then
    its rate is ``S'/N'`` bytes per µs and its activity ``log2(rate / R_r)`` (exact, where the
    switch looks the logarithms up; clamped to the switch's -64..64). The average is
    ``abc_a_avg + ABC_AVERAGE_ZERO`` modulo 2^64: Q8 activity biased by 64, with 32 more
    fractional bits. ``active_slots`` counts the slots metered within one memory of that
    instant; two aggregates hashed into one slot share its meter.
    """
    found = ["null"] * len(abc)
    rows = np.flatnonzero(abc)
    if not len(rows):
        return found
    shape = (len(rows), c.ABC_SLOTS)
    last_name, bytes_name, time_name = dp.ABC_METER_REGISTERS
    last = values[last_name].astype(np.int64).reshape(shape)
    s = values[bytes_name].astype(np.float64).reshape(shape) / _STATE_ONE
    n = values[time_name].astype(np.float64).reshape(shape) / _STATE_ONE
    used = n > 0
    # The newest update, modulo 2^48: a slice whose slots straddle the wrap counts the ones
    # past it (small values) as 2^48 later.
    wrapped = np.where(used, last, 0)
    low = np.where(used, last, units.TIMESTAMP_MOD).min(axis=1, keepdims=True)
    straddles = wrapped.max(axis=1, keepdims=True) - low > _TIMESTAMP_HALF
    unwrapped = np.where(straddles & (last < _TIMESTAMP_HALF), last + units.TIMESTAMP_MOD, last)
    newest = np.where(used, unwrapped, np.iinfo(np.int64).min).max(axis=1, keepdims=True)
    idle = np.where(used, newest - unwrapped, 0).astype(np.float64)  # ticks
    memory = np.array([w.meter_memory_s for w in watches], dtype=np.float64)[:, None]
    memory_ticks = memory * units.TICKS_PER_S
    reference = np.array([w.reference_rate_bps for w in watches], dtype=np.float64)[:, None]
    factor = np.exp(-idle / memory_ticks)
    decayed_time = memory_ticks - factor * (memory_ticks - n)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_tick = np.where(used & (decayed_time > 0), s * factor / decayed_time, 0.0)  # B/µs
        rate = per_tick * units.TICKS_PER_S * units.BITS_PER_BYTE
        activity = np.log2(rate / reference)
    activity = np.clip(activity, -_ACTIVITY_LIMIT, _ACTIVITY_LIMIT)
    order = np.argsort(-rate, axis=1, kind="stable")[:, :top]
    active = (used & (idle <= memory_ticks)).sum(axis=1)
    average_name = dp.ABC_AVERAGE_REGISTERS[2]
    average = values[average_name].astype(np.uint64) + np.uint64(c.ABC_AVERAGE_ZERO)  # mod 2^64
    averages = average.astype(np.float64) / _AVERAGE_ONE - _ACTIVITY_LIMIT
    for i, row in enumerate(rows.tolist()):
        aggregates = [
            {
                "slot": int(slot),
                "rate_bps": float(f"{rate[i, slot]:.6g}"),
                "activity": round(float(activity[i, slot]), 3),
                "idle_s": round(float(idle[i, slot]) / units.TICKS_PER_S, 6),
            }
            for slot in order[i].tolist()
            if rate[i, slot] > 0
        ]
        document = {
            "average_activity": round(float(averages[i]), 3),
            "active_slots": int(active[i]),
            "aggregates": aggregates,
        }
        found[row] = json.dumps(document)
    return found
