"""Client arbitration: which StreamChannel is the primary controller of each role.

Follows the P4Runtime specification ("Client Arbitration and Controller Replication", "Client
Arbitration Update"): per (device, role) the primary is the live controller whose election id is
at least the highest election id ever seen for that role; when the primary leaves or lowers its
id, there is no primary until some controller arbitrates with an id at least that high (since
P4Runtime 1.1: "Upon the master disconnection, the server no longer chooses the controller with
the second highest election id as the new master"). BMv2's server (PI) keeps the 1.0 rule: the
live controller with the highest id is always primary, so when the primary leaves, the next
highest is promoted and everybody is told. `highest_live_wins` selects that rule (the
emulator's `like_bmv2` mode), so that clients are tested against both. Roles carry no role
config: every role has full pipeline access.
"""

from __future__ import annotations

import queue
import threading
from dataclasses import dataclass, field
from typing import Any

from sliceportal.emulator.errors import Code, P4RuntimeError, invalid
from sliceportal.p4rt.proto import p4r

# Open streams per device, as in BMv2 (PI); a further one gets RESOURCE_EXHAUSTED. Each holds a
# server thread, so streams that never arbitrate count too.
MAX_SESSIONS = 16
_LOW_64 = (1 << 64) - 1


@dataclass(frozen=True, slots=True)
class StreamEnd:
    """Queued last on a session: end the stream with this status."""

    code: Code = Code.OK
    message: str = ""


@dataclass(eq=False)
class Session:
    """One StreamChannel. Messages for the client (StreamMessageResponse or StreamEnd) queue
    in `outbox`, which the RPC's response iterator drains."""

    outbox: queue.SimpleQueue[Any] = field(default_factory=queue.SimpleQueue)
    device_id: int = 0
    role: str = ""
    election_id: int | None = None  # None: unset, lower than any id; never primary
    arbitrated: bool = False


@dataclass
class _Role:
    highest: int | None = None  # the highest election id ever made primary
    primary: Session | None = None
    sessions: list[Session] = field(default_factory=list)


def election_id_of(message: Any) -> int | None:
    """A uint128 `election_id` field of `message` as an int, None when unset."""
    if not message.HasField("election_id"):
        return None
    return int((message.election_id.high << 64) | message.election_id.low)


class Arbiter:
    def __init__(self, device_id: int, *, highest_live_wins: bool = False) -> None:
        self.device_id = device_id
        self.highest_live_wins = highest_live_wins
        """BMv2's rule (see the module's docstring) instead of the specification's."""
        self._lock = threading.Lock()
        self._roles: dict[str, _Role] = {"": _Role()}
        self._sessions: set[Session] = set()

    def open(self) -> Session:
        """A new stream, before its first MasterArbitrationUpdate."""
        with self._lock:
            if len(self._sessions) >= MAX_SESSIONS:
                raise P4RuntimeError(
                    Code.RESOURCE_EXHAUSTED, f"more than {MAX_SESSIONS} controller streams"
                )
            session = Session()
            self._sessions.add(session)
            return session

    def arbitrate(self, session: Session, update: Any) -> None:
        """Handle a MasterArbitrationUpdate; an error means: end the stream with it."""
        device_id = int(update.device_id)
        role_name = str(update.role.name)
        election_id = election_id_of(update)
        if update.role.HasField("config"):
            raise invalid("role configs are not supported: every role has full pipeline access")
        with self._lock:
            if not session.arbitrated:
                if device_id != self.device_id:
                    raise P4RuntimeError(Code.NOT_FOUND, f"no device with id {device_id}")
                role = self._roles.setdefault(role_name, _Role())
                self._check_unique(role, election_id, session)
                session.device_id = device_id
                session.role = role_name
                session.arbitrated = True
                role.sessions.append(session)
            else:
                if device_id != session.device_id:
                    raise P4RuntimeError(
                        Code.FAILED_PRECONDITION, "this stream belongs to another device id"
                    )
                if role_name != session.role:
                    raise P4RuntimeError(
                        Code.FAILED_PRECONDITION, "a stream cannot change role: open a new one"
                    )
                role = self._roles[role_name]
                self._check_unique(role, election_id, session)
            session.election_id = election_id
            self._elect(role, session)

    def close(self, session: Session) -> None:
        """The stream ended; if it was the primary, the role is left without one (with
        `highest_live_wins`, the next highest live id is promoted), and everybody is told."""
        with self._lock:
            self._sessions.discard(session)
            if not session.arbitrated:
                return
            role = self._roles[session.role]
            role.sessions.remove(session)
            if role.primary is not session:
                return
            if self.highest_live_wins:
                self._elect_highest_live(role, None)
                return
            role.primary = None
            for other in role.sessions:
                self._notify(role, other)

    def check_primary(self, device_id: int, role_name: str, election_id: int | None) -> None:
        """Raise unless (device_id, role, election_id) names the current primary."""
        if device_id != self.device_id:
            raise P4RuntimeError(Code.NOT_FOUND, f"no device with id {device_id}")
        with self._lock:
            role = self._roles.get(role_name)
            if role is None:
                raise P4RuntimeError(
                    Code.NOT_FOUND, f"no controller has arbitrated for role {role_name!r}"
                )
            primary = role.primary
            if primary is None or election_id is None or primary.election_id != election_id:
                raise P4RuntimeError(
                    Code.PERMISSION_DENIED,
                    "not the primary: the request's election id is not the primary's "
                    "(open a StreamChannel and arbitrate first)",
                )

    @staticmethod
    def _check_unique(role: _Role, election_id: int | None, session: Session) -> None:
        if election_id is None:
            return
        for other in role.sessions:
            if other is not session and other.election_id == election_id:
                raise invalid(f"election id {election_id} is already used by another controller")

    def _elect(self, role: _Role, session: Session) -> None:
        if self.highest_live_wins:
            self._elect_highest_live(role, session)
            return
        was_primary = role.primary is session
        election_id = session.election_id
        if election_id is not None and (role.highest is None or election_id >= role.highest):
            role.primary = session
            role.highest = election_id
            # The others learn about the (possibly new) primary first, then the primary itself.
            for other in role.sessions:
                if other is not session:
                    self._notify(role, other)
            self._notify(role, session)
        elif was_primary:  # it lowered its own election id: now nobody is primary
            role.primary = None
            for other in role.sessions:
                self._notify(role, other)
        else:
            self._notify(role, session)

    def _elect_highest_live(self, role: _Role, sender: Session | None) -> None:
        """BMv2's rule: the live controller with the highest election id is primary. A change
        of primary is told to all (the others first, then the new primary); otherwise only
        `sender` (the controller that arbitrated, if any) hears back."""
        voters = [s for s in role.sessions if s.election_id is not None]
        primary = max(voters, key=lambda s: s.election_id or 0, default=None)
        changed = primary is not role.primary
        role.primary = primary
        if primary is not None:
            role.highest = primary.election_id
        if changed:
            for other in role.sessions:
                if other is not primary:
                    self._notify(role, other)
            if primary is not None:
                self._notify(role, primary)
        elif sender is not None:
            self._notify(role, sender)

    def _notify(self, role: _Role, session: Session) -> None:
        response = p4r.StreamMessageResponse()
        update = response.arbitration
        update.device_id = self.device_id
        if session.role:
            update.role.name = session.role
        if role.highest is not None:
            update.election_id.high = role.highest >> 64
            update.election_id.low = role.highest & _LOW_64
        if role.primary is session:
            update.status.code = Code.OK
            update.status.message = "primary"
        elif role.primary is not None:
            update.status.code = Code.ALREADY_EXISTS
            update.status.message = "backup: another controller is primary"
        else:
            update.status.code = Code.NOT_FOUND
            update.status.message = "backup: there is no primary"
        session.outbox.put(response)
