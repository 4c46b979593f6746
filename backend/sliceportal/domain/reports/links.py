"""One link's part of the report: bounds under both models, minimum capacities, curves, growth."""

from __future__ import annotations

import math

import numpy as np

from sliceportal.domain.bounds import ArrayAnalysis, aggregate_arrays, analyze_arrays
from sliceportal.domain.capacity import min_capacity_levels
from sliceportal.domain.curves import capacity_grid, delay_curves
from sliceportal.domain.planning import PriorityPlan, plan_priorities
from sliceportal.domain.reports.constraints import SEARCH_RELATIVE_TOLERANCE, NetworkConstraints
from sliceportal.domain.reports.document import (
    BestPlan,
    DelayCurves,
    Growth,
    LinkReport,
    LinkSliceRow,
    MinCapacities,
    PerModel,
    finite_or_none,
)
from sliceportal.domain.reports.network import LinkSlices, NetworkLink
from sliceportal.domain.spec import MAX_RATE_BPS, TOP_PRIORITY, Model

CURVE_SPAN = 3.0
"""The curves run to this multiple of the larger minimum capacity: far enough past the knee
that the flat tail shows, near enough that the knee is not squeezed into one step."""
CURVE_PAST_CAPACITY = 1.2
"""…and at least this far past the link's capacity, so a lightly loaded link shows where it is."""
CURVE_START_MARGIN = 1e-3
"""The curves start this fraction above Σ rates, where the lowest level's bound is still finite."""
_MAX_PLAN_STEPS = 40
"""Bisection steps of the best-plan search: 1e-6 relative from any bracket the first 20 reach."""
_MAX_UNPROVEN = 3
"""Planner answers that are neither a plan nor a proof (out of time) before the search stops."""


def link_report(
    constraints: NetworkConstraints,
    link_index: int,
    growth: Growth,
    required_capacity_bps: float | None,
    *,
    curve_points: int,
    plan_time_budget_s: float,
) -> LinkReport:
    link = constraints.net.links[link_index]
    on = constraints.net.on_link[link_index]
    framing = link.framing
    analyses = {
        model: analyze_arrays(on.arrays, link.capacity_bps, model, framing) for model in Model
    }
    current = {
        model: min_capacity_levels(analyses[model].aggregates, model, framing) for model in Model
    }
    one_level_agg = aggregate_arrays(on.with_priorities(TOP_PRIORITY))
    one_level = {model: min_capacity_levels(one_level_agg, model, framing) for model in Model}
    best = {
        model: best_plan(on, link, model, current[model], one_level[model], plan_time_budget_s)
        for model in Model
    }
    total = analyses[Model.HARKOUS].levels.total_rate_bps
    return LinkReport(
        id=link.id,
        name=link.name,
        switch=link.switch,
        capacity_bps=link.capacity_bps,
        model=link.model.value,
        queue_count=link.queue_count,
        mtu_bytes=link.mtu_bytes,
        total_rate_bps=total,
        utilisation=total / link.capacity_bps,
        admissible=PerModel(analyses[Model.HARKOUS].admissible, analyses[Model.NETCALC].admissible),
        slices=_rows(constraints, on, analyses),
        min_capacity_bps=MinCapacities(
            current=PerModel(current[Model.HARKOUS], current[Model.NETCALC]),
            one_level=PerModel(one_level[Model.HARKOUS], one_level[Model.NETCALC]),
            best_plan=PerModel(best[Model.HARKOUS], best[Model.NETCALC]),
        ),
        capacity_margin_bps=(
            None if required_capacity_bps is None else link.capacity_bps - required_capacity_bps
        ),
        curves=_curves(on, link, total, current, curve_points),
        growth=growth,
    )


def _rows(
    constraints: NetworkConstraints, on: LinkSlices, analyses: dict[Model, ArrayAnalysis]
) -> tuple[LinkSliceRow, ...]:
    bounds = {model: analyses[model].bound_s.tolist() for model in Model}
    meets = {model: analyses[model].meets.tolist() for model in Model}
    rows = []
    for position, (j, spec) in enumerate(zip(on.members.tolist(), on.specs, strict=True)):
        bound = {model: finite_or_none(bounds[model][position]) for model in Model}
        slack = {model: _slack(spec.delay_target_s, bound[model]) for model in Model}
        rows.append(
            LinkSliceRow(
                slice_id=constraints.net.slices[j].id,
                name=spec.name,
                priority=spec.priority,
                rate_bps=spec.rate_bps,
                burst_bytes=spec.burst_bytes,
                delay_target_s=spec.delay_target_s,
                bound_s=PerModel(bound[Model.HARKOUS], bound[Model.NETCALC]),
                slack_s=PerModel(slack[Model.HARKOUS], slack[Model.NETCALC]),
                meets_target=PerModel(
                    meets[Model.HARKOUS][position], meets[Model.NETCALC][position]
                ),
            )
        )
    return tuple(rows)


def _slack(target_s: float, bound_s: float | None) -> float | None:
    return None if bound_s is None else target_s - bound_s


def best_plan(
    on: LinkSlices,
    link: NetworkLink,
    model: Model,
    current: float | None,
    one_level: float | None,
    time_budget_s: float,
) -> BestPlan:
    """The least capacity at which the planner finds a plan within the link's queues.

    A plan exists at ``C`` only if one exists at every larger capacity, so the search bisects
    between Σ rates (below which nothing fits) and the least capacity of a plan known to work:
    the current priorities (when they use no more levels than the link has queues) or all
    slices at one level. ``exhaustive`` says the capacity is proven least (to 1e-6): the planner
    proved that no plan exists just below it. An answer that is neither a plan nor a proof
    counts as no plan; after a few of them (each may have used the whole time budget) the
    search stops, unproven.
    """
    if not on.specs:
        return BestPlan(0.0, {}, True)
    specs = on.specs
    queues = link.slice_levels
    known: list[tuple[float, dict[str, int]]] = []
    if one_level is not None:
        known.append((one_level, {spec.name: TOP_PRIORITY for spec in specs}))
    if current is not None and len(np.unique(on.arrays.priority)) <= queues:
        known.append((current, {spec.name: spec.priority for spec in specs}))

    def plan_at(capacity: float) -> PriorityPlan:
        return plan_priorities(
            specs, capacity, queues, model, framing=link.framing, time_budget_s=time_budget_s
        )

    if known:
        high, fallback = min(known, key=lambda item: item[0])
        found = plan_at(high)
        priorities = found.priorities if found.feasible else fallback
    else:
        found = plan_at(MAX_RATE_BPS)
        if not found.feasible:
            return BestPlan(None, None, found.exhaustive)
        high, priorities = MAX_RATE_BPS, found.priorities
    low = float(math.fsum(on.arrays.rate_bps.tolist()))
    if low >= high:  # the known plan needs no more than the rates (up to the last digit)
        return BestPlan(high, priorities, True)
    at_low = plan_at(low)
    if at_low.feasible:
        return BestPlan(low, at_low.priorities, True)
    proven = at_low.exhaustive
    unproven = 0 if proven else 1
    for _ in range(_MAX_PLAN_STEPS):
        if unproven >= _MAX_UNPROVEN or high - low <= SEARCH_RELATIVE_TOLERANCE * high:
            break
        middle = 0.5 * (low + high)
        found = plan_at(middle)
        if found.feasible:
            high, priorities = middle, found.priorities
        else:
            low, proven = middle, found.exhaustive
            unproven += not proven
    return BestPlan(high, priorities, proven and high - low <= SEARCH_RELATIVE_TOLERANCE * high)


def _curves(
    on: LinkSlices,
    link: NetworkLink,
    total_rate_bps: float,
    current: dict[Model, float | None],
    points: int,
) -> DelayCurves:
    knee = max((c for c in current.values() if c is not None and c > 0), default=link.capacity_bps)
    stop = min(
        max(CURVE_SPAN * max(knee, total_rate_bps), CURVE_PAST_CAPACITY * link.capacity_bps),
        MAX_RATE_BPS,
    )
    start = total_rate_bps * (1.0 + CURVE_START_MARGIN) if total_rate_bps > 0 else stop / points
    grid = capacity_grid(start, stop, points)
    curves = {model: delay_curves(on.specs, grid, model, link.framing).delays_s for model in Model}
    return DelayCurves(tuple(grid), PerModel(curves[Model.HARKOUS], curves[Model.NETCALC]))
