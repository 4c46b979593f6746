"""Admission as the services run it: the check of `domain.admission` on what
`db.queries.links` read under the links' locks, its refusals as service errors.

Callers hold the link rows locked (FOR UPDATE) while they check and write, so two requests can
never both admit slices that only fit one at a time. A slice with an end-to-end target is
checked on its whole path, so its bound depends on links the change does not touch: those are
locked too, or two changes on two of its links could each fit alone and together miss the
target.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import TypeVar

from sqlalchemy.orm import Session

from sliceportal.domain.admission import (
    LinkLoad,
    LinkParams,
    Loads,
    PathSlice,
    PathsMoved,
    breaches,
    explain,
    too_many_levels,
)
from sliceportal.services.errors import AdmissionRejectedError, ConflictError

T = TypeVar("T")
RETRIES = 3
"""A change whose lock set grew under it (`PathsMoved`) is retried this many times."""


def retrying(session: Session, attempt: Callable[[], T]) -> T:
    """`attempt()`, run again in a fresh transaction while it raises PathsMoved.

    Every attempt takes its locks from nothing in ascending order, so retrying cannot
    deadlock; a path keeps moving only under a stream of concurrent re-routes, and then the
    last attempt's PathsMoved is a 409 conflict.
    """
    for _ in range(RETRIES):
        try:
            return attempt()
        except PathsMoved:
            session.rollback()
    try:
        return attempt()
    except PathsMoved:
        raise ConflictError(
            "a concurrent change moved a slice with an end-to-end target; try again"
        ) from None


def check_queues(link: LinkParams, load: LinkLoad, field: str) -> None:
    """409 when the link's slices would use more priority levels than it has slice queues."""
    found = too_many_levels(link, load)
    if found is not None:
        raise ConflictError(found.message, field=field)


def admit(
    session: Session,
    subject: str,
    params: Mapping[int, LinkParams],
    loads: Loads,
    *,
    changed: Collection[int],
    candidate: PathSlice | None = None,
) -> None:
    """Raise AdmissionRejectedError unless the change passes `domain.admission.breaches`.

    On a rejection the transaction is rolled back (releasing the locks) before the fixes are
    searched, since priority planning may take up to its budget.
    """
    found = breaches(params, loads, changed=changed, candidate=candidate)
    if found is None:
        return
    session.rollback()
    rejection = explain(found, subject)
    raise AdmissionRejectedError(rejection.message, rejection.to_dicts())
