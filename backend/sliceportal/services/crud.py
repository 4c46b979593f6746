"""Create/update/delete of one change-logged row, each in its own transaction."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar, cast

import psycopg
from psycopg.types.json import Jsonb
from sqlalchemy.orm import Session

from sliceportal.db import changes, outbox
from sliceportal.db.base import ChangeLogged
from sliceportal.db.changes import ChangeContext
from sliceportal.schemas.choices import ChangeAction, EntityType
from sliceportal.services.errors import NotFoundError

RowT = TypeVar("RowT", bound=ChangeLogged)


def get(session: Session, model: type[RowT], row_id: int, *, lock: bool = False) -> RowT:
    """The row with `row_id` (locked FOR UPDATE when asked), or NotFoundError."""
    row = session.get(model, row_id, with_for_update=lock)
    if row is None:
        raise NotFoundError(f"{model.entity_type.label.lower()} {row_id} does not exist")
    return row


def create(session: Session, context: ChangeContext, row: RowT) -> RowT:
    session.add(row)
    session.flush()
    log(session, context, ChangeAction.CREATE, row, before=None)
    session.commit()
    return row


def update(session: Session, context: ChangeContext, row: RowT, values: dict[str, Any]) -> RowT:
    before = row.snapshot()
    for key, value in values.items():
        setattr(row, key, value)
    session.flush()
    log(session, context, ChangeAction.UPDATE, row, before=before)
    session.commit()
    return row


def delete(session: Session, context: ChangeContext, row: ChangeLogged) -> None:
    before = row.snapshot()
    session.delete(row)
    session.flush()
    changes.record(
        session,
        context,
        ChangeAction.DELETE,
        row.entity_type,
        row.id,
        row.display_name,
        before=before,
    )
    session.commit()


def log(
    session: Session,
    context: ChangeContext,
    action: ChangeAction,
    row: ChangeLogged,
    *,
    before: dict[str, Any] | None,
) -> None:
    """Record `row`'s current state as the `after` of a create or update."""
    changes.record(
        session,
        context,
        action,
        row.entity_type,
        row.id,
        row.display_name,
        before=before,
        after=row.snapshot(),
    )


def driver(session: Session) -> psycopg.Connection[Any]:
    """The psycopg connection under the session's transaction, for the hot paths that run
    under row locks: plain SQL there skips SQLAlchemy's statement building and unit of work."""
    return cast(psycopg.Connection[Any], session.connection().connection.driver_connection)


def log_and_reconcile_ctes(after: str = "%(after)s") -> str:
    """The CTEs (no WITH) of a change-log entry and of the reconciliation of the switches
    `%(switch_ids)s` after the commit (the outbox rows `outbox.request_reconcile` writes),
    with the parameters `log_params` gives; `after` is the SQL of the entry's `after`."""
    return f"""
logged AS (
    INSERT INTO change_log
        (user_id, request_id, action, entity_type, entity_id, entity_name, before, after)
    VALUES (%(user_id)s, %(request_id)s, %(action)s, %(entity_type)s, %(entity_id)s,
            %(entity_name)s, %(before)s, {after})
), reconciled AS (
    INSERT INTO outbox (task, args)
    SELECT %(task)s, jsonb_build_array(switch_id)
    FROM unnest(%(switch_ids)s::integer[]) AS switch_id
    ORDER BY switch_id
)"""


_LOG_AND_RECONCILE = f"WITH {log_and_reconcile_ctes()} SELECT"


def log_params(
    context: ChangeContext,
    action: ChangeAction,
    entity: tuple[EntityType, int, str],
    *,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
    switch_ids: Iterable[int],
) -> dict[str, Any]:
    """The parameters of `log_and_reconcile_ctes`."""
    entity_type, entity_id, name = entity
    return {
        "user_id": context.user_id,
        "request_id": context.request_id,
        "action": action.value,
        "entity_type": entity_type.value,
        "entity_id": entity_id,
        "entity_name": name,
        "before": None if before is None else Jsonb(before),
        "after": None if after is None else Jsonb(after),
        "task": outbox.RECONCILE_SWITCH,
        "switch_ids": sorted(set(switch_ids)),
    }


def log_and_reconcile(session: Session, params: dict[str, Any]) -> None:
    """The change-log entry of a change and the reconciliation of its switches after its
    commit (`log_params`), in one statement: one round trip instead of two ORM flushes, since
    slice changes hold their link locks meanwhile."""
    with driver(session).cursor() as cursor:
        cursor.execute(_LOG_AND_RECONCILE, params)
