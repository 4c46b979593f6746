"""Counter readings back to rates, drop and mark ratios and delay percentiles."""

from __future__ import annotations

import math

import pytest

from sliceportal.domain import p4constants as c
from sliceportal.domain.dataplane import (
    AQM_DROPPED,
    ECN_MARKED,
    FORWARDED,
    REAL_DELAY_HIST,
    VQ_DELAY_HIST,
    VQ_DROPPED,
    CounterValue,
    DelayBucket,
    SliceCounters,
    counter_cells,
    delay_percentiles,
    histogram_index,
    histogram_target,
    slice_stats,
)
from sliceportal.domain.units import DataplaneValueError

TARGET = histogram_target(0.02)
"""20 ms: edges 1.25, 2.5, 5, 10, 15, 17.5 and 20 ms."""


def reading(
    forwarded: tuple[int, int] = (0, 0),
    vq_dropped: tuple[int, int] = (0, 0),
    real_dropped: tuple[int, int] = (0, 0),
    marked: tuple[int, int] = (0, 0),
    vq_hist: tuple[int, ...] = (0,) * 8,
    real_hist: tuple[int, ...] = (0,) * 8,
    aqm_dropped: tuple[int, int] = (0, 0),
) -> SliceCounters:
    return SliceCounters(
        CounterValue(*forwarded),
        CounterValue(*vq_dropped),
        CounterValue(*real_dropped),
        CounterValue(*marked),
        CounterValue(*aqm_dropped),
        vq_hist,
        real_hist,
    )


def test_histogram_cells() -> None:
    assert histogram_index(0, 0) == 0
    assert histogram_index(3, 5) == 29
    assert histogram_index(c.MAX_SLICES - 1, c.HIST_BUCKETS - 1) == c.HIST_SIZE - 1


def test_counter_cells_of_a_slice() -> None:
    cells = counter_cells(5)
    assert len(cells) == 5 + 2 * c.HIST_BUCKETS == 21
    assert len(set(cells)) == len(cells)
    assert (FORWARDED, 5) in cells and (VQ_DROPPED, 5) in cells and (ECN_MARKED, 5) in cells
    assert (AQM_DROPPED, 5) in cells
    assert [i for n, i in cells if n == VQ_DELAY_HIST] == list(range(40, 48))
    assert [i for n, i in cells if n == REAL_DELAY_HIST] == list(range(40, 48))
    with pytest.raises(DataplaneValueError, match="dp_sid"):
        counter_cells(c.MAX_SLICES)


def test_percentiles_of_an_empty_histogram() -> None:
    assert delay_percentiles([0] * 8, TARGET) is None


def test_percentiles_pick_the_bucket_holding_them() -> None:
    # 90 packets under 1.25 ms, 6 in [5, 10) ms, 3 in [15, 17.5) ms, 1 at 20 ms or more.
    p = delay_percentiles([90, 0, 0, 6, 0, 3, 0, 1], TARGET)
    assert p is not None
    assert p.p50 == DelayBucket(0, 0.0, 0.00125)
    assert p.p95 == DelayBucket(3, 0.005, 0.01)
    assert p.p99 == DelayBucket(5, 0.015, 0.0175)
    assert p.max == DelayBucket(7, 0.02, None)


def test_percentiles_follow_the_target() -> None:
    p = delay_percentiles([0, 0, 0, 0, 0, 0, 1, 1], histogram_target(0.03))
    assert p is not None
    assert p.p50 == DelayBucket(6, 0.02625, 0.03)
    assert p.max == DelayBucket(7, 0.03, None)  # at or above the 30 ms target


def test_percentile_on_a_bucket_boundary_stays_in_the_lower_bucket() -> None:
    p = delay_percentiles([50, 50, 0, 0, 0, 0, 0, 0], TARGET)
    assert p is not None
    assert p.p50.index == 0  # exactly half the packets are in bucket 0
    assert p.p95.index == p.p99.index == p.max.index == 1


@pytest.mark.parametrize("bad", [[1] * 7, [1] * 9, [1, -1, 0, 0, 0, 0, 0, 0]])
def test_percentiles_refuse_malformed_histograms(bad: list[int]) -> None:
    with pytest.raises(DataplaneValueError, match="histogram"):
        delay_percentiles(bad, TARGET)


def test_stats_between_two_readings() -> None:
    before = reading(forwarded=(100, 150_000), vq_hist=(100, 0, 0, 0, 0, 0, 0, 0))
    after = reading(
        forwarded=(1100, 1_650_000),  # 1000 packets, 1.5 MB in 2 s
        vq_dropped=(50, 75_000),
        real_dropped=(50, 75_000),
        aqm_dropped=(100, 150_000),
        marked=(100, 150_000),
        vq_hist=(600, 500, 0, 0, 0, 0, 0, 0),
        real_hist=(1000, 0, 0, 0, 0, 0, 0, 100),
    )
    stats = slice_stats(before, after, 2.0, TARGET)
    assert stats.throughput_bps == 6e6
    assert stats.forwarded_pps == 500
    assert stats.offered_bps == 7.2e6
    assert stats.vq_drop_ratio == stats.real_drop_ratio == 50 / 1200
    assert stats.aqm_drop_ratio == 100 / 1200
    assert stats.mark_ratio == 0.1
    assert stats.vq_delay is not None and stats.vq_delay.p50.index == 0  # 500 of 1000 in 0
    assert stats.vq_delay.max.index == 1
    assert stats.real_delay is not None and stats.real_delay.p99.upper_s is None
    assert not stats.counters_reset


def test_idle_slice_has_zero_ratios_and_no_percentiles() -> None:
    stats = slice_stats(SliceCounters.zero(), SliceCounters.zero(), 1.0, TARGET)
    assert stats.throughput_bps == stats.vq_drop_ratio == stats.mark_ratio == 0.0
    assert stats.vq_delay is None and stats.real_delay is None


def test_counters_that_went_down_mean_a_reset() -> None:
    before = reading(forwarded=(10_000, 15_000_000))
    after = reading(forwarded=(10, 15_000), vq_hist=(10, 0, 0, 0, 0, 0, 0, 0))
    stats = slice_stats(before, after, 1.0, TARGET)
    assert stats.counters_reset
    assert stats.throughput_bps == 120_000  # everything since the reset
    assert stats.forwarded_pps == 10


@pytest.mark.parametrize("interval", [0, -1.0, math.nan, math.inf, "1"])
def test_stats_refuse_a_bad_interval(interval: object) -> None:
    with pytest.raises(DataplaneValueError, match="interval_s"):
        slice_stats(
            SliceCounters.zero(),
            SliceCounters.zero(),
            interval,  # type: ignore[arg-type]
            TARGET,
        )


def test_readings_refuse_malformed_cells() -> None:
    with pytest.raises(DataplaneValueError, match="vq_delay_hist"):
        reading(vq_hist=(0,) * 7)
    with pytest.raises(DataplaneValueError, match="counters"):
        reading(forwarded=(-1, 0))
