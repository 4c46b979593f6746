"""Minimum capacity: the paper's reference figures and the exactness property."""

from __future__ import annotations

import pytest
from domain_strategies import slice_lists
from hypothesis import given, settings
from hypothesis import strategies as st
from paper_slices import MBPS, paper_slices

from sliceportal.domain import Model, SliceSpec, analyze, min_capacity
from sliceportal.domain.spec import MAX_RATE_BPS, Framing


def _mbps(slices: list[SliceSpec], model: Model = Model.HARKOUS) -> float:
    capacity = min_capacity(slices, model)
    assert capacity is not None
    return capacity / MBPS


def test_case_a_all_at_one_priority_dc_within_5_ms_needs_1656_mbps() -> None:
    assert _mbps(paper_slices(7, 7, 7, dc_target_s=0.005)) == pytest.approx(1656.0, abs=0.1)


def test_case_b_enterprise_within_10_ms_needs_870_7_mbps() -> None:
    assert _mbps(paper_slices(7, 6, 6)) == pytest.approx(870.7, abs=0.1)


def test_case_c_needs_329_4_mbps() -> None:
    assert _mbps(paper_slices(7, 7, 6)) == pytest.approx(329.4, abs=0.1)


def test_case_d_needs_330_0_mbps() -> None:
    assert _mbps(paper_slices(7, 6, 5)) == pytest.approx(330.0, abs=0.1)


def test_netcalc_needs_at_least_as_much_as_harkous() -> None:
    for priorities in [(7, 7, 7), (7, 6, 6), (7, 7, 6), (7, 6, 5)]:
        slices = paper_slices(*priorities)
        assert _mbps(slices, Model.NETCALC) >= _mbps(slices)


def test_rates_alone_can_be_the_binding_constraint() -> None:
    slices = [SliceSpec("a", 5e6, 7, 0.0, 0.0), SliceSpec("b", 3e6, 1, 0.0, 1.0)]
    assert min_capacity(slices, Model.HARKOUS) == 8e6
    # netcalc blocks every slice with a frame, so it needs a target; a loose one still lets
    # the rates bind, and as the wire carries them on a line rate.
    loose = [SliceSpec("a", 5e6, 7, 0.0, 1.0), SliceSpec("b", 3e6, 1, 0.0, 1.0)]
    assert min_capacity(loose) == 8e6
    assert min_capacity(loose, framing=Framing(1518, 24)) == pytest.approx(1.4 * 8e6)


def test_a_zero_target_with_a_burst_ahead_has_no_capacity() -> None:
    slices = [SliceSpec("bursty", 1e6, 7, 1000.0, 1.0), SliceSpec("instant", 1e6, 3, 0.0, 0.0)]
    for model in Model:
        assert min_capacity(slices, model) is None
    # netcalc: even without bursts, a lower-priority packet can block a zero target...
    blocked = [SliceSpec("instant", 1e6, 7, 0.0, 0.0), SliceSpec("low", 1e6, 1, 0.0, 1.0)]
    assert min_capacity(blocked, Model.HARKOUS) == 2e6
    assert min_capacity(blocked, Model.NETCALC) is None
    # ...and so can best effort's frame when the slice is alone on the link.
    alone = [SliceSpec("instant", 1e6, 7, 0.0, 0.0)]
    assert min_capacity(alone, Model.HARKOUS) == 1e6
    assert min_capacity(alone, Model.NETCALC) is None


def test_netcalc_min_capacity_has_the_closed_form_with_best_effort_and_the_tick() -> None:
    spec = SliceSpec("voice", 100e6, 7, 1536.0, 1e-4)
    assert min_capacity([spec]) == pytest.approx(8 * (1536 + 12.5 + 1518) / 1e-4, rel=1e-12)
    # The capacity counted as a line rate: rates and bursts x 1.4, 24 bytes on the frame.
    line_rate = min_capacity([spec], framing=Framing(1518, 24))
    assert line_rate == pytest.approx(8 * (1.4 * (1536 + 12.5) + 1542) / 1e-4, rel=1e-12)
    assert min_capacity([spec], Model.HARKOUS, Framing(1518, 24)) == pytest.approx(
        8 * 1536 / 1e-4, rel=1e-12
    )


def test_case_a_under_netcalc_needs_best_efforts_frame_and_the_ticks_more() -> None:
    needed = 8 * (1_035_000 + 37.5 + 1518) / 0.005
    assert min_capacity(paper_slices(7, 7, 7, dc_target_s=0.005)) == pytest.approx(needed)


def test_an_empty_link_needs_no_capacity() -> None:
    assert min_capacity([]) == 0.0


@settings(max_examples=300, deadline=None)
@given(slices=slice_lists(min_size=1), overhead=st.sampled_from([0, 24]))
def test_min_capacity_is_admissible_and_one_ppm_less_is_not(
    slices: list[SliceSpec], overhead: int
) -> None:
    framing = Framing(1518, overhead)
    for model in Model:
        capacity = min_capacity(slices, model, framing)
        if capacity is None:
            assert not analyze(slices, MAX_RATE_BPS, model, framing).admissible
            continue
        assert capacity <= MAX_RATE_BPS
        assert analyze(slices, capacity, model, framing).admissible
        assert not analyze(slices, capacity * (1 - 1e-6), model, framing).admissible
