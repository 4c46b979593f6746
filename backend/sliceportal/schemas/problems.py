"""The shape of every error the API answers (`api.problems`), for the OpenAPI document.

TypedDicts, not models: a member that is absent from an answer is absent, never null, and
`NotRequired` says exactly that to client generators. `extra="forbid"` makes the schema
closed, so a test that validates the API's answers against it catches an undocumented member.
"""

from __future__ import annotations

from typing import Annotated, Literal, NotRequired

from pydantic import ConfigDict, Field, TypeAdapter, with_config
from typing_extensions import TypedDict

_CLOSED = ConfigDict(extra="forbid", use_attribute_docstrings=True)


@with_config(_CLOSED)
class ProblemFieldError(TypedDict):
    """One input at fault: its location (`body.rate_bps`, `query.limit`; in an import, the
    field of row `row`: `rate_bps`) and why."""

    field: str | None
    message: str
    row: NotRequired[int]
    """The row of an import at fault (1: the first slice), with `field` inside that row."""


@with_config(_CLOSED)
class ProblemHop(TypedDict):
    link_id: int
    link: str
    bound_s: float | None
    """`null` when unbounded."""


@with_config(_CLOSED)
class ProblemPath(TypedDict):
    """A slice's end-to-end bound: the sum of its per-hop bounds."""

    hops: list[ProblemHop]
    total_s: float | None
    target_s: float | None
    worst_hop_link_id: int | None
    meets_target: bool
    slack_s: float | None


@with_config(_CLOSED)
class ProblemViolation(TypedDict):
    """One slice outside its bound (409 `admission-rejected`): on one link (`per-hop`), or
    over its whole path (`end-to-end`, with `slice_id` and `path`)."""

    kind: Literal["per-hop", "end-to-end"]
    link_id: int
    link: str
    slice: str
    bound_s: float | None
    """`null` when unbounded."""
    target_s: float
    excess_s: float | None
    """Bound minus target; `null` when unbounded."""
    reason: str
    slice_id: NotRequired[int]
    path: NotRequired[ProblemPath]


@with_config(_CLOSED)
class ProblemCapacityFix(TypedDict):
    """Raise the link's capacity to at least `capacity_bps`."""

    kind: Literal["capacity"]
    link_id: int
    capacity_bps: float
    detail: str
    slice: NotRequired[str]
    """The slice with an end-to-end target the capacity is for."""


@with_config(_CLOSED)
class ProblemPriorityPlanFix(TypedDict):
    """Give the slices on the link these priorities (by slice name)."""

    kind: Literal["priority-plan"]
    link_id: int
    priorities: dict[str, int]
    detail: str


@with_config(_CLOSED)
class ProblemRefusedPath(TypedDict):
    """One candidate path a proposal checked (409 `no-path`), and why it does not admit the
    slice."""

    path: list[int]
    reason: str


@with_config(_CLOSED)
class ProblemDetails(TypedDict):
    """RFC 9457 problem details. `type` is a URI under https://sliceportal.dev/problems/
    whose last part names the kind (`validation-error`, `admission-rejected`, `no-path`, `conflict`,
    `not-found`, `unauthorized`, `forbidden`, `database-unavailable`, `server-busy`, …)."""

    type: str
    title: str
    status: int
    detail: str
    instance: str
    field: NotRequired[str]
    """The input at fault, when one is (`body.rate_bps`)."""
    errors: NotRequired[list[ProblemFieldError]]
    """Every input at fault (422)."""
    constraint: NotRequired[str]
    """The database constraint a change broke (409, 422)."""
    violations: NotRequired[list[ProblemViolation]]
    fixes: NotRequired[
        list[Annotated[ProblemCapacityFix | ProblemPriorityPlanFix, Field(discriminator="kind")]]
    ]
    """What would make the change fit: a capacity, a priority plan (409 admission-rejected)."""
    request_id: NotRequired[str]
    """The request's id, to find it in the log (500)."""
    refused: NotRequired[list[ProblemRefusedPath]]
    """Each path checked, fewest hops first (409 `no-path`; empty: no route at all)."""
    truncated: NotRequired[bool]
    """More paths existed than were checked (409 `no-path`)."""


PROBLEM_DETAILS: TypeAdapter[ProblemDetails] = TypeAdapter(ProblemDetails)
