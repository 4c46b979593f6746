from __future__ import annotations

from fastapi import APIRouter

from sliceportal.api.deps import OperatorUser, PageDep, SessionDep, paginate, select_where
from sliceportal.db.models import ChangeLogEntry
from sliceportal.schemas.changes import ChangePublic, ChangesPublic
from sliceportal.schemas.choices import ChangeAction, EntityType
from sliceportal.schemas.common import FilterText, RowId, Timestamp

router = APIRouter(prefix="/changes", tags=["changes"])


@router.get("")
def read_changes(
    session: SessionDep,
    _: OperatorUser,
    page: PageDep,
    entity_type: EntityType | None = None,
    entity_id: RowId | None = None,
    user_id: RowId | None = None,
    request_id: FilterText | None = None,
    action: ChangeAction | None = None,
    since: Timestamp | None = None,
    until: Timestamp | None = None,
) -> ChangesPublic:
    """The change log, newest first (operators and admins: it shows who changed what)."""
    query = (
        select_where(
            ChangeLogEntry,
            entity_type=entity_type,
            entity_id=entity_id,
            user_id=user_id,
            request_id=request_id,
            action=action,
        )
        .order_by(None)
        .order_by(ChangeLogEntry.id.desc())
    )
    if since is not None:
        query = query.where(ChangeLogEntry.occurred_at >= since)
    if until is not None:
        query = query.where(ChangeLogEntry.occurred_at < until)
    rows, count = paginate(session, query, page)
    return ChangesPublic(data=[ChangePublic.model_validate(row) for row in rows], count=count)
