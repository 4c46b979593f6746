"""Creating, changing and deleting slices: link locking, admission, DP_SIDs, change log.

Lock order, the same everywhere so concurrent requests cannot deadlock: the slice row (update,
delete), then the switches it crosses (FOR NO KEY UPDATE, ascending id: serialises DP_SID
allocation and classifier keys per switch; a deletion needs none), then its links together
with every link of the slices with an end-to-end target that cross them (FOR UPDATE,
ascending id, one statement: serialises admission and the links' level sums per link and per
such path; link updates take the same locks).
Classifier clashes, admission and DP_SIDs are decided under the locks; a creation inserts its
own row before taking them, to keep the locked section short. A path that moved between being
read and being locked makes the whole transaction start again (`admission.retrying`), never
lock out of order.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import ExitStack
from dataclasses import dataclass
from ipaddress import IPv4Network
from typing import Any

import psycopg
from sqlalchemy import Select, delete, exists, select
from sqlalchemy.orm import Session, make_transient_to_detached, selectinload
from sqlalchemy.orm.attributes import set_committed_value

from sliceportal.db.changes import ChangeContext
from sliceportal.db.models import (
    Slice,
    SliceLink,
    SliceSla,
    SliceSwitch,
)
from sliceportal.domain import SliceSpec, SpecError, slice_spec
from sliceportal.domain.dataplane import ROUTE_TABLE
from sliceportal.domain.matchclash import PlacedMatch, first_clash, split_route
from sliceportal.domain.reconcile import describe
from sliceportal.domain.spec import MAX_DP_SID, burst_agrees, burst_conflict
from sliceportal.schemas.choices import ChangeAction, QueueScheme, SliceState
from sliceportal.schemas.slices import Sla, SliceCreate, SliceUpdate
from sliceportal.services import admission, crud
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


def _check_name_free(session: Session, name: str, slice_id: int) -> None:
    """Names identify slices in the analytics too, so a change to a taken one is refused
    before them (a creation is refused by the unique index, before them too)."""
    if session.scalar(select(exists().where(Slice.name == name, Slice.id != slice_id))):
        raise _name_taken(name)


def _name_taken(name: str) -> ConflictError:
    return ConflictError(f"slice name {name!r} is already taken", field="name")


def _burst_limit(values: dict[str, Any], burst_bytes: float | None, given_limit: bool) -> None:
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


_LOCK_SWITCHES = """
SELECT id, name FROM switches WHERE id IN (SELECT switch_id FROM links WHERE id = ANY(%s))
ORDER BY id
FOR NO KEY UPDATE
"""


_MATCH_CLASHES = """
WITH sharing AS MATERIALIZED (
    SELECT id FROM slices WHERE ipv4_prefixes && %(prefixes)s::cidr[]
    UNION
    SELECT id FROM slices WHERE vlan_id = %(vlan)s::integer
)
SELECT links.switch_id, links.port, slices.id, slices.name, slices.vlan_id,
       slices.ipv4_prefixes
FROM sharing
JOIN slices ON slices.id = sharing.id
CROSS JOIN LATERAL (
    SELECT link_id FROM slice_links WHERE slice_links.slice_id = sharing.id OFFSET 0
) AS here
JOIN links ON links.id = here.link_id
WHERE links.switch_id IN (SELECT switch_id FROM links WHERE id = ANY(%(links)s))
  AND slices.id <> %(slice)s
  AND (
    slices.ipv4_prefixes && %(prefixes)s::cidr[]
    OR (here.link_id = ANY(%(links)s) AND slices.vlan_id = %(vlan)s::integer)
  )
ORDER BY slices.id, links.id
"""
"""The other slices that could share an entry with a slice on the switches it will cross: a
prefix in common anywhere on those switches (routes are per switch), or on its own links the
same VLAN. Only a narrowing, in the database, of what `matchclash.first_clash` decides.

The slices sharing a prefix or the VLAN are found first, through their indexes, whatever the
planner's statistics say: joined the other way round (every slice on the switches, then their
prefixes) this read every slice of the link under the switch locks, 16 ms at 3,400 slices.
Their links are then looked up per slice (LATERAL): hash-joined instead, the plan still read
every link row of the switches (0.5 ms of the query's 0.6 at 1,500 slices on one link). The
`OFFSET 0` keeps the LATERAL a per-slice lookup: without it PostgreSQL flattens it into a plain
join, and with statistics taken before a burst of creations (autovacuum analyses at most once a
minute) it read every link row of the link again (1.7 ms at 3,500 slices on one link, against
0.07 ms)."""
_EXITS = "SELECT switch_id, port FROM links WHERE id = ANY(%s)"
"""Where a slice will leave each switch it crosses (one link is one switch and egress port)."""


@dataclass(frozen=True)
class _Match:
    """A slice's match as it will be stored, on the links it will cross."""

    slice_id: int
    vlan_id: int | None
    prefixes: list[IPv4Network]
    link_ids: set[int]

    @classmethod
    def of(cls, values: dict[str, Any], slice_id: int, link_ids: set[int]) -> _Match:
        return cls(slice_id, values["vlan_id"], list(values["ipv4_prefixes"]), link_ids)


_INSERT_SLICE = """
WITH created AS (
    INSERT INTO slices (name, description, vlan_id, ipv4_prefixes, rate_bps, burst_limit_s,
                        delay_target_s, e2e_delay_target_s, priority, scheme,
                        marking_threshold_s, max_packet_bytes, state)
    VALUES (%(name)s, %(description)s, %(vlan_id)s, %(ipv4_prefixes)s::cidr[], %(rate_bps)s,
            %(burst_limit_s)s, %(delay_target_s)s, %(e2e_delay_target_s)s, %(priority)s,
            %(scheme)s, %(marking_threshold_s)s, %(max_packet_bytes)s, %(state)s)
    RETURNING *
), sla AS (
    INSERT INTO slice_slas (slice_id, max_delay_s, min_throughput_bps, max_loss_ratio,
                            max_mark_ratio)
    SELECT id, %(max_delay_s)s, %(min_throughput_bps)s, %(max_loss_ratio)s, %(max_mark_ratio)s
    FROM created
)
SELECT * FROM created
"""
"""A new slice and its SLA in one statement, answering the slice's row (`_created_row`)."""


@dataclass(frozen=True)
class _Locked:
    """What `_lock` read under its locks."""

    switches: dict[int, str]
    """The names of the locked switches, by id."""
    links: dict[int, admission.LockedLink]
    stored: admission.StoredLevels
    created: dict[str, Any] | None
    """The columns of the slice `_lock` inserted first, if asked to."""


def _lock(
    session: Session,
    link_ids: set[int],
    match: _Match | None,
    changed: set[int] | None,
    slice_id: int,
    insert: dict[str, Any] | None = None,
) -> _Locked:
    """Insert a new slice first, when `insert` gives its columns and SLA (`_INSERT_SLICE`);
    lock the switches of `link_ids`; then refuse `match` if another slice holds one of its
    classifier entries there (`_refuse_clash`); then, unless `changed` is None, lock
    `link_ids` and the paths of the slices with an end-to-end target crossing `changed`
    (`admission.LinkLocks`; 422 if one of `link_ids` is gone) and read their stored level sums
    for the change of slice `slice_id` (none without `changed`).

    The statements run in that order, each after the locks of the one before, but are sent in
    one pipeline: one round trip where they took six, and each round trip under the locks
    is a wait for the database and for this worker's GIL while the other requests queue.
    A slice being created is `slice_id` 0 to the reads: it crosses no link yet, so none of
    them can find it.
    """
    connection = crud.driver(session)
    links: dict[int, admission.LockedLink] = {}
    stored = admission.StoredLevels({}, [])
    with ExitStack() as stack:
        stack.enter_context(connection.pipeline())
        inserting = stack.enter_context(connection.cursor())
        locking = stack.enter_context(connection.cursor())
        matching = stack.enter_context(connection.cursor())
        leaving = stack.enter_context(connection.cursor())
        if insert is not None:
            inserting.execute(_INSERT_SLICE, insert)
        locking.execute(_LOCK_SWITCHES, (list(link_ids),))
        if match is not None:
            prefixes = [str(prefix) for prefix in match.prefixes]
            leaving.execute(_EXITS, (list(match.link_ids),))
            matching.execute(
                _MATCH_CLASHES,
                {
                    "links": list(match.link_ids),
                    "slice": match.slice_id,
                    "vlan": match.vlan_id,
                    "prefixes": prefixes,
                },
            )
        if changed is not None:
            locks = admission.LinkLocks(
                stack, session, link_ids, changed=changed, slice_id=slice_id
            )
        created = None
        if insert is not None:
            values = inserting.fetchone()  # first: the description comes with the result
            columns = [column.name for column in inserting.description or ()]
            created = dict(zip(columns, values or (), strict=True))
        switches = dict(locking.fetchall())
        clashing = matching.fetchall() if match is not None else []
        exits = leaving.fetchall() if match is not None else []
        if changed is not None:
            links = locks.links()
            stored = locks.stored()
    missing = link_ids - links.keys() if changed is not None else set()
    if missing:
        raise InvalidFieldError(f"link {min(missing)} does not exist", field="link_ids")
    if match is not None:
        _refuse_clash(match, clashing, exits, switches)
    return _Locked(switches, links, stored, created)


def _refuse_clash(
    match: _Match, rows: list[Any], exits: list[tuple[int, int]], switches: dict[int, str]
) -> None:
    """409 when the slice would need an entry that another slice holds with another action on a
    switch it crosses (`rows`: `_MATCH_CLASHES`), or would route one prefix out of two ports of
    one switch (`exits`): the switch could take only one of them.

    Read under the switch locks: a slice joins a switch only under its lock (`_set_links`), so
    the query, which starts after they are granted, sees every slice a concurrent change
    committed there, and the next one waits for this commit.
    """
    split = split_route(match.prefixes, exits)
    if split is not None:
        raise ConflictError(
            f"the slice crosses two links of switch {switches[split]!r} and lists prefixes: a "
            "switch routes each prefix out of one port",
            field="link_ids",
        )
    placed = [
        PlacedMatch(other, name, switch_id, port, vlan_id, tuple(prefixes))
        for switch_id, port, other, name, vlan_id, prefixes in rows
    ]
    clash = first_clash(match.vlan_id, match.prefixes, exits, placed)
    if clash is not None:
        other = clash.other
        what = "route" if clash.key[0] == ROUTE_TABLE else "classifier entry"
        raise ConflictError(
            f"slice {other.name!r} (id {other.slice_id}) already holds the entry "
            f"{describe(clash.key)} on switch {switches[other.switch_id]!r}: a switch takes "
            f"one {what} per key",
            field=clash.field,
        )


def _specs(
    values: dict[str, Any], params: dict[int, admission.LinkParams], link_ids: Iterable[int]
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
    links: dict[int, admission.LockedLink],
    new: set[int],
    stored: admission.StoredLevels,
    old: Slice | None = None,
) -> None:
    """Admission with the slice as it will be stored, crossing the links `new` (`old`: as it
    is stored now, for a change).

    The level sums `stored` first try to prove it fits in O(levels)
    (`admission.admits_surely`); the full analysis of every slice on the links runs only when
    they do not.
    """
    params = {link_id: link.params for link_id, link in links.items()}
    specs = _specs(values, params, new)
    removed = None
    if old is not None:
        stored_values = {key: getattr(old, key) for key in values.keys() & ANALYSED_FIELDS}
        removed = _specs(values | stored_values, params, params.keys() & set(old.link_ids))
    target = values["e2e_delay_target_s"]
    path = None
    if target is not None:
        path = admission.PathSlice(
            slice_id, values["name"], values["priority"], target, tuple(sorted(new))
        )
    if admission.admits_surely(params, stored, specs, changed=new, candidate=path, removed=removed):
        return
    loads = admission.read_loads(session, params.values(), exclude_slice_id=slice_id)
    for link_id, spec in specs.items():
        loads.links[link_id] = loads.links[link_id].plus(spec)
        admission.check_queues(params[link_id], loads.links[link_id], field="priority")
    admission.admit(
        session, f"slice {values['name']!r}", params, loads, changed=new, candidate=path
    )


_SET_LINKS_CTES = f"""
left_links AS (
    DELETE FROM slice_links WHERE slice_id = %(slice)s AND link_id <> ALL(%(links)s)
), left_switches AS (
    DELETE FROM slice_switches WHERE slice_id = %(slice)s AND switch_id <> ALL(%(switches)s)
), added_switches AS (
    INSERT INTO slice_switches (slice_id, switch_id, dp_sid)
    SELECT %(slice)s, switch.id, free.dp_sid
    FROM unnest(%(switches)s::integer[]) AS switch (id)
    CROSS JOIN LATERAL (
        -- the wanted DP_SID, else the lowest one not held on the switch: usually the held
        -- ones are exactly 1..n (one aggregate), else the first gap after 0
        SELECT COALESCE(%(dp_sid)s::integer, CASE
            WHEN count(*) = COALESCE(max(held.dp_sid), 0) THEN COALESCE(max(held.dp_sid), 0) + 1
            WHEN NOT EXISTS (
                SELECT FROM slice_switches one WHERE one.switch_id = switch.id AND one.dp_sid = 1
            ) THEN 1
            ELSE (
                SELECT min(below.dp_sid) + 1 FROM slice_switches below
                WHERE below.switch_id = switch.id AND NOT EXISTS (
                    SELECT FROM slice_switches above
                    WHERE above.switch_id = switch.id AND above.dp_sid = below.dp_sid + 1))
        END) AS dp_sid
        FROM slice_switches held WHERE held.switch_id = switch.id
    ) AS free
    WHERE free.dp_sid <= {MAX_DP_SID} AND NOT EXISTS (
        SELECT FROM slice_switches mine
        WHERE mine.slice_id = %(slice)s AND mine.switch_id = switch.id)
    ON CONFLICT (switch_id, dp_sid) DO NOTHING
    RETURNING switch_id, dp_sid
), added_links AS (
    INSERT INTO slice_links (slice_id, link_id, switch_id)
    SELECT %(slice)s, link.id, link.switch_id
    FROM unnest(%(links)s::integer[], %(link_switches)s::integer[]) AS link (id, switch_id)
    WHERE NOT EXISTS (
        SELECT FROM slice_links mine WHERE mine.slice_id = %(slice)s AND mine.link_id = link.id)
), held AS (
    SELECT switch_id, dp_sid FROM added_switches
    UNION ALL
    SELECT switch_id, dp_sid FROM slice_switches
    WHERE slice_id = %(slice)s AND switch_id = ANY(%(switches)s)
)"""
"""What three ORM flushes and a DP_SID query did under the locks: drop the links and switches
the slice leaves (the database cascades to their rows), give it a DP_SID on each new switch
(the switch rows are locked: nobody allocates meanwhile; ON CONFLICT skips a wanted DP_SID
that is taken) and add the new link rows; `held` is the DP_SIDs it holds now. A switch that
gave none fails the statement on the link rows' foreign key to `slice_switches`
(`_LINK_NEEDS_DP_SID`), so nothing half-written can be committed."""
_SET_LINKS = f"WITH {_SET_LINKS_CTES} SELECT switch_id, dp_sid FROM held"
_SET_LINKS_AND_LOG = f"""
WITH {_SET_LINKS_CTES}, {
    crud.log_and_reconcile_ctes(
        "%(after)s || jsonb_build_object('dp_sids', "
        "(SELECT COALESCE(jsonb_object_agg(switch_id::text, dp_sid), '{}') FROM held))"
    )
}
SELECT switch_id, dp_sid FROM held
"""
"""`_SET_LINKS` and the change-log entry (its `after` gets the DP_SIDs `held` answers) and
the reconciliations, in one statement."""
_LINK_NEEDS_DP_SID = "fk_slice_links_slice_id_switch_id_slice_switches"
_DP_SID_USE = """
SELECT switch_id, count(*), bool_or(dp_sid = %(dp_sid)s) FROM slice_switches
WHERE switch_id = ANY(%(switches)s) GROUP BY switch_id ORDER BY switch_id
"""


def _set_links_params(
    row: Slice, links: list[admission.LockedLink], dp_sid: int | None
) -> dict[str, Any]:
    return {
        "slice": row.id,
        "links": [link.params.id for link in links],
        "link_switches": [link.switch_id for link in links],
        "switches": sorted({link.switch_id for link in links}),
        "dp_sid": dp_sid,
    }


def _dp_sid_refused(
    session: Session, switches: dict[int, str], wanted: list[int], dp_sid: int | None
) -> ConflictError:
    """Why a slice got no DP_SID on one of the switches `wanted`, told after the failed
    statement's rollback (so from the switches as they are now: rare enough to read twice)."""
    session.rollback()
    with crud.driver(session).cursor() as cursor:
        cursor.execute(_DP_SID_USE, {"switches": wanted, "dp_sid": dp_sid})
        use = cursor.fetchall()
    session.rollback()
    for switch_id, count, taken in use:
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


def _crossing(row: Slice, links: list[admission.LockedLink], held: dict[int, int]) -> None:
    """Set the slice's relationships to the rows `_SET_LINKS` left (as loaded: they are
    written already)."""
    set_committed_value(
        row,
        "switch_rows",
        [SliceSwitch(slice_id=row.id, switch_id=s, dp_sid=held[s]) for s in sorted(held)],
    )
    set_committed_value(
        row,
        "link_rows",
        [
            SliceLink(slice_id=row.id, link_id=link.params.id, switch_id=link.switch_id)
            for link in sorted(links, key=lambda link: link.params.id)
        ],
    )


def _set_links(
    session: Session,
    row: Slice,
    switches: dict[int, str],
    links: list[admission.LockedLink],
    dp_sid: int | None = None,
) -> None:
    """Make the slice cross exactly `links`, holding one DP_SID on each of their switches, and
    set its relationships to match."""
    params = _set_links_params(row, links, dp_sid)
    try:
        with crud.driver(session).cursor() as cursor:
            cursor.execute(_SET_LINKS, params)
            held = dict(cursor.fetchall())
    except psycopg.errors.ForeignKeyViolation as exc:
        if exc.diag.constraint_name != _LINK_NEEDS_DP_SID:
            raise
        raise _dp_sid_refused(session, switches, params["switches"], dp_sid) from None
    _crossing(row, links, held)


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
    return admission.retrying(session, lambda: _create(session, context, data, values))


def _create(
    session: Session, context: ChangeContext, data: SliceCreate, values: dict[str, Any]
) -> Slice:
    """Two round trips: the insert of the slice with its SLA, the locks and the reads of
    admission (`_lock`); then, once admitted, its links, DP_SIDs, change-log entry and
    reconciliations in one statement with the commit. The locked section holds one wait for
    the database where it held three; the insert comes before the locks, which keeps them
    short, and a racing creation of the same name waits on the unique index and then fails
    on it."""
    link_ids = set(data.link_ids)
    insert = values | data.sla.model_dump() | {"state": SliceState.PENDING}
    try:
        locked = _lock(session, link_ids, _Match.of(values, 0, link_ids), link_ids, 0, insert)
    except psycopg.errors.UniqueViolation as exc:
        if exc.diag.constraint_name != _NAME_TAKEN:
            raise
        raise _name_taken(values["name"]) from None
    assert locked.created is not None
    row = _created_row(session, locked.created, data.sla)
    _admit(session, values, row.id, locked.links, link_ids, locked.stored)
    crossed = [locked.links[link_id] for link_id in sorted(link_ids)]
    _crossing(row, crossed, {})
    params = _set_links_params(row, crossed, data.dp_sid)
    params |= crud.log_params(
        context,
        ChangeAction.CREATE,
        (row.entity_type, row.id, row.display_name),
        before=None,
        after=row.snapshot(),
        switch_ids=params["switches"],
    )
    connection = crud.driver(session)
    try:
        with connection.pipeline(), connection.cursor() as cursor:
            cursor.execute(_SET_LINKS_AND_LOG, params)
            connection.commit()
            held = dict(cursor.fetchall())
    except psycopg.errors.ForeignKeyViolation as exc:
        if exc.diag.constraint_name != _LINK_NEEDS_DP_SID:
            raise
        raise _dp_sid_refused(session, locked.switches, params["switches"], data.dp_sid) from None
    _crossing(row, crossed, held)
    session.commit()  # ends the session's transaction, which the driver committed
    return row


_NAME_TAKEN = "uq_slices_name"


def _created_row(session: Session, columns: dict[str, Any], sla: Sla) -> Slice:
    """The slice `_INSERT_SLICE` wrote, as a clean row of `session` (no SQL is emitted for it);
    its SLA as loaded."""
    row = Slice(
        **columns
        | {"scheme": QueueScheme(columns["scheme"]), "state": SliceState(columns["state"])}
    )
    make_transient_to_detached(row)
    session.add(row)
    set_committed_value(row, "sla", SliceSla(slice_id=row.id, **sla.model_dump()))
    return row


def update_slice(
    session: Session, context: ChangeContext, slice_id: int, data: SliceUpdate
) -> Slice:
    return admission.retrying(session, lambda: _update(session, context, slice_id, data))


def _update(session: Session, context: ChangeContext, slice_id: int, data: SliceUpdate) -> Slice:
    row = get_slice(session, slice_id, lock=True)
    before = row.snapshot()
    crossed = {r.switch_id for r in row.switch_rows}
    given = data.model_dump(exclude_unset=True, exclude={"sla", "link_ids", "burst_bytes"})
    columns = {column.key for column in Slice.__table__.columns}
    values = {key: getattr(row, key) for key in columns} | given
    _burst_limit(values, data.burst_bytes, given_limit="burst_limit_s" in given)
    if values["scheme"] is not QueueScheme.ECN_STEP and "marking_threshold_s" not in given:
        values["marking_threshold_s"] = None
    _check_rules(values)
    link_ids = set(data.link_ids if data.link_ids is not None else row.link_ids)
    fields = data.model_fields_set
    match = _Match.of(values, row.id, link_ids) if fields & MATCH_FIELDS else None
    if fields & ANALYSED_FIELDS:
        locked = _lock(session, link_ids | set(row.link_ids), match, link_ids, row.id)
        _check_name_free(session, values["name"], row.id)
        _admit(session, values, row.id, locked.links, link_ids, locked.stored, old=row)
        _set_links(session, row, locked.switches, [locked.links[i] for i in sorted(link_ids)])
    else:
        if match is not None:
            _lock(session, link_ids, match, None, row.id)
        if "name" in given:
            _check_name_free(session, values["name"], row.id)
    for key in columns - {"id", "created_at", "updated_at"}:
        setattr(row, key, values[key])
    row.state = SliceState.PENDING
    if data.sla is not None:
        for key, value in data.sla.model_dump().items():
            setattr(row.sla, key, value)
    session.flush()
    crud.log_and_reconcile(
        session,
        crud.log_params(
            context,
            ChangeAction.UPDATE,
            (row.entity_type, row.id, row.display_name),
            before=before,
            after=row.snapshot(),
            switch_ids=crossed | {r.switch_id for r in row.switch_rows},
        ),
    )
    session.commit()
    return row


def delete_slice(session: Session, context: ChangeContext, slice_id: int) -> None:
    """Delete with one statement; the database cascades to SLA, DP_SIDs and link rows. The
    links are locked first: their level sums are recomputed by the cascade (migration 0006),
    and admissions on them read those sums under the same locks."""
    row = get_slice(session, slice_id, lock=True)
    admission.lock_links(session, row.link_ids, changed=())
    before = row.snapshot()
    session.execute(delete(Slice).where(Slice.id == slice_id))
    crud.log_and_reconcile(
        session,
        crud.log_params(
            context,
            ChangeAction.DELETE,
            (row.entity_type, row.id, row.name),
            before=before,
            after=None,
            switch_ids=(r.switch_id for r in row.switch_rows),
        ),
    )
    session.commit()
