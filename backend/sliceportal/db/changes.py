"""The change log: every create/update/delete, with who and which request, in the same
transaction as the change (netbox's change logging). The table rejects UPDATE and DELETE."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from sliceportal.db.models import ChangeLogEntry
from sliceportal.schemas.choices import ChangeAction, EntityType


@dataclass(frozen=True)
class ChangeContext:
    """Who is changing things and in which request; `user_id=None` is the system (CLI set-up)."""

    user_id: int | None
    request_id: str


def record(
    session: Session,
    context: ChangeContext,
    action: ChangeAction,
    entity_type: EntityType,
    entity_id: int,
    entity_name: str,
    *,
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
) -> None:
    """Add a change-log entry to the session's transaction (flushed with the change)."""
    session.add(
        ChangeLogEntry(
            user_id=context.user_id,
            request_id=context.request_id,
            action=action,
            entity_type=entity_type,
            entity_id=entity_id,
            entity_name=entity_name,
            before=before,
            after=after,
        )
    )
