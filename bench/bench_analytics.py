"""Benchmarks of the analytics core; prints one plain ``name: median …, p95 …`` line per figure.

Targets (from the design issue, not asserted): full analysis of 10,000 slices over 7 levels
≤ 5 ms, one admission from the stored level sums ≤ 50 µs, minimum capacity of 10,000 slices
≤ 50 ms, a priority plan for 1,000 slices < 1 s. The link is "typical": slices drawn from ten
service classes with realistic rates and targets, at 70 % load, with priorities from the
planner so that it is admissible.

The admission figures are the path a slice creation takes (`services.slices`), without its
SQL: `admits_surely` on the link's stored level rows, and, when those do not prove the slice
fits, `breaches` on every slice of the link.
Slices use priorities 1 to 7 (0 is best effort's) and, unless a figure names harkous, the
default netcalc bound.

Run: ``.venv/bin/python bench/bench_analytics.py``
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import numpy as np

from sliceportal.domain import (
    Model,
    SliceSpec,
    aggregate_arrays,
    analyze,
    analyze_arrays,
    delay_curves,
    min_capacity,
    min_capacity_levels,
    plan_priorities,
    slice_arrays,
    slice_spec,
)
from sliceportal.domain.admission import (
    LevelLoad,
    LinkLoad,
    LinkParams,
    Loads,
    StoredLevels,
    admits_surely,
    breaches,
)
from sliceportal.domain.spec import DEFAULT_MTU_BYTES, SLICE_LEVELS

# rate (bit/s), burst limit (s), delay target (s): URLLC control … bulk transfer
SERVICE_CLASSES = [
    (2e6, 0.0005, 0.001),
    (5e6, 0.001, 0.002),
    (1e6, 0.002, 0.005),
    (10e6, 0.002, 0.005),
    (20e6, 0.005, 0.01),
    (50e6, 0.005, 0.02),
    (8e6, 0.01, 0.03),
    (100e6, 0.01, 0.05),
    (25e6, 0.02, 0.1),
    (200e6, 0.03, 0.2),
]
LOAD = 0.7


def typical_link(count: int, seed: int = 1) -> tuple[list[SliceSpec], float]:
    """``count`` slices from the service classes and a capacity at 70 % load, admissible."""
    rng = np.random.default_rng(seed)
    drawn = rng.integers(0, len(SERVICE_CLASSES), count).tolist()
    slices = [
        slice_spec(f"s{i}", rate, 1, burst_limit_s=limit, delay_target_s=target)
        for i, (rate, limit, target) in enumerate(SERVICE_CLASSES[k] for k in drawn)
    ]
    capacity = sum(s.rate_bps for s in slices) / LOAD
    plan = plan_priorities(slices, capacity, SLICE_LEVELS, time_budget_s=30)
    if not plan.feasible:
        raise SystemExit(f"benchmark link is not plannable: {plan.reason}")
    planned = [
        SliceSpec(s.name, s.rate_bps, plan.priorities[s.name], s.burst_bytes, s.delay_target_s)
        for s in slices
    ]
    return planned, capacity


def level_rows(slices: list[SliceSpec]) -> list[LevelLoad]:
    """The rows `link_level_loads` holds for these slices (sums in arrival order)."""
    rows = []
    for level in sorted({s.priority for s in slices}):
        mine = [s for s in slices if s.priority == level]
        rows.append(
            LevelLoad(
                level,
                len(mine),
                sum(s.rate_bps for s in mine),
                sum(s.burst_bytes for s in mine),
                min(s.delay_target_s for s in mine),
                max(s.max_packet_bytes for s in mine),
                0,
            )
        )
    return rows


def link_load(slices: list[SliceSpec]) -> LinkLoad:
    """The slices as `db.queries.links.read_loads` gives them."""
    table = [
        [s.rate_bps, s.priority, s.burst_bytes, s.delay_target_s, s.max_packet_bytes]
        for s in slices
    ]
    return LinkLoad([s.name for s in slices], np.array(table, dtype=np.float64))


def measure(name: str, action: Callable[[], object], repeats: int, unit: str = "ms") -> None:
    """Print the median and 95th percentile of ``repeats`` timed calls (after one warm-up)."""
    action()
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        samples.append(time.perf_counter() - started)
    scale = {"ms": 1e3, "us": 1e6, "s": 1.0}[unit]
    median = statistics.median(samples) * scale
    p95 = float(np.percentile(samples, 95)) * scale
    print(f"{name}: median {median:.3f} {unit}, p95 {p95:.3f} {unit} ({repeats} runs)")


def main() -> None:
    slices, capacity = typical_link(10_000)
    arrays = slice_arrays(slices)
    assert analyze(slices, capacity).admissible
    print(f"link: {len(slices)} slices, capacity {capacity / 1e9:.2f} Gbit/s, load {LOAD:.0%}")

    measure(
        "analyze_arrays 10000 slices harkous",
        lambda: analyze_arrays(arrays, capacity, Model.HARKOUS),
        200,
    )
    measure(
        "analyze_arrays 10000 slices netcalc",
        lambda: analyze_arrays(arrays, capacity, Model.NETCALC),
        200,
    )
    measure("slice_arrays 10000 SliceSpec objects", lambda: slice_arrays(slices), 50)
    measure("analyze 10000 SliceSpec objects", lambda: analyze(slices, capacity), 50)
    measure("analyze + per-slice results 10000", lambda: analyze(slices, capacity).to_dict(), 20)

    newcomer = slice_spec("newcomer", 5e6, 5, burst_limit_s=0.001, delay_target_s=0.05)
    for model in (Model.HARKOUS, Model.NETCALC):
        link = LinkParams(1, "bench", capacity, model, 8, DEFAULT_MTU_BYTES, 0)
        stored = StoredLevels({1: level_rows(slices)}, [])
        measure(
            f"admission from level rows, 10000 slices {model.value}",
            lambda link=link, stored=stored: admits_surely(
                {1: link}, stored, {1: newcomer}, changed=[1], candidate=None
            ),
            2000,
            "us",
        )
        loads = Loads({1: link_load(slices).plus(newcomer)}, {})
        measure(
            f"admission full check, 10000 slices {model.value}",
            lambda link=link, loads=loads: breaches({1: link}, loads, changed=[1]),
            200,
        )

    measure("min_capacity 10000 SliceSpec objects", lambda: min_capacity(slices), 30)
    aggregates = aggregate_arrays(arrays)
    measure(
        "min_capacity from level aggregates",
        lambda: min_capacity_levels(aggregates, Model.HARKOUS),
        200,
    )
    measure(
        "delay_curves 10000 slices x 100 capacities",
        lambda: delay_curves(slices, [capacity * (0.8 + i / 100) for i in range(100)]),
        10,
    )

    small, small_capacity = typical_link(1_000, seed=2)
    unplanned = [SliceSpec(s.name, s.rate_bps, 1, s.burst_bytes, s.delay_target_s) for s in small]
    for model in Model:
        measure(
            f"plan_priorities 1000 slices {model.value}",
            lambda m=model: plan_priorities(unplanned, small_capacity, SLICE_LEVELS, m),
            5,
            "s",
        )
    measure(
        "plan_priorities 10000 slices harkous",
        lambda: plan_priorities(slices, capacity, SLICE_LEVELS, Model.HARKOUS),
        3,
        "s",
    )


if __name__ == "__main__":
    main()
