"""Headroom and burst caps: how far one slice's rate or burst can move before a constraint breaks.

The constraints that one slice's rate and burst touch are the per-hop ones of the links it
crosses and the end-to-end ones of the slices sharing those links at its priority or below
(levels above it see neither its rate nor its burst). Each step of a search re-evaluates only
those links' eight levels and those end-to-end sums: O(links per slice × levels) per step,
independent of how many slices share the links.
"""

from __future__ import annotations

from dataclasses import dataclass

from sliceportal.domain.reports.constraints import Breach, NetworkConstraints, largest_passing
from sliceportal.domain.reports.document import NO_HEADROOM, Headroom
from sliceportal.domain.reports.network import burst_bytes


@dataclass(frozen=True, slots=True)
class HeadroomSearch:
    """The headroom and the constraints that stop it (with the links they sit on)."""

    headroom: Headroom
    rate_breach: Breach | None
    burst_breach: Breach | None


NOTHING = HeadroomSearch(NO_HEADROOM, None, None)


def slice_headroom(constraints: NetworkConstraints, slice_index: int) -> HeadroomSearch:
    """Extra rate (same burst limit) and extra burst (same rate) the slice could take, and the
    constraint that stops each; nothing when a constraint it touches is already broken."""
    net = constraints.net
    links = net.paths[slice_index]
    if (
        not links
        or constraints.violation({}, links, constraints.groups_touching(links)) is not None
    ):
        return NOTHING
    declared = net.slices[slice_index]
    groups = constraints.binding_groups(
        links, constraints.groups_touching(links, declared.priority)
    )
    rate, burst = declared.rate_bps, net.burst_bytes(slice_index)

    def with_extra_rate(extra: float) -> Breach | None:
        grown = rate + extra
        changed = constraints.with_slice(
            slice_index, grown, burst_bytes(grown, declared.burst_limit_s)
        )
        return constraints.violation(changed, links, groups)

    def with_extra_burst(extra: float) -> Breach | None:
        changed = constraints.with_slice(slice_index, rate, burst + extra)
        return constraints.violation(changed, links, groups)

    rate_room = min(net.links[i].capacity_bps - constraints.levels[i].total_rate_bps for i in links)
    # Its own level waits for its whole burst at no more than the capacity.
    burst_room = min(net.links[i].capacity_bps for i in links) * declared.delay_target_s / 8.0
    extra_rate, rate_by = largest_passing(with_extra_rate, 0.0, max(rate_room, 0.0))
    extra_burst, burst_by = largest_passing(with_extra_burst, 0.0, burst_room)
    headroom = Headroom(extra_rate, extra_burst, _text(rate_by), _text(burst_by))
    return HeadroomSearch(headroom, rate_by, burst_by)


def burst_cap(constraints: NetworkConstraints, slice_index: int) -> float | None:
    """The largest burst (bytes, at most today's) with which every constraint the slice touches
    holds, or ``None`` when even no burst at all would not do."""
    net = constraints.net
    links = net.paths[slice_index]
    groups = constraints.binding_groups(links, constraints.groups_touching(links))
    rate, burst = net.slices[slice_index].rate_bps, net.burst_bytes(slice_index)

    def with_burst(new_burst: float) -> Breach | None:
        return constraints.violation(
            constraints.with_slice(slice_index, rate, new_burst), links, groups
        )

    if with_burst(0.0) is not None:
        return None
    return largest_passing(with_burst, 0.0, burst)[0]


def _text(breach: Breach | None) -> str | None:
    return None if breach is None else breach.text
