from __future__ import annotations

from ipaddress import IPv4Network
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request, Response, status
from sqlalchemy import exists

from sliceportal.api.deps import (
    ChangeContextDep,
    OperatorUser,
    PageDep,
    ReadPoolDep,
    SessionDep,
    ViewerUser,
    paginate,
    select_where,
)
from sliceportal.api.problems import Problem
from sliceportal.db.models import Slice, SliceLink, SliceSwitch
from sliceportal.schemas import slicefiles
from sliceportal.schemas.choices import QueueScheme, SliceState
from sliceportal.schemas.common import FilterText, RowId
from sliceportal.schemas.slicefiles import MEDIA_TYPES, FileError, FileFormat
from sliceportal.schemas.slices import (
    PathProposalPublic,
    PathProposalRequest,
    Priority,
    SliceCreate,
    SlicePublic,
    SlicesImported,
    SlicesPublic,
    SliceUpdate,
    VlanId,
)
from sliceportal.services import bulk, paths
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


_FILES = {
    "text/csv": {"schema": {"type": "string"}},
    "application/yaml": {
        "schema": {"type": "array", "items": {"$ref": "#/components/schemas/SliceCreate"}}
    },
}
"""The two formats: CSV is text; YAML is a list of what `POST /slices` takes."""
IMPORT_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "description": "Slices as CSV (a header row, then one slice per row) or as YAML (a "
        "list of slices); docs/api.md, 'Import and export'.",
        "content": _FILES,
    }
}
EXPORT_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "content": _FILES,
        "description": "Every slice, as a file the import takes back.",
    }
}


async def _upload(request: Request) -> tuple[FileFormat, bytes]:
    """The import's body and its format (Content-Type), read in the event loop."""
    content_type = request.headers.get("content-type", "")
    file_format = slicefiles.media_format(content_type)
    if file_format is None:
        raise Problem(
            415,
            "unsupported-media-type",
            f"an import is {' or '.join(MEDIA_TYPES.values())}, not {content_type or 'untyped'}",
            title="Unsupported media type",
        )
    return file_format, await request.body()


UploadDep = Annotated[tuple[FileFormat, bytes], Depends(_upload)]


@router.post("/import", status_code=status.HTTP_201_CREATED, openapi_extra=IMPORT_BODY)
def import_slices(
    session: SessionDep, _: OperatorUser, context: ChangeContextDep, upload: UploadDep
) -> SlicesImported:
    """Create every slice of a CSV or YAML file in one transaction, or none: each row is
    validated as `POST /slices` validates a body, and admission runs once per link with all
    the file's slices on it. A refusal lists every offending row in `errors` (`row`,
    `field`, `message`): 422 invalid rows, 409 conflicts or admission-rejected."""
    file_format, data = upload
    try:
        documents = slicefiles.parse(data, file_format)
    except FileError as exc:
        error: dict[str, Any] = {"field": "body", "message": exc.message}
        if exc.row is not None:
            error = {"row": exc.row, "field": None, "message": exc.message}
        raise Problem(
            422,
            "validation-error",
            exc.message,
            title="Invalid request",
            field="body",
            errors=[error],
        ) from None
    ids = bulk.import_slices(session, context, documents)
    return SlicesImported(count=len(ids), ids=ids)


@router.get("/export", response_class=Response, responses=EXPORT_RESPONSES)
def export_slices(
    session: SessionDep,
    _: ViewerUser,
    file_format: Annotated[
        FileFormat, Query(alias="format", description="csv (the default) or yaml")
    ] = FileFormat.CSV,
) -> Response:
    """Every slice, by id, as CSV or YAML that `POST /slices/import` takes back."""
    rows = session.scalars(service.slice_query().order_by(Slice.id))
    documents = (slicefiles.export_document(SlicePublic.model_validate(row)) for row in rows)
    return Response(
        slicefiles.render(documents, file_format),
        media_type=MEDIA_TYPES[file_format],
        headers={"Content-Disposition": f'attachment; filename="slices.{file_format.value}"'},
    )


@router.post("/propose-path")
def propose_path(
    session: SessionDep, _: ViewerUser, body: PathProposalRequest
) -> PathProposalPublic:
    """The shortest path from `ingress_switch_id` out of `egress_link_id` on which a slice of
    these parameters is admitted (fewest hops, then the lowest end-to-end bound): every link
    keeps its slices' bounds and every end-to-end target crossing them is met, propagation
    included. 409 `no-path` with each candidate's refusal when there is none. Advice: creating
    the slice with this `path` decides again under locks."""
    return PathProposalPublic.model_validate(paths.propose(session, body))


@router.get("/{slice_id}")
async def read_slice(pool: ReadPoolDep, _: ViewerUser, slice_id: RowId) -> SlicePublic:
    """One slice, with its SLA, links and DP_SIDs."""
    # Answered on the event loop in one statement (`db.aio`): dashboards and scripts poll it.
    return SlicePublic.model_validate(await service.slice_document(pool, slice_id))


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
