"""The portal's tables: what the operator says the network should be, and who said it.

Invariants that must always hold are database constraints, not just API checks: unique names,
one DP_SID per switch (`slice_switches`), positive rates, a match on every slice, ECN threshold
and CoDel target within the burst limit, and a change log that cannot be rewritten (trigger in
the migration).

The network (docs/architecture.md "The network"): a link is an egress port of a switch; it is
either one end of a cable to another switch (`cable_id`, `cable_end`: the cable's direction out
of that end) or faces hosts (`host_ipv4_prefixes`, `host_vlan_ids`), never both. A cable has
exactly two ends on two switches (a deferred trigger in migration 0019 checks the count).

A slice crosses links (`slice_links`); for every switch of those links it holds one DP_SID
(`slice_switches`). `slice_links` references `slice_switches` by (slice, switch) and `links` by
(link, switch), so a slice can never cross a link of a switch where it has no DP_SID.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
from collections.abc import Mapping
from typing import Any, ClassVar

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql
from sqlalchemy.orm import Mapped, column_property, mapped_column, relationship

from sliceportal.db.base import Base, ChangeLogged, Timestamped, choice_type
from sliceportal.domain import Model
from sliceportal.domain.abc import (
    MEMORY_MAX_S,
    MEMORY_MIN_S,
    REFERENCE_RATE_MAX_BPS,
    REFERENCE_RATE_MIN_BPS,
    AbcConfig,
    AggregateKey,
)
from sliceportal.domain.p4constants import HIST_BUCKETS
from sliceportal.domain.sla import Rule
from sliceportal.domain.spec import (
    LOWEST_SLICE_PRIORITY,
    MAX_BURST_LIMIT_S,
    MAX_CAPACITY_BPS,
    MAX_DP_SID,
    MAX_FRAME_OVERHEAD_BYTES,
    MAX_MTU_BYTES,
    MAX_PORT,
    MAX_QUEUES,
    MAX_RATE_BPS,
    MAX_TIME_S,
    MAX_VLAN_ID,
    MIN_MTU_BYTES,
    MIN_QUEUES,
    MIN_RATE_BPS,
    MIN_VLAN_ID,
    TOP_PRIORITY,
    Framing,
)
from sliceportal.domain.telemetry import LEGACY_HIST_TARGET
from sliceportal.domain.units import DataplaneValueError
from sliceportal.schemas.choices import (
    AbcKey,
    AlertEventKind,
    AlertState,
    CableEnd,
    ChangeAction,
    DeliveryStatus,
    EntityType,
    QueueScheme,
    Role,
    SliceState,
    SwitchKind,
    SwitchState,
)

ABC_COLUMNS = (
    "abc_meter_memory_s",
    "abc_average_memory_s",
    "abc_reference_rate_bps",
    "abc_q_min_s",
    "abc_q_base_s",
    "abc_gamma_s",
    "abc_key",
    "abc_prefix_length",
)
"""A slice's ABC columns: ``abc_`` and the member of the API's ``abc`` object."""


def abc_config_of(columns: Mapping[str, Any]) -> AbcConfig | None:
    """The `AbcConfig` a slice's ABC columns hold (None when they hold none, for another
    scheme); a value the domain refuses is a DataplaneValueError naming ``abc.<member>``."""
    if columns["abc_meter_memory_s"] is None:
        return None
    given = {column.removeprefix("abc_"): columns[column] for column in ABC_COLUMNS}
    try:
        return AbcConfig(**given | {"key": AggregateKey(str(given["key"]))})
    except DataplaneValueError as exc:
        raise exc.prefixed("abc.") from None


class User(ChangeLogged, Timestamped, Base):
    __tablename__ = "users"
    __table_args__ = (
        sa.CheckConstraint("username ~ '^[A-Za-z0-9_.@-]{1,64}$'", name="username_format"),
    )
    __snapshot_exclude__ = frozenset({"hashed_password", "created_at", "updated_at"})
    entity_type: ClassVar[EntityType] = EntityType.USER

    id: Mapped[int] = mapped_column(sa.Identity(), primary_key=True)
    username: Mapped[str] = mapped_column(sa.String(64), unique=True)
    email: Mapped[str | None] = mapped_column(sa.String(254), unique=True)
    full_name: Mapped[str] = mapped_column(sa.String(255), server_default="")
    hashed_password: Mapped[str] = mapped_column(sa.String(255))
    role: Mapped[Role] = mapped_column(choice_type(Role, "role"), server_default=Role.VIEWER)
    is_active: Mapped[bool] = mapped_column(server_default=sa.true())

    @property
    def display_name(self) -> str:
        return self.username


class ApiToken(ChangeLogged, Base):
    """A long-lived bearer token; only its SHA-256 is stored, found by its public prefix."""

    __tablename__ = "api_tokens"
    __table_args__ = (
        sa.UniqueConstraint("user_id", "name"),
        sa.CheckConstraint("char_length(token_hash) = 64", name="token_hash_sha256"),
    )
    __snapshot_exclude__ = frozenset({"token_hash"})
    entity_type: ClassVar[EntityType] = EntityType.API_TOKEN

    id: Mapped[int] = mapped_column(sa.Identity(), primary_key=True)
    user_id: Mapped[int] = mapped_column(sa.ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(sa.String(100))
    prefix: Mapped[str] = mapped_column(sa.String(16), unique=True)
    token_hash: Mapped[str] = mapped_column(sa.String(64))
    created_at: Mapped[dt.datetime] = mapped_column(
        sa.DateTime(timezone=True), server_default=sa.func.now()
    )
    expires_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True))
    last_used_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True))
    revoked_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True))

    user: Mapped[User] = relationship(lazy="raise")


class Switch(ChangeLogged, Timestamped, Base):
    __tablename__ = "switches"
    __table_args__ = (
        sa.UniqueConstraint("address", "device_id"),
        sa.CheckConstraint("device_id >= 0", name="device_id_non_negative"),
        sa.CheckConstraint("election_id >= 1", name="election_id_positive"),
        sa.CheckConstraint(
            "(tls_cert_path IS NULL) = (tls_key_path IS NULL)", name="tls_cert_with_key"
        ),
    )
    entity_type: ClassVar[EntityType] = EntityType.SWITCH

    id: Mapped[int] = mapped_column(sa.Identity(), primary_key=True)
    name: Mapped[str] = mapped_column(sa.String(64), unique=True)
    description: Mapped[str] = mapped_column(sa.Text, server_default="")
    address: Mapped[str] = mapped_column(sa.String(255))
    device_id: Mapped[int] = mapped_column(sa.BigInteger, server_default="1")
    election_id: Mapped[int] = mapped_column(sa.BigInteger, server_default="1")
    kind: Mapped[SwitchKind] = mapped_column(
        choice_type(SwitchKind, "switch_kind"), server_default=SwitchKind.BMV2
    )
    state: Mapped[SwitchState] = mapped_column(
        choice_type(SwitchState, "switch_state"), server_default=SwitchState.UNKNOWN
    )
    tls_ca_path: Mapped[str | None] = mapped_column(sa.String(1024))
    tls_cert_path: Mapped[str | None] = mapped_column(sa.String(1024))
    tls_key_path: Mapped[str | None] = mapped_column(sa.String(1024))

    sync: Mapped[SwitchSync | None] = relationship(
        lazy="selectin", cascade="all, delete-orphan", passive_deletes=True
    )


class Cable(ChangeLogged, Timestamped, Base):
    """A connection between port p of switch A and port q of switch B (netbox's cable): its two
    directions are the links (egress ports) whose `cable_id` names it, end `a` and end `b`."""

    __tablename__ = "cables"
    __table_args__ = (
        sa.CheckConstraint(f"propagation_s BETWEEN 0 AND {MAX_TIME_S}", name="propagation_range"),
    )
    entity_type: ClassVar[EntityType] = EntityType.CABLE

    id: Mapped[int] = mapped_column(sa.Identity(), primary_key=True)
    name: Mapped[str] = mapped_column(sa.String(64), unique=True)
    description: Mapped[str] = mapped_column(sa.Text, server_default="")
    propagation_s: Mapped[float] = mapped_column(sa.Double, server_default="0")
    """Seconds a bit takes from one end to the other, the same both ways."""

    ends: Mapped[list[Link]] = relationship(
        lazy="selectin", order_by="Link.cable_end", viewonly=True
    )

    def end(self, which: CableEnd) -> Link:
        return next(link for link in self.ends if link.cable_end is which)

    @property
    def a_link_id(self) -> int:
        return self.end(CableEnd.A).id

    @property
    def a_switch_id(self) -> int:
        return self.end(CableEnd.A).switch_id

    @property
    def b_link_id(self) -> int:
        return self.end(CableEnd.B).id

    @property
    def b_switch_id(self) -> int:
        return self.end(CableEnd.B).switch_id

    def snapshot(self) -> dict[str, Any]:
        """Columns plus the ends' links, so one entry tells what the cable joined."""
        return {**super().snapshot(), "a_link_id": self.a_link_id, "b_link_id": self.b_link_id}


class Link(ChangeLogged, Timestamped, Base):
    """An egress port of a switch: capacity, strict-priority queues and the delay model; and
    what it faces: another switch through a cable, or hosts."""

    __tablename__ = "links"
    __table_args__ = (
        sa.UniqueConstraint("switch_id", "name"),
        sa.UniqueConstraint("switch_id", "port"),
        sa.UniqueConstraint("id", "switch_id"),  # target of slice_links' composite key
        sa.CheckConstraint(f"port BETWEEN 0 AND {MAX_PORT}", name="port_range"),
        sa.CheckConstraint(
            f"capacity_bps BETWEEN {MIN_RATE_BPS} AND {MAX_CAPACITY_BPS}", name="capacity_range"
        ),
        sa.CheckConstraint(
            f"queue_count BETWEEN {MIN_QUEUES} AND {MAX_QUEUES}", name="queue_count_range"
        ),
        sa.CheckConstraint(
            f"mtu_bytes BETWEEN {MIN_MTU_BYTES} AND {MAX_MTU_BYTES}", name="mtu_range"
        ),
        sa.CheckConstraint(
            f"frame_overhead_bytes BETWEEN 0 AND {MAX_FRAME_OVERHEAD_BYTES}",
            name="frame_overhead_range",
        ),
        # one `a` and one `b` per cable, on two switches: a cable joins two switches
        sa.UniqueConstraint("cable_id", "cable_end"),
        sa.UniqueConstraint("cable_id", "switch_id"),
        sa.CheckConstraint("(cable_id IS NULL) = (cable_end IS NULL)", name="cable_end_with_cable"),
        sa.CheckConstraint(
            "cable_id IS NULL OR (cardinality(host_ipv4_prefixes) = 0"
            " AND cardinality(host_vlan_ids) = 0)",
            name="faces_switch_or_hosts",
        ),
        sa.CheckConstraint(
            f"{MIN_VLAN_ID} <= ALL(host_vlan_ids) AND {MAX_VLAN_ID} >= ALL(host_vlan_ids)",
            name="host_vlan_id_range",
        ),
    )
    entity_type: ClassVar[EntityType] = EntityType.LINK

    id: Mapped[int] = mapped_column(sa.Identity(), primary_key=True)
    switch_id: Mapped[int] = mapped_column(sa.ForeignKey("switches.id", ondelete="RESTRICT"))
    name: Mapped[str] = mapped_column(sa.String(64))
    description: Mapped[str] = mapped_column(sa.Text, server_default="")
    port: Mapped[int] = mapped_column()
    capacity_bps: Mapped[float] = mapped_column(sa.Double)
    queue_count: Mapped[int] = mapped_column(sa.SmallInteger, server_default=str(MAX_QUEUES))
    model: Mapped[Model] = mapped_column(
        choice_type(Model, "delay_model"), server_default=Model.NETCALC
    )
    mtu_bytes: Mapped[int] = mapped_column(server_default="1500")
    frame_overhead_bytes: Mapped[int] = mapped_column(sa.SmallInteger, server_default="0")
    """Bytes a frame costs on the wire beyond what the data plane counts: 0 when
    `capacity_bps` counts frame bytes as the data plane does, 24 when it is the line rate
    (preamble, FCS, inter-frame gap). See `domain.spec.Framing`."""
    cable_id: Mapped[int | None] = mapped_column(sa.ForeignKey("cables.id", ondelete="RESTRICT"))
    cable_end: Mapped[CableEnd | None] = mapped_column(choice_type(CableEnd, "cable_end"))
    """Set by `services.cables` only: a cable is made and removed with both its ends."""
    host_ipv4_prefixes: Mapped[list[ipaddress.IPv4Network]] = mapped_column(
        postgresql.ARRAY(postgresql.CIDR), server_default="{}"
    )
    host_vlan_ids: Mapped[list[int]] = mapped_column(
        postgresql.ARRAY(sa.SmallInteger), server_default="{}"
    )
    """The hosts behind a port that faces hosts: their IPv4 prefixes and VLANs."""

    @property
    def framing(self) -> Framing:
        return Framing.of_link(self.mtu_bytes, self.frame_overhead_bytes)


def burst_bytes(rate_bps: float, burst_limit_s: float) -> float:
    """The bytes a slice may queue: its rate for its burst limit."""
    return rate_bps * burst_limit_s / 8


def nested_codel(
    target_s: float | None, interval_s: float | None, ecn_mark: bool | None
) -> dict[str, Any] | None:
    """A slice's CoDel columns as the API nests them (`schemas.slices.CodelParameters`)."""
    if target_s is None:
        return None
    return {"target_s": target_s, "interval_s": interval_s, "ecn_mark": ecn_mark}


def nested_abc(columns: Mapping[str, Any]) -> dict[str, Any] | None:
    """A slice's ABC columns (`ABC_COLUMNS` in `columns`) as the API nests them
    (`schemas.slices.AbcSettings`)."""
    if columns["abc_meter_memory_s"] is None:
        return None
    return {column.removeprefix("abc_"): columns[column] for column in ABC_COLUMNS}


class Slice(ChangeLogged, Timestamped, Base):
    __tablename__ = "slices"
    __table_args__ = (
        sa.CheckConstraint(
            f"vlan_id BETWEEN {MIN_VLAN_ID} AND {MAX_VLAN_ID}", name="vlan_id_range"
        ),
        sa.CheckConstraint(
            "vlan_id IS NOT NULL OR cardinality(ipv4_prefixes) > 0", name="has_match"
        ),
        sa.CheckConstraint(
            f"rate_bps BETWEEN {MIN_RATE_BPS} AND {MAX_RATE_BPS}", name="rate_range"
        ),
        sa.CheckConstraint("burst_limit_s > 0", name="burst_limit_positive"),
        sa.CheckConstraint("delay_target_s > 0", name="delay_target_positive"),
        sa.CheckConstraint("e2e_delay_target_s > 0", name="e2e_delay_target_positive"),
        sa.CheckConstraint(
            f"priority BETWEEN {LOWEST_SLICE_PRIORITY} AND {TOP_PRIORITY}", name="priority_range"
        ),
        sa.CheckConstraint(
            "(scheme = 'ecn_step') = (marking_threshold_s IS NOT NULL)",
            name="threshold_iff_ecn",
        ),
        sa.CheckConstraint(
            "marking_threshold_s > 0 AND marking_threshold_s <= burst_limit_s",
            name="threshold_within_burst_limit",
        ),
        sa.CheckConstraint(
            "num_nonnulls(codel_target_s, codel_interval_s, codel_ecn_mark)"
            " = CASE WHEN scheme = 'codel' THEN 3 ELSE 0 END",
            name="codel_iff_codel_scheme",
        ),
        sa.CheckConstraint(
            "codel_target_s > 0 AND codel_target_s < burst_limit_s",
            name="codel_target_within_burst_limit",
        ),
        sa.CheckConstraint("codel_interval_s > 0", name="codel_interval_positive"),
        sa.CheckConstraint(
            f"num_nonnulls({', '.join(ABC_COLUMNS)})"
            f" = CASE WHEN scheme = 'abc' THEN {len(ABC_COLUMNS)} ELSE 0 END",
            name="abc_iff_abc_scheme",
        ),
        sa.CheckConstraint(
            f"abc_meter_memory_s BETWEEN {MEMORY_MIN_S} AND {MEMORY_MAX_S}",
            name="abc_meter_memory_range",
        ),
        sa.CheckConstraint(
            f"abc_average_memory_s BETWEEN {MEMORY_MIN_S} AND {MEMORY_MAX_S}",
            name="abc_average_memory_range",
        ),
        sa.CheckConstraint(
            f"abc_reference_rate_bps BETWEEN {REFERENCE_RATE_MIN_BPS} AND {REFERENCE_RATE_MAX_BPS}",
            name="abc_reference_rate_range",
        ),
        sa.CheckConstraint(
            "abc_q_min_s >= 0 AND abc_q_min_s <= abc_q_base_s", name="abc_q_min_range"
        ),
        sa.CheckConstraint("abc_q_base_s <= burst_limit_s", name="abc_q_base_within_burst_limit"),
        sa.CheckConstraint(
            f"abc_gamma_s BETWEEN 0 AND {MAX_BURST_LIMIT_S}", name="abc_gamma_range"
        ),
        sa.CheckConstraint(
            "abc_prefix_length BETWEEN 0 AND 32"
            " AND (abc_key = 'source_prefix' OR abc_prefix_length = 32)",
            name="abc_prefix_length_range",
        ),
        sa.CheckConstraint(
            f"max_packet_bytes BETWEEN {MIN_MTU_BYTES} AND {MAX_MTU_BYTES}",
            name="max_packet_range",
        ),
        # Clash checks look for slices sharing a prefix (`&&`) under the switch locks.
        sa.Index("ix_slices_ipv4_prefixes", "ipv4_prefixes", postgresql_using="gin"),
        # Clash checks look for slices with the same VLAN.
        sa.Index("ix_slices_vlan_id", "vlan_id"),
    )
    entity_type: ClassVar[EntityType] = EntityType.SLICE

    id: Mapped[int] = mapped_column(sa.Identity(), primary_key=True)
    name: Mapped[str] = mapped_column(sa.String(64), unique=True)
    description: Mapped[str] = mapped_column(sa.Text, server_default="")
    vlan_id: Mapped[int | None] = mapped_column()
    ipv4_prefixes: Mapped[list[ipaddress.IPv4Network]] = mapped_column(
        postgresql.ARRAY(postgresql.CIDR), server_default="{}"
    )
    rate_bps: Mapped[float] = mapped_column(sa.Double)
    burst_limit_s: Mapped[float] = mapped_column(sa.Double)
    delay_target_s: Mapped[float] = mapped_column(sa.Double)
    e2e_delay_target_s: Mapped[float | None] = mapped_column(sa.Double)
    """Bound on the sum of the slice's per-hop worst-case delays (None: no end-to-end target)."""
    priority: Mapped[int] = mapped_column(sa.SmallInteger)
    scheme: Mapped[QueueScheme] = mapped_column(
        choice_type(QueueScheme, "queue_scheme"), server_default=QueueScheme.TAIL_DROP
    )
    marking_threshold_s: Mapped[float | None] = mapped_column(sa.Double)
    codel_target_s: Mapped[float | None] = mapped_column(sa.Double)
    codel_interval_s: Mapped[float | None] = mapped_column(sa.Double)
    codel_ecn_mark: Mapped[bool | None] = mapped_column()
    """A codel slice's CoDel parameters (all three, or none for another scheme)."""
    abc_meter_memory_s: Mapped[float | None] = mapped_column(sa.Double)
    abc_average_memory_s: Mapped[float | None] = mapped_column(sa.Double)
    abc_reference_rate_bps: Mapped[float | None] = mapped_column(sa.Double)
    abc_q_min_s: Mapped[float | None] = mapped_column(sa.Double)
    abc_q_base_s: Mapped[float | None] = mapped_column(sa.Double)
    abc_gamma_s: Mapped[float | None] = mapped_column(sa.Double)
    abc_key: Mapped[AbcKey | None] = mapped_column(choice_type(AbcKey, "abc_key"))
    abc_prefix_length: Mapped[int | None] = mapped_column(sa.SmallInteger)
    """An abc slice's ABC parameters, resolved (all eight, or none for another scheme;
    migration 0015)."""
    max_packet_bytes: Mapped[int | None] = mapped_column()
    state: Mapped[SliceState] = mapped_column(
        choice_type(SliceState, "slice_state"), server_default=SliceState.PENDING
    )
    state_detail: Mapped[str | None] = mapped_column(sa.Text)
    """Why a slice is not active yet, or failed (the switch's error text); set by the workers."""

    sla: Mapped[SliceSla] = relationship(
        cascade="all, delete-orphan", passive_deletes=True, lazy="raise"
    )
    link_rows: Mapped[list[SliceLink]] = relationship(
        cascade="all, delete-orphan",
        passive_deletes=True,
        lazy="raise",
        order_by="SliceLink.link_id",
    )
    switch_rows: Mapped[list[SliceSwitch]] = relationship(
        cascade="all, delete-orphan",
        passive_deletes=True,
        lazy="raise",
        order_by="SliceSwitch.switch_id",
    )

    @property
    def burst_bytes(self) -> float:
        return burst_bytes(self.rate_bps, self.burst_limit_s)

    @property
    def link_ids(self) -> list[int]:
        return [row.link_id for row in self.link_rows]

    @property
    def path(self) -> list[int] | None:
        """The links in path order, or None when they are an unordered set (`SliceLink`)."""
        if any(row.position is None for row in self.link_rows):
            return None
        return [row.link_id for row in sorted(self.link_rows, key=lambda row: row.position or 0)]

    @property
    def codel(self) -> dict[str, Any] | None:
        return nested_codel(self.codel_target_s, self.codel_interval_s, self.codel_ecn_mark)

    @property
    def abc(self) -> dict[str, Any] | None:
        return nested_abc({column: getattr(self, column) for column in ABC_COLUMNS})

    def abc_config(self) -> AbcConfig | None:
        """The ABC parameters as the domain takes them (`abc_config_of`)."""
        return abc_config_of({column: getattr(self, column) for column in ABC_COLUMNS})

    def snapshot(self) -> dict[str, Any]:
        """Columns plus the SLA, links and DP_SIDs, so one entry tells the whole change."""
        return {
            **super().snapshot(),
            "sla": self.sla.snapshot(),
            "link_ids": self.link_ids,
            "path": self.path,
            "dp_sids": {str(row.switch_id): row.dp_sid for row in self.switch_rows},
        }


class SliceSla(ChangeLogged, Base):
    """The targets SLA alerts are evaluated against (any may be absent)."""

    __tablename__ = "slice_slas"
    __table_args__ = (
        sa.CheckConstraint("max_delay_s > 0", name="max_delay_positive"),
        sa.CheckConstraint("min_throughput_bps >= 0", name="min_throughput_non_negative"),
        sa.CheckConstraint("max_loss_ratio BETWEEN 0 AND 1", name="max_loss_ratio_range"),
        sa.CheckConstraint("max_mark_ratio BETWEEN 0 AND 1", name="max_mark_ratio_range"),
    )
    __snapshot_exclude__ = frozenset({"slice_id"})

    slice_id: Mapped[int] = mapped_column(
        sa.ForeignKey("slices.id", ondelete="CASCADE"), primary_key=True
    )
    max_delay_s: Mapped[float | None] = mapped_column(sa.Double)
    min_throughput_bps: Mapped[float | None] = mapped_column(sa.Double)
    max_loss_ratio: Mapped[float | None] = mapped_column(sa.Double)
    max_mark_ratio: Mapped[float | None] = mapped_column(sa.Double)


class SliceSwitch(Base):
    """The DP_SID a slice holds on one switch it crosses; unique per switch."""

    __tablename__ = "slice_switches"
    __table_args__ = (
        sa.UniqueConstraint("switch_id", "dp_sid"),
        sa.CheckConstraint(f"dp_sid BETWEEN 1 AND {MAX_DP_SID}", name="dp_sid_range"),
    )

    slice_id: Mapped[int] = mapped_column(
        sa.ForeignKey("slices.id", ondelete="CASCADE"), primary_key=True
    )
    switch_id: Mapped[int] = mapped_column(
        sa.ForeignKey("switches.id", ondelete="RESTRICT"), primary_key=True
    )
    dp_sid: Mapped[int] = mapped_column(sa.SmallInteger)


class SliceLink(Base):
    """A link a slice crosses; its (slice, switch) must hold a DP_SID in `slice_switches`."""

    __tablename__ = "slice_links"
    __table_args__ = (
        sa.ForeignKeyConstraint(
            ["slice_id", "switch_id"],
            ["slice_switches.slice_id", "slice_switches.switch_id"],
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["link_id", "switch_id"], ["links.id", "links.switch_id"], ondelete="RESTRICT"
        ),
        # Admission looks up the slices with an end-to-end target crossing the changed links.
        sa.Index(
            "ix_slice_links_with_e2e_target",
            "link_id",
            "slice_id",
            postgresql_where=sa.text("has_e2e_target"),
        ),
        # Checked at the end of each statement, so one statement can reorder a path.
        sa.UniqueConstraint("slice_id", "position", deferrable=True),
        sa.CheckConstraint("position >= 0", name="position_range"),
    )

    slice_id: Mapped[int] = mapped_column(
        sa.ForeignKey("slices.id", ondelete="CASCADE"), primary_key=True
    )
    link_id: Mapped[int] = mapped_column(primary_key=True, index=True)
    switch_id: Mapped[int] = mapped_column()
    position: Mapped[int | None] = mapped_column(sa.SmallInteger)
    """The link's place on the slice's path (0 at the ingress switch); None on every row of a
    slice whose links are an unordered set, as they all were before paths (migration 0021)."""
    has_e2e_target: Mapped[bool] = mapped_column(server_default=sa.false())
    """Whether the slice has an end-to-end target: set by triggers (migration 0007) from the
    slice, whatever a writer passes, so the index above holds exactly those slices' rows."""


class LinkLevelLoad(Base):
    """What admission needs of the slices at one priority level of one link, kept by triggers
    (migration 0006; `db.queries.links` says how and why) so a creation reads at most eight
    rows per link instead of every slice. `domain.admission.levels` certifies from them.
    """

    __tablename__ = "link_level_loads"
    __table_args__ = (
        sa.CheckConstraint(
            f"priority BETWEEN {LOWEST_SLICE_PRIORITY} AND {TOP_PRIORITY}", name="priority_range"
        ),
        sa.CheckConstraint("slice_count > 0", name="slice_count_positive"),
    )

    link_id: Mapped[int] = mapped_column(
        sa.ForeignKey("links.id", ondelete="CASCADE"), primary_key=True
    )
    priority: Mapped[int] = mapped_column(sa.SmallInteger, primary_key=True)
    slice_count: Mapped[int] = mapped_column()
    rate_bps: Mapped[float] = mapped_column(sa.Double)
    burst_bytes: Mapped[float] = mapped_column(sa.Double)
    min_delay_target_s: Mapped[float] = mapped_column(sa.Double)
    max_packet_bytes: Mapped[int | None] = mapped_column()
    """Largest packet the slices give; None when none gives one."""
    default_packet_count: Mapped[int] = mapped_column()
    """Slices that give none: they count as the link's largest frame (`max_frame_bytes` of its
    MTU), which may change."""


class SwitchSync(Base):
    """What the control plane last saw of a switch, written by the workers only.

    Apart from `switches` because it changes with every reconciliation: the operator's row
    keeps its `updated_at` and change log meaningful, and a worker never waits on its locks.
    """

    __tablename__ = "switch_sync"
    __table_args__ = (
        sa.CheckConstraint("entries_desired >= 0", name="entries_desired_non_negative"),
        sa.CheckConstraint("entries_installed >= 0", name="entries_installed_non_negative"),
    )

    switch_id: Mapped[int] = mapped_column(
        sa.ForeignKey("switches.id", ondelete="CASCADE"), primary_key=True
    )
    pipeline_cookie: Mapped[str | None] = mapped_column(sa.String(16))
    """The cookie the switch reported, in hex (None: no pipeline, or one without a cookie)."""
    pipeline_in_sync: Mapped[bool] = mapped_column(server_default=sa.false())
    last_reconcile_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True))
    last_contact_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True))
    last_error: Mapped[str | None] = mapped_column(sa.Text)
    entries_desired: Mapped[int] = mapped_column(server_default="0")
    entries_installed: Mapped[int] = mapped_column(server_default="0")


class SliceDeployment(Base):
    """A slice's entries on one switch it crosses, as the last reconciliation there found them:
    `digest` of the entries the switch confirmed (read back), or the `error` that kept them off.

    A slice is active when every switch it crosses confirmed the entries it asks for now (the
    digests match), so a change of the slice makes it pending again without anyone resetting
    these rows. Deleted with the slice's DP_SID row on that switch.
    """

    __tablename__ = "slice_deployments"
    __table_args__ = (
        sa.ForeignKeyConstraint(
            ["slice_id", "switch_id"],
            ["slice_switches.slice_id", "slice_switches.switch_id"],
            ondelete="CASCADE",
        ),
    )

    slice_id: Mapped[int] = mapped_column(primary_key=True)
    switch_id: Mapped[int] = mapped_column(primary_key=True)
    digest: Mapped[str | None] = mapped_column(sa.String(32))
    error: Mapped[str | None] = mapped_column(sa.Text)
    confirmed_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True))


class OutboxMessage(Base):
    """A Celery task to send once the transaction that wrote the row commits (transactional
    outbox): the dispatcher turns committed rows into tasks and marks them dispatched, so a
    crash between a commit and the enqueue loses nothing. An insert notifies the channel
    `sliceportal_outbox` (trigger in the migration), which PostgreSQL delivers at commit."""

    __tablename__ = "outbox"
    __table_args__ = (
        sa.Index("ix_outbox_pending", "id", postgresql_where=sa.text("dispatched_at IS NULL")),
    )

    id: Mapped[int] = mapped_column(sa.BigInteger, sa.Identity(), primary_key=True)
    created_at: Mapped[dt.datetime] = mapped_column(
        sa.DateTime(timezone=True), server_default=sa.func.now()
    )
    task: Mapped[str] = mapped_column(sa.String(200))
    args: Mapped[list[Any]] = mapped_column(postgresql.JSONB, server_default="[]")
    dispatched_at: Mapped[dt.datetime | None] = mapped_column(
        sa.DateTime(timezone=True), index=True
    )
    task_id: Mapped[str | None] = mapped_column(sa.String(64))


class ChangeLogEntry(Base):
    """One create/update/delete, written in the transaction of the change; never rewritten."""

    __tablename__ = "change_log"
    __table_args__ = (
        sa.CheckConstraint("before IS NOT NULL OR after IS NOT NULL", name="has_snapshot"),
        sa.Index(None, "entity_type", "entity_id"),
    )

    id: Mapped[int] = mapped_column(sa.BigInteger, sa.Identity(), primary_key=True)
    occurred_at: Mapped[dt.datetime] = mapped_column(
        sa.DateTime(timezone=True), server_default=sa.func.now(), index=True
    )
    user_id: Mapped[int | None] = mapped_column(
        sa.ForeignKey("users.id", ondelete="RESTRICT"), index=True
    )
    request_id: Mapped[str] = mapped_column(sa.String(128), index=True)
    action: Mapped[ChangeAction] = mapped_column(choice_type(ChangeAction, "change_action"))
    entity_type: Mapped[EntityType] = mapped_column(choice_type(EntityType, "entity_type"))
    entity_id: Mapped[int] = mapped_column(sa.BigInteger)
    entity_name: Mapped[str] = mapped_column(sa.String(255), server_default="")
    before: Mapped[dict[str, Any] | None] = mapped_column(postgresql.JSONB)
    after: Mapped[dict[str, Any] | None] = mapped_column(postgresql.JSONB)


class TelemetryPoller(Base):
    """A running `sliceportal poller`, while it renews its membership (docs/telemetry.md
    "Pollers share the switches"): the live ones split the switches between them."""

    __tablename__ = "telemetry_pollers"

    poller_id: Mapped[str] = mapped_column(sa.Text, primary_key=True)
    """Host, process id and a random suffix: unique per process start."""
    expires_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True))
    """Live until then (the database's clock); renewed every lease round."""


class SwitchLease(Base):
    """Which poller polls a switch, until when: at most one per switch, taken over by another
    poller only once expired (`db.leases.acquire`)."""

    __tablename__ = "telemetry_leases"

    switch_id: Mapped[int] = mapped_column(
        sa.ForeignKey("switches.id", ondelete="CASCADE"), primary_key=True
    )
    poller_id: Mapped[str] = mapped_column(sa.Text)
    expires_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True))


class TelemetryPoll(Base):
    """One stored poll of a switch, written in the transaction of its samples: a switch's
    polls may not overlap, so its samples cannot be stored twice (docs/telemetry.md).

    Migration 0017 adds the exclusion constraint `ex_telemetry_polls_no_overlap`, which
    autogenerate cannot reflect, so it lives only there: no two polls of a switch whose spans'
    second halves, `telemetry_poll_span(t, interval_s)` = `(t - interval_s / 2, t]`, overlap."""

    __tablename__ = "telemetry_polls"
    __table_args__ = (sa.CheckConstraint("interval_s > 0", name="interval_positive"),)

    switch_id: Mapped[int] = mapped_column(primary_key=True)
    t: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), primary_key=True)
    """The poll's reading time, the `t` of its samples."""
    interval_s: Mapped[float] = mapped_column(sa.Double)
    """Seconds since the same poller's previous poll of the switch (any group of slices)."""


class TelemetrySample(Base):
    """What one slice's counter cells on one switch grew by over a measured interval (a raw
    sample) or over a minute (a downsampled row): counts, not rates, so rows add up exactly,
    those of one histogram target: its histograms are on that target's edges, and only rows of
    the same target are added (the target is part of the key).

    No foreign keys: the poller appends thousands of rows a second (a key check each), and
    deleting a slice must not wait for its history to be deleted; retention removes the rows.
    The primary key serves time-range queries per slice; the BRIN index on `t` serves the
    scans by age within a partition (the newest samples, for Prometheus).

    Partitioned (migration 0020) by `downsampled`, then by time: `db.partitions` makes,
    downsamples and drops the partitions, which autogenerate neither makes nor compares.
    """

    __tablename__ = "telemetry_samples"
    __table_args__ = (
        sa.Index("ix_telemetry_samples_t_brin", "t", postgresql_using="brin"),
        sa.CheckConstraint("interval_s > 0", name="interval_positive"),
        sa.CheckConstraint(
            f"cardinality(vq_hist) = {HIST_BUCKETS} AND cardinality(rq_hist) = {HIST_BUCKETS}",
            name="hist_buckets",
        ),
        sa.CheckConstraint(f"hist_target >= {LEGACY_HIST_TARGET}", name="hist_target_known"),
        sa.CheckConstraint(
            "(codel_dropping IS NULL) = (codel_count IS NULL) AND codel_count >= 0",
            name="codel_state",
        ),
        sa.CheckConstraint(
            "abc IS NULL OR (jsonb_typeof(abc) = 'object' AND NOT downsampled)", name="abc_state"
        ),
        {"postgresql_partition_by": "LIST (downsampled)"},
    )

    slice_id: Mapped[int] = mapped_column(primary_key=True)
    t: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), primary_key=True)
    """The end of the interval (a raw sample's reading time; a minute row's minute end)."""
    switch_id: Mapped[int] = mapped_column(primary_key=True)
    downsampled: Mapped[bool] = mapped_column(primary_key=True)
    hist_target: Mapped[int] = mapped_column(sa.BigInteger, primary_key=True)
    """The histogram target the histograms were counted with, vq units (the slice's delay
    target, `dataplane.histogram_target`: its edges are `dataplane.histogram_edges`), or -1
    (`domain.telemetry.LEGACY_HIST_TARGET`): a row stored before migration 0009, counted on the
    former global edges 0.1, 0.5, 1, 2, 5, 10 and 20 ms."""
    interval_s: Mapped[float] = mapped_column(sa.Double)
    """Seconds measured between the two readings (a minute row: the sum over its samples)."""
    forwarded_packets: Mapped[int] = mapped_column(sa.BigInteger)
    forwarded_bytes: Mapped[int] = mapped_column(sa.BigInteger)
    vq_dropped_packets: Mapped[int] = mapped_column(sa.BigInteger)
    vq_dropped_bytes: Mapped[int] = mapped_column(sa.BigInteger)
    real_dropped_packets: Mapped[int] = mapped_column(sa.BigInteger)
    real_dropped_bytes: Mapped[int] = mapped_column(sa.BigInteger)
    ecn_marked_packets: Mapped[int] = mapped_column(sa.BigInteger)
    ecn_marked_bytes: Mapped[int] = mapped_column(sa.BigInteger)
    aqm_dropped_packets: Mapped[int] = mapped_column(sa.BigInteger)
    aqm_dropped_bytes: Mapped[int] = mapped_column(sa.BigInteger)
    """Dropped by the slice's queue management (CoDel) before the burst limit (migration 0013;
    rows stored before count 0: no scheme dropped there then)."""
    vq_hist: Mapped[list[int]] = mapped_column(postgresql.ARRAY(sa.BigInteger))
    rq_hist: Mapped[list[int]] = mapped_column(postgresql.ARRAY(sa.BigInteger))
    counters_reset: Mapped[bool] = mapped_column(server_default=sa.false())
    registers: Mapped[dict[str, Any] | None] = mapped_column(postgresql.JSONB)
    codel_dropping: Mapped[bool | None]
    codel_count: Mapped[int | None] = mapped_column(sa.BigInteger)
    """CoDel's state at the reading (registers `codel_dropping` and `codel_count`, migration
    0014): both NULL unless the slice runs CoDel and the switch reads registers, and in minute
    rows (a state at one instant does not add up)."""
    abc: Mapped[dict[str, Any] | None] = mapped_column(postgresql.JSONB)
    """ABC's state at the reading (`domain.telemetry.abc_json`: the slice's average activity
    and busiest aggregates, from registers `abc_meter_*` and `abc_a_avg`, migration 0016):
    NULL unless the slice runs ABC and the switch reads registers, and in minute rows."""


class Alert(ChangeLogged, Base):
    """An SLA breach of one slice under one rule, firing until resolved; acknowledging records
    which operator saw it. At most one firing alert per slice and rule (a partial unique index),
    however many pollers or retries race to open it."""

    __tablename__ = "alerts"
    __table_args__ = (
        sa.Index(
            "uq_alerts_firing_slice_id_rule",
            "slice_id",
            "rule",
            unique=True,
            postgresql_where=sa.text("state = 'firing'"),
        ),
        sa.Index(None, "started_at"),
    )
    entity_type: ClassVar[EntityType] = EntityType.ALERT

    id: Mapped[int] = mapped_column(sa.BigInteger, sa.Identity(), primary_key=True)
    slice_id: Mapped[int] = mapped_column(
        sa.ForeignKey("slices.id", ondelete="CASCADE"), index=True
    )
    switch_id: Mapped[int | None] = mapped_column(sa.ForeignKey("switches.id", ondelete="SET NULL"))
    """The switch whose samples first breached the rule."""
    rule: Mapped[Rule] = mapped_column(choice_type(Rule, "alert_rule"))
    state: Mapped[AlertState] = mapped_column(
        choice_type(AlertState, "alert_state"), server_default=AlertState.FIRING
    )
    message: Mapped[str] = mapped_column(sa.Text)
    value: Mapped[float | None] = mapped_column(sa.Double)
    threshold: Mapped[float | None] = mapped_column(sa.Double)
    started_at: Mapped[dt.datetime] = mapped_column(
        sa.DateTime(timezone=True), server_default=sa.func.now()
    )
    resolved_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True))
    acknowledged_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True))
    acknowledged_by: Mapped[int | None] = mapped_column(
        sa.ForeignKey("users.id", ondelete="RESTRICT")
    )
    slice_name: Mapped[str] = column_property(
        sa.select(Slice.name).where(Slice.id == slice_id).scalar_subquery()
    )
    """Loaded with the alert, for the API, the events and the change log."""

    @property
    def display_name(self) -> str:
        return f"{self.rule} alert of slice {self.slice_name}"


class AlertEvent(Base):
    """One step of an alert's life (firing, resolved, acknowledged) with the document pushed to
    browsers and webhooks: the outbox the deliveries are sent from."""

    __tablename__ = "alert_events"

    id: Mapped[int] = mapped_column(sa.BigInteger, sa.Identity(), primary_key=True)
    alert_id: Mapped[int] = mapped_column(
        sa.ForeignKey("alerts.id", ondelete="CASCADE"), index=True
    )
    kind: Mapped[AlertEventKind] = mapped_column(choice_type(AlertEventKind, "alert_event_kind"))
    occurred_at: Mapped[dt.datetime] = mapped_column(
        sa.DateTime(timezone=True), server_default=sa.func.now()
    )
    payload: Mapped[dict[str, Any]] = mapped_column(postgresql.JSONB)


class WebhookDelivery(Base):
    """An alert event to one webhook URL (saleor's EventDelivery): the Celery task re-reads and
    locks this row, so a delivery is sent until it succeeds once and never twice at a time."""

    __tablename__ = "webhook_deliveries"
    __table_args__ = (
        sa.Index(
            "ix_webhook_deliveries_pending",
            "created_at",
            postgresql_where=sa.text("status = 'pending'"),
        ),
        sa.CheckConstraint("attempts >= 0", name="attempts_non_negative"),
    )

    id: Mapped[int] = mapped_column(sa.BigInteger, sa.Identity(), primary_key=True)
    event_id: Mapped[int] = mapped_column(
        sa.ForeignKey("alert_events.id", ondelete="CASCADE"), index=True
    )
    url: Mapped[str] = mapped_column(sa.Text)
    status: Mapped[DeliveryStatus] = mapped_column(
        choice_type(DeliveryStatus, "delivery_status"), server_default=DeliveryStatus.PENDING
    )
    attempts: Mapped[int] = mapped_column(server_default="0")
    last_error: Mapped[str] = mapped_column(sa.Text, server_default="")
    created_at: Mapped[dt.datetime] = mapped_column(
        sa.DateTime(timezone=True), server_default=sa.func.now()
    )
    last_attempt_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True))
    delivered_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True))


CONSTRAINT_FIELDS: dict[str, str] = {
    "uq_users_username": "username",
    "uq_users_email": "email",
    "uq_api_tokens_user_id_name": "name",
    "uq_switches_name": "name",
    "uq_switches_address_device_id": "device_id",
    "ck_switches_tls_cert_with_key": "tls_key_path",
    "uq_links_switch_id_name": "name",
    "uq_links_switch_id_port": "port",
    "uq_links_cable_id_cable_end": "a_link_id",
    "uq_links_cable_id_switch_id": "b_link_id",
    "ck_links_faces_switch_or_hosts": "host_ipv4_prefixes",
    "ck_links_host_vlan_id_range": "host_vlan_ids",
    "ck_cables_two_ends": "b_link_id",
    "ck_cables_propagation_range": "propagation_s",
    "uq_cables_name": "name",
    "fk_links_cable_id_cables": "cable_id",
    "uq_slices_name": "name",
    "uq_slice_switches_switch_id_dp_sid": "dp_sid",
    "ck_slices_threshold_within_burst_limit": "marking_threshold_s",
    "ck_links_capacity_range": "capacity_bps",
    "ck_slices_rate_range": "rate_bps",
    "ck_slices_threshold_iff_ecn": "marking_threshold_s",
    "ck_slices_codel_iff_codel_scheme": "codel",
    "ck_slices_codel_target_within_burst_limit": "codel.target_s",
    "ck_slices_codel_interval_positive": "codel.interval_s",
    "ck_slices_abc_iff_abc_scheme": "abc",
    "ck_slices_abc_meter_memory_range": "abc.meter_memory_s",
    "ck_slices_abc_average_memory_range": "abc.average_memory_s",
    "ck_slices_abc_reference_rate_range": "abc.reference_rate_bps",
    "ck_slices_abc_q_min_range": "abc.q_min_s",
    "ck_slices_abc_q_base_within_burst_limit": "abc.q_base_s",
    "ck_slices_abc_gamma_range": "abc.gamma_s",
    "ck_slices_abc_key": "abc.key",
    "ck_slices_abc_prefix_length_range": "abc.prefix_length",
    "fk_links_switch_id_switches": "switch_id",
    "fk_slice_links_link_id_switch_id_links": "link_ids",
}
"""Which request field a violated constraint is about, for 409/422 problem details."""
