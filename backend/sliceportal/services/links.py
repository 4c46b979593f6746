"""Links: a link is an egress port that faces a switch (as a cable's end, `services.cables`)
or hosts (its host prefixes and VLANs), never both.

A change of capacity, model, queue count, MTU or frame overhead is re-checked against
the slices the link carries and the end-to-end targets of those that have one, under the row
locks of the link and of those slices' other links (the locks slice admission takes too)."""

from __future__ import annotations

import dataclasses
from typing import Any

from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from sliceportal.core.config import Settings
from sliceportal.db import outbox
from sliceportal.db.changes import ChangeContext
from sliceportal.db.models import Link, SliceLink, Switch
from sliceportal.db.queries import links as link_queries
from sliceportal.domain import LinkAnalysis, Model, analyze
from sliceportal.schemas.links import LinkCreate, LinkUpdate
from sliceportal.services import admission, cables, crud
from sliceportal.services.errors import ConflictError, InvalidFieldError, NotFoundError

ANALYSED_FIELDS = frozenset(
    {"capacity_bps", "model", "queue_count", "mtu_bytes", "frame_overhead_bytes"}
)
"""What the bounds of the link's slices depend on: a change re-runs admission."""


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
    values = data.model_dump(exclude_unset=True)
    if values.keys() & ANALYSED_FIELDS:
        return admission.retrying(
            session, lambda: _update_checked(session, context, link_id, values)
        )
    return _apply(session, context, crud.get(session, Link, link_id, lock=True), values)


def _update_checked(
    session: Session, context: ChangeContext, link_id: int, values: dict[str, Any]
) -> Link:
    """Lock the link and the paths of the slices with an end-to-end target crossing it, then
    check the link's slices and those paths with the link as the change leaves it."""
    locked = link_queries.lock_links(session, [link_id], changed=[link_id])
    if link_id not in locked:
        raise NotFoundError(f"link {link_id} does not exist")
    link = crud.get(session, Link, link_id)  # locked above
    params = {other: locked[other].params for other in locked}
    proposed = dataclasses.replace(
        params[link_id], **{k: values[k] for k in values.keys() & ANALYSED_FIELDS}
    )
    params[link_id] = proposed
    loads = link_queries.read_loads(session, params.values())
    admission.check_queues(proposed, loads.links[link_id], field="queue_count")
    admission.admit(session, f"this change of link {link.name!r}", params, loads, changed=[link_id])
    return _apply(session, context, link, values)


def _apply(session: Session, context: ChangeContext, link: Link, values: dict[str, Any]) -> Link:
    cables.check_hosts_allowed(link, values)
    # the slices' entries on the switch key on the egress port
    messages = outbox.reconcile([link.switch_id]) if "port" in values else []
    return crud.update(session, context, link, values, messages=messages)


def link_analysis(session: Session, link_id: int, model: Model | None) -> LinkAnalysis:
    """The worst-case delay of every slice stored on the link, under the link's model or, to
    compare, under `model`."""
    link = link_queries.link_params(crud.get(session, Link, link_id))
    specs = link_queries.read_loads(session, [link]).links[link.id].specs()
    return analyze(specs, link.capacity_bps, model or link.model, link.framing)


def delete_link(session: Session, context: ChangeContext, link_id: int) -> None:
    link = crud.get(session, Link, link_id, lock=True)
    if session.scalar(select(exists().where(SliceLink.link_id == link_id))):
        raise ConflictError(f"slices still cross link {link.name!r}; move or delete them first")
    if link.cable_id is not None:
        raise ConflictError(
            f"link {link.name!r} is an end of cable {link.cable_id}; delete the cable first"
        )
    crud.delete(session, context, link)
