"""Delay-versus-capacity curves (the paper's Fig. 15)."""

from __future__ import annotations

import pytest
from paper_slices import MBPS, paper_slices

from sliceportal.domain import Model, SpecError, analyze, capacity_grid, delay_curves
from sliceportal.domain.spec import Framing


def test_curves_match_the_analysis_at_every_capacity() -> None:
    slices = paper_slices(7, 6, 5)
    grid = capacity_grid(250 * MBPS, 1000 * MBPS, 16)
    for model in Model:
        for framing in (Framing(), Framing(9018, 24)):
            curves = delay_curves(slices, grid, model, framing)
            assert curves.capacities_bps == grid
            for i, capacity in enumerate(grid):
                for bound in analyze(slices, capacity, model, framing).slices:
                    assert curves.delays_s[bound.name][i] == bound.worst_case_delay_s


def test_case_a_reaches_5_ms_at_1656_mbps_and_is_unbounded_without_capacity() -> None:
    # The paper's figures are harkous's, which keeps a finite bound while a level's own rates
    # overflow (DC at 40 Mbit/s).
    curves = delay_curves(paper_slices(7, 7, 7), [1656 * MBPS], Model.HARKOUS)
    assert curves.delays_s["DC"] == [pytest.approx(0.005)]
    low = delay_curves(paper_slices(7, 6, 5), [40 * MBPS, 55 * MBPS], Model.HARKOUS)
    assert low.delays_s["DC"][0] is not None
    assert low.delays_s["Enterprise"] == [None, pytest.approx(0.96e6 / 55e6 + 0.12e6 / 7e6)]
    assert low.delays_s["Peering"] == [None, None]


def test_netcalc_curves_are_the_default_and_charge_ticks_and_best_effort() -> None:
    # One level: every burst, a microsecond of every rate and best effort's 1518-byte frame.
    at = 8 * (1_035_037.5 + 1518) / 0.005
    curves = delay_curves(paper_slices(7, 7, 7), [at])
    assert curves.delays_s["DC"] == [pytest.approx(0.005)]
    low = delay_curves(paper_slices(7, 6, 5), [40 * MBPS, 55 * MBPS])
    assert low.delays_s["DC"] == [None, pytest.approx(8 * (120_006 + 1518) / 55e6)]
    assert low.delays_s["Enterprise"] == [None, None]  # rates at and above it: 60 Mbit/s
    framed = delay_curves(paper_slices(7, 7, 7), [at], framing=Framing(1518, 24))
    assert framed.delays_s["DC"] == [pytest.approx(8 * (1.4 * 1_035_037.5 + 1542) / at)]


def test_curve_document() -> None:
    doc = delay_curves(paper_slices(7, 6, 5), [300 * MBPS]).to_dict()
    assert doc["capacities_bps"] == [300 * MBPS]
    assert set(doc["delays_s"]) == {"DC", "Enterprise", "Peering"}


def test_capacity_grid() -> None:
    assert capacity_grid(1.0, 3.0, 3) == [1.0, 2.0, 3.0]
    assert capacity_grid(5.0, 5.0, 1) == [5.0]
    with pytest.raises(SpecError, match="stop_bps"):
        capacity_grid(2.0, 1.0, 3)
    with pytest.raises(SpecError, match="points"):
        capacity_grid(1.0, 2.0, 0)
    with pytest.raises(SpecError, match=r"capacities\[1\]: must be greater than 0"):
        delay_curves(paper_slices(7, 6, 5), [1.0, -1.0])
