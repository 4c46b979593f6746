from __future__ import annotations

from ipaddress import IPv4Network

from fastapi import APIRouter, status
from sqlalchemy import exists

from sliceportal.api.deps import (
    ChangeContextDep,
    OperatorUser,
    PageDep,
    SessionDep,
    ViewerUser,
    paginate,
    select_where,
)
from sliceportal.db.models import Slice, SliceLink, SliceSwitch
from sliceportal.schemas.choices import QueueScheme, SliceState
from sliceportal.schemas.common import FilterText, RowId
from sliceportal.schemas.slices import (
    Priority,
    SliceCreate,
    SlicePublic,
    SlicesPublic,
    SliceUpdate,
    VlanId,
)
from sliceportal.services import slices as service

router = APIRouter(prefix="/slices", tags=["slices"])


@router.get("")
def read_slices(
    session: SessionDep,
    _: ViewerUser,
    page: PageDep,
    state: SliceState | None = None,
    priority: Priority | None = None,
    scheme: QueueScheme | None = None,
    vlan_id: VlanId | None = None,
    prefix: IPv4Network | None = None,
    link_id: RowId | None = None,
    switch_id: RowId | None = None,
    q: FilterText | None = None,
) -> SlicesPublic:
    """Slices; `link_id`/`switch_id` select those crossing it, `prefix` those matching that
    exact prefix, `q` matches part of the name."""
    query = select_where(
        Slice,
        service.slice_query(),
        state=state,
        priority=priority,
        scheme=scheme,
        vlan_id=vlan_id,
    )
    if prefix is not None:
        query = query.where(Slice.ipv4_prefixes.contains([prefix]))
    if link_id is not None:
        query = query.where(
            exists().where(SliceLink.slice_id == Slice.id, SliceLink.link_id == link_id)
        )
    if switch_id is not None:
        query = query.where(
            exists().where(SliceSwitch.slice_id == Slice.id, SliceSwitch.switch_id == switch_id)
        )
    if q:
        query = query.where(Slice.name.icontains(q, autoescape=True))
    rows, count = paginate(session, query, page)
    return SlicesPublic(data=[SlicePublic.model_validate(row) for row in rows], count=count)


@router.post("", status_code=status.HTTP_201_CREATED)
def create_slice(
    session: SessionDep, _: OperatorUser, context: ChangeContextDep, body: SliceCreate
) -> SlicePublic:
    """Create a slice (state `pending`) after admission on every link it crosses: 409
    admission-rejected, with the violations and the fixes, when it does not fit."""
    return SlicePublic.model_validate(service.create_slice(session, context, body))


@router.get("/{slice_id}")
def read_slice(session: SessionDep, _: ViewerUser, slice_id: RowId) -> SlicePublic:
    return SlicePublic.model_validate(service.get_slice(session, slice_id))


@router.patch("/{slice_id}")
def update_slice(
    session: SessionDep,
    _: OperatorUser,
    context: ChangeContextDep,
    slice_id: RowId,
    body: SliceUpdate,
) -> SlicePublic:
    """Change a slice (back to `pending`); a change of rate, burst, target, priority, packet
    size or links runs admission again."""
    return SlicePublic.model_validate(service.update_slice(session, context, slice_id, body))


@router.delete("/{slice_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_slice(
    session: SessionDep, _: OperatorUser, context: ChangeContextDep, slice_id: RowId
) -> None:
    service.delete_slice(session, context, slice_id)
