"""Switches: created `unknown`; the control-plane workers move their state. Creating or changing
a switch has it reconciled (contacted, deployed) once the transaction commits."""

from __future__ import annotations

from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from sliceportal.db import outbox
from sliceportal.db.changes import ChangeContext
from sliceportal.db.models import Link, Switch
from sliceportal.schemas.switches import SwitchCreate, SwitchUpdate
from sliceportal.services import crud
from sliceportal.services.errors import ConflictError


def create_switch(session: Session, context: ChangeContext, data: SwitchCreate) -> Switch:
    switch = Switch(**data.model_dump())
    session.add(switch)
    session.flush()
    outbox.request_reconcile(session, [switch.id])
    return crud.create(session, context, switch)


def update_switch(
    session: Session, context: ChangeContext, switch_id: int, data: SwitchUpdate
) -> Switch:
    switch = crud.get(session, Switch, switch_id, lock=True)
    outbox.request_reconcile(session, [switch_id])
    return crud.update(session, context, switch, data.model_dump(exclude_unset=True))


def delete_switch(session: Session, context: ChangeContext, switch_id: int) -> None:
    switch = crud.get(session, Switch, switch_id, lock=True)
    if session.scalar(select(exists().where(Link.switch_id == switch_id))):
        raise ConflictError(f"switch {switch.name!r} still has links; delete them first")
    crud.delete(session, context, switch)
