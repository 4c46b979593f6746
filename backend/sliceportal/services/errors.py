"""What a service can refuse, independent of how the caller reports it (HTTP, CLI)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class ServiceError(Exception):
    """Base of the refusals below; `field` names the offending input field, if one is."""

    def __init__(self, detail: str, *, field: str | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.field = field


class NotFoundError(ServiceError):
    """The addressed object does not exist."""


class InvalidFieldError(ServiceError):
    """Input that is well-formed but not acceptable (unknown link id, threshold above burst);
    `also` names the other fields at fault when the fields disagree with each other."""

    def __init__(
        self, detail: str, *, field: str | None = None, also: tuple[str, ...] = ()
    ) -> None:
        super().__init__(detail, field=field)
        self.also = also


class ConflictError(ServiceError):
    """The change collides with stored state (a name or DP_SID taken, an object still in use)."""


class AdmissionRejectedError(ServiceError):
    """The slices would not keep their delay bounds; `links` tells why and what would fix it."""

    def __init__(self, detail: str, links: list[dict[str, Any]]) -> None:
        super().__init__(detail)
        self.links = links


class NoPathError(ServiceError):
    """No path admits the slice; `refused` lists each candidate checked (`path`, `reason`),
    `truncated` says more existed than were checked."""

    def __init__(self, detail: str, refused: list[dict[str, Any]], *, truncated: bool) -> None:
        super().__init__(detail)
        self.refused = refused
        self.truncated = truncated


@dataclass(frozen=True)
class RowError:
    """One offending row of an import: its number (1 is the first slice), the field at fault
    (`rate_bps`, `codel.target_s`; None when the row as a whole is) and why."""

    row: int
    field: str | None
    message: str


class RowsRejectedError(ServiceError):
    """An import refused as a whole, with every offending row found. `invalid`: input that is
    not acceptable (422) rather than a conflict with stored state (409); `links`: admission's
    violations and fixes, when admission refused the batch."""

    def __init__(
        self,
        detail: str,
        rows: list[RowError],
        *,
        invalid: bool,
        links: list[dict[str, Any]] | None = None,
    ) -> None:
        super().__init__(detail)
        self.rows = rows
        self.invalid = invalid
        self.links = links or []
