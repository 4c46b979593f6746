"""The report on the paper's three slices: Table III and agreement with the analytics."""

from __future__ import annotations

from typing import Any

import pytest
from report_networks import (
    MBPS,
    WHEN,
    Oracle,
    link,
    paper_network,
    validated,
    whole_report,
)

from sliceportal.domain import (
    Model,
    analyze,
    capacity_grid,
    delay_curves,
    min_capacity,
    plan_priorities,
    slice_spec,
)
from sliceportal.domain.reports import Network, NetworkSlice, build_report

CASE_PRIORITIES = {
    "B": (7, 6, 6),
    "C": (7, 7, 6),
    "D": (7, 6, 5),
}


def _link(document: dict[str, Any]) -> dict[str, Any]:
    links: list[dict[str, Any]] = document["links"]
    assert len(links) == 1
    return links[0]


def _mbps(value: float | None) -> float:
    assert value is not None
    return value / MBPS


def test_case_a_one_level_dc_within_5_ms_needs_1656_mbps() -> None:
    document = validated(whole_report(paper_network((7, 7, 7), dc_target_s=0.005)))
    caps = _link(document)["min_capacity_bps"]
    # netcalc: each rate's microsecond tick (37.5 bytes in all) and best effort's 1518-byte
    # frame on top of the 1.035 MB of bursts that harkous charges.
    expected = {"harkous": 1656.0, "netcalc": 8 * (1_035_037.5 + 1518) / 0.005 / MBPS}
    for model, mbps in expected.items():
        assert _mbps(caps["current"][model]) == pytest.approx(mbps, abs=0.01)
        assert _mbps(caps["one_level"][model]) == pytest.approx(mbps, abs=0.01)


@pytest.mark.parametrize(("case", "expected_mbps"), [("B", 870.7), ("C", 329.4), ("D", 330.0)])
def test_table_iii_current_priorities(case: str, expected_mbps: float) -> None:
    document = validated(whole_report(paper_network(CASE_PRIORITIES[case])))
    caps = _link(document)["min_capacity_bps"]
    assert _mbps(caps["current"]["harkous"]) == pytest.approx(expected_mbps, abs=0.1)
    # one level is case A with the DC target as declared (20 ms): Peering's 30 ms rules
    assert _mbps(caps["one_level"]["harkous"]) == pytest.approx(828.0, abs=0.1)


@pytest.mark.parametrize("case", sorted(CASE_PRIORITIES))
def test_the_best_plan_is_case_c_whatever_the_current_priorities(case: str) -> None:
    """Case C is the paper's best plan: the planner's least capacity is its 329.4 Mbit/s."""
    document = validated(whole_report(paper_network(CASE_PRIORITIES[case])))
    best = _link(document)["min_capacity_bps"]["best_plan"]["harkous"]
    assert _mbps(best["capacity_bps"]) == pytest.approx(329.4, abs=0.1)
    assert best["exhaustive"] is True
    assert best["priorities"]["DC"] == best["priorities"]["Enterprise"]
    assert best["priorities"]["Peering"] < best["priorities"]["DC"]


@pytest.mark.parametrize("model", list(Model))
@pytest.mark.parametrize("case", sorted(CASE_PRIORITIES))
def test_min_capacities_are_the_analytics_own(case: str, model: Model) -> None:
    network = paper_network(CASE_PRIORITIES[case], model=model)
    specs = Oracle(network).specs(1)
    caps = _link(validated(whole_report(network)))["min_capacity_bps"]
    assert caps["current"][model.value] == min_capacity(specs, model)
    flat = [
        slice_spec(
            s.name, s.rate_bps, 7, burst_bytes=s.burst_bytes, delay_target_s=s.delay_target_s
        )
        for s in specs
    ]
    assert caps["one_level"][model.value] == min_capacity(flat, model)


@pytest.mark.parametrize("model", list(Model))
def test_best_plan_is_feasible_there_and_proven_infeasible_just_below(model: Model) -> None:
    network = paper_network((7, 6, 5), model=model)
    specs = Oracle(network).specs(1)
    best = _link(validated(whole_report(network)))["min_capacity_bps"]["best_plan"][model.value]
    capacity = best["capacity_bps"]
    assert best["exhaustive"]
    priorities = best["priorities"]
    replanned = [
        slice_spec(
            s.name,
            s.rate_bps,
            priorities[s.name],
            burst_bytes=s.burst_bytes,
            delay_target_s=s.delay_target_s,
        )
        for s in specs
    ]
    assert analyze(replanned, capacity, model).admissible
    below = plan_priorities(specs, capacity * (1 - 2e-6), 7, model)  # 8 queues: 7 for slices
    assert not below.feasible and below.exhaustive


def test_rows_are_the_per_hop_analysis_under_both_models() -> None:
    network = paper_network((7, 6, 6))
    oracle = Oracle(network)
    row_doc = _link(validated(whole_report(network)))
    for model in Model:
        analysis = analyze(oracle.specs(1), 500 * MBPS, model)
        assert row_doc["admissible"][model.value] == analysis.admissible
        for row, bound in zip(row_doc["slices"], analysis.slices, strict=True):
            assert row["name"] == bound.name
            assert row["bound_s"][model.value] == bound.worst_case_delay_s
            assert row["slack_s"][model.value] == bound.slack_s
            assert row["meets_target"][model.value] == bound.meets_target
    assert row_doc["total_rate_bps"] == 300 * MBPS
    assert row_doc["utilisation"] == pytest.approx(0.6)


def test_curves_are_delay_curves_from_above_the_rates_past_the_knee() -> None:
    network = paper_network((7, 6, 5))
    document = validated(whole_report(network, curve_points=41))
    curves = _link(document)["curves"]
    grid = curves["capacity_bps"]
    assert len(grid) == 41
    assert 300 * MBPS < grid[0] < 301 * MBPS
    assert grid == capacity_grid(grid[0], grid[-1], 41)
    knee = _mbps(_link(document)["min_capacity_bps"]["current"]["netcalc"])
    assert _mbps(grid[-1]) == pytest.approx(3 * knee)
    for model in Model:
        expected = delay_curves(Oracle(network).specs(1), grid, model).delays_s
        assert curves["bound_s"][model.value] == expected


def test_margin_is_capacity_minus_min_capacity_without_e2e_targets() -> None:
    document = validated(whole_report(paper_network((7, 7, 6))))
    row = _link(document)
    assert row["capacity_margin_bps"] == pytest.approx(
        500 * MBPS - row["min_capacity_bps"]["current"]["harkous"], rel=1e-9
    )


def test_two_hop_e2e_is_the_sum_of_hops_and_headroom_sees_the_out_of_scope_link() -> None:
    """A slice in scope crossing a link out of scope: its end-to-end bound and its headroom
    count the other link too."""
    network = Network(
        (link(1, 500 * MBPS), link(2, 400 * MBPS, Model.NETCALC, switch="s2")),
        (
            NetworkSlice(1, "DC", 48 * MBPS, 0.020, 0.020, 0.030, 7, None, (1, 2)),
            NetworkSlice(2, "Enterprise", 12 * MBPS, 0.010, 0.010, None, 6, None, (1,)),
            NetworkSlice(3, "Peering", 240 * MBPS, 0.030, 0.030, None, 6, None, (2,)),
        ),
    )
    report = build_report(network, "link", 1, "s1/eth1", [1], generated_at=WHEN, curve_points=5)
    document = validated(report)
    assert [item["name"] for item in document["links"]] == ["s1/eth1"]
    assert [item["name"] for item in document["slices"]] == ["DC", "Enterprise"]
    dc = document["slices"][0]
    oracle = Oracle(network)
    for model in Model:
        expected = oracle.path(network.slices[0], model)
        assert dc["e2e"][model.value]["total_s"] == expected.total_s
        assert dc["e2e"][model.value]["meets_target"] == expected.meets_target
        assert dc["e2e"][model.value]["worst_hop"] == expected.worst_hop.link  # type: ignore[union-attr]
    assert dc["links"] == ["s1/eth1", "s2/eth2"]
    # Peering (out of scope) shares link 2 with DC: DC's rate growth is limited there.
    assert (
        dc["headroom"]["rate_limited_by"].endswith("s2/eth2")
        or dc["headroom"]["rate_limited_by"] == "DC end-to-end"
    )
    assert document["generated_at"] == WHEN.isoformat()
    assert document["scope"] == {"kind": "link", "id": 1, "name": "s1/eth1"}
