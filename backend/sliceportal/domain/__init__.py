"""The pure analytics of sliceportal: delay bounds, admission, capacity and priority planning.

No I/O and no dependency beyond the standard library and numpy: the API, the CLI, the workers
and the reports all call these functions, and the tests check them as mathematics.
"""

from sliceportal.domain.admission.link import AdmissionVerdict, admission
from sliceportal.domain.bounds import (
    ArrayAnalysis,
    LevelAggregates,
    LevelBounds,
    LinkAnalysis,
    SliceArrays,
    SliceBound,
    Violation,
    aggregate_arrays,
    analyze,
    analyze_arrays,
    evaluate_levels,
    slice_arrays,
)
from sliceportal.domain.capacity import min_capacity, min_capacity_levels
from sliceportal.domain.curves import DelayCurves, capacity_grid, delay_curves
from sliceportal.domain.planning import PriorityPlan, plan_priorities
from sliceportal.domain.spec import (
    DEFAULT_MTU_BYTES,
    NUM_LEVELS,
    TOP_PRIORITY,
    LinkInput,
    Model,
    SliceSpec,
    SpecError,
    parse_link_input,
    slice_spec,
)

__all__ = [
    "DEFAULT_MTU_BYTES",
    "NUM_LEVELS",
    "TOP_PRIORITY",
    "AdmissionVerdict",
    "ArrayAnalysis",
    "DelayCurves",
    "LevelAggregates",
    "LevelBounds",
    "LinkAnalysis",
    "LinkInput",
    "Model",
    "PriorityPlan",
    "SliceArrays",
    "SliceBound",
    "SliceSpec",
    "SpecError",
    "Violation",
    "admission",
    "aggregate_arrays",
    "analyze",
    "analyze_arrays",
    "capacity_grid",
    "delay_curves",
    "evaluate_levels",
    "min_capacity",
    "min_capacity_levels",
    "parse_link_input",
    "plan_priorities",
    "slice_arrays",
    "slice_spec",
]
