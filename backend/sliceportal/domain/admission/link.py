"""Admission on one link: does a set of slices fit, and if not, why and what would fix it.

The fixes offered are the two knobs an operator has without touching the slices: more capacity
(the minimum that makes the current priorities admissible) and other priorities (a plan for the
link's number of hardware queues, when one exists). No plan is searched when the rates alone
exceed the capacity, since no priority can fix that.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sliceportal.domain.bounds import LinkAnalysis, Violation, analyze, checked_specs
from sliceportal.domain.capacity import min_capacity_levels
from sliceportal.domain.planning import DEFAULT_TIME_BUDGET_S, PriorityPlan, plan_priorities
from sliceportal.domain.spec import (
    DEFAULT_MODEL,
    SLICE_LEVELS,
    STANDARD_FRAMING,
    Framing,
    Model,
    SliceSpec,
    check_levels,
)


@dataclass(frozen=True, slots=True)
class AdmissionVerdict:
    """The answer of admission control on one link."""

    admissible: bool
    analysis: LinkAnalysis
    violations: tuple[Violation, ...]
    min_capacity_bps: float | None
    """Smallest capacity admitting the slices with their current priorities."""
    plan: PriorityPlan | None = None
    """A feasible priority plan when the link is not admissible as given."""

    def to_dict(self, *, include_analysis: bool = True) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "admissible": self.admissible,
            "violations": [violation.to_dict() for violation in self.violations],
            "min_capacity_bps": self.min_capacity_bps,
            "plan": None if self.plan is None else self.plan.to_dict(),
        }
        if include_analysis:
            doc["analysis"] = self.analysis.to_dict()
        return doc


def admission(
    slices: Iterable[SliceSpec],
    capacity_bps: float,
    model: Model | str = DEFAULT_MODEL,
    levels: int = SLICE_LEVELS,
    *,
    framing: Framing = STANDARD_FRAMING,
    plan_time_budget_s: float = DEFAULT_TIME_BUDGET_S,
) -> AdmissionVerdict:
    """Full admission of ``slices`` on a link whose slices may use ``levels`` priority levels."""
    specs = checked_specs(slices)
    queues = check_levels(levels)
    analysis = analyze(specs, capacity_bps, model, framing)
    plan = None
    if not analysis.admissible and analysis.total_rate_bps <= analysis.capacity_bps:
        candidate = plan_priorities(
            specs,
            analysis.capacity_bps,
            queues,
            analysis.model,
            framing=framing,
            time_budget_s=plan_time_budget_s,
        )
        plan = candidate if candidate.feasible else None
    return AdmissionVerdict(
        admissible=analysis.admissible,
        analysis=analysis,
        violations=analysis.violations,
        min_capacity_bps=min_capacity_levels(analysis.core.aggregates, analysis.model, framing),
        plan=plan,
    )
