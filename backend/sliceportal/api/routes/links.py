from __future__ import annotations

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
from sliceportal.db.models import Link
from sliceportal.domain import Model
from sliceportal.schemas.analysis import LinkAnalysis
from sliceportal.schemas.common import FilterText, RowId
from sliceportal.schemas.links import LinkCreate, LinkPublic, LinksPublic, LinkUpdate
from sliceportal.services import crud
from sliceportal.services import links as service

router = APIRouter(prefix="/links", tags=["links"])


@router.get("")
def read_links(
    session: SessionDep,
    _: ViewerUser,
    page: PageDep,
    switch_id: RowId | None = None,
    model: Model | None = None,
    q: FilterText | None = None,
) -> LinksPublic:
    """Links; `q` matches part of the name."""
    query = select_where(Link, switch_id=switch_id, model=model)
    if q:
        query = query.where(Link.name.icontains(q, autoescape=True))
    rows, count = paginate(session, query, page)
    return LinksPublic(data=[LinkPublic.model_validate(row) for row in rows], count=count)


@router.post("", status_code=status.HTTP_201_CREATED)
def create_link(
    session: SessionDep,
    _: OperatorUser,
    context: ChangeContextDep,
    settings: SettingsDep,
    body: LinkCreate,
) -> LinkPublic:
    return LinkPublic.model_validate(service.create_link(session, context, body, settings))


@router.get("/{link_id}")
def read_link(session: SessionDep, _: ViewerUser, link_id: RowId) -> LinkPublic:
    return LinkPublic.model_validate(crud.get(session, Link, link_id))


@router.patch("/{link_id}")
def update_link(
    session: SessionDep,
    _: OperatorUser,
    context: ChangeContextDep,
    link_id: RowId,
    body: LinkUpdate,
) -> LinkPublic:
    """A change of capacity, model, queue count, MTU or frame overhead must keep every slice on
    the link within its delay target: 409 admission-rejected otherwise."""
    return LinkPublic.model_validate(service.update_link(session, context, link_id, body))


@router.delete("/{link_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_link(
    session: SessionDep, _: OperatorUser, context: ChangeContextDep, link_id: RowId
) -> None:
    """Delete a link no slice crosses (409 otherwise)."""
    service.delete_link(session, context, link_id)


@router.get("/{link_id}/analysis")
def read_link_analysis(
    session: SessionDep, _: ViewerUser, link_id: RowId, model: Model | None = None
) -> LinkAnalysis:
    """The worst-case delay of every slice stored on the link (the CLI's `analyze` document),
    under the link's model or, to compare, under `model`."""
    return LinkAnalysis.model_validate(service.link_analysis(session, link_id, model).to_dict())
