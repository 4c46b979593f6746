"""Create/update/delete of one change-logged row, each in its own transaction, with its
change-log entry and the tasks it asks for (`db.changes.write`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

from sqlalchemy.orm import Session

from sliceportal.db import changes
from sliceportal.db.base import ChangeLogged
from sliceportal.db.changes import Change, ChangeContext
from sliceportal.db.outbox import Message
from sliceportal.schemas.choices import ChangeAction
from sliceportal.services.errors import NotFoundError

RowT = TypeVar("RowT", bound=ChangeLogged)


def get(session: Session, model: type[RowT], row_id: int, *, lock: bool = False) -> RowT:
    """The row with `row_id` (locked FOR UPDATE when asked), or NotFoundError."""
    row = session.get(model, row_id, with_for_update=lock)
    if row is None:
        raise NotFoundError(f"{model.entity_type.label.lower()} {row_id} does not exist")
    return row


def create(
    session: Session, context: ChangeContext, row: RowT, *, messages: Iterable[Message] = ()
) -> RowT:
    session.add(row)
    session.flush()
    changes.write(session, context, [Change.of(ChangeAction.CREATE, row, None)], messages=messages)
    session.commit()
    return row


def update(
    session: Session,
    context: ChangeContext,
    row: RowT,
    values: dict[str, Any],
    *,
    messages: Iterable[Message] = (),
) -> RowT:
    before = row.snapshot()
    for key, value in values.items():
        setattr(row, key, value)
    session.flush()
    changes.write(
        session, context, [Change.of(ChangeAction.UPDATE, row, before)], messages=messages
    )
    session.commit()
    return row


def delete(session: Session, context: ChangeContext, row: ChangeLogged) -> None:
    before = row.snapshot()
    session.delete(row)
    session.flush()
    changes.write(session, context, [Change.of(ChangeAction.DELETE, row, before)])
    session.commit()
