"""The comparisons of the delay-bound code exactly at their thresholds: a bound equal to its
target, a residual capacity of exactly zero or just above it, the ends of the priority range."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from sliceportal.domain import (
    LevelAggregates,
    Model,
    SliceArrays,
    SliceSpec,
    aggregate_arrays,
    analyze,
    evaluate_levels,
)

CAPACITY = 100e6
SLICES = (
    SliceSpec("high", 30e6, 7, burst_bytes=60_000, delay_target_s=1.0),
    SliceSpec("low", 20e6, 5, burst_bytes=25_000, delay_target_s=1.0),
)


@pytest.mark.parametrize("model", list(Model))
def test_a_bound_equal_to_its_target_is_admissible(model: Model) -> None:
    """`bound <= target`: a slice whose target is exactly its bound fits; the next float below
    does not."""
    bounds = [s.worst_case_delay_s for s in analyze(SLICES, CAPACITY, model).slices]
    assert all(b is not None and 0 < b < 1 for b in bounds)
    for i, bound in enumerate(bounds):
        assert bound is not None
        exact = list(SLICES)
        exact[i] = dataclasses.replace(SLICES[i], delay_target_s=bound)
        analysis = analyze(exact, CAPACITY, model)
        assert analysis.admissible
        assert analysis.slices[i].meets_target and analysis.slices[i].slack_s == 0
        assert analysis.violations == ()
        exact[i] = dataclasses.replace(SLICES[i], delay_target_s=math.nextafter(bound, 0))
        analysis = analyze(exact, CAPACITY, model)
        assert not analysis.admissible
        assert [v.name for v in analysis.violations] == [SLICES[i].name]


def _levels(rates: dict[int, float], bursts: dict[int, float]) -> LevelAggregates:
    return LevelAggregates.of(
        (rates.get(k, 0.0) for k in range(8)),
        (bursts.get(k, 0.0) for k in range(8)),
        (int(k in rates) for k in range(8)),
        (math.inf for _ in range(8)),
        (1500 if k in rates else 0 for k in range(8)),
    )


@pytest.mark.parametrize("model", list(Model))
def test_a_level_with_no_residual_capacity_is_unbounded(model: Model) -> None:
    """`r <= 0`: the levels above take the whole link, so a level without a rate of its own
    (nothing of its own to overflow) still never drains: unbounded, and no division by zero."""
    levels = evaluate_levels(_levels({7: CAPACITY, 6: 0.0}, {7: 1000, 6: 1000}), CAPACITY, model)
    assert levels.residual_bps[6] == 0.0
    assert not levels.overflow[6]
    assert levels.bound_s[6] == math.inf


@pytest.mark.parametrize("model", list(Model))
def test_half_a_bit_per_second_of_residual_capacity_is_still_a_bound(model: Model) -> None:
    """`r <= 0` and not `r <= 1`: any positive residual rate drains the level's bursts."""
    agg = _levels({7: CAPACITY - 0.5, 6: 0.25}, {7: 1000, 6: 1000})
    levels = evaluate_levels(agg, CAPACITY, model)
    assert levels.residual_bps[6] == 0.5
    assert not levels.overflow[6]
    assert math.isfinite(levels.bound_s[6]) and levels.bound_s[6] > 8 * 1000 / 0.5


def _arrays(priorities: list[int]) -> SliceArrays:
    n = len(priorities)
    return SliceArrays(
        rate_bps=np.full(n, 1e6),
        priority=np.array(priorities, np.intp),
        burst_bytes=np.full(n, 1000.0),
        delay_target_s=np.full(n, 0.01),
        max_packet_bytes=np.full(n, 1500.0),
    )


def test_levels_run_from_best_effort_to_the_top_priority() -> None:
    """`0 <= priority < NUM_LEVELS` in aggregate_arrays."""
    agg = aggregate_arrays(_arrays([0, 7]))
    assert agg.count == (1, 0, 0, 0, 0, 0, 0, 1)
    for outside in ([-1], [8], [0, 8]):
        with pytest.raises(ValueError, match="priorities"):
            aggregate_arrays(_arrays(outside))
