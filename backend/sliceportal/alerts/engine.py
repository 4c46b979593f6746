"""The alert engine: runs the SLA rules over every sample the poller takes and stores what
changes (an alert opens, an alert resolves), with its events and webhook deliveries.

It runs in the poller's sink thread; its state (one `sla.Hold` per slice, switch and rule) is
also pruned by the inventory refresh, so a lock serialises the two (the refresh comes every few
seconds: no contention to speak of). A slice crossing several switches is sampled on each; its
alert for a rule is open while the rule fires on any of them. The holds are in memory: on start
the engine reloads the firing alerts, so that a breach still going on does not open a second
one and one that ended resolves.

A transition is applied to memory only once its transaction has committed: if PostgreSQL is
down the next sample causes the same transition again.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql
from sqlalchemy.orm import Session, sessionmaker

from sliceportal.alerts.events import RecordedEvent, record_event
from sliceportal.db.models import Alert
from sliceportal.domain import sla
from sliceportal.domain.telemetry import BatchMetrics
from sliceportal.schemas.choices import AlertEventKind, AlertState

logger = logging.getLogger(__name__)

HoldKey = tuple[int, int, sla.Rule]
"""(slice id, switch id, rule)"""
AlertKey = tuple[int, sla.Rule]
"""(slice id, rule): at most one firing alert each"""
RULES = tuple(sla.Rule)


@dataclass(frozen=True)
class _Change:
    key: HoldKey
    hold: sla.Hold
    transition: sla.Transition
    check: sla.Check | None


@dataclass(frozen=True)
class Timing:
    for_s: float
    clear_for_s: float


class AlertEngine:
    def __init__(
        self,
        sessions: sessionmaker[Session],
        timing: Timing,
        webhook_urls: list[str],
        after_commit: Callable[[list[RecordedEvent]], None],
    ) -> None:
        self._sessions = sessions
        self._timing = timing
        self._urls = webhook_urls
        self._after_commit = after_commit
        self._holds: dict[HoldKey, sla.Hold] = {}
        self._firing: dict[AlertKey, frozenset[int]] = {}
        self._lock = threading.Lock()

    def load(self) -> None:
        """Take over the alerts still firing (after a restart, or from another poller)."""
        with self._sessions() as session:
            rows = session.execute(
                sa.select(Alert.slice_id, Alert.rule, Alert.switch_id).where(
                    Alert.state == AlertState.FIRING
                )
            ).all()
        with self._lock:
            self._holds.clear()
            self._firing.clear()
            for slice_id, rule, switch_id in rows:
                switch = switch_id if switch_id is not None else 0
                self._holds[(slice_id, switch, rule)] = sla.Hold(firing=True)
                self._firing[(slice_id, rule)] = frozenset({switch})

    def observe(
        self,
        switch_id: int,
        t: dt.datetime,
        slices: Sequence[tuple[int, sla.Targets]],
        metrics: BatchMetrics,
    ) -> None:
        """Advance every rule of every slice sampled on ``switch_id`` at ``t`` (``slices``:
        (slice id, targets) of each row of ``metrics``).

        The rules are evaluated for the whole batch at once; only a slice with a breach or a
        hold in progress costs a step of Python (its row found with numpy, so thousands of
        slices within their SLAs cost none), and only a transition builds its message.
        """
        columns = sla.TargetArrays.of([targets for _, targets in slices])
        breached = sla.breaches(metrics, columns)
        intervals = metrics.interval_s.tolist()
        with self._lock:
            timing = self._timing
            held = {key[0] for key in self._holds if key[1] == switch_id}
            rows = set(np.flatnonzero(breached.any(axis=1)).tolist())
            rows.update(i for i, (slice_id, _) in enumerate(slices) if slice_id in held)
            changes: list[_Change] = []
            for i in sorted(rows):
                slice_id, targets = slices[i]
                for rule, is_breached in zip(RULES, breached[i].tolist(), strict=True):
                    key = (slice_id, switch_id, rule)
                    hold = self._holds.get(key)
                    if hold is None and not is_breached:
                        continue
                    hold, transition = sla.advance(
                        hold or sla.Hold(),
                        is_breached,
                        intervals[i],
                        for_s=timing.for_s,
                        clear_for_s=timing.clear_for_s,
                    )
                    if transition is not None:
                        check = sla.check(metrics, i, targets, rule)
                        changes.append(_Change(key, hold, transition, check))
                    elif hold.firing or hold.breached_s:
                        self._holds[key] = hold
                    else:  # clear and not firing: the same as no hold at all
                        self._holds.pop(key, None)
            if changes:
                self._apply(changes, t)

    def retain(self, sampled: set[tuple[int, int]], t: dt.datetime) -> None:
        """Forget the (slice, switch) pairs no longer sampled (slice moved or deleted, switch
        gone); an alert that only they kept firing resolves."""
        with self._lock:
            self._holds = {k: h for k, h in self._holds.items() if (k[0], k[1]) in sampled}
            gone = [
                _Change((slice_id, switch, rule), sla.Hold(), sla.Transition.RESOLVE, None)
                for (slice_id, rule), switches in self._firing.items()
                for switch in switches
                if (slice_id, switch) not in sampled
            ]
            if gone:
                self._apply(gone, t)

    def _apply(self, changes: list[_Change], t: dt.datetime) -> None:
        firing = dict(self._firing)
        events: list[RecordedEvent] = []
        try:
            with self._sessions() as session:
                for change in changes:
                    slice_id, switch_id, rule = change.key
                    before = firing.get((slice_id, rule), frozenset())
                    if change.transition is sla.Transition.FIRE:
                        after = before | {switch_id}
                        if not before and change.check is not None:
                            events += self._open(session, slice_id, switch_id, change.check, t)
                    else:
                        after = before - {switch_id}
                        if before and not after:
                            events += self._resolve(session, slice_id, rule, t)
                    firing[(slice_id, rule)] = after
                session.commit()
        except sa.exc.SQLAlchemyError as exc:
            logger.warning("alert changes not stored, retried with the next sample: %s", exc)
            return
        for change in changes:
            if change.hold.firing or change.hold.breached_s:
                self._holds[change.key] = change.hold
            else:
                self._holds.pop(change.key, None)
        self._firing = {key: switches for key, switches in firing.items() if switches}
        if events:
            self._after_commit(events)

    def _open(
        self, session: Session, slice_id: int, switch_id: int, check: sla.Check, t: dt.datetime
    ) -> list[RecordedEvent]:
        """Open the alert, unless one is firing already (opened before a restart)."""
        alert_id = session.scalar(
            postgresql.insert(Alert)
            .values(
                slice_id=slice_id,
                switch_id=switch_id,
                rule=check.rule,
                message=check.message,
                value=check.value,
                threshold=check.threshold,
                started_at=t,
            )
            .on_conflict_do_nothing(
                index_elements=["slice_id", "rule"], index_where=sa.text("state = 'firing'")
            )
            .returning(Alert.id)
        )
        if alert_id is None:
            return []
        alert = session.get_one(Alert, alert_id)
        return [record_event(session, alert, AlertEventKind.FIRING, self._urls)]

    def _resolve(
        self, session: Session, slice_id: int, rule: sla.Rule, t: dt.datetime
    ) -> list[RecordedEvent]:
        alert = session.scalar(
            sa.select(Alert)
            .where(Alert.slice_id == slice_id, Alert.rule == rule, Alert.state == AlertState.FIRING)
            .with_for_update()
        )
        if alert is None:  # resolved elsewhere, or its slice deleted
            return []
        alert.state = AlertState.RESOLVED
        alert.resolved_at = t
        return [record_event(session, alert, AlertEventKind.RESOLVED, self._urls)]
