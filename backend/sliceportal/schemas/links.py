from __future__ import annotations

import datetime as dt
from ipaddress import IPv4Network
from typing import Annotated

from pydantic import AfterValidator, Field, Strict

from sliceportal.domain import Model
from sliceportal.domain.spec import (
    MAX_CAPACITY_BPS,
    MAX_FRAME_OVERHEAD_BYTES,
    MAX_LINK_PORT,
    MAX_MTU_BYTES,
    MAX_QUEUES,
    MAX_VLAN_ID,
    MIN_MTU_BYTES,
    MIN_QUEUES,
    MIN_RATE_BPS,
    MIN_VLAN_ID,
)
from sliceportal.schemas.choices import CableEnd
from sliceportal.schemas.common import (
    BodyId,
    Description,
    InputModel,
    Name,
    Page,
    PatchModel,
    PublicModel,
    sorted_once_each,
)

Port = Annotated[int, Strict(), Field(ge=0, le=MAX_LINK_PORT)]
Capacity = Annotated[
    float,
    Strict(),
    Field(
        ge=MIN_RATE_BPS,
        le=MAX_CAPACITY_BPS,
        description="bit/s, as `frame_overhead_bytes` says what it counts",
    ),
]
QueueCount = Annotated[
    int,
    Strict(),
    Field(
        ge=MIN_QUEUES,
        le=MAX_QUEUES,
        description="strict-priority queues; best effort (priority 0) keeps one, so the "
        "slices may use queue_count - 1 priority levels",
    ),
]
Mtu = Annotated[int, Strict(), Field(ge=MIN_MTU_BYTES, le=MAX_MTU_BYTES)]
FRAME_OVERHEAD = (
    "bytes a frame costs on the wire beyond what the data plane counts: 0 when capacity_bps "
    "counts frame bytes as the data plane does (Ethernet header, VLAN tag, IP packet), 24 when "
    "it is the line rate (preamble and start delimiter, FCS, inter-frame gap)"
)
FrameOverhead = Annotated[
    int, Strict(), Field(ge=0, le=MAX_FRAME_OVERHEAD_BYTES, description=FRAME_OVERHEAD)
]
HostPrefixes = Annotated[
    list[IPv4Network],
    Field(
        max_length=256,
        description="IPv4 prefixes of the hosts behind a port that faces hosts (no host bits), "
        "each once; sorted. Only on a link that is no cable's end.",
    ),
    AfterValidator(sorted_once_each),
]
HostVlanIds = Annotated[
    list[Annotated[int, Strict(), Field(ge=MIN_VLAN_ID, le=MAX_VLAN_ID)]],
    Field(
        max_length=256,
        description="VLANs of the hosts behind a port that faces hosts, each once; sorted. "
        "Only on a link that is no cable's end.",
    ),
    AfterValidator(sorted_once_each),
]
MODEL = (
    "the bound admission enforces: netcalc (the sound one) or harkous (the paper's eq. 3, "
    "not an upper bound)"
)


class LinkCreate(InputModel):
    switch_id: BodyId
    name: Name
    description: Description = ""
    port: Port
    capacity_bps: Capacity
    queue_count: QueueCount = MAX_QUEUES
    model: Model | None = Field(
        default=None, description=f"{MODEL}; default: the server's default_model (netcalc)"
    )
    mtu_bytes: Mtu | None = Field(default=None, description="default: the server's MTU setting")
    frame_overhead_bytes: FrameOverhead = 0
    host_ipv4_prefixes: HostPrefixes = []
    host_vlan_ids: HostVlanIds = []


class LinkUpdate(PatchModel):
    """The switch of a link cannot change: delete and recreate it instead; nor its cable, which
    is made and removed as a whole (`/cables`)."""

    name: Name | None = None
    description: Description | None = None
    port: Port | None = None
    capacity_bps: Capacity | None = None
    queue_count: QueueCount | None = None
    model: Model | None = Field(default=None, description=MODEL)
    mtu_bytes: Mtu | None = None
    frame_overhead_bytes: FrameOverhead | None = None
    host_ipv4_prefixes: HostPrefixes | None = None
    host_vlan_ids: HostVlanIds | None = None


class LinkPublic(PublicModel):
    id: int
    switch_id: int
    name: str
    description: str
    port: int
    capacity_bps: float
    queue_count: int
    model: Model
    mtu_bytes: int
    frame_overhead_bytes: int = Field(description=FRAME_OVERHEAD)
    cable_id: int | None = Field(
        description="the cable this link is one direction of; null: the port faces hosts"
    )
    cable_end: CableEnd | None = Field(description="which end of its cable the link leaves from")
    host_ipv4_prefixes: list[IPv4Network]
    host_vlan_ids: list[int]
    created_at: dt.datetime
    updated_at: dt.datetime


LinksPublic = Page[LinkPublic]
