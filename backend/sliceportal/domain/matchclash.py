"""Which slices would claim the same classifier entry on a switch, decided before deployment.

A switch holds one entry per classifier key (`dataplane.classifier_keys`: egress port, VLAN if
any, destination prefix), so two slices producing the same key on one egress port cannot both
be installed. Only identical keys clash: prefixes that overlap with different lengths
(10.0.0.0/8 and 10.1.0.0/16) are two entries, and LPM sends each packet to the longer one, as
an operator carving a slice out of a bigger one means. A VLAN slice and a slice without VLAN
never clash either: they live in different tables, and a packet the VLAN table matches never
reaches the prefix table (docs/dataplane.md).

Routes are keyed by prefix alone (`dataplane.route_key`): a switch sends one destination prefix
out of one port, so two slices listing the same prefix on one switch must leave it through the
same port (they then share the route), whatever their VLANs; and a slice listing prefixes may
not cross two links of one switch.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from ipaddress import IPv4Network

from sliceportal.domain.dataplane import EntryKey, classifier_keys, route_key


@dataclass(frozen=True)
class PlacedMatch:
    """Another slice's match where it leaves switch `switch_id` through `egress_port`."""

    slice_id: int
    name: str
    switch_id: int
    egress_port: int
    vlan_id: int | None
    ipv4_prefixes: tuple[IPv4Network, ...]


@dataclass(frozen=True)
class MatchClash:
    """A key the candidate would share with `other`; `field` is the candidate's field to change:
    `ipv4_prefixes` when it lists prefixes, `vlan_id` when its whole match is a bare VLAN."""

    field: str
    key: EntryKey
    other: PlacedMatch


def first_clash(
    vlan_id: int | None,
    ipv4_prefixes: Sequence[IPv4Network],
    exits: Collection[tuple[int, int]],
    placed: Iterable[PlacedMatch],
) -> MatchClash | None:
    """The first of `placed` (in order) that holds a classifier key of a slice matching
    `vlan_id`/`ipv4_prefixes` and leaving through `exits` (switch id, egress port), or routes
    one of its prefixes out of another port of one of those switches; or None."""
    field = "ipv4_prefixes" if ipv4_prefixes else "vlan_id"
    ports = exit_ports(exits)
    prefixes = frozenset(ipv4_prefixes)
    mine: dict[int, frozenset[EntryKey]] = {}
    for other in placed:
        port = other.egress_port
        routed = ports.get(other.switch_id)
        if routed is None:
            continue
        if port not in routed:
            shared = sorted(prefixes.intersection(other.ipv4_prefixes))
            if shared:
                return MatchClash("ipv4_prefixes", route_key(shared[0]), other)
            continue
        if port not in mine:
            mine[port] = frozenset(classifier_keys(port, vlan_id, ipv4_prefixes))
        for key in classifier_keys(port, other.vlan_id, other.ipv4_prefixes):
            if key in mine[port]:
                return MatchClash(field, key, other)
    return None


def exit_ports(exits: Iterable[tuple[int, int]]) -> dict[int, set[int]]:
    """Switch id -> the egress ports a slice leaves it through."""
    ports: dict[int, set[int]] = {}
    for switch_id, port in exits:
        ports.setdefault(switch_id, set()).add(port)
    return ports


def split_route(
    ipv4_prefixes: Sequence[IPv4Network], exits: Iterable[tuple[int, int]]
) -> int | None:
    """A switch the slice would leave through two ports while listing prefixes (each prefix
    can be routed out of only one of them), or None."""
    if not ipv4_prefixes:
        return None
    return next(
        (switch for switch, ports in sorted(exit_ports(exits).items()) if len(ports) > 1), None
    )
