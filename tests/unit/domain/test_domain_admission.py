"""Admission control: the verdict, the violations and the two fixes it offers."""

from __future__ import annotations

import pytest
from paper_slices import MBPS, paper_slices

from sliceportal.domain import Model, SliceSpec, SpecError, admission, analyze, min_capacity


def test_an_admissible_link_needs_no_fix() -> None:
    verdict = admission(paper_slices(7, 6, 5), 400 * MBPS)
    assert verdict.admissible
    assert verdict.violations == ()
    assert verdict.plan is None
    assert verdict.min_capacity_bps == min_capacity(paper_slices(7, 6, 5))


def test_a_violation_comes_with_the_capacity_and_the_priority_fix() -> None:
    # All at one priority on 400 Mbit/s: DC (20 ms) and Enterprise (10 ms) wait behind Peering.
    verdict = admission(paper_slices(3, 3, 3), 400 * MBPS, levels=2)
    assert not verdict.admissible
    assert [v.name for v in verdict.violations] == ["DC", "Enterprise"]
    assert verdict.violations[1].reason == "worst-case delay 20.7 ms exceeds target 10 ms"
    assert verdict.min_capacity_bps == pytest.approx(828 * MBPS)
    assert verdict.plan is not None and verdict.plan.feasible
    replanned = [
        SliceSpec(
            s.name, s.rate_bps, verdict.plan.priorities[s.name], s.burst_bytes, s.delay_target_s
        )
        for s in paper_slices(3, 3, 3)
    ]
    assert analyze(replanned, 400 * MBPS).admissible


def test_no_plan_is_offered_when_the_rates_do_not_fit() -> None:
    verdict = admission(paper_slices(7, 6, 5), 200 * MBPS)
    assert verdict.plan is None
    assert verdict.violations[-1].reason == "rate limits exceed capacity by 100 Mbit/s"


def test_no_plan_is_offered_when_none_exists() -> None:
    verdict = admission(paper_slices(7, 6, 5), 300 * MBPS, Model.NETCALC, levels=1)
    assert not verdict.admissible and verdict.plan is None


def test_verdict_document() -> None:
    doc = admission(paper_slices(3, 3, 3), 400 * MBPS, levels=2).to_dict()
    assert list(doc) == ["admissible", "violations", "min_capacity_bps", "plan", "analysis"]
    assert doc["plan"]["feasible"] is True
    assert doc["violations"][0]["name"] == "DC"
    assert doc["analysis"]["model"] == "harkous"
    assert "analysis" not in admission([], 1e9).to_dict(include_analysis=False)


def test_levels_are_validated() -> None:
    with pytest.raises(SpecError, match="levels: must be an integer from 1 to 8"):
        admission(paper_slices(7, 6, 5), 400 * MBPS, levels=9)
