"""Celery tasks of the control plane, done saleor's way.

Tasks take ids, re-read their rows under the switch's advisory lock and return early when there
is nothing to do, so a task that runs twice (a redelivery after a worker died, the outbox sending
a message again) is harmless. The switch tasks acknowledge late and are rejected (so
redelivered) when their worker process dies mid-run: the next run diffs again and finishes the
job. Nothing is retried in a worker: a switch that does not answer opens its circuit breaker
and the probes bring it back (`controlplane.scheduling`), so one switch never holds the worker
processes the others need.

- `reconcile_switch`: one switch (`controlplane.reconciler`); with `deploy` it also replaces a
  foreign pipeline. Queued through `queue_reconcile`: at most one waits per switch, at most one
  runs, and a change arriving meanwhile gets exactly one more run. It runs on the main lane
  (queue `celery`) under a soft time limit; a run that reaches it stops, and the switch's runs
  go on the slow lane (queue `slow-switches`, workers of their own) until one is quick again
  (`scheduling.SlowSwitches`), so slow switches never hold the main worker's processes.
- `reconcile_all` (beat): every switch, each in its own task (coalesced like the others); also
  purges old outbox rows. A worker queues one as it comes up, for what a killed worker took
  with it.
- `probe_switches` (beat): asks every switch whose breaker is not backing off for its pipeline
  cookie, in parallel with a short deadline; records the ones that do not answer unreachable
  and reconciles at once each one that lost its pipeline (restarted), came back or changed
  pipeline, so a restarted switch gets its pipeline and entries back within seconds.
- `dispatch_outbox` (beat): the outbox sweep, behind the beat process's LISTEN/NOTIFY
  dispatcher (`start_outbox_listener`).
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import redis
import sqlalchemy as sa
from celery import Task
from celery.exceptions import SoftTimeLimitExceeded
from celery.signals import worker_ready

from sliceportal.controlplane.reconciler import Outcome, Reconciler, Report
from sliceportal.controlplane.scheduling import (
    PROBE_TIMEOUT_S,
    Breaker,
    Coalescer,
    SlowSwitches,
)
from sliceportal.core.config import Settings, get_settings
from sliceportal.db import outbox
from sliceportal.db.changes import ChangeContext
from sliceportal.db.models import Switch
from sliceportal.db.session import (
    create_db_engine,
    create_sessionmaker,
    process_engine,
    process_session,
)
from sliceportal.p4rt.connection import SwitchTarget
from sliceportal.p4rt.errors import SwitchError, TransientSwitchError
from sliceportal.p4rt.pipeline import settings_pipeline
from sliceportal.p4rt.session import shared_pool
from sliceportal.schemas.choices import SwitchState
from sliceportal.taskqueue import SLOW_SWITCH_QUEUE, celery_app, reconcile_time_limits

logger = logging.getLogger(__name__)

PROBE_THREADS = 8
OUTBOX_KEEP = dt.timedelta(days=1)
PUBLISH_RETRY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.5}
"""Publishing from the API: a broker that stays down for a second makes the request a 503."""
REDIS_TIMEOUT_S = 5.0


@functools.cache
def _redis() -> redis.Redis:
    """This process's client of the broker's Redis (the coalescing and breaker state)."""
    url = get_settings().redis_url
    return redis.Redis.from_url(
        url, socket_timeout=REDIS_TIMEOUT_S, socket_connect_timeout=REDIS_TIMEOUT_S
    )


def _coalescer() -> Coalescer:
    return Coalescer(_redis())


def _breaker() -> Breaker:
    return Breaker(_redis(), get_settings().switch_backoff_max_s)


def _slow_switches() -> SlowSwitches:
    return SlowSwitches(_redis())


def _reconciler(task: Task[Any, Any]) -> Reconciler:
    settings = get_settings()
    return Reconciler(
        process_engine(),
        shared_pool(),
        settings_pipeline(settings),
        ChangeContext(user_id=None, request_id=f"worker:{task.request.id}"),
        _breaker(),
    )


def queue_reconcile(switch_id: int, *, deploy: bool = False) -> str:
    """Queue a reconciliation of the switch unless one is queued already; the id of the task
    that will do it. Deploys are always queued. A switch marked slow goes to the slow lane,
    with that lane's time limits."""
    options: dict[str, Any] = {}
    if _slow_switches().is_slow(switch_id):
        soft, hard = reconcile_time_limits(get_settings(), slow=True)
        options = {"queue": SLOW_SWITCH_QUEUE, "soft_time_limit": soft, "time_limit": hard}
    if deploy:
        return str(reconcile_switch.apply_async((switch_id, outbox.DEPLOY), **options).id)
    task_id = str(uuid.uuid4())
    coalescer = _coalescer()
    queued = coalescer.claim(switch_id, task_id)
    if queued is not None:
        return queued
    try:
        reconcile_switch.apply_async((switch_id,), task_id=task_id, **options)
    except BaseException:
        coalescer.release(switch_id, task_id)
        raise
    return task_id


def _on_slow_lane(task: Task[Any, Any]) -> bool:
    delivery = task.request.delivery_info or {}
    return bool(delivery.get("routing_key") == SLOW_SWITCH_QUEUE)


@celery_app.task(bind=True, acks_late=True, reject_on_worker_lost=True)
def reconcile_switch(
    self: Task[Any, Any], switch_id: int, mode: str | None = None
) -> dict[str, object]:
    """Make the switch hold what the database says; a deploy (`mode` `outbox.DEPLOY`) also
    replaces a foreign pipeline. Never waits for the switch: held by another run, it asks that
    run for one more; backed off, it leaves the switch to the probe; marked slow while on the
    main lane, it passes the run to the slow lane; stopped by its time limit, it marks the
    switch slow and queues the rest of the work there."""
    deploy = mode == outbox.DEPLOY
    coalescer = _coalescer()
    coalescer.release(switch_id, str(self.request.id))  # a change from now on queues another
    slow_switches = _slow_switches()
    on_slow_lane = _on_slow_lane(self)
    if not on_slow_lane and slow_switches.is_slow(switch_id):
        queue_reconcile(switch_id, deploy=deploy)
        return {"switch_id": switch_id, "outcome": "passed to the slow lane"}
    started = time.monotonic()
    try:
        report = _reconcile(self, coalescer, switch_id, deploy)
    except Exception as exc:
        if not _stopped_by_time_limit(exc):
            raise
        # The reconciler closed the session and the switch lock on its way out; what the
        # switch took meanwhile, the next run reads back.
        took = time.monotonic() - started
        logger.warning(
            "switch %s: reconciliation stopped after %.1f s (time limit); going on in the "
            "slow lane",
            switch_id,
            took,
        )
        slow_switches.mark(switch_id)
        queue_reconcile(switch_id, deploy=deploy)
        return {"switch_id": switch_id, "outcome": "time limit"}
    quick = time.monotonic() - started < get_settings().reconcile_time_limit_s / 2
    if on_slow_lane and quick and report.outcome is Outcome.APPLIED:
        slow_switches.clear(switch_id)
    return report.as_dict()


def _stopped_by_time_limit(exc: BaseException) -> bool:
    """Whether the task's soft time limit stopped the run: `SoftTimeLimitExceeded`, or what
    the code it struck made of it (psycopg, interrupted in pipeline mode, raises an
    OperationalError while handling it)."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, SoftTimeLimitExceeded):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _reconcile(task: Task[Any, Any], coalescer: Coalescer, switch_id: int, deploy: bool) -> Report:
    """One run of `reconcile_switch`, and the one more that a run finding the switch held,
    or backed off, asked for."""
    reconciler = _reconciler(task)
    report = reconciler.run(switch_id, deploy=deploy, wait=False)
    if report.outcome is Outcome.BUSY:
        # The run holding the switch may have read the database before this change: it runs
        # once more when it ends, unless it ended meanwhile (then this one runs now).
        coalescer.mark_dirty(switch_id, deploy=deploy)
        report = reconciler.run(switch_id, deploy=deploy, wait=False)
    if report.outcome is Outcome.BACKED_OFF:
        coalescer.mark_dirty(switch_id, deploy=deploy)  # for when the probe reaches it
    elif report.outcome not in (Outcome.BUSY, Outcome.UNREACHABLE):
        again = coalescer.take_dirty(switch_id)
        if again is not None:
            queue_reconcile(switch_id, deploy=again)
    return report


@celery_app.task
def reconcile_all() -> int:
    """Queue a reconciliation of every switch; the number of switches."""
    with process_session() as db:
        switch_ids = list(db.scalars(sa.select(Switch.id).order_by(Switch.id)))
        outbox.purge(db, OUTBOX_KEEP)
    for switch_id in switch_ids:
        queue_reconcile(switch_id)
    return len(switch_ids)


@worker_ready.connect
def _reconcile_all_on_start(**_: object) -> None:
    """A worker that was killed took the tasks it had received with it (the broker gives
    them back only after its visibility timeout): free their places in the queue and
    reconcile every switch now."""
    _coalescer().forget_queued()
    reconcile_all.delay()


def _probe(target: SwitchTarget) -> int | None | SwitchError:
    """The switch's pipeline cookie, or the error that kept it from answering."""
    pool = shared_pool()
    try:
        return pool.get(target, timeout_s=PROBE_TIMEOUT_S).pipeline_cookie(PROBE_TIMEOUT_S)
    except SwitchError as exc:
        if isinstance(exc, TransientSwitchError):
            pool.drop(target.switch_id)  # a fresh channel next time, not gRPC's back-off
        return exc


@celery_app.task(bind=True)
def probe_switches(self: Task[Any, Any]) -> int:
    """Probe the switches not backed off. One that does not answer is recorded unreachable
    (its breaker backs off further); one whose answer differs from what the database last
    recorded (pipeline lost or changed, reachable again) or whose breaker it closes is
    reconciled. The number of reconciliations queued."""
    cookie = settings_pipeline(get_settings()).cookie
    breaker, coalescer = _breaker(), _coalescer()
    with process_session() as db:
        switches = list(db.scalars(sa.select(Switch).order_by(Switch.id)))
    targets = [SwitchTarget.of(switch) for switch in switches]
    due = [
        (switch, target)
        for switch, target, is_due in zip(switches, targets, breaker.due(targets), strict=True)
        if is_due
    ]
    if not due:
        return 0
    with ThreadPoolExecutor(min(PROBE_THREADS, len(due))) as executor:
        answers = list(executor.map(_probe, [target for _, target in due]))
    reconciler = _reconciler(self)
    reached = []
    for (switch, target), answer in zip(due, answers, strict=True):
        if not isinstance(answer, TransientSwitchError):
            reached.append((switch, target, answer))
            continue
        breaker.failed(target)
        if switch.state is not SwitchState.UNREACHABLE:
            reconciler.record_unreachable(switch.id, str(answer))
    # Redis is asked once for all of them, not once per switch: fleets run to hundreds.
    reopened_all = breaker.close([target for _, target, _ in reached])
    marks = coalescer.dirty([switch.id for switch, _, _ in reached])
    sent = 0
    for (switch, _, answer), reopened, asked in zip(reached, reopened_all, marks, strict=True):
        answered = not isinstance(answer, SwitchError)  # else it answered with a refusal
        in_sync = switch.sync is not None and switch.sync.pipeline_in_sync
        stale = (
            reopened
            or switch.state is not SwitchState.REACHABLE
            or (answered and answer is None)
            or (answered and answer != cookie and in_sync)
        )
        if stale:
            # A deploy asked for while it was backed off runs now.
            deploy = reopened and bool(coalescer.take_dirty(switch.id))
            queue_reconcile(switch.id, deploy=deploy)
            sent += 1
        elif asked is not None:
            # One more run was asked of the run holding the switch, which may have died
            # with its process (and a run delivered again at once found the switch still
            # held): ask again, coalesced; a live holder takes the mark when it ends.
            queue_reconcile(switch.id, deploy=asked)
            sent += 1
    return sent


def _send(task: str, args: list[Any], task_id: str | None) -> str:
    """The dispatcher's sender: reconciliations are coalesced, unless the caller named the
    task (the API answered with its id)."""
    if task == outbox.RECONCILE_SWITCH and task_id is None:
        return queue_reconcile(args[0], deploy=args[1:] == [outbox.DEPLOY])
    return str(celery_app.send_task(task, args=args, task_id=task_id).id)


@celery_app.task
def dispatch_outbox() -> int:
    """Send the outbox's committed messages (the sweep behind the listener); the number sent."""
    with process_session() as db:
        return outbox.dispatch(db, _send)


def start_outbox_listener(settings: Settings) -> outbox.OutboxListener:
    """Start dispatching the outbox as soon as PostgreSQL reports a commit (in beat)."""
    sessions = create_sessionmaker(create_db_engine(settings))

    def run_dispatch() -> int:
        with sessions() as db:
            return outbox.dispatch(db, _send)

    listener = outbox.OutboxListener(settings.database_url, run_dispatch)
    listener.start()
    return listener


def publisher(settings: Settings) -> outbox.Sender:
    """Sends a task to the broker of `settings` (the API's, whatever this process's environment
    says), for the API's deploys and reconciliations (`services.switches.queue_reconcile`);
    kombu's OperationalError when the broker does not answer within `PUBLISH_RETRY`."""

    def send(task: str, args: list[Any], task_id: str | None) -> str:
        with celery_app.connection_for_write(settings.redis_url) as connection:
            result = celery_app.send_task(
                task,
                args=args,
                task_id=task_id,
                connection=connection,
                retry=True,
                retry_policy=PUBLISH_RETRY,
            )
        return str(result.id)

    return send
