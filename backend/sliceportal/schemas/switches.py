from __future__ import annotations

import datetime as dt
import ipaddress
from collections.abc import Iterable, Sequence
from typing import Annotated

from pydantic import AfterValidator, Field, Strict, model_validator

from sliceportal.core.config import HOST_NAME
from sliceportal.domain.spec import MAX_DEVICE_ID
from sliceportal.schemas.choices import SwitchKind, SwitchState
from sliceportal.schemas.common import (
    Description,
    InputModel,
    Name,
    NoNul,
    Page,
    PatchModel,
    PublicModel,
)


def check_address(value: str) -> str:
    """A P4Runtime gRPC address: `host:port`, `ipv4:port` or `[ipv6]:port`."""
    host, sep, port = value.rpartition(":")
    if not sep or not (port.isascii() and port.isdigit()) or not 1 <= int(port) <= 65535:
        raise ValueError("must be host:port with a port in 1..65535")
    if host.startswith("[") and host.endswith("]"):
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            raise ValueError(f"{host} is not an IPv6 address") from None
    elif not HOST_NAME.match(host):
        raise ValueError(f"{host!r} is not a host name or IPv4 address")
    return value


def address_host(address: str) -> str:
    """The host of a checked address, without an IPv6 address's brackets."""
    host = address.rpartition(":")[0]
    return host[1:-1] if host.startswith("[") else host


def host_allowed(host: str, allowed: Iterable[str]) -> bool:
    """`host` is an IP address inside one of the `allowed` networks, or a host name listed
    there (or under a `.domain` listed). Names are not resolved: what a name resolves to can
    change between this check and the connection, so a name is allowed only by name."""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        name = host.lower().rstrip(".")
        return any(
            name == entry or (entry.startswith(".") and name.endswith(entry)) for entry in allowed
        )
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    for entry in allowed:
        try:
            network = ipaddress.ip_network(entry)
        except ValueError:  # a name
            continue
        if ip in network:
            return True
    return False


def check_switch_network(address: str, allowed: Sequence[str]) -> None:
    """Refuse a switch address outside the networks the portal may connect to
    (`SLICEPORTAL_SWITCH_NETWORKS`): a switch address is where the workers open connections."""
    host = address_host(address)
    if not host_allowed(host, allowed):
        raise ValueError(
            f"{host} is outside the networks switches may be at "
            f"(SLICEPORTAL_SWITCH_NETWORKS: {','.join(allowed)})"
        )


Address = Annotated[str, Field(max_length=255), NoNul, AfterValidator(check_address)]
DeviceId = Annotated[int, Strict(), Field(ge=0, le=MAX_DEVICE_ID)]
ElectionId = Annotated[int, Strict(), Field(ge=1, le=MAX_DEVICE_ID)]
Path = Annotated[str, Field(min_length=1, max_length=1024), NoNul]


class SwitchCreate(InputModel):
    name: Name
    description: Description = ""
    address: Address = Field(examples=["127.0.0.1:9559"])
    device_id: DeviceId = 1
    election_id: ElectionId = 1
    kind: SwitchKind = SwitchKind.BMV2
    tls_ca_path: Path | None = None
    tls_cert_path: Path | None = None
    tls_key_path: Path | None = None

    @model_validator(mode="after")
    def _cert_with_key(self) -> SwitchCreate:
        if (self.tls_cert_path is None) != (self.tls_key_path is None):
            raise ValueError("tls_cert_path and tls_key_path go together")
        return self


class SwitchUpdate(PatchModel):
    nullable = frozenset({"tls_ca_path", "tls_cert_path", "tls_key_path"})

    name: Name | None = None
    description: Description | None = None
    address: Address | None = None
    device_id: DeviceId | None = None
    election_id: ElectionId | None = None
    kind: SwitchKind | None = None
    tls_ca_path: Path | None = None
    tls_cert_path: Path | None = None
    tls_key_path: Path | None = None


class SwitchSyncPublic(PublicModel):
    """What the control plane last saw of the switch (`state` says whether it answered)."""

    pipeline_cookie: str | None = Field(
        description="cookie of the switch's pipeline when last reached, hex; null: none, or "
        "not read yet"
    )
    pipeline_in_sync: bool | None = Field(
        description="the switch runs the portal's pipeline; null: not known, the switch does "
        "not answer (state `unreachable`)"
    )
    last_reconcile_at: dt.datetime | None
    last_contact_at: dt.datetime | None
    last_error: str | None
    entries_desired: int = Field(description="table entries the slices need on the switch")
    entries_installed: int | None = Field(
        description="table entries the switch held when read back; null: not known, the "
        "switch does not answer (state `unreachable`)"
    )


class SwitchPublic(PublicModel):
    id: int
    name: str
    description: str
    address: str
    device_id: int
    election_id: int
    kind: SwitchKind
    state: SwitchState
    tls_ca_path: str | None
    tls_cert_path: str | None
    tls_key_path: str | None
    sync: SwitchSyncPublic | None = Field(description="null until a worker reconciled it")
    created_at: dt.datetime
    updated_at: dt.datetime

    @model_validator(mode="after")
    def _unknown_while_unreachable(self) -> SwitchPublic:
        """What a switch held is not known while it does not answer: never report it in
        sync, nor the figure of the last read-back (kept in the database, not shown)."""
        if self.state is SwitchState.UNREACHABLE and self.sync is not None:
            self.sync = self.sync.model_copy(
                update={"pipeline_in_sync": None, "entries_installed": None}
            )
        return self


SwitchesPublic = Page[SwitchPublic]


class SwitchTaskAccepted(PublicModel):
    """A deploy or reconciliation was queued; its transitions appear in the change log under
    the request id `worker:<task_id>`."""

    task_id: str
    switch_id: int
    deploy: bool
