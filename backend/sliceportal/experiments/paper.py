"""The paper's experiments 1 and 3 (Harkous et al. 2021, section V-A, Tables I and II).

Three slices share one egress port toward the clients. Experiment 1: a 1 Gbit/s link, all
slices in one physical queue. Experiment 3: the link limited to 285 Mbit/s (just below the
300 Mbit/s the slices may send together), DC and Enterprise in the high-priority queue, Peering
below them, so Peering's real queue grows and the egress max(virtual, real) check bounds it.

Table I (traffic, BMv2 column): DC 10 DCTCP flows with a 5 ms RTT, Enterprise 1 Cubic flow
with 10 ms, Peering 10 Cubic flows with 30 ms. Table II (configuration): DC 48 Mbit/s, burst
limit 20 ms, ECN step at 5 ms; Enterprise 12 Mbit/s, 10 ms, tail drop; Peering 240 Mbit/s,
30 ms, tail drop. The switch's queues hold 200,000 packets, as in the paper.
"""

from __future__ import annotations

from dataclasses import dataclass

from sliceportal.domain import dataplane as dp
from sliceportal.emulator.model.layout import Congestion
from sliceportal.emulator.model.traffic import SourceSpec

EGRESS_PORT = 1
QUEUE_DEPTH = 200_000
SENDER_RATE_BPS = 1e9
"""The client hosts' 1 GbE NICs: each window leaves at this rate."""
ROUTES = (dp.Route("10.0.0.0/16", EGRESS_PORT, "02:00:00:00:00:01"),)


@dataclass(frozen=True)
class PaperSlice:
    label: str
    slice_: dp.DataplaneSlice
    traffic: SourceSpec


@dataclass(frozen=True)
class Experiment:
    name: str
    title: str
    port_rate_bps: int
    slices: tuple[PaperSlice, ...]
    congested: bool
    """The link is slower than the slices' sum: the real queue, not the virtual one, limits
    the low-priority slice (experiment 3)."""

    @property
    def routes(self) -> tuple[dp.Route, ...]:
        return ROUTES


def _slice(
    dp_sid: int,
    label: str,
    rate_bps: float,
    burst_s: float,
    priority: int,
    mark_s: float | None,
    cc: Congestion,
    flows: int,
    rtt_s: float,
) -> PaperSlice:
    prefix = f"10.0.{dp_sid}.0/24"
    scheme = dp.Scheme.TAIL_DROP if mark_s is None else dp.Scheme.ECN_STEP
    slice_ = dp.DataplaneSlice(
        dp_sid, label, None, (prefix,), rate_bps, burst_s, priority, scheme, mark_s, EGRESS_PORT
    )
    traffic = SourceSpec(
        name=label.lower(),
        pattern="tcp",
        ipv4_dst=f"10.0.{dp_sid}.1",
        ecn=2 if cc == Congestion.DCTCP else 0,  # DCTCP sends ECT(0); Cubic here is not ECN
        cc=cc,
        flows=flows,
        rtt_s=rtt_s,
        sender_rate_bps=SENDER_RATE_BPS,
    )
    return PaperSlice(label, slice_, traffic)


def _slices(high: int, low: int) -> tuple[PaperSlice, ...]:
    return (
        _slice(1, "DC", 48e6, 0.020, high, 0.005, Congestion.DCTCP, 10, 0.005),
        _slice(2, "Enterprise", 12e6, 0.010, high, None, Congestion.CUBIC, 1, 0.010),
        _slice(3, "Peering", 240e6, 0.030, low, None, Congestion.CUBIC, 10, 0.030),
    )


EXPERIMENTS = {
    "paper-exp1": Experiment(
        "paper-exp1",
        "Experiment 1: three slices on a 1 Gbit/s link, one queue",
        1_000_000_000,
        _slices(7, 7),
        congested=False,
    ),
    "paper-exp3": Experiment(
        "paper-exp3",
        "Experiment 3: 285 Mbit/s bottleneck, DC and Enterprise at high priority",
        285_000_000,
        _slices(7, 6),
        congested=True,
    ),
}
