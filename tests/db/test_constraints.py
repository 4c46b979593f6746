"""What must always hold is enforced by PostgreSQL itself, whatever the caller."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from psycopg import errors
from sqlalchemy import delete, text, update
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from sliceportal.db.models import (
    ChangeLogEntry,
    Link,
    Slice,
    SliceLink,
    SliceSla,
    SliceSwitch,
    Switch,
)
from sliceportal.schemas.choices import ChangeAction, EntityType
from utils.factories import unique


@pytest.fixture
def session(db: sessionmaker[Session]) -> Iterator[Session]:
    with db() as session:
        yield session
        session.rollback()


def new_switch(session: Session) -> Switch:
    switch = Switch(name=unique("sw"), address=f"{unique('h')}:9559")
    session.add(switch)
    session.flush()
    return switch


def new_link(session: Session, switch: Switch, port: int = 1) -> Link:
    link = Link(switch_id=switch.id, name=unique("eth"), port=port, capacity_bps=1e9)
    session.add(link)
    session.flush()
    return link


def new_slice(session: Session, **overrides: Any) -> Slice:
    values = {
        "name": unique("s"),
        "vlan_id": 10,
        "rate_bps": 1e6,
        "burst_limit_s": 0.01,
        "delay_target_s": 0.01,
        "priority": 7,
    } | overrides
    row = Slice(**values)
    session.add(row)
    session.flush()
    return row


def test_switch_names_unique(session: Session) -> None:
    switch = new_switch(session)
    session.add(Switch(name=switch.name, address="other:1"))
    with pytest.raises(IntegrityError, match="uq_switches_name"):
        session.flush()


@pytest.mark.parametrize(
    ("overrides", "constraint"),
    [
        ({"rate_bps": 0}, "ck_slices_rate_range"),
        ({"rate_bps": -5}, "ck_slices_rate_range"),
        ({"priority": 8}, "ck_slices_priority_range"),
        ({"priority": 0}, "ck_slices_priority_range"),  # best effort's
        ({"vlan_id": 4095}, "ck_slices_vlan_id_range"),
        ({"vlan_id": None}, "ck_slices_has_match"),
        ({"scheme": "ecn_step"}, "ck_slices_threshold_iff_ecn"),
        ({"scheme": "ecn_step", "marking_threshold_s": 0.5}, "ck_slices_threshold_within_burst"),
        ({"burst_limit_s": 0}, "ck_slices_burst_limit_positive"),
    ],
)
def test_slice_checks(session: Session, overrides: dict[str, Any], constraint: str) -> None:
    with pytest.raises(IntegrityError, match=constraint):
        new_slice(session, **overrides)


def test_scheme_is_a_known_choice(session: Session) -> None:
    with pytest.raises(DBAPIError, match="ck_slices_queue_scheme"):
        session.execute(
            text(
                "INSERT INTO slices (name, vlan_id, rate_bps, burst_limit_s, delay_target_s, "
                "priority, scheme) VALUES ('x', 1, 1, 1, 1, 1, 'red')"
            )
        )


def test_one_dp_sid_per_switch(session: Session) -> None:
    switch = new_switch(session)
    first, second = new_slice(session), new_slice(session)
    session.add(SliceSwitch(slice_id=first.id, switch_id=switch.id, dp_sid=5))
    session.flush()
    session.add(SliceSwitch(slice_id=second.id, switch_id=switch.id, dp_sid=5))
    with pytest.raises(IntegrityError, match="uq_slice_switches_switch_id_dp_sid"):
        session.flush()


def test_dp_sid_range(session: Session) -> None:
    switch = new_switch(session)
    session.add(SliceSwitch(slice_id=new_slice(session).id, switch_id=switch.id, dp_sid=0))
    with pytest.raises(IntegrityError, match="ck_slice_switches_dp_sid_range"):
        session.flush()


def test_slice_crosses_only_links_of_switches_where_it_has_a_dp_sid(session: Session) -> None:
    switch, other = new_switch(session), new_switch(session)
    link = new_link(session, switch)
    row = new_slice(session)
    session.add(SliceSwitch(slice_id=row.id, switch_id=other.id, dp_sid=1))
    session.flush()
    session.add(SliceLink(slice_id=row.id, link_id=link.id, switch_id=other.id))
    with pytest.raises(IntegrityError, match="fk_slice_links_link_id_switch_id_links"):
        session.flush()
    session.rollback()
    row = new_slice(session)
    link = new_link(session, new_switch(session))
    session.add(SliceLink(slice_id=row.id, link_id=link.id, switch_id=link.switch_id))
    with pytest.raises(IntegrityError, match="fk_slice_links_slice_id_switch_id_slice_switches"):
        session.flush()


def test_link_checks(session: Session) -> None:
    switch = new_switch(session)
    session.add(Link(switch_id=switch.id, name="x", port=1, capacity_bps=0))
    with pytest.raises(IntegrityError, match="ck_links_capacity_range"):
        session.flush()
    session.rollback()
    switch = new_switch(session)
    session.add(Link(switch_id=switch.id, name="x", port=1, capacity_bps=1, queue_count=9))
    with pytest.raises(IntegrityError, match="ck_links_queue_count_range"):
        session.flush()
    session.rollback()
    switch = new_switch(session)
    session.add(Link(switch_id=switch.id, name="x", port=1, capacity_bps=1, queue_count=1))
    with pytest.raises(IntegrityError, match="ck_links_queue_count_range"):  # best effort's
        session.flush()
    session.rollback()
    switch = new_switch(session)
    session.add(
        Link(switch_id=switch.id, name="x", port=1, capacity_bps=1, frame_overhead_bytes=65)
    )
    with pytest.raises(IntegrityError, match="ck_links_frame_overhead_range"):
        session.flush()


def test_link_defaults(session: Session) -> None:
    """netcalc, the sound bound, and a capacity counting frame bytes as the data plane does."""
    link = new_link(session, new_switch(session))
    session.refresh(link)
    assert (link.model, link.frame_overhead_bytes, link.queue_count) == ("netcalc", 0, 8)


def test_sla_checks(session: Session) -> None:
    session.add(SliceSla(slice_id=new_slice(session).id, max_loss_ratio=1.5))
    with pytest.raises(IntegrityError, match="ck_slice_slas_max_loss_ratio_range"):
        session.flush()


def test_change_log_is_append_only(session: Session) -> None:
    entry = ChangeLogEntry(
        request_id=unique("r"),
        action=ChangeAction.CREATE,
        entity_type=EntityType.SWITCH,
        entity_id=1,
        after={"name": "x"},
    )
    session.add(entry)
    session.commit()
    for statement in (
        update(ChangeLogEntry).where(ChangeLogEntry.id == entry.id).values(request_id="forged"),
        delete(ChangeLogEntry).where(ChangeLogEntry.id == entry.id),
        text("TRUNCATE change_log"),
    ):
        with pytest.raises(DBAPIError) as raised:
            session.execute(statement)
        assert isinstance(raised.value.orig, errors.InsufficientPrivilege)
        assert "append-only" in str(raised.value)
        session.rollback()
    assert session.get(ChangeLogEntry, entry.id) is not None
