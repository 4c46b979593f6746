"""The network's rules held by PostgreSQL whatever the writer (migration 0019): a port is used
once, a cable joins two ports of two switches and keeps both, hosts only behind uncabled ports.
`check_now` runs the deferred two-ends trigger as a commit would (`SET CONSTRAINTS … IMMEDIATE`
checks what is pending)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from sliceportal.core import embedded
from sliceportal.db.migrate import downgrade, upgrade
from sliceportal.db.models import Cable, Link, Switch
from sliceportal.schemas.choices import CableEnd
from utils.factories import unique


@pytest.fixture
def session(db: sessionmaker[Session]) -> Iterator[Session]:
    with db() as session:
        yield session
        session.rollback()


def check_now(session: Session) -> None:
    session.flush()
    session.execute(text("SET CONSTRAINTS ALL IMMEDIATE"))
    session.execute(text("SET CONSTRAINTS ALL DEFERRED"))


def refused_by_two_ends(session: Session) -> None:
    with pytest.raises(IntegrityError) as refused:
        check_now(session)
    assert refused.value.orig is not None
    assert refused.value.orig.diag.constraint_name == "ck_cables_two_ends"


def new_link(session: Session, switch: Switch | None = None, port: int = 1) -> Link:
    if switch is None:
        switch = Switch(name=unique("sw"), address=f"{unique('h')}:9559")
        session.add(switch)
        session.flush()
    link = Link(switch_id=switch.id, name=unique("eth"), port=port, capacity_bps=1e9)
    session.add(link)
    session.flush()
    return link


def new_cable(session: Session, *ends: Link) -> Cable:
    """A cable whose ends are `ends` (a, b, …), in one statement each as the service does."""
    cable = Cable(name=unique("cable"))
    session.add(cable)
    session.flush()
    for link, end in zip(ends, (CableEnd.A, CableEnd.B, CableEnd.B), strict=False):
        link.cable_id, link.cable_end = cable.id, end
    session.flush()
    return cable


def test_a_cable_has_both_ends(session: Session) -> None:
    new_cable(session, new_link(session))
    refused_by_two_ends(session)


def test_a_link_cannot_leave_its_cable(session: Session) -> None:
    a, b = new_link(session), new_link(session)
    new_cable(session, a, b)
    check_now(session)
    a.cable_id, a.cable_end = None, None
    refused_by_two_ends(session)


def test_a_cabled_link_cannot_be_deleted(session: Session) -> None:
    a, b = new_link(session), new_link(session)
    new_cable(session, a, b)
    check_now(session)
    session.execute(text("DELETE FROM links WHERE id = :id"), {"id": a.id})
    refused_by_two_ends(session)


def test_a_cable_joins_two_switches(session: Session) -> None:
    a = new_link(session)
    switch = session.get(Switch, a.switch_id)
    assert switch is not None
    with pytest.raises(IntegrityError, match="uq_links_cable_id_switch_id"):
        new_cable(session, a, new_link(session, switch, port=2))


def test_a_cable_has_two_ends_only(session: Session) -> None:
    with pytest.raises(IntegrityError, match="uq_links_cable_id_cable_end"):
        new_cable(session, new_link(session), new_link(session), new_link(session))


def test_a_cable_needs_no_end_name_without_a_cable(session: Session) -> None:
    link = new_link(session)
    link.cable_end = CableEnd.A
    with pytest.raises(IntegrityError, match="ck_links_cable_end_with_cable"):
        session.flush()


def test_hosts_only_behind_uncabled_ports(session: Session) -> None:
    a, b = new_link(session), new_link(session)
    new_cable(session, a, b)
    a.host_vlan_ids = [10]
    with pytest.raises(IntegrityError, match="ck_links_faces_switch_or_hosts"):
        session.flush()


@pytest.mark.parametrize("vlan", [0, 4095])
def test_host_vlan_range(session: Session, vlan: int) -> None:
    link = new_link(session)
    link.host_vlan_ids = [5, vlan]
    with pytest.raises(IntegrityError, match="ck_links_host_vlan_id_range"):
        session.flush()


def test_propagation_is_not_negative(session: Session) -> None:
    session.add(Cable(name=unique("cable"), propagation_s=-1.0))
    with pytest.raises(IntegrityError, match="ck_cables_propagation_range"):
        session.flush()


def test_downgrade_below_0019_refuses_while_cables_are_stored(postgres_server_url: str) -> None:
    name = f"sliceportal_migrate_{uuid.uuid4().hex[:8]}"
    url = embedded.create_database(postgres_server_url, name)
    try:
        upgrade(url, "0019")
        with psycopg.connect(embedded.libpq_url(url), autocommit=True) as conn:
            conn.execute(
                """
                WITH switch AS (
                    INSERT INTO switches (name, address)
                    VALUES ('s1', 'h:1'), ('s2', 'h:2') RETURNING id
                )
                INSERT INTO links (switch_id, name, port, capacity_bps)
                SELECT id, 'eth1', 1, 1e9 FROM switch
                """
            )
            with conn.transaction():
                conn.execute(
                    "INSERT INTO cables (id, name) OVERRIDING SYSTEM VALUE VALUES (1, 'c')"
                )
                conn.execute(
                    "UPDATE links SET cable_id = 1,"
                    " cable_end = CASE WHEN switch_id = (SELECT min(id) FROM switches)"
                    " THEN 'a' ELSE 'b' END"
                )
            with pytest.raises(RuntimeError, match="1 cables"):
                downgrade(url, "0018")
            with conn.transaction():
                conn.execute("UPDATE links SET cable_id = NULL, cable_end = NULL")
                conn.execute("DELETE FROM cables")
            downgrade(url, "0018")
            columns = conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = 'links'"
            ).fetchall()
        assert ("cable_id",) not in columns
    finally:
        embedded.drop_database(postgres_server_url, name)
