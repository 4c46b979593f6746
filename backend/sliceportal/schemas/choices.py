"""Enumerations with labels for kinds, states, roles and schemes (netbox's ChoiceSets).

Stored as VARCHAR + CHECK (see `base.choice_type`); the API shows the values, UIs the labels.
"""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar


class Choice(StrEnum):
    """A string enum whose members carry a human label (netbox's ChoiceSet).

    Subclasses may set `__labels__ = {MEMBER: "Label"}`; a member without one is labelled from
    its value ("tail_drop" -> "Tail drop").
    """

    __labels__: ClassVar[dict[str, str]] = {}

    @property
    def label(self) -> str:
        value = str(self)
        return self.__labels__.get(value) or value.replace("_", " ").capitalize()


class Role(Choice):
    """What a user may do; each role includes the ones before it."""

    VIEWER = "viewer"
    OPERATOR = "operator"
    ADMIN = "admin"
    __labels__ = {
        VIEWER: "Viewer (read only)",
        OPERATOR: "Operator (changes the network)",
        ADMIN: "Administrator (manages users)",
    }

    @property
    def rank(self) -> int:
        return list(Role).index(self)


class SwitchKind(Choice):
    BMV2 = "bmv2"
    EMULATOR = "emulator"
    TOFINO = "tofino"
    OTHER = "other"
    __labels__ = {
        BMV2: "BMv2 simple_switch_grpc",
        EMULATOR: "sliceportal emulator",
        TOFINO: "Intel Tofino",
    }

    @property
    def needs_device_config(self) -> bool:
        """Whether the target needs the program's compiled device config with its P4Info: only
        the emulator, which models the program itself, does without. BMv2 accepts an empty one
        and then fails every read and write (UNKNOWN)."""
        return self is not SwitchKind.EMULATOR


class SwitchState(Choice):
    """Set by the control-plane workers; the API creates switches as `unknown`."""

    UNKNOWN = "unknown"
    REACHABLE = "reachable"
    UNREACHABLE = "unreachable"
    __labels__ = {UNKNOWN: "Not contacted yet"}


class SwitchHealth(Choice):
    """How the topology shows a switch: from its state and what its last reconciliation found."""

    UNKNOWN = "unknown"
    HEALTHY = "healthy"
    DEGRADED = "degraded"
    """It answers, but its pipeline or entries are not what the portal says, or the last
    reconciliation failed."""
    DOWN = "down"
    __labels__ = {UNKNOWN: "Not contacted yet", DOWN: "Unreachable"}


class SliceState(Choice):
    """pending -> deploying -> active, or failed; the API sets new and changed slices pending."""

    PENDING = "pending"
    DEPLOYING = "deploying"
    ACTIVE = "active"
    FAILED = "failed"
    __labels__ = {PENDING: "Pending deployment"}


class QueueScheme(Choice):
    TAIL_DROP = "tail_drop"
    ECN_STEP = "ecn_step"
    METER = "meter"
    """The paper's baseline: a P4 meter (trTCM) polices rate and burst; no delay control."""
    CODEL = "codel"
    """CoDel (RFC 8289) on the slice's virtual-queue delay: drops or marks to hold a target."""
    ABC = "abc"
    """P4-ABC: per-aggregate rate meters; a more active aggregate meets a lower drop threshold."""
    __labels__ = {
        ECN_STEP: "ECN step marking",
        METER: "P4 meter (baseline)",
        CODEL: "CoDel",
        ABC: "ABC (activity-based)",
    }


class AbcKey(Choice):
    """What an abc slice's aggregates are (`domain.abc.AggregateKey`): its packets' source
    addresses, or their source prefixes of a given length."""

    SOURCE_ADDRESS = "source_address"
    SOURCE_PREFIX = "source_prefix"


class ChangeAction(Choice):
    CREATE = "create"
    UPDATE = "update"
    DELETE = "delete"


class CableEnd(Choice):
    """Which end of a cable a link is (netbox's A and B terminations): the link is that end's
    egress port, toward the other end."""

    A = "a"
    B = "b"


class EntityType(Choice):
    SWITCH = "switch"
    LINK = "link"
    CABLE = "cable"
    SLICE = "slice"
    USER = "user"
    API_TOKEN = "api_token"
    ALERT = "alert"
    __labels__ = {API_TOKEN: "API token"}


class AlertState(Choice):
    """firing -> resolved; acknowledging is separate (an operator says "seen"), in any state."""

    FIRING = "firing"
    RESOLVED = "resolved"


class AlertEventKind(Choice):
    """What happened to an alert: each event is pushed to browsers and sent to the webhooks."""

    FIRING = "firing"
    RESOLVED = "resolved"
    ACKNOWLEDGED = "acknowledged"


class DeliveryStatus(Choice):
    """pending -> delivered, or failed after a permanent refusal or the last retry."""

    PENDING = "pending"
    DELIVERED = "delivered"
    FAILED = "failed"
