"""Cables: a cable joins two links (egress ports) of two switches, and is made and removed with
both its ends in one transaction, with change-log entries for the cable and for each link (its
history then shows when it was wired).

A port is used once: a link is at most one cable's end, and a link that faces hosts is none.
The ends are locked (`FOR UPDATE`, in id order) before they are checked, so two requests
wiring the same port cannot both pass; the database's keys and the `ck_cables_two_ends`
trigger hold the same rules under any writer (migration 0019).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from sliceportal.db import changes
from sliceportal.db.changes import Change, ChangeContext
from sliceportal.db.models import Cable, Link, Slice, SliceLink
from sliceportal.db.queries import links as link_queries
from sliceportal.schemas.cables import CableCreate, CableUpdate
from sliceportal.schemas.choices import CableEnd, ChangeAction
from sliceportal.services import admission, crud, paths
from sliceportal.services.errors import ConflictError, InvalidFieldError
from sliceportal.services.slices import slice_query


def create_cable(session: Session, context: ChangeContext, data: CableCreate) -> Cable:
    ends = {CableEnd.A: data.a_link_id, CableEnd.B: data.b_link_id}
    if data.a_link_id == data.b_link_id:
        raise InvalidFieldError(
            "a cable joins two ports: b_link_id is a_link_id", field="b_link_id"
        )
    links = _lock(session, list(ends.values()))
    for end, link_id in ends.items():
        field = f"{end}_link_id"
        link = links.get(link_id)
        if link is None:
            raise InvalidFieldError(f"link {link_id} does not exist", field=field)
        _check_free(session, link, field)
    a, b = links[data.a_link_id], links[data.b_link_id]
    if a.switch_id == b.switch_id:
        raise InvalidFieldError(
            f"links {a.name!r} and {b.name!r} are ports of the same switch: a cable joins two "
            "switches",
            field="b_link_id",
        )
    cable = Cable(**data.model_dump(exclude={"a_link_id", "b_link_id"}))
    session.add(cable)
    session.flush()
    before = {end: links[link_id].snapshot() for end, link_id in ends.items()}
    for end, link_id in ends.items():
        links[link_id].cable_id = cable.id
        links[link_id].cable_end = end
    session.flush()
    session.expire(cable, ["ends"])
    log = [Change.of(ChangeAction.CREATE, cable, None)]
    log += [Change.of(ChangeAction.UPDATE, links[ends[end]], before[end]) for end in ends]
    changes.write(session, context, log)
    session.commit()
    return cable


def update_cable(
    session: Session, context: ChangeContext, cable_id: int, data: CableUpdate
) -> Cable:
    return admission.retrying(session, lambda: _update(session, context, cable_id, data))


def _update(session: Session, context: ChangeContext, cable_id: int, data: CableUpdate) -> Cable:
    cable = crud.get(session, Cable, cable_id, lock=True)
    values = data.model_dump(exclude_unset=True)
    propagation = values.get("propagation_s", cable.propagation_s)
    if propagation != cable.propagation_s:
        _admit_propagation(session, cable, propagation)
    return crud.update(session, context, cable, values)


def _admit_propagation(session: Session, cable: Cable, propagation_s: float) -> None:
    """409 admission-rejected when the slices with an end-to-end target crossing the cable
    would miss it with its new propagation delay. Its ends and those slices' paths are
    locked (as a slice change locks them), so no admission on them runs meanwhile."""
    ends = [link.id for link in cable.ends]
    locked = link_queries.lock_links(session, ends, changed=ends)
    params = {
        link_id: replace(link.params, propagation_s=propagation_s)
        if link_id in ends
        else link.params
        for link_id, link in locked.items()
    }
    loads = link_queries.read_loads(session, params.values())
    admission.admit(
        session,
        f"propagation {propagation_s:g} s on cable {cable.name!r}",
        params,
        loads,
        changed=ends,
    )


def crossing(session: Session, cable: Cable) -> list[Slice]:
    """The slices that leave a switch by one of the cable's ends, so their traffic crosses it
    (by id)."""
    ends = [link.id for link in cable.ends]
    crossers = select(SliceLink.slice_id).where(SliceLink.link_id.in_(ends))
    query = slice_query().where(Slice.id.in_(crossers)).order_by(Slice.id)
    return list(session.scalars(query))


def affected(session: Session, cable_id: int) -> list[dict[str, Any]]:
    """The slices crossing the cable, each with the shortest admissible path avoiding it
    (`services.paths.detour`): what an operator moves before deleting or slowing it, since
    the portal never reroutes a slice on its own."""
    cable = crud.get(session, Cable, cable_id)
    avoid = frozenset(link.id for link in cable.ends)
    ports = link_queries.read_ports(session)
    listed = []
    for row in crossing(session, cable):
        proposal, reason = paths.detour(session, ports, row, avoid)
        listed.append(
            {
                "slice_id": row.id,
                "name": row.name,
                "path": row.path,
                "proposal": proposal,
                "reason": reason,
            }
        )
    return listed


def delete_cable(session: Session, context: ChangeContext, cable_id: int) -> None:
    """Unwire both ends (they stay, as ports that face nothing yet) and delete the cable; 409
    while slices cross it: a topology change never reroutes a slice silently."""
    cable = crud.get(session, Cable, cable_id, lock=True)
    ends = _lock(session, [link.id for link in cable.ends])
    crossers = crossing(session, cable)
    if crossers:
        names = ", ".join(repr(row.name) for row in crossers[:5])
        more = f" and {len(crossers) - 5} more" if len(crossers) > 5 else ""
        raise ConflictError(
            f"slice(s) {names}{more} cross cable {cable.name!r}: move them first "
            f"(GET /api/v1/cables/{cable.id}/affected proposes a path for each)"
        )
    before_cable = cable.snapshot()
    before = {link_id: link.snapshot() for link_id, link in ends.items()}
    for link in ends.values():
        link.cable_id = None
        link.cable_end = None
    session.flush()
    session.delete(cable)
    session.flush()
    log = [Change.of(ChangeAction.DELETE, cable, before_cable)]
    log += [Change.of(ChangeAction.UPDATE, link, before[link.id]) for link in ends.values()]
    changes.write(session, context, log)
    session.commit()


def check_hosts_allowed(link: Link, values: dict[str, Any]) -> None:
    """A link that is a cable's end faces a switch: it cannot also have hosts behind it."""
    if link.cable_id is None:
        return
    for field in ("host_ipv4_prefixes", "host_vlan_ids"):
        if values.get(field):
            raise ConflictError(
                f"link {link.name!r} is an end of cable {link.cable_id}: a port faces a switch "
                "or hosts, not both; delete the cable first",
                field=field,
            )


def _lock(session: Session, link_ids: list[int]) -> dict[int, Link]:
    query = select(Link).where(Link.id.in_(link_ids)).order_by(Link.id).with_for_update()
    return {link.id: link for link in session.scalars(query)}


def _check_free(session: Session, link: Link, field: str) -> None:
    """`link` may become a cable's end: it is none yet and faces no hosts."""
    if link.cable_id is not None:
        cable = session.get(Cable, link.cable_id)
        name = cable.name if cable is not None else str(link.cable_id)
        raise ConflictError(
            f"link {link.name!r} is already an end of cable {name!r}: a port is used once",
            field=field,
        )
    hosts = [str(p) for p in link.host_ipv4_prefixes] + [f"VLAN {v}" for v in link.host_vlan_ids]
    if hosts:
        raise ConflictError(
            f"link {link.name!r} faces hosts ({', '.join(hosts)}): a port faces a switch or "
            "hosts, not both; clear its hosts first",
            field=field,
        )
