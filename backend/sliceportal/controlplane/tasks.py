"""Celery tasks of the control plane, done saleor's way.

Tasks take ids, re-read their rows under the switch's advisory lock and return early when there
is nothing to do, so a task that runs twice (a redelivery after a worker died, the outbox sending
a message again) is harmless. Only `TransientSwitchError` (UNAVAILABLE, DEADLINE_EXCEEDED) is
retried, with exponential back-off. The switch tasks acknowledge late and are rejected (so
redelivered) when their worker process dies mid-run: the next run diffs again and finishes the
job.

- `reconcile_switch`: one switch (`controlplane.reconciler`); with `deploy` it also replaces a
  foreign pipeline.
- `reconcile_all` (beat): every switch, each in its own task, skipping switches a running
  reconciliation holds; also purges old outbox rows.
- `probe_switches` (beat): asks every switch for its pipeline cookie, in parallel with a short
  deadline, and reconciles at once each one that lost it (restarted), came back or went away,
  so a restarted switch gets its pipeline and entries back within seconds, not at the next
  periodic pass.
- `dispatch_outbox` (beat): the outbox sweep, behind the beat process's LISTEN/NOTIFY
  dispatcher (`start_outbox_listener`).
"""

from __future__ import annotations

import datetime as dt
import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import sqlalchemy as sa
from celery import Task

from sliceportal.controlplane.reconciler import Reconciler, switch_lock
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
from sliceportal.taskqueue import celery_app

logger = logging.getLogger(__name__)

PROBE_TIMEOUT_S = 1.0
PROBE_THREADS = 8
OUTBOX_KEEP = dt.timedelta(days=1)
PUBLISH_RETRY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.5}
"""Publishing from the API: a broker that stays down for a second makes the request a 503."""


def _reconciler(task: Task[Any, Any]) -> Reconciler:
    settings = get_settings()
    return Reconciler(
        process_engine(),
        shared_pool(),
        settings_pipeline(settings),
        ChangeContext(user_id=None, request_id=f"worker:{task.request.id}"),
    )


@celery_app.task(
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(TransientSwitchError,),
    retry_backoff=1,
    retry_backoff_max=30,
    retry_jitter=True,
    max_retries=8,
)
def reconcile_switch(
    self: Task[Any, Any], switch_id: int, periodic: bool = False, deploy: bool = False
) -> dict[str, object]:
    """Make the switch hold what the database says. A deploy also replaces a foreign pipeline;
    a periodic run skips a switch another reconciliation holds. Retried for about two and a
    half minutes at most while the switch does not answer; the probes take over after that."""
    return _reconciler(self).run(switch_id, deploy=deploy, wait=not periodic).as_dict()


@celery_app.task
def reconcile_all() -> int:
    """Enqueue a periodic reconciliation of every switch; the number enqueued."""
    with process_session() as db:
        switch_ids = list(db.scalars(sa.select(Switch.id).order_by(Switch.id)))
        outbox.purge(db, OUTBOX_KEEP)
    for switch_id in switch_ids:
        reconcile_switch.apply_async((switch_id, True))
    return len(switch_ids)


def _probe(target: SwitchTarget) -> int | None | SwitchError:
    """The switch's pipeline cookie, or the error that kept it from answering."""
    pool = shared_pool()
    try:
        return pool.get(target, timeout_s=PROBE_TIMEOUT_S).pipeline_cookie(PROBE_TIMEOUT_S)
    except SwitchError as exc:
        if isinstance(exc, TransientSwitchError):
            pool.drop(target.switch_id)  # a fresh channel next time, not gRPC's back-off
        return exc


@celery_app.task
def probe_switches() -> int:
    """Reconcile the switches whose answer differs from what the database last recorded:
    pipeline lost or changed, reachable again, or not answering any more. The number sent."""
    cookie = settings_pipeline(get_settings()).cookie
    with process_session() as db:
        switches = list(db.scalars(sa.select(Switch).order_by(Switch.id)))
    if not switches:
        return 0
    with ThreadPoolExecutor(min(PROBE_THREADS, len(switches))) as executor:
        answers = list(executor.map(_probe, [SwitchTarget.of(s) for s in switches]))
    sent = 0
    for switch, answer in zip(switches, answers, strict=True):
        answered = not isinstance(answer, SwitchError)
        in_sync = switch.sync is not None and switch.sync.pipeline_in_sync
        stale = (
            answered != (switch.state is SwitchState.REACHABLE)
            or (answered and answer is None)
            or (answered and answer != cookie and in_sync)
        )
        if not stale:
            continue
        with switch_lock(process_engine(), switch.id, wait=False) as free:
            if free:  # else a running reconciliation is about to record what it finds
                reconcile_switch.apply_async((switch.id,))
                sent += 1
    return sent


def _send(task: str, args: list[Any], task_id: str | None) -> str:
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
