"""The end-to-end bounds against a packet-level simulation of the same networks.

The simulator shares nothing with the bound: links with strict priority, one FIFO per level,
non-preemptive transmission at the capacity, store and forward (a switch takes a packet once
its last bit has arrived), propagation delays; best effort always has a full-size frame waiting
at every link, so every burst may find one on the wire. Each slice is a greedy token bucket
(its burst at once at a random instant, then its rate), which its virtual queue would let
through. Every packet's delay at each hop (arrival to the end of its transmission) must stay
within the slice's bound there, and its end-to-end delay (arrival at the first hop to its last
bit reaching the end of the last link) within the end-to-end bound, the concatenation's
included. Random networks (cycles of paths included) over fixed seeds.
"""

from __future__ import annotations

import heapq
import itertools
import random
from dataclasses import dataclass, field, replace

import pytest

from sliceportal.domain import Model
from sliceportal.domain.admission.endtoend import analyze_paths
from sliceportal.domain.spec import (
    DEFAULT_MAX_FRAME_BYTES,
    NetworkLink,
    RoutedSlice,
    SliceSpec,
)

BEST_EFFORT = 0
SLACK = 1e-12  # float noise of the simulation clock


@dataclass
class _Packet:
    flow: int
    size: int
    created: float
    hop: int = 0
    arrived: float = 0.0


@dataclass
class _Port:
    capacity: float
    propagation: float
    queues: dict[int, list[_Packet]] = field(default_factory=dict)
    busy_until: float = 0.0
    heads: dict[int, int] = field(default_factory=dict)


def _greedy_arrivals(spec: SliceSpec, start: float, horizon: float) -> list[float]:
    """Times a token bucket (burst b, rate r, full-size packets) lets packets out, greedily."""
    size = spec.max_packet_bytes
    tokens = spec.burst_bytes
    times, now = [], start
    while now < horizon:
        while tokens >= size:
            times.append(now)
            tokens -= size
        wait = (size - tokens) * 8 / spec.rate_bps
        now += wait
        tokens = size
    return times


def _simulate(
    links: list[NetworkLink], slices: list[RoutedSlice], starts: list[float], horizon: float
) -> tuple[list[list[float]], list[float]]:
    """Per slice: the largest delay at each hop, and the largest end-to-end delay."""
    ports = [_Port(link.capacity_bps, link.propagation_s) for link in links]
    hop_worst = [[0.0] * len(routed.path) for routed in slices]
    e2e_worst = [0.0] * len(slices)
    events: list[tuple[float, int, str, object]] = []
    order = itertools.count()
    for flow, (routed, start) in enumerate(zip(slices, starts, strict=True)):
        for t in _greedy_arrivals(routed.spec, start, horizon):
            packet = _Packet(flow, routed.spec.max_packet_bytes, t)
            heapq.heappush(events, (t, next(order), "arrive", packet))
    for index, port in enumerate(ports):
        port.queues[BEST_EFFORT] = []
        heapq.heappush(events, (0.0, next(order), "idle", index))

    def start_next(index: int, now: float) -> None:
        port = ports[index]
        if port.busy_until > now + SLACK:
            return
        for level in sorted((p for p, q in port.queues.items() if q), reverse=True):
            packet = port.queues[level].pop(0)
            break
        else:
            packet = None
        if packet is None:  # best effort: always a full-size frame, until the horizon
            if now > horizon:
                return
            size = DEFAULT_MAX_FRAME_BYTES
            end = now + size * 8 / port.capacity
            port.busy_until = end
            heapq.heappush(events, (end, next(order), "idle", index))
            return
        end = now + packet.size * 8 / port.capacity
        port.busy_until = end
        heapq.heappush(events, (end, next(order), "sent", (index, packet)))

    while events:
        now, _, kind, payload = heapq.heappop(events)
        if kind == "arrive":
            assert isinstance(payload, _Packet)
            routed = slices[payload.flow]
            index = routed.path[payload.hop]
            payload.arrived = now
            ports[index].queues.setdefault(routed.spec.priority, []).append(payload)
            start_next(index, now)
        elif kind == "idle":
            assert isinstance(payload, int)
            start_next(payload, now)
        else:
            assert isinstance(payload, tuple)
            index, packet = payload
            routed = slices[packet.flow]
            worst = hop_worst[packet.flow]
            worst[packet.hop] = max(worst[packet.hop], now - packet.arrived)
            reach = now + ports[index].propagation
            if packet.hop + 1 < len(routed.path):
                packet.hop += 1
                heapq.heappush(events, (reach, next(order), "arrive", packet))
            else:
                e2e_worst[packet.flow] = max(e2e_worst[packet.flow], reach - packet.created)
            start_next(index, now)
    return hop_worst, e2e_worst


def _network(seed: int) -> tuple[list[NetworkLink], list[RoutedSlice]]:
    rng = random.Random(seed)
    count = rng.randint(2, 4)
    links = [
        NetworkLink(i, f"l{i}", rng.choice([50e6, 100e6, 200e6]), rng.choice([0.0, 1e-4, 1e-3]))
        for i in range(count)
    ]
    slices = []
    for i in range(rng.randint(2, 6)):
        packet = rng.choice([200, 800, 1518])
        spec = SliceSpec(
            name=f"s{i}",
            rate_bps=rng.uniform(2e6, 12e6),
            priority=rng.randint(1, 7),
            burst_bytes=packet * rng.randint(1, 8),
            delay_target_s=1.0,
            max_packet_bytes=packet,
        )
        path = rng.sample(range(count), rng.randint(1, count))
        slices.append(RoutedSlice(spec, tuple(path)))
    return links, slices


@pytest.mark.parametrize("seed", range(40))
def test_no_packet_waits_longer_than_its_bounds(seed: int) -> None:
    links, slices = _network(seed)
    result = analyze_paths(links, slices, Model.NETCALC)
    assert all(path.end_to_end_s is not None for path in result.slices)  # fixed seeds
    rng = random.Random(1000 + seed)
    starts = [rng.uniform(0.0, 2e-3) for _ in slices]
    hop_worst, e2e_worst = _simulate(links, slices, starts, horizon=0.03)
    for path, hops, e2e in zip(result.slices, hop_worst, e2e_worst, strict=True):
        for hop, measured in zip(path.hops, hops, strict=True):
            assert hop.bound_s is not None
            assert measured <= hop.bound_s + SLACK, (path.name, hop.link, measured, hop.bound_s)
        assert path.end_to_end_s is not None
        assert e2e <= path.end_to_end_s + SLACK, (path.name, e2e, path.bound)


def test_the_simulation_reaches_the_concatenation_bound() -> None:
    """A check that never comes close proves little. A 10 Mbit/s slice alone on two
    100 Mbit/s hops, with a burst of eight 1518-byte frames that meets a best-effort frame at
    each hop: its concatenation bound is 3·12,144/1e8 (a blocking frame at each hop and one
    store-and-forward frame) + 97,162/1e8 (its burst, once) = 1.33594 ms. The simulation gets
    within 0.1 % of it, more than a concatenation without the store-and-forward term allows."""
    links = [NetworkLink(0, "a", 100e6, 0.0), NetworkLink(1, "b", 100e6, 0.0)]
    routed = RoutedSlice(SliceSpec("s", 10e6, 7, 1518 * 8, 1.0, 1518), (0, 1))
    path = analyze_paths(links, [routed]).slices[0]
    assert path.bound.method == "concatenation"
    assert path.end_to_end_s == pytest.approx((3 * 12_144 + 97_162) / 1e8, rel=1e-12)
    worst = max(
        _simulate(links, [routed], [start], horizon=0.01)[1][0]
        for start in (1e-7, 5e-5, 1.2e-4 - 1e-9)
    )
    assert 0.999 * path.end_to_end_s <= worst <= path.end_to_end_s
    assert worst > path.end_to_end_s - 12_144 / 1e8


def test_burst_growth_is_needed_downstream() -> None:
    """X (40 Mbit/s, one-frame burst) crosses a 1 Gbit/s link U where H's 100 kB burst at
    priority 7 holds it back, then a 100 Mbit/s link V, where T shares its level. X reaches V
    bunched: T waits longer than a bound that gives X its declared burst at V allows, and
    within the bound that grows X's burst by its rate times its bound on U."""
    links = [NetworkLink(0, "U", 1e9, 0.0), NetworkLink(1, "V", 100e6, 0.0)]
    high = RoutedSlice(SliceSpec("H", 10e6, 7, 100_000.0, 1.0, 1518), (0,))
    cross = RoutedSlice(SliceSpec("X", 40e6, 6, 1518.0, 1.0, 1518), (0, 1))
    target = RoutedSlice(SliceSpec("T", 1e6, 6, 1518.0, 1.0, 1518), (1,))
    grown = analyze_paths(links, [high, cross, target])
    declared = analyze_paths(links, [high, replace(cross, path=(1,)), target])
    bound = grown.slices[2].hops[0].bound_s
    without_growth = declared.slices[2].hops[0].bound_s
    assert bound is not None and without_growth is not None
    worst = 0.0
    for step in range(100):  # T's burst at every 25 µs across X's bunching
        hops, e2e = _simulate(links, [high, cross, target], [1e-4, 0.0, step * 25e-6], 0.004)
        for path, measured_hops, measured in zip(grown.slices, hops, e2e, strict=True):
            assert path.end_to_end_s is not None and measured <= path.end_to_end_s + SLACK
            for hop, value in zip(path.hops, measured_hops, strict=True):
                assert hop.bound_s is not None and value <= hop.bound_s + SLACK
        worst = max(worst, hops[2][0])
    assert without_growth < worst <= bound
