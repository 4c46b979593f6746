from __future__ import annotations

import kombu.exceptions
from fastapi import APIRouter, status

from sliceportal.api.deps import (
    ChangeContextDep,
    OperatorUser,
    PageDep,
    SessionDep,
    SettingsDep,
    ViewerUser,
    paginate,
    select_where,
)
from sliceportal.api.problems import service_unavailable
from sliceportal.controlplane.tasks import publisher
from sliceportal.core.config import Settings
from sliceportal.db.models import Switch
from sliceportal.schemas.choices import SwitchKind, SwitchState
from sliceportal.schemas.common import FilterText, RowId
from sliceportal.schemas.switches import (
    SwitchCreate,
    SwitchesPublic,
    SwitchPublic,
    SwitchTaskAccepted,
    SwitchUpdate,
)
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
    q: FilterText | None = None,
) -> SwitchesPublic:
    """Switches; `q` matches part of the name."""
    query = select_where(Switch, kind=kind, state=state)
    if q:
        query = query.where(Switch.name.icontains(q, autoescape=True))
    rows, count = paginate(session, query, page)
    return SwitchesPublic(data=[SwitchPublic.model_validate(row) for row in rows], count=count)


@router.post("", status_code=status.HTTP_201_CREATED)
def create_switch(
    session: SessionDep,
    settings: SettingsDep,
    _: OperatorUser,
    context: ChangeContextDep,
    body: SwitchCreate,
) -> SwitchPublic:
    """Register a switch. Its address must be inside `SLICEPORTAL_SWITCH_NETWORKS` and its TLS
    files PEM files inside `SLICEPORTAL_TLS_DIRS` (422 naming the field otherwise)."""
    return SwitchPublic.model_validate(service.create_switch(session, context, body, settings))


@router.get("/{switch_id}")
def read_switch(session: SessionDep, _: ViewerUser, switch_id: RowId) -> SwitchPublic:
    return SwitchPublic.model_validate(crud.get(session, Switch, switch_id))


@router.patch("/{switch_id}")
def update_switch(
    session: SessionDep,
    settings: SettingsDep,
    _: OperatorUser,
    context: ChangeContextDep,
    switch_id: RowId,
    body: SwitchUpdate,
) -> SwitchPublic:
    """Change a switch; a new address or TLS file is held to the rules of registration."""
    return SwitchPublic.model_validate(
        service.update_switch(session, context, switch_id, body, settings)
    )


@router.delete("/{switch_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_switch(
    session: SessionDep, _: OperatorUser, context: ChangeContextDep, switch_id: RowId
) -> None:
    """Delete a switch without links (409 otherwise)."""
    service.delete_switch(session, context, switch_id)


def _queue(
    session: SessionDep, settings: Settings, switch_id: int, *, deploy: bool
) -> SwitchTaskAccepted:
    """Through the outbox, sent before the answer: a 202 names a task that is queued, a 503
    means that nothing was."""
    try:
        task_id = service.queue_reconcile(
            session, switch_id, deploy=deploy, send=publisher(settings)
        )
    except kombu.exceptions.OperationalError:
        raise service_unavailable(
            "redis-unavailable", "the task queue (Redis) cannot be reached now"
        ) from None
    return SwitchTaskAccepted(task_id=task_id, switch_id=switch_id, deploy=deploy)


@router.post("/{switch_id}/deploy", status_code=status.HTTP_202_ACCEPTED)
def deploy_switch(
    session: SessionDep, settings: SettingsDep, _: OperatorUser, switch_id: RowId
) -> SwitchTaskAccepted:
    """Queue a deploy: push the portal's pipeline unless the switch reports its cookie, then
    reconcile the entries. 503 when the task queue is down."""
    return _queue(session, settings, switch_id, deploy=True)


@router.post("/{switch_id}/reconcile", status_code=status.HTTP_202_ACCEPTED)
def reconcile_switch(
    session: SessionDep, settings: SettingsDep, _: OperatorUser, switch_id: RowId
) -> SwitchTaskAccepted:
    """Queue a reconciliation: write what the switch lacks, remove what it should not hold,
    re-push the pipeline if the switch lost it. 503 when the task queue is down."""
    return _queue(session, settings, switch_id, deploy=False)
