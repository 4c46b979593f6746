"""A slice's telemetry: its history over a time range, and its live stream."""

from __future__ import annotations

import datetime as dt
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse
from sqlalchemy import exists, select
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from sliceportal.api.deps import SessionDep, SettingsDep, ViewerUser
from sliceportal.api.problems import Problem
from sliceportal.api.routes.stream import SSE_RESPONSE, StreamUser, event_stream
from sliceportal.core.channels import Channels
from sliceportal.db import samples as store
from sliceportal.db.models import Slice
from sliceportal.schemas.common import RowId, Timestamp
from sliceportal.schemas.telemetry import TelemetryPublic, TelemetrySample
from sliceportal.services.errors import NotFoundError
from sliceportal.telemetry.sse import frame

router = APIRouter(prefix="/slices", tags=["telemetry"])

DEFAULT_RANGE = dt.timedelta(hours=1)


def _require_slice(session: Session, slice_id: int) -> None:
    if not session.scalar(select(exists().where(Slice.id == slice_id))):
        raise NotFoundError(f"slice {slice_id} does not exist")


def _require_slice_briefly(request: Request, slice_id: int) -> None:
    """For a stream: a session of its own, closed before the stream starts."""
    with request.app.state.sessionmaker() as session:
        _require_slice(session, slice_id)


def _utc(moment: dt.datetime) -> dt.datetime:
    """A time without a zone is UTC (the API answers in UTC)."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=dt.UTC)


@router.get("/{slice_id}/telemetry")
def read_slice_telemetry(
    session: SessionDep,
    _: ViewerUser,
    slice_id: RowId,
    start: Annotated[Timestamp | None, Query(description="exclusive; default end - 1 h")] = None,
    end: Annotated[Timestamp | None, Query(description="inclusive; default now")] = None,
    resolution: Annotated[
        int | None,
        Query(ge=1, le=86400, description="seconds per point; default: at most 1,000 points"),
    ] = None,
) -> TelemetryPublic:
    """The slice's samples with `start < t <= end`, per switch, oldest first. Resolution 1
    gives the stored rows (raw samples, one-minute rows past the downsampling age); a coarser
    one sums them into buckets, so rates and percentiles stay exact."""
    _require_slice(session, slice_id)
    end = _utc(end) if end is not None else dt.datetime.now(dt.UTC)
    start = _utc(start) if start is not None else end - DEFAULT_RANGE
    if start >= end:
        raise Problem(422, "validation-error", "start must be before end", field="query.start")
    resolution_s = resolution or store.auto_resolution(start, end)
    if (end - start).total_seconds() / resolution_s > store.MAX_POINTS:
        raise Problem(
            422,
            "validation-error",
            f"more than {store.MAX_POINTS} points: shorten the range or raise the resolution",
            field="query.resolution",
        )
    records = store.history(session, slice_id, start, end, resolution_s)
    data = [TelemetrySample.model_validate(d) for d in store.sample_documents(records)]
    return TelemetryPublic(
        data=data, count=len(data), start=start, end=end, resolution_s=resolution_s
    )


@router.get(
    "/{slice_id}/telemetry/stream", response_class=StreamingResponse, responses=SSE_RESPONSE
)
async def stream_slice_telemetry(
    request: Request, user: StreamUser, settings: SettingsDep, slice_id: RowId
) -> StreamingResponse:
    """The slice's samples as they are taken (event `sample`, one JSON sample each, about
    one per poll period and switch), with keep-alive comments."""
    await run_in_threadpool(_require_slice_briefly, request, slice_id)
    channel = Channels.of(settings.database_url).slice(slice_id)
    return event_stream(request, user, [channel], lambda _, data: frame("sample", data))
