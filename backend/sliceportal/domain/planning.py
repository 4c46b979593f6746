"""Priority planning: give the slices priorities that meet every delay target, or prove none can.

The paper leaves this open ("an intelligent control plane could adaptively assign slices to
different priorities"). A plan is an ordered partition of the slices into at most ``Q`` groups
(the hardware queues), placed at priorities 7, 6, 5, … from the top; only the order of the
groups matters to either model, so using the top ``Q`` levels loses nothing. Each search below
returns the plan with the fewest levels among the plans it considers.

What we know about the problem (and what the code relies on):

- Rates must fit: if Σ rates > C no plan exists. Otherwise every residual capacity is positive.
- A relaxation proves many instances infeasible at once. Take the ``k`` slices with the tightest
  targets; whichever of them is placed lowest waits at least for all their bursts at the full
  capacity, so it needs ``Σ bursts / C ≤ (k-th smallest target)``. This bounds both models
  (netcalc ≥ harkous) and is checked for every ``k`` in O(n log n).
- netcalc with equal maximum packets: moving a slice with a larger target down, into the group
  of a slice with a smaller target, never hurts anyone (the groups it leaves see less burst and
  more residual capacity, the group it joins keeps its tightest target, the blocking term is
  unchanged). So some feasible plan, if any exists, is *target-monotone*: the groups are
  contiguous segments of the slices sorted by target, and a group's bound depends only on its
  two end points. Layered reachability over the end points decides the problem exactly in
  O(Q·n log n). With unequal maximum packets the blocking term of a group depends on which
  slices are below it, the exchange argument breaks, and the segment search is a heuristic.
- harkous is *not* target-monotone. Counterexample, with C = 1 bit/s, Q = 2 and bursts in bits
  (so a burst alone at the top waits burst/C seconds):
  Z (rate 0.9, burst 0.01, target 0.07), Y (rate 1e-9, burst 0.05, target 1),
  X (rate 0.05, burst 0.055, target 0.62). The only feasible plan puts Y, the slice with the
  *loosest* target, at the top together with Z: {Z, Y} above {X} gives Z and Y 0.06 and X
  0.06 + 0.055 / (0.1 - 1e-9) ≈ 0.61. Every target-ordered plan fails: Z alone on top leaves
  X and Y 0.01 + 0.105 / 0.1 = 1.06; {Z, X} on top leaves Y 0.065 + 0.05 / 0.05 = 1.065.
  Placing a near-zero-rate, bursty slice high costs everybody below only its burst at full
  speed; placing it low costs it its burst at a scarce residual rate. Which slices should fill
  a group's slack is a knapsack-like choice, so no polynomial exact algorithm is expected.

The search, in order (each found plan is re-checked with the analysis itself before it is
returned, so a returned plan is admissible by construction):

1. the certificates above (rates, the relaxation) prove infeasibility immediately;
2. the segment search in target order (exact for netcalc with equal packets; otherwise a
   heuristic, a dynamic programme over segment end points keeping, for harkous, the least
   accumulated delay per end point and number of levels);
3. heuristics: the segment search in other orders (by rate, by rate × target) and the exact
   search over plans that keep each class of identical slices whole;
4. an exact search when it is small enough: slices with identical (rate, burst, target, packet) are
   merged into classes and a dynamic programme runs over the counts placed so far, keeping the
   least accumulated delay per (counts, levels) and pruning states that the relaxation already
   condemns. It covers every plan of up to 15 distinct slices, and larger instances when the
   classes are few and small.

``exhaustive`` is True when the answer is final: a plan was found, or infeasibility was proven
(by a certificate, the exact netcalc segment search, the single plan of one level, or the
exact search). It is False when the
time budget ran out or the instance was too large for the exact search and the heuristics found
nothing. Proofs hold up to floating-point rounding in the last digits of the bounds.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from sliceportal.domain.bounds import (
    TIMESTAMP_TICK_S,
    BoolArray,
    FloatArray,
    IntArray,
    SliceArrays,
    analyze_arrays,
    checked_specs,
    slice_arrays,
)
from sliceportal.domain.formatting import format_bytes, format_delay, format_rate
from sliceportal.domain.spec import (
    DEFAULT_MODEL,
    SLICE_LEVELS,
    STANDARD_FRAMING,
    TOP_PRIORITY,
    Framing,
    Model,
    SliceSpec,
    check_capacity,
    check_levels,
)

DEFAULT_TIME_BUDGET_S = 2.0
_MAX_CUTS = 1024
"""Segment end points the matrix search considers (all of them up to 1,023 slices)."""
_EXACT_PAIRS = 20_000_000
"""Largest number of (state, next group) pairs the exact search may enumerate (the time budget
still applies): every plan of 15 distinct slices, or of three classes of 20."""
_CERTIFICATE_MARGIN = 1e-9
"""Relative margin before the relaxation is called a proof, so rounding never fakes one."""


@dataclass(frozen=True)
class PriorityPlan:
    """The planner's answer. ``priorities`` is empty when no plan was found."""

    feasible: bool
    priorities: dict[str, int]
    exhaustive: bool
    """True when the answer is final: a plan, or a proof that none exists."""
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "feasible": self.feasible,
            "priorities": dict(self.priorities),
            "exhaustive": self.exhaustive,
            "reason": self.reason,
        }


class _OutOfBudget(Exception):
    """The time budget ran out or the exact search would be too large."""


@dataclass(frozen=True, eq=False)
class _Problem:
    specs: tuple[SliceSpec, ...]
    arrays: SliceArrays
    capacity: float
    levels: int
    model: Model
    framing: Framing
    rate: FloatArray
    """As the model charges it (netcalc: on the wire, see :func:`sound_aggregates`)."""
    burst_bits: FloatArray
    packet_bits: FloatArray
    """netcalc: never below best effort's largest frame, which blocks the bottom group."""
    blocking_floor_bits: float
    deadline: float

    def check_time(self) -> None:
        if time.perf_counter() > self.deadline:
            raise _OutOfBudget

    @property
    def target(self) -> FloatArray:
        return self.arrays.delay_target_s


@dataclass(frozen=True, eq=False)
class _Classes:
    """Identical slices merged: per-class values, counts and member indices."""

    rate: FloatArray
    burst_bits: FloatArray
    target: FloatArray
    packet_bits: FloatArray
    counts: IntArray
    members: list[IntArray]
    of_slice: IntArray


def plan_priorities(
    slices: Iterable[SliceSpec],
    capacity_bps: float,
    levels: int = SLICE_LEVELS,
    model: Model | str = DEFAULT_MODEL,
    *,
    framing: Framing = STANDARD_FRAMING,
    time_budget_s: float = DEFAULT_TIME_BUDGET_S,
) -> PriorityPlan:
    """Priorities (at most ``levels`` distinct, from 7 down) meeting every target, or why not."""
    specs = checked_specs(slices)
    capacity = check_capacity(capacity_bps)
    queues = check_levels(levels)
    if not specs:
        return PriorityPlan(True, {}, True, "no slices to place")
    arrays = slice_arrays(specs)
    chosen = Model(model)
    rate, burst, packet, floor = arrays.rate_bps, arrays.burst_bytes, arrays.max_packet_bytes, 0.0
    if chosen is Model.NETCALC:
        scale = framing.rate_factor
        burst = scale * (burst + rate * (TIMESTAMP_TICK_S / 8.0))
        rate = scale * rate
        floor = float(framing.max_frame_bytes + framing.overhead_bytes)
        packet = np.maximum(packet + framing.overhead_bytes, floor)
    problem = _Problem(
        specs=specs,
        arrays=arrays,
        capacity=capacity,
        levels=min(queues, len(specs)),
        model=chosen,
        framing=framing,
        rate=rate,
        burst_bits=8.0 * burst,
        packet_bits=8.0 * packet,
        blocking_floor_bits=8.0 * floor,
        deadline=time.perf_counter() + time_budget_s,
    )
    proof = _certificate(problem)
    if proof is not None:
        return _impossible(proof)
    classes = _classes(problem)
    by_target = np.lexsort((problem.rate, problem.target))
    try:
        if problem.model is Model.NETCALC and _all_equal(problem.packet_bits):
            groups = _netcalc_segments(problem, by_target)
            if groups is None:
                return _impossible(
                    "with equal maximum packets, target-ordered plans are optimal under "
                    "netcalc, and none of them fits"
                )
            found = _plan(problem, groups, "exact target-order search")
        else:
            groups = _segments(problem, by_target, classes)
            if groups is None and problem.levels == 1:
                return _impossible("the slices do not fit together at one priority level")
            found = _plan(problem, groups, "target-order search")
        if found is None:
            found = _heuristics(problem, classes)
        if found is not None:
            return found
        if _exact_pairs(classes.counts) <= _EXACT_PAIRS:
            count_groups = _exact_search(problem, classes)
            if count_groups is None:
                return _impossible(
                    f"exact search over every plan with at most {problem.levels} priority "
                    f"level{'s' if problem.levels > 1 else ''}"
                )
            found = _plan(problem, _expand(classes, count_groups), "exact search")
            if found is not None:
                return found
        reason = "the instance is too large for the exact search and the heuristics found none"
    except _OutOfBudget:
        reason = f"the search ran out of its {time_budget_s:g} s budget"
    return PriorityPlan(False, {}, False, f"no plan found, none proven impossible: {reason}")


def _impossible(why: str) -> PriorityPlan:
    return PriorityPlan(False, {}, True, f"no plan exists: {why}")


def _heuristics(problem: _Problem, classes: _Classes) -> PriorityPlan | None:
    rate, target = problem.rate, problem.target
    for name, order in (
        ("rate-order search", np.lexsort((target, rate))),
        ("rate × target order search", np.lexsort((target, rate * target))),
    ):
        found = _plan(problem, _segments(problem, order, classes), name)
        if found is not None:
            return found
    units = len(classes.counts)
    if units < len(problem.specs) and _exact_pairs(np.ones(units, np.intp)) <= _EXACT_PAIRS:
        whole = _Classes(
            rate=classes.rate * classes.counts,
            burst_bits=classes.burst_bits * classes.counts,
            target=classes.target,
            packet_bits=classes.packet_bits,
            counts=np.ones(units, np.intp),
            members=[np.array([k], np.intp) for k in range(units)],
            of_slice=np.arange(units, dtype=np.intp),
        )
        unit_groups = _exact_search(problem, whole)
        if unit_groups is not None:
            groups = [
                np.concatenate([classes.members[k] for k in np.flatnonzero(g)]) for g in unit_groups
            ]
            return _plan(problem, groups, "search over whole service classes")
    return None


def _all_equal(values: FloatArray) -> bool:
    return bool(np.all(values == values[0]))


def _plan(problem: _Problem, groups: list[IntArray] | None, how: str) -> PriorityPlan | None:
    """The plan for ``groups`` (top first), if the analysis confirms it."""
    if groups is None:
        return None
    priority = np.empty(len(problem.specs), np.intp)
    for j, members in enumerate(groups):
        priority[members] = TOP_PRIORITY - j
    arrays = replace(problem.arrays, priority=priority)
    if not analyze_arrays(arrays, problem.capacity, problem.model, problem.framing).admissible:
        return None  # only rounding at the very edge of a target can get here
    priorities = {spec.name: p for spec, p in zip(problem.specs, priority.tolist(), strict=True)}
    used = len(groups)
    return PriorityPlan(
        True,
        priorities,
        True,
        f"found by {how}: {used} priority level{'s' if used > 1 else ''} "
        f"({TOP_PRIORITY} to {TOP_PRIORITY - used + 1})",
    )


def _certificate(problem: _Problem) -> str | None:
    """A short proof that no plan exists, when one of the cheap ones applies."""
    total = math.fsum(problem.rate.tolist())
    if total > problem.capacity:
        excess = format_rate(total - problem.capacity)
        return f"rate limits exceed capacity by {excess}"
    order = np.argsort(problem.target, kind="stable")
    needed = np.cumsum(problem.burst_bits[order]) / problem.capacity
    targets = problem.target[order]
    failing = np.flatnonzero(needed > targets * (1.0 + _CERTIFICATE_MARGIN))
    if not len(failing):
        return None
    k = int(failing[0])
    seconds = float(needed[k])
    burst = format_bytes(seconds * problem.capacity / 8)
    return (
        f"the {k + 1} slice(s) with the tightest targets (up to "
        f"{format_delay(float(targets[k]))}) carry {burst} of burst, which alone takes "
        f"{format_delay(seconds)} at the full link capacity"
    )


def _classes(problem: _Problem) -> _Classes:
    keys = np.stack([problem.rate, problem.burst_bits, problem.target, problem.packet_bits], 1)
    unique, inverse, counts = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    by_class = np.argsort(inverse, kind="stable")
    members = np.split(by_class, np.cumsum(counts)[:-1])
    return _Classes(
        rate=unique[:, 0].copy(),
        burst_bits=unique[:, 1].copy(),
        target=unique[:, 2].copy(),
        packet_bits=unique[:, 3].copy(),
        counts=counts.astype(np.intp),
        members=list(members),
        of_slice=inverse.astype(np.intp),
    )


def _exact_pairs(counts: IntArray) -> int:
    """(state, next group) pairs of the exact search: Π (c+1)(c+2)/2."""
    pairs = 1
    for c in counts.tolist():
        pairs *= (c + 1) * (c + 2) // 2
        if pairs > _EXACT_PAIRS:
            break
    return pairs


def _expand(classes: _Classes, count_groups: list[IntArray]) -> list[IntArray]:
    """Per-class counts per group, top first, to slice indices."""
    taken = np.zeros(len(classes.counts), np.intp)
    groups = []
    for counts in count_groups:
        parts = []
        for k in np.flatnonzero(counts).tolist():
            parts.append(classes.members[k][taken[k] : taken[k] + counts[k]])
            taken[k] += counts[k]
        groups.append(np.concatenate(parts))
    return groups


def _netcalc_segments(problem: _Problem, order: IntArray) -> list[IntArray] | None:
    """Exact for netcalc with equal packets: layered reachability over segment end points.

    A group [a, e) of the target-sorted slices fits when
    ``(Σ bursts before e + M) / (C - Σ rates before a) ≤ target[a]`` (best effort's frame for
    the bottom group, which is ``M`` too when no slice's frame is larger); the left side grows
    with ``e``, so from each ``a`` the feasible ends form a range.
    """
    n = len(order)
    rate_before = np.concatenate(([0.0], np.cumsum(problem.rate[order])))
    burst_before = np.concatenate(([0.0], np.cumsum(problem.burst_bits[order])))
    target = problem.target[order]
    residual = problem.capacity - rate_before[:n]
    packet = float(problem.packet_bits[0])
    # Largest inner end e (< n) reachable from each start a.
    last_end = np.searchsorted(burst_before[:n] + packet, target * residual, side="right") - 1
    to_bottom = (burst_before[n] + problem.blocking_floor_bits) / residual <= target
    stride = n + 1
    reached = np.zeros(n, bool)
    reached[0] = True
    parent = np.full(n + 1, -1, np.intp)
    positions = np.arange(1, n)
    for _ in range(problem.levels):
        problem.check_time()
        starts = np.flatnonzero(reached)
        finishers = starts[to_bottom[starts]]
        if len(finishers):
            parent[n] = finishers[0]
            return _segments_from_parents(order, parent, n)
        key = np.full(n, -1, np.int64)
        key[starts] = last_end[starts] * stride + starts
        best = np.maximum.accumulate(key)[positions - 1]
        new = (best >= 0) & (best // stride >= positions) & ~reached[positions]
        if not new.any():
            return None
        parent[positions[new]] = best[new] % stride
        reached[positions[new]] = True
    return None


def _segments_from_parents(order: IntArray, parent: IntArray, end: int) -> list[IntArray]:
    groups = []
    while end > 0:
        start = int(parent[end])
        groups.append(order[start:end])
        end = start
    return groups[::-1]


def _cut_positions(class_in_order: IntArray) -> IntArray:
    """Segment end points: all of them when few, else class boundaries plus an even spread."""
    n = len(class_in_order)
    if n < _MAX_CUTS:
        return np.arange(n + 1)
    changes = np.flatnonzero(class_in_order[1:] != class_in_order[:-1]) + 1
    if len(changes) > _MAX_CUTS // 2:
        changes = changes[np.linspace(0, len(changes) - 1, _MAX_CUTS // 2).astype(np.intp)]
    even = np.linspace(0, n, _MAX_CUTS - len(changes)).astype(np.intp)
    return np.unique(np.concatenate(([0, n], changes, even)))


def _segments(problem: _Problem, order: IntArray, classes: _Classes) -> list[IntArray] | None:
    """Best plan whose groups are contiguous segments of ``order`` (a dynamic programme)."""
    cuts = _cut_positions(classes.of_slice[order])
    m = len(cuts) - 1
    starts, ends = cuts[:-1], cuts[1:]
    rate_before = np.concatenate(([0.0], np.cumsum(problem.rate[order])))
    burst_before = np.concatenate(([0.0], np.cumsum(problem.burst_bits[order])))
    target = problem.target[order]
    upper = np.triu(np.ones((m, m), bool))
    # min_target[i, j]: tightest target of the group from cut i to cut j + 1.
    segment_min = np.minimum.reduceat(target, starts)
    min_target = np.minimum.accumulate(np.where(upper, segment_min, np.inf), axis=1)
    residual = (problem.capacity - rate_before[starts])[:, None]
    columns = np.arange(m)
    if problem.model is Model.HARKOUS:
        cost = np.where(
            upper, (burst_before[ends] - burst_before[starts][:, None]) / residual, np.inf
        )
        best = np.full(m + 1, np.inf)
        best[0] = 0.0
        parents = []
        for _ in range(problem.levels):
            problem.check_time()
            candidate = best[:m, None] + cost
            candidate[~(candidate <= min_target)] = np.inf
            source = candidate.argmin(axis=0)
            value = candidate[source, columns]
            improved = value < best[1:]
            parent = np.full(m + 1, -1, np.intp)
            parent[1:][improved] = source[improved]
            best[1:][improved] = value[improved]
            parents.append(parent)
            if math.isfinite(best[m]):
                return _unwind(order, cuts, parents)
            if not improved.any():
                return None
        return None
    packet = problem.packet_bits[order]
    below_max = np.concatenate(
        (np.maximum.accumulate(packet[::-1])[::-1], [problem.blocking_floor_bits])
    )
    bound = (burst_before[ends] + below_max[ends]) / residual
    feasible = upper & (bound <= min_target)
    reached = np.zeros(m + 1, bool)
    reached[0] = True
    parent = np.full(m + 1, -1, np.intp)
    for _ in range(problem.levels):
        problem.check_time()
        usable = feasible & reached[:m, None]
        new = usable.any(axis=0) & ~reached[1:]
        parent[1:][new] = usable.argmax(axis=0)[new]
        reached[1:] |= new
        if reached[m]:
            return _segments_from_parents(order, _cut_parents(cuts, parent), len(order))
        if not new.any():
            return None
    return None


def _cut_parents(cuts: IntArray, parent: IntArray) -> IntArray:
    """Parents indexed by slice position instead of by cut index."""
    by_position = np.full(int(cuts[-1]) + 1, -1, np.intp)
    has = parent >= 0
    by_position[cuts[has]] = cuts[parent[has]]
    return by_position


def _unwind(order: IntArray, cuts: IntArray, parents: list[IntArray]) -> list[IntArray]:
    """Groups of the harkous segment programme, from its per-level parent arrays."""
    groups = []
    c, layer = len(cuts) - 1, len(parents) - 1
    while c > 0:
        source = int(parents[layer][c])
        if source >= 0:
            groups.append(order[cuts[source] : cuts[c]])
            c = source
        layer -= 1
    return groups[::-1]


def _exact_search(problem: _Problem, classes: _Classes) -> list[IntArray] | None:
    """Every plan, by dynamic programming over the per-class counts placed so far.

    A state is the vector of how many slices of each class sit in the groups above; the next
    group is any non-zero vector of the rest. For harkous, per (state, levels used) only the
    least accumulated delay matters (the future depends on nothing else), and a state reached
    with more levels and no less delay is dominated. For netcalc a group's bound depends only
    on the sets above, in and below it, so plain reachability suffices. Returns the per-class
    counts of each group (top first), or None when no plan exists.
    """
    counts = classes.counts
    radix = counts + 1
    strides = np.concatenate(([1], np.cumprod(radix[:-1]))).astype(np.intp)
    size = int(np.prod(radix))
    full = size - 1
    digits = (np.arange(size)[:, None] // strides) % radix
    present = digits > 0
    rate_above = digits @ classes.rate
    burst_above = digits @ classes.burst_bits
    group_target = np.where(present, classes.target, np.inf).min(axis=1)
    group_packet = np.where(present, classes.packet_bits, problem.blocking_floor_bits).max(axis=1)
    residual = problem.capacity - rate_above
    # Relaxation per state: the rest, sorted by target, cannot beat their bursts at `residual`.
    by_target = np.argsort(classes.target, kind="stable")
    rest = (counts - digits)[:, by_target]
    rest_burst = np.cumsum(rest * classes.burst_bits[by_target], axis=1)
    rest_present = rest > 0
    sorted_target = classes.target[by_target]
    harkous = problem.model is Model.HARKOUS

    def hopeless(states: IntArray, delay: FloatArray) -> BoolArray:
        late = delay[:, None] + rest_burst[states] / residual[states, None] > sorted_target
        hopeless_states: BoolArray = np.any(late & rest_present[states], axis=1)
        return hopeless_states

    def groups_from(state: int) -> IntArray:
        subs = np.zeros(1, np.intp)
        for k in np.flatnonzero(counts - digits[state]).tolist():
            steps = np.arange(counts[k] - digits[state, k] + 1) * strides[k]
            subs = (subs[:, None] + steps).ravel()
        return subs[1:]

    best = np.full(size, np.inf)
    best[0] = 0.0
    reached = np.zeros(size, bool)
    reached[0] = True
    frontier = np.zeros(1, np.intp)
    delays = np.zeros(1)
    parents = []
    for _ in range(problem.levels):
        layer_best = np.full(size, np.inf)
        parent = np.full(size, -1, np.intp)
        for state, delay in zip(frontier.tolist(), delays.tolist(), strict=True):
            problem.check_time()
            subs = groups_from(state)
            after = state + subs
            if harkous:
                value = delay + burst_above[subs] / residual[state]
                ok = value <= group_target[subs]
            else:
                value = (burst_above[after] + group_packet[full - after]) / residual[state]
                ok = (value <= group_target[subs]) & ~reached[after] & (parent[after] < 0)
            better = after[ok]
            value = value[ok]
            keep = value < layer_best[better]
            layer_best[better[keep]] = value[keep]
            parent[better[keep]] = state
        parents.append(parent)
        if parent[full] >= 0:
            return _count_groups(digits, parents)
        if harkous:
            frontier = np.flatnonzero(layer_best < best)
            best = np.minimum(best, layer_best)
            delays = layer_best[frontier]
        else:
            frontier = np.flatnonzero(parent >= 0)
            reached[frontier] = True
            delays = burst_above[frontier] / residual[frontier]
        alive = ~hopeless(frontier, delays)
        frontier, delays = frontier[alive], delays[alive]
        if not len(frontier):
            return None
    return None


def _count_groups(digits: IntArray, parents: list[IntArray]) -> list[IntArray]:
    groups = []
    state = len(digits) - 1
    for parent in reversed(parents):
        source = int(parent[state])
        if source < 0:
            continue
        groups.append(digits[state] - digits[source])
        state = source
        if state == 0:
            break
    return groups[::-1]
