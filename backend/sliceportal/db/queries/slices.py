"""What a change of a slice reads, locks and writes in plain SQL: the slice and its SLA inserted
in one statement; the switches it crosses locked; the other slices that could hold one of its
classifier entries; its links and DP_SIDs set in one statement.

Lock order, the same everywhere so concurrent requests cannot deadlock: the slice row (update,
delete), then the switches it crosses (FOR NO KEY UPDATE, ascending id: serialises DP_SID
allocation and classifier keys per switch; a deletion needs none), then its links together
with every link of the slices with an end-to-end target that cross them (FOR UPDATE,
ascending id, one statement: `queries.links`; link updates take the same locks).
"""

from __future__ import annotations

import json
from collections.abc import Collection
from contextlib import ExitStack
from dataclasses import dataclass, field
from ipaddress import IPv4Network
from typing import Any

import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb
from sqlalchemy.orm import Session

from sliceportal.db import changes
from sliceportal.db.aio import ReadPool
from sliceportal.db.changes import Change, ChangeContext
from sliceportal.db.models import (
    ABC_COLUMNS,
    SliceSla,
    burst_bytes,
    nested_abc,
    nested_codel,
)
from sliceportal.db.outbox import Message
from sliceportal.db.queries.links import LinkLocks, LockedLink
from sliceportal.db.session import driver
from sliceportal.domain.admission import StoredLevels
from sliceportal.domain.spec import MAX_DP_SID

NAME_TAKEN = "uq_slices_name"
"""The unique index a creation with a taken name fails on."""

_LOCK_SWITCHES = """
SELECT id, name FROM switches WHERE id IN (SELECT switch_id FROM links WHERE id = ANY(%s))
ORDER BY id
FOR NO KEY UPDATE
"""

MATCH_CLASHES = """
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
ABC_HELD = f"""
SELECT DISTINCT ON (held.switch_id, slices.abc_meter_memory_s, slices.abc_average_memory_s)
       held.switch_id, slices.priority, slices.rate_bps, slices.burst_limit_s,
       slices.delay_target_s, {", ".join(f"slices.{column}" for column in ABC_COLUMNS)}
FROM slice_switches AS held
JOIN slices ON slices.id = held.slice_id
WHERE held.switch_id IN (SELECT switch_id FROM links WHERE id = ANY(%(links)s))
  AND slices.scheme = 'abc' AND slices.id <> %(slice)s
ORDER BY held.switch_id, slices.abc_meter_memory_s, slices.abc_average_memory_s, slices.id
"""
"""One abc slice per distinct pair of memories on each switch an abc slice will cross (other
than the slice itself): what decides whether its memories still fit the switch's decay tables
(`dataplane.check_decay_memories`). Read under the switch locks, so two changes cannot each
bring the 16th memory to one switch."""
_EXITS = "SELECT switch_id, port FROM links WHERE id = ANY(%s)"
"""Where a slice will leave each switch it crosses (one link is one switch and egress port)."""

_INSERT_SLICE = """
WITH created AS (
    INSERT INTO slices (name, description, vlan_id, ipv4_prefixes, rate_bps, burst_limit_s,
                        delay_target_s, e2e_delay_target_s, priority, scheme,
                        marking_threshold_s, codel_target_s, codel_interval_s, codel_ecn_mark,
                        abc_meter_memory_s, abc_average_memory_s, abc_reference_rate_bps,
                        abc_q_min_s, abc_q_base_s, abc_gamma_s, abc_key, abc_prefix_length,
                        max_packet_bytes, state)
    VALUES (%(name)s, %(description)s, %(vlan_id)s, %(ipv4_prefixes)s::cidr[], %(rate_bps)s,
            %(burst_limit_s)s, %(delay_target_s)s, %(e2e_delay_target_s)s, %(priority)s,
            %(scheme)s, %(marking_threshold_s)s, %(codel_target_s)s, %(codel_interval_s)s,
            %(codel_ecn_mark)s, %(abc_meter_memory_s)s, %(abc_average_memory_s)s,
            %(abc_reference_rate_bps)s, %(abc_q_min_s)s, %(abc_q_base_s)s, %(abc_gamma_s)s,
            %(abc_key)s, %(abc_prefix_length)s, %(max_packet_bytes)s, %(state)s)
    RETURNING *
), sla AS (
    INSERT INTO slice_slas (slice_id, max_delay_s, min_throughput_bps, max_loss_ratio,
                            max_mark_ratio)
    SELECT id, %(max_delay_s)s, %(min_throughput_bps)s, %(max_loss_ratio)s, %(max_mark_ratio)s
    FROM created
)
SELECT * FROM created
"""
"""A new slice and its SLA in one statement, answering the slice's columns."""


@dataclass(frozen=True)
class Match:
    """A slice's match as it will be stored, on the links it will cross."""

    slice_id: int
    vlan_id: int | None
    prefixes: list[IPv4Network]
    link_ids: set[int]


@dataclass(frozen=True)
class Locked:
    """What `lock` read under its locks."""

    switches: dict[int, str]
    """The names of the locked switches, by id."""
    links: dict[int, LockedLink] = field(default_factory=dict)
    """The locked links, by id (none unless asked for)."""
    stored: StoredLevels = field(default_factory=lambda: StoredLevels({}, []))
    created: dict[str, Any] | None = None
    """The columns of the slice `lock` inserted first, if asked to."""
    clashing: list[Any] = field(default_factory=list)
    """The rows of `MATCH_CLASHES`: switch id, port, slice id, name, VLAN, prefixes."""
    exits: list[tuple[int, int]] = field(default_factory=list)
    """Switch and egress port of each link of the match."""
    abc_held: list[dict[str, Any]] = field(default_factory=list)
    """The rows of `ABC_HELD` (by column name), when asked for."""


def lock(
    session: Session,
    link_ids: set[int],
    match: Match | None,
    changed: set[int] | None,
    slice_id: int,
    insert: dict[str, Any] | None = None,
    abc_links: set[int] | None = None,
) -> Locked:
    """Insert a new slice first, when `insert` gives its columns and SLA; lock the switches of
    `link_ids`; then read the other slices that could hold one of `match`'s classifier entries
    there, and the ABC memories held on the switches of `abc_links` (`ABC_HELD`, unless
    None); then, unless `changed` is None, lock `link_ids` and the paths of the slices with an
    end-to-end target crossing `changed` (`LinkLocks`) and read their stored level sums for
    the change of slice `slice_id` (0: a slice being created, which crosses no link yet, so
    none of the reads can find it).

    The statements run in that order, each after the locks of the one before, but are sent in
    one pipeline: one round trip where they took six, and each round trip under the locks
    is a wait for the database and for this worker's GIL while the other requests queue.
    A taken name fails the insert on `NAME_TAKEN` (psycopg's UniqueViolation).
    """
    connection = driver(session)
    with ExitStack() as stack:
        stack.enter_context(connection.pipeline())
        inserting = stack.enter_context(connection.cursor(row_factory=dict_row))
        locking = stack.enter_context(connection.cursor())
        matching = stack.enter_context(connection.cursor())
        leaving = stack.enter_context(connection.cursor())
        holding = stack.enter_context(connection.cursor(row_factory=dict_row))
        if insert is not None:
            inserting.execute(_INSERT_SLICE, insert)
        locking.execute(_LOCK_SWITCHES, (list(link_ids),))
        if match is not None:
            leaving.execute(_EXITS, (list(match.link_ids),))
            matching.execute(
                MATCH_CLASHES,
                {
                    "links": list(match.link_ids),
                    "slice": match.slice_id,
                    "vlan": match.vlan_id,
                    "prefixes": [str(prefix) for prefix in match.prefixes],
                },
            )
        if abc_links is not None:
            holding.execute(ABC_HELD, {"links": list(abc_links), "slice": slice_id})
        locks = None
        if changed is not None:
            locks = LinkLocks(stack, session, link_ids, changed=changed, slice_id=slice_id)
        created = inserting.fetchone() if insert is not None else None
        locked = Locked(dict(locking.fetchall()), created=created)
        if match is not None:
            locked = _replace(locked, clashing=matching.fetchall(), exits=leaving.fetchall())
        if abc_links is not None:
            locked = _replace(locked, abc_held=holding.fetchall())
        if locks is not None:
            locked = _replace(locked, links=locks.links(), stored=locks.stored())
    return locked


def _replace(locked: Locked, **values: Any) -> Locked:
    return Locked(**{**locked.__dict__, **values})


_SET_LINKS = f"""
WITH left_links AS (
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
), wanted AS (
    SELECT * FROM unnest(%(links)s::integer[], %(link_switches)s::integer[],
                         %(positions)s::smallint[]) AS link (id, switch_id, position)
), reordered AS (
    UPDATE slice_links mine SET position = wanted.position
    FROM wanted
    WHERE mine.slice_id = %(slice)s AND mine.link_id = wanted.id
      AND mine.position IS DISTINCT FROM wanted.position
), added_links AS (
    INSERT INTO slice_links (slice_id, link_id, switch_id, position)
    SELECT %(slice)s, wanted.id, wanted.switch_id, wanted.position
    FROM wanted
    WHERE NOT EXISTS (
        SELECT FROM slice_links mine WHERE mine.slice_id = %(slice)s AND mine.link_id = wanted.id)
)
SELECT 1
"""
"""Drop the links and switches the slice leaves (the database cascades to their rows), give it
a DP_SID on each new switch (the switch rows are locked: nobody allocates meanwhile; ON
CONFLICT skips a wanted DP_SID that is taken), move the kept link rows to their new places on
the path (only those that move: an update of `slice_links` recomputes the links' level sums,
migration 0006) and add the new link rows. A switch that gave none fails the statement on the
link rows' foreign key to `slice_switches` (`_LINK_NEEDS_DP_SID`), so nothing half-written can
be committed."""
_LINK_NEEDS_DP_SID = "fk_slice_links_slice_id_switch_id_slice_switches"
_DP_SID_USE = """
SELECT switch_id, count(*), bool_or(dp_sid = %(dp_sid)s) FROM slice_switches
WHERE switch_id = ANY(%(switches)s) GROUP BY switch_id ORDER BY switch_id
"""


class NoDpSid(Exception):
    """A switch the slice was to cross gave it no DP_SID (the wanted one is taken, or none is
    free); the transaction is aborted. `use` is, per switch of the change, as read afterwards
    in a fresh transaction: the DP_SIDs held, and whether the wanted one is among them."""

    def __init__(self, use: list[tuple[int, int, bool]]) -> None:
        super().__init__("no DP_SID")
        self.use = use


def set_links(
    session: Session,
    slice_id: int,
    links: Collection[LockedLink],
    order: list[int] | None = None,
    dp_sid: int | None = None,
    *,
    commit_with: tuple[ChangeContext, Change, list[Message]] | None = None,
) -> None:
    """Make the slice cross exactly `links`, in path `order` (their ids; None: an unordered
    set), holding one DP_SID on each of their switches (`dp_sid` if given). With
    `commit_with`, also write that change-log entry (its `read_dp_sids` sees the DP_SIDs given
    here) and outbox messages, and commit, all in the same round trip. NoDpSid (after a
    rollback) when a switch gave none."""
    switches = sorted({link.switch_id for link in links})
    position = {} if order is None else {link_id: index for index, link_id in enumerate(order)}
    params = {
        "slice": slice_id,
        "links": [link.params.id for link in links],
        "link_switches": [link.switch_id for link in links],
        "positions": [position.get(link.params.id) for link in links],
        "switches": switches,
        "dp_sid": dp_sid,
    }
    connection = driver(session)
    try:
        with connection.pipeline(), connection.cursor() as cursor:
            cursor.execute(_SET_LINKS, params)
            if commit_with is not None:
                context, change, messages = commit_with
                changes.write(session, context, [change], messages=messages)
                connection.commit()
    except psycopg.errors.ForeignKeyViolation as exc:
        if exc.diag.constraint_name != _LINK_NEEDS_DP_SID:
            raise
        raise NoDpSid(_dp_sid_use(session, switches, dp_sid)) from None


def _dp_sid_use(
    session: Session, switches: list[int], dp_sid: int | None
) -> list[tuple[int, int, bool]]:
    session.rollback()
    with driver(session).cursor() as cursor:
        cursor.execute(_DP_SID_USE, {"switches": switches, "dp_sid": dp_sid})
        use = cursor.fetchall()
    session.rollback()
    return use


_TAKEN_NAMES = "SELECT name FROM slices WHERE name = ANY(%s)"
_LINK_EXITS = "SELECT id, switch_id, port FROM links WHERE id = ANY(%s)"
BATCH_CLASHES = """
WITH sharing AS MATERIALIZED (
    SELECT id FROM slices WHERE ipv4_prefixes && %(prefixes)s::cidr[]
    UNION
    SELECT id FROM slices WHERE vlan_id = ANY(%(vlans)s::integer[])
)
SELECT links.switch_id, links.port, slices.id, slices.name, slices.vlan_id,
       slices.ipv4_prefixes
FROM sharing
JOIN slices ON slices.id = sharing.id
JOIN slice_links here ON here.slice_id = sharing.id
JOIN links ON links.id = here.link_id
WHERE links.switch_id = ANY(%(switches)s)
ORDER BY slices.id, links.id
"""
"""`MATCH_CLASHES` for a whole import: the stored slices sharing a prefix or a VLAN with any
of its slices, where they leave the switches the import crosses (a narrowing; which of them
clash with which new slice is `matchclash.first_clash`'s to decide)."""
_HELD_DP_SIDS = "SELECT switch_id, dp_sid FROM slice_switches WHERE switch_id = ANY(%s)"


@dataclass(frozen=True)
class Batch:
    """What an import (`services.bulk`) read under its locks, besides `locked` (the switches
    and links of all its slices, as `lock` locks them for one)."""

    locked: Locked
    taken: set[str]
    """The import's names that stored slices hold."""
    exits: dict[int, tuple[int, int]]
    """Switch and egress port of each link of the import, by link id."""
    clashing: list[Any]
    """The rows of `BATCH_CLASHES`."""
    abc_held: list[dict[str, Any]]
    """The rows of `ABC_HELD` on the switches of the import's abc slices."""
    dp_sids: dict[int, set[int]]
    """The DP_SIDs held on each switch of the import."""


def lock_batch(
    session: Session,
    link_ids: set[int],
    names: list[str],
    vlans: list[int],
    prefixes: list[str],
    abc_links: set[int],
) -> Batch:
    """Lock the switches and links of an import's slices as `lock` locks those of one (the
    links and the paths crossing them: every link the import adds to is changed), then read
    in one round trip what its checks need: names taken, exits, possible classifier clashes,
    ABC memories held and DP_SIDs held."""
    locked = lock(session, link_ids, None, link_ids, 0)
    switches = list(locked.switches)
    connection = driver(session)
    with ExitStack() as stack:
        stack.enter_context(connection.pipeline())
        cursors = [stack.enter_context(connection.cursor()) for _ in range(4)]
        naming, leaving, matching, numbering = cursors
        holding = stack.enter_context(connection.cursor(row_factory=dict_row))
        naming.execute(_TAKEN_NAMES, (names,))
        leaving.execute(_LINK_EXITS, (list(link_ids),))
        matching.execute(
            BATCH_CLASHES, {"prefixes": prefixes, "vlans": vlans, "switches": switches}
        )
        holding.execute(ABC_HELD, {"links": list(abc_links), "slice": 0})
        numbering.execute(_HELD_DP_SIDS, (switches,))
        taken = {row[0] for row in naming.fetchall()}
        exits = {row[0]: (row[1], row[2]) for row in leaving.fetchall()}
        clashing = matching.fetchall()
        held = holding.fetchall()
        dp_sids: dict[int, set[int]] = {switch_id: set() for switch_id in switches}
        for switch_id, dp_sid in numbering.fetchall():
            dp_sids[switch_id].add(dp_sid)
    return Batch(locked, taken, exits, clashing, held, dp_sids)


_SLICE_COLUMNS = """name, description, vlan_id, ipv4_prefixes, rate_bps, burst_limit_s,
delay_target_s, e2e_delay_target_s, priority, scheme, marking_threshold_s, codel_target_s,
codel_interval_s, codel_ecn_mark, abc_meter_memory_s, abc_average_memory_s,
abc_reference_rate_bps, abc_q_min_s, abc_q_base_s, abc_gamma_s, abc_key, abc_prefix_length,
max_packet_bytes, state"""
_INSERT_SLICES = f"""
INSERT INTO slices ({_SLICE_COLUMNS})
SELECT {_SLICE_COLUMNS} FROM jsonb_populate_recordset(NULL::slices, %s)
RETURNING *
"""
_INSERT_SLAS = """
INSERT INTO slice_slas (slice_id, max_delay_s, min_throughput_bps, max_loss_ratio,
                        max_mark_ratio)
SELECT slice_id, max_delay_s, min_throughput_bps, max_loss_ratio, max_mark_ratio
FROM jsonb_populate_recordset(NULL::slice_slas, %s)
"""
_INSERT_SWITCH_ROWS = """
INSERT INTO slice_switches (slice_id, switch_id, dp_sid)
SELECT slice_id, switch_id, dp_sid FROM jsonb_populate_recordset(NULL::slice_switches, %s)
"""
_INSERT_LINK_ROWS = """
INSERT INTO slice_links (slice_id, link_id, switch_id, position)
SELECT slice_id, link_id, switch_id, position
FROM jsonb_populate_recordset(NULL::slice_links, %s)
"""


def _dumps(value: object) -> str:
    """JSON of slice columns as the services hold them: enumerations are strings already,
    prefixes (`IPv4Network`) become their text; one pass, no copy of the rows."""
    return json.dumps(value, default=str)


def insert_slices(session: Session, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Insert many slices (their columns, `_SLICE_COLUMNS`) in one statement;
    their stored columns, in no particular order (match them by name)."""
    with driver(session).cursor(row_factory=dict_row) as cursor:
        cursor.execute(_INSERT_SLICES, (Jsonb(rows, dumps=_dumps),))
        return cursor.fetchall()


def insert_relations(
    session: Session,
    slas: list[dict[str, Any]],
    switch_rows: list[dict[str, Any]],
    link_rows: list[dict[str, Any]],
) -> None:
    """The SLAs, DP_SIDs (`slice_switches`) and links (`slice_links`) of slices just inserted,
    in one round trip; the link rows last (their foreign key needs the DP_SID rows, and their
    statement triggers add the slices to the links' level sums)."""
    connection = driver(session)
    with connection.pipeline(), connection.cursor() as cursor:
        cursor.execute(_INSERT_SLAS, (Jsonb(slas),))
        cursor.execute(_INSERT_SWITCH_ROWS, (Jsonb(switch_rows),))
        cursor.execute(_INSERT_LINK_ROWS, (Jsonb(link_rows),))


_SLA_COLUMNS = [column.name for column in SliceSla.__table__.columns if column.name != "slice_id"]
SLICE_DOCUMENT = f"""
SELECT slices.*, {", ".join(f"sla.{column} AS sla_{column}" for column in _SLA_COLUMNS)},
       ARRAY(SELECT link_id FROM slice_links WHERE slice_id = slices.id ORDER BY link_id)
           AS link_ids,
       (SELECT CASE WHEN bool_and(position IS NOT NULL) THEN array_agg(link_id ORDER BY position)
               END
        FROM slice_links WHERE slice_id = slices.id) AS path,
       ARRAY(SELECT ARRAY[switch_id, dp_sid] FROM slice_switches
             WHERE slice_id = slices.id ORDER BY switch_id) AS dp_sids
FROM slices JOIN slice_slas AS sla ON sla.slice_id = slices.id
WHERE slices.id = %s
"""
"""A slice with its SLA, links (as a set, and as a path: `Slice.path`) and DP_SIDs in one
statement (four index lookups)."""


async def slice_document(pool: ReadPool, slice_id: int) -> dict[str, Any] | None:
    """Slice `slice_id` as `schemas.slices.SlicePublic` validates it (the fields the model's
    properties give a loaded `Slice`), or None when there is none; read on the event loop."""
    async with pool.connection() as connection:
        cursor = connection.cursor(row_factory=dict_row)
        await cursor.execute(SLICE_DOCUMENT, (slice_id,), prepare=True)
        row = await cursor.fetchone()
    if row is None:
        return None
    row["sla"] = {column: row.pop(f"sla_{column}") for column in _SLA_COLUMNS}
    row["switch_rows"] = [
        {"switch_id": switch_id, "dp_sid": dp_sid} for switch_id, dp_sid in row.pop("dp_sids")
    ]
    row["burst_bytes"] = burst_bytes(row["rate_bps"], row["burst_limit_s"])
    row["codel"] = nested_codel(
        row["codel_target_s"], row["codel_interval_s"], row["codel_ecn_mark"]
    )
    row["abc"] = nested_abc(row)
    return row
