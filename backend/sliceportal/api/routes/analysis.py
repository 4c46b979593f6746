"""The analytics on a document of the CLI's JSON form, no database involved.

Bodies are validated by `sliceportal.domain.parse_link_input`, the CLI's own validator, so API
and CLI accept exactly the same documents; its errors name the field (`body.slices[2].rate_bps`).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query
from pydantic import WithJsonSchema

from sliceportal.api.deps import SettingsDep, ViewerUser
from sliceportal.domain import (
    Model,
    analyze,
    capacity_grid,
    delay_curves,
    min_capacity,
    parse_link_input,
    plan_priorities,
)
from sliceportal.domain.curves import MAX_POINTS
from sliceportal.domain.spec import MAX_RATE_BPS, MIN_RATE_BPS, SLICE_LEVELS
from sliceportal.schemas.analysis import LinkAnalysis, LinkDelayCurves, MinCapacity, PriorityPlan

router = APIRouter(prefix="/analysis", tags=["analysis"])

LINK_EXAMPLE = {
    "capacity_bps": 330e6,
    "slices": [
        {"name": "DC", "rate_bps": 48e6, "priority": 7, "burst_limit_s": 0.02},
        {"name": "Enterprise", "rate_bps": 12e6, "priority": 7, "burst_limit_s": 0.01},
        {"name": "Peering", "rate_bps": 240e6, "priority": 6, "burst_limit_s": 0.03},
    ],
}
EXAMPLES = {"case-c": {"summary": "The paper's case C", "value": LINK_EXAMPLE}}
# Validated by parse_link_input, documented by schemas.analysis (api.openapi adds the
# documents to the components): with a capacity, or slices on a link of any capacity.
LinkDocument = Annotated[
    dict[str, Any],
    WithJsonSchema({"$ref": "#/components/schemas/LinkDocument"}),
    Body(openapi_examples=EXAMPLES),
]
SlicesDocument = Annotated[
    dict[str, Any],
    WithJsonSchema({"$ref": "#/components/schemas/SlicesDocument"}),
    Body(openapi_examples=EXAMPLES),
]
ModelQuery = Annotated[Model | None, Query(description="default: the server's default_model")]


def _model(model: Model | None, settings: SettingsDep) -> Model:
    return model or Model(settings.default_model)


@router.post("/bounds")
def analyze_bounds(
    _: ViewerUser, settings: SettingsDep, body: LinkDocument, model: ModelQuery = None
) -> LinkAnalysis:
    """Every slice's worst-case delay and whether the link is admissible."""
    link = parse_link_input(body, require_capacity=True)
    assert link.capacity_bps is not None
    analysis = analyze(link.slices, link.capacity_bps, _model(model, settings), link.framing)
    return LinkAnalysis.model_validate(analysis.to_dict())


@router.post("/min-capacity")
def analyze_min_capacity(
    _: ViewerUser, settings: SettingsDep, body: SlicesDocument, model: ModelQuery = None
) -> MinCapacity:
    """The least capacity that keeps every slice within its target (null: none does)."""
    link = parse_link_input(body, require_capacity=False, require_slices=True)
    chosen = _model(model, settings)
    return MinCapacity(
        model=chosen, min_capacity_bps=min_capacity(link.slices, chosen, link.framing)
    )


@router.post("/priority-plan")
def analyze_priority_plan(
    _: ViewerUser,
    settings: SettingsDep,
    body: LinkDocument,
    model: ModelQuery = None,
    levels: Annotated[
        int,
        Query(
            ge=1,
            le=SLICE_LEVELS,
            description="priority levels the slices may use: a link's queues but best effort's",
        ),
    ] = SLICE_LEVELS,
) -> PriorityPlan:
    """Priorities (from 7 down, at most `levels` of them) meeting every target, or why none."""
    link = parse_link_input(body, require_capacity=True)
    assert link.capacity_bps is not None
    chosen = _model(model, settings)
    plan = plan_priorities(link.slices, link.capacity_bps, levels, chosen, framing=link.framing)
    return PriorityPlan.model_validate({"model": chosen, **plan.to_dict()})


@router.post("/curves")
def analyze_curves(
    _: ViewerUser,
    settings: SettingsDep,
    body: SlicesDocument,
    model: ModelQuery = None,
    start_bps: Annotated[
        float | None,
        Query(ge=MIN_RATE_BPS, le=MAX_RATE_BPS, description="default: total rate"),
    ] = None,
    stop_bps: Annotated[
        float | None,
        Query(ge=MIN_RATE_BPS, le=MAX_RATE_BPS, description="default: 4 × start"),
    ] = None,
    points: Annotated[int, Query(ge=1, le=MAX_POINTS)] = 50,
) -> LinkDelayCurves:
    """Every slice's worst-case delay at `points` capacities from `start_bps` to `stop_bps`."""
    link = parse_link_input(body, require_capacity=False, require_slices=True)
    chosen = _model(model, settings)
    start = start_bps or sum(spec.rate_bps for spec in link.slices)
    grid = capacity_grid(start, stop_bps or 4 * start, points)
    curves = delay_curves(link.slices, grid, chosen, link.framing)
    return LinkDelayCurves.model_validate({"model": chosen, **curves.to_dict()})
