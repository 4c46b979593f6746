from __future__ import annotations

from ipaddress import IPv4Network

import pytest

from sliceportal.domain import dataplane as dp
from sliceportal.domain.matchclash import PlacedMatch, first_clash, split_route

EXITS = {(1, 1)}
"""The candidate leaves switch 1 through port 1."""


def placed(
    *prefixes: str,
    vlan_id: int | None = None,
    switch_id: int = 1,
    port: int = 1,
    slice_id: int = 1,
) -> PlacedMatch:
    networks = tuple(IPv4Network(p) for p in prefixes)
    return PlacedMatch(slice_id, f"s{slice_id}", switch_id, port, vlan_id, networks)


def nets(*prefixes: str) -> list[IPv4Network]:
    return [IPv4Network(p) for p in prefixes]


def test_identical_prefix_clashes_and_names_the_key() -> None:
    other = placed("10.0.0.0/24", "10.1.0.0/24")
    clash = first_clash(None, nets("10.2.0.0/24", "10.1.0.0/24"), EXITS, [other])
    assert clash is not None
    assert clash.field == "ipv4_prefixes"
    assert clash.other == other
    port = dp.FieldMatch("egress_port", dp.MatchKind.EXACT, 1)
    prefix = dp.FieldMatch("ipv4_dst", dp.MatchKind.LPM, int(IPv4Network("10.1.0.0/24")[0]), 24)
    assert clash.key == (dp.PREFIX_CLASSIFIER, (port, prefix))


@pytest.mark.parametrize(
    ("vlan_id", "prefixes", "other"),
    [
        pytest.param(None, ["10.0.0.0/16"], placed("10.0.0.0/24"), id="longer-prefix"),
        pytest.param(None, ["10.0.0.0/24"], placed("10.0.0.0/24", switch_id=2), id="other-switch"),
        pytest.param(7, ["10.0.0.0/24"], placed("10.0.0.0/24"), id="vlan-vs-prefix"),
        pytest.param(None, ["10.0.0.0/24"], placed("10.0.0.0/24", vlan_id=7), id="prefix-vs-vlan"),
        pytest.param(7, [], placed(vlan_id=8), id="other-vlan"),
        pytest.param(7, [], placed("10.0.0.0/24", vlan_id=7), id="bare-vlan-vs-vlan-prefix"),
    ],
)
def test_different_keys_do_not_clash(
    vlan_id: int | None, prefixes: list[str], other: PlacedMatch
) -> None:
    assert first_clash(vlan_id, nets(*prefixes), EXITS, [other]) is None


def test_bare_vlan_is_the_vlan_with_the_default_prefix() -> None:
    clash = first_clash(7, [], EXITS, [placed("0.0.0.0/0", vlan_id=7)])
    assert clash is not None and clash.field == "vlan_id"
    clash = first_clash(7, nets("0.0.0.0/0"), EXITS, [placed(vlan_id=7)])
    assert clash is not None and clash.field == "ipv4_prefixes"


def test_first_clashing_slice_in_order() -> None:
    others = [
        placed("10.9.0.0/24", port=2, slice_id=1),
        placed("10.0.0.0/24", slice_id=2),
        placed("10.0.0.0/24", slice_id=3),
    ]
    clash = first_clash(None, nets("10.0.0.0/24"), EXITS, others)
    assert clash is not None and clash.other.slice_id == 2


@pytest.mark.parametrize("vlan_id", [None, 7])
def test_a_prefix_routed_out_of_another_port_of_the_switch_clashes(vlan_id: int | None) -> None:
    """Routes are keyed by prefix alone: whatever the VLANs, one port per prefix and switch."""
    other = placed("10.0.0.0/24", "10.3.0.0/24", port=2, vlan_id=9)
    clash = first_clash(vlan_id, nets("10.3.0.0/24"), EXITS, [other])
    assert clash is not None and clash.field == "ipv4_prefixes" and clash.other == other
    assert clash.key == dp.route_key(IPv4Network("10.3.0.0/24"))
    assert clash.key == dp.route_entry(dp.Route("10.3.0.0/24", 2, "02:00:00:00:00:02")).key


def test_the_same_prefix_out_of_the_same_port_shares_the_route() -> None:
    assert first_clash(None, nets("10.0.0.0/24"), EXITS, [placed("10.0.0.0/24", vlan_id=7)]) is None


def test_a_slice_with_prefixes_may_not_leave_a_switch_through_two_ports() -> None:
    assert split_route(nets("10.0.0.0/24"), [(1, 1), (1, 2), (2, 1)]) == 1
    assert split_route(nets("10.0.0.0/24"), [(1, 1), (2, 1)]) is None
    assert split_route([], [(1, 1), (1, 2)]) is None  # a bare VLAN slice routes nothing


def test_keys_are_the_entries_keys() -> None:
    """The API refuses exactly what dataplane_entries would refuse on the switch."""
    slice_ = dp.DataplaneSlice(
        dp_sid=3,
        name="a",
        vlan_id=5,
        ipv4_dst_prefixes=("10.0.0.0/8", "0.0.0.0/0"),
        rate_bps=10e6,
        burst_limit_s=0.01,
        priority=7,
        scheme=dp.Scheme.TAIL_DROP,
        marking_threshold_s=None,
        egress_port=4,
    )
    classifiers = [e.key for e in dp.slice_entries(slice_) if e.table != dp.SLICE_POLICY]
    assert list(dp.classifier_keys(4, 5, nets("10.0.0.0/8", "0.0.0.0/0"))) == classifiers
