"""Bound the API requests one process works on at once, and answer the excess promptly.

A request holds at most one pooled database connection and one worker thread, so a process
works on at most `max_in_flight` requests at a time (by default the pool's size plus its
overflow). The next ones wait here, on the event loop, in arrival order. One that finds
`max_waiting` requests already waiting, or waits longer than `max_wait_s`, is answered
503 `server-busy` with Retry-After at once. One whose client leaves while it waits is dropped
unserved.

Without the gate the excess queued, unbounded and unseen, for a worker thread and then for a
pooled connection: under an offered load above what the process can serve, requests failed
after the pool's timeout as "database unavailable" (logged once each), or outlived the
client's timeout while the server still did their work, and the server took tens of seconds
to stop.

Health is not gated: liveness and readiness must answer however busy the process is. An event
stream passes the gate while it authenticates (with a pooled connection) and gives its slot
back when it starts (`leave_gate`): it lasts minutes and holds no connection meanwhile. Open
streams are bounded by `StreamCounter` instead, per user and in all. Readiness reports the
process saturated (`saturation`) while a new request would have to wait for a slot, or while
no new stream would be accepted.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter, deque
from dataclasses import dataclass

from fastapi import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sliceportal.api.problems import RETRY_AFTER_S, Problem, problem_response, server_busy

logger = logging.getLogger(__name__)

UNGATED = "/api/v1/health"
"""Liveness and readiness must answer however busy the process is."""
SLOT_STATE = "gate_slot"
LOG_INTERVAL_S = 10.0
"""Shed requests are logged as one count per interval, not one line each."""


class Busy(Exception):
    """The gate refused a request: too many waiting, or it waited too long."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class GateLimits:
    max_in_flight: int
    max_waiting: int
    max_wait_s: float


class RequestGate:
    """At most `max_in_flight` holders at once; FIFO waiters, bounded in number and in time.

    A released slot passes straight to the first waiter, so a newcomer never overtakes the
    queue. Event-loop only (not thread safe), like everything else it guards.
    """

    def __init__(self, limits: GateLimits) -> None:
        self.limits = limits
        self.in_flight = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    @property
    def waiting(self) -> int:
        return len(self._waiters)

    def saturation(self) -> str | None:
        """Why a new request would have to wait for a slot; None when one is free."""
        if self.in_flight < self.limits.max_in_flight:
            return None
        return (
            f"{self.in_flight} of {self.limits.max_in_flight} requests in progress, "
            f"{self.waiting} waiting"
        )

    def try_acquire(self) -> bool:
        """Take a slot if one is free and nobody is queued for one."""
        if self.in_flight < self.limits.max_in_flight and not self._waiters:
            self.in_flight += 1
            return True
        return False

    async def acquire(self) -> None:
        """Take a slot, waiting if need be; Busy if the queue is full or the wait too long."""
        if self.try_acquire():
            return
        if len(self._waiters) >= self.limits.max_waiting:
            raise Busy(f"{self.in_flight} requests in progress and {self.waiting} waiting")
        granted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(granted)
        try:
            async with asyncio.timeout(self.limits.max_wait_s):
                await granted
        except TimeoutError:
            if self._holds(granted):  # the slot came as the wait ran out: keep it
                return
            raise Busy(
                f"waited {self.limits.max_wait_s:g} s for one of {self.in_flight} slots"
            ) from None
        except asyncio.CancelledError:
            if self._holds(granted):  # handed a slot, cancelled before it ran: pass it on
                self.release()
            raise

    def _holds(self, granted: asyncio.Future[None]) -> bool:
        """Whether this waiter was handed a slot; if not, it leaves the queue."""
        if granted.done() and not granted.cancelled():
            return True
        with contextlib.suppress(ValueError):  # `release` may have dropped it already
            self._waiters.remove(granted)
        return False

    def release(self) -> None:
        """Give the slot to the first waiter still waiting, or free it."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():  # a cancelled one is gone
                waiter.set_result(None)
                return
        self.in_flight -= 1


class Slot:
    """A request's place in the gate, given back once (see `leave_gate`)."""

    __slots__ = ("_gate",)

    def __init__(self, gate: RequestGate) -> None:
        self._gate: RequestGate | None = gate

    def release(self) -> None:
        if self._gate is not None:
            self._gate.release()
            self._gate = None


def leave_gate(request: Request) -> None:
    """Give back the slot `request` holds: for a request that turns into an event stream once
    it is authenticated (it holds no pooled connection from then on, for minutes)."""
    slot: Slot | None = getattr(request.state, SLOT_STATE, None)
    if slot is not None:
        slot.release()


class GateMiddleware:
    """Pass each API request but health's through a `RequestGate`; 503 problem+json when it is
    refused. The request's `Slot` is in its state, for `leave_gate`."""

    def __init__(self, app: ASGIApp, gate: RequestGate) -> None:
        self.app = app
        self.gate = gate
        self._shed = 0
        """Refusals not logged yet."""
        self._flush: asyncio.TimerHandle | None = None
        """The next count's log, while refusals are being counted."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope.get("path", "")
        if scope["type"] != "http" or not path.startswith("/api/") or path.startswith(UNGATED):
            await self.app(scope, receive, send)
            return
        if not self.gate.try_acquire():
            try:
                queued = await self._queue(receive)
            except Busy as exc:
                self._count_shed()
                response = problem_response(Request(scope), server_busy(exc.reason))
                await response(scope, receive, send)
                return
            if queued is None:
                return
            receive = queued
        slot = Slot(self.gate)
        scope.setdefault("state", {})[SLOT_STATE] = slot
        try:
            await self.app(scope, receive, send)
        finally:
            slot.release()

    async def _queue(self, receive: Receive) -> Receive | None:
        """Wait for a slot while reading the request, so that a client leaving meanwhile is
        noticed: then None, and its request is dropped unserved (nobody would read the answer,
        and a change would still be made that its client never saw confirmed). Otherwise the
        channel the app reads, which gives first what was read here."""
        acquiring = asyncio.ensure_future(self.gate.acquire())
        read: list[Message] = []
        reading: asyncio.Future[Message] | None = None
        try:
            while True:
                if reading is None:
                    reading = asyncio.ensure_future(receive())
                await asyncio.wait((acquiring, reading), return_when=asyncio.FIRST_COMPLETED)
                if reading.done():  # first: a client that left as its slot came has left
                    message = reading.result()
                    reading = None
                    if message["type"] == "http.disconnect":
                        self._abandon(acquiring)
                        return None
                    read.append(message)
                if acquiring.done():
                    break
        except BaseException:  # the server is cancelling this request
            self._abandon(acquiring)
            if reading is not None:
                reading.cancel()
            raise
        if acquiring.exception() is not None and reading is not None:
            reading.cancel()  # refused: the answer needs no more of the request
        acquiring.result()  # Busy when refused
        return _replaying(read, reading, receive)

    def _abandon(self, acquiring: asyncio.Future[None]) -> None:
        """Leave the queue (`RequestGate.acquire` handles its cancellation); a slot already
        handed over goes back."""
        if not acquiring.cancel() and acquiring.exception() is None:
            self.gate.release()

    def _count_shed(self) -> None:
        """The first refusal after a quiet interval is logged at once, the next ones as one
        count per `LOG_INTERVAL_S`: the last count too, when the interval after a burst ends."""
        if self._flush is not None:
            self._shed += 1
            return
        logger.warning(
            "server busy: answered a request 503 (%d in progress, %d waiting); further "
            "refusals are logged as one count per %g s",
            self.gate.in_flight,
            self.gate.waiting,
            LOG_INTERVAL_S,
        )
        self._schedule_count()

    def _schedule_count(self) -> None:
        self._flush = asyncio.get_running_loop().call_later(LOG_INTERVAL_S, self._log_count)

    def _log_count(self) -> None:
        self._flush = None
        if not self._shed:
            return
        logger.warning(
            "server busy: answered %d more requests 503 in the last %g s "
            "(%d in progress, %d waiting)",
            self._shed,
            LOG_INTERVAL_S,
            self.gate.in_flight,
            self.gate.waiting,
        )
        self._shed = 0
        self._schedule_count()


@dataclass(frozen=True)
class StreamLimits:
    per_user: int
    total: int


class StreamCounter:
    """The event streams a process holds open, per user and in all, within `StreamLimits`.

    A stream holds a Redis subscription and a task that forwards every message of its channels
    for as long as its client keeps it open, but no gate slot (see the module's docstring).
    Event-loop only, like the gate.
    """

    def __init__(self, limits: StreamLimits) -> None:
        self.limits = limits
        self.total = 0
        self._per_user: Counter[int] = Counter()

    def open(self, user_id: int) -> None:
        """Count a stream of `user_id`'s; a Problem when over a limit: 429 for one user's
        (theirs to close), 503 `server-busy` for the process's."""
        if self._per_user[user_id] >= self.limits.per_user:
            raise Problem(
                429,
                "too-many-streams",
                f"you have {self._per_user[user_id]} event streams open, the most one user "
                "may; close one first",
                title="Too many open streams",
                headers={"Retry-After": str(RETRY_AFTER_S)},
            )
        if self.total >= self.limits.total:
            raise server_busy(f"{self.total} event streams open, the most it serves")
        self._per_user[user_id] += 1
        self.total += 1

    def close(self, user_id: int) -> None:
        self._per_user[user_id] -= 1
        if not self._per_user[user_id]:
            del self._per_user[user_id]
        self.total -= 1

    def saturation(self) -> str | None:
        """Why a new stream would be refused to any user; None while one would be accepted."""
        if self.total < self.limits.total:
            return None
        return f"{self.total} of {self.limits.total} event streams open"


def _replaying(
    read: list[Message], reading: asyncio.Future[Message] | None, receive: Receive
) -> Receive:
    """`receive`, after the messages `read` and the one `reading` is still waiting for."""
    pending = deque(read)

    async def replay() -> Message:
        nonlocal reading
        if pending:
            return pending.popleft()
        if reading is not None:
            waiting, reading = reading, None
            return await waiting
        return await receive()

    return replay
