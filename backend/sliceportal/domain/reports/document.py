"""The capacity planning report: the one document every format (JSON, CSV, PDF, the UI's HTML
view) is rendered from, as one frozen dataclass per object. The API's OpenAPI contract is
generated from these classes (pydantic reads stdlib dataclasses and, with
``__pydantic_config__``, the attribute docstrings below); :meth:`Report.to_dict` gives the
document as plain data and :meth:`Report.tables` flattens that very document, so every format
carries the same numbers.

Delays are in seconds, rates in bit/s, bursts in bytes. ``None`` in a bound means unbounded;
in a capacity it means no capacity up to 1 Pbit/s works. Every per-slice and per-link bound is
given under both models (``harkous``, the paper's; ``netcalc``, the conservative one) as
:class:`PerModel`; the link's own model (``links.model``) is the one admission enforces, and
headroom, growth and recommendations are computed under it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from sliceportal.domain.reports.network import MeasuredSlice
from sliceportal.domain.reports.tables import Table, TableName, report_tables

T = TypeVar("T")
C = TypeVar("C", bound=type)


def _documented(cls: C) -> C:
    """Let pydantic (the API's OpenAPI document) use the attribute docstrings as field
    descriptions: its configuration is plain data, so the domain need not import it."""
    cls.__pydantic_config__ = {"use_attribute_docstrings": True}  # type: ignore[attr-defined]
    return cls


Severity = Literal["critical", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("critical", "warning", "info")
ActionKind = Literal[
    "raise-capacity", "move-slice", "cap-burst", "lower-rate", "investigate", "none"
]


@_documented
@dataclass(frozen=True, slots=True)
class PerModel(Generic[T]):
    """One value per delay model."""

    harkous: T
    netcalc: T


@_documented
@dataclass(frozen=True, slots=True)
class Scope:
    kind: Literal["network", "switch", "link"]
    id: int | None
    """The switch or link id; ``None`` for the network."""
    name: str


@_documented
@dataclass(frozen=True, slots=True)
class Parameters:
    growth_percent_per_month: float
    horizon_months: int
    telemetry_window_s: float | None
    """How far back measured figures go; ``None`` when no telemetry was used."""


@_documented
@dataclass(frozen=True, slots=True)
class Summary:
    links: int
    slices: int
    inadmissible_links: PerModel[int]
    """Links whose slices do not all meet their per-hop targets, per model."""
    e2e_violations: PerModel[int]
    """Slices missing their end-to-end target, per model."""
    findings: dict[Severity, int]
    """How many findings of each severity."""
    tightest_link: str | None
    """The link with the least capacity margin (relative), under its own model."""


@_documented
@dataclass(frozen=True, slots=True)
class LinkSliceRow:
    """One slice on one link: its per-hop bound under both models against its per-hop target."""

    slice_id: int
    name: str
    priority: int
    rate_bps: float
    burst_bytes: float
    delay_target_s: float
    bound_s: PerModel[float | None]
    slack_s: PerModel[float | None]
    meets_target: PerModel[bool]


@_documented
@dataclass(frozen=True, slots=True)
class BestPlan:
    """The least capacity at which the priority planner finds a feasible plan, and that plan."""

    capacity_bps: float | None
    priorities: dict[str, int] | None
    """Slice name → priority; ``None`` when no plan was found."""
    exhaustive: bool
    """True when the planner's answer is proven optimal at that capacity (see domain.planning)."""


@_documented
@dataclass(frozen=True, slots=True)
class MinCapacities:
    """The paper's Table III pattern: what capacity each way of assigning priorities needs."""

    current: PerModel[float | None]
    """With the priorities as they are."""
    one_level: PerModel[float | None]
    """All slices at one priority level."""
    best_plan: PerModel[BestPlan]
    """The best plan the planner finds within the link's queues."""


@_documented
@dataclass(frozen=True, slots=True)
class DelayCurves:
    """Each slice's worst-case delay against capacity (the paper's Fig. 15), per model."""

    capacity_bps: tuple[float, ...]
    bound_s: PerModel[dict[str, list[float | None]]]
    """Slice name → bound at each capacity (``None`` = unbounded there)."""


@_documented
@dataclass(frozen=True, slots=True)
class Growth:
    """What happens when every rate on the link grows by the report's monthly percentage
    (bursts grow with their rates: burst limits are times)."""

    months_until_inadmissible: int | None
    """First whole month at which the link no longer admits its slices — their per-hop targets
    and the end-to-end targets of the slices crossing it, as rates grow across the whole
    network (0 = already not); ``None`` when it still does at the horizon."""
    rate_factor_limit: float | None
    """The largest factor by which all rates can grow while the link still admits them
    (``None`` when no factor works, or when the link carries no slice)."""
    capacity_at_horizon_bps: float | None
    """The least capacity that admits the grown slices at the horizon (current priorities)."""


@_documented
@dataclass(frozen=True, slots=True)
class LinkReport:
    id: int
    name: str
    switch: str
    capacity_bps: float
    model: Literal["harkous", "netcalc"]
    queue_count: int
    mtu_bytes: int
    total_rate_bps: float
    utilisation: float
    """Σ rates / capacity."""
    admissible: PerModel[bool]
    slices: tuple[LinkSliceRow, ...]
    min_capacity_bps: MinCapacities
    capacity_margin_bps: float | None
    """Capacity minus the least capacity that still admits everything (per-hop and end-to-end
    targets, current priorities, the link's own model); negative when short; ``None`` when no
    capacity works."""
    curves: DelayCurves
    growth: Growth


@_documented
@dataclass(frozen=True, slots=True)
class EndToEnd:
    """A slice's end-to-end bound: the sum of its per-hop bounds (domain.admission.endtoend)."""

    total_s: float | None
    target_s: float | None
    meets_target: bool
    slack_s: float | None
    worst_hop: str | None
    """The link with the largest bound."""


@_documented
@dataclass(frozen=True, slots=True)
class Headroom:
    """How much more a slice could send before some slice on some link it crosses (itself
    included) misses a per-hop or end-to-end target, each link under its own model."""

    rate_bps: float | None
    """Extra rate at the same burst limit (the burst grows with the rate); ``None`` when the
    slice's links are not admissible today."""
    burst_bytes: float | None
    """Extra burst at the same rate; ``None`` as above."""
    rate_limited_by: str | None
    """The slice whose target (or the link whose rate sum) stops the rate growing, e.g.
    ``"DC on s1/eth2"``."""
    burst_limited_by: str | None


NO_HEADROOM = Headroom(None, None, None, None)


@_documented
@dataclass(frozen=True, slots=True)
class Measured(MeasuredSlice):
    """What telemetry measured, against what the slice declared and what was bounded."""

    peak_rate_vs_declared: float
    """Measured peak rate / declared rate."""
    delay_max_vs_bound: float | None
    """``delay_max_s`` / the slice's largest per-hop bound (each link's own model); above 1
    proves a packet waited longer than the analysis allows."""


@_documented
@dataclass(frozen=True, slots=True)
class SliceReport:
    id: int
    name: str
    priority: int
    rate_bps: float
    burst_limit_s: float
    burst_bytes: float
    delay_target_s: float
    e2e_delay_target_s: float | None
    links: tuple[str, ...]
    """The links it crosses, by name, in link id order (the sum does not depend on it)."""
    e2e: PerModel[EndToEnd]
    e2e_enforced: EndToEnd
    """Each hop under its link's own model: what admission checks against the target."""
    headroom: Headroom
    measured: Measured | None


@_documented
@dataclass(frozen=True, slots=True)
class Action:
    """What a recommendation asks for, as data (the UI and the CSV use it)."""

    kind: ActionKind
    link: str | None = None
    slice: str | None = None
    capacity_bps: float | None = None
    priority: int | None = None
    burst_bytes: float | None = None
    rate_bps: float | None = None
    priorities: dict[str, int] | None = None
    """For ``move-slice``: every slice to move and its new priority (they move together)."""


@_documented
@dataclass(frozen=True, slots=True)
class Finding:
    severity: Severity
    subject: str
    """What the finding is about, e.g. ``link s1/eth2`` or ``slice DC``."""
    finding: str
    """What is wrong or notable, with the numbers."""
    recommendation: str
    """One sentence: raise capacity to X, move slice S to level L, cap burst at B, …"""
    action: Action


@_documented
@dataclass(frozen=True, slots=True)
class Report:
    scope: Scope
    generated_at: dt.datetime
    parameters: Parameters
    summary: Summary
    findings: tuple[Finding, ...]
    """Most severe first."""
    links: tuple[LinkReport, ...]
    slices: tuple[SliceReport, ...]

    def to_dict(self) -> dict[str, Any]:
        """The contract's document (JSON-ready: lists, dicts, numbers, an ISO 8601 time)."""
        document: dict[str, Any] = _plain(self)
        return document

    def tables(self) -> dict[TableName, Table]:
        """Flat tables of the same numbers, one row per link, link × slice, slice, finding."""
        return report_tables(self.to_dict())


def finite_or_none(value: float) -> float | None:
    """A bound as the contract gives it: ``None`` for unbounded."""
    return value if math.isfinite(value) else None


def _plain(value: Any) -> Any:
    """Dataclasses as dicts, tuples as lists, times as ISO 8601, recursively."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, dt.datetime):
        return value.isoformat()
    return value
