"""The telemetry poller: a long-lived process that reads every switch's slice counters each
period, turns them into samples, and stores, publishes and checks them.

Threads, and why (docs/telemetry.md has the whole story):

- one `SwitchPoller` per switch reads one group of its slices per period (`poll_groups`: all of
  them when the cell budget allows, else spread over several periods; each sample carries the
  interval actually measured) and differences the readings with numpy. It hands each batch to
- one `SampleSink`, which computes the metrics, publishes them on Redis, appends them to
  PostgreSQL and runs the alert engine, so a slow database or Redis never delays a read: when
  the sink falls behind, whole batches are dropped (and counted), never the polling cadence;
- the `Poller` itself renews its membership and its switch leases every lease round (half a
  period) and re-reads the inventory every `telemetry_refresh_s`: any number of pollers
  split the switches between them (`assign_switches` over the live pollers), each polling a
  switch only while it holds the switch's lease (`db.leases`), so that a switch is polled by
  exactly one poller, and one that dies has its switches taken over once its leases expire.

Webhook deliveries are enqueued from a separate thread, so a broker outage cannot block the
sink either.
"""

from __future__ import annotations

import datetime as dt
import logging
import math
import os
import queue
import secrets
import socket
import threading
import time
from collections.abc import Callable, Collection
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass
from wsgiref.simple_server import WSGIServer

import numpy as np
import numpy.typing as npt
import redis
import sqlalchemy as sa
from sqlalchemy.orm import Session, sessionmaker

from sliceportal.alerts.engine import AlertEngine, Timing
from sliceportal.alerts.events import RecordedEvent
from sliceportal.alerts.notify import enqueue_deliveries, publish_events
from sliceportal.core.channels import Channels
from sliceportal.core.config import Settings
from sliceportal.db import leases, partitions
from sliceportal.db import samples as store
from sliceportal.db.session import create_db_engine, create_sessionmaker
from sliceportal.domain import p4constants as c
from sliceportal.domain.telemetry import (
    ABC_REGISTER_CELLS,
    CELLS_PER_SLICE,
    CODEL_REGISTER_CELLS,
    COLUMNS,
    REGISTER_CELLS_PER_SLICE,
    Indices,
    Matrix,
    abc_json,
    assign_switches,
    batch_metrics,
    codel_json,
    codel_readings,
    counter_deltas,
    counter_indices,
    fitting_budget,
    poll_groups,
    readings,
    register_indices,
    register_json,
    register_readings,
)
from sliceportal.p4rt.errors import SwitchError, TransientSwitchError
from sliceportal.p4rt.session import SessionPool
from sliceportal.telemetry.inventory import SliceWatch, SwitchWatch, load_inventory
from sliceportal.telemetry.poller_metrics import PollerMetrics

logger = logging.getLogger(__name__)

MAX_BACKOFF_S = 30.0
"""Longest wait between two attempts at a switch that does not answer."""
LEASE_PERIODS = 1.5
"""A lease lasts 1.5 periods, renewed every half period: a renewal may be late by a whole
period before the lease lapses, and a dead poller's switches are taken over within two periods
(expiry, then the next round of another poller)."""
ROUND_PERIODS = 0.5
"""Pollers renew their membership and leases, and take free switches, every half period."""
LEASE_MARGIN = 0.9
"""A poller polls a switch until 90 % of its lease has passed since it asked the database
for it: it stops before the database lets another poller take the switch."""


@dataclass(frozen=True)
class Batch:
    """One poll of one group of a switch's slices: the counts since each slice's last read."""

    switch_id: int
    t: dt.datetime
    slices: tuple[SliceWatch, ...]
    intervals: tuple[float, ...]
    counts: Matrix
    reset: npt.NDArray[np.bool_]
    registers: npt.NDArray[np.uint64] | None
    """(slices, 2) register readings (`register_readings`), where the target reads them."""
    poll_interval_s: float = 0.0
    """Seconds since the switch poller's previous poll (of any group): the span of the poll
    stored with the samples (`store.record_poll`), which may not overlap another's."""
    codel: Matrix | None = None
    """(slices, 2) CoDel's dropping and count (`codel_readings`: `NO_CODEL` for the slices of
    other schemes), read with the registers, where the target reads them."""
    abc: list[str] | None = None
    """Each slice's ABC state as its sample's JSON member (`abc_json`: "null" for the slices
    of other schemes), read with the registers, where the target reads them."""

    @property
    def hist_targets(self) -> Matrix:
        """The histogram target of each slice (`SliceWatch.hist_target`): the one the poller
        knows when it reads. A target changed since the last read (and deployed meanwhile)
        gives one interval of counts spanning both, labelled with the new one."""
        return np.fromiter(
            (watch.hist_target for watch in self.slices), dtype=np.int64, count=len(self.slices)
        )


@dataclass(frozen=True)
class GroupCells:
    """What a poll of one group reads: its counter cells, its register cells (CoDel's state
    of its codel slices only, ABC's meters and average of its abc slices only), and which of
    its slices run CoDel and which ABC, in DP_SID order."""

    counters: dict[str, Indices]
    registers: dict[str, Indices]
    codel: npt.NDArray[np.bool_]
    abc: npt.NDArray[np.bool_]

    @classmethod
    def of(cls, group: tuple[int, ...], codel: frozenset[int], abc: frozenset[int]) -> GroupCells:
        runs = np.array([sid in codel for sid in group], dtype=np.bool_)
        codel_sids = [sid for sid in group if sid in codel]
        runs_abc = np.array([sid in abc for sid in group], dtype=np.bool_)
        abc_sids = [sid for sid in group if sid in abc]
        registers = register_indices(group, codel_sids, abc_sids)
        return cls(counter_indices(group), registers, runs, runs_abc)


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class SwitchPoller:
    """Reads one switch, one group of slices per period.

    The previous reading of every DP_SID is kept in a matrix indexed by DP_SID, with the slice
    it belonged to: a DP_SID that changed hands (slice deleted, another created) starts over
    instead of yielding the difference between two slices' counters.
    """

    def __init__(
        self,
        watch: SwitchWatch,
        pool: SessionPool,
        period_s: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], dt.datetime] | None = None,
        metrics: PollerMetrics | None = None,
    ) -> None:
        self.watch = watch
        """Replaced by the supervisor when the inventory changes (one reference: atomic)."""
        self._pool = pool
        self._period = period_s
        self._clock = clock
        self._wall = wall or utcnow
        self._readings = np.zeros((c.MAX_SLICES, len(COLUMNS)), dtype=np.uint64)
        self._read_at = np.zeros(c.MAX_SLICES)
        self._owner = np.full(c.MAX_SLICES, -1, dtype=np.int64)
        self._polled_at: float | None = None
        """When the previous poll started (monotonic), of any group."""
        self._tick = 0
        self._fitted = watch.budget_cells
        """The cells the last read suggests fit in a period (`fitting_budget`)."""
        self.registers_readable = True
        """Until the target answers UNIMPLEMENTED (BMv2 cannot read registers)."""
        self._groups: tuple[tuple[int, ...], ...] = ((),)
        self._groups_key: tuple[object, ...] = ()
        self._cells: dict[tuple[int, ...], GroupCells] = {}
        """The counter and register cells of each group, in `readings` order."""
        self.failures = 0
        self._metrics = metrics or PollerMetrics()
        self.lease_until = math.inf
        """Monotonic time until which this poller may read the switch (its lease, set by the
        `Poller`): past it, the thread reads nothing, however late the lease round runs."""

    @property
    def cells_per_slice(self) -> int:
        """The cells read for a slice that runs neither CoDel nor ABC (a codel slice adds its
        state's, an abc slice its meters' and average's)."""
        registers = REGISTER_CELLS_PER_SLICE if self.registers_readable else 0
        return CELLS_PER_SLICE + registers

    def _cells_read(self, slices: int, codel: int, abc: int = 0) -> int:
        """The cells of a read of ``slices`` slices of which ``codel`` run CoDel and ``abc``
        run ABC."""
        extra = CODEL_REGISTER_CELLS * codel + ABC_REGISTER_CELLS * abc
        return slices * self.cells_per_slice + (extra if self.registers_readable else 0)

    @property
    def groups(self) -> tuple[tuple[int, ...], ...]:
        """The current poll groups (recomputed only when the slices or the budget change)."""
        return self._groups_of(self.watch)

    def _groups_of(self, watch: SwitchWatch) -> tuple[tuple[int, ...], ...]:
        dp_sids = tuple(s.dp_sid for s in watch.slices)
        codel = frozenset(s.dp_sid for s in watch.slices if s.codel)
        abc = frozenset(s.dp_sid for s in watch.slices if s.abc is not None)
        budget = min(watch.budget_cells, self._fitted)
        # Slices per period at the switch's mean cells per slice (codel slices read 2 more,
        # abc slices 195 more).
        cells = self._cells_read(len(dp_sids), len(codel), len(abc))
        per_period = max(1, budget * len(dp_sids) // cells) if dp_sids else 1
        key = (dp_sids, codel, abc, per_period)
        if key != self._groups_key:
            self._groups = poll_groups(dp_sids, 1, per_period)
            self._groups_key = key
            self._cells = {group: GroupCells.of(group, codel, abc) for group in self._groups}
        return self._groups

    def poll(self) -> Batch | None:
        """Read the next group; None when the switch has no slice. Raises SwitchError."""
        watch = self.watch  # one inventory for the whole poll, however it changes meanwhile
        groups = self._groups_of(watch)
        group = groups[self._tick % len(groups)]
        self._tick += 1
        if not group:
            return None
        session = self._pool.get(watch.target)
        cells = self._cells[group]
        t, started = self._wall(), self._clock()
        values = session.read_counters(cells.counters)
        by_sid = {s.dp_sid: s for s in watch.slices}
        registers = codel = abc = None
        if self.registers_readable:
            read = session.read_register_values(cells.registers)
            if read is None:
                self.registers_readable = False
            else:
                registers = register_readings(read)
                codel = codel_readings(read, cells.codel)
                abc_watches = [by_sid[sid].abc for sid in group]
                abc = abc_json(read, cells.abc, [w for w in abc_watches if w is not None])
        elapsed = self._clock() - started
        cells_read = self._cells_read(len(group), int(cells.codel.sum()), int(cells.abc.sum()))
        self._fitted = fitting_budget(watch.budget_cells, self._period, cells_read, elapsed)
        sids = np.array(group)
        owners = np.array([by_sid[sid].slice_id for sid in group], dtype=np.int64)
        now = readings(values)
        known = np.flatnonzero(self._owner[sids] == owners)
        delta, reset = counter_deltas(self._readings[sids], now)
        intervals = started - self._read_at[sids]
        self._readings[sids] = now
        self._read_at[sids] = started
        self._owner[sids] = owners
        previous, self._polled_at = self._polled_at, started
        return Batch(
            switch_id=watch.switch_id,
            t=t,
            slices=tuple(by_sid[group[i]] for i in known),
            intervals=tuple(intervals[known].tolist()),
            counts=delta[known],
            reset=reset[known],
            registers=None if registers is None else registers[known],
            codel=None if codel is None else codel[known],
            abc=None if abc is None else [abc[i] for i in known.tolist()],
            poll_interval_s=started - previous if previous is not None else 0.0,
        )

    def run(self, stop: threading.Event, deliver: Callable[[Batch], None]) -> None:
        """Poll every period until ``stop``; back off (up to 30 s) while the switch fails."""
        switch_id = self.watch.switch_id
        next_at = self._clock()
        label = str(switch_id)
        while not stop.is_set():
            started = self._clock()
            if started >= self.lease_until:  # lapsed: another poller may read the switch now
                next_at = started + self._period
                stop.wait(self._period)
                continue
            try:
                batch = self.poll()
            except TransientSwitchError as exc:
                self._pool.drop(switch_id)
                self._failed(exc)
                self._count_failure(label, "transient", started)
            except SwitchError as exc:
                self._failed(exc)
                self._count_failure(label, "error", started)
            else:
                if self.failures:
                    logger.info("switch %s answers again", switch_id)
                self.failures = 0
                if batch is not None:
                    self._metrics.polls.labels(label).inc()
                    self._metrics.poll_duration.labels(label).observe(self._clock() - started)
                if batch is not None and batch.slices:
                    deliver(batch)
            wait = self._period * 2 ** min(self.failures, 10)
            next_at = max(next_at + min(wait, MAX_BACKOFF_S), self._clock())
            stop.wait(next_at - self._clock())

    def _count_failure(self, label: str, kind: str, started: float) -> None:
        self._metrics.poll_errors.labels(label, kind).inc()
        self._metrics.poll_duration.labels(label).observe(self._clock() - started)

    def _failed(self, exc: SwitchError) -> None:
        if not self.failures:
            logger.warning("switch %s: %s; retrying with back-off", self.watch.switch_id, exc)
        self.failures += 1


class SampleSink:
    """Turns batches into samples: publish (Redis), store (PostgreSQL), check (alert engine).

    One thread, fed by a bounded queue: a batch that does not fit is dropped and counted, so
    the switch pollers never wait.
    """

    def __init__(
        self,
        sessions: sessionmaker[Session],
        client: redis.Redis,
        channels: Channels,
        engine: AlertEngine,
        maxsize: int = 64,
        metrics: PollerMetrics | None = None,
    ) -> None:
        self._sessions = sessions
        self._redis = client
        self._channels = channels
        self._engine = engine
        self._queue: queue.Queue[Batch] = queue.Queue(maxsize)
        self.dropped = 0
        self._metrics = metrics or PollerMetrics()

    def offer(self, batch: Batch) -> None:
        try:
            self._queue.put_nowait(batch)
        except queue.Full:
            self.dropped += 1
            self._metrics.batches_dropped.inc()
            if self.dropped == 1 or self.dropped % 100 == 0:
                logger.warning("telemetry sink behind: %d batches dropped", self.dropped)

    def run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                batch = self._queue.get(timeout=0.2)
            except queue.Empty:
                continue
            try:
                with self._metrics.sink_duration.time():
                    self.handle(batch)
            except Exception:  # one bad batch must not end the telemetry
                logger.exception("telemetry batch of switch %s lost", batch.switch_id)

    def handle(self, batch: Batch) -> None:
        """Publish, store and check one batch, by columns: a switch of 4,096 slices sends that
        many samples a second, too many for an object or a Redis message each."""
        slice_ids = [watch.slice_id for watch in batch.slices]
        hist_targets = batch.hist_targets
        metrics = batch_metrics(batch.counts, np.array(batch.intervals), hist_targets)
        t = batch.t.isoformat()
        resets = batch.reset.tolist()
        registers = None if batch.registers is None else register_json(batch.registers)
        codel = None if batch.codel is None else codel_json(batch.codel)
        abc = batch.abc
        heads = [
            (
                t,
                slice_id,
                batch.switch_id,
                False,
                resets[i],
                registers[i] if registers else "null",
                codel[i] if codel else "null",
                abc[i] if abc else "null",
            )
            for i, slice_id in enumerate(slice_ids)
        ]
        self._publish(slice_ids, store.sample_json(heads, metrics))
        try:
            with self._sessions() as session:
                store.record_poll(session, batch.switch_id, t, batch.poll_interval_s)
                store.insert_batch(
                    session,
                    batch.switch_id,
                    t,
                    slice_ids,
                    batch.intervals,
                    batch.counts,
                    hist_targets,
                    resets,
                    registers,
                    batch.codel,
                    abc,
                )
                session.commit()
        except sa.exc.SQLAlchemyError as exc:  # a poll overlapping another is refused here
            logger.warning("samples of switch %s not stored: %s", batch.switch_id, exc)
            self._metrics.store_errors.inc()
        self._metrics.samples.inc(len(slice_ids))
        slices = [(watch.slice_id, watch.targets) for watch in batch.slices]
        self._engine.observe(batch.switch_id, batch.t, slices, metrics)

    def _publish(self, slice_ids: list[int], documents: list[str]) -> None:
        """The batch on the all-slices channel, and each sample on its slice's channel if a
        stream listens there (`PUBSUB CHANNELS`: a message each for thousands of slices
        nobody watches would cost Redis and the sink more than the rest of the batch)."""
        try:
            listened = {
                int(_text(channel).rsplit(":", 1)[1])
                for channel in self._redis.pubsub_channels(self._channels.slice_pattern)
            }
            with self._redis.pipeline(transaction=False) as pipe:
                for slice_id, document in zip(slice_ids, documents, strict=True):
                    if slice_id in listened:
                        pipe.publish(self._channels.slice(slice_id), document)
                pipe.publish(self._channels.samples, "[" + ",".join(documents) + "]")
                pipe.execute()
        except redis.RedisError as exc:
            logger.warning("samples not published, Redis unavailable: %s", exc)


def _text(name: str | bytes) -> str:
    """A Redis reply as text (the client returns bytes unless told to decode)."""
    return name.decode() if isinstance(name, bytes) else name


class Poller:
    """One poller process (`sliceportal poller`): its share of the switches, the sink and the
    alert engine. Any number run against one database and Redis (docs/telemetry.md "Pollers
    share the switches")."""

    def __init__(self, settings: Settings, pool: SessionPool | None = None) -> None:
        self._settings = settings
        self._engine = create_db_engine(settings)
        self._sessions = create_sessionmaker(self._engine)
        self._redis = redis.Redis.from_url(
            settings.redis_url, socket_connect_timeout=2, socket_timeout=2
        )
        self._channels = Channels.of(settings.database_url)
        self._pool = pool or SessionPool(settings)
        self._dispatch = ThreadPoolExecutor(1, thread_name_prefix="alert-dispatch")
        self.alerts = AlertEngine(
            self._sessions,
            Timing(settings.alert_for_s, settings.alert_clear_for_s),
            settings.alert_webhook_urls,
            self._after_commit,
        )
        self.metrics = PollerMetrics()
        self.sink = SampleSink(
            self._sessions, self._redis, self._channels, self.alerts, metrics=self.metrics
        )
        self.poller_id = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
        """Its name in `telemetry_pollers` and `telemetry_leases`: unique per start."""
        self._partition_span = dt.timedelta(seconds=settings.telemetry_partition_s)
        self._partitions_until = dt.datetime.min.replace(tzinfo=dt.UTC)
        period = settings.telemetry_poll_interval_s
        self.lease_s = LEASE_PERIODS * period
        self.round_s = ROUND_PERIODS * period
        self.switches: dict[int, SwitchPoller] = {}
        """The switches it polls: those whose lease it holds."""
        self.active = threading.Event()
        """Set while it is a live member (its membership renewed), polling its share."""
        self.live: list[str] = []
        """The live pollers at the last round, itself included."""
        self._inventory: dict[int, SwitchWatch] = {}
        self._share_key: tuple[tuple[int, ...], tuple[str, ...]] | None = None
        self._share_ids: set[int] = set()
        """Its share of the switches, and the switches and live pollers it was computed of."""
        self.slow_rounds = 0
        """Lease rounds that took longer than their half period (`_round_took`)."""
        self._threads: dict[int, tuple[threading.Thread, threading.Event]] = {}
        self.metrics_port: int | None = None
        """Where its metrics are served, once `run` started (`poller_metrics_port` 0: any)."""

    def _after_commit(self, events: list[RecordedEvent]) -> None:
        publish_events(self._redis, self._channels, events)
        ids = [delivery for event in events for delivery in event.delivery_ids]
        if ids:
            self._dispatch.submit(enqueue_deliveries, ids)

    def refresh(self) -> None:
        """Re-read the inventory; update the switch pollers' slices (the next lease round
        starts and stops switch pollers to match it)."""
        with self._sessions() as session:
            inventory = load_inventory(session, self._settings)
        self._inventory = inventory
        self._stop_switches(set(self.switches) - set(inventory))
        for switch_id, poller in list(self.switches.items()):
            watch = inventory[switch_id]
            if poller.watch.target != watch.target:  # address, device or election id changed
                lease_until = poller.lease_until
                self._stop_switches([switch_id])
                self._pool.drop(switch_id)
                self._start_switch(watch, lease_until)
            else:
                poller.watch = watch
        sampled = {(s.slice_id, w.switch_id) for w in inventory.values() for s in w.slices}
        self.alerts.retain(sampled, utcnow())

    def lease_round(self, connection: sa.Connection) -> None:
        """Renew the membership; give up the switches that are no longer this poller's share
        (stopped first, then released), renew and take the leases of its share, and start
        polling the switches newly leased."""
        asked = self._clock()
        self.live = leases.heartbeat(connection, self.poller_id, self.lease_s)
        self.active.set()
        self.metrics.active.set(1)
        share = self._share()
        leaving = set(self.switches) - share
        self._stop_switches(leaving)
        leases.release(connection, self.poller_id, leaving)
        held = leases.acquire(connection, self.poller_id, share, self.lease_s)
        lease_until = asked + LEASE_MARGIN * self.lease_s
        self._stop_switches(set(self.switches) - held)  # taken meanwhile (its lease lapsed)
        for switch_id in held:
            poller = self.switches.get(switch_id)
            if poller is not None:
                poller.lease_until = lease_until
            elif switch_id in self._inventory:
                self._start_switch(self._inventory[switch_id], lease_until)
        self.metrics.switches.set(len(self.switches))

    def _share(self) -> set[int]:
        """Its switches by `assign_switches`, computed again only when the switches or the
        live pollers changed (a hash per switch and poller: 25 ms for 4,096 switches and ten
        pollers, every round otherwise)."""
        key = (tuple(self._inventory), tuple(self.live))
        if key != self._share_key:
            assignment = assign_switches(key[0], self.live)
            self._share_key = key
            self._share_ids = {i for i, poller in assignment.items() if poller == self.poller_id}
        return self._share_ids

    def ensure_partitions(self) -> None:
        """Make the partitions of the samples to come, when the ones made run out within a
        span (`partitions.ensure_ahead`): the code that writes makes room for its rows."""
        now = utcnow()
        if now + self._partition_span < self._partitions_until:
            return
        try:
            self._partitions_until = partitions.ensure_ahead(
                self._engine, now, self._partition_span
            )
        except sa.exc.SQLAlchemyError as exc:  # tried again next round; DEFAULT holds samples
            logger.warning("telemetry partitions not made: %s", exc)

    def _round_took(self, seconds: float) -> None:
        """Time a round (the inventory's re-read included, when due). One longer than its
        half period delays the next renewal; rounds back to back longer than ``LEASE_MARGIN``
        of half a lease let every lease lapse (its switches go unread): say so before that."""
        self.metrics.lease_round_duration.observe(seconds)
        if seconds <= self.round_s:
            return
        self.slow_rounds += 1
        if self.slow_rounds == 1 or self.slow_rounds % 100 == 0:
            logger.warning(
                "lease round took %.3f s, over its %.3f s; leases lapse once rounds take "
                "%.3f s (%d switches; raise telemetry_poll_interval_s or run more pollers): "
                "%d slow rounds",
                seconds,
                self.round_s,
                LEASE_MARGIN * self.lease_s / 2,
                len(self.switches),
                self.slow_rounds,
            )

    def _clock(self) -> float:
        return time.monotonic()

    def _start_switch(self, watch: SwitchWatch, lease_until: float) -> None:
        poller = SwitchPoller(
            watch, self._pool, self._settings.telemetry_poll_interval_s, metrics=self.metrics
        )
        poller.lease_until = lease_until
        stop = threading.Event()
        thread = threading.Thread(
            target=poller.run,
            args=(stop, self.sink.offer),
            name=f"poll-switch-{watch.switch_id}",
            daemon=True,
        )
        self.switches[watch.switch_id] = poller
        self._threads[watch.switch_id] = (thread, stop)
        logger.info("polling switch %s", watch.switch_id)
        thread.start()

    def _stop_switches(self, switch_ids: Collection[int]) -> None:
        """Stop these switch pollers: all are told first, then each is waited for, so that
        stopping many (a poller joining takes a share of them) waits for the slowest poll in
        progress, not for their sum."""
        stopping = []
        for switch_id in switch_ids:
            thread, stop = self._threads.pop(switch_id)
            del self.switches[switch_id]
            stop.set()
            stopping.append((switch_id, thread))
        for switch_id, thread in stopping:
            thread.join(timeout=10)
            self.metrics.forget_switch(switch_id)
            logger.info("stopped polling switch %s", switch_id)

    def _lapse(self) -> None:
        """Stop the switch pollers whose lease was not renewed in time."""
        now = self._clock()
        lapsed = [i for i, poller in self.switches.items() if poller.lease_until <= now]
        for switch_id in lapsed:
            logger.warning("lease of switch %s not renewed in time", switch_id)
        self._stop_switches(lapsed)
        self.metrics.switches.set(len(self.switches))

    def _serve_metrics(self) -> WSGIServer | None:
        """Start serving its metrics, if `poller_metrics_port` is set. A port that cannot be
        bound (in use, not allowed) is logged and the poller runs without them: its switches
        matter more than its own figures, and Prometheus reports the target down."""
        host, port = self._settings.poller_metrics_host, self._settings.poller_metrics_port
        if port is None:
            return None
        try:
            server, _ = self.metrics.serve(host, port)
        except OSError as exc:
            logger.error("poller metrics not served on %s:%d: %s", host, port, exc)
            return None
        self.metrics_port = server.server_port
        return server

    def run(self, stop: threading.Event) -> None:
        """Poll its share of the switches until ``stop`` is set, then give them up. Serves
        the poller's metrics meanwhile, if `poller_metrics_port` is set."""
        server = self._serve_metrics()
        sink_stop = threading.Event()
        sink = threading.Thread(target=self.sink.run, args=(sink_stop,), name="telemetry-sink")
        sink.start()
        logger.info("telemetry poller %s running", self.poller_id)
        connection: sa.Connection | None = None
        loaded = False
        refresh_at = 0.0
        try:
            while not stop.is_set():
                started = self._clock()
                try:
                    if connection is None:
                        connection = self._engine.connect().execution_options(
                            isolation_level="AUTOCOMMIT"
                        )
                    if not loaded:
                        self.alerts.load()
                        loaded = True
                    if started >= refresh_at:
                        self.refresh()
                        refresh_at = started + self._settings.telemetry_refresh_s
                    self.lease_round(connection)
                    self._round_took(self._clock() - started)
                    self.ensure_partitions()
                except sa.exc.SQLAlchemyError as exc:
                    logger.warning("lease round failed: %s", exc)
                    if connection is not None:
                        with suppress(sa.exc.SQLAlchemyError):
                            connection.close()
                        connection = None
                self._lapse()
                stop.wait(max(0.0, self.round_s - (self._clock() - started)))
        finally:
            self.active.clear()
            self.metrics.active.set(0)
            self._stop_switches(list(self.switches))
            self.metrics.switches.set(0)
            with suppress(sa.exc.SQLAlchemyError):
                with self._engine.connect().execution_options(
                    isolation_level="AUTOCOMMIT"
                ) as leaving:
                    leases.leave(leaving, self.poller_id)
            if connection is not None:
                with suppress(sa.exc.SQLAlchemyError):
                    connection.close()
            sink_stop.set()
            sink.join(timeout=10)
            if server is not None:
                server.shutdown()
                server.server_close()
            self._dispatch.shutdown(wait=True)
            self._redis.close()
            self._engine.dispose()
