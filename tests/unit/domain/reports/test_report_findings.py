"""Findings and recommendations on hand-made networks, and the flat tables."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from report_networks import (
    MBPS,
    WHEN,
    Oracle,
    big_network,
    link,
    paper_network,
    scaled,
    validated,
    whole_report,
    with_capacity,
    with_slice,
)

from sliceportal.domain import Model, SpecError, min_capacity
from sliceportal.domain.reports import (
    MeasuredSlice,
    Network,
    NetworkSlice,
    build_report,
    growth_factor,
)
from sliceportal.domain.reports.findings import fewest_moves
from sliceportal.domain.spec import Framing


def _findings(document: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [f for f in document["findings"] if f["action"]["kind"] == kind]


def test_an_inadmissible_link_gets_more_capacity_moves_and_a_burst_cap() -> None:
    network = paper_network((7, 6, 6))  # case B at 500 Mbit/s: Enterprise misses 10 ms
    document = validated(whole_report(network))
    assert document["findings"][0]["severity"] == "critical"
    [raise_capacity] = _findings(document, "raise-capacity")
    assert raise_capacity["action"]["capacity_bps"] / MBPS == pytest.approx(870.7, abs=0.1)
    assert "870.7 Mbit/s" in raise_capacity["recommendation"]
    [move] = _findings(document, "move-slice")
    assert move["action"]["priorities"]
    moved = network
    for name, priority in move["action"]["priorities"].items():
        target = next(s for s in network.slices if s.name == name)
        moved = with_slice(moved, target.id, priority=priority)
    assert Oracle(moved).holds()
    [cap] = _findings(document, "cap-burst")
    assert cap["action"]["slice"] == "Peering"
    peering = network.slices[2]
    assert Oracle(network, bursts={peering.id: cap["action"]["burst_bytes"]}).holds()
    slightly_more = cap["action"]["burst_bytes"] * (1 + 1e-5)
    assert not Oracle(network, bursts={peering.id: slightly_more}).holds()


def test_moves_that_would_break_another_link_are_not_recommended() -> None:
    """Case B on link 1 is fixed by moving Enterprise to the top; Enterprise also crosses
    link 2, where its burst at the top would break Video's 0.3 ms target."""
    base = paper_network((7, 6, 6))
    network = Network(
        (*base.links, link(2, 300 * MBPS, switch="s2")),
        (
            base.slices[0],
            replace(base.slices[1], link_ids=(1, 2)),
            base.slices[2],
            NetworkSlice(4, "Video", 40 * MBPS, 0.0002, 0.0003, None, 7, None, (2,)),
        ),
    )
    assert Oracle(network).link_admits(2)
    document = validated(whole_report(network))
    assert not _findings(document, "move-slice")
    assert _findings(document, "raise-capacity")


def test_moves_rename_plan_levels_to_keep_slices_where_they_are() -> None:
    plan = {"a": 7, "b": 6, "c": 6}
    assert fewest_moves(plan, {"a": 3, "b": 1, "c": 5}, 7) == {"a": 3, "b": 1, "c": 1}
    assert fewest_moves(plan, {"a": 3, "b": 1, "c": 5}, 2) == plan
    assert fewest_moves({"a": 7}, {"a": 1}, 7) == {"a": 1}
    # Seven slice levels at most: the lowest name a plan level gets is 1, never best effort's 0.
    seven = {f"s{k}": 7 - k for k in range(7)}
    assert fewest_moves(seven, dict.fromkeys(seven, 1), 7) == seven


@pytest.mark.parametrize("queues", [1, 9])
def test_a_link_needs_two_to_eight_queues(queues: int) -> None:
    network = paper_network((7, 6, 5))
    bad = Network((replace(network.links[0], queue_count=queues),), network.slices)
    with pytest.raises(
        SpecError, match=r"^links\[0\]\.queue_count: must be an integer from 2 to 8"
    ):
        whole_report(bad)


@pytest.mark.parametrize("overhead", [-1, 65])
def test_a_frame_overhead_is_0_to_64_bytes(overhead: int) -> None:
    network = paper_network((7, 6, 5))
    bad = Network((replace(network.links[0], frame_overhead_bytes=overhead),), network.slices)
    with pytest.raises(SpecError, match=r"^links\[0\]\.frame_overhead_bytes: must be an integer"):
        whole_report(bad)


def test_a_links_slices_get_one_level_fewer_than_its_queues() -> None:
    assert [link(1, MBPS, queues=q).slice_levels for q in range(2, 9)] == [1, 2, 3, 4, 5, 6, 7]
    assert link(1, MBPS, mtu=9000, frame_overhead=24).framing == Framing(9018, 24)
    slices = paper_network((7, 6, 5)).slices
    # Two queues: best effort and one level, so the best plan is all slices at the top.
    two = _links_doc(Network((link(1, 500 * MBPS, queues=2),), slices))
    for model in Model:
        best = two["min_capacity_bps"]["best_plan"][model.value]
        assert set(best["priorities"].values()) == {7}
        assert best["capacity_bps"] == two["min_capacity_bps"]["one_level"][model.value]
    # Three queues: two levels, enough for the paper's case C (329.4 Mbit/s under harkous).
    three = _links_doc(Network((link(1, 500 * MBPS, queues=3),), slices))
    best = three["min_capacity_bps"]["best_plan"]["harkous"]
    assert best["priorities"] == {"DC": 7, "Enterprise": 7, "Peering": 6}
    assert best["capacity_bps"] / MBPS == pytest.approx(329.4, abs=0.1)


def test_a_line_rate_link_is_analysed_with_its_frame_overhead() -> None:
    slices = paper_network((7, 6, 5)).slices
    network = Network((link(1, 500 * MBPS, Model.NETCALC, frame_overhead=24),), slices)
    row = _links_doc(network)["slices"][0]
    # DC on top: 1.4 × (its burst + one tick of 48 Mbit/s), a 1518-byte frame + 24 below it.
    assert row["bound_s"]["netcalc"] == pytest.approx(8 * (1.4 * 120_006 + 1542) / 500e6)
    assert row["bound_s"]["harkous"] == pytest.approx(8 * 120_000 / 500e6)  # no framing
    specs = Oracle(network).specs(1)
    framing = network.links[0].framing
    caps = _links_doc(network)["min_capacity_bps"]
    assert caps["current"]["netcalc"] == min_capacity(specs, Model.NETCALC, framing)
    assert caps["current"]["netcalc"] > min_capacity(specs, Model.NETCALC)


def _links_doc(network: Network) -> dict[str, Any]:
    [item] = validated(whole_report(network))["links"]
    return dict(item)


def test_a_missed_end_to_end_target_raises_the_worst_hop_just_enough() -> None:
    network = Network(
        (link(1, 400 * MBPS), link(2, 1000 * MBPS, Model.NETCALC, switch="s2")),
        (
            NetworkSlice(1, "DC", 48 * MBPS, 0.020, 0.020, 0.012, 7, None, (1, 2)),
            NetworkSlice(2, "Peering", 240 * MBPS, 0.030, 0.030, None, 7, None, (1,)),
        ),
    )
    document = validated(whole_report(network))
    dc = document["slices"][0]
    assert not dc["e2e"]["harkous"]["meets_target"]
    [finding] = [f for f in document["findings"] if f["subject"] == "slice DC"]
    action = finding["action"]
    assert action["kind"] == "raise-capacity" and action["link"] == "s1/eth1"
    fixed = with_capacity(network, 1, action["capacity_bps"] * (1 + 1e-9))
    assert Oracle(fixed).path(network.slices[0]).meets_target
    short = with_capacity(network, 1, action["capacity_bps"] * (1 - 1e-6))
    assert not Oracle(short).path(network.slices[0]).meets_target


def test_telemetry_above_the_bound_is_critical_and_an_idle_slice_may_lower_its_rate() -> None:
    network = paper_network((7, 7, 6), 1000 * MBPS)
    measured = {
        1: MeasuredSlice(300.0, 47e6, 30e6, 1e-4, 5e-4, 1e-3, 0.5, 0.0),
        3: MeasuredSlice(300.0, 60e6, 40e6, 1e-4, 5e-4, 1e-3, 2e-3, 0.0),
    }
    document = validated(whole_report(network, measured=measured, telemetry_window_s=300.0))
    assert document["parameters"]["telemetry_window_s"] == 300.0
    dc, enterprise, peering = document["slices"]
    assert enterprise["measured"] is None
    dc_bound = document["links"][0]["slices"][0]["bound_s"]["harkous"]
    assert dc["measured"]["delay_max_vs_bound"] == pytest.approx(0.5 / dc_bound)
    assert dc["measured"]["peak_rate_vs_declared"] == pytest.approx(47 / 48)
    [investigate] = _findings(document, "investigate")
    assert investigate["severity"] == "critical" and investigate["action"]["slice"] == "DC"
    assert "not what was declared" in investigate["recommendation"]
    [lower] = _findings(document, "lower-rate")
    assert lower["severity"] == "info" and lower["action"]["slice"] == "Peering"
    assert lower["action"]["rate_bps"] == pytest.approx(60e6 * 1.25)
    assert peering["measured"]["peak_rate_vs_declared"] == pytest.approx(0.25)


def test_growth_warns_with_the_month_and_the_capacity_for_the_horizon() -> None:
    network = paper_network((7, 7, 6))  # case C: 329.4 Mbit/s needed, 500 installed
    document = validated(whole_report(network, growth_percent_per_month=5.0, horizon_months=24))
    growth = document["links"][0]["growth"]
    assert growth["months_until_inadmissible"] == 9
    assert growth_factor(5.0, 8) < growth["rate_factor_limit"] < growth_factor(5.0, 9)
    grown = scaled(network, growth_factor(5.0, 24))
    needed = min_capacity(Oracle(grown).specs(1), Model.HARKOUS)  # the link's model
    assert growth["capacity_at_horizon_bps"] == pytest.approx(needed, rel=1e-9)
    [warning] = [f for f in document["findings"] if "stops admitting" in f["finding"]]
    assert warning["severity"] == "warning"
    assert warning["action"]["capacity_bps"] == growth["capacity_at_horizon_bps"]
    assert "9 month(s)" in warning["finding"]


def test_a_thin_margin_is_a_warning_and_the_tightest_link_is_named() -> None:
    needed = 329.4435 * MBPS
    network = paper_network((7, 7, 6), needed * 1.05)
    document = validated(whole_report(network, growth_percent_per_month=0.0))
    assert document["summary"]["tightest_link"] == "s1/eth1"
    margins = [f for f in document["findings"] if "spare capacity" in f["finding"]]
    [warning] = margins
    planned = warning["action"]["capacity_bps"]
    margin = document["links"][0]["capacity_margin_bps"]
    assert planned == pytest.approx((network.links[0].capacity_bps - margin) / 0.9)


def test_findings_are_ordered_by_severity() -> None:
    network = paper_network((7, 6, 6))
    measured = {3: MeasuredSlice(60.0, 10e6, 5e6, None, None, None, None, None)}
    document = validated(whole_report(network, measured=measured, telemetry_window_s=60.0))
    severities = [f["severity"] for f in document["findings"]]
    assert severities[0] == "critical" and severities[-1] == "info"
    assert severities == sorted(severities, key=["critical", "warning", "info"].index)


def test_tables_carry_the_document_numbers() -> None:
    network = paper_network((7, 6, 5))
    report = whole_report(network, measured={1: MeasuredSlice(60, 1e6, 1e6, 0, 0, 0, 0, 0)})
    document = validated(report)
    tables = report.tables()
    [row] = tables["links"].rows
    link_doc = document["links"][0]
    assert row["capacity_margin_bps"] == link_doc["capacity_margin_bps"]
    assert (
        row["min_capacity_current_harkous_bps"]
        == (link_doc["min_capacity_bps"]["current"]["harkous"])
    )
    assert len(tables["link_slices"].rows) == 3
    for flat, nested in zip(tables["link_slices"].rows, link_doc["slices"], strict=True):
        assert flat["bound_harkous_s"] == nested["bound_s"]["harkous"]
        assert flat["slack_netcalc_s"] == nested["slack_s"]["netcalc"]
    for flat, nested in zip(tables["slices"].rows, document["slices"], strict=True):
        assert flat["headroom_rate_bps"] == nested["headroom"]["rate_bps"]
        assert flat["e2e_bound_netcalc_s"] == nested["e2e"]["netcalc"]["total_s"]
    assert tables["slices"].rows[0]["measured_peak_rate_bps"] == 1e6
    assert tables["slices"].rows[1]["measured_peak_rate_bps"] is None
    assert len(tables["findings"].rows) == len(document["findings"])
    for table in tables.values():
        for flat_row in table.rows:
            assert all(
                isinstance(v, str | int | float | bool | type(None)) for v in flat_row.values()
            )


def test_bad_input_is_refused_naming_the_field() -> None:
    network = paper_network((7, 6, 5))
    with pytest.raises(SpecError, match="scope_link_ids"):
        build_report(network, "link", 9, "x", [9], generated_at=WHEN)
    unknown = with_slice(network, 1, link_ids=(1, 5))
    with pytest.raises(SpecError, match=r"slices\[0\]\.link_ids\[1\]"):
        whole_report(unknown)
    twice = with_slice(network, 2, name="DC")
    with pytest.raises(SpecError, match="duplicate slice name"):
        whole_report(twice)
    with pytest.raises(SpecError, match="horizon_months"):
        whole_report(network, horizon_months=-1)


def test_a_thousand_slices_over_twenty_links_make_one_valid_report() -> None:
    """Its speed is `bench/bench_reports.py`'s to measure, not a test's to assert."""
    document = validated(whole_report(big_network(1000, 20)))
    assert document["summary"]["slices"] == 1000
