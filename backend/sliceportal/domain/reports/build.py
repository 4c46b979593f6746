"""The capacity planning report of a scope (the network, a switch or a link), pure mathematics.

The report covers the links of the scope and the slices crossing any of them; end-to-end
bounds, headroom, margins and growth look at the whole network, because a slice in scope may
cross links out of it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
from collections.abc import Collection, Mapping
from typing import Any, Literal

from sliceportal.domain.admission.endtoend import Hop, hop_bound, path_bound
from sliceportal.domain.bounds import LevelBounds, evaluate_levels
from sliceportal.domain.curves import MAX_POINTS
from sliceportal.domain.reports.constraints import NetworkConstraints
from sliceportal.domain.reports.document import (
    EndToEnd,
    LinkReport,
    Measured,
    Parameters,
    PerModel,
    Report,
    Scope,
    SliceReport,
    Summary,
)
from sliceportal.domain.reports.findings import FindingInputs, count_by_severity, report_findings
from sliceportal.domain.reports.growth import GrowthModel
from sliceportal.domain.reports.headroom import HeadroomSearch, slice_headroom
from sliceportal.domain.reports.links import link_report
from sliceportal.domain.reports.network import MeasuredSlice, Network, index_network
from sliceportal.domain.spec import (
    MAX_REPORT_WINDOW_S,
    MAX_TIME_S,
    Model,
    SpecError,
    check_integer,
    check_number,
)

MAX_HORIZON_MONTHS = 1200
MAX_GROWTH_PERCENT = 1000.0


def build_report(
    network: Network,
    scope_kind: Literal["network", "switch", "link"],
    scope_id: int | None,
    scope_name: str,
    scope_link_ids: Collection[int],
    *,
    generated_at: dt.datetime,
    growth_percent_per_month: float = 5.0,
    horizon_months: int = 24,
    measured: Mapping[int, MeasuredSlice] | None = None,
    telemetry_window_s: float | None = None,
    curve_points: int = 41,
    plan_time_budget_s: float = 1.0,
) -> Report:
    """The report of the links ``scope_link_ids`` and the slices crossing them.

    ``measured`` maps slice ids to what telemetry measured over ``telemetry_window_s``.
    Invalid input raises :class:`SpecError` naming the field.
    """
    if scope_kind not in ("network", "switch", "link"):
        raise SpecError("scope_kind", "must be network, switch or link")
    growth = float(growth_percent_per_month)
    if not -100.0 < growth <= MAX_GROWTH_PERCENT:
        raise SpecError(
            "growth_percent_per_month", f"must be above -100 and at most {MAX_GROWTH_PERCENT:g}"
        )
    horizon = check_integer(horizon_months, "horizon_months", minimum=0, maximum=MAX_HORIZON_MONTHS)
    points = check_integer(curve_points, "curve_points", minimum=2, maximum=MAX_POINTS)
    budget = check_number(
        plan_time_budget_s, "plan_time_budget_s", maximum=MAX_TIME_S, allow_zero=False
    )
    if telemetry_window_s is not None:
        check_number(
            telemetry_window_s, "telemetry_window_s", maximum=MAX_REPORT_WINDOW_S, allow_zero=False
        )
    net = index_network(network)
    scope_links = set()
    for link_id in scope_link_ids:
        if link_id not in net.link_index:
            raise SpecError("scope_link_ids", f"unknown link id {link_id}")
        scope_links.add(net.link_index[link_id])
    constraints = NetworkConstraints(net)
    growth_model = GrowthModel(constraints, growth)
    link_indices = sorted(scope_links)
    required = {
        i: constraints.required_capacity(
            i, constraints.aggregates[i], constraints.groups_on_link[i]
        )
        for i in link_indices
    }
    links = [
        (
            i,
            link_report(
                constraints,
                i,
                growth_model.link_growth(i, horizon),
                required[i],
                curve_points=points,
                plan_time_budget_s=budget,
            ),
        )
        for i in link_indices
    ]
    by_model = _ModelLevels(constraints)
    telemetry = measured or {}
    slices = []
    for j, path in enumerate(net.paths):
        if scope_links.isdisjoint(path):
            continue
        search = slice_headroom(constraints, j)
        slices.append((j, _slice_report(by_model, j, search, telemetry), search))
    findings = report_findings(
        FindingInputs(
            constraints=constraints,
            growth=growth_model,
            growth_percent_per_month=growth,
            horizon_months=horizon,
            links=links,
            slices=slices,
            required_capacity_bps=required,
            measured=telemetry,
            plan_time_budget_s=budget,
        )
    )
    link_reports = [link for _, link in links]
    slice_reports = [item for _, item, _ in slices]
    summary = Summary(
        links=len(link_reports),
        slices=len(slice_reports),
        inadmissible_links=PerModel(
            sum(not link.admissible.harkous for link in link_reports),
            sum(not link.admissible.netcalc for link in link_reports),
        ),
        e2e_violations=PerModel(
            sum(not item.e2e.harkous.meets_target for item in slice_reports),
            sum(not item.e2e.netcalc.meets_target for item in slice_reports),
        ),
        findings=count_by_severity(findings),
        tightest_link=_tightest(link_reports),
    )
    return Report(
        scope=Scope(scope_kind, scope_id, scope_name),
        generated_at=generated_at,
        parameters=Parameters(growth, horizon, telemetry_window_s),
        summary=summary,
        findings=findings,
        links=tuple(link_reports),
        slices=tuple(slice_reports),
    )


class _ModelLevels:
    """Each link's level bounds under either model (its own model's are the constraints')."""

    def __init__(self, constraints: NetworkConstraints) -> None:
        self.constraints = constraints
        self._cache: dict[tuple[int, Model], LevelBounds] = {}

    def __call__(self, link: int, model: Model) -> LevelBounds:
        c = self.constraints
        declared = c.net.links[link]
        if model is declared.model:
            return c.levels[link]
        key = (link, model)
        if key not in self._cache:
            self._cache[key] = evaluate_levels(
                c.aggregates[link], declared.capacity_bps, model, declared.framing
            )
        return self._cache[key]


def _slice_report(
    levels: _ModelLevels,
    slice_index: int,
    search: HeadroomSearch,
    telemetry: Mapping[int, MeasuredSlice],
) -> SliceReport:
    c = levels.constraints
    declared = c.net.slices[slice_index]
    path = c.net.paths[slice_index]

    def e2e(model: Model | None) -> EndToEnd:
        """Under one model on every hop, or (None) under each link's own model."""
        hops = [
            Hop(
                c.net.links[i].id,
                c.names[i],
                hop_bound(levels(i, model or c.net.links[i].model), declared.priority),
                c.net.links[i].propagation_s,
            )
            for i in path
        ]
        bound = path_bound(hops, declared.e2e_delay_target_s)
        return EndToEnd(
            total_s=bound.total_s,
            target_s=bound.target_s,
            meets_target=bound.meets_target,
            slack_s=bound.slack_s,
            worst_hop=None if bound.worst_hop is None else bound.worst_hop.link,
        )

    return SliceReport(
        id=declared.id,
        name=declared.name,
        priority=declared.priority,
        rate_bps=declared.rate_bps,
        burst_limit_s=declared.burst_limit_s,
        burst_bytes=c.net.burst_bytes(slice_index),
        delay_target_s=declared.delay_target_s,
        e2e_delay_target_s=declared.e2e_delay_target_s,
        links=tuple(c.names[i] for i in path),
        e2e=PerModel(e2e(Model.HARKOUS), e2e(Model.NETCALC)),
        e2e_enforced=e2e(None),
        headroom=search.headroom,
        measured=_measured(c, slice_index, telemetry.get(declared.id)),
    )


def _measured(
    c: NetworkConstraints, slice_index: int, measured: MeasuredSlice | None
) -> Measured | None:
    if measured is None:
        return None
    declared = c.net.slices[slice_index]
    bound = max(c.levels[i].bound_s[declared.priority] for i in c.net.paths[slice_index])
    delay_max = measured.delay_max_s
    ratio = None
    if delay_max is not None and math.isfinite(bound) and bound > 0:
        ratio = delay_max / bound
    measured_fields: dict[str, Any] = {
        field.name: getattr(measured, field.name) for field in dataclasses.fields(measured)
    }
    return Measured(
        **measured_fields,
        peak_rate_vs_declared=measured.peak_rate_bps / declared.rate_bps,
        delay_max_vs_bound=ratio,
    )


def _tightest(links: list[LinkReport]) -> str | None:
    """The link with the least relative margin (no working capacity counts as least)."""

    def relative(link: LinkReport) -> float:
        margin = link.capacity_margin_bps
        return -math.inf if margin is None else margin / link.capacity_bps

    return min(links, key=relative).name if links else None
