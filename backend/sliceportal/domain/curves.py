"""Worst-case delay as a function of link capacity (the paper's Fig. 15), for planning reports.

The slices are aggregated once; each capacity then costs one O(levels) evaluation, and the
curve of a level is shared by all of its slices.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sliceportal.domain.bounds import aggregate_arrays, checked_specs, evaluate_levels, slice_arrays
from sliceportal.domain.spec import (
    DEFAULT_MODEL,
    NUM_LEVELS,
    STANDARD_FRAMING,
    Framing,
    Model,
    SliceSpec,
    SpecError,
    check_capacity,
)

MAX_POINTS = 10_000


@dataclass(frozen=True)
class DelayCurves:
    """Each slice's worst-case delay (``None`` = unbounded) at each capacity."""

    capacities_bps: list[float]
    delays_s: dict[str, list[float | None]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "capacities_bps": list(self.capacities_bps),
            "delays_s": {name: list(delays) for name, delays in self.delays_s.items()},
        }


def capacity_grid(start_bps: float, stop_bps: float, points: int) -> list[float]:
    """``points`` evenly spaced capacities from ``start_bps`` to ``stop_bps`` inclusive."""
    start = check_capacity(start_bps, "start_bps")
    stop = check_capacity(stop_bps, "stop_bps")
    if stop < start:
        raise SpecError("stop_bps", "must be at least start_bps")
    if isinstance(points, bool) or not isinstance(points, int) or not 1 <= points <= MAX_POINTS:
        raise SpecError("points", f"must be an integer from 1 to {MAX_POINTS}")
    if points == 1:
        return [start]
    step = (stop - start) / (points - 1)
    return [start + i * step for i in range(points - 1)] + [stop]


def delay_curves(
    slices: Iterable[SliceSpec],
    capacities: Sequence[float],
    model: Model | str = DEFAULT_MODEL,
    framing: Framing = STANDARD_FRAMING,
) -> DelayCurves:
    """The bound of every slice at every capacity in ``capacities``."""
    specs = checked_specs(slices)
    if len(capacities) > MAX_POINTS:
        raise SpecError("capacities", f"must have at most {MAX_POINTS} entries")
    points = [check_capacity(c, f"capacities[{i}]") for i, c in enumerate(capacities)]
    agg = aggregate_arrays(slice_arrays(specs))
    chosen = Model(model)
    per_level: list[list[float | None]] = [[] for _ in range(NUM_LEVELS)]
    for capacity in points:
        bounds = evaluate_levels(agg, capacity, chosen, framing).bound_s
        for k in range(NUM_LEVELS):
            per_level[k].append(bounds[k] if math.isfinite(bounds[k]) else None)
    return DelayCurves(
        capacities_bps=points,
        delays_s={spec.name: list(per_level[spec.priority]) for spec in specs},
    )
