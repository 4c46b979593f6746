"""The capacity planning report: the one document every format (JSON, CSV, PDF, the UI's HTML
view) is rendered from. `sliceportal.domain.reports.Report.to_dict()` produces exactly this
shape; the tests validate it against these models.

Delays are in seconds, rates in bit/s, bursts in bytes. ``None`` in a bound means unbounded;
in a capacity it means no capacity up to 1 Pbit/s works. Every per-slice and per-link bound is
given under both models (``harkous``, the paper's; ``netcalc``, the conservative one) as
:class:`PerModel`; the link's own model (``links.model``) is the one admission enforces, and
headroom, growth and recommendations are computed under it.
"""

from __future__ import annotations

import datetime as dt
from typing import Generic, Literal, TypeVar

from pydantic import BaseModel

T = TypeVar("T")

ScopeKind = Literal["network", "switch", "link"]
Severity = Literal["critical", "warning", "info"]
ActionKind = Literal[
    "raise-capacity", "move-slice", "cap-burst", "lower-rate", "investigate", "none"
]


class PerModel(BaseModel, Generic[T]):
    """One value per delay model."""

    harkous: T
    netcalc: T


class Scope(BaseModel):
    kind: ScopeKind
    id: int | None
    """The switch or link id; ``None`` for the network."""
    name: str


class Parameters(BaseModel):
    growth_percent_per_month: float
    horizon_months: int
    telemetry_window_s: float | None
    """How far back measured figures go; ``None`` when no telemetry was used."""


class Summary(BaseModel):
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


class LinkSliceRow(BaseModel):
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


class BestPlan(BaseModel):
    """The least capacity at which the priority planner finds a feasible plan, and that plan."""

    capacity_bps: float | None
    priorities: dict[str, int] | None
    """Slice name → priority; ``None`` when no plan was found."""
    exhaustive: bool
    """True when the planner's answer is proven optimal at that capacity (see domain.planning)."""


class MinCapacities(BaseModel):
    """The paper's Table III pattern: what capacity each way of assigning priorities needs."""

    current: PerModel[float | None]
    """With the priorities as they are."""
    one_level: PerModel[float | None]
    """All slices at one priority level."""
    best_plan: PerModel[BestPlan]
    """The best plan the planner finds within the link's queues."""


class DelayCurves(BaseModel):
    """Each slice's worst-case delay against capacity (the paper's Fig. 15), per model."""

    capacity_bps: list[float]
    bound_s: PerModel[dict[str, list[float | None]]]
    """Slice name → bound at each capacity (``None`` = unbounded there)."""


class Growth(BaseModel):
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


class LinkReport(BaseModel):
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
    slices: list[LinkSliceRow]
    min_capacity_bps: MinCapacities
    capacity_margin_bps: float | None
    """Capacity minus the least capacity that still admits everything (per-hop and end-to-end
    targets, current priorities, the link's own model); negative when short; ``None`` when no
    capacity works."""
    curves: DelayCurves
    growth: Growth


class Headroom(BaseModel):
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


class Measured(BaseModel):
    """What the switches measured for a slice over the telemetry window, against what it
    declared and what was bounded."""

    window_s: float
    peak_rate_bps: float
    mean_rate_bps: float
    delay_p50_s: float | None
    """Real-queue delay percentiles over every hop, as the telemetry API gives them: the upper
    edge of the histogram bucket holding the percentile (``None`` without packets)."""
    delay_p95_s: float | None
    delay_p99_s: float | None
    delay_max_s: float | None
    """The lower edge of the highest non-empty delay bucket: a delay some packet certainly
    reached, so a value above the bound proves the bound was exceeded."""
    loss_ratio: float | None
    peak_rate_vs_declared: float
    """Measured peak rate / declared rate."""
    delay_max_vs_bound: float | None
    """``delay_max_s`` / the slice's largest per-hop bound (each link's own model); above 1
    proves a packet waited longer than the analysis allows."""


class SliceReport(BaseModel):
    id: int
    name: str
    priority: int
    rate_bps: float
    burst_limit_s: float
    burst_bytes: float
    delay_target_s: float
    e2e_delay_target_s: float | None
    links: list[str]
    """The links it crosses, by name, in link id order (the sum does not depend on it)."""
    e2e: PerModel[EndToEnd]
    e2e_enforced: EndToEnd
    """Each hop under its link's own model: what admission checks against the target."""
    headroom: Headroom
    measured: Measured | None


class EndToEnd(BaseModel):
    """A slice's end-to-end bound: the sum of its per-hop bounds (domain.admission.endtoend)."""

    total_s: float | None
    target_s: float | None
    meets_target: bool
    slack_s: float | None
    worst_hop: str | None
    """The link with the largest bound."""


class Action(BaseModel):
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


class Finding(BaseModel):
    severity: Severity
    subject: str
    """What the finding is about, e.g. ``link s1/eth2`` or ``slice DC``."""
    finding: str
    """What is wrong or notable, with the numbers."""
    recommendation: str
    """One sentence: raise capacity to X, move slice S to level L, cap burst at B, …"""
    action: Action


class Report(BaseModel):
    scope: Scope
    generated_at: dt.datetime
    parameters: Parameters
    summary: Summary
    findings: list[Finding]
    """Most severe first."""
    links: list[LinkReport]
    slices: list[SliceReport]


SliceReport.model_rebuild()
