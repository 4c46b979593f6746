"""SLA rules on a sample's statistics, and the hold that turns breaches into alerts."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sliceportal.domain import dataplane as dp
from sliceportal.domain.sla import (
    Hold,
    Rule,
    ShareAbove,
    TargetArrays,
    Targets,
    Transition,
    advance,
    breaches,
    check,
    share_above,
    threshold_vq,
)
from sliceportal.domain.telemetry import (
    COLUMNS,
    LEGACY_HIST_TARGET,
    BatchMetrics,
    batch_metrics,
    histogram_edges_vq,
)

TARGET = dp.histogram_target(0.02)
"""The slices' histogram target unless said: 20 ms, edges 1.25, 2.5, 5, 10, 15, 17.5, 20 ms."""
BUCKET = {"2.5ms": 2, "5ms": 3, "10ms": 4, "15ms": 5, "17.5ms": 6, "20ms": 7}
"""The histogram bucket starting at each edge of TARGET."""


def second_counts(
    *,
    forwarded: tuple[int, int] = (1000, 1_250_000),
    dropped: int = 0,
    marked: int = 0,
    rq_bucket: int = 0,
    tail_bucket: int | None = None,
) -> list[int]:
    """One second of one slice: every forwarded packet in ``rq_bucket`` except one in
    ``tail_bucket``; ``dropped`` packets of 1,250 bytes dropped by the virtual queue."""
    values = dict.fromkeys(COLUMNS, 0)
    values |= {"forwarded_packets": forwarded[0], "forwarded_bytes": forwarded[1]}
    values |= {"vq_dropped_packets": dropped, "vq_dropped_bytes": dropped * 1250}
    values |= {"ecn_marked_packets": marked, "vq_hist_0": forwarded[0]}
    values[f"rq_hist_{rq_bucket}"] += forwarded[0]
    if tail_bucket is not None:
        values[f"rq_hist_{rq_bucket}"] -= 1
        values[f"rq_hist_{tail_bucket}"] += 1
    return list(values.values())


def second(*, target: int = TARGET, **fields: Any) -> BatchMetrics:
    return batch_metrics(np.array([second_counts(**fields)]), np.ones(1), np.array([target]))


def verdict(found: BatchMetrics, targets: Targets, rule: Rule) -> tuple[bool, float | None]:
    """Whether ``rule`` is breached, and the value its alert would report."""
    (row,) = breaches(found, TargetArrays.of([targets])).tolist()
    return row[list(Rule).index(rule)], check(found, 0, targets, rule).value


def test_no_rule_fires_without_targets() -> None:
    found = second(dropped=500, rq_bucket=7)
    assert breaches(found, TargetArrays.of([Targets()])).tolist() == [[False] * len(Rule)]


def test_delay_fires_when_the_percentile_bucket_starts_at_the_target() -> None:
    targets = Targets(max_delay_s=0.005)
    assert verdict(second(rq_bucket=BUCKET["2.5ms"]), targets, Rule.DELAY) == (False, 0.005)
    assert verdict(second(rq_bucket=BUCKET["5ms"]), targets, Rule.DELAY) == (True, 0.010)


def test_delay_between_edges_fires_only_when_proven() -> None:
    targets = Targets(max_delay_s=0.007)
    assert not verdict(second(rq_bucket=BUCKET["5ms"]), targets, Rule.DELAY)[0]  # 5-10 ms: maybe
    assert verdict(second(rq_bucket=BUCKET["10ms"]), targets, Rule.DELAY)[0]


def test_a_delay_target_of_30_ms_fires() -> None:
    """The paper's Peering slice (30 ms): its histograms end at its target, so 2 % of the
    packets at or above 30 ms prove the p99 breach. On the former global edges (top edge
    20 ms, the legacy rows) no bucket starts at 30 ms: the rule could never fire."""
    peering = dp.histogram_target(0.030)
    targets = Targets(max_delay_s=0.030)
    breach = {"rq_bucket": 6, "tail_bucket": None, "forwarded": (1000, 1_250_000)}
    found = second(target=peering, **breach)
    assert verdict(found, targets, Rule.DELAY) == (False, 0.03)  # all in [26.25, 30) ms
    values = dict.fromkeys(COLUMNS, 0) | {"forwarded_packets": 1000, "vq_hist_0": 1000}
    values |= {"rq_hist_6": 980, "rq_hist_7": 20}
    found = batch_metrics(np.array([list(values.values())]), np.ones(1), np.array([peering]))
    assert verdict(found, targets, Rule.DELAY) == (True, 0.03)
    assert check(found, 0, targets, Rule.DELAY).message == (
        "p99 real-queue delay is at least 30 ms, the SLA allows 30 ms; 2.00% of packets took "
        "30 ms or more"
    )
    legacy = batch_metrics(
        np.array([list(values.values())]), np.ones(1), np.array([LEGACY_HIST_TARGET])
    )
    assert not verdict(legacy, targets, Rule.DELAY)[0]  # "at least 20 ms" proves nothing


@given(st.lists(st.integers(0, 2 * 65_536 * 10**9 // 10), min_size=1, max_size=200))
def test_the_share_above_the_target_is_exact(delays: list[int]) -> None:
    """Delays (vq units, up to 200 ms) counted as the switch counts them against a 30 ms
    target: the share at or above the target is exactly the top bucket's, and p99 breaches
    exactly when more than 1 % of the packets took the target or more."""
    target = dp.histogram_target(0.030)
    histogram = [0] * 8
    for delay in delays:
        histogram[dp.delay_bucket(delay, target)] += 1
    edges = histogram_edges_vq(np.array([target]))
    proven, possible = share_above(edges, np.array([histogram]), np.array([threshold_vq(0.03)]))
    above = sum(delay >= target for delay in delays)
    share = ShareAbove(float(proven[0]), float(possible[0]))
    assert share.exact and share.proven == above / len(delays)
    values = dict.fromkeys(COLUMNS, 0) | {"forwarded_packets": len(delays)}
    values |= {f"rq_hist_{b}": n for b, n in enumerate(histogram)}
    values |= {f"vq_hist_{b}": n for b, n in enumerate(histogram)}
    found = batch_metrics(np.array([list(values.values())]), np.ones(1), np.array([target]))
    assert verdict(found, Targets(max_delay_s=0.03), Rule.DELAY)[0] == (above * 100 > len(delays))


def test_the_share_between_edges_is_bounded() -> None:
    edges = histogram_edges_vq(np.array([TARGET]))  # 20 ms
    histogram = np.array([[0, 0, 0, 0, 4, 6, 0, 0]])  # 4 in [10, 15) ms, 6 in [15, 17.5) ms
    proven, possible = share_above(edges, histogram, np.array([threshold_vq(0.012)]))
    assert ShareAbove(float(proven[0]), float(possible[0])) == ShareAbove(0.6, 1.0)
    none, _ = share_above(edges, np.zeros((1, 8), dtype=np.int64), np.array([threshold_vq(0.01)]))
    assert none.tolist() == [0.0]


def test_a_target_off_the_vq_grid_still_meets_its_top_edge() -> None:
    """A target that is no whole number of vq units is rounded down for the switch; the rule
    rounds its threshold the same way, so the top bucket proves the breach."""
    odd = 0.0123456789
    target = dp.histogram_target(odd)
    assert dp.histogram_edges_s(target)[-1] < odd
    found = second(target=target, rq_bucket=7)
    assert verdict(found, Targets(max_delay_s=odd), Rule.DELAY)[0]
    assert verdict(found, Targets(delay_bound_s=odd), Rule.DELAY_BOUND)[0]


def test_delay_percentile_is_a_target() -> None:
    # 1 packet in 1000 beyond 20 ms: the p99 is fine, the max is not.
    found = second(rq_bucket=0, tail_bucket=BUCKET["20ms"])
    assert not verdict(found, Targets(max_delay_s=0.005), Rule.DELAY)[0]
    assert verdict(found, Targets(max_delay_s=0.005, delay_percentile=50), Rule.DELAY) == (
        False,
        0.00125,
    )
    assert verdict(found, Targets(delay_bound_s=0.01), Rule.DELAY_BOUND) == (True, 0.02)
    with pytest.raises(ValueError):
        Targets(delay_percentile=90)


def test_rules_are_quiet_without_traffic() -> None:
    idle = second(forwarded=(0, 0))
    targets = Targets(max_delay_s=0.001, delay_bound_s=0.001, min_throughput_bps=1e6)
    assert not any(breaches(idle, TargetArrays.of([targets])).tolist()[0])
    assert (
        check(idle, 0, targets, Rule.DELAY).message == "p99 real-queue delay: no packet forwarded"
    )


def test_throughput_fires_only_when_the_demand_was_there() -> None:
    targets = Targets(min_throughput_bps=20e6)  # 20 Mbit/s; 10 Mbit/s forwarded
    assert not verdict(second(), targets, Rule.THROUGHPUT)[0]  # only 10 Mbit/s offered
    assert verdict(second(dropped=1000), targets, Rule.THROUGHPUT) == (True, 10e6)


def test_loss_and_marks_above_their_maximum() -> None:
    targets = Targets(max_loss_ratio=0.01, max_mark_ratio=0.05)
    assert verdict(second(dropped=10), targets, Rule.LOSS)[0] is False  # 10/1010 < 1%
    assert verdict(second(dropped=20), targets, Rule.LOSS)[0] is True
    assert verdict(second(marked=50), targets, Rule.MARKS) == (False, 0.05)
    assert verdict(second(marked=51), targets, Rule.MARKS)[0] is True


def test_targets_differ_per_slice_of_a_batch() -> None:
    one = second_counts(dropped=20, rq_bucket=BUCKET["10ms"])
    batch = batch_metrics(np.array([one, one]), np.ones(2), np.array([TARGET, TARGET]))
    targets = TargetArrays.of(
        [Targets(max_loss_ratio=0.5, delay_percentile=50), Targets(max_loss_ratio=0.01)]
    )
    loss = list(Rule).index(Rule.LOSS)
    assert [row[loss] for row in breaches(batch, targets).tolist()] == [False, True]


def test_delay_rules_use_each_slices_edges() -> None:
    """Packets in bucket 4 are 10-15 ms on 20 ms edges and 15-22.5 ms on 30 ms edges: a 15 ms
    threshold is proven breached by the second slice only."""
    one = second_counts(rq_bucket=4)
    thirty = dp.histogram_target(0.03)
    batch = batch_metrics(np.array([one, one]), np.ones(2), np.array([TARGET, thirty]))
    delay = list(Rule).index(Rule.DELAY)
    targets = TargetArrays.of([Targets(max_delay_s=0.015)] * 2)
    assert [row[delay] for row in breaches(batch, targets).tolist()] == [False, True]
    assert [check(batch, i, Targets(max_delay_s=0.015), Rule.DELAY).value for i in (0, 1)] == [
        0.015,
        0.0225,
    ]


def test_messages_say_what_and_against_what() -> None:
    targets = Targets(max_delay_s=0.005, delay_bound_s=0.002, max_loss_ratio=0.01)
    found = second(rq_bucket=BUCKET["5ms"], dropped=100)
    assert check(found, 0, targets, Rule.DELAY).message == (
        "p99 real-queue delay is between 5 ms and 10 ms, the SLA allows 5 ms; 100.00% of "
        "packets took 5 ms or more"
    )
    assert check(found, 0, Targets(max_delay_s=0.007), Rule.DELAY).message == (
        "p99 real-queue delay is between 5 ms and 10 ms, the SLA allows 7 ms"
    )
    assert check(found, 0, targets, Rule.DELAY_BOUND).message == (
        "the largest real-queue delay is between 5 ms and 10 ms, the analytical bound is 2 ms; "
        "100.00% of packets took 2 ms or more"  # every packet in a bucket above 2 ms: exact
    )
    partly = second(rq_bucket=BUCKET["2.5ms"], tail_bucket=1)  # one packet in [1.25, 2.5) ms
    assert check(partly, 0, targets, Rule.DELAY_BOUND).message.endswith(
        "the analytical bound is 2 ms; at least 99.90% of packets took 2 ms or more"
    )
    assert check(found, 0, targets, Rule.LOSS).message == "loss 9.09% is above the maximum 1.00%"
    assert check(second(rq_bucket=7), 0, targets, Rule.DELAY).message.startswith(
        "p99 real-queue delay is at least 20 ms"
    )


def run(samples: list[tuple[bool, float]], for_s: float, clear_for_s: float) -> list[str]:
    hold, seen = Hold(), []
    for breached, interval in samples:
        hold, transition = advance(hold, breached, interval, for_s=for_s, clear_for_s=clear_for_s)
        seen.append(transition.value if transition else "-")
    return seen


def test_hold_fires_after_for_s_and_resolves_after_clear_for_s() -> None:
    samples = [(True, 1.0)] * 3 + [(False, 1.0)] * 3 + [(True, 1.0)]
    assert run(samples, 2.0, 3.0) == ["-", "fire", "-", "-", "-", "resolve", "-"]


def test_hold_tolerates_timer_jitter_and_long_effective_intervals() -> None:
    assert run([(True, 0.998)], 1.0, 1.0) == ["fire"]
    assert run([(True, 0.9), (True, 0.9)], 1.5, 1.0) == ["-", "fire"]
    assert run([(True, 4.1)], 3.0, 1.0) == ["fire"]  # one sample of a slice read every 4 s


def test_a_breach_interrupted_starts_over() -> None:
    samples = [(True, 1.0), (False, 1.0), (True, 1.0), (True, 1.0)]
    assert run(samples, 2.0, 1.0) == ["-", "-", "-", "fire"]


@given(st.lists(st.booleans(), max_size=40), st.integers(0, 4), st.integers(0, 4))
def test_transitions_alternate_fire_then_resolve(
    breaches: list[bool], for_n: int, clear_n: int
) -> None:
    seen = [t for t in run([(b, 1.0) for b in breaches], for_n, clear_n) if t != "-"]
    assert seen == ["fire", "resolve"] * (len(seen) // 2) + ["fire"] * (len(seen) % 2)
    assert all(t in (Transition.FIRE, Transition.RESOLVE) for t in seen)
