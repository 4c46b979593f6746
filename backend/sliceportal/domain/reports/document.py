"""The report as plain data: one frozen dataclass per object of the API contract.

The field names and meanings are those of ``sliceportal.schemas.reports`` (which documents
every field); :meth:`Report.to_dict` produces the document the contract validates, and
:meth:`Report.tables` flattens that very document, so the two always carry the same numbers.
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

Severity = Literal["critical", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("critical", "warning", "info")
ActionKind = Literal[
    "raise-capacity", "move-slice", "cap-burst", "lower-rate", "investigate", "none"
]


@dataclass(frozen=True, slots=True)
class PerModel(Generic[T]):
    """One value per delay model."""

    harkous: T
    netcalc: T


@dataclass(frozen=True, slots=True)
class Scope:
    kind: Literal["network", "switch", "link"]
    id: int | None
    name: str


@dataclass(frozen=True, slots=True)
class Parameters:
    growth_percent_per_month: float
    horizon_months: int
    telemetry_window_s: float | None


@dataclass(frozen=True, slots=True)
class Summary:
    links: int
    slices: int
    inadmissible_links: PerModel[int]
    e2e_violations: PerModel[int]
    findings: dict[Severity, int]
    tightest_link: str | None


@dataclass(frozen=True, slots=True)
class LinkSliceRow:
    slice_id: int
    name: str
    priority: int
    rate_bps: float
    burst_bytes: float
    delay_target_s: float
    bound_s: PerModel[float | None]
    slack_s: PerModel[float | None]
    meets_target: PerModel[bool]


@dataclass(frozen=True, slots=True)
class BestPlan:
    capacity_bps: float | None
    priorities: dict[str, int] | None
    exhaustive: bool


@dataclass(frozen=True, slots=True)
class MinCapacities:
    current: PerModel[float | None]
    one_level: PerModel[float | None]
    best_plan: PerModel[BestPlan]


@dataclass(frozen=True, slots=True)
class Curves:
    capacity_bps: tuple[float, ...]
    bound_s: PerModel[dict[str, list[float | None]]]


@dataclass(frozen=True, slots=True)
class Growth:
    months_until_inadmissible: int | None
    rate_factor_limit: float | None
    capacity_at_horizon_bps: float | None


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
    admissible: PerModel[bool]
    slices: tuple[LinkSliceRow, ...]
    min_capacity_bps: MinCapacities
    capacity_margin_bps: float | None
    curves: Curves
    growth: Growth


@dataclass(frozen=True, slots=True)
class EndToEnd:
    total_s: float | None
    target_s: float | None
    meets_target: bool
    slack_s: float | None
    worst_hop: str | None


@dataclass(frozen=True, slots=True)
class Headroom:
    rate_bps: float | None
    burst_bytes: float | None
    rate_limited_by: str | None
    burst_limited_by: str | None


NO_HEADROOM = Headroom(None, None, None, None)


@dataclass(frozen=True, slots=True)
class Measured(MeasuredSlice):
    """What telemetry measured, against what the slice declared and what was bounded."""

    peak_rate_vs_declared: float
    delay_max_vs_bound: float | None


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
    e2e: PerModel[EndToEnd]
    e2e_enforced: EndToEnd
    headroom: Headroom
    measured: Measured | None


@dataclass(frozen=True, slots=True)
class Action:
    kind: ActionKind
    link: str | None = None
    slice: str | None = None
    capacity_bps: float | None = None
    priority: int | None = None
    burst_bytes: float | None = None
    rate_bps: float | None = None
    priorities: dict[str, int] | None = None
    """For ``move-slice``: every slice to move and its new priority (they move together)."""


@dataclass(frozen=True, slots=True)
class Finding:
    severity: Severity
    subject: str
    finding: str
    recommendation: str
    action: Action


@dataclass(frozen=True, slots=True)
class Report:
    scope: Scope
    generated_at: dt.datetime
    parameters: Parameters
    summary: Summary
    findings: tuple[Finding, ...]
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
