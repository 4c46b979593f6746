"""The network in one read for the topology page: switches with their health, links with their
far end (across a cable, or hosts), reserved rate and live throughput, and cables."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from sliceportal.core.config import Settings
from sliceportal.db.models import Cable, Link, Switch
from sliceportal.db.queries import fleet
from sliceportal.db.queries import topology as queries
from sliceportal.schemas.choices import SwitchHealth, SwitchState
from sliceportal.schemas.topology import Topology, TopologyCable, TopologyLink, TopologySwitch

LIVE_POLLS = 5
"""A link's throughput counts samples of its last this many poll periods (at least 10 s): a
switch not polled for longer shows no live data rather than an old figure."""


def live_window_s(settings: Settings) -> float:
    return max(10.0, LIVE_POLLS * settings.telemetry_poll_interval_s)


def switch_health(switch: Switch) -> tuple[SwitchHealth, str]:
    """Down when it does not answer; degraded when it answers but its last reconciliation
    failed or left it short of the portal's pipeline or entries; else healthy."""
    sync = switch.sync
    if switch.state is SwitchState.UNREACHABLE:
        return SwitchHealth.DOWN, (sync.last_error if sync and sync.last_error else "unreachable")
    if switch.state is SwitchState.UNKNOWN or sync is None:
        return SwitchHealth.UNKNOWN, "not contacted yet"
    if sync.last_error:
        return SwitchHealth.DEGRADED, sync.last_error
    if not sync.pipeline_in_sync:
        return SwitchHealth.DEGRADED, "does not run the portal's pipeline"
    if sync.entries_installed != sync.entries_desired:
        return SwitchHealth.DEGRADED, (
            f"holds {sync.entries_installed} of {sync.entries_desired} table entries"
        )
    return SwitchHealth.HEALTHY, "in sync"


def read_topology(session: Session, settings: Settings) -> Topology:
    window_s = live_window_s(settings)
    switches = session.scalars(select(Switch).order_by(Switch.id)).all()
    links = session.scalars(select(Link).order_by(Link.id)).all()
    cables = session.scalars(select(Cable).order_by(Cable.id)).all()
    loads = {row.link_id: row for row in fleet.link_loads(session)}
    throughputs = queries.link_throughputs(session, window_s)
    far: dict[int, tuple[Link, float]] = {}
    for cable in cables:
        a, b = cable.ends
        far[a.id], far[b.id] = (b, cable.propagation_s), (a, cable.propagation_s)

    def topology_link(link: Link) -> TopologyLink:
        far_link, propagation_s = far.get(link.id, (None, 0.0))
        load = loads.get(link.id)  # None: made after the read of the links
        throughput = throughputs.get(link.id)
        return TopologyLink(
            id=link.id,
            name=link.name,
            switch_id=link.switch_id,
            port=link.port,
            capacity_bps=link.capacity_bps,
            cable_id=link.cable_id,
            far_switch_id=None if far_link is None else far_link.switch_id,
            far_link_id=None if far_link is None else far_link.id,
            propagation_s=propagation_s,
            host_ipv4_prefixes=link.host_ipv4_prefixes,
            host_vlan_ids=link.host_vlan_ids,
            slice_count=0 if load is None else load.slices,
            reserved_bps=0.0 if load is None else load.reserved_bps,
            throughput_bps=throughput,
            utilisation=None if throughput is None else throughput / link.capacity_bps,
        )

    return Topology(
        switches=[topology_switch(s) for s in switches],
        links=[topology_link(link) for link in links],
        cables=[
            TopologyCable(
                id=c.id,
                name=c.name,
                propagation_s=c.propagation_s,
                a_link_id=c.a_link_id,
                b_link_id=c.b_link_id,
            )
            for c in cables
        ],
        live_window_s=window_s,
    )


def topology_switch(switch: Switch) -> TopologySwitch:
    health, detail = switch_health(switch)
    return TopologySwitch(
        id=switch.id,
        name=switch.name,
        kind=switch.kind,
        state=switch.state,
        health=health,
        health_detail=detail,
    )
