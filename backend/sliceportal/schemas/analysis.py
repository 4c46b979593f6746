"""The documents of the analytics: `/api/v1/analysis/*` and `/api/v1/links/{id}/analysis`.

The request body is the CLI's JSON form. It is validated by `sliceportal.domain.parse_link_input`
(so the API and the CLI accept exactly the same documents and its errors name the field): the
models `LinkDocument`, `SlicesDocument` and `SliceDocument` only describe it in the OpenAPI
document, with the limits of `domain.spec` that it checks.

The answers are what `sliceportal.domain` produces (`LinkAnalysis.to_dict()`,
`PriorityPlan.to_dict()`, `DelayCurves.to_dict()`), in the same order and with the same
values: the models document them, they change nothing. They are closed (`extra="forbid"`), so a
member the domain adds without documenting it fails the API tests instead of vanishing.

Delays are in seconds, rates in bit/s, bursts in bytes; `null` in a delay means unbounded.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from sliceportal.domain import Model
from sliceportal.domain.spec import (
    LOWEST_SLICE_PRIORITY,
    MAX_BURST_BYTES,
    MAX_FRAME_OVERHEAD_BYTES,
    MAX_NAME_LENGTH,
    MAX_PACKET_BYTES,
    MAX_RATE_BPS,
    MAX_TIME_S,
    MIN_RATE_BPS,
    TOP_PRIORITY,
)

_CLOSED = ConfigDict(extra="forbid", use_attribute_docstrings=True)


Rate = Annotated[float, Field(ge=MIN_RATE_BPS, le=MAX_RATE_BPS)]
Seconds = Annotated[float, Field(ge=0, le=MAX_TIME_S)]
Bytes = Annotated[int, Field(ge=1, le=MAX_PACKET_BYTES)]


class SliceDocument(BaseModel):
    """One slice as the analytics sees it. `null` counts as absent."""

    model_config = _CLOSED

    name: Annotated[str, Field(min_length=1, max_length=MAX_NAME_LENGTH, pattern=r"\S")]
    rate_bps: Rate
    """The rate limit L."""
    priority: Annotated[int, Field(ge=LOWEST_SLICE_PRIORITY, le=TOP_PRIORITY)]
    """1 to 7; 7 is the highest (0 is best effort's and never a slice's)."""
    burst_limit_s: Seconds | None = None
    """Seconds at the rate limit: the burst is rate × burst_limit_s / 8 bytes. Required unless
    `burst_bytes` is given (both only when they agree)."""
    burst_bytes: Annotated[float, Field(ge=0, le=MAX_BURST_BYTES)] | None = None
    delay_target_s: Seconds | None = None
    """Default: the burst limit (required when only `burst_bytes` is given)."""
    max_packet_bytes: Bytes | None = None
    """Default: the largest frame of the link's MTU."""


class _LinkShape(BaseModel):
    model_config = _CLOSED

    mtu_bytes: Bytes | None = None
    """Default 1500."""
    frame_overhead_bytes: Annotated[int, Field(ge=0, le=MAX_FRAME_OVERHEAD_BYTES)] | None = None
    """0 (default) when capacity_bps counts frame bytes as the data plane does, 24 when it is
    the line rate."""


class LinkDocument(_LinkShape):
    """A link and its slices, the CLI's JSON form (`bounds`, `priority-plan`)."""

    capacity_bps: Rate
    slices: list[SliceDocument]


class SlicesDocument(_LinkShape):
    """Slices on a link of any capacity, the CLI's JSON form (`min-capacity`, `curves`)."""

    capacity_bps: Rate | None = None
    """Ignored (when it is valid)."""
    slices: Annotated[list[SliceDocument], Field(min_length=1)]


class SliceBound(BaseModel):
    """One slice's worst-case delay on the link."""

    model_config = _CLOSED

    name: str
    priority: int
    burst_bytes: float
    residual_capacity_bps: float
    """C − the rate limits of every strictly higher priority."""
    worst_case_delay_s: float | None
    """`null`: unbounded."""
    delay_target_s: float
    meets_target: bool
    slack_s: float | None
    """Target − bound; `null` when unbounded."""


class LinkAnalysis(BaseModel):
    """Every slice's worst-case delay on a link (the document `sliceportal analyze` prints)."""

    model_config = _CLOSED

    model: Model
    capacity_bps: float
    admissible: bool
    """The rate limits fit the capacity and every slice meets its target."""
    total_rate_bps: float
    slices: list[SliceBound]


class MinCapacity(BaseModel):
    model_config = _CLOSED

    model: Model
    min_capacity_bps: float | None
    """The least capacity that keeps every slice within its target; `null`: none does."""


class PriorityPlan(BaseModel):
    """Priorities meeting every target, or why there are none."""

    model_config = _CLOSED

    model: Model
    feasible: bool
    priorities: dict[str, int]
    """The new priority of each slice, by name (empty when no plan was found)."""
    exhaustive: bool
    """True when the answer is final: a plan, or a proof that none exists."""
    reason: str


class LinkDelayCurves(BaseModel):
    """Each slice's worst-case delay at each of a range of capacities."""

    model_config = _CLOSED

    model: Model
    capacities_bps: list[float]
    delays_s: dict[str, list[float | None]] = Field(
        description="Per slice name, its bound at each capacity (`null`: unbounded)."
    )
