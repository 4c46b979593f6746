"""Switches: created `unknown`; the control-plane workers move their state. Creating or changing
a switch has it reconciled (contacted, deployed) once the transaction commits."""

from __future__ import annotations

import uuid

from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from sliceportal.db import changes, outbox
from sliceportal.db.changes import ChangeContext
from sliceportal.db.models import Link, Switch
from sliceportal.db.outbox import Sender
from sliceportal.schemas.switches import SwitchCreate, SwitchUpdate
from sliceportal.services import crud
from sliceportal.services.errors import ConflictError


def create_switch(session: Session, context: ChangeContext, data: SwitchCreate) -> Switch:
    switch = Switch(**data.model_dump())
    session.add(switch)
    session.flush()
    return crud.create(session, context, switch, messages=outbox.reconcile([switch.id]))


def update_switch(
    session: Session, context: ChangeContext, switch_id: int, data: SwitchUpdate
) -> Switch:
    switch = crud.get(session, Switch, switch_id, lock=True)
    values = data.model_dump(exclude_unset=True)
    return crud.update(session, context, switch, values, messages=outbox.reconcile([switch_id]))


def delete_switch(session: Session, context: ChangeContext, switch_id: int) -> None:
    switch = crud.get(session, Switch, switch_id, lock=True)
    if session.scalar(select(exists().where(Link.switch_id == switch_id))):
        raise ConflictError(f"switch {switch.name!r} still has links; delete them first")
    crud.delete(session, context, switch)


def queue_reconcile(session: Session, switch_id: int, *, deploy: bool, send: Sender) -> str:
    """Queue a reconciliation (with `deploy`: a deploy) of the switch through the outbox and
    send it now with `send` (the API's broker); its task id, which the task runs under.

    The task id is chosen here, so the answer can name it before it is sent. When `send`
    fails, its error propagates and the message is withdrawn (`outbox.send_now`): nothing is
    queued, as the caller will report."""
    crud.get(session, Switch, switch_id)
    message = outbox.reconcile_switch(switch_id, deploy=deploy, task_id=str(uuid.uuid4()))
    changes.write(session, None, messages=[message])
    session.commit()
    assert message.task_id is not None
    outbox.send_now(session, message.task_id, send)
    return message.task_id
