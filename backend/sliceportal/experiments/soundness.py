"""The soundness check: adversarial packets through the emulator against the default bound.

The bound admission decides on (netcalc, :mod:`sliceportal.domain.bounds`) is only worth its
name if no traffic the switch lets through can wait longer. This check shares no reading with
the bound: it builds random links of 2-5 slices, installs them in the emulator's packet model of
the P4 program (virtual queues, strict-priority egress queues, non-preemptive transmission) and
drives them the way the worst case is built in the literature, then reads each packet's
queueing delay off the model's trace in exact nanoseconds:

- one best-effort frame of the link's largest size (1518 bytes) starts on the idle link one
  nanosecond before everything else (the longest non-preemptive blocking any level can see);
- every slice then dumps more than its burst at one instant, at a random phase within a
  timestamp tick (the switch drains by whole ticks, which lets a little more through), and goes
  on sending at twice its rate so its virtual queue stays full: the switch itself cuts each
  slice down to its burst and rate;
- frames are the largest (1514/1518) or the smallest (64) a slice may send, or both in turn.

For every slice the worst measured delay must be at most the bound; the ratio measured/bound
says how tight the bound is. Capacities are ones whose frame times are whole nanoseconds, so
the model's rounding of transmission times adds nothing the bound does not know about.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from sliceportal.domain import dataplane as dp
from sliceportal.domain import p4constants as c
from sliceportal.domain.abc import AbcConfig
from sliceportal.domain.bounds import analyze
from sliceportal.domain.codel import CodelConfig
from sliceportal.domain.spec import (
    DEFAULT_MAX_FRAME_BYTES,
    LOWEST_SLICE_PRIORITY,
    STANDARD_FRAMING,
    TOP_PRIORITY,
    Framing,
    Model,
    SliceSpec,
)
from sliceportal.emulator import layout as L
from sliceportal.emulator.model.engine import Engine
from sliceportal.emulator.model.entries import install_switch
from sliceportal.emulator.model.ports import PortConfig
from sliceportal.emulator.model.program import Headers
from sliceportal.emulator.state import DeviceState
from sliceportal.p4rt.p4info import P4InfoIndex

EGRESS_PORT = 1
CAPACITIES_BPS = (100e6, 125e6, 200e6, 250e6, 500e6, 1e9, 2e9)
"""8e9 / C is a whole number of nanoseconds per byte for each of these."""
SMALLEST_FRAME = 64
LARGEST_FRAME = 1514
"""The largest untagged frame: the slices here are matched by IPv4 prefix alone."""
_ROUTE = dp.Route("10.0.0.0/8", EGRESS_PORT, "02:00:00:00:00:01")
_BEST_EFFORT_DST = "10.255.0.1"
USERS_PER_SLICE = 3
"""Source addresses each slice's packets take in turn (ABC's aggregates)."""
_START_NS = 1_000_000
_NS = 1_000_000_000


@dataclass(frozen=True)
class TrialSlice:
    spec: SliceSpec
    frames: tuple[int, ...]
    """Frame sizes the slice sends, in turn."""


@dataclass(frozen=True)
class SliceResult:
    link: int
    name: str
    priority: int
    bound_s: float
    paper_bound_s: float | None
    """The paper's eq. (3) for comparison (``None``: unbounded there too)."""
    measured_s: float
    packets: int
    aqm_dropped: int = 0
    """Packets the slice's CoDel or ABC dropped: early drops never lengthen a wait."""

    @property
    def ratio(self) -> float:
        return self.measured_s / self.bound_s


def random_link(rng: np.random.Generator) -> tuple[float, tuple[TrialSlice, ...]]:
    """A capacity and 2-5 slices on random priorities whose rates fit within 90 % of it."""
    capacity = float(rng.choice(CAPACITIES_BPS))
    count = int(rng.integers(2, 6))
    shares = rng.dirichlet(np.ones(count)) * rng.uniform(0.3, 0.9)
    slices = []
    for i, share in enumerate(shares.tolist()):
        rate = max(float(c.RATE_MIN_BPS), math.floor(share * capacity / 1000.0) * 1000.0)
        shortest = c.MIN_BURST_FRAME_BYTES * 8 / rate
        limit = max(shortest * 1.05, float(rng.uniform(0.2e-3, 10e-3)))
        limit = math.ceil(limit * 1e6) / 1e6
        frames = (
            (SMALLEST_FRAME,),
            (LARGEST_FRAME,),
            (LARGEST_FRAME, SMALLEST_FRAME),
        )[int(rng.integers(0, 3))]
        priority = int(rng.integers(LOWEST_SLICE_PRIORITY, TOP_PRIORITY + 1))
        spec = SliceSpec(f"s{i + 1}", rate, priority, rate * limit / 8.0, limit, max(frames))
        slices.append(TrialSlice(spec, frames))
    return capacity, tuple(slices)


def _program() -> P4InfoIndex:
    from sliceportal.emulator.defaults import DEFAULT_P4INFO

    return P4InfoIndex.from_file(DEFAULT_P4INFO)


def _arrivals(
    engine: Engine, slices: tuple[TrialSlice, ...], rng: np.random.Generator, until_ns: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The adversarial arrivals, sorted, and the slice index of each (-1: best effort)."""
    burst_at = _START_NS + int(rng.integers(1, c.TIMESTAMP_TICK_NS))
    times: list[npt.NDArray[np.int64]] = [np.array([burst_at - 1], np.int64)]
    lengths: list[npt.NDArray[np.int64]] = [np.array([DEFAULT_MAX_FRAME_BYTES], np.int64)]
    classes = [np.array([engine.header_class(Headers.parse(_BEST_EFFORT_DST))], np.int64)]
    owners: list[npt.NDArray[np.int64]] = [np.array([-1], np.int64)]
    for index, trial in enumerate(slices):
        spec = trial.spec
        frames = np.array(trial.frames, np.int64)
        dumped = int(spec.burst_bytes // frames.min()) + 2 * len(frames) + 2
        mean_frame = float(frames.mean())
        gap_ns = mean_frame * 8 * _NS / (2.0 * spec.rate_bps)
        following = max(0, int((until_ns - burst_at) / gap_ns) - 1)
        t = np.concatenate(
            [
                np.full(dumped, burst_at, np.int64),
                burst_at + np.floor((np.arange(following) + 1) * gap_ns).astype(np.int64),
            ]
        )
        t = t[t < until_ns]
        times.append(t)
        lengths.append(np.resize(frames, len(t)))
        users = [
            engine.header_class(Headers.parse(f"10.0.{index + 1}.1", ipv4_src=f"192.0.2.{u}"))
            for u in range(1, USERS_PER_SLICE + 1)
        ]
        classes.append(np.resize(np.array(users, np.int64), len(t)))
        owners.append(np.full(len(t), index, np.int64))
    all_times = np.concatenate(times)
    order = np.argsort(all_times, kind="stable")
    arrivals = np.zeros((len(all_times), L.OL_COLUMNS), np.int64)
    arrivals[:, L.OL_TIME] = all_times[order]
    arrivals[:, L.OL_CLS] = np.concatenate(classes)[order]
    arrivals[:, L.OL_LEN] = np.concatenate(lengths)[order]
    return arrivals, np.concatenate(owners)[order]


def scheme_parameters(scheme: dp.Scheme, spec: SliceSpec) -> dict[str, Any]:
    """Parameters that make a scheme act within the short runs: CoDel with a target of a
    quarter of the burst limit and a 1 ms interval; ABC with 10 ms and 5 ms memories,
    Q_min 0, Q_base half the burst limit and gamma an eighth of it per unit of activity."""
    limit = spec.delay_target_s
    if scheme == dp.Scheme.CODEL:
        return {"codel": CodelConfig.from_seconds(limit / 4, 0.001)}
    if scheme == dp.Scheme.ABC:
        abc = AbcConfig(0.01, 0.005, q_min_s=0.0, q_base_s=limit / 2, gamma_s=limit / 8)
        return {"abc": abc}
    return {}


def run_link(
    link: int,
    capacity_bps: float,
    slices: tuple[TrialSlice, ...],
    rng: np.random.Generator,
    program: P4InfoIndex | None = None,
    framing: Framing = STANDARD_FRAMING,
    scheme: dp.Scheme = dp.Scheme.TAIL_DROP,
) -> list[SliceResult]:
    """Drive one link adversarially; each slice's worst delay beside its netcalc bound.
    ``scheme``: what every slice runs (`scheme_parameters`), which must change nothing about
    the bound."""
    specs = [t.spec for t in slices]
    analysis = analyze(specs, capacity_bps, Model.NETCALC, framing)
    bounds = [b.worst_case_delay_s for b in analysis.slices]
    paper = [b.worst_case_delay_s for b in analyze(specs, capacity_bps, Model.HARKOUS).slices]
    finite = [b for b in bounds if b is not None]
    if not finite:
        return []
    horizon_ns = int(3 * max(finite) * _NS) + 2_000_000
    state = DeviceState(program or _program())
    dataplane = [
        dp.DataplaneSlice(
            i + 1,
            t.spec.name,
            None,
            (f"10.0.{i + 1}.0/24",),
            t.spec.rate_bps,
            t.spec.delay_target_s,
            t.spec.priority,
            scheme,
            None,
            EGRESS_PORT,
            **scheme_parameters(scheme, t.spec),
        )  # fmt: skip
        for i, t in enumerate(slices)
    ]
    install_switch(state, dp.dataplane_entries(dataplane, (_ROUTE,)))
    engine = Engine(
        state,
        {EGRESS_PORT: PortConfig(int(capacity_bps), 10_000_000)},
        PortConfig(),
        trace_capacity=0,
    )
    arrivals, owners = _arrivals(engine, slices, rng, _START_NS + horizon_ns)
    engine.trace = np.zeros((len(arrivals), L.TR_COLUMNS), np.int64)
    engine.run(_START_NS + 4 * horizon_ns, arrivals, trace_offset=0)
    trace = engine.trace
    left = np.isin(trace[:, L.TR_OUTCOME], (int(L.Outcome.FORWARDED), int(L.Outcome.REAL_DROPPED)))
    waited = trace[:, L.TR_DEQ_NS] - arrivals[:, L.OL_TIME]
    results = []
    for index, trial in enumerate(slices):
        bound = bounds[index]
        if bound is None:
            continue
        mine = left & (owners == index)
        worst = int(waited[mine].max()) if mine.any() else 0
        results.append(
            SliceResult(
                link,
                trial.spec.name,
                trial.spec.priority,
                bound,
                paper[index],
                worst / _NS,
                int(mine.sum()),
                int(np.sum((trace[:, L.TR_OUTCOME] == L.Outcome.AQM_DROPPED) & (owners == index))),
            )
        )
    return results


def check(
    links: int,
    seed: int = 1,
    framing: Framing = STANDARD_FRAMING,
    scheme: dp.Scheme = dp.Scheme.TAIL_DROP,
) -> list[SliceResult]:
    """Every slice of ``links`` random links, driven adversarially (``framing``: what the bound
    is told about the link; the traffic is always the same; ``scheme``: what every slice runs,
    see `run_link`)."""
    rng = np.random.default_rng(seed)
    program = _program()
    results: list[SliceResult] = []
    for link in range(links):
        capacity, slices = random_link(rng)
        results.extend(run_link(link, capacity, slices, rng, program, framing, scheme))
    return results


def tightness(results: list[SliceResult]) -> dict[str, Any]:
    """The distribution of measured / bound, and the count of slices over their bound."""
    ratios = np.array([r.ratio for r in results])
    quantiles = np.quantile(ratios, [0.0, 0.1, 0.5, 0.9, 1.0]) if len(ratios) else [math.nan] * 5
    return {
        "slices": len(results),
        "links": len({r.link for r in results}),
        "over_bound": int(np.sum(ratios > 1.0)),
        "over_paper_bound": sum(
            1 for r in results if r.paper_bound_s is not None and r.measured_s > r.paper_bound_s
        ),
        "paper_ratio_max": max(
            (r.measured_s / r.paper_bound_s for r in results if r.paper_bound_s), default=math.nan
        ),
        "ratio_min": float(quantiles[0]),
        "ratio_p10": float(quantiles[1]),
        "ratio_median": float(quantiles[2]),
        "ratio_p90": float(quantiles[3]),
        "ratio_max": float(quantiles[4]),
    }
