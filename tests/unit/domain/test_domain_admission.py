"""Admission control: the verdict, the violations and the two fixes it offers."""

from __future__ import annotations

import pytest
from paper_slices import MBPS, paper_slices

from sliceportal.domain import Model, SliceSpec, SpecError, admission, analyze, min_capacity
from sliceportal.domain.spec import Framing


def test_an_admissible_link_needs_no_fix() -> None:
    verdict = admission(paper_slices(7, 6, 5), 400 * MBPS)
    assert verdict.admissible
    assert verdict.violations == ()
    assert verdict.plan is None
    assert verdict.min_capacity_bps == min_capacity(paper_slices(7, 6, 5))


@pytest.mark.parametrize(
    ("model", "reason", "capacity"),
    [
        # netcalc (the default): all bursts, one tick of every rate and best effort's frame.
        (None, "worst-case delay 20.73 ms exceeds target 10 ms", 8 * (1_035_037.5 + 1518) / 0.01),
        (Model.HARKOUS, "worst-case delay 20.7 ms exceeds target 10 ms", 828 * MBPS),
    ],
)
def test_a_violation_comes_with_the_capacity_and_the_priority_fix(
    model: Model | None, reason: str, capacity: float
) -> None:
    # All at one priority on 400 Mbit/s: DC (20 ms) and Enterprise (10 ms) wait behind Peering.
    chosen = Model.NETCALC if model is None else model
    if model is None:
        verdict = admission(paper_slices(3, 3, 3), 400 * MBPS, levels=2)
    else:
        verdict = admission(paper_slices(3, 3, 3), 400 * MBPS, model, levels=2)
    assert verdict.analysis.model is chosen
    assert not verdict.admissible
    assert [v.name for v in verdict.violations] == ["DC", "Enterprise"]
    assert verdict.violations[1].reason == reason
    assert verdict.min_capacity_bps == pytest.approx(capacity)
    assert verdict.plan is not None and verdict.plan.feasible
    replanned = [
        SliceSpec(
            s.name, s.rate_bps, verdict.plan.priorities[s.name], s.burst_bytes, s.delay_target_s
        )
        for s in paper_slices(3, 3, 3)
    ]
    assert analyze(replanned, 400 * MBPS, chosen).admissible


def test_admission_charges_the_framing_in_the_verdict_the_capacity_and_the_plan() -> None:
    framing = Framing(1518, 24)
    verdict = admission(paper_slices(3, 3, 3), 500 * MBPS, levels=2, framing=framing)
    assert not verdict.admissible
    # One level: Enterprise's 10 ms against every burst and tick scaled by 1.4, plus 1542 bytes.
    needed = 8 * (1.4 * 1_035_037.5 + 1518 + 24) / 0.01
    assert verdict.min_capacity_bps == pytest.approx(needed)
    assert verdict.violations[1].worst_case_delay_s == pytest.approx(
        8 * (1.4 * 1_035_037.5 + 1542) / 500e6
    )
    assert verdict.plan is not None and verdict.plan.feasible
    replanned = [
        SliceSpec(
            s.name, s.rate_bps, verdict.plan.priorities[s.name], s.burst_bytes, s.delay_target_s
        )
        for s in paper_slices(3, 3, 3)
    ]
    assert analyze(replanned, 500 * MBPS, Model.NETCALC, framing).admissible
    assert not analyze(replanned, 500 * MBPS, Model.NETCALC, Framing(1518, 64)).admissible


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
    assert doc["analysis"]["model"] == "netcalc"
    assert "analysis" not in admission([], 1e9).to_dict(include_analysis=False)


@pytest.mark.parametrize("levels", [0, 8, 9])
def test_levels_are_validated(levels: int) -> None:
    # Seven levels at most: best effort keeps the eighth queue.
    with pytest.raises(SpecError, match="levels: must be an integer from 1 to 7"):
        admission(paper_slices(7, 6, 5), 400 * MBPS, levels=levels)


def test_the_default_is_netcalc_with_seven_levels() -> None:
    # No two of these fit one level on 1 Gbit/s: each target is 1 % above its own bound.
    seven = [
        SliceSpec(f"s{k}", 1e3, 1, 10_000.0, 1.01 * 8 * (10_000 * (k + 1) + 1518) / 1e9)
        for k in range(7)
    ]
    verdict = admission(seven, 1e9)
    assert verdict.analysis.model is Model.NETCALC
    assert not verdict.admissible
    assert verdict.plan is not None
    assert verdict.plan.priorities == {f"s{k}": 7 - k for k in range(7)}
    assert admission(seven, 1e9, levels=6).plan is None
