"""Slice paths (`domain.paths`): what is a path, and the proposal's search, on a small network
whose every path is listed by hand; and how admission judges a candidate path
(`domain.admission.route`: the hops' bounds plus their propagation).

    s1 --1/2-- s2 --5/6-- s4 -- 11 (hosts)
     \\         |9/10     /
      --3/4-- s3 --7/8---

Link ids a/b: a leaves the left (or upper) switch, b comes back. From s1 out of link 11 the
paths are, fewest hops first: (1, 5, 11), (3, 7, 11); then (1, 9, 7, 11), (3, 10, 5, 11).
"""

from __future__ import annotations

import math

import pytest

from sliceportal.domain import Model, SliceSpec
from sliceportal.domain.admission import LinkLoad, LinkParams, Loads, PathSlice, route, summary
from sliceportal.domain.paths import (
    PathError,
    PortLink,
    Verdict,
    check_path,
    is_path,
    propose_path,
    simple_paths,
)

CABLES = {1: (1, 2), 3: (1, 3), 5: (2, 4), 7: (3, 4), 9: (2, 3)}
"""Cable by its first link id: (switch of that link, switch of the link id + 1)."""


def network() -> dict[int, PortLink]:
    links = {11: PortLink(11, "s4/h", 4, None)}
    for first, (a, b) in CABLES.items():
        links[first] = PortLink(first, f"s{a}-s{b}", a, b)
        links[first + 1] = PortLink(first + 1, f"s{b}-s{a}", b, a)
    return links


def test_simple_paths_fewest_hops_first() -> None:
    found = list(simple_paths(network(), 1, 11))
    assert found == [(1, 5, 11), (3, 7, 11), (1, 9, 7, 11), (3, 10, 5, 11)]


def test_simple_paths_avoid_a_cable() -> None:
    assert list(simple_paths(network(), 1, 11, avoid=frozenset({5, 6}))) == [
        (3, 7, 11),
        (1, 9, 7, 11),
    ]


def test_simple_paths_on_the_egress_switch_is_one_hop() -> None:
    assert list(simple_paths(network(), 4, 11)) == [(11,)]


def test_simple_paths_unknown_egress() -> None:
    assert list(simple_paths(network(), 1, 99)) == []


@pytest.mark.parametrize("path", [(1, 5, 11), (3, 10, 5, 11), (11,), (2,)])
def test_check_path_accepts(path: tuple[int, ...]) -> None:
    check_path(path, network())
    assert is_path(path, network())


@pytest.mark.parametrize(
    ("path", "index", "says"),
    [
        ((), None, "at least one link"),
        ((1, 99), 1, "link 99 does not exist"),
        ((1, 7), 1, "leads to switch 2, not to switch 3"),
        ((11, 1), 1, "is no cable's end"),
        ((1, 9, 10), 2, "leads back to switch 2"),
        ((1, 9, 7, 8), 3, "leads back to switch 3"),
        ((1, 2, 3), 2, "leaves switch 1 again"),
    ],
)
def test_check_path_refuses(path: tuple[int, ...], index: int | None, says: str) -> None:
    with pytest.raises(PathError) as refused:
        check_path(path, network())
    assert refused.value.index == index
    assert says in refused.value.message
    assert not is_path(path, network())


def test_propose_prefers_fewest_hops_then_lowest_bound() -> None:
    # per-link bounds in ms, summed by hand: (1,5,11) = 1+4+1 = 6, (3,7,11) = 2+2+1 = 5
    ms = {1: 1.0, 3: 2.0, 5: 4.0, 7: 2.0, 9: 0.1, 10: 0.1, 11: 1.0}
    proposal = propose_path(network(), 1, 11, lambda path: Verdict(sum(ms[i] for i in path)))
    assert proposal.path == (3, 7, 11)
    assert proposal.bound_s == 5.0
    assert proposal.refused == ()


def test_propose_takes_a_longer_path_when_the_short_ones_are_refused() -> None:
    def check(path: tuple[int, ...]) -> Verdict:
        if len(path) == 3:
            return Verdict(None, f"full: {path}")
        return Verdict(float(path[0]))

    proposal = propose_path(network(), 1, 11, check)
    assert proposal.path == (1, 9, 7, 11)
    assert [path for path, _ in proposal.refused] == [(1, 5, 11), (3, 7, 11)]


def test_propose_none_lists_every_refusal() -> None:
    proposal = propose_path(network(), 1, 11, lambda path: Verdict(None, "no"))
    assert proposal.path is None
    assert len(proposal.refused) == 4
    assert not proposal.truncated


def test_propose_stops_at_the_candidate_cap() -> None:
    proposal = propose_path(network(), 1, 11, lambda path: Verdict(None, "no"), max_candidates=2)
    assert proposal.path is None
    assert len(proposal.refused) == 2
    assert proposal.truncated


def test_propose_no_route() -> None:
    proposal = propose_path(network(), 1, 11, lambda path: Verdict(0.0), avoid=frozenset({1, 3}))
    assert proposal.path is None
    assert proposal.refused == ()


def _two_hops(propagation_s: float) -> tuple[dict[int, LinkParams], Loads, SliceSpec]:
    """Links 1 and 2 (100 Mbit/s, netcalc) each carrying one slice of 10 Mbit/s."""
    spec = SliceSpec("s", 10e6, 7, 10e6 * 0.002 / 8, 0.01, 1500)
    params = {
        i: LinkParams(i, f"l{i}", 100e6, Model.NETCALC, 8, 1500, 0, propagation_s) for i in (1, 2)
    }
    loads = Loads({i: LinkLoad.empty().plus(spec) for i in (1, 2)}, {})
    return params, loads, spec


def test_route_adds_the_propagation_of_every_hop_to_the_path_bound() -> None:
    params, loads, _ = _two_hops(0.0)
    bound, found = route(params, loads, PathSlice(1, "s", 7, None, (1, 2)))
    assert found is None
    hops = [hop.bound_s for hop in bound.hops]
    assert all(hop is not None for hop in hops)
    slow, _, _ = _two_hops(0.004)
    slower, _ = route(slow, loads, PathSlice(1, "s", 7, None, (1, 2)))
    assert slower.total_s == pytest.approx(math.fsum(h for h in hops if h) + 0.008)


def test_route_refuses_a_target_the_propagation_alone_breaks() -> None:
    params, loads, _ = _two_hops(0.004)
    bound, found = route(params, loads, PathSlice(1, "s", 7, 0.005, (1, 2)))
    assert found is not None and not found.rejected
    assert [path.name for path, _ in found.missed] == ["s"]
    assert "end-to-end worst-case delay" in summary(found)
    assert bound.total_s is not None and bound.total_s > 0.008
