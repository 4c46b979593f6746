"""Traffic growth: every rate in the network (and so every burst) times ``(1 + g)^months``.

Growth is network-wide, because traffic grows everywhere at once: a link stops admitting its
slices when one of its per-hop targets breaks, or the end-to-end target of a slice crossing it
does, with every link's rates grown and every capacity as today. All bounds are non-decreasing
in a common scaling factor, so admissibility is monotone in it and in the months, and both
searches bisect. The capacity a link needs at the horizon is computed with the other links
of its slices' paths grown too and given at least what their own per-hop targets then need
(else one overloaded neighbour would make every link's answer "none"). A grown network is
re-aggregated from the scaled slices themselves, so every verdict is the one a fresh analysis
of the grown network gives.
"""

from __future__ import annotations

import math

from sliceportal.domain.bounds import LevelBounds
from sliceportal.domain.capacity import min_capacity_levels
from sliceportal.domain.reports.constraints import Breach, NetworkConstraints, largest_passing
from sliceportal.domain.reports.document import Growth


def growth_factor(percent_per_month: float, months: int) -> float:
    """What every rate is multiplied by after ``months`` months of growth."""
    return float((1.0 + percent_per_month / 100.0) ** months)


class GrowthModel:
    """The network grown by any factor, evaluated lazily and once per (link, factor)."""

    def __init__(self, constraints: NetworkConstraints, percent_per_month: float) -> None:
        self.constraints = constraints
        self.percent_per_month = percent_per_month
        self._levels: dict[tuple[int, float], LevelBounds] = {}
        self._upgraded_levels: dict[tuple[int, float], LevelBounds] = {}

    def levels(self, link: int, factor: float) -> LevelBounds:
        key = (link, factor)
        found = self._levels.get(key)
        if found is None:
            c = self.constraints
            found = c.evaluate(link, c.scaled_aggregates(link, factor))
            self._levels[key] = found
        return found

    def violation(self, link: int, factor: float) -> Breach | None:
        """What breaks first on ``link`` when every rate is ``factor`` times today's."""
        groups = self.constraints.groups_on_link[link]
        grown = {link: self.levels(link, factor)}
        for g in groups:
            for i in self.constraints.groups[g].links:
                grown[i] = self.levels(i, factor)
        return self.constraints.violation(grown, [link], groups)

    def link_growth(self, link: int, horizon_months: int) -> Growth:
        c = self.constraints
        if not len(c.net.on_link[link].members):
            return Growth(None, None, 0.0)
        months = self._months_until_violation(link, horizon_months)
        horizon = growth_factor(self.percent_per_month, horizon_months)
        groups = c.groups_on_link[link]
        others = {i: self._upgraded(i, horizon) for g in groups for i in c.groups[g].links}
        needed = c.required_capacity(link, c.scaled_aggregates(link, horizon), groups, others)
        return Growth(months, self._factor_limit(link), needed)

    def _upgraded(self, link: int, factor: float) -> LevelBounds:
        """A link grown by ``factor`` with at least the capacity its own per-hop targets then
        need: the other hops of a path, as they would be if every link followed the report."""
        key = (link, factor)
        found = self._upgraded_levels.get(key)
        if found is None:
            c = self.constraints
            declared = c.net.links[link]
            grown = c.scaled_aggregates(link, factor)
            needed = min_capacity_levels(grown, declared.model, declared.framing)
            capacity = (
                declared.capacity_bps if needed is None else max(needed, declared.capacity_bps)
            )
            found = c.evaluate(link, grown, capacity)
            self._upgraded_levels[key] = found
        return found

    def _months_until_violation(self, link: int, horizon_months: int) -> int | None:
        def broken(month: int) -> bool:
            factor = growth_factor(self.percent_per_month, month)
            return self.violation(link, factor) is not None

        if broken(0):
            return 0
        if not broken(horizon_months):
            return None
        admitting, failing = 0, horizon_months
        while failing - admitting > 1:
            middle = (admitting + failing) // 2
            if broken(middle):
                failing = middle
            else:
                admitting = middle
        return failing

    def _factor_limit(self, link: int) -> float | None:
        """Largest common factor of all rates with which the link still admits its slices."""
        c = self.constraints
        # Beyond this factor the link's own rates overflow its capacity.
        overflow = c.net.links[link].capacity_bps / c.levels[link].total_rate_bps
        low = 1.0 if self.violation(link, 1.0) is None else 0.0
        high = max(overflow, low)
        limit, _ = largest_passing(lambda factor: self.violation(link, factor), low, high)
        return limit if limit > 0 and math.isfinite(limit) else None
