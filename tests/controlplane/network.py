"""A small network in the database, made through the services as the API would."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from sliceportal.core.config import Settings, get_settings
from sliceportal.db.changes import ChangeContext
from sliceportal.db.models import ChangeLogEntry, Link, Slice, SliceSwitch, Switch
from sliceportal.domain import dataplane as dp
from sliceportal.emulator.server import EmulatorServer
from sliceportal.p4rt.connection import SwitchTarget
from sliceportal.p4rt.session import connect
from sliceportal.schemas.links import LinkCreate
from sliceportal.schemas.slices import SliceCreate
from sliceportal.schemas.switches import SwitchCreate
from sliceportal.services import links, slices, switches
from utils.factories import MBIT, unique

SETUP = ChangeContext(user_id=None, request_id="test-setup")
ELECTION_ID = 10


def make_switch(
    db: Session, address: str, device_id: int, settings: Settings | None = None, **overrides: Any
) -> Switch:
    """A switch registered as the API would (`settings` say where its TLS files may be)."""
    body = {
        "name": unique("sw"),
        "address": address,
        "device_id": device_id,
        "election_id": ELECTION_ID,
        "kind": "emulator",
    } | overrides
    return switches.create_switch(db, SETUP, SwitchCreate(**body), settings or get_settings())


def make_link(db: Session, settings: Settings, switch_id: int, port: int = 1) -> Link:
    body = LinkCreate(
        switch_id=switch_id, name=unique("eth"), port=port, capacity_bps=10_000 * MBIT
    )
    return links.create_link(db, SETUP, body, settings)


def make_slice(db: Session, link_ids: list[int], index: int, **overrides: Any) -> Slice:
    """A slice to 10.<index // 256>.<index % 256>.0/24, 1 Mbit/s, 20 ms, priority 7."""
    body = {
        "name": unique("slice"),
        "ipv4_prefixes": [f"10.{index // 256}.{index % 256}.0/24"],
        "rate_bps": MBIT,
        "burst_limit_s": 0.02,
        "priority": 7,
        "link_ids": link_ids,
    } | overrides
    return slices.create_slice(db, SETUP, SliceCreate(**body))


def make_undeployable_slice(db: Session, link_ids: list[int], index: int) -> Slice:
    """A slice whose 1 ms burst limit cannot hold one full-size frame at its 1 Mbit/s, as
    stored before the services checked what the data plane holds (they refuse it now)."""
    row = make_slice(db, link_ids, index)
    db.execute(sa.update(Slice).where(Slice.id == row.id).values(burst_limit_s=0.001))
    db.commit()
    return row


def remove_switch(db: Session, switch_id: int) -> None:
    """Delete a switch with its slices and links, as an operator would."""
    crossing = db.scalars(
        sa.select(SliceSwitch.slice_id).where(SliceSwitch.switch_id == switch_id)
    ).all()
    for slice_id in crossing:
        slices.delete_slice(db, SETUP, slice_id)
    for link_id in db.scalars(sa.select(Link.id).where(Link.switch_id == switch_id)).all():
        links.delete_link(db, SETUP, link_id)
    switches.delete_switch(db, SETUP, switch_id)


def state_of(db: Session, slice_id: int) -> tuple[str, str | None]:
    db.expire_all()
    row = db.get(Slice, slice_id)
    assert row is not None
    return row.state.value, row.state_detail


def worker_changes(db: Session, request_id: str) -> list[ChangeLogEntry]:
    return list(
        db.scalars(
            sa.select(ChangeLogEntry)
            .where(ChangeLogEntry.request_id == request_id)
            .order_by(ChangeLogEntry.id)
        )
    )


def held(emulator: EmulatorServer, settings: Settings) -> list[dp.TableEntry]:
    """What the switch holds, read by a controller of its own (the portal's adapter)."""
    session = connect(
        SwitchTarget(0, emulator.address, emulator.service.device_id, 1), settings=settings
    )
    try:
        return session.read_entries()
    finally:
        session.close()
