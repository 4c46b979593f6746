"""The compiled engine: egress ports, strict priority, the senders, chunking, taps, growth."""

from __future__ import annotations

import numpy as np
import pytest

from emulator.model.conftest import StateFactory, counter, ecn_step, tail_drop
from sliceportal.domain import dataplane as dp
from sliceportal.domain import p4constants as c
from sliceportal.emulator import layout as L
from sliceportal.emulator.model import kernel
from sliceportal.emulator.model.engine import Engine, FlowSpec
from sliceportal.emulator.model.ports import PortConfig, tx_time_ns
from sliceportal.emulator.model.program import Headers
from sliceportal.emulator.model.switch_model import Clock, PacketModel
from sliceportal.emulator.model.traffic import Profile, SourceSpec

S = 1_000_000_000
FRAME = 1514


def cbr(engine: Engine, dst: str, rate_bps: float, start: int, end: int) -> np.ndarray:
    """Open-loop arrivals of full frames at ``rate_bps`` in [start, end)."""
    times = np.arange(start, end, FRAME * 8 * S / rate_bps).astype(np.int64)
    arrivals = np.zeros((len(times), L.OL_COLUMNS), np.int64)
    arrivals[:, L.OL_TIME] = times
    arrivals[:, L.OL_CLS] = engine.header_class(Headers.parse(dst))
    arrivals[:, L.OL_LEN] = FRAME
    return arrivals


def merge(*parts: np.ndarray) -> np.ndarray:
    merged = np.concatenate(parts)
    return merged[np.argsort(merged[:, L.OL_TIME], kind="stable")]


def test_a_port_sends_at_its_line_rate_and_drops_what_its_queue_cannot_hold(
    switch_state: StateFactory,
) -> None:
    state = switch_state([])
    engine = Engine(state, {1: PortConfig(10_000_000, 100)}, PortConfig())
    engine.run(S, cbr(engine, "10.0.9.1", 20e6, 1000, S))  # best effort, twice the line rate
    packets, _ = counter(state, dp.FORWARDED)
    sent = packets[c.BEST_EFFORT_DP_SID]
    assert abs(sent - 10e6 / (FRAME * 8)) <= 2  # one second at 10 Mbit/s
    offered = engine.stats[L.ST_INGRESS]
    assert engine.stats[L.ST_QUEUE_FULL] == offered - sent - engine.queued(1)
    assert engine.queued(1) == 100


def test_strict_priority_keeps_the_high_queue_empty(switch_state: StateFactory) -> None:
    """A high-priority slice waits at most for the frame on the wire (non-preemptive), while
    the low one gets what is left of the link and a long real queue."""
    state = switch_state([tail_drop(1, 5e6, 0.01, 7), tail_drop(2, 100e6, 0.5, 0)])
    engine = Engine(state, {1: PortConfig(10_000_000, 100_000)}, PortConfig())
    for dp_sid in (1, 2):
        engine.tap(dp_sid)
    arrivals = merge(
        cbr(engine, "10.0.1.9", 4.9e6, 1000, 2 * S), cbr(engine, "10.0.2.9", 20e6, 1500, 2 * S)
    )
    engine.run(2 * S, arrivals)
    high, low = engine.tap_reading(1), engine.tap_reading(2)
    assert high.real_max_us <= tx_time_ns(FRAME, 10_000_000) // 1000 + 1
    assert low.real_max_us > 100_000
    packets, _ = counter(state, dp.FORWARDED)
    offered = len(cbr(engine, "10.0.1.9", 4.9e6, 1000, 2 * S))
    assert offered - 1 <= packets[1] <= offered  # the last one may still wait for the link
    assert abs(packets[1] + packets[2] - 2 * 10e6 / (FRAME * 8)) <= 3


def test_the_tap_agrees_with_the_switch_histograms(switch_state: StateFactory) -> None:
    """The tap's 10 us bins fall exactly into the program's buckets (the edges from the 20 ms
    target, 1.25 ms to 20 ms, are multiples)."""
    state = switch_state([ecn_step(1, 48e6, 0.02, 0.005)])
    profile = Profile(
        (SourceSpec("dc", "tcp", "10.0.1.1", ecn=2, cc=L.Congestion.DCTCP, flows=4, rtt_s=0.005),),
        ports={1: PortConfig(60_000_000, 1000)},
    )
    model = PacketModel(profile, clock=Clock.MANUAL)
    model.tap(1)
    model.attach(state)
    model.advance(2.0)
    tap = model.tap_reading(1)
    vq_hist, _ = counter(state, dp.VQ_DELAY_HIST)
    real_hist, _ = counter(state, dp.REAL_DELAY_HIST)
    target = dp.histogram_target(0.02)  # the burst limit: no delay target given
    edges = [round(e * 1e6) // tap.bin_us for e in dp.histogram_edges_s(target)]
    for fine, switch in ((tap.vq_hist, vq_hist), (tap.real_hist, real_hist)):
        coarse = [int(part.sum()) for part in np.split(fine, edges)]
        assert coarse == switch[8:16]
    assert sum(vq_hist[8:16]) == counter(state, dp.FORWARDED)[0][1] == tap.packets


def test_chunk_length_does_not_change_what_happens(switch_state: StateFactory) -> None:
    """Profile times and events are exact, whatever slices of time the model runs in."""
    sources = (
        SourceSpec("dc", "tcp", "10.0.1.1", ecn=2, cc=L.Congestion.DCTCP, flows=3, rtt_s=0.005),
        SourceSpec("ent", "tcp", "10.0.2.1", cc=L.Congestion.CUBIC, flows=2, rtt_s=0.01),
        SourceSpec("peer", "tcp", "10.0.3.1", cc=L.Congestion.RENO, flows=2, rtt_s=0.03),
        SourceSpec("noise", "poisson", "10.0.3.1", rate_bps=20e6, start_s=0.2, stop_s=0.7),
        SourceSpec("bursts", "onoff", "10.0.2.1", rate_bps=50e6, on_s=0.01, off_s=0.05),
    )
    slices = [ecn_step(1, 48e6, 0.02, 0.005), tail_drop(2, 12e6, 0.01), tail_drop(3, 60e6, 0.03, 6)]
    outcomes = []
    for chunk_s in (0.001, 0.037, 0.25):
        state = switch_state(slices)
        profile = Profile(sources, seed=7, ports={1: PortConfig(100_000_000, 10_000)})
        model = PacketModel(profile, clock=Clock.MANUAL, chunk_s=chunk_s)
        model.attach(state)
        model.advance(1.0)
        cells = [counter(state, name) for name in (dp.FORWARDED, dp.VQ_DROPPED, dp.ECN_MARKED)]
        flows = [model.flow_stats(name) for name in ("dc", "ent", "peer")]
        registers = [r.values.tolist() for r in state.registers.values()]
        outcomes.append((cells, flows, registers))
    assert outcomes[0] == outcomes[1] == outcomes[2]


def test_every_packet_of_a_flow_is_accounted_for_while_the_arrays_grow(
    switch_state: StateFactory,
) -> None:
    """60 best-effort flows with large windows into a deep, slow queue: the pool and the heap
    outgrow their first size; every packet sent is delivered, lost or still in flight."""
    state = switch_state([])
    engine = Engine(state, {1: PortConfig(20_000_000, 200_000)}, PortConfig())
    spec = FlowSpec(Headers.parse("10.0.9.1"), FRAME, 0, 200 * 10**6, 10**9, L.Congestion.RENO)
    flows = [engine.add_flow(spec) for _ in range(60)]
    for f in flows:
        engine.start_flow(f, 1000)
    engine.run(3 * S)
    assert engine.queued(1) > 4096  # beyond the pool's first 4,096 slots
    for f in flows:
        stats = engine.flow_stats(f)
        assert stats.sent == stats.delivered + stats.lost + stats.inflight
    forwarded, _ = counter(state, dp.FORWARDED)
    delivered = sum(engine.flow_stats(f).delivered for f in flows)
    assert delivered <= forwarded[0]  # the rest of the forwarded ACKs are still on their way


def feedback(
    cc: L.Congestion,
    cwnd: float,
    kind: int,
    seq: int = 100,
    recover: int = -1,
    **floats: float,
) -> tuple[np.ndarray, np.ndarray]:
    """One ACK, mark or loss for a flow in congestion avoidance (10 ms RTT, at t = 5 s)."""
    fi = np.zeros((1, L.FI_COLUMNS), np.int64)
    ff = np.zeros((1, L.FF_COLUMNS), np.float64)
    fi[0, L.FI_CC] = cc
    fi[0, L.FI_RTT_NS] = 10_000_000
    fi[0, L.FI_INFLIGHT] = 10
    fi[0, L.FI_NEXT_SEQ] = 200
    fi[0, L.FI_RECOVER] = recover
    fi[0, L.FI_WIN_END] = 10_000
    fi[0, L.FI_MAX_CWND] = 10_000
    ff[0, L.FF_CWND] = cwnd
    ff[0, L.FF_SSTHRESH] = 1.0  # congestion avoidance
    ff[0, L.FF_ALPHA] = 0.5
    ff[0, L.FF_EPOCH] = -1.0
    for column, value in floats.items():
        ff[0, getattr(L, f"FF_{column.upper()}")] = value
    kernel._on_feedback(fi, ff, 0, seq, kind, 5 * S)
    return fi[0], ff[0]


@pytest.mark.parametrize(
    ("cc", "kind", "after"),
    [
        (L.Congestion.RENO, L.EV_LOSS, 10.0),  # halved
        (L.Congestion.CUBIC, L.EV_LOSS, 14.0),  # x 0.7
        (L.Congestion.DCTCP, L.EV_LOSS, 10.0),  # a loss is a loss
        (L.Congestion.DCTCP, L.EV_ACK_CE, 15.0),  # x (1 - alpha / 2), alpha 0.5
        (L.Congestion.RENO, L.EV_ACK_CE, 10.0),  # classic ECN: a mark counts as a loss
        (L.Congestion.RENO, L.EV_ACK, 20.05),  # + 1 / cwnd
        (L.Congestion.DCTCP, L.EV_ACK, 20.05),
    ],
)
def test_senders_react_as_their_congestion_control(
    cc: L.Congestion, kind: int, after: float
) -> None:
    fi, ff = feedback(cc, 20.0, kind)
    assert ff[L.FF_CWND] == pytest.approx(after)
    assert fi[L.FI_INFLIGHT] == 9
    if after < 20:
        assert fi[L.FI_RECOVER] == 199  # no second reduction for this window


def test_one_reduction_per_window() -> None:
    _, ff = feedback(L.Congestion.RENO, 20.0, L.EV_LOSS, seq=150, recover=160)
    assert ff[L.FF_CWND] == 20.0  # lost before the last reduction: already answered


def test_cubic_grows_towards_the_larger_of_its_cubic_and_reno_friendly_windows() -> None:
    """RFC 8312: 0.1 s after a loss at W_max = 20 (cwnd 14, K = 2.47 s) the cubic curve is
    still near 14, but Reno would have grown 0.53 packets per 10 ms RTT: at this short RTT
    CUBIC runs in its TCP-friendly region (the paper's "Cubic in Reno mode")."""
    k = (6 / 0.4) ** (1 / 3)
    _, ff = feedback(L.Congestion.CUBIC, 14.0, L.EV_ACK, w_max=20.0, epoch=4.9, k=k, origin=20.0)
    cubic = 20 + 0.4 * (0.1 + 0.01 - k) ** 3
    reno = 20 * 0.7 + 3 * 0.3 / 1.7 * (0.1 / 0.01)
    assert cubic < reno
    assert ff[L.FF_CWND] == pytest.approx(14.0 + (reno - 14.0) / 14.0)
