"""Links: a change of capacity, model, queue count or MTU is re-checked against the slices
the link carries, under the link's row lock (the lock slice admission takes too)."""

from __future__ import annotations

import dataclasses

from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from sliceportal.api.schemas.links import LinkCreate, LinkUpdate
from sliceportal.controlplane import outbox
from sliceportal.core.config import Settings
from sliceportal.db.models import Link, SliceLink, Switch
from sliceportal.domain import Model
from sliceportal.services import admission, crud
from sliceportal.services.changes import ChangeContext
from sliceportal.services.errors import ConflictError, InvalidFieldError

ANALYSED_FIELDS = frozenset({"capacity_bps", "model", "queue_count", "mtu_bytes"})


def create_link(
    session: Session, context: ChangeContext, data: LinkCreate, settings: Settings
) -> Link:
    if session.get(Switch, data.switch_id) is None:
        raise InvalidFieldError(f"switch {data.switch_id} does not exist", field="switch_id")
    values = data.model_dump()
    values["model"] = data.model or Model(settings.default_model)
    values["mtu_bytes"] = data.mtu_bytes or settings.default_mtu_bytes
    return crud.create(session, context, Link(**values))


def update_link(session: Session, context: ChangeContext, link_id: int, data: LinkUpdate) -> Link:
    link = crud.get(session, Link, link_id, lock=True)
    values = data.model_dump(exclude_unset=True)
    if values.keys() & ANALYSED_FIELDS:
        proposed = dataclasses.replace(
            admission.LinkParams.of(link), **{k: values[k] for k in values.keys() & ANALYSED_FIELDS}
        )
        loads = admission.stored_loads(session, [proposed])
        admission.check_queues(proposed, loads[link.id], field="queue_count")
        admission.check_links(session, f"this change of link {link.name!r}", [proposed], loads)
    if "port" in values:  # the slices' entries on the switch key on the egress port
        outbox.request_reconcile(session, [link.switch_id])
    return crud.update(session, context, link, values)


def delete_link(session: Session, context: ChangeContext, link_id: int) -> None:
    link = crud.get(session, Link, link_id, lock=True)
    if session.scalar(select(exists().where(SliceLink.link_id == link_id))):
        raise ConflictError(f"slices still cross link {link.name!r}; move or delete them first")
    crud.delete(session, context, link)
