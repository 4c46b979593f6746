"""Creating, changing and deleting slices: link locking, admission, DP_SIDs, change log.

Lock order, the same everywhere so concurrent requests cannot deadlock: the slice row (update,
delete), then the switches it crosses (FOR NO KEY UPDATE, ascending id: serialises DP_SID
allocation per switch), then its links (FOR UPDATE, ascending id: serialises admission per link,
and link updates take the same lock). Admission and DP_SIDs are decided under the locks; a
creation inserts its own row before taking them, to keep the locked section short.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select, delete, exists, func, literal, or_, select
from sqlalchemy.orm import Session, selectinload

from sliceportal.api.schemas.slices import SliceCreate, SliceUpdate
from sliceportal.controlplane import outbox
from sliceportal.db.choices import ChangeAction, QueueScheme, SliceState
from sliceportal.db.models import (
    MAX_DP_SID,
    Link,
    Slice,
    SliceLink,
    SliceSla,
    SliceSwitch,
    Switch,
)
from sliceportal.domain import SpecError, slice_spec
from sliceportal.services import admission, changes, crud
from sliceportal.services.changes import ChangeContext
from sliceportal.services.errors import ConflictError, InvalidFieldError, NotFoundError

ANALYSED_FIELDS = frozenset(
    {
        "rate_bps",
        "burst_limit_s",
        "burst_bytes",
        "delay_target_s",
        "priority",
        "max_packet_bytes",
        "link_ids",
    }
)
"""Changing any of these re-runs admission on the slice's links."""


def slice_query() -> Select[tuple[Slice]]:
    """Slices with what their public form and snapshot need, loaded in three queries."""
    return select(Slice).options(
        selectinload(Slice.sla), selectinload(Slice.link_rows), selectinload(Slice.switch_rows)
    )


def get_slice(session: Session, slice_id: int, *, lock: bool = False) -> Slice:
    query = slice_query().where(Slice.id == slice_id)
    if lock:
        query = query.with_for_update(of=Slice)
    found = session.scalars(query).one_or_none()
    if found is None:
        raise NotFoundError(f"slice {slice_id} does not exist")
    return found


def _check_rules(values: dict[str, Any]) -> None:
    """Rules across fields, on the slice as it will be stored."""
    if values["vlan_id"] is None and not values["ipv4_prefixes"]:
        raise InvalidFieldError("a slice needs a vlan_id or ipv4_prefixes", field="vlan_id")
    threshold = values["marking_threshold_s"]
    if values["scheme"] is QueueScheme.ECN_STEP:
        if threshold is None:
            raise InvalidFieldError(
                "ecn_step needs a marking_threshold_s", field="marking_threshold_s"
            )
        if threshold > values["burst_limit_s"]:
            raise InvalidFieldError(
                "the marking threshold must not exceed the burst limit",
                field="marking_threshold_s",
            )
    elif threshold is not None:
        raise InvalidFieldError(
            f"{values['scheme']} takes no marking_threshold_s", field="marking_threshold_s"
        )


def _check_name_free(session: Session, name: str, slice_id: int | None) -> None:
    """Names identify slices in the analytics too, so a taken one is refused before them."""
    query = exists().where(Slice.name == name)
    if slice_id is not None:
        query = query.where(Slice.id != slice_id)
    if session.scalar(select(query)):
        raise ConflictError(f"slice name {name!r} is already taken", field="name")


def _burst_limit(values: dict[str, Any], burst_bytes: float | None, given_limit: bool) -> None:
    """Turn a burst given in bytes into the stored burst limit (seconds at the slice's rate)."""
    if burst_bytes is None:
        return
    if given_limit:
        raise InvalidFieldError("give burst_limit_s or burst_bytes, not both", field="burst_bytes")
    values["burst_limit_s"] = burst_bytes * 8 / values["rate_bps"]


def _lock_links(session: Session, link_ids: set[int]) -> tuple[list[Switch], list[Link]]:
    """Lock the switches and then the links of `link_ids` (ascending ids); 422 if one is gone."""
    switch_ids = set(session.scalars(select(Link.switch_id).where(Link.id.in_(link_ids))).all())
    switches = list(
        session.scalars(
            select(Switch)
            .where(Switch.id.in_(switch_ids))
            .order_by(Switch.id)
            .with_for_update(key_share=True)
        )
    )
    links = list(
        session.scalars(
            select(Link).where(Link.id.in_(link_ids)).order_by(Link.id).with_for_update()
        )
    )
    missing = link_ids - {link.id for link in links}
    if missing:
        raise InvalidFieldError(f"link {min(missing)} does not exist", field="link_ids")
    return switches, links


def _admit(
    session: Session, values: dict[str, Any], links: list[Link], exclude_slice_id: int
) -> None:
    """Admission on every link the slice will cross, with the slice as it will be stored."""
    params = [admission.LinkParams.of(link) for link in links]
    loads = admission.stored_loads(session, params, exclude_slice_id=exclude_slice_id)
    for link in params:
        try:
            candidate = slice_spec(
                values["name"],
                values["rate_bps"],
                values["priority"],
                burst_limit_s=values["burst_limit_s"],
                delay_target_s=values["delay_target_s"],
                max_packet_bytes=values["max_packet_bytes"],
                mtu_bytes=link.mtu_bytes,
            )
        except SpecError as exc:
            raise InvalidFieldError(exc.message, field=exc.field) from None
        loads[link.id] = loads[link.id].plus(candidate)
        admission.check_queues(link, loads[link.id], field="priority")
    admission.check_links(session, f"slice {values['name']!r}", params, loads)


def _free_dp_sid(session: Session, switch: Switch) -> int:
    """The lowest DP_SID not held on `switch` (the switch row is locked: nobody allocates
    meanwhile). Usually the held ones are exactly 1..n, found by one count; else the first gap
    after 0, in one ordered pass."""
    count, top = session.execute(
        select(func.count(), func.coalesce(func.max(SliceSwitch.dp_sid), 0)).where(
            SliceSwitch.switch_id == switch.id
        )
    ).one()
    dp_sid: int = top + 1
    if count != top:
        held = (
            select(literal(0).label("dp_sid"))
            .union_all(select(SliceSwitch.dp_sid).where(SliceSwitch.switch_id == switch.id))
            .subquery()
        )
        gaps = select(
            held.c.dp_sid, func.lead(held.c.dp_sid).over(order_by=held.c.dp_sid).label("next")
        ).subquery()
        first_gap = (
            select(gaps.c.dp_sid + 1)
            .where(or_(gaps.c.next.is_(None), gaps.c.next > gaps.c.dp_sid + 1))
            .order_by(gaps.c.dp_sid)
            .limit(1)
        )
        dp_sid = session.execute(first_gap).scalar_one()
    if dp_sid > MAX_DP_SID:
        raise ConflictError(f"switch {switch.name!r} has no free DP_SID left", field="link_ids")
    return dp_sid


def _dp_sid(session: Session, switch: Switch, wanted: int | None) -> int:
    if wanted is None:
        return _free_dp_sid(session, switch)
    taken = session.scalar(
        select(exists().where(SliceSwitch.switch_id == switch.id, SliceSwitch.dp_sid == wanted))
    )
    if taken:
        raise ConflictError(f"DP_SID {wanted} is taken on switch {switch.name!r}", field="dp_sid")
    return wanted


def _set_links(
    session: Session,
    row: Slice,
    switches: list[Switch],
    links: list[Link],
    dp_sid: int | None = None,
) -> None:
    """Make the slice cross exactly `links`, holding one DP_SID on each of their switches."""
    wanted_links = {link.id for link in links}
    wanted_switches = {link.switch_id for link in links}
    # One flush per step: the ORM does not know that link rows reference switch rows.
    row.link_rows = [r for r in row.link_rows if r.link_id in wanted_links]
    session.flush()
    row.switch_rows = [r for r in row.switch_rows if r.switch_id in wanted_switches]
    held = {r.switch_id for r in row.switch_rows}
    for switch in switches:
        if switch.id in wanted_switches and switch.id not in held:
            row.switch_rows.append(
                SliceSwitch(switch_id=switch.id, dp_sid=_dp_sid(session, switch, dp_sid))
            )
    session.flush()
    crossed = {r.link_id for r in row.link_rows}
    row.link_rows.extend(
        SliceLink(link_id=link.id, switch_id=link.switch_id)
        for link in links
        if link.id not in crossed
    )


def create_slice(session: Session, context: ChangeContext, data: SliceCreate) -> Slice:
    values = data.model_dump(exclude={"sla", "link_ids", "dp_sid", "burst_bytes"})
    _burst_limit(values, data.burst_bytes, given_limit=data.burst_limit_s is not None)
    if values["burst_limit_s"] is None:
        raise InvalidFieldError(
            "burst_limit_s is required unless burst_bytes is given", field="burst_limit_s"
        )
    if values["delay_target_s"] is None:
        values["delay_target_s"] = values["burst_limit_s"]
    _check_rules(values)
    _check_name_free(session, values["name"], None)
    # Inserted before the locks, to keep them short; a racing creation of the same name waits
    # on the unique index and then fails on it.
    row = Slice(**values, state=SliceState.PENDING, link_rows=[], switch_rows=[])
    row.sla = SliceSla(**data.sla.model_dump())
    session.add(row)
    session.flush()
    switches, links = _lock_links(session, set(data.link_ids))
    _admit(session, values, links, exclude_slice_id=row.id)
    _set_links(session, row, switches, links, data.dp_sid)
    session.flush()
    crud.log(session, context, ChangeAction.CREATE, row, before=None)
    outbox.request_reconcile(session, (r.switch_id for r in row.switch_rows))
    session.commit()
    return row


def update_slice(
    session: Session, context: ChangeContext, slice_id: int, data: SliceUpdate
) -> Slice:
    row = get_slice(session, slice_id, lock=True)
    before = row.snapshot()
    crossed = {r.switch_id for r in row.switch_rows}
    given = data.model_dump(exclude_unset=True, exclude={"sla", "link_ids", "burst_bytes"})
    columns = {column.key for column in Slice.__table__.columns}
    values = {key: getattr(row, key) for key in columns} | given
    _burst_limit(values, data.burst_bytes, given_limit="burst_limit_s" in given)
    if values["scheme"] is QueueScheme.TAIL_DROP and "marking_threshold_s" not in given:
        values["marking_threshold_s"] = None
    _check_rules(values)
    link_ids = set(data.link_ids if data.link_ids is not None else row.link_ids)
    if data.model_fields_set & ANALYSED_FIELDS:
        switches, links = _lock_links(session, link_ids | set(row.link_ids))
        new_links = [link for link in links if link.id in link_ids]
        _check_name_free(session, values["name"], row.id)
        _admit(session, values, new_links, exclude_slice_id=row.id)
        _set_links(session, row, switches, new_links)
    elif "name" in given:
        _check_name_free(session, values["name"], row.id)
    for key in columns - {"id", "created_at", "updated_at"}:
        setattr(row, key, values[key])
    row.state = SliceState.PENDING
    if data.sla is not None:
        for key, value in data.sla.model_dump().items():
            setattr(row.sla, key, value)
    session.flush()
    crud.log(session, context, ChangeAction.UPDATE, row, before=before)
    outbox.request_reconcile(session, crossed | {r.switch_id for r in row.switch_rows})
    session.commit()
    return row


def delete_slice(session: Session, context: ChangeContext, slice_id: int) -> None:
    """Delete with one statement; the database cascades to SLA, DP_SIDs and link rows."""
    row = get_slice(session, slice_id, lock=True)
    before = row.snapshot()
    session.execute(delete(Slice).where(Slice.id == slice_id))
    changes.record(
        session, context, ChangeAction.DELETE, row.entity_type, row.id, row.name, before=before
    )
    outbox.request_reconcile(session, (r.switch_id for r in row.switch_rows))
    session.commit()
