"""Findings: what is wrong or about to be, most severe first, each with one concrete remedy.

Every finding is computed under each link's own model (the one admission enforces) and ends
in a recommendation whose numbers come from the same analytics as the rest of the report:
minimum capacities, the priority planner, burst caps, growth, margins, headroom, telemetry.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import IntEnum

from sliceportal.domain.admission.endtoend import Hop, hop_bound, path_bound
from sliceportal.domain.bounds import make_violation
from sliceportal.domain.formatting import format_bytes, format_delay, format_rate
from sliceportal.domain.planning import plan_priorities
from sliceportal.domain.reports.constraints import Breach, NetworkConstraints
from sliceportal.domain.reports.document import (
    SEVERITIES,
    Action,
    Finding,
    LinkReport,
    Severity,
    SliceReport,
)
from sliceportal.domain.reports.growth import GrowthModel, growth_factor
from sliceportal.domain.reports.headroom import HeadroomSearch, burst_cap
from sliceportal.domain.reports.network import MeasuredSlice, Network, index_network
from sliceportal.domain.spec import SLICE_LEVELS, TOP_PRIORITY

LOW_MARGIN = 0.10
"""Spare capacity under 10 % of a link is two months of 5 %-a-month growth, or one new slice."""
LOW_HEADROOM = 0.10
"""A slice that cannot grow by 10 % will break something at its first busy season."""
UNDERUSED_PEAK = 0.5
"""A slice peaking under half its declared rate holds capacity on every link it never uses."""
RATE_SUGGESTION_MARGIN = 1.25
"""A lowered rate keeps 25 % above the measured peak, for the peaks the window did not see."""


class Kind(IntEnum):
    """Finding kinds in the order they are listed within one severity."""

    LINK_INADMISSIBLE = 0
    MOVE_SLICE = 1
    CAP_BURST = 2
    E2E_MISSED = 3
    ABOVE_BOUND = 4
    GROWTH = 5
    LOW_MARGIN = 6
    LOW_HEADROOM = 7
    UNDERUSED = 8


@dataclass(frozen=True, slots=True)
class _Found:
    kind: Kind
    finding: Finding


@dataclass(frozen=True, eq=False)
class FindingInputs:
    """What the findings are drawn from (the rest of the report, computed once)."""

    constraints: NetworkConstraints
    growth: GrowthModel
    growth_percent_per_month: float
    horizon_months: int
    links: Sequence[tuple[int, LinkReport]]
    """Link index and report, for the links in scope."""
    slices: Sequence[tuple[int, SliceReport, HeadroomSearch]]
    """Slice index, report and headroom search, for the slices in scope."""
    required_capacity_bps: Mapping[int, float | None]
    """Per link index in scope: the least capacity meeting every target on it (the margin's)."""
    measured: Mapping[int, MeasuredSlice]
    plan_time_budget_s: float


def report_findings(inputs: FindingInputs) -> tuple[Finding, ...]:
    """All findings, most severe first (then by kind, then links and slices in report order)."""
    found: list[_Found] = []
    for link_index, link in inputs.links:
        found.extend(_inadmissible_link(inputs, link_index, link))
    for slice_index, item, _ in inputs.slices:
        found.extend(_e2e_missed(inputs, slice_index, item))
        found.extend(_telemetry(inputs, slice_index, item))
    flagged = {link.name for i, link in inputs.links if not inputs.constraints.levels[i].admissible}
    for link_index, link in inputs.links:
        if link.name in flagged:
            continue
        warnings = _growth(inputs, link_index, link) or _low_margin(inputs, link_index, link)
        if warnings:
            flagged.add(link.name)
        found.extend(warnings)
    for slice_index, item, search in inputs.slices:
        found.extend(_low_headroom(inputs, slice_index, item, search, flagged))
    rank = {severity: r for r, severity in enumerate(SEVERITIES)}
    found.sort(key=lambda f: (rank[f.finding.severity], f.kind))
    return tuple(f.finding for f in found)


def count_by_severity(findings: Sequence[Finding]) -> dict[Severity, int]:
    counts = dict.fromkeys(SEVERITIES, 0)
    for finding in findings:
        counts[finding.severity] += 1
    return counts


def _inadmissible_link(inputs: FindingInputs, link_index: int, link: LinkReport) -> list[_Found]:
    c = inputs.constraints
    levels = c.levels[link_index]
    if levels.admissible:
        return []
    model = link.model
    failing = [row for row in link.slices if not getattr(row.meets_target, model)]
    first = failing[0]
    reason = make_violation(first.name, first.priority, first.delay_target_s, levels).reason
    needed = inputs.required_capacity_bps[link_index]
    if needed is None:
        needed = getattr(link.min_capacity_bps.current, model)
    subject = f"link {link.name}"
    text = (
        f"Link {link.name} does not admit its slices under the {model} model: "
        f"{len(failing)} of {len(link.slices)} miss their per-hop targets "
        f"(slice {first.name}: {reason})."
    )
    if needed is None:
        advice = (
            "No capacity meets these targets (a zero target behind a burst or a blocking "
            f"packet): loosen the per-hop target of slice {first.name}."
        )
        action = Action("investigate", link=link.name, slice=first.name)
    else:
        advice = (
            f"Raise its capacity to {format_rate(needed)} (from {format_rate(link.capacity_bps)})."
        )
        action = Action("raise-capacity", link=link.name, capacity_bps=needed)
    found = [_Found(Kind.LINK_INADMISSIBLE, Finding("critical", subject, text, advice, action))]
    if levels.total_rate_bps <= levels.capacity_bps:
        found.extend(_moves(inputs, link_index, link))
        found.extend(_burst_caps(inputs, link_index, link))
    return found


_LISTED_MOVES = 6
"""Moves named in the sentence; the action always carries all of them."""


def _moves(inputs: FindingInputs, link_index: int, link: LinkReport) -> list[_Found]:
    """Priority moves that make the link admissible at today's capacity, if the planner finds
    some and they break nothing that holds today elsewhere on the moved slices' paths."""
    c = inputs.constraints
    on = c.net.on_link[link_index]
    declared = c.net.links[link_index]
    plan = plan_priorities(
        on.specs,
        link.capacity_bps,
        declared.slice_levels,
        link.model,
        framing=declared.framing,
        time_budget_s=inputs.plan_time_budget_s,
    )
    if not plan.feasible:
        return []
    current = {spec.name: spec.priority for spec in on.specs}
    planned = fewest_moves(plan.priorities, current, declared.slice_levels)
    moves = [
        (j, spec.priority, planned[spec.name])
        for j, spec in zip(on.members.tolist(), on.specs, strict=True)
        if planned[spec.name] != spec.priority
    ]
    if not _harmless(c, {j: new for j, _, new in moves}):
        return []
    listed = ", ".join(
        f"{c.net.slices[j].name} {old} → {new}" for j, old, new in moves[:_LISTED_MOVES]
    )
    if len(moves) > _LISTED_MOVES:
        listed += f" and {len(moves) - _LISTED_MOVES} more (see the action)"
    return [
        _Found(
            Kind.MOVE_SLICE,
            Finding(
                "critical",
                f"link {link.name}",
                f"A priority plan fits link {link.name} at its current capacity "
                f"{format_rate(link.capacity_bps)}: {len(moves)} slice(s) change priority.",
                f"Move {listed}: together these make {link.name} admissible without more "
                "capacity, and break nothing that holds on the moved slices' other links.",
                Action(
                    "move-slice",
                    link=link.name,
                    priorities={c.net.slices[j].name: new for j, _, new in moves},
                ),
            ),
        )
    ]


def fewest_moves(
    plan: Mapping[str, int], current: Mapping[str, int], queues: int
) -> dict[str, int]:
    """The plan with its levels renamed, in the same order and within the top ``queues``
    priorities, so that as many slices as possible keep their current priority.

    Both models depend only on the order of the levels, so the renamed plan is as good; the
    renaming is a small dynamic programme over (level of the plan, priority given to it).
    """
    levels = sorted(set(plan.values()), reverse=True)
    labels = list(range(TOP_PRIORITY, TOP_PRIORITY - min(queues, SLICE_LEVELS), -1))
    stays = [
        [
            sum(1 for name, p in plan.items() if p == level and current[name] == label)
            for label in labels
        ]
        for level in levels
    ]
    # best[g][i]: most slices kept in place by levels 0..g when level g is named labels[i].
    best = [list(stays[0])]
    choice: list[list[int]] = [[-1] * len(labels)]
    for g in range(1, len(levels)):
        row, picks = [-1] * len(labels), [-1] * len(labels)
        for i in range(g, len(labels)):
            above = best[g - 1]
            previous = max(range(g - 1, i), key=above.__getitem__)
            row[i], picks[i] = above[previous] + stays[g][i], previous
        best.append(row)
        choice.append(picks)
    names = [0] * len(levels)
    names[-1] = max(range(len(levels) - 1, len(labels)), key=best[-1].__getitem__)
    for g in range(len(levels) - 1, 0, -1):
        names[g - 1] = choice[g][names[g]]
    renamed = {level: labels[names[g]] for g, level in enumerate(levels)}
    return {name: renamed[p] for name, p in plan.items()}


def _harmless(before: NetworkConstraints, priorities: Mapping[int, int]) -> bool:
    """Whether giving slices new priorities keeps every constraint on their paths that holds
    today (a slice's priority applies on every link it crosses, not only the planned one)."""
    network = before.net.network
    slices = tuple(
        replace(s, priority=priorities[j]) if j in priorities else s
        for j, s in enumerate(network.slices)
    )
    after = NetworkConstraints(index_network(Network(network.links, slices)))
    touched = {i for j in priorities for i in before.net.paths[j]}
    for i in touched:
        held = before.hop_violation(i, before.levels[i]) is None
        if held and after.hop_violation(i, after.levels[i]) is not None:
            return False
    for j, declared in enumerate(network.slices):
        target = declared.e2e_delay_target_s
        if target is None or touched.isdisjoint(before.net.paths[j]):
            continue
        if _own_total(before, j) <= target < _own_total(after, j):
            return False
    return True


def _own_total(c: NetworkConstraints, slice_index: int) -> float:
    """The slice's end-to-end bound, each link under its own model (inf when unbounded)."""
    level = c.net.slices[slice_index].priority
    return math.fsum(c.levels[i].bound_s[level] for i in c.net.paths[slice_index])


def _burst_caps(inputs: FindingInputs, link_index: int, link: LinkReport) -> list[_Found]:
    """The slice whose burst alone keeps the link inadmissible, capped as little as possible."""
    c = inputs.constraints
    best: tuple[float, int, float] | None = None
    for j in c.net.on_link[link_index].members.tolist():
        burst = c.net.burst_bytes(j)
        cap = burst_cap(c, j)
        if cap is None or burst <= 0:
            continue
        kept = cap / burst
        if best is None or kept > best[0]:
            best = (kept, j, cap)
    if best is None:
        return []
    _, j, cap = best
    declared = c.net.slices[j]
    return [
        _Found(
            Kind.CAP_BURST,
            Finding(
                "critical",
                f"slice {declared.name}",
                f"Capping the burst of slice {declared.name} alone (now "
                f"{format_bytes(c.net.burst_bytes(j))}) would make link {link.name} admit its "
                "slices.",
                f"Cap the burst of {declared.name} at {format_bytes(cap)} (a burst limit of "
                f"{format_delay(cap * 8.0 / declared.rate_bps)}): every slice on its links "
                "then meets its targets.",
                Action("cap-burst", link=link.name, slice=declared.name, burst_bytes=cap),
            ),
        )
    ]


def _e2e_missed(inputs: FindingInputs, slice_index: int, item: SliceReport) -> list[_Found]:
    c = inputs.constraints
    target = item.e2e_delay_target_s
    if target is None:
        return []
    path = c.net.paths[slice_index]
    hops = [
        Hop(
            c.net.links[i].id,
            c.names[i],
            hop_bound(c.levels[i], item.priority),
            c.net.links[i].propagation_s,
        )
        for i in path
    ]
    bound = path_bound(hops, target)
    if bound.meets_target or bound.worst_hop is None:
        return []
    worst = c.net.link_index[bound.worst_hop.link_id]
    group = c.slice_group(slice_index)
    groups = [] if group is None else [group]
    needed = c.required_capacity(worst, c.aggregates[worst], groups)
    subject = f"slice {item.name}"
    text = f"Slice {item.name}: {bound.reason()} (each link under its own model)."
    if needed is None:
        others = math.fsum(c.levels[i].bound_s[item.priority] for i in path if i != worst)
        taken = "unbounded" if not math.isfinite(others) else format_delay(others)
        return [
            _Found(
                Kind.E2E_MISSED,
                Finding(
                    "critical",
                    subject,
                    text,
                    f"Raising the capacity of {c.names[worst]} alone cannot meet it: the other "
                    f"hops take {taken} of its {format_delay(target)} target; raise their "
                    "capacity too, or loosen the target.",
                    Action("investigate", link=c.names[worst], slice=item.name),
                ),
            )
        ]
    return [
        _Found(
            Kind.E2E_MISSED,
            Finding(
                "critical",
                subject,
                text,
                f"Raise the capacity of {c.names[worst]} to {format_rate(needed)} (from "
                f"{format_rate(c.net.links[worst].capacity_bps)}): the path then meets its "
                "target.",
                Action("raise-capacity", link=c.names[worst], slice=item.name, capacity_bps=needed),
            ),
        )
    ]


def _telemetry(inputs: FindingInputs, slice_index: int, item: SliceReport) -> list[_Found]:
    measured = inputs.measured.get(item.id)
    if measured is None:
        return []
    found = []
    c = inputs.constraints
    path = c.net.paths[slice_index]
    worst = max(path, key=lambda i: c.levels[i].bound_s[item.priority])
    bound = c.levels[worst].bound_s[item.priority]
    if measured.delay_max_s is not None and math.isfinite(bound) and measured.delay_max_s > bound:
        found.append(
            _Found(
                Kind.ABOVE_BOUND,
                Finding(
                    "critical",
                    f"slice {item.name}",
                    f"Slice {item.name}: the measured maximum delay "
                    f"{format_delay(measured.delay_max_s)} exceeds its worst-case bound "
                    f"{format_delay(bound)} (its largest per-hop bound, on {c.names[worst]}).",
                    "The traffic or the model is not what was declared: investigate the "
                    "slice's policing (rate and burst limit), other traffic at its priority "
                    f"and the delay model of {c.names[worst]}.",
                    Action("investigate", link=c.names[worst], slice=item.name),
                ),
            )
        )
    if measured.peak_rate_bps < UNDERUSED_PEAK * item.rate_bps:
        lower = measured.peak_rate_bps * RATE_SUGGESTION_MARGIN
        share = 100.0 * measured.peak_rate_bps / item.rate_bps
        found.append(
            _Found(
                Kind.UNDERUSED,
                Finding(
                    "info",
                    f"slice {item.name}",
                    f"Slice {item.name} peaked at {format_rate(measured.peak_rate_bps)} over "
                    f"{format_delay(measured.window_s)}, {share:.0f} % of its declared "
                    f"{format_rate(item.rate_bps)}.",
                    f"Lower its declared rate to {format_rate(lower)}: that frees "
                    f"{format_rate(item.rate_bps - lower)} on each of its {len(path)} link(s).",
                    Action("lower-rate", slice=item.name, rate_bps=lower),
                ),
            )
        )
    return found


def _growth(inputs: FindingInputs, link_index: int, link: LinkReport) -> list[_Found]:
    months = link.growth.months_until_inadmissible
    if months is None or months == 0:
        return []
    factor = growth_factor(inputs.growth_percent_per_month, months)
    breach = inputs.growth.violation(link_index, factor)
    what = "" if breach is None else f": {breach.text} breaks"
    text = (
        f"At {inputs.growth_percent_per_month:g} % a month, link {link.name} stops admitting "
        f"its slices in {months} month(s), when rates reach {factor:.3g} times today's{what}."
    )
    needed = link.growth.capacity_at_horizon_bps
    if needed is None:
        return [
            _Found(
                Kind.GROWTH,
                Finding(
                    "warning",
                    f"link {link.name}",
                    text,
                    "No capacity of this link alone carries the grown traffic: its slices "
                    "then break end-to-end targets on their other links too; plan those "
                    "links' capacity together.",
                    Action("investigate", link=link.name),
                ),
            )
        ]
    return [
        _Found(
            Kind.GROWTH,
            Finding(
                "warning",
                f"link {link.name}",
                text,
                f"Raise its capacity to {format_rate(needed)} before then: enough for the "
                f"{inputs.horizon_months}-month horizon.",
                Action("raise-capacity", link=link.name, capacity_bps=needed),
            ),
        )
    ]


def _low_margin(inputs: FindingInputs, link_index: int, link: LinkReport) -> list[_Found]:
    margin = link.capacity_margin_bps
    needed = inputs.required_capacity_bps[link_index]
    if margin is None or needed is None or not 0 <= margin < LOW_MARGIN * link.capacity_bps:
        return []
    planned = needed / (1.0 - LOW_MARGIN)
    return [
        _Found(
            Kind.LOW_MARGIN,
            Finding(
                "warning",
                f"link {link.name}",
                f"Link {link.name} has {format_rate(margin)} of spare capacity "
                f"({100.0 * margin / link.capacity_bps:.1f} % of "
                f"{format_rate(link.capacity_bps)}); {format_rate(needed)} is the least that "
                "meets every per-hop and end-to-end target on it.",
                f"Plan for {format_rate(planned)} to keep a {100 * LOW_MARGIN:.0f} % margin.",
                Action("raise-capacity", link=link.name, capacity_bps=planned),
            ),
        )
    ]


def _low_headroom(
    inputs: FindingInputs,
    slice_index: int,
    item: SliceReport,
    search: HeadroomSearch,
    flagged: set[str],
) -> list[_Found]:
    """A slice that can hardly grow, unless a link-level finding already says why."""
    headroom = search.headroom
    if headroom.rate_bps is None or headroom.burst_bytes is None:
        return []
    c = inputs.constraints
    rate_share = headroom.rate_bps / item.rate_bps
    burst_share = headroom.burst_bytes / item.burst_bytes if item.burst_bytes > 0 else math.inf
    by_rate = rate_share <= burst_share
    share = min(rate_share, burst_share)
    breach = search.rate_breach if by_rate else search.burst_breach
    if share >= LOW_HEADROOM or breach is None:
        return []
    where = "its path" if breach.link is None else c.names[breach.link]
    if where in flagged:
        return []
    if by_rate:
        limit = item.rate_bps + headroom.rate_bps
        text = (
            f"Slice {item.name} can grow its rate by only {format_rate(headroom.rate_bps)} "
            f"({100.0 * share:.1f} % of {format_rate(item.rate_bps)}) before {breach.text} "
            "breaks."
        )
        advice = f"Keep its rate at or below {format_rate(limit)}"
        action = Action("none", link=_link_name(c, breach), slice=item.name, rate_bps=limit)
    else:
        limit = item.burst_bytes + headroom.burst_bytes
        text = (
            f"Slice {item.name} can grow its burst by only "
            f"{format_bytes(headroom.burst_bytes)} ({100.0 * share:.1f} % of "
            f"{format_bytes(item.burst_bytes)}) before {breach.text} breaks."
        )
        advice = f"Keep its burst at or below {format_bytes(limit)}"
        action = Action("none", link=_link_name(c, breach), slice=item.name, burst_bytes=limit)
    return [
        _Found(
            Kind.LOW_HEADROOM,
            Finding(
                "warning",
                f"slice {item.name}",
                text,
                f"{advice} unless {where} gets more capacity.",
                action,
            ),
        )
    ]


def _link_name(c: NetworkConstraints, breach: Breach) -> str | None:
    return None if breach.link is None else c.names[breach.link]
