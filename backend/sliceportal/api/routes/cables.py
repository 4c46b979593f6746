from __future__ import annotations

from fastapi import APIRouter, status
from sqlalchemy import select

from sliceportal.api.deps import (
    ChangeContextDep,
    OperatorUser,
    PageDep,
    SessionDep,
    ViewerUser,
    paginate,
    select_where,
)
from sliceportal.db.models import Cable, Link
from sliceportal.schemas.cables import (
    AffectedSlicePublic,
    AffectedSlicesPublic,
    CableCreate,
    CablePublic,
    CablesPublic,
    CableUpdate,
)
from sliceportal.schemas.common import FilterText, RowId
from sliceportal.services import cables as service
from sliceportal.services import crud

router = APIRouter(prefix="/cables", tags=["cables"])


@router.get("")
def read_cables(
    session: SessionDep,
    _: ViewerUser,
    page: PageDep,
    switch_id: RowId | None = None,
    q: FilterText | None = None,
) -> CablesPublic:
    """Cables; `switch_id` keeps those with an end on that switch, `q` matches part of the
    name."""
    query = select_where(Cable)
    if switch_id is not None:
        ends = select(Link.cable_id).where(Link.switch_id == switch_id)
        query = query.where(Cable.id.in_(ends))
    if q:
        query = query.where(Cable.name.icontains(q, autoescape=True))
    rows, count = paginate(session, query, page)
    return CablesPublic(data=[CablePublic.model_validate(row) for row in rows], count=count)


@router.post("", status_code=status.HTTP_201_CREATED)
def create_cable(
    session: SessionDep, _: OperatorUser, context: ChangeContextDep, body: CableCreate
) -> CablePublic:
    """Join two links (ports) of two switches: each becomes one direction of the cable. 422
    when an end does not exist or both are on one switch; 409 when an end is already a cable's
    or faces hosts (a port is used once)."""
    return CablePublic.model_validate(service.create_cable(session, context, body))


@router.get("/{cable_id}")
def read_cable(session: SessionDep, _: ViewerUser, cable_id: RowId) -> CablePublic:
    return CablePublic.model_validate(crud.get(session, Cable, cable_id))


@router.get("/{cable_id}/affected")
def read_affected_slices(
    session: SessionDep, _: ViewerUser, cable_id: RowId
) -> AffectedSlicesPublic:
    """The slices crossing the cable (they leave a switch by one of its ends), each with the
    shortest admissible path that avoids it, or why there is none: the portal never moves a
    slice on its own, so deleting a cable they cross is refused until they are moved."""
    rows = service.affected(session, cable_id)
    data = [AffectedSlicePublic.model_validate(row) for row in rows]
    return AffectedSlicesPublic(data=data, count=len(data))


@router.patch("/{cable_id}")
def update_cable(
    session: SessionDep,
    _: OperatorUser,
    context: ChangeContextDep,
    cable_id: RowId,
    body: CableUpdate,
) -> CablePublic:
    """Change a cable; a new propagation delay is admitted first against the end-to-end
    targets of the slices crossing it (409 admission-rejected when one would miss it)."""
    return CablePublic.model_validate(service.update_cable(session, context, cable_id, body))


@router.delete("/{cable_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_cable(
    session: SessionDep, _: OperatorUser, context: ChangeContextDep, cable_id: RowId
) -> None:
    """Unwire both ends (the links stay) and delete the cable; 409 while slices cross it
    (`GET /cables/{cable_id}/affected` lists them, each with a path avoiding it)."""
    service.delete_cable(session, context, cable_id)
