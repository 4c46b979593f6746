"""Slice bodies. Per-field limits live here; rules across fields (a match is required, the ECN
threshold within the burst limit, …) are checked by `services.slices` on the merged state, so
a create and a partial update obey the same rules.
"""

from __future__ import annotations

import datetime as dt
from ipaddress import IPv4Network
from typing import Annotated, Any

from pydantic import AfterValidator, ConfigDict, Field, Strict, model_validator

from sliceportal.domain.abc import (
    AVERAGE_MEMORY_DEFAULT_S,
    MEMORY_MAX_S,
    MEMORY_MIN_S,
    METER_MEMORY_DEFAULT_S,
    PAPER_THRESHOLDS_PACKETS,
    REFERENCE_RATE_DEFAULT_BPS,
    REFERENCE_RATE_MAX_BPS,
    REFERENCE_RATE_MIN_BPS,
)
from sliceportal.domain.codel import INTERVAL_DEFAULT_S, INTERVAL_MIN_S, TARGET_DEFAULT_S
from sliceportal.domain.spec import (
    LOWEST_SLICE_PRIORITY,
    MAX_BURST_LIMIT_S,
    MAX_DELAY_TARGET_S,
    MAX_DP_SID,
    MAX_MTU_BYTES,
    MAX_RATE_BPS,
    MAX_SLICE_BURST_BYTES,
    MAX_SLICE_RATE_BPS,
    MAX_VLAN_ID,
    MIN_BURST_BYTES,
    MIN_MTU_BYTES,
    MIN_SLICE_RATE_BPS,
    MIN_VLAN_ID,
    TOP_PRIORITY,
)
from sliceportal.schemas.choices import AbcKey, QueueScheme, SliceState
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


def _unique_ids(ids: list[int]) -> list[int]:
    if len(set(ids)) != len(ids):
        raise ValueError("lists a link twice")
    return ids


VlanId = Annotated[int, Field(ge=MIN_VLAN_ID, le=MAX_VLAN_ID)]
Prefixes = Annotated[
    list[IPv4Network],
    Field(max_length=64, description="IPv4 destination prefixes (no host bits), each once; sorted"),
    AfterValidator(sorted_once_each),
]
Rate = Annotated[
    float,
    Strict(),
    Field(
        ge=MIN_SLICE_RATE_BPS,
        le=MAX_SLICE_RATE_BPS,
        description="bit/s, the rates the data plane polices",
    ),
]
BurstLimit = Annotated[
    float,
    Strict(),
    Field(
        gt=0,
        le=MAX_BURST_LIMIT_S,
        description=f"seconds at the rate; at least one {MIN_BURST_BYTES}-byte frame's time at "
        "the rate",
    ),
]
BurstBytes = Annotated[
    float, Strict(), Field(ge=MIN_BURST_BYTES, le=MAX_SLICE_BURST_BYTES, description="bytes")
]
Threshold = Annotated[
    float, Strict(), Field(gt=0, le=MAX_BURST_LIMIT_S, description="seconds, below burst_limit_s")
]
Seconds = Annotated[float, Strict(), Field(gt=0, le=MAX_DELAY_TARGET_S, description="seconds")]
Ratio = Annotated[float, Strict(), Field(ge=0, le=1)]
Priority = Annotated[
    int,
    Field(
        ge=LOWEST_SLICE_PRIORITY,
        le=TOP_PRIORITY,
        description="1 to 7, 7 is the highest; 0 is best effort's (unclassified traffic)",
    ),
]
PacketBytes = Annotated[int, Strict(), Field(ge=MIN_MTU_BYTES, le=MAX_MTU_BYTES)]
LinkIds = Annotated[list[BodyId], Field(min_length=1, max_length=64), AfterValidator(_unique_ids)]
PathIds = Annotated[
    list[BodyId],
    Field(
        min_length=1,
        max_length=64,
        description="the links the slice leaves its switches by, in order from its ingress "
        "switch: each link's cable reaches the next link's switch, no switch twice; link_ids "
        "may then be left out",
    ),
]
DpSid = Annotated[int, Strict(), Field(ge=1, le=MAX_DP_SID)]


def _path_crosses_its_links(data: Any) -> Any:
    """A body giving `path` without `link_ids` crosses the path's links: every rule on
    `link_ids` (and the code reading it) then holds for both."""
    if isinstance(data, dict) and isinstance(data.get("path"), list) and "link_ids" not in data:
        return {**data, "link_ids": data["path"]}
    return data


def _links_or_path(schema: dict[str, Any]) -> None:
    """The OpenAPI schema of a creation: `link_ids` is not required, since `path` may stand
    for it (the API refuses a body with neither, naming `link_ids`). Not an `anyOf` of the
    two: the generated TypeScript client turns that into `unknown`."""
    schema["required"] = [name for name in schema["required"] if name != "link_ids"]


E2E_TARGET = (
    "seconds; bound on the slice's end-to-end delay: its worst-case delays on every link it "
    "crosses plus the propagation delays of their cables (null: none)"
)


class Sla(InputModel):
    """SLA targets the alerts check; in an update, `sla` replaces the whole object."""

    model_config = ConfigDict(from_attributes=True)

    max_delay_s: Seconds | None = None
    min_throughput_bps: Annotated[float, Strict(), Field(ge=0, le=MAX_RATE_BPS)] | None = None
    max_loss_ratio: Ratio | None = None
    max_mark_ratio: Ratio | None = None


class CodelParameters(InputModel):
    """A codel slice's CoDel (RFC 8289) parameters; in an update, `codel` replaces the whole
    object (members left out take their defaults)."""

    model_config = ConfigDict(from_attributes=True)

    target_s: Annotated[float, Strict(), Field(gt=0, le=MAX_BURST_LIMIT_S)] = Field(
        default=TARGET_DEFAULT_S,
        description="seconds; the virtual-queue delay CoDel holds the slice's packets to, "
        "below burst_limit_s and at most delay_target_s",
    )
    interval_s: Annotated[float, Strict(), Field(ge=INTERVAL_MIN_S, le=MAX_BURST_LIMIT_S)] = Field(
        default=INTERVAL_DEFAULT_S,
        description="seconds the delay may stay above target_s before CoDel drops or marks, "
        "then the spacing of its signals, shrinking as interval_s / sqrt(count)",
    )
    ecn_mark: Annotated[bool, Strict()] = Field(
        default=False,
        description="mark ECN-capable packets CE instead of dropping them (others are dropped)",
    )


Memory = Annotated[float, Strict(), Field(ge=MEMORY_MIN_S, le=MEMORY_MAX_S)]
ReferenceRate = Annotated[
    float, Strict(), Field(ge=REFERENCE_RATE_MIN_BPS, le=REFERENCE_RATE_MAX_BPS)
]
AbcSeconds = Annotated[float, Strict(), Field(ge=0, le=MAX_BURST_LIMIT_S)]
PrefixLength = Annotated[int, Strict(), Field(ge=0, le=32)]
_Q_MIN, _Q_BASE, _GAMMA = PAPER_THRESHOLDS_PACKETS
_ABC = {
    "meter_memory_s": "seconds a source's rate meter remembers (TDRM-UTEMA): longer smooths "
    "its rate over more time, shorter follows changes sooner",
    "average_memory_s": "seconds the slice's average activity remembers; the activity of a "
    "packet is compared with this average",
    "reference_rate_bps": "bit/s of activity 0: an aggregate at twice this rate has activity "
    "1, at half of it -1 (activity = log2(rate / reference_rate_bps))",
    "q_min_s": "seconds of queueing delay below which no packet is dropped, however active "
    "its aggregate (at most q_base_s)",
    "q_base_s": "seconds of queueing delay at which a packet of average activity is dropped "
    "(at most burst_limit_s)",
    "gamma_s": "seconds the drop threshold falls per unit of activity above the average (and "
    "rises per unit below it, up to burst_limit_s)",
    "key": "what an aggregate is: each source address, or each source prefix",
    "prefix_length": "the source prefix's length for key source_prefix; 32 for source_address",
}


class AbcParameters(InputModel):
    """An abc slice's P4-ABC parameters as given; in an update, `abc` replaces the whole
    object. A member left out takes its default (the thresholds' depend on the slice's rate
    and burst limit); the slice stores and shows the resolved values."""

    meter_memory_s: Memory = Field(
        default=METER_MEMORY_DEFAULT_S, description=_ABC["meter_memory_s"]
    )
    average_memory_s: Memory = Field(
        default=AVERAGE_MEMORY_DEFAULT_S, description=_ABC["average_memory_s"]
    )
    reference_rate_bps: ReferenceRate = Field(
        default=REFERENCE_RATE_DEFAULT_BPS, description=_ABC["reference_rate_bps"]
    )
    q_min_s: AbcSeconds | None = Field(
        default=None,
        description=f"{_ABC['q_min_s']}; default: {_Q_MIN} full-size (1,500-byte) packets' "
        "time at the slice's rate, at most burst_limit_s",
    )
    q_base_s: AbcSeconds | None = Field(
        default=None,
        description=f"{_ABC['q_base_s']}; default: {_Q_BASE} full-size packets' time at the "
        "slice's rate, at most burst_limit_s",
    )
    gamma_s: AbcSeconds | None = Field(
        default=None,
        description=f"{_ABC['gamma_s']}; default: {_GAMMA} full-size packets' time at the "
        "slice's rate",
    )
    key: AbcKey = Field(default=AbcKey.SOURCE_ADDRESS, description=_ABC["key"])
    prefix_length: PrefixLength | None = Field(
        default=None,
        description=f"{_ABC['prefix_length']}; required with source_prefix",
    )


class AbcSettings(PublicModel):
    """An abc slice's P4-ABC parameters as stored and deployed: every default resolved."""

    meter_memory_s: float = Field(description=_ABC["meter_memory_s"])
    average_memory_s: float = Field(description=_ABC["average_memory_s"])
    reference_rate_bps: float = Field(description=_ABC["reference_rate_bps"])
    q_min_s: float = Field(description=_ABC["q_min_s"])
    q_base_s: float = Field(description=_ABC["q_base_s"])
    gamma_s: float = Field(description=_ABC["gamma_s"])
    key: AbcKey = Field(description=_ABC["key"])
    prefix_length: int = Field(description=_ABC["prefix_length"])


class SliceCreate(InputModel):
    model_config = ConfigDict(**InputModel.model_config, json_schema_extra=_links_or_path)

    name: Name
    description: Description = ""
    vlan_id: Annotated[VlanId, Strict()] | None = None
    ipv4_prefixes: Prefixes = []
    rate_bps: Rate
    burst_limit_s: BurstLimit | None = Field(default=None, description="or give burst_bytes")
    burst_bytes: BurstBytes | None = Field(
        default=None,
        description="bytes; with burst_limit_s only when rate_bps × burst_limit_s / 8 is this",
    )
    delay_target_s: Seconds | None = Field(default=None, description="default: burst_limit_s")
    e2e_delay_target_s: Seconds | None = Field(default=None, description=E2E_TARGET)
    priority: Annotated[Priority, Strict()]
    scheme: QueueScheme = QueueScheme.TAIL_DROP
    marking_threshold_s: Threshold | None = Field(default=None, description="for ecn_step")
    codel: CodelParameters | None = Field(
        default=None, description="for codel (default: each member's default); null otherwise"
    )
    abc: AbcParameters | None = Field(
        default=None,
        description="for abc (default: each member's default at the slice's rate and burst "
        "limit); null otherwise",
    )
    max_packet_bytes: PacketBytes | None = None
    sla: Sla = Field(default_factory=Sla)
    link_ids: LinkIds = Field(
        description="the links the slice crosses (required unless path is given); in path "
        "order when they form one (else an unordered set: its path is null)",
    )
    path: PathIds | None = None
    dp_sid: DpSid | None = Field(
        default=None, description="default: the lowest free DP_SID on each switch crossed"
    )

    _path_crosses_its_links = model_validator(mode="before")(_path_crosses_its_links)


class SliceUpdate(PatchModel):
    nullable = frozenset(
        {
            "vlan_id",
            "marking_threshold_s",
            "codel",
            "abc",
            "max_packet_bytes",
            "e2e_delay_target_s",
        }
    )

    name: Name | None = None
    description: Description | None = None
    vlan_id: Annotated[VlanId, Strict()] | None = None
    ipv4_prefixes: Prefixes | None = None
    rate_bps: Rate | None = None
    burst_limit_s: BurstLimit | None = None
    burst_bytes: BurstBytes | None = None
    delay_target_s: Seconds | None = None
    e2e_delay_target_s: Seconds | None = Field(default=None, description=E2E_TARGET)
    priority: Annotated[Priority, Strict()] | None = None
    scheme: QueueScheme | None = None
    marking_threshold_s: Threshold | None = None
    codel: CodelParameters | None = Field(
        default=None,
        description="for codel; changing the scheme to codel without it takes the defaults, "
        "to another scheme clears it",
    )
    abc: AbcParameters | None = Field(
        default=None,
        description="for abc; changing the scheme to abc without it takes the defaults at the "
        "slice's rate and burst limit, to another scheme clears it; an abc slice keeps the "
        "values it holds when its rate or burst limit change",
    )
    max_packet_bytes: PacketBytes | None = None
    sla: Sla | None = None
    link_ids: LinkIds | None = None
    path: PathIds | None = None

    _path_crosses_its_links = model_validator(mode="before")(_path_crosses_its_links)


class DpSidPublic(PublicModel):
    switch_id: int
    dp_sid: int


class SlicePublic(PublicModel):
    id: int
    name: str
    description: str
    vlan_id: int | None
    ipv4_prefixes: list[IPv4Network]
    rate_bps: float
    burst_limit_s: float
    burst_bytes: float
    delay_target_s: float
    e2e_delay_target_s: float | None = Field(description=E2E_TARGET)
    priority: int
    scheme: QueueScheme
    marking_threshold_s: float | None
    codel: CodelParameters | None = Field(description="a codel slice's CoDel parameters")
    abc: AbcSettings | None = Field(description="an abc slice's ABC parameters, resolved")
    max_packet_bytes: int | None
    sla: Sla
    link_ids: list[int] = Field(description="ascending id")
    path: list[int] | None = Field(
        description="the same links in path order; null when they are an unordered set"
    )
    dp_sids: list[DpSidPublic] = Field(validation_alias="switch_rows")
    state: SliceState
    state_detail: str | None = Field(
        description="why the slice is not active yet, or the error that failed it"
    )
    created_at: dt.datetime
    updated_at: dt.datetime


SlicesPublic = Page[SlicePublic]


class SlicesImported(PublicModel):
    """What an import created: its slices' ids, in the order of the file's rows."""

    count: int
    ids: list[int]


class PathProposalRequest(InputModel):
    """A slice's parameters as admission reads them, and where its traffic enters the network
    and leaves it: `POST /slices/propose-path`."""

    name: Name = Field(default="proposed", description="how refusals name the slice")
    rate_bps: Rate
    burst_limit_s: BurstLimit | None = Field(default=None, description="or give burst_bytes")
    burst_bytes: BurstBytes | None = None
    delay_target_s: Seconds | None = Field(default=None, description="default: burst_limit_s")
    e2e_delay_target_s: Seconds | None = Field(default=None, description=E2E_TARGET)
    priority: Annotated[Priority, Strict()]
    max_packet_bytes: PacketBytes | None = None
    ingress_switch_id: BodyId = Field(description="the switch the slice's traffic enters by")
    egress_link_id: BodyId = Field(
        description="the host-facing link (no cable's end) the traffic leaves the network by"
    )


class PathHopPublic(PublicModel):
    link_id: int
    link: str
    bound_s: float | None = Field(description="the slice's worst-case delay there (null: none)")
    propagation_s: float = Field(description="the link's cable's (0 for a host-facing link)")


class PathProposalPublic(PublicModel):
    path: list[int] = Field(description="link ids from the ingress switch, for `path`")
    end_to_end_s: float | None = Field(
        description="the slice's end-to-end bound on it: hops and propagation"
    )
    e2e_delay_target_s: float | None
    hops: list[PathHopPublic]
