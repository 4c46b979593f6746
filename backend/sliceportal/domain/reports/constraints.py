"""Every delay constraint of a network, each link under its own model, and cheap what-ifs on it.

A network is admissible when every link admits its slices (rates fit, every per-hop bound within
its target) and every slice's end-to-end bound (the sum of its per-hop bounds, each link under
its own model) is within its end-to-end target. Headroom, growth, margins and the burst caps of
the report all ask how far one quantity can move before some constraint breaks, so they share
this module.

What-ifs never re-analyse a link's slices. A link is its per-level aggregates
(:class:`LevelAggregates`); changing one slice changes one level's sums, and the level sums are
kept as exact parts, so the changed sums are the correctly rounded sums of the changed slices:
bit-for-bit what a fresh analysis of the changed network computes. Slices with an end-to-end
target that share a path and a priority see the same per-hop bounds, so they are grouped and
only the tightest target of each group is checked.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from sliceportal.domain.bounds import (
    LevelAggregates,
    LevelBounds,
    aggregate_arrays,
    evaluate_levels,
)
from sliceportal.domain.capacity import min_capacity_levels
from sliceportal.domain.reports.network import IndexedNetwork
from sliceportal.domain.spec import MAX_RATE_BPS, NUM_LEVELS

_NUDGE = 1e-12
"""Relative step that lifts a minimum capacity over the last-digit rounding of a target budget."""
_MAX_NUDGES = 64
SEARCH_RELATIVE_TOLERANCE = 1e-6
"""How close to the true limit the searches stop: the precision the product promises."""
_MAX_STEPS = 80
"""Enough halvings to find a limit a million times below its bracket to 1e-6."""


def exact_parts(values: Iterable[float]) -> tuple[float, ...]:
    """Floats whose exact sum is the exact sum of ``values``.

    ``fsum`` of these parts and a few more terms is the correctly rounded sum of all of them, so
    a level sum with one slice replaced costs O(1) and equals a fresh ``fsum`` of the level.
    """
    rest = list(values)
    parts: list[float] = []
    while (remainder := math.fsum(rest)) != 0.0:
        parts.append(remainder)
        rest.append(-remainder)
    return tuple(parts)


@dataclass(frozen=True, slots=True)
class Breach:
    """A broken constraint: what it is, in words, and the link it sits on (``None``: a path)."""

    text: str
    """``"<slice> on <link>"``, ``"rate sum on <link>"`` or ``"<slice> end-to-end"``."""
    link: int | None


@dataclass(frozen=True, slots=True)
class E2EGroup:
    """Slices with an end-to-end target, the same set of links and the same priority."""

    links: tuple[int, ...]
    level: int
    target_s: float
    slice: int
    """The member with the tightest target: the one that breaks first."""


class NetworkConstraints:
    """The constraints of a network, each link under its own model, at today's values."""

    def __init__(self, net: IndexedNetwork) -> None:
        self.net = net
        self.names = tuple(link.name for link in net.links)
        self.aggregates = tuple(aggregate_arrays(on.arrays) for on in net.on_link)
        self.levels = tuple(
            evaluate_levels(agg, link.capacity_bps, link.model, link.framing)
            for agg, link in zip(self.aggregates, net.links, strict=True)
        )
        self._rate_parts, self._burst_parts, self._tightest = _level_details(net)
        self.groups = _e2e_groups(net)
        on_link: list[list[int]] = [[] for _ in net.links]
        for g, group in enumerate(self.groups):
            for i in group.links:
                on_link[i].append(g)
        self.groups_on_link = tuple(tuple(gs) for gs in on_link)
        self._group_of = {(group.links, group.level): g for g, group in enumerate(self.groups)}

    # --- what-ifs -------------------------------------------------------------------------

    def evaluate(
        self, link: int, agg: LevelAggregates, capacity_bps: float | None = None
    ) -> LevelBounds:
        """``agg`` on ``link`` under the link's own model (at its capacity unless given)."""
        declared = self.net.links[link]
        capacity = declared.capacity_bps if capacity_bps is None else capacity_bps
        return evaluate_levels(agg, capacity, declared.model, declared.framing)

    def with_slice(
        self, slice_index: int, rate_bps: float, burst_bytes: float
    ) -> dict[int, LevelBounds]:
        """The level bounds of the slice's links with its rate and burst replaced."""
        declared = self.net.slices[slice_index]
        level = declared.priority
        old_rate, old_burst = declared.rate_bps, self.net.burst_bytes(slice_index)
        changed = {}
        for i in self.net.paths[slice_index]:
            agg = self.aggregates[i]
            rates = list(agg.rate_bps)
            bursts = list(agg.burst_bytes)
            rates[level] = math.fsum((*self._rate_parts[i][level], -old_rate, rate_bps))
            bursts[level] = math.fsum((*self._burst_parts[i][level], -old_burst, burst_bytes))
            changed[i] = self.evaluate(
                i,
                LevelAggregates(
                    tuple(rates), tuple(bursts), agg.count, agg.min_target_s, agg.max_packet_bytes
                ),
            )
        return changed

    def scaled_aggregates(self, link: int, factor: float) -> LevelAggregates:
        """The link's aggregates with every rate (and so every burst) times ``factor``."""
        return aggregate_arrays(self.net.on_link[link].scaled(factor))

    # --- checks ---------------------------------------------------------------------------

    def hop_violation(self, link: int, levels: LevelBounds) -> Breach | None:
        """What breaks first on ``link`` evaluated as ``levels``, or ``None`` if it admits all."""
        if levels.admissible:
            return None
        if levels.total_rate_bps > levels.capacity_bps:
            return Breach(f"rate sum on {self.names[link]}", link)
        tightest = self._tightest[link]
        for k in range(NUM_LEVELS - 1, -1, -1):
            name, target = tightest[k]
            if name is not None and (levels.overflow[k] or not levels.bound_s[k] <= target):
                return Breach(f"{name} on {self.names[link]}", link)
        raise AssertionError("an inadmissible link has a failing level")

    def group_total(self, group: E2EGroup, changed: Mapping[int, LevelBounds]) -> float:
        """The group's end-to-end bound (inf when unbounded) with ``changed`` links."""
        return math.fsum(changed.get(i, self.levels[i]).bound_s[group.level] for i in group.links)

    def group_violation(self, g: int, changed: Mapping[int, LevelBounds]) -> Breach | None:
        group = self.groups[g]
        if self.group_total(group, changed) <= group.target_s:
            return None
        return Breach(f"{self.net.slices[group.slice].name} end-to-end", None)

    def violation(
        self,
        changed: Mapping[int, LevelBounds],
        hop_links: Iterable[int],
        groups: Iterable[int],
    ) -> Breach | None:
        """The first broken constraint among the per-hop ones of ``hop_links`` and the
        end-to-end ones of ``groups``, with ``changed`` links; ``None`` when all hold."""
        for i in hop_links:
            found = self.hop_violation(i, changed.get(i, self.levels[i]))
            if found is not None:
                return found
        for g in groups:
            found = self.group_violation(g, changed)
            if found is not None:
                return found
        return None

    def groups_touching(self, links: Iterable[int], max_level: int | None = None) -> list[int]:
        """The groups crossing any of ``links`` (at or below ``max_level`` when given)."""
        found: set[int] = set()
        for i in links:
            found.update(self.groups_on_link[i])
        return sorted(g for g in found if max_level is None or self.groups[g].level <= max_level)

    def binding_groups(self, links: Iterable[int], groups: Iterable[int]) -> list[int]:
        """Of ``groups``, those that can break first when only ``links`` change.

        Groups crossing the same subset of ``links`` at the same level get the same change of
        end-to-end bound, so the one with the least budget left over the unchanged links breaks
        first (up to the last digit, where two budgets tie) and the others need no check.
        """
        changing = set(links)
        best: dict[tuple[frozenset[int], int], tuple[float, int]] = {}
        for g in groups:
            group = self.groups[g]
            shared = frozenset(changing.intersection(group.links))
            fixed = (self.levels[i].bound_s[group.level] for i in group.links if i not in changing)
            budget = math.fsum((group.target_s, *(-bound for bound in fixed)))
            key = (shared, group.level)
            if key not in best or budget < best[key][0]:
                best[key] = (budget, g)
        return sorted(g for _, g in best.values())

    def slice_group(self, slice_index: int) -> int | None:
        """The group of a slice with an end-to-end target."""
        declared = self.net.slices[slice_index]
        if declared.e2e_delay_target_s is None:
            return None
        return self._group_of.get((tuple(sorted(self.net.paths[slice_index])), declared.priority))

    # --- capacities -----------------------------------------------------------------------

    def required_capacity(
        self,
        link: int,
        agg: LevelAggregates,
        groups: Sequence[int],
        others: Mapping[int, LevelBounds] | None = None,
    ) -> float | None:
        """Least capacity of ``link`` (holding ``agg``) meeting its per-hop targets and the
        end-to-end targets of ``groups``, the other links as in ``others`` (default: today).

        An end-to-end target leaves the link a budget (the target minus the other hops), which
        tightens the level's target; the minimum capacity of the tightened aggregates answers
        the question. ``None`` when no capacity up to 1 Pbit/s works.
        """
        fixed = dict(others or {})
        budgets = list(agg.min_target_s)
        for g in groups:
            group = self.groups[g]
            rest = math.fsum(
                fixed.get(i, self.levels[i]).bound_s[group.level] for i in group.links if i != link
            )
            budget = group.target_s - rest
            if not budget >= 0:
                return None
            budgets[group.level] = min(budgets[group.level], budget)
        model = self.net.links[link].model
        capacity = min_capacity_levels(
            replace(agg, min_target_s=tuple(budgets)), model, self.net.links[link].framing
        )
        if capacity is None:
            return None
        # The budgets round once more than the sums the check makes: step over that last digit.
        for _ in range(_MAX_NUDGES):
            fixed[link] = self.evaluate(link, agg, capacity)
            if self.violation(fixed, [link], groups) is None:
                return capacity
            if capacity >= MAX_RATE_BPS:
                break
            capacity = min(capacity * (1.0 + _NUDGE), MAX_RATE_BPS)
        return None


def _level_details(
    net: IndexedNetwork,
) -> tuple[
    list[list[tuple[float, ...]]],
    list[list[tuple[float, ...]]],
    list[list[tuple[str | None, float]]],
]:
    """Per link and level: exact parts of the rate and burst sums, and the tightest slice."""
    rate_parts = []
    burst_parts = []
    tightest = []
    for on in net.on_link:
        priority = on.arrays.priority.tolist()
        rates = on.arrays.rate_bps.tolist()
        bursts = on.arrays.burst_bytes.tolist()
        per_rate: list[list[float]] = [[] for _ in range(NUM_LEVELS)]
        per_burst: list[list[float]] = [[] for _ in range(NUM_LEVELS)]
        best: list[tuple[str | None, float]] = [(None, math.inf)] * NUM_LEVELS
        for spec, k, rate, burst in zip(on.specs, priority, rates, bursts, strict=True):
            per_rate[k].append(rate)
            per_burst[k].append(burst)
            if best[k][0] is None or spec.delay_target_s < best[k][1]:
                best[k] = (spec.name, spec.delay_target_s)
        rate_parts.append([exact_parts(values) for values in per_rate])
        burst_parts.append([exact_parts(values) for values in per_burst])
        tightest.append(best)
    return rate_parts, burst_parts, tightest


def _e2e_groups(net: IndexedNetwork) -> tuple[E2EGroup, ...]:
    """Slices with an end-to-end target grouped by (set of links, priority)."""
    best: dict[tuple[tuple[int, ...], int], E2EGroup] = {}
    for j, declared in enumerate(net.slices):
        target = declared.e2e_delay_target_s
        if target is None or not net.paths[j]:
            continue
        key = (tuple(sorted(net.paths[j])), declared.priority)
        known = best.get(key)
        if known is None or target < known.target_s:
            best[key] = E2EGroup(key[0], key[1], target, j)
    return tuple(best.values())


def largest_passing(
    check: Callable[[float], Breach | None], low: float, high: float
) -> tuple[float, Breach | None]:
    """The largest ``x`` in ``[low, high]`` that ``check`` passes (returns ``None`` for), to a
    relative 1e-6, and what breaks just above it; ``check`` must pass ``low`` (or ``low`` is 0,
    which is then returned when nothing larger passes).

    Bisection is sound because every what-if here is monotone: bounds never decrease when a rate
    or a burst grows, and rates and bursts only grow with ``x``.
    """
    failure = check(high)
    if failure is None:
        return high, check(math.nextafter(high, math.inf) * (1.0 + SEARCH_RELATIVE_TOLERANCE))
    for _ in range(_MAX_STEPS):
        if high - low <= SEARCH_RELATIVE_TOLERANCE * high:
            break
        middle = 0.5 * (low + high)
        found = check(middle)
        if found is None:
            low = middle
        else:
            high, failure = middle, found
    return low, failure
