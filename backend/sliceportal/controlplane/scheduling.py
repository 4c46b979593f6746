"""Keeping one switch from delaying the others: reconciliations coalesced per switch, a circuit
breaker per switch that does not answer, and a slow lane for switches that answer slowly. All
three live in Redis, the broker's server, so every worker and beat process, on any machine,
shares them, and a lost Redis loses them with the queue.

**Coalescing.** At most one reconciliation of a switch waits in the queue: `Coalescer.claim`
sets a key per switch (NX) to the id of the task it is about to send, and a change finding the
key set sends nothing, since the queued task reads the database when it runs. The task frees
the key as it starts (`release`), so a change arriving while it runs queues the next one. At
most one runs (the switch's advisory lock, `reconciler.switch_lock`): a run finding the switch
held marks it dirty and returns, and the run holding it queues exactly one more when it ends
(`take_dirty`). A holder that dies leaves its mark behind: the probe finds it and queues the
run it asked for. Deploys and the API's reconciliations are sent as they are (the API answers
with their task id); they mark and take the dirty flag like the others.

**Circuit breaker.** A switch that did not answer (connection refused, or no answer within the
connect timeout) is open (`Breaker.failed`): reconciliations of it return at once instead of
holding a worker process for the connect timeout, and only the probe tries it again, 1, 2, 4, …
seconds later, at most `switch_backoff_max_s` apart, until it answers (`close`). The state is
keyed by the switch's id and address, so a switch given another address starts closed.

**Slow lane.** A switch that answers, but slowly (seconds a write, a Write that hangs until
its deadline, or simply more entries than fit in the time limit), would hold a process of the
worker for as long as its run lasts, and as many such switches as the worker has processes
would hold them all. Each run on the main lane (queue `celery`) therefore has a soft time limit
(`reconcile_time_limit_s`): a run that reaches it stops where it is, its switch is marked slow
(`SlowSwitches.mark`), and its next run goes to the slow lane (queue `slow-switches`), which
workers of their own serve with a longer limit. The diff makes stopping anywhere safe: the
next run reads back what the switch holds and writes the rest. Runs of a switch marked slow
are sent to the slow lane from then on, and a run the main lane receives for it (the API
publishes every deploy there) is passed on at once. A run on the slow lane that wrote and
took less than half the main lane's limit clears the mark (half, so a switch near the limit
does not go back and forth); a run that wrote nothing says nothing of the switch's writes and
leaves it. The mark also expires after `SLOW_TTL_S`, for a switch nobody changes.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import redis

from sliceportal.p4rt.connection import SwitchTarget

PREFIX = "sliceportal:controlplane"
QUEUED_TTL_S = 30
"""A claim outlives its task by at most this long (a message lost with a purged queue)."""
DIRTY_TTL_S = 3600
BREAKER_TTL_S = 3600
"""An open breaker not tried again for this long is forgotten (its switch was deleted)."""
SLOW_TTL_S = 3600
"""A switch marked slow is tried on the main lane again after this long without a quick run."""
FIRST_BACKOFF_S = 1.0
PROBE_TIMEOUT_S = 1.0
"""How long a switch not known to answer gets to connect and to answer: the probe's deadline,
and a reconciliation's when the switch is not recorded reachable (a silent address would
otherwise hold a worker process for the whole `p4rt_connect_timeout_s`)."""

_DELETE_IF_EQUAL = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
"""
_DEPLOY = b"deploy"


class Coalescer:
    """At most one queued and one running reconciliation per switch (see the module)."""

    def __init__(self, client: redis.Redis) -> None:
        self._client = client
        self._delete_if_equal = client.register_script(_DELETE_IF_EQUAL)

    @staticmethod
    def _queued(switch_id: int) -> str:
        return f"{PREFIX}:queued:{switch_id}"

    @staticmethod
    def _dirty(switch_id: int) -> str:
        return f"{PREFIX}:dirty:{switch_id}"

    def claim(self, switch_id: int, task_id: str) -> str | None:
        """Reserve the switch's place in the queue for `task_id`: None when reserved (send
        it), else the id of the task queued already, which will do the work."""
        key = self._queued(switch_id)
        while not self._client.set(key, task_id, nx=True, ex=QUEUED_TTL_S):
            queued: Any = self._client.get(key)
            if queued is not None:
                return str(queued.decode())
            # It started between the two calls, after the change committed: claim again.
        return None

    def release(self, switch_id: int, task_id: str) -> None:
        """Free the place `task_id` holds (it was not sent, or it starts now)."""
        self._delete_if_equal(keys=[self._queued(switch_id)], args=[task_id])

    def forget_queued(self) -> None:
        """Free every switch's place: a worker that was killed takes the tasks it had
        received with it until the broker's visibility timeout gives them back."""
        keys = list(self._client.scan_iter(match=f"{PREFIX}:queued:*", count=1000))
        if keys:
            self._client.delete(*keys)

    def mark_dirty(self, switch_id: int, *, deploy: bool) -> None:
        """Ask for one more run once the switch is free (a deploy if any asked for one)."""
        if deploy:
            self._client.set(self._dirty(switch_id), _DEPLOY, ex=DIRTY_TTL_S)
        else:
            self._client.set(self._dirty(switch_id), b"reconcile", nx=True, ex=DIRTY_TTL_S)

    def dirty(self, switch_ids: Sequence[int]) -> list[bool | None]:
        """Each switch's mark, left in place (one round trip for them all): None when there
        is none, else whether a deploy was asked for."""
        if not switch_ids:
            return []
        marks: Any = self._client.mget([self._dirty(switch_id) for switch_id in switch_ids])
        return [None if mark is None else mark == _DEPLOY for mark in marks]

    def take_dirty(self, switch_id: int) -> bool | None:
        """Clear the mark; None when there was none, else whether a deploy was asked for."""
        pipe = self._client.pipeline(transaction=True)
        pipe.get(self._dirty(switch_id))
        pipe.delete(self._dirty(switch_id))
        mark, _ = pipe.execute()
        return None if mark is None else mark == _DEPLOY


class Breaker:
    """Per-switch circuit breaker (see the module)."""

    def __init__(self, client: redis.Redis, max_backoff_s: float) -> None:
        self._client = client
        self.max_backoff_s = max_backoff_s

    @staticmethod
    def _key(target: SwitchTarget) -> str:
        return f"{PREFIX}:breaker:{target.switch_id}:{target.address}"

    def is_open(self, target: SwitchTarget) -> bool:
        """The switch did not answer the last attempt: leave it to the probe."""
        return bool(self._client.exists(self._key(target)))

    def due(self, targets: Sequence[SwitchTarget]) -> list[bool]:
        """For each switch whether it is time to try it: closed, or its back-off is over (one
        round trip for them all)."""
        pipe = self._client.pipeline(transaction=False)
        for target in targets:
            pipe.hget(self._key(target), "retry_at")
        now = time.time()
        return [retry_at is None or now >= float(retry_at) for retry_at in pipe.execute()]

    def failed(self, target: SwitchTarget) -> float:
        """Open (or keep open) the breaker; the seconds until the next try."""
        key = self._key(target)
        failures = int(self._client.hincrby(key, "failures", 1))
        backoff = min(FIRST_BACKOFF_S * 2.0 ** min(failures - 1, 32), self.max_backoff_s)
        pipe = self._client.pipeline(transaction=True)
        pipe.hset(key, "retry_at", time.time() + backoff)
        pipe.expire(key, BREAKER_TTL_S)
        pipe.execute()
        return backoff

    def close(self, targets: Sequence[SwitchTarget]) -> list[bool]:
        """The switches answered; for each whether its breaker was open (one round trip)."""
        pipe = self._client.pipeline(transaction=False)
        for target in targets:
            pipe.delete(self._key(target))
        return [bool(deleted) for deleted in pipe.execute()]


class SlowSwitches:
    """The switches whose reconciliations go to the slow lane (see the module)."""

    def __init__(self, client: redis.Redis) -> None:
        self._client = client

    @staticmethod
    def _key(switch_id: int) -> str:
        return f"{PREFIX}:slow:{switch_id}"

    def mark(self, switch_id: int) -> None:
        """A run of the switch outlasted its lane's time limit."""
        self._client.set(self._key(switch_id), b"1", ex=SLOW_TTL_S)

    def is_slow(self, switch_id: int) -> bool:
        return bool(self._client.exists(self._key(switch_id)))

    def clear(self, switch_id: int) -> None:
        """A run of the switch wrote quickly: its runs go back to the main lane."""
        self._client.delete(self._key(switch_id))
