from __future__ import annotations

import datetime as dt
from typing import Annotated

from pydantic import Field

from sliceportal.api.schemas.common import (
    Description,
    InputModel,
    Name,
    Page,
    PatchModel,
    PublicModel,
    RowId,
)
from sliceportal.db.models import MAX_PORT, MAX_QUEUES
from sliceportal.domain import Model

Port = Annotated[int, Field(ge=0, le=MAX_PORT)]
Capacity = Annotated[float, Field(gt=0, description="bit/s")]
QueueCount = Annotated[int, Field(ge=1, le=MAX_QUEUES)]
Mtu = Annotated[int, Field(ge=64, le=65535)]


class LinkCreate(InputModel):
    switch_id: RowId
    name: Name
    description: Description = ""
    port: Port
    capacity_bps: Capacity
    queue_count: QueueCount = MAX_QUEUES
    model: Model | None = Field(default=None, description="default: the server's default_model")
    mtu_bytes: Mtu | None = Field(default=None, description="default: the server's MTU setting")


class LinkUpdate(PatchModel):
    """The switch of a link cannot change: delete and recreate it instead."""

    name: Name | None = None
    description: Description | None = None
    port: Port | None = None
    capacity_bps: Capacity | None = None
    queue_count: QueueCount | None = None
    model: Model | None = None
    mtu_bytes: Mtu | None = None


class LinkPublic(PublicModel):
    id: int
    switch_id: int
    name: str
    description: str
    port: int
    capacity_bps: float
    queue_count: int
    model: Model
    mtu_bytes: int
    created_at: dt.datetime
    updated_at: dt.datetime


LinksPublic = Page[LinkPublic]
