"""Why admission refuses a change, and what would make it fit: typed, one class per reason.

The API answers them as a 409 `admission-rejected` problem (`schemas.problems` describes the
documents `to_dict` gives); the CLI prints the same `message`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from sliceportal.domain.admission.endtoend import PathBound
from sliceportal.domain.formatting import format_rate


@dataclass(frozen=True, slots=True)
class HopViolation:
    """A slice outside its per-hop target on one link."""

    link_id: int
    link: str
    slice: str
    bound_s: float | None
    """``None`` when unbounded."""
    target_s: float
    excess_s: float | None
    reason: str
    kind: Literal["per-hop"] = "per-hop"

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "link_id": self.link_id,
            "link": self.link,
            "slice": self.slice,
            "bound_s": self.bound_s,
            "target_s": self.target_s,
            "excess_s": self.excess_s,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class PathViolation:
    """A slice outside its end-to-end target; `link` is its worst hop."""

    link_id: int
    link: str
    slice_id: int
    slice: str
    path: PathBound
    kind: Literal["end-to-end"] = "end-to-end"

    def to_dict(self) -> dict[str, Any]:
        slack = self.path.slack_s
        return {
            "kind": self.kind,
            "link_id": self.link_id,
            "link": self.link,
            "slice_id": self.slice_id,
            "slice": self.slice,
            "bound_s": self.path.total_s,
            "target_s": self.path.target_s,
            "excess_s": None if slack is None else -slack,
            "reason": self.path.reason(),
            "path": self.path.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class CapacityFix:
    """Raise the link's capacity to at least `capacity_bps` (for one slice's end-to-end
    target when `slice` is given, else for every per-hop target on the link)."""

    link_id: int
    link: str
    capacity_bps: float
    slice: str | None = None
    kind: Literal["capacity"] = "capacity"

    @property
    def detail(self) -> str:
        rate = format_rate(self.capacity_bps)
        text = f"raise the capacity of link {self.link!r} to at least {rate}"
        if self.slice is not None:
            text += f" so that slice {self.slice!r} meets its end-to-end target"
        return text

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"link_id": self.link_id, "kind": self.kind}
        if self.slice is not None:
            doc["slice"] = self.slice
        return doc | {"capacity_bps": self.capacity_bps, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class PriorityPlanFix:
    """Give the slices on the link these priorities (by slice name)."""

    link_id: int
    link: str
    priorities: Mapping[str, int]
    kind: Literal["priority-plan"] = "priority-plan"

    def to_dict(self) -> dict[str, Any]:
        return {
            "link_id": self.link_id,
            "kind": self.kind,
            "priorities": dict(self.priorities),
            "detail": f"give the slices on link {self.link!r} these priorities",
        }


@dataclass(frozen=True, slots=True)
class LinkRejection:
    """The violations found on (or through) one link, and the fixes offered there."""

    link_id: int
    violations: tuple[HopViolation | PathViolation, ...]
    fixes: tuple[CapacityFix | PriorityPlanFix, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "link_id": self.link_id,
            "violations": [violation.to_dict() for violation in self.violations],
            "fixes": [fix.to_dict() for fix in self.fixes],
        }


@dataclass(frozen=True, slots=True)
class Rejection:
    """A refused change: one sentence, and the links it breaks."""

    message: str
    links: tuple[LinkRejection, ...] = field(default=())

    def to_dicts(self) -> list[dict[str, Any]]:
        return [link.to_dict() for link in self.links]


@dataclass(frozen=True, slots=True)
class TooManyLevels:
    """A link with n queues carries at most n - 1 distinct slice priority levels: best effort
    (priority 0) keeps a queue of its own."""

    link: str
    queue_count: int
    levels: tuple[int, ...]
    """The levels the slices would use, highest first."""

    @property
    def message(self) -> str:
        return (
            f"link {self.link!r} has {self.queue_count} queues, one of them best effort's, but "
            f"its slices would use {len(self.levels)} priority levels "
            f"({', '.join(map(str, self.levels))})"
        )
