"""End-to-end bounds along ordered paths (`analyze_paths`): burst growth hop by hop, its fixed
point around cycles, the concatenation of leftover service curves, and the per-hop sum.

The worked examples are docs/analysis.md's ("End to end"); every expected number below is
computed by hand from the equations there (bits and seconds, τ = 1 µs), not by the code.
"""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from domain_strategies import capacities, slice_lists
from hypothesis import given, settings
from hypothesis import strategies as st

from sliceportal.domain import Model, SliceSpec, analyze
from sliceportal.domain.admission.endtoend import (
    MAX_ITERATIONS_LIMIT,
    NetworkAnalysis,
    PathResult,
    analyze_paths,
)
from sliceportal.domain.spec import (
    STANDARD_FRAMING,
    Framing,
    NetworkLink,
    RoutedSlice,
    SpecError,
    max_frame_bytes,
    slice_spec,
)

MS = 1e-3
MBPS = 1e6
TICK = 1e-6
FRAME_1500 = Framing.of_link(1482)  # largest frame 1500 bytes = 12,000 bits


def _links(
    *specs: tuple[str, float, float], framing: Framing = STANDARD_FRAMING
) -> list[NetworkLink]:
    return [
        NetworkLink(i, name, capacity, propagation, framing)
        for i, (name, capacity, propagation) in enumerate(specs)
    ]


def _route(links: list[NetworkLink], spec: SliceSpec, *names: str) -> RoutedSlice:
    ids = {link.name: link.id for link in links}
    return RoutedSlice(spec, tuple(ids[name] for name in names))


def _by_name(result: NetworkAnalysis) -> dict[str, PathResult]:
    return {path.name: path for path in result.slices}


# --- The worked example -------------------------------------------------------------------------


def _worked_example() -> tuple[list[NetworkLink], list[RoutedSlice]]:
    """Three 100 Mbit/s links X, A, B (propagation 0.5, 1 and 2 ms), 1500-byte frames:
    video (20 Mbit/s, 5 ms burst, priority 7) X → B, voice (10 Mbit/s, 10 ms, priority 6)
    A → B, iot (30 Mbit/s, 2 ms, priority 6) on B alone."""
    links = _links(
        ("X", 100 * MBPS, 0.5 * MS), ("A", 100 * MBPS, 1 * MS), ("B", 100 * MBPS, 2 * MS)
    )
    links = [replace(link, framing=FRAME_1500) for link in links]
    video = slice_spec("video", 20 * MBPS, 7, burst_limit_s=5 * MS, delay_target_s=5 * MS,
                       mtu_bytes=1482)  # fmt: skip
    voice = slice_spec("voice", 10 * MBPS, 6, burst_limit_s=10 * MS, delay_target_s=7.8 * MS,
                       mtu_bytes=1482)  # fmt: skip
    iot = slice_spec("iot", 30 * MBPS, 6, burst_limit_s=2 * MS, delay_target_s=10 * MS,
                     mtu_bytes=1482)  # fmt: skip
    slices = [
        _route(links, video, "X", "B"),
        _route(links, voice, "A", "B"),
        _route(links, iot, "B"),
    ]
    return links, slices


def test_worked_example_netcalc_by_hand() -> None:
    links, slices = _worked_example()
    result = analyze_paths(links, slices, Model.NETCALC)
    paths = _by_name(result)
    assert result.fixed_point == "exact"
    # Bursts in bits with the tick (L·τ): video 100,000 + 20, voice 100,000 + 10,
    # iot 60,000 + 30; every lower frame and best effort's: 12,000 bits.
    # X: video alone at 7: (100,020 + 12,000) / 1e8.   A: voice alone: (100,010 + 12,000) / 1e8
    d_x, d_a = 112_020 / 1e8, 112_010 / 1e8
    # B: video arrives with 100,000 + 20e6·d_x = 122,404 bits, voice with
    # 100,000 + 10e6·d_a = 111,201 bits, iot with its own 60,000.
    assert paths["video"].hops[1].burst_bytes * 8 == pytest.approx(122_404, rel=1e-12)
    assert paths["voice"].hops[1].burst_bytes * 8 == pytest.approx(111_201, rel=1e-12)
    d_b7 = (122_424 + 12_000) / 1e8  # 1.34424 ms
    d_b6 = (122_424 + 111_211 + 60_030 + 12_000) / 80e6  # 3.8208125 ms, R_6 = 80 Mbit/s
    assert [h.bound_s for h in paths["video"].hops] == pytest.approx([d_x, d_b7], rel=1e-12)
    assert [h.bound_s for h in paths["voice"].hops] == pytest.approx([d_a, d_b6], rel=1e-12)
    assert (d_x, d_a, d_b7, d_b6) == pytest.approx((1.1202e-3, 1.1201e-3, 1.34424e-3, 3.8208125e-3))

    # Per-hop sums, propagation added: video 2.46444 + 2.5 ms, voice 4.9409125 + 3 ms.
    assert paths["video"].bound.per_hop_sum_s == pytest.approx(4.96444 * MS, rel=1e-12)
    assert paths["voice"].bound.per_hop_sum_s == pytest.approx(7.9409125 * MS, rel=1e-12)

    # Concatenation. video: R = 1e8 and T = 12,000/1e8 = 0.12 ms at both hops (alone at 7);
    # one packetizer 12,000/1e8; its burst once, 100,020/1e8.
    video = 0.12 * MS + 0.12 * MS + 0.12 * MS + 1.0002 * MS + 2.5 * MS  # 3.8602 ms
    # voice: A: R = 1e8, T = 0.12 ms. B: R = 80e6 − 30e6 (iot shares its FIFO level) = 50e6,
    # T = (122,424 + 12,000 + 60,030)/80e6 = 2.430675 ms. Packetizer at A 0.12 ms; its burst
    # 100,010 bits at min R = 50e6: 2.0002 ms.
    voice = 0.12 * MS + 2.430675 * MS + 0.12 * MS + 2.0002 * MS + 3 * MS  # 7.670875 ms
    assert paths["video"].hops[1].service_rate_bps == pytest.approx(100 * MBPS)
    assert paths["voice"].hops[1].service_rate_bps == pytest.approx(50 * MBPS)
    assert paths["voice"].hops[1].service_latency_s == pytest.approx(2.430675 * MS, rel=1e-12)
    assert paths["video"].bound.concatenation_s == pytest.approx(video, rel=1e-12)
    assert paths["voice"].bound.concatenation_s == pytest.approx(voice, rel=1e-12)
    # The tighter result is offered: here the concatenation, for both.
    assert paths["video"].end_to_end_s == pytest.approx(3.8602 * MS, rel=1e-12)
    assert paths["voice"].end_to_end_s == pytest.approx(7.670875 * MS, rel=1e-12)
    assert paths["voice"].bound.method == "concatenation"
    # iot has one hop: its bound on B, plus B's 2 ms.
    assert paths["iot"].bound.concatenation_s is None
    assert paths["iot"].end_to_end_s == pytest.approx(5.8208125 * MS, rel=1e-12)
    # voice's 7.8 ms target is met only thanks to the concatenation (the sum is 7.94 ms).
    assert [p.meets_target for p in result.slices] == [True, True, True]
    assert result.admissible


def test_worked_example_harkous_by_hand() -> None:
    """The paper's equations per hop (no tick, no blocking frame), bursts grown the same way."""
    links, slices = _worked_example()
    paths = _by_name(analyze_paths(links, slices, Model.HARKOUS))
    # X: 100,000/1e8 = 1 ms; A: 1 ms. B: video 100,000 + 20e6·1 ms = 120,000 bits at 7:
    # 1.2 ms; level 6: 1.2 ms + (110,000 + 60,000)/80e6 = 3.325 ms.
    assert [h.bound_s for h in paths["video"].hops] == pytest.approx([1 * MS, 1.2 * MS])
    assert [h.bound_s for h in paths["voice"].hops] == pytest.approx([1 * MS, 3.325 * MS])
    assert paths["video"].end_to_end_s == pytest.approx(4.7 * MS)  # + 2.5 ms propagation
    assert paths["voice"].end_to_end_s == pytest.approx(7.325 * MS)  # + 3 ms
    assert paths["iot"].end_to_end_s == pytest.approx(5.325 * MS)  # + 2 ms
    assert all(p.bound.concatenation_s is None for p in paths.values())  # netcalc's only


def test_burst_growth_raises_the_downstream_bound() -> None:
    """Without its hop on A, voice reaches B with its declared burst: level 6 there is then
    (122,424 + 100,010 + 60,030 + 12,000)/80e6 = 294,464/80e6 = 3.6808 ms instead of
    3.8208125 ms (and iot, which never crossed another link, pays for voice's growth too)."""
    links, slices = _worked_example()
    grown = _by_name(analyze_paths(links, slices))
    shortened = [slices[0], replace(slices[1], path=(links[2].id,)), slices[2]]
    direct = _by_name(analyze_paths(links, shortened))
    assert direct["iot"].hops[0].bound_s == pytest.approx(3.6808 * MS, rel=1e-12)
    assert grown["iot"].hops[0].bound_s == pytest.approx(3.8208125 * MS, rel=1e-12)
    assert direct["voice"].hops[0].bound_s == pytest.approx(3.6808 * MS, rel=1e-12)
    # video at 7 does not see level 6's bursts: unchanged.
    assert direct["video"].hops[1].bound_s == grown["video"].hops[1].bound_s


def test_the_per_hop_sum_is_offered_where_it_is_tighter() -> None:
    """Two 100 Mbit/s links A → B, both slices at 7: small (1 Mbit/s, one 1500-byte frame of
    burst) shares its FIFO level with big (60 Mbit/s, 12,500 bytes). Its own leftover rate is
    then 40 Mbit/s, too slow for the concatenation to win; big's is 99 Mbit/s."""
    links = [replace(link, framing=FRAME_1500) for link in _links(("A", 1e8, 0), ("B", 1e8, 0))]
    small = SliceSpec("small", 1 * MBPS, 7, 1500.0, 1.0, 1500)
    big = SliceSpec("big", 60 * MBPS, 7, 12_500.0, 1.0, 1500)
    result = analyze_paths(links, [_route(links, small, "A", "B"), _route(links, big, "A", "B")])
    paths = _by_name(result)
    # A: (12,001 + 100,060 + 12,000)/1e8 = 1.24061 ms. B: small arrives with
    # 12,000 + 1e6·1.24061e-3 = 13,240.61 bits, big with 100,000 + 60e6·1.24061e-3 =
    # 174,436.6: (13,241.61 + 174,496.6 + 12,000)/1e8 = 1.9973821 ms.
    d_a, d_b = 1.24061 * MS, 1.9973821 * MS
    for name in ("small", "big"):
        assert [h.bound_s for h in paths[name].hops] == pytest.approx([d_a, d_b], rel=1e-12)
        assert paths[name].bound.per_hop_sum_s == pytest.approx(d_a + d_b, rel=1e-12)
    # small: T_A = (12,000 + 100,060)/1e8, T_B = (12,000 + 174,496.6)/1e8, R = 40e6:
    # 1.1206 + 1.864966 + 12,000/40e6 (0.3) + 12,001/40e6 (0.300025) = 3.585591 ms.
    small_concat = (1.1206 + 1.864966 + 0.3 + 0.300025) * MS
    assert paths["small"].bound.concatenation_s == pytest.approx(small_concat, rel=1e-12)
    assert paths["small"].end_to_end_s == pytest.approx(3.2379921 * MS, rel=1e-12)
    assert paths["small"].bound.method == "per-hop sum"
    # big: T_A = (12,000 + 12,001)/1e8, T_B = (12,000 + 13,241.61)/1e8, R = 99e6:
    # 0.24001 + 0.2524161 + 12,000/99e6 + 100,060/99e6 ms.
    big_concat = (0.24001 + 0.2524161) * MS + 12_000 / 99e6 + 100_060 / 99e6
    assert paths["big"].bound.concatenation_s == pytest.approx(big_concat, rel=1e-12)
    assert paths["big"].end_to_end_s == pytest.approx(big_concat, rel=1e-12)
    assert paths["big"].bound.method == "concatenation"


# --- Cycles -----------------------------------------------------------------------------------


def _ring(
    count: int, hops: int, capacity: float, rate: float, priority: int = 7
) -> tuple[list[NetworkLink], list[RoutedSlice]]:
    """`count` links in a ring, slice i entering at link i and crossing `hops` links."""
    links = _links(*((f"L{i}", capacity, 0.0) for i in range(count)))
    slices = [
        RoutedSlice(
            SliceSpec(f"s{i}", rate, priority, 12_500.0, 1.0),  # 100,000 bits, 1518-byte frames
            tuple((i + k) % count for k in range(hops)),
        )
        for i in range(count)
    ]
    return links, slices


def test_a_cycle_of_two_hop_paths_settles_on_the_fixed_point() -> None:
    """Three 100 Mbit/s links in a ring, s_i crossing L_i then L_{i+1} at 10 Mbit/s: each link
    carries one slice on its first hop and one on its second, so by symmetry every hop's bound
    x solves x = (2·100,010 + 10e6·x + 12,144)/1e8, x = 212,164/90e6."""
    links, slices = _ring(3, 2, 100 * MBPS, 10 * MBPS)
    result = analyze_paths(links, slices)
    x = 212_164 / 90e6
    assert result.fixed_point in {"exact", "certified"}
    for path in result.slices:
        for hop in path.hops:
            assert hop.bound_s is not None
            assert x * (1 - 1e-15) <= hop.bound_s <= x * (1 + 1e-8)
        assert path.bound.per_hop_sum_s == pytest.approx(2 * x, rel=1e-8)
        # Concatenation: at the first hop the other slice arrives grown (100,010 + 1e7·x),
        # at the second with its own burst; R = 90e6 at both; one packetizer 12,144/90e6.
        concat = (
            (12_144 + 100_010 + 1e7 * x) / 1e8
            + (12_144 + 100_010) / 1e8
            + 12_144 / 90e6
            + 100_010 / 90e6
        )
        assert path.bound.concatenation_s == pytest.approx(concat, rel=1e-8)
        assert path.end_to_end_s == pytest.approx(concat, rel=1e-8)


def test_a_slower_cycle_is_certified() -> None:
    """Four 80 Mbit/s links, four slices of 10 Mbit/s each crossing all four: every link
    carries bursts grown by 0, 1, 2 and 3 hops, x = (4·100,010 + 12,144 + 6·10e6·x)/80e6,
    x = 412,184/20e6 = 20.6092 ms (the growth feeds back with gain 60/80 = 0.75)."""
    links, slices = _ring(4, 4, 80 * MBPS, 10 * MBPS)
    result = analyze_paths(links, slices)
    x = 412_184 / 20e6
    assert result.fixed_point == "certified"
    assert result.iterations < 100
    for path in result.slices:
        for hop in path.hops:
            assert hop.bound_s is not None
            assert x * (1 - 1e-15) <= hop.bound_s <= x * (1 + 1e-8)


def test_a_cycle_that_keeps_growing_is_unbounded_and_spares_what_does_not_depend_on_it() -> None:
    """The same ring at priority 5 with 15 Mbit/s slices (gain 90/72 > 1 once a 8 Mbit/s slice
    takes priority 7 on L0) has no finite fixed point: its slices are unbounded. The
    priority-7 slice never waits for level 5's bursts and keeps its bound,
    (80,008 + 12,144)/80e6 = 1.1519 ms, and so does a slice on an unrelated link."""
    links, slices = _ring(4, 4, 80 * MBPS, 15 * MBPS, priority=5)
    links.append(NetworkLink(4, "Z", 80 * MBPS))
    high = RoutedSlice(SliceSpec("high", 8 * MBPS, 7, 10_000.0, 1.0), (0,))
    apart = RoutedSlice(SliceSpec("apart", 8 * MBPS, 3, 10_000.0, 1.0), (4,))
    result = analyze_paths(links, [*slices, high, apart], max_iterations=200)
    paths = _by_name(result)
    assert result.fixed_point == "capped"
    assert not result.admissible
    for name in ("s0", "s1", "s2", "s3"):
        assert paths[name].end_to_end_s is None and not paths[name].settled
        assert all(hop.bound_s is None for hop in paths[name].hops)
        assert not paths[name].meets_target
    assert paths["high"].settled
    assert paths["high"].end_to_end_s == pytest.approx(92_152 / 80e6, rel=1e-12)
    assert paths["apart"].end_to_end_s == pytest.approx((80_008 + 12_144) / 80e6, rel=1e-12)


# --- Properties -------------------------------------------------------------------------------

propagations = st.one_of(st.just(0.0), st.floats(min_value=0.0, max_value=0.05))
framings = st.sampled_from([STANDARD_FRAMING, Framing(1518, 24), Framing.of_link(9000)])


@st.composite
def one_hop_networks(draw: st.DrawFn) -> tuple[list[NetworkLink], list[RoutedSlice]]:
    """1-3 links, every slice on exactly one of them."""
    count = draw(st.integers(min_value=1, max_value=3))
    links = [
        NetworkLink(i, f"l{i}", draw(capacities), draw(propagations), draw(framings))
        for i in range(count)
    ]
    slices = draw(slice_lists(max_size=8))
    return links, [
        RoutedSlice(spec, (draw(st.integers(min_value=0, max_value=count - 1)),)) for spec in slices
    ]


@pytest.mark.parametrize("model", list(Model))
@settings(max_examples=200, deadline=None)
@given(network=one_hop_networks())
def test_a_one_hop_path_gives_exactly_what_analyze_gives(
    model: Model, network: tuple[list[NetworkLink], list[RoutedSlice]]
) -> None:
    links, slices = network
    result = analyze_paths(links, slices, model)
    assert [path.name for path in result.slices] == [routed.spec.name for routed in slices]
    for link in links:
        on_link = [i for i, routed in enumerate(slices) if routed.path == (link.id,)]
        alone = analyze([slices[i].spec for i in on_link], link.capacity_bps, model, link.framing)
        for i, expected in zip(on_link, alone.slices, strict=True):
            path = result.slices[i]
            overflow = alone.core.levels.overflow[expected.priority]
            assert path.hops[0].bound_s == expected.worst_case_delay_s
            if overflow:  # harkous gives a finite number; the path is unbounded
                assert path.end_to_end_s is None
            elif expected.worst_case_delay_s is None:
                assert path.end_to_end_s is None
            else:
                assert path.end_to_end_s == expected.worst_case_delay_s + link.propagation_s
            if link.propagation_s == 0.0:
                assert path.meets_target == expected.meets_target
                assert path.end_to_end_s == (None if overflow else expected.worst_case_delay_s)
    assert result.fixed_point == "exact"


@st.composite
def networks(draw: st.DrawFn) -> tuple[list[NetworkLink], list[RoutedSlice]]:
    """2-4 links, slices on random ordered paths of 1-3 distinct links (cycles included)."""
    count = draw(st.integers(min_value=2, max_value=4))
    links = [
        NetworkLink(i, f"l{i}", draw(capacities), draw(propagations), draw(framings))
        for i in range(count)
    ]
    specs = draw(slice_lists(min_size=1, max_size=6))
    routed = []
    for spec in specs:
        hops = draw(st.integers(min_value=1, max_value=min(3, count)))
        path = draw(st.permutations(range(count)))[:hops]
        routed.append(RoutedSlice(spec, tuple(path)))
    return links, routed


@pytest.mark.parametrize("model", list(Model))
@settings(max_examples=150, deadline=None)
@given(network=networks())
def test_every_hop_is_analyze_on_its_link_with_the_bursts_that_reach_it(
    model: Model, network: tuple[list[NetworkLink], list[RoutedSlice]]
) -> None:
    """Each hop's bound is `analyze` of the link with each slice's burst as it arrives there,
    and that burst is the declared one grown by the rate times the bounds before it."""
    links, slices = network
    result = analyze_paths(links, slices, model, max_iterations=60)
    if result.fixed_point != "exact":
        return  # certified bounds sit a hair above the bursts they were grown from
    for path in result.slices:
        spec = path.spec
        grown = 0.0
        before: list[float] = []
        for hop in path.hops:
            assert hop.burst_bytes == spec.burst_bytes + spec.rate_bps * grown / 8
            if hop.bound_s is None or not hop.fits:
                before.append(math.inf)
            else:
                before.append(hop.bound_s)
            grown = math.fsum(before)
    for link in links:
        crossing = [
            (path, next(h for h in path.hops if h.link_id == link.id))
            for path in result.slices
            if any(h.link_id == link.id for h in path.hops)
        ]
        if any(not math.isfinite(hop.burst_bytes) for _, hop in crossing):
            continue
        specs = [replace(path.spec, burst_bytes=hop.burst_bytes) for path, hop in crossing]
        alone = analyze(specs, link.capacity_bps, model, link.framing)
        for (_, hop), expected in zip(crossing, alone.slices, strict=True):
            assert hop.bound_s == expected.worst_case_delay_s


@settings(max_examples=150, deadline=None)
@given(network=networks())
def test_the_offered_bound_is_the_tighter_of_the_sum_and_the_concatenation(
    network: tuple[list[NetworkLink], list[RoutedSlice]],
) -> None:
    links, slices = network
    for path in analyze_paths(links, slices, Model.NETCALC, max_iterations=60).slices:
        bound = path.bound
        found = [v for v in (bound.per_hop_sum_s, bound.concatenation_s) if v is not None]
        assert bound.total_s == (min(found) if found else None)
        if len(path.hops) == 1:
            assert bound.concatenation_s is None
        if bound.per_hop_sum_s is not None and len(path.hops) > 1 and path.settled:
            assert bound.concatenation_s is not None  # bounded hops: the concatenation is too
        if bound.total_s is not None:
            propagation = math.fsum(hop.propagation_s for hop in path.hops)
            assert bound.total_s >= propagation
            assert path.meets_target == (bound.total_s <= path.spec.delay_target_s)
        else:
            assert not path.meets_target


@settings(max_examples=100, deadline=None)
@given(network=networks(), extra=st.data())
def test_a_longer_path_upstream_never_lowers_a_bound(
    network: tuple[list[NetworkLink], list[RoutedSlice]], extra: st.DataObject
) -> None:
    """Prepending a link to one slice's path only grows its burst downstream: no hop of any
    slice gets a smaller bound (exact fixed points only; unbounded counts as infinite)."""
    links, slices = network
    which = extra.draw(st.integers(min_value=0, max_value=len(slices) - 1))
    unused = [link.id for link in links if link.id not in slices[which].path]
    if not unused:
        return
    longer = list(slices)
    longer[which] = replace(slices[which], path=(extra.draw(st.sampled_from(unused)),
                                                 *slices[which].path))  # fmt: skip
    before = analyze_paths(links, slices, max_iterations=60)
    after = analyze_paths(links, longer, max_iterations=60)
    if "certified" in (before.fixed_point, after.fixed_point):
        return
    for old, new in zip(before.slices, after.slices, strict=True):
        new_hops = new.hops[1:] if new.name == slices[which].spec.name else new.hops
        for old_hop, new_hop in zip(old.hops, new_hops, strict=True):
            old_bound = math.inf if old_hop.bound_s is None else old_hop.bound_s
            new_bound = math.inf if new_hop.bound_s is None else new_hop.bound_s
            assert new_bound >= old_bound


# --- Validation -------------------------------------------------------------------------------


def _spec(name: str = "s") -> SliceSpec:
    return SliceSpec(name, MBPS, 1, 1000.0, 1.0)


@pytest.mark.parametrize(
    ("links", "slices", "message"),
    [
        ([NetworkLink(0, "a", 1e9)], [RoutedSlice(_spec(), ())],
         "slices[0].path: must name at least one link"),
        ([NetworkLink(0, "a", 1e9)], [RoutedSlice(_spec(), (0, 3))],
         "slices[0].path[1]: unknown link id 3"),
        ([NetworkLink(0, "a", 1e9), NetworkLink(1, "b", 1e9)], [RoutedSlice(_spec(), (0, 1, 0))],
         "slices[0].path[2]: link 'a' appears twice (already path[0]): a path crosses each "
         "link once"),
        ([NetworkLink(0, "a", 1e9), NetworkLink(0, "b", 1e9)], [],
         "links[1].id: duplicate id 0 (links[0])"),
        ([NetworkLink(0, "a", 1e9), NetworkLink(1, "a", 1e9)], [],
         "links[1].name: duplicate name 'a' (already used by links[0])"),
        ([NetworkLink(0, "a", 1e9)], [RoutedSlice(_spec(), (0,)), RoutedSlice(_spec(), (0,))],
         "slices[1].name: duplicate name 's' (already used by slices[0])"),
    ],
)  # fmt: skip
def test_networks_that_do_not_fit_together_are_refused(
    links: list[NetworkLink], slices: list[RoutedSlice], message: str
) -> None:
    with pytest.raises(SpecError) as raised:
        analyze_paths(links, slices)
    assert str(raised.value) == message


def test_links_validate_themselves() -> None:
    with pytest.raises(SpecError, match="propagation_s: must be at least 0"):
        NetworkLink(0, "a", 1e9, -1.0)
    with pytest.raises(SpecError, match="capacity_bps: must be greater than 0"):
        NetworkLink(0, "a", 0.0)
    assert NetworkLink(0, "a", 1e9).framing.max_frame_bytes == max_frame_bytes(1500)


@pytest.mark.parametrize("cap", [0, -1, 1.5, True, "9", MAX_ITERATIONS_LIMIT + 1, 10**12])
def test_the_iteration_cap_is_an_integer_from_1_to_its_limit(cap: object) -> None:
    """A cycle whose gain is exactly 1 never settles: only the cap ends it, so a huge one
    would run (nearly) forever."""
    links = [NetworkLink(0, "a", 1e9)]
    with pytest.raises(SpecError) as raised:
        analyze_paths(links, [RoutedSlice(_spec(), (0,))], max_iterations=cap)  # type: ignore[arg-type]
    assert (
        str(raised.value) == f"max_iterations: must be an integer from 1 to {MAX_ITERATIONS_LIMIT}"
    )


def test_the_largest_iteration_cap_costs_nothing_once_the_growth_settles() -> None:
    """The cap only bounds networks that never settle; an acyclic one stops at its first
    unchanged round."""
    links, slices = _worked_example()
    result = analyze_paths(links, slices, max_iterations=MAX_ITERATIONS_LIMIT)
    assert result.fixed_point == "exact" and result.iterations <= len(links) + 1
