from __future__ import annotations

from fastapi import APIRouter, status

from sliceportal.api.deps import (
    ChangeContextDep,
    OperatorUser,
    PageDep,
    SessionDep,
    ViewerUser,
    paginate,
    select_where,
)
from sliceportal.api.schemas.switches import (
    SwitchCreate,
    SwitchesPublic,
    SwitchPublic,
    SwitchUpdate,
)
from sliceportal.db.choices import SwitchKind, SwitchState
from sliceportal.db.models import Switch
from sliceportal.services import crud
from sliceportal.services import switches as service

router = APIRouter(prefix="/switches", tags=["switches"])


@router.get("")
def read_switches(
    session: SessionDep,
    _: ViewerUser,
    page: PageDep,
    kind: SwitchKind | None = None,
    state: SwitchState | None = None,
    q: str | None = None,
) -> SwitchesPublic:
    """Switches; `q` matches part of the name."""
    query = select_where(Switch, kind=kind, state=state)
    if q:
        query = query.where(Switch.name.icontains(q, autoescape=True))
    rows, count = paginate(session, query, page)
    return SwitchesPublic(data=[SwitchPublic.model_validate(row) for row in rows], count=count)


@router.post("", status_code=status.HTTP_201_CREATED)
def create_switch(
    session: SessionDep, _: OperatorUser, context: ChangeContextDep, body: SwitchCreate
) -> SwitchPublic:
    return SwitchPublic.model_validate(service.create_switch(session, context, body))


@router.get("/{switch_id}")
def read_switch(session: SessionDep, _: ViewerUser, switch_id: int) -> SwitchPublic:
    return SwitchPublic.model_validate(crud.get(session, Switch, switch_id))


@router.patch("/{switch_id}")
def update_switch(
    session: SessionDep,
    _: OperatorUser,
    context: ChangeContextDep,
    switch_id: int,
    body: SwitchUpdate,
) -> SwitchPublic:
    return SwitchPublic.model_validate(service.update_switch(session, context, switch_id, body))


@router.delete("/{switch_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_switch(
    session: SessionDep, _: OperatorUser, context: ChangeContextDep, switch_id: int
) -> None:
    """Delete a switch without links (409 otherwise)."""
    service.delete_switch(session, context, switch_id)
