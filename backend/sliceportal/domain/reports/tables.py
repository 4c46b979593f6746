"""The report as flat tables (for the CSV export), flattened from the contract's document itself.

Deriving the tables from ``Report.to_dict()`` rather than from the objects means no number can
differ between the two. Column names carry their units; per-model values get one column per
model (``bound_harkous_s``, ``bound_netcalc_s``).

Each table's columns are the fields of its row class, declared once: the rows are built as
instances of it, and a table keeps the columns even with no rows, so the header of an empty
table is the header of a full one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

Cell = str | int | float | bool | None
TableName = Literal["links", "link_slices", "slices", "findings"]
TABLES: tuple[TableName, ...] = ("links", "link_slices", "slices", "findings")

MODELS = ("harkous", "netcalc")
PATH_SEPARATOR = " > "

R = TypeVar("R", bound="Row")


@dataclass(frozen=True, slots=True)
class Row:
    """A row of one table; its subclass's fields, in order, are the table's columns."""

    @classmethod
    def columns(cls) -> tuple[str, ...]:
        """The header: known without any row, so an empty table has it too."""
        return tuple(field.name for field in dataclasses.fields(cls))

    def cells(self) -> dict[str, Cell]:
        """The row keyed by column, in column order."""
        return {name: getattr(self, name) for name in self.columns()}


@dataclass(frozen=True, slots=True)
class Table:
    """One flat table. It carries its columns, so a table with no rows still has a header."""

    columns: tuple[str, ...]
    rows: list[dict[str, Cell]]

    @classmethod
    def of(cls, row_type: type[R], rows: Iterable[R]) -> Table:
        """The table of `rows`, with the columns of `row_type` (which an empty `rows` lacks)."""
        return cls(row_type.columns(), [row.cells() for row in rows])


@dataclass(frozen=True, slots=True)
class LinksRow(Row):
    link_id: int
    link: str
    switch: str
    capacity_bps: float
    model: str
    queue_count: int
    mtu_bytes: int
    slices: int
    total_rate_bps: float
    utilisation: float
    admissible_harkous: bool
    admissible_netcalc: bool
    min_capacity_current_harkous_bps: float | None
    min_capacity_current_netcalc_bps: float | None
    min_capacity_one_level_harkous_bps: float | None
    min_capacity_one_level_netcalc_bps: float | None
    min_capacity_best_plan_harkous_bps: float | None
    min_capacity_best_plan_netcalc_bps: float | None
    best_plan_exhaustive_harkous: bool
    best_plan_exhaustive_netcalc: bool
    capacity_margin_bps: float | None
    growth_months_until_inadmissible: int | None
    growth_rate_factor_limit: float | None
    growth_capacity_at_horizon_bps: float | None


@dataclass(frozen=True, slots=True)
class LinkSlicesRow(Row):
    link_id: int
    link: str
    slice_id: int
    slice: str
    priority: int
    rate_bps: float
    burst_bytes: float
    delay_target_s: float
    bound_harkous_s: float | None
    bound_netcalc_s: float | None
    slack_harkous_s: float | None
    slack_netcalc_s: float | None
    meets_target_harkous: bool
    meets_target_netcalc: bool


@dataclass(frozen=True, slots=True)
class SlicesRow(Row):
    slice_id: int
    slice: str
    priority: int
    rate_bps: float
    burst_limit_s: float
    burst_bytes: float
    delay_target_s: float
    e2e_delay_target_s: float | None
    links: str
    e2e_bound_harkous_s: float | None
    e2e_bound_netcalc_s: float | None
    e2e_slack_harkous_s: float | None
    e2e_slack_netcalc_s: float | None
    e2e_meets_target_harkous: bool
    e2e_meets_target_netcalc: bool
    e2e_worst_hop_harkous: str | None
    e2e_worst_hop_netcalc: str | None
    e2e_bound_enforced_s: float | None
    e2e_meets_target_enforced: bool
    headroom_rate_bps: float | None
    headroom_burst_bytes: float | None
    headroom_rate_limited_by: str | None
    headroom_burst_limited_by: str | None
    measured_window_s: float | None
    measured_peak_rate_bps: float | None
    measured_mean_rate_bps: float | None
    measured_delay_p50_s: float | None
    measured_delay_p95_s: float | None
    measured_delay_p99_s: float | None
    measured_delay_max_s: float | None
    measured_loss_ratio: float | None
    measured_peak_rate_vs_declared: float | None
    measured_delay_max_vs_bound: float | None


@dataclass(frozen=True, slots=True)
class FindingsRow(Row):
    severity: str
    subject: str
    finding: str
    recommendation: str
    action: str
    action_link: str | None
    action_slice: str | None
    action_capacity_bps: float | None
    action_priority: int | None
    action_burst_bytes: float | None
    action_rate_bps: float | None
    action_priorities: str | None


def report_tables(document: dict[str, Any]) -> dict[TableName, Table]:
    """Tables ``links``, ``link_slices``, ``slices`` and ``findings`` of a report document."""
    links = document["links"]
    return {
        "links": Table.of(LinksRow, (_link_row(link) for link in links)),
        "link_slices": Table.of(
            LinkSlicesRow, (_link_slice_row(link, row) for link in links for row in link["slices"])
        ),
        "slices": Table.of(SlicesRow, (_slice_row(item) for item in document["slices"])),
        "findings": Table.of(FindingsRow, (_finding_row(item) for item in document["findings"])),
    }


def _per_model(value: dict[str, Any], stem: str, unit: str = "") -> dict[str, Any]:
    suffix = f"_{unit}" if unit else ""
    return {f"{stem}_{model}{suffix}": value[model] for model in MODELS}


def _link_row(link: dict[str, Any]) -> LinksRow:
    caps = link["min_capacity_bps"]
    growth = link["growth"]
    return LinksRow(
        link_id=link["id"],
        link=link["name"],
        switch=link["switch"],
        capacity_bps=link["capacity_bps"],
        model=link["model"],
        queue_count=link["queue_count"],
        mtu_bytes=link["mtu_bytes"],
        slices=len(link["slices"]),
        total_rate_bps=link["total_rate_bps"],
        utilisation=link["utilisation"],
        **_per_model(link["admissible"], "admissible"),
        **_per_model(caps["current"], "min_capacity_current", "bps"),
        **_per_model(caps["one_level"], "min_capacity_one_level", "bps"),
        **{
            f"min_capacity_best_plan_{model}_bps": caps["best_plan"][model]["capacity_bps"]
            for model in MODELS
        },
        **{
            f"best_plan_exhaustive_{model}": caps["best_plan"][model]["exhaustive"]
            for model in MODELS
        },
        capacity_margin_bps=link["capacity_margin_bps"],
        growth_months_until_inadmissible=growth["months_until_inadmissible"],
        growth_rate_factor_limit=growth["rate_factor_limit"],
        growth_capacity_at_horizon_bps=growth["capacity_at_horizon_bps"],
    )


def _link_slice_row(link: dict[str, Any], row: dict[str, Any]) -> LinkSlicesRow:
    return LinkSlicesRow(
        link_id=link["id"],
        link=link["name"],
        slice_id=row["slice_id"],
        slice=row["name"],
        priority=row["priority"],
        rate_bps=row["rate_bps"],
        burst_bytes=row["burst_bytes"],
        delay_target_s=row["delay_target_s"],
        **_per_model(row["bound_s"], "bound", "s"),
        **_per_model(row["slack_s"], "slack", "s"),
        **_per_model(row["meets_target"], "meets_target"),
    )


def _slice_row(item: dict[str, Any]) -> SlicesRow:
    e2e = item["e2e"]
    headroom = item["headroom"]
    measured = item["measured"] or {}
    return SlicesRow(
        slice_id=item["id"],
        slice=item["name"],
        priority=item["priority"],
        rate_bps=item["rate_bps"],
        burst_limit_s=item["burst_limit_s"],
        burst_bytes=item["burst_bytes"],
        delay_target_s=item["delay_target_s"],
        e2e_delay_target_s=item["e2e_delay_target_s"],
        links=PATH_SEPARATOR.join(item["links"]),
        **{f"e2e_bound_{model}_s": e2e[model]["total_s"] for model in MODELS},
        **{f"e2e_slack_{model}_s": e2e[model]["slack_s"] for model in MODELS},
        **{f"e2e_meets_target_{model}": e2e[model]["meets_target"] for model in MODELS},
        **{f"e2e_worst_hop_{model}": e2e[model]["worst_hop"] for model in MODELS},
        e2e_bound_enforced_s=item["e2e_enforced"]["total_s"],
        e2e_meets_target_enforced=item["e2e_enforced"]["meets_target"],
        headroom_rate_bps=headroom["rate_bps"],
        headroom_burst_bytes=headroom["burst_bytes"],
        headroom_rate_limited_by=headroom["rate_limited_by"],
        headroom_burst_limited_by=headroom["burst_limited_by"],
        measured_window_s=measured.get("window_s"),
        measured_peak_rate_bps=measured.get("peak_rate_bps"),
        measured_mean_rate_bps=measured.get("mean_rate_bps"),
        measured_delay_p50_s=measured.get("delay_p50_s"),
        measured_delay_p95_s=measured.get("delay_p95_s"),
        measured_delay_p99_s=measured.get("delay_p99_s"),
        measured_delay_max_s=measured.get("delay_max_s"),
        measured_loss_ratio=measured.get("loss_ratio"),
        measured_peak_rate_vs_declared=measured.get("peak_rate_vs_declared"),
        measured_delay_max_vs_bound=measured.get("delay_max_vs_bound"),
    )


def _finding_row(finding: dict[str, Any]) -> FindingsRow:
    action = finding["action"]
    return FindingsRow(
        severity=finding["severity"],
        subject=finding["subject"],
        finding=finding["finding"],
        recommendation=finding["recommendation"],
        action=action["kind"],
        action_link=action["link"],
        action_slice=action["slice"],
        action_capacity_bps=action["capacity_bps"],
        action_priority=action["priority"],
        action_burst_bytes=action["burst_bytes"],
        action_rate_bps=action["rate_bps"],
        action_priorities=None
        if action["priorities"] is None
        else "; ".join(f"{name}={p}" for name, p in action["priorities"].items()),
    )
