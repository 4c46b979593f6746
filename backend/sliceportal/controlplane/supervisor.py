"""The portal's background processes, kept running: a child that dies is started again.

`sliceportal serve` runs the Celery worker and beat and the emulated switch under a
`Supervisor`. Restarting is not a nicety: Celery 5.7's worker exits ("Unrecoverable error:
AttributeError") when its Redis connection drops while it holds unacknowledged messages
(celery/celery@feb789acc closes the connection after `collect()` released its transport), and
with late acknowledgement it nearly always holds some. A restarted worker waits for Redis and
carries on; the outbox and the periodic reconciliation make up for anything in flight.

Restarts are quick: 0.5 s after the child's start, doubling up to 2 s while it keeps dying
within 10 s of its start. A worker takes 2-5 s to start on a busy 2-CPU machine, so the control
plane is back within about 7 s of the last of any series of kills (the target is 10 s); a child
that cannot start at all costs some 30 restarts a minute. A child's whole process group is killed
before it starts again, so nothing it forked (a pool process caught at start-up, before it
arranged to die with its parent) survives into the next generation.

Each child runs in a process group of its own, so the supervisor stops it with everything it
forked (the worker's pool), in the reverse order of starting: SIGTERM, then SIGKILL after a
grace period.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from sliceportal.taskqueue import MAIN_QUEUE, SLOW_SWITCH_QUEUE

logger = logging.getLogger(__name__)

RESTART_DELAY_S = 0.5
"""The least time between a child's start and its next start."""
MAX_RESTART_DELAY_S = 2.0
HEALTHY_AFTER_S = 10.0
"""A child that ran this long is healthy again: its back-off starts over."""
POLL_S = 0.2
WORKER_OPTIONS = ("--without-mingle", "--without-gossip")
SLOW_WORKER_OPTIONS = (f"--queues={SLOW_SWITCH_QUEUE}", "--concurrency=2", "--hostname=slow@%h")
"""Two processes: the slow lane waits on switches, not on the CPU. Its own node name, since
the main worker on the same machine has Celery's default one."""


@dataclass
class Child:
    """One process: its command, environment and where its output goes (None: inherited)."""

    name: str
    argv: Sequence[str]
    env: dict[str, str] | None = None
    log: Path | None = None
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    started_at: float = 0.0
    restarts: int = 0
    delay_s: float = RESTART_DELAY_S


def celery_children(
    logs: Path,
    schedule: Path,
    *,
    env: dict[str, str] | None = None,
    worker_args: Sequence[str] = (),
) -> list[Child]:
    """The Celery workers and beat of `workers.app`, logging to `logs`; beat keeps its schedule
    state in `schedule`. Two workers, one per lane (`taskqueue`): `worker` (with `worker_args`)
    serves the main queue, `slow-worker` the slow switches' reconciliations, so that slow
    switches never take the processes the others need. They skip mingle (a second's wait at
    every start for other workers' revoked-task lists, which the portal does not use) and
    gossip."""
    celery = [sys.executable, "-m", "celery", "-A", "workers.app"]
    worker = [*celery, "worker", "--loglevel=INFO", *WORKER_OPTIONS]
    main_worker = [*worker, f"--queues={MAIN_QUEUE}", *worker_args]
    return [
        Child("worker", main_worker, env, logs / "worker.log"),
        Child("slow-worker", [*worker, *SLOW_WORKER_OPTIONS], env, logs / "slow-worker.log"),
        Child(
            "beat",
            [*celery, "beat", "--loglevel=INFO", f"--schedule={schedule}"],
            env,
            logs / "beat.log",
        ),
    ]


class Supervisor:
    def __init__(self, children: Sequence[Child], *, stop_timeout_s: float = 15.0) -> None:
        self.children = list(children)
        self.stop_timeout_s = stop_timeout_s
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._monitor = threading.Thread(target=self._watch, name="supervisor", daemon=True)

    def child(self, name: str) -> Child:
        return next(c for c in self.children if c.name == name)

    def start(self) -> None:
        for child in self.children:
            self._spawn(child)
        self._monitor.start()

    def _spawn(self, child: Child) -> None:
        output: IO[bytes] | None = None
        if child.log is not None:
            child.log.parent.mkdir(parents=True, exist_ok=True)
            output = child.log.open("ab")
        try:
            child.process = subprocess.Popen(
                list(child.argv),
                env=child.env,
                stdout=output,
                stderr=subprocess.STDOUT if output is not None else None,
                start_new_session=True,
            )
        finally:
            if output is not None:
                output.close()
        child.started_at = time.monotonic()

    def _watch(self) -> None:
        while not self._stopping.wait(POLL_S):
            with self._lock:
                if self._stopping.is_set():
                    return
                for child in self.children:
                    self._maybe_restart(child)

    def _maybe_restart(self, child: Child) -> None:
        process = child.process
        if process is None or process.poll() is None:
            return
        ran = time.monotonic() - child.started_at
        if ran >= HEALTHY_AFTER_S:
            child.delay_s = RESTART_DELAY_S
        if ran < child.delay_s:
            return  # wait out the back-off, counted from its start
        logger.warning(
            "%s exited with status %s after %.0f s; starting it again",
            child.name,
            process.returncode,
            ran,
        )
        child.restarts += 1
        child.delay_s = min(child.delay_s * 2, MAX_RESTART_DELAY_S)
        _kill_group(process.pid)
        self._spawn(child)

    def stop(self) -> None:
        """Stop every child (last started first) and wait for them."""
        self._stopping.set()
        with self._lock:
            for child in reversed(self.children):
                _stop(child, self.stop_timeout_s)
        if self._monitor.is_alive():
            self._monitor.join()


def _stop(child: Child, timeout_s: float) -> None:
    process, child.process = child.process, None
    if process is None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    try:
        process.wait(timeout_s)
    except subprocess.TimeoutExpired:
        logger.warning("%s did not stop within %.0f s: killing it", child.name, timeout_s)
    _kill_group(process.pid)  # it may outlive its leader (the worker's pool)
    process.wait()


def _kill_group(pgid: int) -> None:
    """SIGKILL what is left of a child's process group."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass
