"""Who a request acts as, and a short memory of credentials already checked.

Checking a credential costs a database round trip and a trip to the thread pool; a client
sends the same one on every request. Each API process therefore remembers, for at most
`CREDENTIAL_MEMORY_S`, the principal a credential was found to stand for. The database stays
the authority: a token revoked, a user deactivated or given another role by any process is
refused or re-ranked by every process within that time, and at once by the process that made
the change (it forgets everything it remembers: `PrincipalCache.forget_all`).

The cache is read and written on the event loop and emptied from the thread pool; each of those
is a single dict operation, atomic under the GIL, so it needs no lock.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from sliceportal.schemas.choices import Role

CREDENTIAL_MEMORY_S = 0.5
"""How long a checked credential is believed without asking the database again: revocation,
deactivation and role changes take effect within it (the promise is one second)."""
MAX_REMEMBERED = 10_000
"""Credentials remembered at most; beyond it everything is forgotten at once (each costs one
lookup again), which bounds memory against a flood of distinct valid credentials."""


@dataclass(frozen=True, slots=True)
class Principal:
    """An authenticated, active user: what authorization and the change log need."""

    user_id: int
    role: Role


class PrincipalCache:
    """Credentials checked within the last `memory_s` seconds and whom they stand for."""

    def __init__(
        self,
        memory_s: float = CREDENTIAL_MEMORY_S,
        max_entries: int = MAX_REMEMBERED,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._memory_s = memory_s
        self._max_entries = max_entries
        self._clock = clock
        self._entries: dict[str, tuple[Principal, float]] = {}

    def get(self, credential: str) -> Principal | None:
        entry = self._entries.get(credential)
        if entry is None or entry[1] <= self._clock():
            return None
        return entry[0]

    def remember(self, credential: str, principal: Principal, valid_for_s: float | None) -> None:
        """Believe `credential` for `memory_s`, or less when the credential itself expires
        sooner (`valid_for_s` from now; None: it does not expire)."""
        memory_s = self._memory_s if valid_for_s is None else min(self._memory_s, valid_for_s)
        if memory_s <= 0:
            return
        if len(self._entries) >= self._max_entries:
            self._entries.clear()
        self._entries[credential] = (principal, self._clock() + memory_s)

    def forget_all(self) -> None:
        """After a change to users or tokens made here: the next request asks the database."""
        self._entries.clear()
