"""What `sliceportal serve` sets up so that a newcomer sees slices working at once.

- The switches it is told about: the embedded emulator, and those of
  `SLICEPORTAL_BOOTSTRAP_SWITCHES` (`name=host:port[/device_id]`, comma-separated; docker-compose
  names its BMv2 there). A switch already registered under the name keeps its row (its address
  is updated when it moved).
- On the first start (no slice in the database yet), a demo network on the first of them: one
  1 Gbit/s link on port 1 (BMv2's line rate) and the paper's three slices, DC, Enterprise and
  Peering (Harkous et al. 2021, Table II, BMv2 column: 48, 12 and 240 Mbit/s; burst limits 20,
  10 and 30 ms; DC with ECN step marking at 5 ms), with the priorities of its experiment 3
  (DC and Enterprise above Peering), each matched by a destination /16.
- `demo_traffic`: the traffic of Table I for the emulator (TCP: DC 10 DCTCP flows at 5 ms RTT,
  Enterprise 1 Cubic flow at 10 ms, Peering 10 Cubic flows at 30 ms), so counters move.

Every switch is then deployed (through the outbox, after the commit), which pushes the
pipeline where the switch does not report the portal's cookie and installs the entries.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from ipaddress import IPv4Network
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from sliceportal.core.config import Settings
from sliceportal.db import changes, outbox
from sliceportal.db.changes import ChangeContext
from sliceportal.db.models import Slice, Switch
from sliceportal.schemas.choices import QueueScheme, SwitchKind
from sliceportal.schemas.links import LinkCreate
from sliceportal.schemas.slices import Sla, SliceCreate
from sliceportal.schemas.switches import SwitchCreate, SwitchUpdate
from sliceportal.services import links, slices, switches

MBIT = 1e6
DEMO_PORT = 1
DEMO_CAPACITY_BPS = 1000 * MBIT


@dataclass(frozen=True)
class DemoSlice:
    name: str
    rate_bps: float
    burst_limit_s: float
    priority: int
    prefix: str
    marking_threshold_s: float | None = None


DEMO_SLICES = (
    DemoSlice("DC", 48 * MBIT, 0.020, 7, "10.1.0.0/16", marking_threshold_s=0.005),
    DemoSlice("Enterprise", 12 * MBIT, 0.010, 7, "10.2.0.0/16"),
    DemoSlice("Peering", 240 * MBIT, 0.030, 6, "10.3.0.0/16"),
)


@dataclass(frozen=True)
class SwitchSpec:
    name: str
    address: str
    kind: SwitchKind
    device_id: int = 1


class BootstrapError(ValueError):
    """SLICEPORTAL_BOOTSTRAP_SWITCHES cannot be understood."""


def parse_switches(text: str) -> list[SwitchSpec]:
    """`name=host:port[/device_id]`, comma-separated (BMv2 switches)."""
    found = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, rest = item.partition("=")
        address, _, device = rest.partition("/")
        if not sep or not name or not address:
            raise BootstrapError(f"{item!r} is not name=host:port[/device_id]")
        try:
            device_id = int(device) if device else 1
        except ValueError:
            raise BootstrapError(f"{item!r}: the device id is not an integer") from None
        found.append(SwitchSpec(name, address, SwitchKind.BMV2, device_id))
    return found


def _switch(
    session: Session, context: ChangeContext, spec: SwitchSpec, settings: Settings
) -> Switch:
    existing = session.scalars(sa.select(Switch).where(Switch.name == spec.name)).one_or_none()
    if existing is None:
        data = SwitchCreate(
            name=spec.name, address=spec.address, device_id=spec.device_id, kind=spec.kind
        )
        return switches.create_switch(session, context, data, settings)
    if (existing.address, existing.device_id) != (spec.address, spec.device_id):
        change = SwitchUpdate(address=spec.address, device_id=spec.device_id)
        return switches.update_switch(session, context, existing.id, change, settings)
    return existing


def _demo_network(
    session: Session, context: ChangeContext, switch: Switch, settings: Settings
) -> None:
    link = links.create_link(
        session,
        context,
        LinkCreate(
            switch_id=switch.id,
            name=f"port{DEMO_PORT}",
            port=DEMO_PORT,
            capacity_bps=DEMO_CAPACITY_BPS,
            description="demo link: BMv2's line rate",
        ),
        settings,
    )
    for demo in DEMO_SLICES:
        ecn = demo.marking_threshold_s is not None
        data = SliceCreate(
            name=demo.name,
            description="demo slice of Harkous et al. 2021, Table II",
            ipv4_prefixes=[IPv4Network(demo.prefix)],
            rate_bps=demo.rate_bps,
            burst_limit_s=demo.burst_limit_s,
            priority=demo.priority,
            scheme=QueueScheme.ECN_STEP if ecn else QueueScheme.TAIL_DROP,
            marking_threshold_s=demo.marking_threshold_s,
            sla=Sla(max_delay_s=demo.burst_limit_s),
            link_ids=[link.id],
        )
        slices.create_slice(session, context, data)


def bootstrap(session: Session, settings: Settings, specs: list[SwitchSpec]) -> list[int]:
    """Register `specs`, lay out the demo network on the first one when the database has no
    slice yet, and deploy every one of them; their ids."""
    context = ChangeContext(user_id=None, request_id=f"serve-bootstrap-{uuid.uuid4().hex}")
    ids = [_switch(session, context, spec, settings).id for spec in specs]
    if ids and session.scalar(sa.select(sa.func.count()).select_from(Slice)) == 0:
        first = session.get(Switch, ids[0])
        assert first is not None
        _demo_network(session, context, first, settings)
    deploys = [outbox.reconcile_switch(switch_id, deploy=True) for switch_id in ids]
    changes.write(session, None, messages=deploys)
    session.commit()
    return ids


def demo_traffic() -> dict[str, Any]:
    """A traffic profile (`sliceportal switch --traffic`) of the demo slices."""
    flows = {
        "DC": ("dctcp", 10, 0.005),
        "Enterprise": ("cubic", 1, 0.010),
        "Peering": ("cubic", 10, 0.030),
    }
    sources = []
    for demo in DEMO_SLICES:
        cc, count, rtt = flows[demo.name]
        sources.append(
            {
                "name": demo.name,
                "pattern": "tcp",
                "ipv4_dst": demo.prefix.replace("0.0/16", "0.10"),
                "cc": cc,
                "flows": count,
                "rtt_s": rtt,
            }
        )
    return {
        "about": "the demo slices' traffic (Harkous et al. 2021, Table I, BMv2 column)",
        "seed": 1,
        "ports": {str(DEMO_PORT): {"rate_bps": DEMO_CAPACITY_BPS}},
        "sources": sources,
    }
