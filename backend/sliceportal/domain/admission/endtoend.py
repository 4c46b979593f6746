"""End-to-end worst-case delay of slices along their ordered paths through a network.

Two levels:

- :func:`path_bound`: one slice's end-to-end bound from its per-hop bounds, the propagation
  delays of its links and, where known, the network-calculus concatenation of its hops: the
  tighter of the two sound results, against its end-to-end target. Admission and the reports
  call it with the per-hop bounds of stored links (no propagation, no order: stored paths are
  unordered sets today), which assumes every hop sees the slices' declared bursts.
- :func:`analyze_paths`: every slice of a network along its **ordered** path (pure: links and
  routed slices in, per-slice per-hop results out). A slice's burst grows along its path (after
  hops with bounds ``d_1..d_k`` it is ``b + r·(d_1+…+d_k)``), so each link is analysed with
  the bursts that really reach it; with paths that feed each other in a cycle the growth is a
  fixed point, computed from the no-growth bounds upwards and certified, or declared
  unbounded. Under ``netcalc`` each slice also gets its own leftover rate-latency service
  curve per hop (its level's curve, less the other slices of its FIFO level), and the
  concatenation of those curves pays its burst once: ``Σ T_k + Σ_{k<n} 8·l/R_k + 8·b'/min R_k``.
  The end-to-end bound is the smaller of that and the per-hop sum, propagation added to both.

docs/analysis.md ("End to end") has the equations, the argument that each step is sound, and a
worked example that ``tests/unit/domain/test_domain_paths.py`` computes by hand.

A slice may carry an end-to-end target besides its per-hop target. The hop that hurts most is
the one with the largest bound: lowering it gains the most, so violations name it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np

from sliceportal.domain.bounds import (
    TIMESTAMP_TICK_S,
    ArrayAnalysis,
    BoolArray,
    FloatArray,
    LevelAggregates,
    LevelBounds,
    LevelService,
    analyze_arrays,
    fsum_or_inf,
    level_services,
    slice_arrays,
    sound_aggregates,
)
from sliceportal.domain.formatting import format_delay
from sliceportal.domain.spec import (
    DEFAULT_MODEL,
    Framing,
    Model,
    NetworkLink,
    RoutedSlice,
    SliceSpec,
    check_integer,
    check_network,
)


@dataclass(frozen=True, slots=True)
class Hop:
    """One link a slice crosses and the slice's worst-case delay there (``None`` = unbounded)."""

    link_id: int
    link: str
    """A name for humans (e.g. ``s1/eth2``)."""
    bound_s: float | None
    propagation_s: float = 0.0
    """The link's propagation delay to the next switch, which the end-to-end bound adds."""


@dataclass(frozen=True, slots=True)
class PathBound:
    """A slice's end-to-end bound against its end-to-end target: the sum of its hops (and
    their propagation delays), or the concatenation of its hops where that is tighter."""

    hops: tuple[Hop, ...]
    total_s: float | None
    """The end-to-end bound: the smaller of :attr:`per_hop_sum_s` and
    :attr:`concatenation_s`; ``None`` when both are unbounded."""
    target_s: float | None
    """The end-to-end target, if the slice has one."""
    worst_hop: Hop | None
    """The hop with the largest bound (an unbounded one first); ``None`` without hops."""
    per_hop_sum_s: float | None = None
    """Σ per-hop bounds + Σ propagation delays; ``None`` when some hop is unbounded."""
    concatenation_s: float | None = None
    """The pay-bursts-once bound of the concatenated hops (propagation included), where it
    was computed (netcalc, two hops or more) and is finite."""

    @property
    def method(self) -> str:
        """Which result :attr:`total_s` is: ``per-hop sum`` or ``concatenation``."""
        concatenation, per_hop = self.concatenation_s, self.per_hop_sum_s
        if concatenation is not None and (per_hop is None or concatenation < per_hop):
            return "concatenation"
        return "per-hop sum"

    @property
    def meets_target(self) -> bool:
        """True without a target; else the sum is bounded and within it."""
        if self.target_s is None:
            return True
        return self.total_s is not None and self.total_s <= self.target_s

    @property
    def slack_s(self) -> float | None:
        """Target minus bound; ``None`` without a target or when unbounded."""
        if self.target_s is None or self.total_s is None:
            return None
        return self.target_s - self.total_s

    def reason(self) -> str:
        """Why the target is missed, naming the worst hop (only meaningful when it is)."""
        hop = self.worst_hop
        where = ""
        if hop is not None:
            share = "unbounded" if hop.bound_s is None else format_delay(hop.bound_s)
            where = f"; the worst hop is link {hop.link!r} ({share})"
        target = format_delay(self.target_s or 0.0)
        if self.total_s is None:
            return f"end-to-end worst-case delay is unbounded (target {target}){where}"
        total = format_delay(self.total_s)
        return f"end-to-end worst-case delay {total} exceeds target {target}{where}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "hops": [
                {"link_id": hop.link_id, "link": hop.link, "bound_s": hop.bound_s}
                for hop in self.hops
            ],
            "total_s": self.total_s,
            "target_s": self.target_s,
            "worst_hop_link_id": None if self.worst_hop is None else self.worst_hop.link_id,
            "meets_target": self.meets_target,
            "slack_s": self.slack_s,
        }


def hop_bound(levels: LevelBounds, priority: int) -> float | None:
    """A slice's bound on one link from the link's level bounds (``None`` = unbounded).

    A level whose rates overflow the link counts as unbounded even where the harkous
    equations still give a finite number: its backlog grows forever.
    """
    bound = levels.bound_s[priority]
    if levels.overflow[priority] or not math.isfinite(bound):
        return None
    return bound


def path_bound(
    hops: Iterable[Hop],
    target_s: float | None = None,
    *,
    concatenation_s: float | None = None,
) -> PathBound:
    """The end-to-end bound of one slice from its per-hop bounds (in path order), their
    propagation delays and, when given, the concatenation bound of the same path (which
    includes the propagation delays): the smaller of the two.

    A target of 0 is allowed (a burst limit of 0 defaults to it): only a path without
    queueing could meet it.
    """
    path = tuple(hops)
    if target_s is not None and not (math.isfinite(target_s) and target_s >= 0):
        raise ValueError("an end-to-end target must be a finite number of seconds, at least 0")
    bounded = all(hop.bound_s is not None and math.isfinite(hop.bound_s) for hop in path)
    per_hop: float | None = None
    if bounded:
        per_hop = fsum_or_inf(
            [*(hop.bound_s for hop in path if hop.bound_s is not None)]
            + [hop.propagation_s for hop in path]
        )
        if not math.isfinite(per_hop):  # finite hops whose sum exceeds the largest float
            per_hop = None
    if concatenation_s is not None and not math.isfinite(concatenation_s):
        concatenation_s = None
    candidates = [value for value in (per_hop, concatenation_s) if value is not None]
    total = min(candidates) if candidates else None
    worst = max(
        path,
        key=lambda hop: math.inf if hop.bound_s is None else hop.bound_s,
        default=None,
    )
    return PathBound(
        hops=path,
        total_s=total,
        target_s=target_s,
        worst_hop=worst,
        per_hop_sum_s=per_hop,
        concatenation_s=concatenation_s,
    )


# --- Networks: ordered paths, burst growth, concatenation ---------------------------------------

MAX_ITERATIONS = 1000
"""Rounds of burst growth before slices whose bounds still grow are declared unbounded."""
MAX_ITERATIONS_LIMIT = 100 * MAX_ITERATIONS
"""The largest cap a caller may ask for: a cycle whose gain is exactly 1 grows by the same
step every round and never settles, so the cap alone bounds the work (each round analyses
every link)."""
CERTIFY_SLACK = 1e-9
"""Relative margin of the extrapolated bounds a cyclic network's fixed point is certified
with (so a certified bound may be that much above the exact fixed point)."""
FixedPoint = Literal["exact", "certified", "capped"]


@dataclass(frozen=True, slots=True)
class HopResult:
    """One hop of a slice's path: its bound there and what produced it."""

    link_id: int
    link: str
    bound_s: float | None
    """The slice's bound on this link as :func:`~sliceportal.domain.bounds.analyze` gives it
    for the bursts that reach the link (``None`` = unbounded). Under harkous a level whose
    rates exceed the capacity keeps the equations' finite value, as ``analyze`` prints it,
    with :attr:`fits` false."""
    fits: bool
    """The rates at and above the slice's priority fit the link (else its backlog grows
    forever: the path is unbounded whatever the model's number says)."""
    burst_bytes: float
    """The slice's burst where it enters this link: its declared burst grown by its rate
    times its bounds at the hops before (inf after an unbounded hop)."""
    propagation_s: float
    service_rate_bps: float | None = None
    """netcalc: the rate of the slice's own leftover service curve here (its level's, less
    the rates of the other slices of its FIFO level), in wire bit/s; ``None`` under harkous."""
    service_latency_s: float | None = None
    """netcalc: the latency of that curve (its level's, plus the other slices' bursts at the
    level's rate); ``None`` under harkous."""

    def as_hop(self) -> Hop:
        """The hop as :func:`path_bound` sums it: unbounded where the rates do not fit."""
        bound = self.bound_s if self.fits else None
        return Hop(self.link_id, self.link, bound, self.propagation_s)


@dataclass(frozen=True, slots=True)
class PathResult:
    """One slice's end-to-end result: per hop, and the path's bound against its target."""

    spec: SliceSpec
    hops: tuple[HopResult, ...]
    bound: PathBound
    settled: bool
    """False when the slice's bounds depend on a cycle of burst growth that did not settle
    within the iteration cap: its path is then reported unbounded."""

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def end_to_end_s(self) -> float | None:
        return self.bound.total_s

    @property
    def meets_target(self) -> bool:
        return self.bound.meets_target

    def to_dict(self) -> dict[str, Any]:
        """One slice of the ``sliceportal analyze-network`` document."""
        return {
            "name": self.spec.name,
            "path": [hop.link for hop in self.hops],
            "hops": [{"link": hop.link, "bound_s": hop.bound_s} for hop in self.hops],
            "end_to_end_s": self.bound.total_s,
            "delay_target_s": self.spec.delay_target_s,
            "meets_target": self.bound.meets_target,
        }


@dataclass(frozen=True, slots=True)
class NetworkAnalysis:
    """Every slice of a network along its path, in input order."""

    model: Model
    slices: tuple[PathResult, ...]
    iterations: int
    """Rounds of burst growth evaluated."""
    fixed_point: FixedPoint
    """How the burst growth settled: ``exact`` (a round changed nothing: always so without
    cyclic dependencies), ``certified`` (an extrapolated fixed point checked to be an upper
    bound) or ``capped`` (some slices did not settle and are reported unbounded)."""

    @property
    def admissible(self) -> bool:
        """Every slice meets its end-to-end target (so every level's rates fit)."""
        return all(result.meets_target for result in self.slices)

    def to_dict(self) -> dict[str, Any]:
        """The document ``sliceportal analyze-network`` prints."""
        return {
            "model": str(self.model),
            "admissible": self.admissible,
            "slices": [result.to_dict() for result in self.slices],
        }


@dataclass(frozen=True, slots=True, eq=False)
class _Round:
    """One evaluation of every link with bursts grown by given per-hop delays."""

    delays: FloatArray
    """Per hop of every path (flat): the bound there, inf where unbounded or over capacity;
    what the next round grows the bursts by."""
    bursts: FloatArray
    """Per hop: the burst (bytes) the slice entered the link with."""
    analyses: tuple[ArrayAnalysis | None, ...]
    """Per link: the analysis of the slices crossing it (``None`` without slices)."""


class _Network:
    """The hops of every path, flat (slice by slice, hop by hop), and who crosses each link."""

    def __init__(
        self, links: Sequence[NetworkLink], slices: Sequence[RoutedSlice], model: Model
    ) -> None:
        self.links = tuple(links)
        self.slices = tuple(slices)
        self.model = model
        self.position = {link.id: index for index, link in enumerate(self.links)}
        self.offsets: list[int] = []
        hop_link: list[int] = []
        for routed in self.slices:
            self.offsets.append(len(hop_link))
            hop_link.extend(self.position[link_id] for link_id in routed.path)
        self.size = len(hop_link)
        self.hop_link = np.array(hop_link, np.intp)
        self.members = [np.flatnonzero(self.hop_link == i) for i in range(len(self.links))]
        hop_spec = [routed.spec for routed in self.slices for _ in routed.path]
        self.columns = [slice_arrays([hop_spec[i] for i in members]) for members in self.members]
        """Per link: its slices' columns (:func:`slice_arrays`), the bursts replaced each round."""
        self._last: list[tuple[FloatArray, ArrayAnalysis, FloatArray] | None] = [None] * len(
            self.links
        )
        """Per link: the bursts it was last analysed with, the analysis and the bounds (inf
        over capacity): a round reuses them where the bursts reaching the link did not change,
        as they do not on most links once the growth has passed them."""

    def grown_bursts(self, delays: FloatArray) -> FloatArray:
        """Each hop's burst: the slice's burst plus its rate times its delays before the hop."""
        bursts = np.empty(self.size)
        for routed, offset in zip(self.slices, self.offsets, strict=True):
            spec = routed.spec
            before = delays[offset : offset + len(routed.path)].tolist()
            for k in range(len(routed.path)):
                bursts[offset + k] = spec.burst_bytes + spec.rate_bps * fsum_or_inf(before[:k]) / 8
        return bursts

    def evaluate(self, delays: FloatArray) -> _Round:
        """Every link analysed (by the function ``analyze`` uses) with the grown bursts."""
        bursts = self.grown_bursts(delays)
        bounds = np.full(self.size, math.inf)
        analyses: list[ArrayAnalysis | None] = []
        for index, (members, columns) in enumerate(zip(self.members, self.columns, strict=True)):
            if not len(members):
                analyses.append(None)
                continue
            arriving = bursts[members]
            last = self._last[index]
            if last is None or not np.array_equal(last[0], arriving):
                link = self.links[index]
                arrays = replace(columns, burst_bytes=arriving)
                analysis = analyze_arrays(arrays, link.capacity_bps, self.model, link.framing)
                fits = ~np.asarray(analysis.levels.overflow)[arrays.priority]
                last = (arriving, analysis, np.where(fits, analysis.bound_s, math.inf))
                self._last[index] = last
            analyses.append(last[1])
            bounds[members] = last[2]
        return _Round(bounds, bursts, tuple(analyses))


def _extrapolate(new: FloatArray, step: FloatArray, previous: FloatArray) -> FloatArray | None:
    """Where a geometric growth ``step`` (after ``previous``) would end, with a margin;
    ``None`` when the steps do not shrink."""
    moving = np.isfinite(new) & (step > 0)
    if not moving.any() or not (previous[moving] > 0).all():
        return None
    ratio = float(np.max(step[moving] / previous[moving]))
    if not ratio < 1:
        return None
    tail = step * (ratio / (1 - ratio))
    return np.where(np.isfinite(new), (new + tail) * (1 + CERTIFY_SLACK), math.inf)


def _settle(net: _Network, max_iterations: int) -> tuple[_Round, BoolArray, int, FixedPoint]:
    """The per-hop bounds with every burst grown by the bounds before it on its path.

    ``F`` (one :meth:`_Network.evaluate`) maps per-hop delays to per-hop bounds. It is
    monotone, so iterating it from no growth climbs to its least fixed point; under netcalc it
    is affine with a positive constant (one blocking frame per hop), so a finite fixed point
    is the only one and bounds the real delays, and so does ``F(y)`` for any ``y`` with
    ``F(y) ≤ y`` (docs/analysis.md). Returns the round to report, which hops settled, the
    rounds evaluated and how the fixed point was reached.
    """
    x = np.zeros(net.size)
    previous_step: FloatArray | None = None
    growing = np.zeros(net.size, np.bool_)
    warmup = len(net.links) + 2  # without cycles, exact within the longest chain of hops
    for iteration in range(1, max_iterations + 1):
        current = net.evaluate(x)
        new = current.delays
        if np.array_equal(new, x):
            return current, np.ones(net.size, np.bool_), iteration, "exact"
        finite = np.isfinite(new)
        growing = finite & (new != x)
        step = np.where(growing, new - np.where(finite, x, 0.0), 0.0)
        if iteration > warmup and previous_step is not None:
            candidate = _extrapolate(new, step, previous_step)
            if candidate is not None:
                checked = net.evaluate(candidate)
                if bool(np.all(checked.delays <= candidate)):
                    return checked, np.ones(net.size, np.bool_), iteration + 1, "certified"
        previous_step = step
        x = new
    # Not settled: the hops that still grew in the last round, and every hop whose bursts
    # depend on them, are unbounded; the others depend only on settled hops, whose bounds are
    # exact (a fixed point of their part of the network).
    unsettled = growing
    while True:
        current = net.evaluate(np.where(unsettled, math.inf, x))
        spread = unsettled | (np.isinf(current.delays) & np.isfinite(x))
        if np.array_equal(spread, unsettled):
            return current, ~unsettled, max_iterations, "capped"
        unsettled = spread


def _slice_service(
    spec: SliceSpec,
    burst_bytes: float,
    sound: LevelAggregates,
    level: LevelService,
    framing: Framing,
) -> tuple[float, float]:
    """The rate and latency of one slice's own leftover service curve on a link (netcalc).

    Its level is one FIFO queue served at least as ``β_{R,T}`` (:class:`LevelService`); the
    other slices of the level send at most ``B_o + r_o·t``, which leaves the slice
    ``β_{R − r_o, T + 8·B_o/R}`` (FIFO multiplexing on a rate-latency server: Le Boudec and
    Thiran, *Network Calculus*, Cor. 6.2.3). Rates and bursts count as in the level's bound
    (:func:`sound_aggregates`: wire rates, the timestamp tick).
    """
    scale = framing.rate_factor
    own_burst = scale * (burst_bytes + spec.rate_bps * TIMESTAMP_TICK_S / 8.0)
    other_rate = max(0.0, sound.rate_bps[spec.priority] - scale * spec.rate_bps)
    other_burst = max(0.0, sound.burst_bytes[spec.priority] - own_burst)
    rate = level.rate_bps - other_rate
    if not level.rate_bps > 0:
        return rate, math.inf
    return rate, level.latency_s + 8.0 * other_burst / level.rate_bps


def _concatenation(
    spec: SliceSpec, hops: Sequence[HopResult], links: Sequence[NetworkLink]
) -> float | None:
    """The pay-bursts-once bound of a path of two hops or more (netcalc), propagation
    included; ``None`` where it does not apply or is unbounded.

    The hops' leftover curves ``β_{R_k,T_k}`` concatenate to ``β_{min R_k, Σ T_k}``; between
    two hops the next switch takes a packet only once it is whole (store and forward), which
    costs each hop but the last ``8·l/R_k`` more latency (a packetizer: Le Boudec and
    Thiran, Thm. 1.7.3), ``l`` the slice's largest frame with its overhead. The slice's
    declared arrival curve ``b + L·τ/8 + L·t/8`` against that curve: ``Σ T_k + Σ_{k<n}
    8·l/R_k + 8·(b + L·τ/8)/min R_k``. Rates count frame bytes (wire rates over the link's
    rate factor), so one curve fits links of different framings.
    """
    if len(hops) < 2:
        return None  # one hop: never below the hop's own bound (T + 8b'/R_s ≥ T + 8b'/R)
    terms: list[float] = []
    slowest = math.inf
    for k, (hop, link) in enumerate(zip(hops, links, strict=True)):
        rate, latency = hop.service_rate_bps, hop.service_latency_s
        if rate is None or latency is None or hop.bound_s is None or not hop.fits:
            return None
        if not (rate > 0 and math.isfinite(latency)):
            return None
        scale = link.framing.rate_factor
        slowest = min(slowest, rate / scale)
        terms.append(latency)
        if k < len(hops) - 1:
            frame = spec.max_packet_bytes + link.framing.overhead_bytes
            terms.append(8.0 * frame * scale / rate)
        terms.append(hop.propagation_s)
    if not slowest >= spec.rate_bps:
        return None  # the slice's rate exceeds what some hop leaves it: no bound this way
    terms.append(8.0 * (spec.burst_bytes + spec.rate_bps * TIMESTAMP_TICK_S / 8.0) / slowest)
    value = fsum_or_inf(terms)
    return value if math.isfinite(value) else None


def analyze_paths(
    links: Sequence[NetworkLink],
    slices: Sequence[RoutedSlice],
    model: Model | str = DEFAULT_MODEL,
    *,
    max_iterations: int = MAX_ITERATIONS,
) -> NetworkAnalysis:
    """Every slice's bounds along its ordered path: per hop with the bursts that reach each
    link, and end to end (propagation added; under netcalc the tighter of the per-hop sum and
    the concatenation), against its ``delay_target_s``. Pure; raises
    :class:`~sliceportal.domain.spec.SpecError` for links and paths that do not fit together
    (:func:`~sliceportal.domain.spec.check_network`) and for a ``max_iterations`` that is not
    an integer from 1 to :data:`MAX_ITERATIONS_LIMIT`."""
    links = tuple(links)
    slices = tuple(slices)
    check_network(links, slices)
    check_integer(max_iterations, "max_iterations", minimum=1, maximum=MAX_ITERATIONS_LIMIT)
    model = Model(model)
    net = _Network(links, slices, model)
    final, settled, iterations, how = _settle(net, max_iterations)
    services = [  # netcalc: per link, its levels' service curves and the sums they come from
        None
        if analysis is None or model is not Model.NETCALC
        else (
            level_services(analysis.aggregates, link.capacity_bps, link.framing),
            sound_aggregates(analysis.aggregates, link.framing),
        )
        for link, analysis in zip(links, final.analyses, strict=True)
    ]
    position = net.position
    results = []
    for routed, offset in zip(slices, net.offsets, strict=True):
        spec = routed.spec
        path_links = [links[position[link_id]] for link_id in routed.path]
        hops = []
        for k, link in enumerate(path_links):
            index = position[link.id]
            analysis = final.analyses[index]
            assert analysis is not None  # the slice crosses it
            member = int(np.searchsorted(net.members[index], offset + k))
            value = float(analysis.bound_s[member])
            burst = float(final.bursts[offset + k])
            rate_bps = latency_s = None
            service = services[index]
            if service is not None:
                levels, sound = service
                rate_bps, latency_s = _slice_service(
                    spec, burst, sound, levels[spec.priority], link.framing
                )
            hops.append(
                HopResult(
                    link_id=link.id,
                    link=link.name,
                    bound_s=value if settled[offset + k] and math.isfinite(value) else None,
                    fits=not analysis.levels.overflow[spec.priority],
                    burst_bytes=burst,
                    propagation_s=link.propagation_s,
                    service_rate_bps=rate_bps,
                    service_latency_s=latency_s,
                )
            )
        bound = path_bound(
            (hop.as_hop() for hop in hops),
            spec.delay_target_s,
            concatenation_s=_concatenation(spec, hops, path_links),
        )
        path_settled = bool(np.all(settled[offset : offset + len(hops)]))
        results.append(PathResult(spec, tuple(hops), bound, path_settled))
    return NetworkAnalysis(model, tuple(results), iterations, how)
