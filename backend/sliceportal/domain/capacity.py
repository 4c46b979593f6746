"""The smallest link capacity that makes a set of slices admissible (priorities as given).

Every bound is non-increasing in the capacity, and so is the rate check, so admissibility is a
monotone predicate of ``C``. Per level the binding constraint is the level's tightest target,
so the slices are aggregated per level once (O(n)) and the predicate is then evaluated on the
eight level aggregates (O(levels)) inside a bisection: O(n + levels · iterations) in all,
independent of the number of slices after aggregation. The bisection runs on the very
evaluator the analysis uses, so the answer is admissible by construction, and it stops at a
relative width of 1e-13, far below the 1e-6 the product promises.

``None`` means no capacity the analysis accepts (up to 1 Pbit/s) works: in exact arithmetic,
a level whose tightest target is 0 while something must still be sent before it (a burst at or
above it, or with netcalc a lower-priority packet). With positive targets some capacity always
works, since every bound tends to 0 as C grows; it may just be more than 1 Pbit/s.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from sliceportal.domain.bounds import (
    LevelAggregates,
    aggregate_arrays,
    checked_specs,
    evaluate_levels,
    slice_arrays,
    sound_aggregates,
)
from sliceportal.domain.spec import (
    DEFAULT_MODEL,
    MAX_RATE_BPS,
    NUM_LEVELS,
    STANDARD_FRAMING,
    Framing,
    Model,
    SliceSpec,
)

_RELATIVE_WIDTH = 1e-13


def min_capacity(
    slices: Iterable[SliceSpec],
    model: Model | str = DEFAULT_MODEL,
    framing: Framing = STANDARD_FRAMING,
) -> float | None:
    """Smallest admissible capacity in bit/s, or ``None`` when none up to 1 Pbit/s works."""
    specs = checked_specs(slices)
    return min_capacity_levels(aggregate_arrays(slice_arrays(specs)), Model(model), framing)


def _work_before(agg: LevelAggregates, level: int, model: Model) -> tuple[float, float]:
    """(bytes that may be served before a packet of ``level`` completes, rates above it), on
    the aggregates the model charges (:func:`sound_aggregates` for netcalc)."""
    burst = math.fsum(agg.burst_bytes[level:])
    above = math.fsum(agg.rate_bps[level + 1 :])
    if model is Model.NETCALC:
        burst += max(agg.max_packet_bytes[:level], default=0)
    return burst, above


def min_capacity_levels(
    agg: LevelAggregates, model: Model, framing: Framing = STANDARD_FRAMING
) -> float | None:
    """:func:`min_capacity` on per-level aggregates (shared with admission's fixes)."""
    levels = [k for k in range(NUM_LEVELS) if agg.count[k]]
    if not levels:
        return 0.0

    def admissible(capacity: float) -> bool:
        return evaluate_levels(agg, capacity, model, framing).admissible

    charged = sound_aggregates(agg, framing) if model is Model.NETCALC else agg
    total = evaluate_levels(agg, MAX_RATE_BPS, model, framing).total_rate_bps
    if total > MAX_RATE_BPS:
        return None
    if admissible(total):
        return total
    # A closed-form capacity that satisfies each level (r ≥ 8·work/target at every level at or
    # above it, and the level's rates fit); their maximum brackets the answer from above,
    # up to rounding, which the doubling absorbs.
    guess = total
    for k in levels:
        work, above = _work_before(charged, k, model)
        target = agg.min_target_s[k]
        if target > 0:
            guess = max(guess, above + max(charged.rate_bps[k], 8.0 * work / target))
        elif work > 0:
            guess = math.inf
    low, high = total, min(guess * (1.0 + 1e-9), MAX_RATE_BPS)
    while not admissible(high):
        if high >= MAX_RATE_BPS:
            return None
        low, high = high, min(high * 2.0, MAX_RATE_BPS)
    while high - low > high * _RELATIVE_WIDTH:
        middle = 0.5 * (low + high)
        if middle in (low, high):  # adjacent floats: nothing left to split
            break
        if admissible(middle):
            high = middle
        else:
            low = middle
    return high
