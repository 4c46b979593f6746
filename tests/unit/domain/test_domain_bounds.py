"""Worst-case delay bounds: the paper's equations, the netcalc bound, and their properties."""

from __future__ import annotations

import numpy as np
import pytest
from domain_strategies import as_infinite, capacities, slice_lists
from hypothesis import given, settings
from hypothesis import strategies as st
from paper_slices import MBPS, paper_slices

from sliceportal.domain import (
    Model,
    SliceSpec,
    SpecError,
    Violation,
    analyze,
    analyze_arrays,
    slice_arrays,
)
from sliceportal.domain.bounds import (
    TIMESTAMP_TICK_S,
    aggregate_arrays,
    evaluate_levels,
    level_services,
    sound_aggregates,
)
from sliceportal.domain.spec import DEFAULT_MODEL, STANDARD_FRAMING, Framing


def _delays(model: Model, capacity: float, slices: list[SliceSpec]) -> dict[str, float | None]:
    return {s.name: s.worst_case_delay_s for s in analyze(slices, capacity, model).slices}


def test_harkous_sums_the_busy_periods_of_equal_and_higher_levels() -> None:
    delays = _delays(Model.HARKOUS, 300 * MBPS, paper_slices(7, 6, 5))
    assert delays["DC"] == pytest.approx(0.96e6 / 300e6)
    assert delays["Enterprise"] == pytest.approx(0.96e6 / 300e6 + 0.12e6 / 252e6)
    assert delays["Peering"] == pytest.approx(0.96e6 / 300e6 + 0.12e6 / 252e6 + 7.2e6 / 240e6)


def test_harkous_shares_one_busy_period_within_a_level() -> None:
    delays = _delays(Model.HARKOUS, 1656 * MBPS, paper_slices(7, 7, 7))
    assert list(delays.values()) == pytest.approx([0.005] * 3)


def test_netcalc_charges_all_bursts_at_the_level_residual_plus_one_lower_packet() -> None:
    # Bursts plus one timestamp tick of each rate (L·1 µs/8 bytes), one 1518-byte frame of
    # blocking: a lower slice's, or best effort's below the lowest slice.
    delays = _delays(Model.NETCALC, 300 * MBPS, paper_slices(7, 6, 5))
    assert delays["DC"] == pytest.approx(8 * (120_000 + 6 + 1518) / 300e6)
    assert delays["Enterprise"] == pytest.approx(8 * (135_000 + 7.5 + 1518) / 252e6)
    assert delays["Peering"] == pytest.approx(8 * (1_035_000 + 37.5 + 1518) / 240e6)


def test_netcalc_is_the_default_model() -> None:
    assert DEFAULT_MODEL is Model.NETCALC
    slices = paper_slices(7, 6, 5)
    assert analyze(slices, 300 * MBPS).model is Model.NETCALC
    assert _delays(Model.NETCALC, 300 * MBPS, slices) == {
        s.name: s.worst_case_delay_s for s in analyze(slices, 300 * MBPS).slices
    }


def test_best_effort_blocks_even_the_only_slice_with_its_largest_frame() -> None:
    spec = SliceSpec("voice", 100e6, 7, 1536.0, 1.0)
    (bound,) = analyze([spec], 1e9, Model.NETCALC).slices
    assert bound.worst_case_delay_s == pytest.approx(8 * (1536 + 100e6 * 1e-6 / 8 + 1518) / 1e9)
    # At the lowest slice level too, and whatever the slice's own frame size.
    for priority, packet in ((1, 1518), (1, 64), (4, 9018)):
        alone = SliceSpec("voice", 100e6, priority, 1536.0, 1.0, packet)
        (low,) = analyze([alone], 1e9, Model.NETCALC).slices
        assert low.worst_case_delay_s == bound.worst_case_delay_s
    # A jumbo-frame link's best effort blocks with its own largest frame.
    (jumbo,) = analyze([spec], 1e9, Model.NETCALC, Framing(9018, 0)).slices
    assert jumbo.worst_case_delay_s == pytest.approx(8 * (1536 + 12.5 + 9018) / 1e9)


def test_a_lower_slices_larger_frame_blocks_instead_of_best_efforts() -> None:
    slices = [
        SliceSpec("hi", 100e6, 7, 1536.0, 1.0, 1518),
        SliceSpec("lo", 200e6, 3, 3000.0, 1.0, 9000),
    ]
    delays = _delays(Model.NETCALC, 1e9, slices)
    assert delays["hi"] == pytest.approx(8 * (1536 + 12.5 + 9000) / 1e9)
    assert delays["lo"] == pytest.approx(8 * (1536 + 12.5 + 3000 + 25 + 1518) / (1e9 - 100e6))


def test_the_timestamp_tick_lets_one_microsecond_of_rate_through_beyond_the_burst() -> None:
    assert TIMESTAMP_TICK_S == 1e-6
    (bound,) = analyze([SliceSpec("a", 8e9, 7, 0.0, 1.0, 1518)], 1e10, Model.NETCALC).slices
    assert bound.worst_case_delay_s == pytest.approx(8 * (8e9 * 1e-6 / 8 + 1518) / 1e10)


def test_a_line_rate_capacity_charges_the_frame_overhead_on_rates_bursts_and_blocking() -> None:
    framing = Framing(1518, 24)
    assert framing.rate_factor == pytest.approx(1.4)
    slices = [
        SliceSpec("hi", 100e6, 7, 1536.0, 1.0, 1518),
        SliceSpec("lo", 200e6, 3, 3000.0, 1.0, 9000),
    ]
    analysis = analyze(slices, 1e9, Model.NETCALC, framing)
    delays = {s.name: s.worst_case_delay_s for s in analysis.slices}
    assert delays["hi"] == pytest.approx(8 * (1.4 * (1536 + 12.5) + 9000 + 24) / 1e9)
    assert delays["lo"] == pytest.approx(
        8 * (1.4 * (1536 + 12.5 + 3000 + 25) + 1518 + 24) / (1e9 - 1.4 * 100e6)
    )
    (alone,) = analyze([slices[0]], 1e9, Model.NETCALC, framing).slices
    assert alone.worst_case_delay_s == pytest.approx(8 * (1.4 * (1536 + 12.5) + 1518 + 24) / 1e9)


def test_a_line_rate_capacity_must_carry_the_rates_with_their_overhead() -> None:
    spec = SliceSpec("a", 800e6, 7, 0.0, 1.0)
    assert analyze([spec], 1e9, Model.NETCALC).admissible
    # 800 Mbit/s of 60-byte frames is 1.12 Gbit/s on the wire with 24 bytes each.
    overloaded = analyze([spec], 1e9, Model.NETCALC, Framing(1518, 24))
    assert not overloaded.admissible
    assert overloaded.slices[0].worst_case_delay_s is None
    assert analyze([spec], 1.13e9, Model.NETCALC, Framing(1518, 24)).admissible


def test_harkous_ignores_the_framing() -> None:
    slices = paper_slices(7, 6, 5)
    plain = analyze(slices, 300 * MBPS, Model.HARKOUS)
    framed = analyze(slices, 300 * MBPS, Model.HARKOUS, Framing(9018, 24))
    assert plain.to_dict() == framed.to_dict()


def test_sound_aggregates_scale_add_the_tick_and_put_best_effort_at_level_zero() -> None:
    agg = aggregate_arrays(
        slice_arrays([SliceSpec("a", 100e6, 7, 1536.0, 1.0), SliceSpec("b", 8e6, 2, 0.0, 1.0)])
    )
    plain = sound_aggregates(agg, STANDARD_FRAMING)
    assert plain.rate_bps == agg.rate_bps
    assert plain.burst_bytes[7] == pytest.approx(1536 + 12.5)
    assert plain.burst_bytes[2] == pytest.approx(1.0)
    assert plain.max_packet_bytes == (1518, 0, 1518, 0, 0, 0, 0, 1518)
    assert plain.count == agg.count  # best effort's frame only ever blocks
    framed = sound_aggregates(agg, Framing(9018, 24))
    assert framed.rate_bps[7] == pytest.approx(140e6)
    assert framed.burst_bytes[7] == pytest.approx(1.4 * 1548.5)
    assert framed.max_packet_bytes == (9042, 0, 1542, 0, 0, 0, 0, 1542)


def test_analysis_reports_every_field_in_input_order() -> None:
    analysis = analyze(paper_slices(7, 6, 5), 300 * MBPS)
    assert [s.name for s in analysis.slices] == ["DC", "Enterprise", "Peering"]
    peering = analysis.slices[2]
    assert peering.residual_capacity_bps == 240e6
    assert peering.burst_bytes == pytest.approx(900_000)
    assert not peering.meets_target
    assert peering.worst_case_delay_s is not None
    assert peering.slack_s == pytest.approx(0.03 - peering.worst_case_delay_s)
    assert analysis.total_rate_bps == 300e6
    doc = analysis.to_dict()
    assert list(doc) == ["model", "capacity_bps", "admissible", "total_rate_bps", "slices"]
    assert list(doc["slices"][0]) == [
        "name",
        "priority",
        "burst_bytes",
        "residual_capacity_bps",
        "worst_case_delay_s",
        "delay_target_s",
        "meets_target",
        "slack_s",
    ]


def test_a_violation_says_by_how_much_the_delay_exceeds_the_target() -> None:
    analysis = analyze(paper_slices(7, 6, 5), 300 * MBPS)
    assert not analysis.admissible
    (violation,) = analysis.violations
    assert violation.name == "Peering"
    assert violation.reason == "worst-case delay 34.55 ms exceeds target 30 ms"
    assert violation.excess_s == pytest.approx(8 * (1_035_037.5 + 1518) / 240e6 - 0.03)
    harkous = analyze(paper_slices(7, 6, 5), 300 * MBPS, Model.HARKOUS)
    (violation,) = harkous.violations
    assert violation.reason == "worst-case delay 33.68 ms exceeds target 30 ms"
    assert violation.excess_s == pytest.approx(0.0036761904761904)


def test_rates_beyond_capacity_are_a_violation_with_the_excess_rate() -> None:
    analysis = analyze(paper_slices(7, 6, 5), 288 * MBPS)
    assert not analysis.admissible
    assert {v.name: v.reason for v in analysis.violations} == {
        "Peering": "rate limits exceed capacity by 12 Mbit/s"
    }


def test_a_level_without_residual_capacity_is_unbounded_for_itself_and_below() -> None:
    slices = [
        SliceSpec("hog", 2e6, 7, 100.0, 1.0),
        SliceSpec("middle", 1e6, 4, 100.0, 1.0),
        SliceSpec("low", 1e6, 1, 100.0, 1.0),
    ]
    for model in Model:
        analysis = analyze(slices, 1.5e6, model)
        bounds = {s.name: s for s in analysis.slices}
        assert bounds["middle"].worst_case_delay_s is None
        assert bounds["low"].worst_case_delay_s is None
        assert bounds["low"].slack_s is None
        assert [v.reason for v in analysis.violations] == [
            "rate limits at priority 7 and above exceed capacity by 500 kbit/s",
            "rate limits at priority 4 and above exceed capacity by 1.5 Mbit/s",
            "rate limits exceed capacity by 2.5 Mbit/s",
        ]
        assert analysis.violations[1] == Violation(
            "middle", None, 1.0, None, analysis.violations[1].reason
        )


def test_harkous_keeps_the_papers_finite_bound_when_only_the_levels_own_rates_overflow() -> None:
    bound = analyze([SliceSpec("a", 2e6, 3, 1000.0, 1.0)], 1e6, Model.HARKOUS).slices[0]
    assert bound.worst_case_delay_s == pytest.approx(8000 / 1e6)
    assert not bound.meets_target
    netcalc = analyze([SliceSpec("a", 2e6, 3, 1000.0, 1.0)], 1e6, Model.NETCALC).slices[0]
    assert netcalc.worst_case_delay_s is None
    assert not netcalc.meets_target


def test_an_empty_link_is_admissible() -> None:
    analysis = analyze([], 1e9)
    assert analysis.admissible and analysis.slices == () and analysis.total_rate_bps == 0


def test_analyze_refuses_duplicate_names_and_bad_capacities() -> None:
    spec = SliceSpec("a", 1e6, 1, 1.0, 1.0)
    with pytest.raises(SpecError, match=r"slices\[1\]\.name: duplicate name"):
        analyze([spec, spec], 1e9)
    with pytest.raises(SpecError, match="capacity_bps: must be greater than 0"):
        analyze([spec], 0)


def test_the_array_core_agrees_with_the_object_api() -> None:
    slices = paper_slices(7, 6, 5)
    for model in Model:
        core = analyze_arrays(slice_arrays(slices), 300 * MBPS, model)
        objects = analyze(slices, 300e6, model).slices
        assert core.bound_s.tolist() == [s.worst_case_delay_s for s in objects]
        assert core.meets.tolist() == [True, True, False]
    framing = Framing(1518, 24)
    core = analyze_arrays(slice_arrays(slices), 500 * MBPS, Model.NETCALC, framing)
    objects = analyze(slices, 500e6, Model.NETCALC, framing).slices
    assert core.bound_s.tolist() == [s.worst_case_delay_s for s in objects]


@settings(max_examples=200, deadline=None)
@given(slices=slice_lists(), low=capacities, high=capacities)
def test_bounds_never_increase_when_capacity_grows(
    slices: list[SliceSpec], low: float, high: float
) -> None:
    low, high = sorted((low, high))
    for model in Model:
        before = analyze(slices, low, model)
        after = analyze(slices, high, model)
        for b, a in zip(before.slices, after.slices, strict=True):
            assert as_infinite(a.worst_case_delay_s) <= as_infinite(b.worst_case_delay_s)
        assert after.admissible or not before.admissible


@settings(max_examples=200, deadline=None)
@given(slices=slice_lists(), capacity=capacities)
def test_netcalc_is_never_below_harkous(slices: list[SliceSpec], capacity: float) -> None:
    harkous = analyze(slices, capacity, Model.HARKOUS).slices
    netcalc = analyze(slices, capacity, Model.NETCALC).slices
    for h, n in zip(harkous, netcalc, strict=True):
        assert as_infinite(n.worst_case_delay_s) >= as_infinite(h.worst_case_delay_s) * (1 - 1e-12)
    if analyze(slices, capacity, Model.NETCALC).admissible:
        assert analyze(slices, capacity, Model.HARKOUS).admissible


@settings(max_examples=100, deadline=None)
@given(slices=slice_lists(), capacity=capacities)
def test_admissible_exactly_when_no_slice_violates(
    slices: list[SliceSpec], capacity: float
) -> None:
    for model in Model:
        analysis = analyze(slices, capacity, model)
        assert analysis.admissible == (not analysis.violations)
        assert analysis.admissible == all(s.meets_target for s in analysis.slices)
        assert {v.name for v in analysis.violations} == {
            s.name for s in analysis.slices if not s.meets_target
        }
        if analysis.admissible:
            assert analysis.total_rate_bps <= capacity


@settings(max_examples=100, deadline=None)
@given(slices=slice_lists())
def test_slice_arrays_are_the_spec_columns_from_any_iterable(slices: list[SliceSpec]) -> None:
    for arrays in (slice_arrays(slices), slice_arrays(iter(slices)), slice_arrays(tuple(slices))):
        assert arrays.priority.dtype == np.intp
        assert arrays.rate_bps.tolist() == [s.rate_bps for s in slices]
        assert arrays.priority.tolist() == [s.priority for s in slices]
        assert arrays.burst_bytes.tolist() == [s.burst_bytes for s in slices]
        assert arrays.delay_target_s.tolist() == [s.delay_target_s for s in slices]
        assert arrays.max_packet_bytes.tolist() == [float(s.max_packet_bytes) for s in slices]


@settings(max_examples=200, deadline=None)
@given(
    slices=slice_lists(min_size=1),
    capacity=capacities,
    framing=st.sampled_from([STANDARD_FRAMING, Framing(1518, 24), Framing(9018)]),
)
def test_the_level_service_curve_gives_the_netcalc_bound(
    slices: list[SliceSpec], capacity: float, framing: Framing
) -> None:
    """The rate-latency curve each level gets (`level_services`, what end-to-end paths
    concatenate) is the one netcalc's bound comes from: d_p = T_p + 8·b'_p/R_p wherever the
    level's rates fit."""
    agg = aggregate_arrays(slice_arrays(slices))
    levels = evaluate_levels(agg, capacity, Model.NETCALC, framing)
    services = level_services(agg, capacity, framing)
    scale = framing.rate_factor
    for p in {spec.priority for spec in slices}:
        assert services[p].rate_bps == levels.residual_bps[p]
        if levels.overflow[p]:
            continue
        burst = scale * (agg.burst_bytes[p] + agg.rate_bps[p] * TIMESTAMP_TICK_S / 8)
        expected = services[p].latency_s + 8 * burst / services[p].rate_bps
        assert expected == pytest.approx(levels.bound_s[p], rel=1e-12)
