"""Creating, changing and deleting slices: link locking, admission, DP_SIDs, change log.

The locks (`db.queries.slices` gives their order) are taken in one pipeline; classifier
clashes, admission and DP_SIDs are decided under them; a creation inserts its own row before
taking them, to keep the locked section short. A path that moved between being read and being
locked makes the whole transaction start again (`admission.retrying`), never lock out of order.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

import psycopg
from sqlalchemy import Select, delete, exists, select
from sqlalchemy.orm import Session, selectinload

from sliceportal.db import changes, outbox
from sliceportal.db.aio import ReadPool
from sliceportal.db.changes import Change, ChangeContext
from sliceportal.db.models import ABC_COLUMNS, Slice, SliceSla, abc_config_of
from sliceportal.db.queries import links as link_queries
from sliceportal.db.queries import slices as queries
from sliceportal.db.queries.links import LockedLink
from sliceportal.domain import SliceSpec, SpecError, dataplane, paths, slice_spec, units
from sliceportal.domain.admission import LinkParams, PathSlice, StoredLevels, admits_surely
from sliceportal.domain.codel import CodelConfig
from sliceportal.domain.dataplane import ROUTE_TABLE, SlicePolicy
from sliceportal.domain.matchclash import PlacedMatch, first_clash, split_route
from sliceportal.domain.p4constants import ABC_DECAY_MEMORIES
from sliceportal.domain.reconcile import describe
from sliceportal.domain.spec import MAX_DP_SID, burst_agrees, burst_conflict
from sliceportal.domain.units import TICKS_PER_S
from sliceportal.schemas.choices import AbcKey, ChangeAction, QueueScheme, SliceState
from sliceportal.schemas.slices import AbcParameters, CodelParameters, SliceCreate, SliceUpdate
from sliceportal.services import admission
from sliceportal.services.errors import ConflictError, InvalidFieldError, NotFoundError

ANALYSED_FIELDS = frozenset(
    {
        "rate_bps",
        "burst_limit_s",
        "burst_bytes",
        "delay_target_s",
        "e2e_delay_target_s",
        "priority",
        "max_packet_bytes",
        "link_ids",
    }
)
"""Changing any of these re-runs admission on the slice's links (and on the paths of the
slices with an end-to-end target that cross them)."""

ABC_PLACED_FIELDS = frozenset({"scheme", "abc", "link_ids"})
"""Changing any of these on an abc slice checks again that the switches it crosses have room
for its memories in their decay tables (`refuse_new_memory`)."""

MATCH_FIELDS = frozenset({"vlan_id", "ipv4_prefixes", "link_ids"})
"""Changing any of these checks again that no other slice holds one of the slice's classifier
entries on a switch it crosses."""


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


async def slice_document(pool: ReadPool, slice_id: int) -> dict[str, Any]:
    """`get_slice`'s slice as its public document, read on the event loop (`db.aio`)."""
    found = await queries.slice_document(pool, slice_id)
    if found is None:
        raise NotFoundError(f"slice {slice_id} does not exist")
    return found


def _check_rules(values: dict[str, Any]) -> SlicePolicy:
    """Rules across fields, on the slice as it will be stored: a match, and a policy the data
    plane can hold (`dataplane.slice_policy`, which the control plane deploys), so a stored
    slice never fails only when it is deployed. The policy."""
    if values["vlan_id"] is None and not values["ipv4_prefixes"]:
        raise InvalidFieldError("a slice needs a vlan_id or ipv4_prefixes", field="vlan_id")
    try:
        codel = None
        if values["codel_target_s"] is not None:
            codel = CodelConfig.from_seconds(
                values["codel_target_s"], values["codel_interval_s"], values["codel_ecn_mark"]
            )
        return dataplane.slice_policy(
            values["priority"],
            values["rate_bps"],
            values["burst_limit_s"],
            values["scheme"],
            values["marking_threshold_s"],
            values["delay_target_s"],
            codel_config=codel,
            abc_config=abc_config_of(values),
        )
    except units.DataplaneValueError as exc:
        raise InvalidFieldError(exc.message, field=exc.field) from None


def _codel_columns(values: dict[str, Any], codel: CodelParameters | None, given: bool) -> None:
    """Turn the `codel` of a request into the slice's CoDel columns (in `values`).

    Parameters given are stored as given (for another scheme they are then refused by
    `_check_rules`, naming `codel`); a slice becoming codel without them takes the defaults,
    one leaving codel loses them, and a codel slice keeps those it has."""
    values.pop("codel", None)  # nested; in an update dumped without the members left out
    if not given:
        if values["scheme"] is not QueueScheme.CODEL:
            codel = None
        elif values.get("codel_target_s") is None:
            codel = CodelParameters()
        else:
            return
    values["codel_target_s"] = None if codel is None else codel.target_s
    values["codel_interval_s"] = None if codel is None else codel.interval_s
    values["codel_ecn_mark"] = None if codel is None else codel.ecn_mark


def _abc_columns(values: dict[str, Any], abc: AbcParameters | None, given: bool) -> None:
    """Turn the `abc` of a request into the slice's ABC columns (in `values`), resolved: the
    members left out take their defaults at the slice's rate and burst limit
    (`dataplane.abc_config`, the CLI's reading of the same object), so the row says what the
    switch will hold.

    As `_codel_columns`: parameters given are stored (for another scheme they are then refused
    by `_check_rules`, naming `abc`); a slice becoming abc without them takes the defaults, one
    leaving abc loses them, and an abc slice keeps those it has, also when its rate or burst
    limit change (a threshold the new burst limit cannot hold is then refused, naming it)."""
    values.pop("abc", None)  # nested; in an update dumped without the members left out
    if not given:
        if values["scheme"] is not QueueScheme.ABC:
            abc = None
        elif values.get("abc_meter_memory_s") is None:
            abc = AbcParameters()
        else:
            return
    if abc is None:
        values.update(dict.fromkeys(ABC_COLUMNS))
        return
    try:
        config = dataplane.abc_config(
            abc.model_dump(mode="json", exclude_none=True),
            values["rate_bps"],
            values["burst_limit_s"],
        )
    except units.DataplaneValueError as exc:
        raise InvalidFieldError(exc.message, field=exc.field) from None
    resolved = dataclasses.asdict(config) | {"key": AbcKey(config.key.value)}
    values.update({column: resolved[column.removeprefix("abc_")] for column in ABC_COLUMNS})


def refuse_new_memory(locked: queries.Locked, policy: SlicePolicy) -> None:
    """409 when the slice's ABC memory would be one more than a switch it crosses has decay
    rows for (`dataplane.check_decay_memories` on the abc slices there, `locked.abc_held`,
    then this one): the reconciler could not deploy it there. Slices of equal memories share
    rows, so a memory another abc slice of that switch uses always fits."""
    held: dict[int, list[SlicePolicy]] = {}
    for row in locked.abc_held:
        try:
            other = dataplane.slice_policy(
                row["priority"],
                row["rate_bps"],
                row["burst_limit_s"],
                dataplane.Scheme.ABC,
                None,
                row["delay_target_s"],
                abc_config=abc_config_of(row),
            )
        except units.DataplaneValueError:
            continue  # the control plane cannot deploy it either: it holds no rows
        held.setdefault(row["switch_id"], []).append(other)
    for switch_id, others in sorted(held.items()):
        try:
            dataplane.check_decay_memories([*others, policy])
        except units.DataplaneValueError as exc:
            field = exc.field.split(".", 1)[1]  # slices[i].abc.<memory>
            ticks = {
                "abc.meter_memory_s": {p.abc.meter_memory for p in others if p.abc},
                "abc.average_memory_s": {p.abc.average_memory for p in others if p.abc},
            }[field]
            used = ", ".join(f"{memory / TICKS_PER_S:g}" for memory in sorted(ticks))
            raise ConflictError(
                f"switch {locked.switches[switch_id]!r} holds ABC decay rows for "
                f"{ABC_DECAY_MEMORIES} distinct {field} values already ({used} s) and has no "
                "room for another; use one of them",
                field=field,
            ) from None


def _check_name_free(session: Session, name: str, slice_id: int) -> None:
    """Names identify slices in the analytics too, so a change to a taken one is refused
    before them (a creation is refused by the unique index, before them too)."""
    if session.scalar(select(exists().where(Slice.name == name, Slice.id != slice_id))):
        raise _name_taken(name)


def _name_taken(name: str) -> ConflictError:
    return ConflictError(f"slice name {name!r} is already taken", field="name")


def resolve_burst_limit(
    values: dict[str, Any], burst_bytes: float | None, given_limit: bool
) -> None:
    """Turn a burst given in bytes into the stored burst limit (seconds at the slice's rate).

    Both may be given only when they describe the same burst (`domain.spec.burst_agrees`, as
    the CLI's documents); the burst limit given is then the one stored."""
    if burst_bytes is None:
        return
    if given_limit:
        rate, limit = values["rate_bps"], values["burst_limit_s"]
        if not burst_agrees(burst_bytes, rate, limit):
            raise InvalidFieldError(
                "burst_bytes " + burst_conflict(burst_bytes, rate, limit, ""),
                field="burst_bytes",
                also=("burst_limit_s",),
            )
        return
    values["burst_limit_s"] = burst_bytes * 8 / values["rate_bps"]


def _match(values: dict[str, Any], slice_id: int, link_ids: set[int]) -> queries.Match:
    """A slice's match as it will be stored, on the links it will cross."""
    return queries.Match(slice_id, values["vlan_id"], list(values["ipv4_prefixes"]), link_ids)


def _lock(
    session: Session,
    link_ids: set[int],
    match: queries.Match | None,
    changed: set[int] | None,
    slice_id: int,
    insert: dict[str, Any] | None = None,
    abc_links: set[int] | None = None,
    policy: SlicePolicy | None = None,
    path: list[int] | None = None,
) -> queries.Locked:
    """`queries.lock`, then 422 if `path` is none (`_refuse_broken_path`) or one of
    `link_ids` is gone (when links were locked), 409 if another slice holds one of `match`'s
    classifier entries (`refuse_clash`) and 409 if the switches of `abc_links` have no room
    for the ABC memories of `policy` (`refuse_new_memory`)."""
    locked = queries.lock(session, link_ids, match, changed, slice_id, insert, abc_links)
    if path is not None:
        _refuse_broken_path(path, locked.links)
    missing = link_ids - locked.links.keys() if changed is not None else set()
    if missing:
        raise InvalidFieldError(f"link {min(missing)} does not exist", field="link_ids")
    if match is not None:
        refuse_clash(match, locked)
    if abc_links is not None:
        assert policy is not None
        refuse_new_memory(locked, policy)
    return locked


def refuse_clash(match: queries.Match, locked: queries.Locked) -> None:
    """409 when the slice would need an entry that another slice holds with another action on a
    switch it crosses (`locked.clashing`), or would route one prefix out of two ports of one
    switch (`locked.exits`): the switch could take only one of them.

    Read under the switch locks: a slice joins a switch only under its lock, so the query,
    which starts after they are granted, sees every slice a concurrent change committed there,
    and the next one waits for this commit.
    """
    switches = locked.switches
    split = split_route(match.prefixes, locked.exits)
    if split is not None:
        raise ConflictError(
            f"the slice crosses two links of switch {switches[split]!r} and lists prefixes: a "
            "switch routes each prefix out of one port",
            field="link_ids",
        )
    placed = [
        PlacedMatch(other, name, switch_id, port, vlan_id, tuple(prefixes))
        for switch_id, port, other, name, vlan_id, prefixes in locked.clashing
    ]
    clash = first_clash(match.vlan_id, match.prefixes, locked.exits, placed)
    if clash is not None:
        other = clash.other
        what = "route" if clash.key[0] == ROUTE_TABLE else "classifier entry"
        raise ConflictError(
            f"slice {other.name!r} (id {other.slice_id}) already holds the entry "
            f"{describe(clash.key)} on switch {switches[other.switch_id]!r}: a switch takes "
            f"one {what} per key",
            field=clash.field,
        )


def _check_path_links(link_ids: list[int] | None, path: list[int] | None) -> None:
    """422 when a request gives both a path and link ids, and they name other links."""
    if path is not None and link_ids is not None and set(path) != set(link_ids):
        raise InvalidFieldError("path names other links than link_ids", field="path")


def _refuse_broken_path(path: list[int], links: dict[int, LockedLink]) -> None:
    """422 naming `path` and the offending index unless it is a path (`domain.paths`) over
    the locked `links`: their cables cannot change meanwhile (`services.cables`)."""
    try:
        paths.check_path(path, {link_id: link.port for link_id, link in links.items()})
    except paths.PathError as exc:
        field = "path" if exc.index is None else f"path[{exc.index}]"
        raise InvalidFieldError(exc.message, field=field) from None


def path_order(
    link_ids: list[int], path: list[int] | None, links: dict[int, LockedLink]
) -> list[int] | None:
    """The slice's links in path order: `path` (a 422 naming it unless it is one), else
    `link_ids` as given if they form a path, else None (an unordered set)."""
    if path is not None:
        _refuse_broken_path(path, links)
        return path
    ports = {link_id: link.port for link_id, link in links.items()}
    return link_ids if paths.is_path(link_ids, ports) else None


def link_specs(
    values: dict[str, Any], params: dict[int, LinkParams], link_ids: Iterable[int]
) -> dict[int, SliceSpec]:
    """The slice described by `values` as each of the links `link_ids` sees it (their MTU)."""
    specs: dict[int, SliceSpec] = {}
    for link_id in sorted(link_ids):
        try:
            specs[link_id] = slice_spec(
                values["name"],
                values["rate_bps"],
                values["priority"],
                burst_limit_s=values["burst_limit_s"],
                delay_target_s=values["delay_target_s"],
                max_packet_bytes=values["max_packet_bytes"],
                mtu_bytes=params[link_id].mtu_bytes,
            )
        except SpecError as exc:
            raise InvalidFieldError(exc.message, field=exc.field) from None
    return specs


def _admit(
    session: Session,
    values: dict[str, Any],
    slice_id: int,
    links: dict[int, LockedLink],
    new: list[int],
    stored: StoredLevels,
    old: Slice | None = None,
) -> None:
    """Admission with the slice as it will be stored, crossing the links `new` in path order
    (ascending id for an unordered set; `old`: as it is stored now, for a change).

    The level sums `stored` first try to prove it fits in O(levels) (`admits_surely`); the
    full analysis of every slice on the links runs only when they do not.
    """
    params = {link_id: link.params for link_id, link in links.items()}
    specs = link_specs(values, params, new)
    removed = None
    if old is not None:
        stored_values = {key: getattr(old, key) for key in values.keys() & ANALYSED_FIELDS}
        removed = link_specs(values | stored_values, params, params.keys() & set(old.link_ids))
    target = values["e2e_delay_target_s"]
    path = None
    if target is not None:
        path = PathSlice(slice_id, values["name"], values["priority"], target, tuple(new))
    if admits_surely(params, stored, specs, changed=new, candidate=path, removed=removed):
        return
    loads = link_queries.read_loads(session, params.values(), exclude_slice_id=slice_id)
    for link_id, spec in specs.items():
        loads.links[link_id] = loads.links[link_id].plus(spec)
        admission.check_queues(params[link_id], loads.links[link_id], field="priority")
    admission.admit(
        session, f"slice {values['name']!r}", params, loads, changed=new, candidate=path
    )


def _dp_sid_refused(
    refused: queries.NoDpSid, switches: dict[int, str], dp_sid: int | None
) -> ConflictError:
    """Why a slice got no DP_SID on one of its switches."""
    for switch_id, count, taken in refused.use:
        if dp_sid is not None and taken:
            return ConflictError(
                f"DP_SID {dp_sid} is taken on switch {switches[switch_id]!r}", field="dp_sid"
            )
        if dp_sid is None and count >= MAX_DP_SID:
            return ConflictError(
                f"switch {switches[switch_id]!r} has no free DP_SID left", field="link_ids"
            )
    return ConflictError(
        "a concurrent change took the DP_SID the slice was to get; try again",
        field="dp_sid" if dp_sid is not None else "link_ids",
    )


def _set_links(
    session: Session,
    slice_id: int,
    locked: queries.Locked,
    link_ids: Iterable[int],
    order: list[int] | None,
    dp_sid: int | None = None,
    commit_with: tuple[ChangeContext, Change, list[outbox.Message]] | None = None,
) -> None:
    """`queries.set_links` on the locked links `link_ids` (in path `order`, if any), a refused
    DP_SID told as a 409."""
    links = [locked.links[link_id] for link_id in sorted(link_ids)]
    try:
        queries.set_links(session, slice_id, links, order, dp_sid, commit_with=commit_with)
    except queries.NoDpSid as refused:
        raise _dp_sid_refused(refused, locked.switches, dp_sid) from None


def create_slice(session: Session, context: ChangeContext, data: SliceCreate) -> Slice:
    values, policy = prepare(data)
    slice_id = admission.retrying(session, lambda: _create(session, context, data, values, policy))
    return get_slice(session, slice_id)


def prepare(data: SliceCreate) -> tuple[dict[str, Any], SlicePolicy]:
    """A new slice's columns as they will be stored (burst limit, delay target, CoDel and ABC
    parameters resolved) and its data-plane policy, after the rules across fields
    (`_check_rules`); an InvalidFieldError naming the field otherwise. What a creation checks
    before touching the database, one slice or an import's many (`services.bulk`)."""
    _check_path_links(data.link_ids, data.path)
    values = data.model_dump(exclude={"sla", "link_ids", "path", "dp_sid", "burst_bytes"})
    resolve_burst_limit(values, data.burst_bytes, given_limit=data.burst_limit_s is not None)
    if values["burst_limit_s"] is None:
        raise InvalidFieldError(
            "burst_limit_s is required unless burst_bytes is given", field="burst_limit_s"
        )
    if values["delay_target_s"] is None:
        values["delay_target_s"] = values["burst_limit_s"]
    _codel_columns(values, data.codel, given=data.codel is not None)
    _abc_columns(values, data.abc, given=data.abc is not None)
    return values, _check_rules(values)


def _create(
    session: Session,
    context: ChangeContext,
    data: SliceCreate,
    values: dict[str, Any],
    policy: SlicePolicy,
) -> int:
    """Two round trips: the insert of the slice with its SLA, the locks and the reads of
    admission (`_lock`); then, once admitted, its links, DP_SIDs, change-log entry and
    reconciliations with the commit. The locked section holds one wait for the database where
    it held three; the insert comes before the locks, which keeps them short, and a racing
    creation of the same name waits on the unique index and then fails on it. The new
    slice's id."""
    link_ids = set(data.link_ids)
    sla = data.sla.model_dump()
    insert = values | sla | {"state": SliceState.PENDING}
    abc_links = link_ids if policy.abc is not None else None
    try:
        match = _match(values, 0, link_ids)
        locked = _lock(session, link_ids, match, link_ids, 0, insert, abc_links, policy, data.path)
    except psycopg.errors.UniqueViolation as exc:
        if exc.diag.constraint_name != queries.NAME_TAKEN:
            raise
        raise _name_taken(values["name"]) from None
    assert locked.created is not None
    slice_id: int = locked.created["id"]
    order = path_order(data.link_ids, data.path, locked.links)
    _admit(session, values, slice_id, locked.links, order or sorted(link_ids), locked.stored)
    after = Slice.snapshot_of(locked.created) | {
        "sla": SliceSla.snapshot_of(sla),
        "link_ids": sorted(link_ids),
        "path": order,
    }
    created = Change(
        ChangeAction.CREATE, Slice.entity_type, slice_id, values["name"], None, after, True
    )
    switch_ids = {locked.links[link_id].switch_id for link_id in link_ids}
    commit_with = (context, created, outbox.reconcile(switch_ids))
    _set_links(session, slice_id, locked, link_ids, order, data.dp_sid, commit_with)
    session.commit()  # ends the session's transaction, which the driver committed
    return slice_id


def update_slice(
    session: Session, context: ChangeContext, slice_id: int, data: SliceUpdate
) -> Slice:
    return admission.retrying(session, lambda: _update(session, context, slice_id, data))


def _update(session: Session, context: ChangeContext, slice_id: int, data: SliceUpdate) -> Slice:
    row = get_slice(session, slice_id, lock=True)
    before = row.snapshot()
    crossed = {r.switch_id for r in row.switch_rows}
    given = data.model_dump(exclude_unset=True, exclude={"sla", "link_ids", "path", "burst_bytes"})
    columns = {column.key for column in Slice.__table__.columns}
    values = {key: getattr(row, key) for key in columns} | given
    resolve_burst_limit(values, data.burst_bytes, given_limit="burst_limit_s" in given)
    if values["scheme"] is not QueueScheme.ECN_STEP and "marking_threshold_s" not in given:
        values["marking_threshold_s"] = None
    _codel_columns(values, data.codel, given="codel" in given)
    _abc_columns(values, data.abc, given="abc" in given)
    policy = _check_rules(values)
    _check_path_links(data.link_ids, data.path)
    link_ids = set(data.link_ids if data.link_ids is not None else row.link_ids)
    fields = data.model_fields_set
    match = _match(values, row.id, link_ids) if fields & MATCH_FIELDS else None
    abc_links = link_ids if policy.abc is not None and fields & ABC_PLACED_FIELDS else None
    locked = None
    if fields & ANALYSED_FIELDS:
        every = link_ids | set(row.link_ids)
        locked = _lock(session, every, match, link_ids, row.id, None, abc_links, policy, data.path)
    elif match is not None or abc_links is not None:
        _lock(session, link_ids, match, None, row.id, None, abc_links, policy)
    if "name" in given:  # the slice's own name is its own (the unique index)
        _check_name_free(session, values["name"], row.id)
    if locked is not None:
        order = row.path
        if data.link_ids is not None:
            order = path_order(data.link_ids, data.path, locked.links)
        crossed_in_order = order or sorted(link_ids)
        _admit(session, values, row.id, locked.links, crossed_in_order, locked.stored, old=row)
        _set_links(session, row.id, locked, link_ids, order)
        session.refresh(row, ["link_rows", "switch_rows"])  # as the statement left them
    for key in columns - {"id", "created_at", "updated_at"}:
        setattr(row, key, values[key])
    row.state = SliceState.PENDING
    if data.sla is not None:
        for key, value in data.sla.model_dump().items():
            setattr(row.sla, key, value)
    session.flush()
    switch_ids = crossed | {r.switch_id for r in row.switch_rows}
    changes.write(
        session,
        context,
        [Change.of(ChangeAction.UPDATE, row, before)],
        messages=outbox.reconcile(switch_ids),
    )
    session.commit()
    return row


def delete_slice(session: Session, context: ChangeContext, slice_id: int) -> None:
    """Delete with one statement; the database cascades to SLA, DP_SIDs and link rows. The
    links are locked first: their level sums are recomputed by the cascade
    (`db.queries.links` explains the guard), and admissions on them read those sums under the
    same locks."""
    row = get_slice(session, slice_id, lock=True)
    link_queries.lock_links(session, row.link_ids, changed=())
    before = row.snapshot()
    session.execute(delete(Slice).where(Slice.id == slice_id))
    changes.write(
        session,
        context,
        [Change.of(ChangeAction.DELETE, row, before)],
        messages=outbox.reconcile(r.switch_id for r in row.switch_rows),
    )
    session.commit()
