"""The capacity one hop of a path would need so that the slice meets its end-to-end target.

Every per-hop bound is non-increasing in its link's capacity, so raising the worst hop alone
fixes the path when the other hops leave it a positive budget (target minus their sum). The
hop's level then has to meet ``min(its tightest per-hop target, that budget)``: the least such
capacity is :func:`.capacity.min_capacity_levels` on the link's aggregates with that level's
target tightened, the same bisection on the same evaluator the admission check uses, so the
answer passes the check by construction and keeps every other slice of the link within its
per-hop target. The admission check sums the hops with ``math.fsum``, which may round the sum
one unit above the target where the budget was met exactly; the fix is then nudged up by a few
parts in 10^15 until the path itself meets the target, so applying it exactly is admitted.
"""

from __future__ import annotations

import dataclasses
import math

from sliceportal.domain.admission.endtoend import Hop, PathBound, hop_bound, path_bound
from sliceportal.domain.bounds import LevelAggregates, evaluate_levels
from sliceportal.domain.capacity import min_capacity_levels
from sliceportal.domain.spec import MAX_RATE_BPS, STANDARD_FRAMING, Framing, Model


def hop_budget(path: PathBound, hop: Hop) -> float | None:
    """What the target leaves for `hop` once the other hops and every hop's propagation
    delay are paid; ``None`` when nothing (no target, another hop unbounded, or the others
    alone reach the target)."""
    if path.target_s is None:
        return None
    others = [h.bound_s for h in path.hops if h is not hop]
    if any(bound is None for bound in others):
        return None
    paid = [bound for bound in others if bound is not None]
    paid += [h.propagation_s for h in path.hops]
    budget = path.target_s - math.fsum(paid)
    return budget if budget > 0 else None


def hop_capacity(
    agg: LevelAggregates,
    priority: int,
    budget_s: float,
    model: Model,
    framing: Framing = STANDARD_FRAMING,
) -> float | None:
    """Least capacity giving level `priority` a bound within `budget_s` and keeping the link
    admissible; ``None`` when none up to 1 Pbit/s does."""
    if not agg.count[priority]:
        raise ValueError(f"no slice at priority {priority} on this link")
    targets = list(agg.min_target_s)
    targets[priority] = min(targets[priority], budget_s)
    return min_capacity_levels(
        dataclasses.replace(agg, min_target_s=tuple(targets)), model, framing
    )


def path_capacity_fix(
    path: PathBound,
    agg: LevelAggregates,
    priority: int,
    model: Model,
    framing: Framing = STANDARD_FRAMING,
) -> float | None:
    """The capacity the worst hop's link needs so the path meets its target (`agg`: that
    link's aggregates with the slice on it); ``None`` when raising that hop alone cannot."""
    worst = path.worst_hop
    budget = None if worst is None else hop_budget(path, worst)
    if worst is None or budget is None:
        return None
    capacity = hop_capacity(agg, priority, budget, model, framing)
    step = 0.0 if capacity is None else capacity * 1e-15

    def meets(capacity: float) -> bool:
        levels = evaluate_levels(agg, capacity, model, framing)
        fixed = dataclasses.replace(worst, bound_s=hop_bound(levels, priority))
        hops = (fixed if hop is worst else hop for hop in path.hops)
        return levels.admissible and path_bound(hops, path.target_s).meets_target

    while capacity is not None and not meets(capacity):
        capacity = capacity + step if capacity + step <= MAX_RATE_BPS else None
        step *= 2.0
    return capacity
