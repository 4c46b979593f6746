"""Cables: the connections between switches, each direction of which is a link."""

from __future__ import annotations

import datetime as dt
from typing import Annotated

from pydantic import Field, Strict

from sliceportal.domain.spec import MAX_TIME_S
from sliceportal.schemas.common import (
    BodyId,
    Description,
    InputModel,
    Name,
    Page,
    PatchModel,
    PublicModel,
)
from sliceportal.schemas.slices import PathProposalPublic

Propagation = Annotated[
    float,
    Strict(),
    Field(
        ge=0,
        le=MAX_TIME_S,
        description="seconds a bit takes from one end to the other (the same both ways); the "
        "end-to-end bound of a path adds it once per hop",
    ),
]
END_LINK = (
    "the link (egress port) of one end's switch toward the other end: it must face no hosts and "
    "be no other cable's end; the two ends are on two switches"
)


class CableCreate(InputModel):
    name: Name
    description: Description = ""
    a_link_id: BodyId = Field(description=END_LINK)
    b_link_id: BodyId = Field(description=END_LINK)
    propagation_s: Propagation = 0.0


class CableUpdate(PatchModel):
    """The ends of a cable cannot change: delete it and join the ports anew instead."""

    name: Name | None = None
    description: Description | None = None
    propagation_s: Propagation | None = None


class CablePublic(PublicModel):
    id: int
    name: str
    description: str
    propagation_s: float
    a_link_id: int
    a_switch_id: int
    b_link_id: int
    b_switch_id: int
    created_at: dt.datetime
    updated_at: dt.datetime


CablesPublic = Page[CablePublic]


class AffectedSlicePublic(PublicModel):
    """A slice whose traffic crosses a cable (it leaves a switch by one of its ends), and a
    path for it that avoids the cable."""

    slice_id: int
    name: str
    path: list[int] | None = Field(description="its path now (null: an unordered set)")
    proposal: PathProposalPublic | None = Field(
        description="the shortest admissible path avoiding the cable, from the same ingress "
        "switch out of the same egress link; null when there is none (`reason`)"
    )
    reason: str | None = Field(description="why there is no proposal")


AffectedSlicesPublic = Page[AffectedSlicePublic]
