"""Pollers' membership and switch leases (docs/telemetry.md "Pollers share the switches").

Every statement runs on the database's clock (`now()`), so pollers on several machines agree
on who is live and which lease expired without trusting each other's clocks. Each function is
one statement in its own transaction (the connection is in autocommit).
"""

from __future__ import annotations

from collections.abc import Collection

import sqlalchemy as sa

_JOIN = sa.text(
    "INSERT INTO telemetry_pollers (poller_id, expires_at)"
    " VALUES (:poller, now() + make_interval(secs => :ttl))"
    " ON CONFLICT (poller_id) DO UPDATE SET expires_at = excluded.expires_at"
)
_FORGET_DEAD = sa.text(
    "DELETE FROM telemetry_pollers WHERE expires_at < now() - make_interval(secs => :grace)"
)
_LIVE = sa.text("SELECT poller_id FROM telemetry_pollers WHERE expires_at > now()")
_ACQUIRE = sa.text(
    "INSERT INTO telemetry_leases (switch_id, poller_id, expires_at)"
    " SELECT id, :poller, now() + make_interval(secs => :ttl)"
    " FROM switches WHERE id = ANY(:ids)"
    " ON CONFLICT (switch_id) DO UPDATE SET"
    " poller_id = excluded.poller_id, expires_at = excluded.expires_at"
    " WHERE telemetry_leases.poller_id = excluded.poller_id"
    " OR telemetry_leases.expires_at <= now()"
    " RETURNING switch_id"
)
_RELEASE = sa.text(
    "DELETE FROM telemetry_leases WHERE poller_id = :poller AND switch_id = ANY(:ids)"
)
_LEAVE_LEASES = sa.text("DELETE FROM telemetry_leases WHERE poller_id = :poller")
_LEAVE = sa.text("DELETE FROM telemetry_pollers WHERE poller_id = :poller")


def heartbeat(connection: sa.Connection, poller_id: str, ttl_s: float) -> list[str]:
    """Renew ``poller_id``'s membership for ``ttl_s``; the live pollers, sorted (itself
    included). Members expired for a minute are deleted."""
    connection.execute(_JOIN, {"poller": poller_id, "ttl": ttl_s})
    connection.execute(_FORGET_DEAD, {"grace": 60.0})
    return sorted(connection.scalars(_LIVE))


def acquire(
    connection: sa.Connection, poller_id: str, switch_ids: Collection[int], ttl_s: float
) -> set[int]:
    """Take or renew the leases of ``switch_ids`` for ``ttl_s``; the ones now held. A lease
    of another poller is taken only once expired; switches deleted meanwhile are skipped."""
    rows = connection.scalars(
        _ACQUIRE, {"poller": poller_id, "ids": list(switch_ids), "ttl": ttl_s}
    )
    return set(rows)


def release(connection: sa.Connection, poller_id: str, switch_ids: Collection[int]) -> None:
    """Give up ``poller_id``'s leases of ``switch_ids`` (after it stopped polling them)."""
    if switch_ids:
        connection.execute(_RELEASE, {"poller": poller_id, "ids": list(switch_ids)})


def leave(connection: sa.Connection, poller_id: str) -> None:
    """Give up every lease and the membership (a poller that stops cleanly)."""
    connection.execute(_LEAVE_LEASES, {"poller": poller_id})
    connection.execute(_LEAVE, {"poller": poller_id})
