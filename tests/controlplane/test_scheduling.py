"""Coalescing, the circuit breaker and the slow lane's marks (`controlplane.scheduling`) on the
tests' Redis; what they do for a worker shows in test_faults.py (a dead switch, and slow ones,
beside a healthy one)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest
import redis
from pydantic import ValidationError

from sliceportal.controlplane.scheduling import (
    PREFIX,
    SLOW_TTL_S,
    Breaker,
    Coalescer,
    SlowSwitches,
)
from sliceportal.core.config import TASK_TIME_LIMIT_GRACE_S, Settings
from sliceportal.p4rt.connection import SwitchTarget


@pytest.fixture
def client(redis_url: str) -> Iterator[redis.Redis]:
    connection = redis.Redis.from_url(redis_url)
    yield connection
    connection.close()


def some_switch() -> int:
    return uuid.uuid4().int % 2**31


def test_one_reconciliation_is_queued_per_switch_and_freed_as_it_starts(
    client: redis.Redis,
) -> None:
    coalescer = Coalescer(client)
    switch, other = some_switch(), some_switch()
    assert coalescer.claim(switch, "first") is None  # send it
    assert coalescer.claim(switch, "second") == "first"  # the queued one does the work
    assert coalescer.claim(other, "third") is None
    coalescer.release(switch, "second")  # not its place: nothing freed
    assert coalescer.claim(switch, "fourth") == "first"
    coalescer.release(switch, "first")  # it starts: the next change queues another
    assert coalescer.claim(switch, "fifth") is None
    coalescer.forget_queued()  # a worker (re)starts
    assert coalescer.claim(switch, "sixth") is None
    assert coalescer.claim(other, "seventh") is None


def test_a_dirty_switch_gets_one_more_run_and_a_deploy_wins(client: redis.Redis) -> None:
    coalescer = Coalescer(client)
    switch, other = some_switch(), some_switch()
    assert coalescer.take_dirty(switch) is None
    coalescer.mark_dirty(switch, deploy=False)
    coalescer.mark_dirty(switch, deploy=False)
    assert coalescer.take_dirty(switch) is False  # one run, a reconciliation
    assert coalescer.take_dirty(switch) is None
    coalescer.mark_dirty(switch, deploy=True)
    coalescer.mark_dirty(switch, deploy=False)  # does not downgrade the deploy
    assert coalescer.dirty([switch, other]) == [True, None]  # the probe's look leaves it
    assert coalescer.take_dirty(switch) is True
    assert coalescer.dirty([switch]) == [None]
    assert coalescer.dirty([]) == []


def test_the_breaker_backs_off_doubling_up_to_its_cap_and_closes_when_answered(
    client: redis.Redis,
) -> None:
    breaker = Breaker(client, max_backoff_s=4.0)
    target = SwitchTarget(some_switch(), "192.0.2.1:9559", 1, 1)
    assert not breaker.is_open(target) and breaker.due([target]) == [True]
    assert [breaker.failed(target) for _ in range(5)] == [1.0, 2.0, 4.0, 4.0, 4.0]
    assert breaker.is_open(target) and breaker.due([target]) == [False]
    moved = SwitchTarget(target.switch_id, "192.0.2.2:9559", 1, 1)
    assert not breaker.is_open(moved)  # another address starts closed
    assert breaker.due([target, moved]) == [False, True]  # in one round trip
    assert breaker.close([target, moved]) == [True, False]
    assert breaker.close([target]) == [False]
    assert not breaker.is_open(target) and breaker.due([target]) == [True]


def test_an_open_breaker_is_due_again_once_its_back_off_is_over(client: redis.Redis) -> None:
    breaker = Breaker(client, max_backoff_s=0.2)
    target = SwitchTarget(some_switch(), "192.0.2.1:9559", 1, 1)
    assert breaker.failed(target) == 0.2
    assert breaker.due([target]) == [False]
    time.sleep(0.25)  # the back-off itself is what is tested
    assert breaker.due([target]) == [True] and breaker.is_open(
        target
    )  # the probe tries, reconciles wait


def test_a_switch_marked_slow_stays_so_until_cleared_or_forgotten(client: redis.Redis) -> None:
    slow = SlowSwitches(client)
    switch, other = some_switch(), some_switch()
    assert not slow.is_slow(switch)
    slow.mark(switch)
    assert slow.is_slow(switch) and not slow.is_slow(other)
    assert 0 < client.ttl(f"{PREFIX}:slow:{switch}") <= SLOW_TTL_S
    slow.clear(switch)
    assert not slow.is_slow(switch)


def test_the_slow_lane_s_hard_limit_stays_below_the_visibility_timeout() -> None:
    """Else Redis would deliver a run that is still going to a second worker."""
    lanes = {"task_visibility_timeout_s": 10, "reconcile_time_limit_s": 2}
    Settings(**lanes, slow_reconcile_time_limit_s=10 - TASK_TIME_LIMIT_GRACE_S - 1)
    with pytest.raises(ValidationError, match="below task_visibility_timeout_s"):
        Settings(**lanes, slow_reconcile_time_limit_s=10 - TASK_TIME_LIMIT_GRACE_S)
    with pytest.raises(ValidationError, match="at least reconcile_time_limit_s"):
        Settings(reconcile_time_limit_s=20, slow_reconcile_time_limit_s=15)
