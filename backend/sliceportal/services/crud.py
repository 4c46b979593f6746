"""Create/update/delete of one change-logged row, each in its own transaction."""

from __future__ import annotations

from typing import Any, TypeVar

from sqlalchemy.orm import Session

from sliceportal.db.base import ChangeLogged
from sliceportal.db.choices import ChangeAction
from sliceportal.services import changes
from sliceportal.services.changes import ChangeContext
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
