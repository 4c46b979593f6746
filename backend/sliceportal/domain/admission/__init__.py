"""Admission control, all of it: may these slices share these links, and if not, why not and
what would make them fit. Pure (no database, no network); `services.admission` runs it under
the links' locks, on what `db.queries.links` reads.

One module per question:

- `link`: one link, from its slices (per-slice bounds, violations, the minimum capacity, a
  priority plan);
- `levels`: one link, from its stored per-level sums, with a certificate instead of a
  recomputation (the O(levels) path every slice change tries first);
- `endtoend`: a slice's bound along its path, against its end-to-end target, and
  `analyze_paths`: every slice of a network along its ordered path (burst growth hop by hop,
  the concatenation of the hops' service curves; docs/analysis.md, "End to end along a path");
- `pathcapacity`: the capacity the worst hop of a path needs for the path to meet its target;
- `network`: a change across the links it touches and the paths crossing them, the check the
  services run (first `admits_surely` from the level sums, then `breaches` on every slice);
- `reasons`: why a change is refused and what would fix it, typed.
"""

from sliceportal.domain.admission.endtoend import (
    Hop,
    HopResult,
    NetworkAnalysis,
    PathBound,
    PathResult,
    analyze_paths,
    hop_bound,
    path_bound,
)
from sliceportal.domain.admission.levels import LevelLoad, upper_aggregates
from sliceportal.domain.admission.link import AdmissionVerdict, admission
from sliceportal.domain.admission.network import (
    Breaches,
    LinkLoad,
    LinkParams,
    Loads,
    PathSlice,
    PathsMoved,
    StoredLevels,
    admits_surely,
    breaches,
    explain,
    route,
    summary,
    too_many_levels,
)
from sliceportal.domain.admission.pathcapacity import path_capacity_fix
from sliceportal.domain.admission.reasons import (
    CapacityFix,
    HopViolation,
    LinkRejection,
    PathViolation,
    PriorityPlanFix,
    Rejection,
    TooManyLevels,
)

__all__ = [
    "AdmissionVerdict",
    "Breaches",
    "CapacityFix",
    "Hop",
    "HopResult",
    "HopViolation",
    "LevelLoad",
    "LinkLoad",
    "LinkParams",
    "LinkRejection",
    "NetworkAnalysis",
    "Loads",
    "PathBound",
    "PathResult",
    "PathSlice",
    "PathViolation",
    "PathsMoved",
    "PriorityPlanFix",
    "Rejection",
    "StoredLevels",
    "TooManyLevels",
    "admission",
    "admits_surely",
    "analyze_paths",
    "breaches",
    "explain",
    "hop_bound",
    "path_bound",
    "path_capacity_fix",
    "route",
    "summary",
    "too_many_levels",
    "upper_aggregates",
]
