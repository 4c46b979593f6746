"""The paper's experiments 1 and 3 (Harkous et al. 2021, section V-A, Tables I and II).

Three slices share one egress port toward the clients. Experiment 1: a 1 Gbit/s link, all
slices in one physical queue. Experiment 3: the link limited to 285 Mbit/s (just below the
300 Mbit/s the slices may send together), DC and Enterprise in the high-priority queue, Peering
below them, so Peering's real queue grows and the egress max(virtual, real) check bounds it.

Table I (traffic, BMv2 column): DC 10 DCTCP flows with a 5 ms RTT, Enterprise 1 Cubic flow
with 10 ms, Peering 10 Cubic flows with 30 ms. Table II (configuration): DC 48 Mbit/s, burst
limit 20 ms, ECN step at 5 ms; Enterprise 12 Mbit/s, 10 ms, tail drop; Peering 240 Mbit/s,
30 ms, tail drop. The switch's queues hold 200,000 packets, as in the paper.

The paper's baseline (Sec. IV-C, V-A; Figs. 8 and 14) polices the same slices with P4 meters
(trTCM, RFC 2698) instead of virtual queues: ``paper-exp1-meter`` and ``paper-exp3-meter`` run
the same traffic with every slice on the ``meter`` scheme (`Experiment.meter_baseline`), and
the vQueue experiments report their meter run beside their own figures (`BaselineFigure`).

DCTCP's window stops at Linux's 2 packets. Experiment 1's DC figure ("around the 5ms marking
threshold") needs 1 in this model, so that experiment also runs with 1 and reports both
(`PaperFigure`; docs/emulator.md, "Responsive flows").
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from sliceportal.domain import dataplane as dp
from sliceportal.emulator.layout import Congestion
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
class PaperFigure:
    """A figure of the paper that this model reproduces only with a DCTCP minimum window other
    than Linux's: the experiment runs with both and reports the slice's figures side by side."""

    label: str
    """The slice."""
    vq_delay_ms: float
    """The virtual-queue delay the paper reports for it."""
    quote: str
    where: str
    min_cwnd: int
    """The DCTCP minimum window (packets) with which this model gives that figure."""


@dataclass(frozen=True)
class BaselineFigure:
    """What the paper reports for its meter baseline of an experiment."""

    quote: str
    where: str
    same_throughput: bool
    """The paper's meter run gives the vQueue run's throughputs (Figs. 8 and 14)."""
    real_delay_label: str | None = None
    """The slice whose real queue the meters leave uncontrolled (experiment 3: Peering)."""
    real_delay_max_ms: float | None = None
    """Its real queuing delay in the paper's meter run, up to this."""


@dataclass(frozen=True)
class Experiment:
    name: str
    title: str
    port_rate_bps: int
    slices: tuple[PaperSlice, ...]
    congested: bool
    """The link is slower than the slices' sum: the real queue, not the virtual one, limits
    the low-priority slice (experiment 3)."""
    paper_figure: PaperFigure | None = None
    baseline_figure: BaselineFigure | None = None
    """Set on a vQueue experiment the paper compares with meters: its runs add the meter
    baseline (`meter_baseline`) beside their own figures."""
    metered: bool = False
    """Every slice on the meter scheme: the paper's baseline."""

    @property
    def routes(self) -> tuple[dp.Route, ...]:
        return ROUTES

    def meter_baseline(self) -> Experiment:
        """The same slices and traffic, each slice policed by a trTCM meter at its rate with its
        burst limit as the bucket (`dataplane.DataplaneSlice.meter_config`) instead of a
        virtual queue: no marks (DC's ECN threshold has no meter counterpart) and no real-queue
        check."""
        slices = tuple(
            replace(
                s,
                slice_=replace(s.slice_, scheme=dp.Scheme.METER, marking_threshold_s=None),
            )
            for s in self.slices
        )
        return replace(
            self,
            name=f"{self.name}-meter",
            title=f"{self.title}; P4 meters instead of virtual queues (the paper's baseline)",
            slices=slices,
            paper_figure=None,
            baseline_figure=None,
            metered=True,
        )

    def with_dctcp_min_cwnd(self, packets: int) -> Experiment:
        """The same experiment, the DCTCP slices' windows stopping at ``packets``."""
        if packets < 1:
            raise ValueError(f"the DCTCP minimum window must be at least 1 packet, got {packets}")
        slices = tuple(
            replace(s, traffic=replace(s.traffic, min_cwnd=packets))
            if s.traffic.cc == Congestion.DCTCP
            else s
            for s in self.slices
        )
        return replace(self, slices=slices)


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
        paper_figure=PaperFigure(
            "DC",
            5.0,
            "the DCTCP flows (slice DC) are being controlled at the target rate and around "
            "the 5ms marking threshold",
            "section V-A1, Fig. 5(a) and Fig. 6",
            1,
        ),
        baseline_figure=BaselineFigure(
            "the results are similar to the baseline in Fig. 8 where with the use of P4 meters "
            "we are limiting the per slice rate according to their configurations",
            "section V-A1, Fig. 8",
            same_throughput=True,
        ),
    ),
    "paper-exp3": Experiment(
        "paper-exp3",
        "Experiment 3: 285 Mbit/s bottleneck, DC and Enterprise at high priority",
        285_000_000,
        _slices(7, 6),
        congested=True,
        baseline_figure=BaselineFigure(
            "Using the standard P4 meters, throughput-wise, the results are similar as evident "
            "in Fig. 14 [...] However, the increase in the packets' real queuing delay for the "
            "low priority traffic is significant (up to 800ms), since it is not controlled as "
            "in the vQueues case.",
            "section V-A3, Fig. 14",
            same_throughput=True,
            real_delay_label="Peering",
            real_delay_max_ms=800.0,
        ),
    ),
}
EXPERIMENTS |= {
    f"{name}-meter": experiment.meter_baseline() for name, experiment in list(EXPERIMENTS.items())
}
