"""End-to-end bounds (sum of per-hop bounds) and the capacity that fixes a path's worst hop."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from domain_strategies import capacities, slice_lists
from hypothesis import given, settings
from hypothesis import strategies as st
from paper_slices import MBPS, paper_slices

from sliceportal.domain import (
    Model,
    SliceSpec,
    aggregate_arrays,
    analyze,
    analyze_arrays,
    evaluate_levels,
    slice_arrays,
)
from sliceportal.domain.admission.endtoend import Hop, PathBound, hop_bound, path_bound
from sliceportal.domain.admission.pathcapacity import hop_budget, hop_capacity, path_capacity_fix
from sliceportal.domain.spec import MAX_RATE_BPS, STANDARD_FRAMING, Framing

MS = 1e-3
hop_bounds = st.one_of(
    st.none(), st.floats(min_value=0.0, max_value=10.0, allow_nan=False, allow_infinity=False)
)


def _hops(*bounds: float | None) -> list[Hop]:
    return [Hop(i, f"s{i}/eth1", bound) for i, bound in enumerate(bounds, start=1)]


def test_the_bound_is_the_sum_of_the_hops_and_the_worst_hop_the_largest() -> None:
    path = path_bound(_hops(1 * MS, 3 * MS, 2 * MS), target_s=5 * MS)
    assert path.total_s == pytest.approx(6 * MS)
    assert path.worst_hop is not None and path.worst_hop.link_id == 2
    assert not path.meets_target
    assert path.slack_s == pytest.approx(-1 * MS)


def test_one_unbounded_hop_makes_the_path_unbounded_and_the_worst() -> None:
    path = path_bound(_hops(9 * MS, None, 1 * MS), target_s=1.0)
    assert path.total_s is None
    assert path.worst_hop is not None and path.worst_hop.link_id == 2
    assert not path.meets_target
    assert path.slack_s is None
    assert "unbounded" in path.reason()
    assert "'s2/eth1' (unbounded)" in path.reason()


def test_without_a_target_every_path_meets_it() -> None:
    assert path_bound(_hops(None)).meets_target
    assert path_bound(_hops(5.0)).slack_s is None


def test_an_empty_path_costs_nothing() -> None:
    path = path_bound([], target_s=MS)
    assert path.total_s == 0.0
    assert path.worst_hop is None
    assert path.meets_target


@pytest.mark.parametrize("target", [-1.0, -1e-300, math.nan, math.inf])
def test_a_target_must_be_finite_and_not_negative(target: float) -> None:
    with pytest.raises(ValueError, match="finite number of seconds, at least 0"):
        path_bound(_hops(MS), target_s=target)


def test_a_zero_target_is_met_only_without_queueing() -> None:
    """A burst limit of 0 makes the default target 0 (`slice_spec`): allowed, as per hop."""
    assert not path_bound(_hops(MS), target_s=0.0).meets_target
    assert path_bound(_hops(0.0, 0.0), target_s=0.0).meets_target


def test_the_reason_names_bound_target_and_worst_hop() -> None:
    reason = path_bound(_hops(2 * MS, 7 * MS), target_s=5 * MS).reason()
    assert reason == (
        "end-to-end worst-case delay 9 ms exceeds target 5 ms; "
        "the worst hop is link 's2/eth1' (7 ms)"
    )


def test_to_dict() -> None:
    document = path_bound(_hops(2 * MS, 7 * MS), target_s=10 * MS).to_dict()
    assert document == {
        "hops": [
            {"link_id": 1, "link": "s1/eth1", "bound_s": 2 * MS},
            {"link_id": 2, "link": "s2/eth1", "bound_s": 7 * MS},
        ],
        "total_s": pytest.approx(9 * MS),
        "target_s": 10 * MS,
        "worst_hop_link_id": 2,
        "meets_target": True,
        "slack_s": pytest.approx(1 * MS),
    }


@settings(max_examples=300, deadline=None)
@given(bounds=st.lists(hop_bounds, max_size=8), data=st.data())
def test_the_sum_is_exact_and_independent_of_the_hop_order(
    bounds: list[float | None], data: st.DataObject
) -> None:
    path = path_bound(_hops(*bounds))
    shuffled = path_bound(data.draw(st.permutations(path.hops)))
    assert shuffled.total_s == path.total_s
    if None in bounds:
        assert path.total_s is None
        assert path.worst_hop is not None and path.worst_hop.bound_s is None
    else:
        assert path.total_s == math.fsum(b for b in bounds if b is not None)
        assert (path.worst_hop is None) == (not bounds)
        if path.worst_hop is not None:
            assert path.worst_hop.bound_s == max(b for b in bounds if b is not None)


def test_hop_bound_is_the_analysis_bound_of_the_slice_level() -> None:
    slices = paper_slices(7, 6, 5)
    for model in Model:
        analysis = analyze(slices, 300 * MBPS, model)
        levels = analysis.core.levels
        for spec, bound in zip(slices, analysis.slices, strict=True):
            assert hop_bound(levels, spec.priority) == bound.worst_case_delay_s


def test_hop_bound_of_an_overflowing_level_is_unbounded_even_where_harkous_is_finite() -> None:
    slices = [SliceSpec("big", 90e6, 7, 1000.0, 1.0), SliceSpec("low", 20e6, 3, 1000.0, 1.0)]
    levels = analyze_arrays(slice_arrays(slices), 100e6, Model.HARKOUS).levels
    assert levels.overflow[3] and math.isfinite(levels.bound_s[3])
    assert hop_bound(levels, 3) is None
    assert hop_bound(levels, 7) == pytest.approx(8e3 / 100e6)


def test_the_budget_pays_every_hop_s_propagation_too() -> None:
    hops = [Hop(1, "a", 2 * MS, 0.5 * MS), Hop(2, "b", 7 * MS, 1 * MS)]
    path = path_bound(hops, target_s=5 * MS)
    assert hop_budget(path, path.hops[1]) == pytest.approx(1.5 * MS)
    assert hop_budget(path_bound(hops, target_s=3.4 * MS), path.hops[1]) is None


def test_the_budget_is_the_target_minus_the_other_hops() -> None:
    path = path_bound(_hops(2 * MS, 7 * MS, 1 * MS), target_s=5 * MS)
    assert path.worst_hop is not None
    assert hop_budget(path, path.worst_hop) == pytest.approx(2 * MS)
    assert hop_budget(path_bound(_hops(2 * MS, 7 * MS), target_s=2 * MS), path.hops[1]) is None
    unbounded = path_bound(_hops(None, 7 * MS, None), target_s=5 * MS)
    assert hop_budget(unbounded, unbounded.hops[0]) is None
    assert hop_budget(path_bound(_hops(MS)), path.hops[0]) is None


@pytest.mark.parametrize("overhead", [0, 24])
def test_netcalc_capacity_matches_its_closed_form(overhead: int) -> None:
    """netcalc at the top level: d = 8·(s·(Σ bursts + L·τ/8) + one lower frame + o) / C, so
    C = 8·work / d (s = 1 + o/60; the lower frame at least best effort's 1518 bytes)."""
    slices = paper_slices(7, 6, 5)
    agg = aggregate_arrays(slice_arrays(slices))
    budget = 2 * MS
    framing = Framing(1518, overhead)
    capacity = hop_capacity(agg, 7, budget, Model.NETCALC, framing)
    scale = 1 + overhead / 60
    tick = agg.rate_bps[7] * 1e-6 / 8
    blocking = max(*agg.max_packet_bytes[:7], 1518) + overhead
    work = scale * (agg.burst_bytes[7] + tick) + blocking
    assert capacity == pytest.approx(8 * work / budget, rel=1e-9)


def test_a_path_through_two_paper_links_gets_the_capacity_its_worst_hop_needs() -> None:
    """DC at 7 on a 330 Mbit/s link (case D) and on a 400 Mbit/s one, 4 ms end to end."""
    slices = paper_slices(7, 6, 5)
    agg = aggregate_arrays(slice_arrays(slices))
    first = evaluate_levels(agg, 330 * MBPS, Model.HARKOUS)
    second = evaluate_levels(agg, 400 * MBPS, Model.HARKOUS)
    hops = [Hop(1, "a", hop_bound(first, 7)), Hop(2, "b", hop_bound(second, 7))]
    path = path_bound(hops, target_s=4 * MS)
    assert not path.meets_target
    assert path.worst_hop is not None and path.worst_hop.link_id == 1
    capacity = path_capacity_fix(path, agg, 7, Model.HARKOUS)
    assert capacity is not None
    # DC alone at the top: its bound is 8·0.12 MB / C; the budget is 4 ms − 0.96 Mbit/400 Mbit/s
    assert capacity == pytest.approx(0.96e6 / (4 * MS - 0.96e6 / 400e6), rel=1e-9)
    fixed = hop_bound(evaluate_levels(agg, capacity, Model.HARKOUS), 7)
    assert path_bound([Hop(1, "a", fixed), hops[1]], target_s=4 * MS).meets_target


def test_no_capacity_fix_when_the_other_hops_alone_miss_the_target() -> None:
    agg = aggregate_arrays(slice_arrays(paper_slices(7, 6, 5)))
    path = path_bound(_hops(3 * MS, 4 * MS, 3 * MS), target_s=3 * MS)
    assert path_capacity_fix(path, agg, 7, Model.HARKOUS) is None
    with pytest.raises(ValueError, match="no slice at priority 0"):
        hop_capacity(agg, 0, MS, Model.HARKOUS)  # best effort's level never has any


@pytest.mark.parametrize("model", list(Model))
@settings(max_examples=300, deadline=None)
@given(
    slices=slice_lists(min_size=1),
    capacity=capacities,
    others=st.floats(min_value=0.0, max_value=0.5),
    target=st.floats(min_value=1e-4, max_value=1.0),
    which=st.integers(min_value=0),
    framing=st.sampled_from([STANDARD_FRAMING, Framing(1518, 24)]),
)
def test_the_capacity_fix_meets_the_path_keeps_the_link_and_is_least(
    model: Model,
    slices: list[SliceSpec],
    capacity: float,
    others: float,
    target: float,
    which: int,
    framing: Framing,
) -> None:
    """At the fix the path meets its target and the link is admissible; 1 ppm less fails one."""
    slices = [s if s.delay_target_s > 0 else replace(s, delay_target_s=1.0) for s in slices]
    priority = slices[which % len(slices)].priority
    agg = aggregate_arrays(slice_arrays(slices))
    other = Hop(2, "other", others)

    def meets(c: float) -> bool:
        levels = evaluate_levels(agg, c, model, framing)
        fixed = Hop(1, "worst", hop_bound(levels, priority))
        return levels.admissible and path_bound([fixed, other], target).meets_target

    worst = Hop(1, "worst", hop_bound(evaluate_levels(agg, capacity, model, framing), priority))
    if target <= others or (worst.bound_s is not None and worst.bound_s < others):
        return  # no budget, or the hop to fix is not the worst one
    fix = path_capacity_fix(path_bound([worst, other], target), agg, priority, model, framing)
    if fix is None:
        assert not meets(MAX_RATE_BPS)
        return
    assert meets(fix)
    assert not meets(fix * (1 - 1e-6))


def test_paths_are_frozen_values() -> None:
    path = path_bound(_hops(MS), target_s=MS)
    assert isinstance(path, PathBound)
    with pytest.raises(AttributeError):
        path.total_s = 0.0  # type: ignore[misc]


def test_path_bound_adds_propagation_and_takes_the_tighter_result() -> None:
    hops = [Hop(1, "a", 2 * MS, 1 * MS), Hop(2, "b", 3 * MS, 0.5 * MS)]
    summed = path_bound(hops, 7 * MS)
    assert summed.per_hop_sum_s == pytest.approx(6.5 * MS)
    assert summed.total_s == summed.per_hop_sum_s and summed.method == "per-hop sum"
    tighter = path_bound(hops, 6 * MS, concatenation_s=5.5 * MS)
    assert tighter.total_s == 5.5 * MS and tighter.method == "concatenation"
    assert tighter.meets_target and tighter.slack_s == pytest.approx(0.5 * MS)
    looser = path_bound(hops, 6 * MS, concatenation_s=9 * MS)
    assert looser.total_s == pytest.approx(6.5 * MS) and not looser.meets_target
    assert path_bound(hops, concatenation_s=math.inf).concatenation_s is None
    assert path_bound([Hop(1, "a", 0.0)], 0.0).meets_target  # a zero target is allowed


def test_a_sum_beyond_the_largest_float_is_unbounded_not_an_error() -> None:
    """Finite hops whose sum overflows (bursts grown around a cycle get there before they
    become infinite): no OverflowError from fsum, and no inf for JSON to refuse."""
    path = path_bound([Hop(1, "a", 1e308), Hop(2, "b", 1e308)], target_s=1.0)
    assert path.per_hop_sum_s is None and path.total_s is None and not path.meets_target
