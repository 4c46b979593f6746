"""Telemetry arithmetic: readings to counts across wraps and resets, the poll schedule, metrics."""

from __future__ import annotations

import json

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sliceportal.domain import dataplane as dp
from sliceportal.domain import p4constants as c
from sliceportal.domain import units
from sliceportal.domain.telemetry import (
    CELLS_PER_SLICE,
    COLUMNS,
    COUNTER_WIDTH,
    LEGACY_EDGES_US,
    LEGACY_HIST_TARGET,
    NO_BUCKET,
    BatchMetrics,
    batch_metrics,
    counter_deltas,
    counter_indices,
    fitting_budget,
    histogram_edges_s,
    histogram_edges_vq,
    poll_groups,
    readings,
    register_indices,
    register_json,
    register_readings,
)

Column = npt.NDArray[np.uint64]
TOP = 1 << COUNTER_WIDTH


def read_of(dp_sids: list[int], base: dict[int, int]) -> dict[str, tuple[Column, Column]]:
    """A read of ``counter_indices(dp_sids)``: the k-th cell of slice s (in
    ``dataplane.counter_cells`` order) holds (base[s] + k, 10 * (base[s] + k))."""
    values = {
        cell: (base[sid] + k, 10 * (base[sid] + k))
        for sid in dp_sids
        for k, cell in enumerate(dp.counter_cells(sid))
    }
    found = {}
    for name, indices in counter_indices(dp_sids).items():
        pairs = np.array([values[(name, i)] for i in indices.tolist()], np.uint64).reshape(-1, 2)
        found[name] = (pairs[:, 0].copy(), pairs[:, 1].copy())
    return found


def test_readings_lay_cells_out_as_slice_counters() -> None:
    matrix = readings(read_of([3, 0], {3: 100, 0: 1}))
    assert matrix.shape == (2, len(COLUMNS)) and matrix.dtype == np.uint64
    row = dict(zip(COLUMNS, matrix[0].tolist(), strict=True))
    assert (row["forwarded_packets"], row["forwarded_bytes"]) == (100, 1000)
    assert (row["ecn_marked_packets"], row["ecn_marked_bytes"]) == (103, 1030)
    assert (row["aqm_dropped_packets"], row["aqm_dropped_bytes"]) == (104, 1040)
    assert [row[f"vq_hist_{b}"] for b in range(8)] == list(range(105, 113))
    assert [row[f"rq_hist_{b}"] for b in range(8)] == list(range(113, 121))
    # DP_SID 0: its first histogram cell has index 0, like its packets-and-bytes cells.
    assert matrix[1, COLUMNS.index("vq_hist_0")] == 6


def test_counter_indices_are_the_cells_of_each_slice() -> None:
    indices = counter_indices([7, 2])
    cells = {(name, i) for name, found in indices.items() for i in found.tolist()}
    assert cells == {*dp.counter_cells(7), *dp.counter_cells(2)}
    assert sum(len(found) for found in indices.values()) == 2 * CELLS_PER_SLICE


def test_readings_keep_the_64_bits_of_a_counter() -> None:
    read = read_of([1], {1: 0})
    read[dp.FORWARDED] = (np.array([TOP - 1], np.uint64), np.array([1], np.uint64))
    assert readings(read)[0, :2].tolist() == [TOP - 1, 1]


def test_readings_of_no_slice() -> None:
    assert readings(read_of([], {})).shape == (0, len(COLUMNS))


@pytest.mark.parametrize("dp_sids", [[-1], [c.MAX_SLICES]])
def test_cells_of_a_dp_sid_out_of_range_are_refused(dp_sids: list[int]) -> None:
    with pytest.raises(ValueError, match="DP_SIDs"):
        counter_indices(dp_sids)
    with pytest.raises(ValueError, match="DP_SIDs"):
        register_indices(dp_sids)


def _reference_delta(before: int, now: int) -> int | None:
    """The definition: the modular difference when under half the range, else a reset."""
    delta = (now - before) % TOP
    return delta if delta < TOP // 2 else None


counter = st.integers(0, TOP - 1)


@given(st.lists(st.tuples(counter, counter), min_size=len(COLUMNS), max_size=len(COLUMNS)))
def test_counter_deltas_match_the_definition(pairs: list[tuple[int, int]]) -> None:
    before = np.array([[b for b, _ in pairs]], dtype=np.uint64)
    now = np.array([[n for _, n in pairs]], dtype=np.uint64)
    expected = [_reference_delta(b, n) for b, n in pairs]
    delta, reset = counter_deltas(before, now)
    if None in expected:
        assert reset.tolist() == [True]
        assert delta[0].tolist() == [np.int64(np.uint64(n)) for _, n in pairs]
    else:
        assert reset.tolist() == [False]
        assert delta[0].tolist() == expected


def test_counter_wrap_is_a_small_delta_not_a_reset() -> None:
    before = np.zeros((1, len(COLUMNS)), dtype=np.uint64)
    now = before.copy()
    before[0, 0], now[0, 0] = TOP - 10, 5
    delta, reset = counter_deltas(before, now)
    assert not reset[0]
    assert delta[0, 0] == 15


def test_a_reset_takes_the_whole_slice_reading_and_only_that_slice() -> None:
    before = np.full((2, len(COLUMNS)), 1000, dtype=np.uint64)
    now = before + np.uint64(7)
    now[1, 3] = 2  # slice 1: one cell went down from 1000 to 2, the switch lost its counters
    delta, reset = counter_deltas(before, now)
    assert reset.tolist() == [False, True]
    assert delta[0].tolist() == [7] * len(COLUMNS)
    assert delta[1].tolist() == now[1].astype(np.int64).tolist()


def test_counter_deltas_refuse_mismatched_readings() -> None:
    with pytest.raises(ValueError, match="matrices"):
        counter_deltas(np.zeros((1, 3), dtype=np.uint64), np.zeros((1, 3), dtype=np.uint64))


@given(
    st.lists(st.integers(0, c.MAX_SLICES - 1), max_size=300),
    st.integers(1, 30),
    st.integers(1, 5000),
)
def test_poll_groups_cover_each_slice_once_within_the_budget(
    dp_sids: list[int], per_slice: int, budget: int
) -> None:
    groups = poll_groups(dp_sids, per_slice, budget)
    flat = [sid for group in groups for sid in group]
    assert sorted(flat) == sorted(set(dp_sids))
    per_period = max(1, budget // per_slice)
    assert all(len(group) <= per_period for group in groups)
    sizes = [len(group) for group in groups]
    assert max(sizes) - min(sizes) <= 1
    # As few groups as the budget allows: one fewer would not fit.
    assert len(groups) == max(1, -(-len(set(dp_sids)) // per_period))


def test_poll_groups_spread_4096_bmv2_slices_over_41_periods() -> None:
    groups = poll_groups(range(4096), 20, 2000)
    assert len(groups) == 41
    assert groups[0][:3] == (0, 41, 82)


def test_poll_groups_refuse_a_zero_budget() -> None:
    with pytest.raises(ValueError):
        poll_groups([1], 20, 0)


def test_fitting_budget_lowers_the_budget_of_a_slow_switch() -> None:
    assert fitting_budget(2000, 1.0, 0, 0.0) == 2000  # nothing read yet
    assert fitting_budget(2000, 1.0, 2000, 0.2) == 2000  # 8,000 cells would fit in 0.8 s
    assert fitting_budget(2000, 1.0, 2000, 2.0) == 800
    assert fitting_budget(2000, 1.0, 1, 10.0) == 1


def test_fitting_budget_converges_on_the_largest_read_that_fits() -> None:
    cells = 2000
    for _ in range(20):  # 50 ms per RPC plus 1 ms per cell: 750 cells take 0.8 s
        cells = fitting_budget(2000, 1.0, cells, 0.05 + 1e-3 * cells)
    assert 740 <= cells <= 750


def counts(
    forwarded: tuple[int, int] = (0, 0),
    vq_dropped: tuple[int, int] = (0, 0),
    real_dropped: tuple[int, int] = (0, 0),
    marked: tuple[int, int] = (0, 0),
    vq_hist: tuple[int, ...] = (0,) * 8,
    rq_hist: tuple[int, ...] = (0,) * 8,
    aqm_dropped: tuple[int, int] = (0, 0),
) -> dp.SliceCounters:
    return dp.SliceCounters(
        dp.CounterValue(*forwarded),
        dp.CounterValue(*vq_dropped),
        dp.CounterValue(*real_dropped),
        dp.CounterValue(*marked),
        dp.CounterValue(*aqm_dropped),
        vq_hist,
        rq_hist,
    )


MS = 1e-3
TARGET_20MS = dp.histogram_target(20 * MS)
"""Edges 1.25, 2.5, 5, 10, 15, 17.5 and 20 ms."""
TARGET_30MS = dp.histogram_target(30 * MS)
"""The paper's Peering slice: edges 1.875, 3.75, 7.5, 15, 22.5, 26.25 and 30 ms."""


def metrics(
    *found: dp.SliceCounters, interval_s: float = 1.0, targets: list[int] | None = None
) -> BatchMetrics:
    return batch_metrics(
        np.array([f.cells() for f in found], dtype=np.int64).reshape(len(found), len(COLUMNS)),
        np.full(len(found), interval_s),
        np.array(targets or [TARGET_20MS] * len(found), dtype=np.int64),
    )


def test_sample_metrics_rates_ratios_and_percentiles() -> None:
    (sample,) = metrics(
        counts(
            forwarded=(900, 1_125_000),
            vq_dropped=(80, 100_000),
            real_dropped=(20, 25_000),
            aqm_dropped=(40, 50_000),
            marked=(90, 112_500),
            vq_hist=(0, 0, 0, 450, 0, 440, 10, 0),
            rq_hist=(900, 0, 0, 0, 0, 0, 0, 0),
        ),
        interval_s=2.0,
    ).documents()
    assert sample["interval_s"] == 2.0
    assert sample["throughput_bps"] == 1_125_000 * 8 / 2
    assert sample["packets_per_s"] == 450
    assert sample["offered_bps"] == 1_300_000 * 8 / 2
    assert sample["drop_ratio"] == pytest.approx(140 / 1040)
    assert sample["vq_drop_ratio"] == pytest.approx(80 / 1040)
    assert sample["rq_drop_ratio"] == pytest.approx(20 / 1040)
    assert sample["aqm_drop_ratio"] == pytest.approx(40 / 1040)
    assert sample["mark_ratio"] == pytest.approx(0.1)
    # p50 in [5, 10) ms, p95 in [15, 17.5) ms, p99 in [17.5, 20) ms: reported as upper edges.
    assert sample["vq_delay_p50_s"] == 0.010
    assert sample["vq_delay_p95_s"] == 0.0175
    assert sample["vq_delay_p99_s"] == 0.020
    assert sample["vq_delay_max_bucket_s"] == 0.020
    assert sample["rq_delay_p99_s"] == 0.00125
    assert sample["vq_cdf"][3] == [0.01, 0.5]
    assert sample["vq_cdf"][-1] == [0.02, 1.0]
    edges = [0.00125, 0.0025, 0.005, 0.01, 0.015, 0.0175, 0.02]
    assert [edge for edge, _ in sample["rq_cdf"]] == edges


def test_each_slice_of_a_batch_has_its_own_edges() -> None:
    """The same counts on the 20 ms, the 30 ms and the legacy edges: the same buckets, other
    delays, and CDFs on each slice's edges."""
    one = counts(forwarded=(10, 12_500), rq_hist=(0, 0, 0, 0, 0, 0, 9, 1))
    found = metrics(one, one, one, targets=[TARGET_20MS, TARGET_30MS, LEGACY_HIST_TARGET])
    assert found.rq_buckets.tolist() == [[6, 7, 7, 7]] * 3
    twenty, thirty, legacy = found.documents()
    assert (twenty["rq_delay_p50_s"], twenty["rq_delay_max_bucket_s"]) == (0.02, 0.02)
    assert (thirty["rq_delay_p50_s"], thirty["rq_delay_max_bucket_s"]) == (0.03, 0.03)
    assert [edge for edge, _ in thirty["rq_cdf"]] == [
        0.001875, 0.00375, 0.0075, 0.015, 0.0225, 0.02625, 0.03
    ]  # fmt: skip
    assert thirty["rq_cdf"][-1] == [0.03, 0.9]  # 9 of 10 packets below the target
    assert [edge for edge, _ in legacy["rq_cdf"]] == [us / 1e6 for us in LEGACY_EDGES_US]
    assert found.edges_s.tolist() == [
        list(dp.histogram_edges_s(TARGET_20MS)),
        list(dp.histogram_edges_s(TARGET_30MS)),
        [us / 1e6 for us in LEGACY_EDGES_US],
    ]


@given(st.integers(0, 2 * 4 * units.VQ_UNITS_PER_S))
def test_edges_of_a_batch_are_the_data_planes(target: int) -> None:
    (edges,) = histogram_edges_vq(np.array([target], dtype=np.int64)).tolist()
    assert tuple(edges) == dp.histogram_edges(target)
    (seconds,) = histogram_edges_s(np.array([target], dtype=np.int64)).tolist()
    assert tuple(seconds) == dp.histogram_edges_s(target)


def test_histogram_targets_below_zero_are_refused_but_the_legacy_one() -> None:
    with pytest.raises(ValueError, match="legacy"):
        histogram_edges_vq(np.array([-2], dtype=np.int64))
    assert histogram_edges_vq(np.array([LEGACY_HIST_TARGET], dtype=np.int64)).shape == (1, 7)


def test_sample_metrics_of_an_idle_slice() -> None:
    (sample,) = metrics(counts()).documents()
    assert sample["throughput_bps"] == 0
    assert sample["drop_ratio"] == 0
    assert sample["vq_delay_p99_s"] is None
    assert sample["rq_delay_max_bucket_s"] is None
    assert sample["vq_cdf"] == []


def test_the_open_last_bucket_saturates_at_its_lower_edge_the_target() -> None:
    (sample,) = metrics(
        counts(forwarded=(4, 100), rq_hist=(0,) * 7 + (4,)), targets=[TARGET_30MS]
    ).documents()
    assert sample["rq_delay_p50_s"] == 0.03
    assert sample["rq_cdf"][-1] == [0.03, 0.0]


def test_batch_metrics_refuse_a_bad_batch() -> None:
    one = np.array([TARGET_20MS])
    with pytest.raises(ValueError, match="counts"):
        batch_metrics(np.zeros((1, 3), dtype=np.int64), np.ones(1), one)
    with pytest.raises(ValueError, match="positive"):
        batch_metrics(np.zeros((1, len(COLUMNS)), dtype=np.int64), np.zeros(1), one)
    with pytest.raises(ValueError, match="one histogram target per slice"):
        batch_metrics(np.zeros((1, len(COLUMNS)), dtype=np.int64), np.ones(1), one[:0])


small = st.integers(0, 10**6)
pair = st.tuples(small, small)
histogram = st.lists(small, min_size=8, max_size=8).map(tuple)
slice_counts = st.builds(counts, pair, pair, pair, pair, histogram, histogram)
hist_target = st.integers(0, 4 * units.VQ_UNITS_PER_S) | st.sampled_from(
    [TARGET_20MS, TARGET_30MS, c.HIST_BEST_EFFORT_TARGET_VQ]
)


def _bucket_indices(found: dp.DelayPercentiles | None) -> list[int]:
    if found is None:
        return [NO_BUCKET] * 4
    return [b.index for b in (found.p50, found.p95, found.p99, found.max)]


def _bucket_delays(found: dp.DelayPercentiles | None) -> list[float | None]:
    """As the sample reports them: upper edges, the open bucket's lower one."""
    if found is None:
        return [None] * 4
    return [
        b.lower_s if b.upper_s is None else b.upper_s
        for b in (found.p50, found.p95, found.p99, found.max)
    ]


@given(
    st.lists(st.tuples(slice_counts, hist_target), min_size=1, max_size=8),
    st.floats(0.01, 100),
)
def test_batch_metrics_agree_with_the_data_planes_per_slice_arithmetic(
    batch: list[tuple[dp.SliceCounters, int]], interval_s: float
) -> None:
    found = metrics(
        *(one for one, _ in batch),
        interval_s=interval_s,
        targets=[target for _, target in batch],
    )
    documents = found.documents()
    for i, (one, target) in enumerate(batch):
        reference = dp.slice_stats(dp.SliceCounters.zero(), one, interval_s, target)
        assert found.throughput_bps[i] == reference.throughput_bps
        assert found.packets_per_s[i] == reference.forwarded_pps
        assert found.offered_bps[i] == reference.offered_bps
        assert found.vq_drop_ratio[i] == reference.vq_drop_ratio
        assert found.rq_drop_ratio[i] == reference.real_drop_ratio
        assert found.mark_ratio[i] == reference.mark_ratio
        assert found.vq_buckets[i].tolist() == _bucket_indices(reference.vq_delay)
        assert found.rq_buckets[i].tolist() == _bucket_indices(reference.real_delay)
        vq = [documents[i][f"vq_delay_{name}_s"] for name in ("p50", "p95", "p99", "max_bucket")]
        rq = [documents[i][f"rq_delay_{name}_s"] for name in ("p50", "p95", "p99", "max_bucket")]
        assert vq == _bucket_delays(reference.vq_delay)
        assert rq == _bucket_delays(reference.real_delay)
        if reference.real_delay is not None:
            assert [edge for edge, _ in documents[i]["rq_cdf"]] == list(
                dp.histogram_edges_s(target)
            )


def test_registers_in_seconds_and_ticks() -> None:
    read = {
        dp.VQ_DELAY_REGISTER: np.array([65_536_000_000, 0], np.uint64),  # 1 ms in vq units
        dp.VQ_LAST_SEEN_REGISTER: np.array([1234, 2**48 - 1], np.uint64),
    }
    indices = register_indices([5, 6])
    assert {name: found.tolist() for name, found in indices.items()} == {
        dp.VQ_DELAY_REGISTER: [5, 6],
        dp.VQ_LAST_SEEN_REGISTER: [5, 6],
    }
    documents = [json.loads(text) for text in register_json(register_readings(read))]
    assert documents == [
        {"vq_delay_s": pytest.approx(0.001), "vq_last_seen_ticks": 1234},
        {"vq_delay_s": 0.0, "vq_last_seen_ticks": 2**48 - 1},
    ]


@given(
    st.lists(
        st.lists(st.integers(0, 2**40) | st.just(0), min_size=len(COLUMNS), max_size=len(COLUMNS)),
        min_size=1,
        max_size=20,
    ),
    st.floats(0.001, 100),
    st.lists(hist_target | st.just(LEGACY_HIST_TARGET), min_size=20, max_size=20),
)
def test_sample_json_is_what_json_dumps_writes(
    rows: list[list[int]], interval_s: float, targets: list[int]
) -> None:
    found = batch_metrics(
        np.array(rows, dtype=np.int64),
        np.full(len(rows), interval_s),
        np.array(targets[: len(rows)], dtype=np.int64),
    )
    for members, document in zip(found.json_members(), found.documents(), strict=True):
        assert "{" + members + "}" == json.dumps(document)
    empty = np.zeros((0, len(COLUMNS)), np.int64)
    assert batch_metrics(empty, np.zeros(0), np.zeros(0, np.int64)).json_members() == []
