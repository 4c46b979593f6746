"""The change log and the outbox of a transaction, written by one function, `write`, that every
write path uses (ORM services, the raw-SQL slice paths, the reconciler, alerts, deploys).

The change log is netbox's: every create/update/delete, with who and which request, in the
same transaction as the change; the table rejects UPDATE and DELETE. The outbox
(`db.outbox`) holds the Celery tasks the change asks for, sent once it has committed. Both go
in one statement, so a change costs one round trip more whatever it logs and asks for; the
ORM paths flush their rows first, the raw-SQL paths may send it into their pipeline.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from psycopg.types.json import Jsonb
from sqlalchemy.orm import Session

from sliceportal.db.base import ChangeLogged
from sliceportal.db.outbox import Message
from sliceportal.db.session import driver
from sliceportal.schemas.choices import ChangeAction, EntityType


@dataclass(frozen=True)
class ChangeContext:
    """Who is changing things and in which request; `user_id=None` is the system (CLI set-up)."""

    user_id: int | None
    request_id: str


@dataclass(frozen=True)
class Change:
    """One change-log entry."""

    action: ChangeAction
    entity_type: EntityType
    entity_id: int
    entity_name: str
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None
    read_dp_sids: bool = False
    """Complete `after` with the DP_SIDs the slice `entity_id` holds when the entry is written
    (`dp_sids`, by switch id): a creation allocates them in the same round trip."""

    @classmethod
    def of(cls, action: ChangeAction, row: ChangeLogged, before: dict[str, Any] | None) -> Change:
        """`row`'s change: `after` is its state now, but for a deletion."""
        after = None if action is ChangeAction.DELETE else row.snapshot()
        return cls(action, row.entity_type, row.id, row.display_name, before, after)


_WRITE = """
WITH logged AS (
    INSERT INTO change_log
        (user_id, request_id, action, entity_type, entity_id, entity_name, before, after)
    SELECT %(user_id)s, %(request_id)s, entry.action, entry.entity_type, entry.entity_id,
           entry.entity_name, entry.before, CASE WHEN entry.read_dp_sids THEN
               entry.after || jsonb_build_object('dp_sids', (
                   SELECT COALESCE(jsonb_object_agg(switch_id::text, dp_sid), '{}')
                   FROM slice_switches WHERE slice_id = entry.entity_id))
           ELSE entry.after END
    FROM jsonb_to_recordset(%(entries)s) AS entry(
        n integer, action text, entity_type text, entity_id bigint, entity_name text,
        before jsonb, after jsonb, read_dp_sids boolean)
    ORDER BY entry.n
), queued AS (
    INSERT INTO outbox (task, args, task_id)
    SELECT message.task, message.args, message.task_id
    FROM jsonb_to_recordset(%(messages)s) AS message(
        n integer, task text, args jsonb, task_id text)
    ORDER BY message.n
)
SELECT
"""


def write(
    session: Session,
    context: ChangeContext | None,
    changes: Iterable[Change] = (),
    *,
    messages: Iterable[Message] = (),
) -> None:
    """Add `changes` to the change log (as `context`) and `messages` to the outbox, in the
    session's transaction: one statement on its connection, after the session's pending ORM
    changes (none when there is nothing to write)."""
    session.flush()
    entries = [
        {
            "n": n,
            "action": change.action.value,
            "entity_type": change.entity_type.value,
            "entity_id": change.entity_id,
            "entity_name": change.entity_name,
            "before": change.before,
            "after": change.after,
            "read_dp_sids": change.read_dp_sids,
        }
        for n, change in enumerate(changes)
    ]
    queued = [
        {"n": n, "task": m.task, "args": m.args, "task_id": m.task_id}
        for n, m in enumerate(messages)
    ]
    if not entries and not queued:
        return
    if entries and context is None:
        raise ValueError("change-log entries need the context of the change")
    params = {
        "user_id": None if context is None else context.user_id,
        "request_id": None if context is None else context.request_id,
        "entries": Jsonb(entries),
        "messages": Jsonb(queued),
    }
    with driver(session).cursor() as cursor:
        cursor.execute(_WRITE, params)
