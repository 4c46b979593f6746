"""The data-plane comparisons exactly at, one unit below and one unit above their thresholds.

The shared vectors (p4/tests/vectors/thresholds_*.json) put whole packet sequences on these
thresholds through the reference and the compiled pipeline; here the reference arithmetic and
the monitoring code are held to them directly, with policies built unit by unit. Each test
says which comparison of vqueue.p4 / real_queue.p4 / slice_monitor.p4 (or of the percentile
code) it pins.
"""

from __future__ import annotations

import pytest

from sliceportal.domain import p4constants as c
from sliceportal.domain.dataplane import (
    DataplaneSlice,
    DelayBucket,
    Route,
    Scheme,
    SlicePolicy,
    VirtualQueueState,
    counter_cells,
    delay_bucket,
    delay_percentiles,
    egress_check,
    vqueue_step,
)
from sliceportal.domain.units import DataplaneValueError

UNITS = c.VQ_UNITS_PER_TICK
BYTE_TIME = 5_242_880  # 100 Mbit/s
ECT0, ECT1, NOT_ECT, CE = 2, 1, 0, 3


TARGET = 16_000 * UNITS  # a 16 ms delay target: edges 1, 2, 4, 8, 12, 14 and 16 ms


def policy(c_delay: int, m_delay: int | None = None) -> SlicePolicy:
    return SlicePolicy(
        priority=7, byte_time=BYTE_TIME, c_delay=c_delay, m_delay=m_delay, hist_target=TARGET
    )


@pytest.mark.parametrize(("offset", "passes"), [(-1, False), (0, True), (1, True)])
def test_admission_at_the_burst_limit(offset: int, passes: bool) -> None:
    """`tx_time > C_DELAY - delay`: delay + tx == C_DELAY is admitted, one unit more is not."""
    queued = VirtualQueueState(delay=3 * UNITS + 12_345, last_seen=1000)
    tx = 1000 * BYTE_TIME
    p = policy(queued.delay - UNITS + tx + offset)  # one tick drains UNITS before the packet
    state, passed = vqueue_step(queued, now=1001, packet_bytes=1000, policy=p)
    assert passed is passes
    drained = queued.delay - UNITS
    assert state == VirtualQueueState(drained + tx if passes else drained, 1001)


def test_the_guard_against_a_lowered_limit_is_strict() -> None:
    """`delay > C_DELAY`: only a burst limit lowered below the stored delay trips it. At
    delay == C_DELAY the packet is judged by `tx_time > C_DELAY - delay`, so only a packet of no
    length passes there; one unit above the limit, nothing does (vqueue.p4 compares before it
    subtracts, so the unsigned difference never wraps)."""
    at_limit = VirtualQueueState(delay=7 * UNITS, last_seen=500)
    state, passed = vqueue_step(at_limit, now=500, packet_bytes=0, policy=policy(7 * UNITS))
    assert passed and state.delay == 7 * UNITS
    state, passed = vqueue_step(at_limit, now=500, packet_bytes=1, policy=policy(7 * UNITS))
    assert not passed and state.delay == 7 * UNITS
    state, passed = vqueue_step(at_limit, now=500, packet_bytes=0, policy=policy(7 * UNITS - 1))
    assert not passed and state.delay == 7 * UNITS


@pytest.mark.parametrize(("extra", "left"), [(-1, 0), (0, 0), (1, 1)])
def test_drain_clamp_at_exactly_the_delay(extra: int, left: int) -> None:
    """`drained >= delay`: an idle time that drains the whole delay, or one unit more, empties
    the queue (never below zero); one unit less leaves that unit. (`>` instead of `>=` gives the
    same 0 at equality: that mutant cannot be told apart, here or on a switch.)"""
    queued = VirtualQueueState(delay=10 * UNITS + extra, last_seen=2000)
    state, passed = vqueue_step(queued, now=2010, packet_bytes=64, policy=policy(20 * UNITS))
    assert passed
    assert state.delay == left + 64 * BYTE_TIME


FULL = (1 << c.VQ_PARAM_WIDTH) - 1
"""The largest delay the registers can come to hold: a C_DELAY of all 48 bits."""


@pytest.mark.parametrize("ticks", [c.VQ_ELAPSED_CAP_TICKS, c.VQ_ELAPSED_CAP_TICKS + 1, 2**47 - 1])
def test_idle_times_from_the_cap_on_empty_a_full_queue(ticks: int) -> None:
    """`elapsed >= VQ_ELAPSED_CAP_TICKS`: the cap is the first idle time that drains a full
    bit<48> queue, so it stands in for the product it keeps from being formed. (At the cap
    itself the product would drain the queue too: `>` there cannot be told apart.)"""
    full = VirtualQueueState(delay=FULL, last_seen=1)
    state, passed = vqueue_step(full, now=1 + ticks, packet_bytes=64, policy=policy(FULL))
    assert passed and state.delay == 64 * BYTE_TIME


def test_one_tick_under_the_cap_leaves_part_of_a_full_queue() -> None:
    left = FULL - (c.VQ_ELAPSED_CAP_TICKS - 1) * UNITS
    assert 0 < left < UNITS
    full = VirtualQueueState(delay=FULL, last_seen=1)
    state, passed = vqueue_step(
        full, now=c.VQ_ELAPSED_CAP_TICKS, packet_bytes=64, policy=policy(FULL)
    )
    assert passed and state.delay == left + 64 * BYTE_TIME


def test_a_difference_with_the_top_bit_set_is_a_timestamp_going_backwards() -> None:
    """`elapsed[47:47] == 1`: 2^47 - 1 ticks is an idle time, 2^47 is not."""
    queued = VirtualQueueState(delay=5 * UNITS, last_seen=10)
    state, _ = vqueue_step(queued, now=10 + 2**47 - 1, packet_bytes=64, policy=policy(20 * UNITS))
    assert state.delay == 64 * BYTE_TIME
    state, _ = vqueue_step(queued, now=10 + 2**47, packet_bytes=64, policy=policy(20 * UNITS))
    assert state.delay == 5 * UNITS + 64 * BYTE_TIME


@pytest.mark.parametrize(("vq", "td", "dropped"), [
    (500 * UNITS, 0, False),       # vq == C_DELAY
    (500 * UNITS - 1, 0, False),
    (0, 500, False),               # real == C_DELAY (deq_timedelta in ticks)
    (0, 499, False),
    (0, 501, True),
    (500 * UNITS, 501, True),      # max(vq, real)
])  # fmt: skip
def test_egress_drops_only_above_the_burst_limit(vq: int, td: int, dropped: bool) -> None:
    """`max(vq, real) > C_DELAY` in RealQueueCheck."""
    assert egress_check(vq, td, policy(500 * UNITS), ECT0) == (dropped, False)


@pytest.mark.parametrize(("vq", "td", "ecn", "marked"), [
    (200 * UNITS, 0, ECT0, False),      # vq == M_DELAY
    (200 * UNITS + 1, 0, ECT0, True),
    (200 * UNITS - 1, 0, ECT0, False),
    (0, 200, ECT0, False),              # real == M_DELAY
    (0, 201, ECT0, True),
    (0, 201, ECT1, True),
    (0, 201, NOT_ECT, False),           # only ECT packets are marked
    (0, 201, CE, False),                # already CE: not marked by this switch
])  # fmt: skip
def test_ecn_marks_only_above_the_marking_threshold(
    vq: int, td: int, ecn: int, marked: bool
) -> None:
    """`max(vq, real) > M_DELAY` and ECT(0)/ECT(1) in RealQueueCheck's ecn_step branch."""
    assert egress_check(vq, td, policy(500 * UNITS, 200 * UNITS), ecn) == (False, marked)


@pytest.mark.parametrize(("k", "edge_ms"), list(enumerate((1, 2, 4, 8, 12, 14, 16))))
def test_a_delay_on_a_bucket_edge_counts_in_the_bucket_above(k: int, edge_ms: int) -> None:
    """`delay < edge` in slice_monitor.p4's delay_bucket, on the edges of a 16 ms target."""
    edge = edge_ms * 1000 * UNITS
    assert delay_bucket(edge - 1, TARGET) == k
    assert delay_bucket(edge, TARGET) == delay_bucket(edge + 1, TARGET) == k + 1


@pytest.mark.parametrize("target", [0, 1, 15, 16, 17, 2**48 - 1])
def test_edges_round_down_as_the_shifts_do(target: int) -> None:
    """T >> 4 ... T - (T >> 3), T: a target of a few units still orders its edges, and a delay
    equal to the target is always in the top bucket."""
    edges = [target >> 4, target >> 3, target >> 2, target >> 1]
    edges += [target - (target >> 2), target - (target >> 3), target]
    for k, edge in enumerate(edges):
        assert delay_bucket(edge, target) >= k + 1
        if edge > 0 and (k == 0 or edges[k - 1] < edge):
            assert delay_bucket(edge - 1, target) == k
    assert delay_bucket(target, target) == c.HIST_BUCKETS - 1


def test_percentile_buckets_carry_their_edges() -> None:
    p = delay_percentiles([0, 1, 0, 0, 0, 0, 0, 0], TARGET)
    assert p is not None
    assert p.p50 == p.max == DelayBucket(1, 0.001, 0.002)
    p = delay_percentiles([1, 0, 0, 0, 0, 0, 0, 0], TARGET)
    assert p is not None and p.max == DelayBucket(0, 0.0, 0.001)
    p = delay_percentiles([0, 0, 0, 0, 0, 0, 0, 1], TARGET)
    assert p is not None and p.max == DelayBucket(7, 0.016, None)


def test_a_percentile_just_short_of_a_bucket_is_in_the_next() -> None:
    """`running * 100 >= percent * total`: 499 of 1000 is under half, 95 of 100 is 95%."""
    p = delay_percentiles([499, 501, 0, 0, 0, 0, 0, 0], TARGET)
    assert p is not None and p.p50.index == 1
    p = delay_percentiles([95, 4, 1, 0, 0, 0, 0, 0], TARGET)
    assert p is not None and (p.p95.index, p.p99.index) == (0, 1)
    p = delay_percentiles([94, 5, 1, 0, 0, 0, 0, 0], TARGET)
    assert p is not None and (p.p95.index, p.p99.index) == (1, 1)


def test_counter_cells_of_the_first_and_the_last_slice() -> None:
    assert counter_cells(0)[0][1] == 0
    assert counter_cells(c.MAX_SLICES - 1)[0][1] == c.MAX_SLICES - 1
    with pytest.raises(DataplaneValueError, match="dp_sid"):
        counter_cells(-1)


def test_the_highest_port_is_bmv2s_drop_port() -> None:
    drop = (1 << c.PORT_WIDTH) - 1
    assert drop == c.BMV2_DROP_PORT
    with pytest.raises(DataplaneValueError, match="drop port"):
        Route("10.0.0.0/8", drop, "02:00:00:00:00:01")
    assert Route("10.0.0.0/8", drop - 1, "02:00:00:00:00:01").egress_port == drop - 1
    with pytest.raises(DataplaneValueError, match="drop port"):
        DataplaneSlice(1, "s", None, ("10.0.1.0/24",), 1e8, 0.01, 7, Scheme.TAIL_DROP, None, drop)
