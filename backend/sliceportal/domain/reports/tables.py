"""The report as flat tables (for the CSV export), flattened from the contract's document itself.

Deriving the tables from ``Report.to_dict()`` rather than from the objects means no number can
differ between the two. Column names carry their units; per-model values get one column per
model (``bound_harkous_s``, ``bound_netcalc_s``).
"""

from __future__ import annotations

from typing import Any

Cell = str | int | float | bool | None
Table = list[dict[str, Cell]]

MODELS = ("harkous", "netcalc")
PATH_SEPARATOR = " > "


def report_tables(document: dict[str, Any]) -> dict[str, Table]:
    """Tables ``links``, ``link_slices``, ``slices`` and ``findings`` of a report document."""
    return {
        "links": [_link_row(link) for link in document["links"]],
        "link_slices": [
            _link_slice_row(link, row) for link in document["links"] for row in link["slices"]
        ],
        "slices": [_slice_row(item) for item in document["slices"]],
        "findings": [_finding_row(finding) for finding in document["findings"]],
    }


def _per_model(value: dict[str, Any], stem: str, unit: str = "") -> dict[str, Cell]:
    suffix = f"_{unit}" if unit else ""
    return {f"{stem}_{model}{suffix}": value[model] for model in MODELS}


def _link_row(link: dict[str, Any]) -> dict[str, Cell]:
    caps = link["min_capacity_bps"]
    growth = link["growth"]
    return {
        "link_id": link["id"],
        "link": link["name"],
        "switch": link["switch"],
        "capacity_bps": link["capacity_bps"],
        "model": link["model"],
        "queue_count": link["queue_count"],
        "mtu_bytes": link["mtu_bytes"],
        "slices": len(link["slices"]),
        "total_rate_bps": link["total_rate_bps"],
        "utilisation": link["utilisation"],
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
        "capacity_margin_bps": link["capacity_margin_bps"],
        "growth_months_until_inadmissible": growth["months_until_inadmissible"],
        "growth_rate_factor_limit": growth["rate_factor_limit"],
        "growth_capacity_at_horizon_bps": growth["capacity_at_horizon_bps"],
    }


def _link_slice_row(link: dict[str, Any], row: dict[str, Any]) -> dict[str, Cell]:
    return {
        "link_id": link["id"],
        "link": link["name"],
        "slice_id": row["slice_id"],
        "slice": row["name"],
        "priority": row["priority"],
        "rate_bps": row["rate_bps"],
        "burst_bytes": row["burst_bytes"],
        "delay_target_s": row["delay_target_s"],
        **_per_model(row["bound_s"], "bound", "s"),
        **_per_model(row["slack_s"], "slack", "s"),
        **_per_model(row["meets_target"], "meets_target"),
    }


def _slice_row(item: dict[str, Any]) -> dict[str, Cell]:
    e2e = item["e2e"]
    headroom = item["headroom"]
    measured = item["measured"] or {}
    return {
        "slice_id": item["id"],
        "slice": item["name"],
        "priority": item["priority"],
        "rate_bps": item["rate_bps"],
        "burst_limit_s": item["burst_limit_s"],
        "burst_bytes": item["burst_bytes"],
        "delay_target_s": item["delay_target_s"],
        "e2e_delay_target_s": item["e2e_delay_target_s"],
        "links": PATH_SEPARATOR.join(item["links"]),
        **{f"e2e_bound_{model}_s": e2e[model]["total_s"] for model in MODELS},
        **{f"e2e_slack_{model}_s": e2e[model]["slack_s"] for model in MODELS},
        **{f"e2e_meets_target_{model}": e2e[model]["meets_target"] for model in MODELS},
        **{f"e2e_worst_hop_{model}": e2e[model]["worst_hop"] for model in MODELS},
        "e2e_bound_enforced_s": item["e2e_enforced"]["total_s"],
        "e2e_meets_target_enforced": item["e2e_enforced"]["meets_target"],
        "headroom_rate_bps": headroom["rate_bps"],
        "headroom_burst_bytes": headroom["burst_bytes"],
        "headroom_rate_limited_by": headroom["rate_limited_by"],
        "headroom_burst_limited_by": headroom["burst_limited_by"],
        "measured_window_s": measured.get("window_s"),
        "measured_peak_rate_bps": measured.get("peak_rate_bps"),
        "measured_mean_rate_bps": measured.get("mean_rate_bps"),
        "measured_delay_p50_s": measured.get("delay_p50_s"),
        "measured_delay_p95_s": measured.get("delay_p95_s"),
        "measured_delay_p99_s": measured.get("delay_p99_s"),
        "measured_delay_max_s": measured.get("delay_max_s"),
        "measured_loss_ratio": measured.get("loss_ratio"),
        "measured_peak_rate_vs_declared": measured.get("peak_rate_vs_declared"),
        "measured_delay_max_vs_bound": measured.get("delay_max_vs_bound"),
    }


def _finding_row(finding: dict[str, Any]) -> dict[str, Cell]:
    action = finding["action"]
    return {
        "severity": finding["severity"],
        "subject": finding["subject"],
        "finding": finding["finding"],
        "recommendation": finding["recommendation"],
        "action": action["kind"],
        "action_link": action["link"],
        "action_slice": action["slice"],
        "action_capacity_bps": action["capacity_bps"],
        "action_priority": action["priority"],
        "action_burst_bytes": action["burst_bytes"],
        "action_rate_bps": action["rate_bps"],
        "action_priorities": None
        if action["priorities"] is None
        else "; ".join(f"{name}={p}" for name, p in action["priorities"].items()),
    }
