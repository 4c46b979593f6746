"""The network in one document, for the topology page: switches with their health, links with
what they face and how loaded they are, and cables."""

from __future__ import annotations

from ipaddress import IPv4Network

from pydantic import BaseModel, Field

from sliceportal.schemas.choices import SwitchHealth, SwitchKind, SwitchState


class TopologySwitch(BaseModel):
    id: int
    name: str
    kind: SwitchKind
    state: SwitchState
    health: SwitchHealth
    health_detail: str = Field(description="why the switch has this health, in words")


class TopologyLink(BaseModel):
    """A link (egress port) and its far end: the switch and link across its cable, or the
    hosts behind it."""

    id: int
    name: str
    switch_id: int
    port: int
    capacity_bps: float
    cable_id: int | None
    far_switch_id: int | None = Field(description="the switch across the cable; null: hosts")
    far_link_id: int | None = Field(description="the link back from the far switch")
    propagation_s: float = Field(description="the cable's propagation delay; 0 toward hosts")
    host_ipv4_prefixes: list[IPv4Network]
    host_vlan_ids: list[int]
    slice_count: int
    reserved_bps: float = Field(description="the sum of the rate limits of the slices on it")
    throughput_bps: float | None = Field(
        description="what its slices forwarded at their latest samples (within live_window_s); "
        "null: no live sample"
    )
    utilisation: float | None = Field(
        description="throughput_bps / capacity_bps; null: no live sample"
    )


class TopologyCable(BaseModel):
    id: int
    name: str
    propagation_s: float
    a_link_id: int
    b_link_id: int


class Topology(BaseModel):
    switches: list[TopologySwitch]
    links: list[TopologyLink]
    cables: list[TopologyCable]
    live_window_s: float = Field(description="how old a sample may be to count as live")
