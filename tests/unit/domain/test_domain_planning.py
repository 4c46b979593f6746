"""Priority planning: exact against brute force, the harkous counterexample, proofs and budgets."""

from __future__ import annotations

import itertools
import time

import numpy as np
import pytest
from domain_strategies import capacities, slice_lists
from hypothesis import given, settings
from hypothesis import strategies as st
from paper_slices import MBPS, paper_slices
from planning_oracle import brute_force

from sliceportal.domain import Model, SliceSpec, SpecError, analyze, plan_priorities, slice_spec
from sliceportal.domain.spec import STANDARD_FRAMING, Framing


def _with(slices: list[SliceSpec], priorities: dict[str, int]) -> list[SliceSpec]:
    return [
        SliceSpec(
            s.name,
            s.rate_bps,
            priorities[s.name],
            s.burst_bytes,
            s.delay_target_s,
            s.max_packet_bytes,
        )
        for s in slices
    ]


C = 1e11
"""The planning module docstring's counterexample is on C = 1 bit/s, with bursts in bits; its
harkous bounds are scale-free, so here it runs on C = 100 Gbit/s (rates below 1 bit/s are no
rates, `spec.MIN_RATE_BPS`)."""


def _counterexample() -> list[SliceSpec]:
    return [
        SliceSpec("Z", 0.9 * C, 1, 0.01 * C / 8, 0.07),
        SliceSpec("Y", 1e-9 * C, 1, 0.05 * C / 8, 1.0),
        SliceSpec("X", 0.05 * C, 1, 0.055 * C / 8, 0.62),
    ]


def test_harkous_counterexample_needs_the_loosest_target_on_top() -> None:
    slices = _counterexample()
    plan = plan_priorities(slices, C, levels=2, model=Model.HARKOUS)
    assert plan.feasible and plan.exhaustive
    assert plan.priorities == {"Z": 7, "Y": 7, "X": 6}
    # ...and it is the only 2-level plan: every other ordered partition fails.
    feasible = []
    for levels in itertools.product((7, 6), repeat=3):
        priorities = dict(zip("ZYX", levels, strict=True))
        if analyze(_with(slices, priorities), C, Model.HARKOUS).admissible:
            feasible.append(priorities)
    assert feasible == [{"Z": 7, "Y": 7, "X": 6}]


def _random_instance(
    rng: np.random.Generator, n: int, uniform_packets: bool
) -> tuple[list[SliceSpec], float]:
    rates = 1e6 * 10 ** rng.uniform(0, 2, n)
    capacity = float(rates.sum() * rng.uniform(1.01, 2.5))
    targets = 10 ** rng.uniform(-3, -1, n)
    bursts = targets * capacity * rng.uniform(0.02, 0.6, n) / 8
    packets = np.full(n, 1500) if uniform_packets else rng.integers(64, 9000, n)
    slices = [
        SliceSpec(f"s{i}", float(rates[i]), 1, float(bursts[i]), float(targets[i]), int(packets[i]))
        for i in range(n)
    ]
    return slices, capacity


@pytest.mark.parametrize(
    ("model", "framing"),
    [
        (Model.HARKOUS, STANDARD_FRAMING),
        (Model.NETCALC, STANDARD_FRAMING),
        (Model.NETCALC, Framing(1518, 24)),  # a line rate: overhead on rates, bursts, frames
        (Model.NETCALC, Framing(9018, 0)),  # jumbo best effort blocks more than most slices
    ],
    ids=["harkous", "netcalc", "netcalc-line-rate", "netcalc-jumbo"],
)
def test_planner_agrees_with_brute_force_on_small_instances(model: Model, framing: Framing) -> None:
    rng = np.random.default_rng(20240601 + list(Model).index(model) + framing.overhead_bytes)
    outcomes = {True: 0, False: 0}
    for _ in range(250):
        n = int(rng.integers(1, 8))
        levels = int(rng.integers(1, 5))
        slices, capacity = _random_instance(rng, n, uniform_packets=bool(rng.random() < 0.5))
        capacity *= framing.rate_factor if model is Model.NETCALC else 1.0
        oracle = brute_force(
            slices,
            capacity,
            levels,
            model,
            best_effort_frame_bytes=framing.max_frame_bytes,
            overhead_bytes=framing.overhead_bytes,
        )
        if abs(oracle.margin) < 1e-7:
            continue  # too close to call in floating point
        plan = plan_priorities(slices, capacity, levels, model, framing=framing)
        assert (plan.feasible, plan.exhaustive) == (oracle.feasible, True), (
            slices,
            capacity,
            levels,
        )
        outcomes[plan.feasible] += 1
        if plan.feasible:
            assert set(plan.priorities.values()) <= set(range(7, 7 - levels, -1))
            assert analyze(_with(slices, plan.priorities), capacity, model, framing).admissible
    assert min(outcomes.values()) >= 50  # both answers were exercised


@settings(max_examples=150, deadline=None)
@given(
    slices=slice_lists(max_size=9),
    capacity=capacities,
    levels=st.integers(min_value=1, max_value=7),
    model=st.sampled_from(list(Model)),
)
def test_a_returned_plan_is_always_admissible(
    slices: list[SliceSpec], capacity: float, levels: int, model: Model
) -> None:
    plan = plan_priorities(slices, capacity, levels, model)
    if plan.feasible:
        assert plan.exhaustive
        assert set(plan.priorities) == {s.name for s in slices}
        assert len(set(plan.priorities.values())) <= levels
        assert min(plan.priorities.values(), default=7) >= 8 - levels
        assert analyze(_with(slices, plan.priorities), capacity, model).admissible
    else:
        assert plan.priorities == {}


def test_the_paper_slices_fit_330_mbps_with_two_levels() -> None:
    plan = plan_priorities(paper_slices(1, 1, 1), 330 * MBPS, levels=2, model=Model.HARKOUS)
    assert plan.priorities == {"DC": 7, "Enterprise": 7, "Peering": 6}
    assert plan.reason == "found by target-order search: 2 priority levels (7 to 6)"


def test_rates_beyond_capacity_prove_infeasibility() -> None:
    plan = plan_priorities(paper_slices(1, 1, 1), 250 * MBPS)
    assert not plan.feasible and plan.exhaustive
    assert plan.reason == "no plan exists: rate limits exceed capacity by 50 Mbit/s"


def test_tight_targets_with_large_bursts_are_proven_infeasible_by_the_relaxation() -> None:
    slices = [slice_spec("a", 1e6, 1, burst_bytes=10_000, delay_target_s=0.001)]
    plan = plan_priorities(slices, 10e6)
    assert not plan.feasible and plan.exhaustive
    assert plan.reason == (
        "no plan exists: the 1 slice(s) with the tightest targets (up to 1 ms) carry 10 kB of "
        "burst, which alone takes 8 ms at the full link capacity"
    )


def test_one_level_has_one_plan() -> None:
    plan = plan_priorities(_counterexample(), C, levels=1, model=Model.HARKOUS)
    assert not plan.feasible and plan.exhaustive
    assert plan.reason == "no plan exists: the slices do not fit together at one priority level"


def test_netcalc_with_equal_packets_is_decided_exactly_for_many_slices() -> None:
    # 2,000 slices: far too many for the exact search, but target-ordered plans suffice here.
    slices = [slice_spec(f"s{i}", 1e6, 1, burst_limit_s=0.001 * (1 + i % 20)) for i in range(2000)]
    two = plan_priorities(slices, 3e9, levels=2, model=Model.NETCALC)
    assert not two.feasible and two.exhaustive
    assert "target-ordered plans are optimal" in two.reason
    three = plan_priorities(slices, 3e9, levels=3, model=Model.NETCALC)
    assert three.feasible
    assert analyze(_with(slices, three.priorities), 3e9, Model.NETCALC).admissible


def test_identical_slices_are_planned_as_classes() -> None:
    slices = [
        SliceSpec(f"{s.name}{i}", s.rate_bps / 20, 1, s.burst_bytes / 20, s.delay_target_s)
        for i in range(20)
        for s in _counterexample()
    ]
    plan = plan_priorities(slices, C, levels=2, model=Model.HARKOUS)
    assert plan.feasible
    assert analyze(_with(slices, plan.priorities), C, Model.HARKOUS).admissible


def test_a_large_typical_link_is_planned_quickly() -> None:
    classes = [(2e6, 5e-4, 1e-3), (10e6, 2e-3, 5e-3), (50e6, 5e-3, 2e-2), (200e6, 3e-2, 2e-1)]
    slices = [
        slice_spec(f"s{i}", rate, 1, burst_limit_s=limit, delay_target_s=target)
        for i, (rate, limit, target) in enumerate(classes * 250)
    ]
    capacity = sum(s.rate_bps for s in slices) / 0.7
    started = time.perf_counter()
    plan = plan_priorities(slices, capacity, levels=7)
    assert time.perf_counter() - started < 10  # the benchmark measures it properly
    assert plan.feasible
    assert analyze(_with(slices, plan.priorities), capacity).admissible


def _one_level_each(count: int) -> list[SliceSpec]:
    """Slices of which no two fit one level on 1 Gbit/s (netcalc): each target is 1 % above its
    bound with every tighter slice above it, and a further 10 kB burst adds far more."""
    return [
        SliceSpec(f"s{k}", 1e3, 1, 10_000.0, 1.01 * 8 * (10_000 * (k + 1) + 1518) / 1e9)
        for k in range(count)
    ]


def test_the_default_is_seven_levels_since_best_effort_keeps_the_eighth_queue() -> None:
    slices = _one_level_each(7)
    plan = plan_priorities(slices, 1e9)
    assert plan.feasible and plan.exhaustive
    assert plan.priorities == {f"s{k}": 7 - k for k in range(7)}
    assert analyze(_with(slices, plan.priorities), 1e9).admissible
    six = plan_priorities(slices, 1e9, levels=6)
    assert not six.feasible and six.exhaustive
    assert brute_force(slices[:5], 1e9, 4, Model.NETCALC).feasible is False
    assert brute_force(slices[:5], 1e9, 5, Model.NETCALC).feasible is True


def test_planned_priorities_never_use_best_efforts_level() -> None:
    plan = plan_priorities(_one_level_each(7), 1e9, levels=7, model=Model.HARKOUS)
    assert plan.feasible
    assert min(plan.priorities.values()) >= 1


def test_the_planner_charges_best_effort_below_the_bottom_group() -> None:
    # One slice whose target fits its own burst and tick but not best effort's frame too.
    burst, tick = 10_000.0, 1e6 * 1e-6 / 8
    at_floor = 8 * (burst + tick + 1518) / 1e9
    for target, feasible in ((at_floor * 1.001, True), (at_floor * 0.999, False)):
        spec = SliceSpec("a", 1e6, 1, burst, target)
        plan = plan_priorities([spec], 1e9)
        assert (plan.feasible, plan.exhaustive) == (feasible, True)
        assert plan_priorities([spec], 1e9, model=Model.HARKOUS).feasible


def test_the_planner_charges_the_line_rate_overhead() -> None:
    burst, tick = 10_000.0, 1e6 * 1e-6 / 8
    wire = 8 * (1.4 * (burst + tick) + 1518 + 24) / 1e9
    for target, feasible in ((wire * 1.001, True), (wire * 0.999, False)):
        spec = SliceSpec("a", 1e6, 1, burst, target)
        plan = plan_priorities([spec], 1e9, framing=Framing(1518, 24))
        assert (plan.feasible, plan.exhaustive) == (feasible, True)
        assert plan_priorities([spec], 1e9).feasible  # fine when the capacity counts frames


def test_an_exhausted_budget_is_not_a_proof() -> None:
    plan = plan_priorities(_counterexample(), C, levels=2, model=Model.HARKOUS, time_budget_s=0.0)
    assert not plan.feasible and not plan.exhaustive
    assert (
        plan.reason == "no plan found, none proven impossible: the search ran out of its 0 s budget"
    )


def test_plan_document_and_arguments() -> None:
    assert plan_priorities([], 1e9).to_dict() == {
        "feasible": True,
        "priorities": {},
        "exhaustive": True,
        "reason": "no slices to place",
    }
    for levels in (0, 8):
        with pytest.raises(SpecError, match="levels: must be an integer from 1 to 7"):
            plan_priorities(paper_slices(1, 1, 1), 1e9, levels=levels)
