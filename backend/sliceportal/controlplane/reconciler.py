"""Reconciling one switch with the database: the control plane's one operation.

Under a per-switch advisory lock (two reconciliations of one switch never interleave):

1. read the switch row and the slices crossing it, translate them (`desired.intents`) and merge
   them (`domain.reconcile.desired_state`);
2. ask the switch for its pipeline cookie, and when it is ours, read one default entry back
   (the cookie alone proves nothing); push the pipeline when it has none (a restarted switch)
   or cannot serve ours, or when deploying and it runs another one; a reconciliation leaves a
   foreign pipeline alone and says so, and pushes nothing without the device config a target
   needs (`Pipeline.check_deployable`);
3. read its entries and its `slice_meter` cells back, `plan` the difference (`plan_meters` for
   the meter cells of meter slices), mark the slices about to be written `deploying`, write
   the plan (batches of at most 1,000, each update with its own outcome: meter cells
   configured first, then the table entries, then the cells nobody wants reset) and read back
   again;
4. in one transaction: per slice on this switch, record what the switch confirmed
   (`SliceDeployment`: digest of the confirmed entries, or the error of a refusal the read-back
   still shows), then move the slice to `active` when every switch it crosses confirmed what
   it asks for now, to `failed` with the switch's (or the translation's) error text, or leave
   it waiting; and record the switch's status (`SwitchSync`) and reachability.

A switch that does not answer is recorded unreachable, with its slices pending: nothing it held
is confirmed any more (the API then reports its sync figures as unknown). Its circuit breaker
(`scheduling.Breaker`) opens, and until the probe finds it answering, reconciliations of it
return at once (`Outcome.BACKED_OFF`) instead of waiting out the connect timeout. A switch not
recorded reachable gets the probe's deadline (1 s) to connect, one recorded reachable the
settings' `p4rt_connect_timeout_s`.

Every state change is logged in the change log as the system (user None) with the task's
request id. Row locks are taken in the API's order (slices by id, then the switch row), so a
worker and a request never deadlock. Talking to the switch happens with no transaction open.

A run may be stopped anywhere (the task's soft time limit, docs/controlplane.md "Lanes"): the
connection holding the switch's lock and the switch's session are then closed, not reused, so
the switch is free at once; the next run reads back what the switch holds and writes the rest.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import logging
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum

import sqlalchemy as sa
from sqlalchemy.orm import Session, sessionmaker

from sliceportal.controlplane.desired import intents
from sliceportal.controlplane.scheduling import PROBE_TIMEOUT_S, Breaker
from sliceportal.db import changes
from sliceportal.db.changes import Change, ChangeContext
from sliceportal.db.models import Slice, SliceDeployment, SliceSwitch, Switch, SwitchSync
from sliceportal.domain import reconcile as rc
from sliceportal.domain.dataplane import MeterConfig, SharedRows, TableEntry
from sliceportal.p4rt.connection import SwitchTarget
from sliceportal.p4rt.errors import SwitchError, TransientSwitchError
from sliceportal.p4rt.pipeline import MissingDeviceConfig, Pipeline
from sliceportal.p4rt.session import SessionPool, SwitchSession
from sliceportal.schemas.choices import ChangeAction, SliceState, SwitchState
from sliceportal.services.slices import slice_query

logger = logging.getLogger(__name__)

LOCK_NAMESPACE = 0x511CE
"""First key of `pg_advisory_lock(int4, int4)` for switch locks (the second is the switch id).
PostgreSQL keeps two-key locks apart from one-key ones such as the migrations' lock."""
LOCK_WAIT_S = 120.0
"""How long a reconciliation waits for another one of the same switch to finish."""


class Outcome(StrEnum):
    GONE = "gone"
    BUSY = "busy"
    IN_SYNC = "in sync"
    APPLIED = "applied"
    FOREIGN_PIPELINE = "foreign pipeline"
    NO_DEVICE_CONFIG = "no device config"
    REFUSED = "refused"
    UNREACHABLE = "unreachable"
    BACKED_OFF = "backed off"
    """The switch did not answer lately: its breaker is open until the probe reaches it."""


@dataclass
class Report:
    """What one reconciliation did, returned by the tasks (and logged by Celery)."""

    switch_id: int
    outcome: Outcome
    pipeline_pushed: bool = False
    inserted: int = 0
    modified: int = 0
    deleted: int = 0
    failed: int = 0
    meters_configured: int = 0
    meters_reset: int = 0

    def as_dict(self) -> dict[str, object]:
        return {**dataclasses.asdict(self), "outcome": self.outcome.value}


@contextlib.contextmanager
def switch_lock(engine: sa.Engine, switch_id: int, *, wait: bool) -> Iterator[bool]:
    """Hold the switch's session-level advisory lock while the block runs; yields False when
    `wait` is off and another reconciliation holds it. A crashed worker's lock dies with its
    connection. So does the lock of a run that raised, whatever it raised: the task's soft
    time limit may strike between any two statements, even between taking the lock and the
    block, and only closing the connection (not handing it back to the pool) surely frees it."""
    with engine.connect() as conn:
        try:
            locked = _take_lock(conn, switch_id, wait=wait)
            yield locked
        except BaseException:
            conn.invalidate()
            raise
        if locked:
            try:
                conn.execute(sa.select(sa.func.pg_advisory_unlock(LOCK_NAMESPACE, switch_id)))
                conn.commit()
            except sa.exc.DBAPIError:  # the server went away, and the lock with it
                conn.invalidate()
            except BaseException:  # stopped while unlocking: the lock may still be held
                conn.invalidate()
                raise


def _take_lock(conn: sa.Connection, switch_id: int, *, wait: bool) -> bool:
    if wait:
        conn.execute(sa.text(f"SET LOCAL lock_timeout = {int(LOCK_WAIT_S * 1000)}"))
        conn.execute(sa.select(sa.func.pg_advisory_lock(LOCK_NAMESPACE, switch_id)))
        locked = True
    else:
        locked = bool(
            conn.execute(
                sa.select(sa.func.pg_try_advisory_lock(LOCK_NAMESPACE, switch_id))
            ).scalar_one()
        )
    conn.commit()
    return locked


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


@dataclass
class _Written:
    """The outcome of writing a plan: errors per slice (owners of refused entries) and the
    refused deletions and meter resets, which belong to no slice. A refusal counts only
    while the read-back still disagrees (`_record`): a write still landing from a run whose
    process died makes ours fail with ALREADY_EXISTS for entries that are then exactly right."""

    slice_errors: dict[int, str] = dataclasses.field(default_factory=dict)
    refused_deletes: dict[rc.Key, str] = dataclasses.field(default_factory=dict)
    refused_resets: dict[rc.MeterKey, str] = dataclasses.field(default_factory=dict)
    failed: int = 0

    def switch_errors(
        self, present: Mapping[rc.Key, TableEntry], meters: Mapping[rc.MeterKey, MeterConfig]
    ) -> str | None:
        """The refusals the switch still shows: entries not deleted, cells not reset."""
        errors = [text for key, text in self.refused_deletes.items() if key in present]
        errors += [text for key, text in self.refused_resets.items() if key in meters]
        return "; ".join(errors) or None


class Reconciler:
    """Reconciles switches for one task run (`context` names the task in the change log)."""

    def __init__(
        self,
        engine: sa.Engine,
        pool: SessionPool,
        pipeline: Pipeline,
        context: ChangeContext,
        breaker: Breaker,
    ) -> None:
        self.engine = engine
        self.sessions: sessionmaker[Session] = sessionmaker(engine, expire_on_commit=False)
        self.pool = pool
        self.pipeline = pipeline
        self.context = context
        self.breaker = breaker

    def run(self, switch_id: int, *, deploy: bool = False, wait: bool = True) -> Report:
        """Reconcile one switch. A switch that does not answer is recorded unreachable and
        its breaker opened (`Outcome.UNREACHABLE`); other switch errors are recorded too."""
        with switch_lock(self.engine, switch_id, wait=wait) as locked:
            if not locked:
                return Report(switch_id, Outcome.BUSY)
            return self._run_locked(switch_id, deploy)

    def record_unreachable(self, switch_id: int, error: str) -> bool:
        """Record what a probe found: the switch does not answer. Nothing is recorded (False)
        while a reconciliation holds the switch: it records what it finds itself."""
        with switch_lock(self.engine, switch_id, wait=False) as locked:
            if locked:
                self._switch_problem(switch_id, SwitchState.UNREACHABLE, f"unreachable: {error}")
            return locked

    def _run_locked(self, switch_id: int, deploy: bool) -> Report:
        with self.sessions() as db:
            switch = db.get(Switch, switch_id)
            if switch is None:
                self.pool.drop(switch_id)
                return Report(switch_id, Outcome.GONE)
            target, name = SwitchTarget.of(switch), switch.name
            if self.breaker.is_open(target):
                return Report(switch_id, Outcome.BACKED_OFF)
            known = switch.state is SwitchState.REACHABLE
            wanted = rc.desired_state(intents(db, switch_id=switch_id).values())
        session: SwitchSession | None = None
        try:
            session = self.pool.get(target, timeout_s=None if known else PROBE_TIMEOUT_S)
            report = self._sync(session, switch_id, name, wanted, deploy)
        except TransientSwitchError as exc:
            self.pool.drop(switch_id)
            self.breaker.failed(target)
            self._switch_problem(switch_id, SwitchState.UNREACHABLE, f"unreachable: {exc}")
            return Report(switch_id, Outcome.UNREACHABLE)
        except SwitchError as exc:
            self.breaker.close([target])
            self._switch_problem(switch_id, SwitchState.REACHABLE, f"refused: {exc}")
            return Report(switch_id, Outcome.REFUSED)
        except BaseException:
            # Anything else, above all the task's soft time limit (it may strike anywhere): a
            # switch that is slow to answer may be slow to end the stream too, so the session
            # is closed at once, calls in flight cancelled, instead of handing mastership back.
            self.pool.drop(switch_id, at_once=True)
            session = None
            raise
        finally:
            if session is not None:
                session.release_mastership()
        self.breaker.close([target])
        return report

    def _sync(
        self, session: SwitchSession, switch_id: int, name: str, wanted: rc.Desired, deploy: bool
    ) -> Report:
        report = Report(switch_id, Outcome.IN_SYNC)
        cookie = reported = session.pipeline_cookie()
        # A cookie alone proves nothing (BMv2 reports the one it was given with an empty
        # device config, and then fails every read and write): one small read must agree.
        problem = session.pipeline_problem() if cookie == self.pipeline.cookie else None
        if problem is not None:
            logger.warning("switch %r: %s; pushing the pipeline again", name, problem)
            cookie = None
        if cookie != self.pipeline.cookie:
            if cookie is not None and not deploy:
                self._switch_problem(
                    switch_id,
                    SwitchState.REACHABLE,
                    f"runs another pipeline (cookie {cookie:016x}); deploy the switch to "
                    "replace it",
                    cookie=cookie,
                )
                return Report(switch_id, Outcome.FOREIGN_PIPELINE)
            try:
                session.push_pipeline(self.pipeline.cookie)
            except MissingDeviceConfig as exc:
                error = str(exc) if problem is None else f"{problem}; {exc}"
                self._switch_problem(switch_id, SwitchState.REACHABLE, error, cookie=reported)
                return Report(switch_id, Outcome.NO_DEVICE_CONFIG)
            report.pipeline_pushed = True
        actual = session.read_entries()
        plan = rc.plan(wanted.entries, actual)
        meters = _read_meters(session)
        meter_plan = rc.plan_meters(wanted.meters, meters)
        written = _Written()
        if plan or meter_plan:
            report.outcome = Outcome.APPLIED
            report.inserted = plan.count(rc.UpdateKind.INSERT)
            report.modified = plan.count(rc.UpdateKind.MODIFY)
            report.deleted = plan.count(rc.UpdateKind.DELETE)
            report.meters_configured = len(meter_plan.configure)
            report.meters_reset = len(meter_plan.reset)
            self._mark_deploying(name, wanted, plan, meter_plan)
            written = _write(session, name, wanted, plan, meter_plan)
            report.failed = written.failed
            actual = session.read_entries()
            meters = _read_meters(session)
        self._record(switch_id, rc.index_entries(actual), {m.key: m for m in meters}, written)
        return report

    # -- database ---------------------------------------------------------------------------

    @staticmethod
    def _transition(row: Slice, state: SliceState, detail: str | None) -> list[Change]:
        """Move a (locked) slice to `state`; its change-log entry (none when nothing changes),
        for the caller to write with the others of its pass in one `changes.write`."""
        if row.state is state and row.state_detail == detail:
            return []
        before = row.snapshot()
        row.state = state
        row.state_detail = detail
        return [Change.of(ChangeAction.UPDATE, row, before)]

    def _set_reachability(self, db: Session, switch: Switch, state: SwitchState) -> SwitchSync:
        """Record the switch's reachability (logged when it changes); its status row."""
        if switch.state is not state:
            before = switch.snapshot()
            switch.state = state
            changes.write(db, self.context, [Change.of(ChangeAction.UPDATE, switch, before)])
        if switch.sync is None:
            switch.sync = SwitchSync(switch_id=switch.id, entries_desired=0, entries_installed=0)
        switch.sync.last_reconcile_at = _now()
        if state is SwitchState.REACHABLE:
            switch.sync.last_contact_at = switch.sync.last_reconcile_at
        return switch.sync

    def _locked_slices(self, db: Session, switch_id: int, *, waiting: bool = False) -> list[Slice]:
        """The slices crossing the switch (only pending/deploying ones when `waiting`), locked
        in id order."""
        query = (
            slice_query()
            .where(
                Slice.id.in_(
                    sa.select(SliceSwitch.slice_id).where(SliceSwitch.switch_id == switch_id)
                )
            )
            .order_by(Slice.id)
            .with_for_update(of=Slice)
        )
        if waiting:
            query = query.where(Slice.state.in_([SliceState.PENDING, SliceState.DEPLOYING]))
        return list(db.scalars(query))

    def _mark_deploying(
        self, name: str, wanted: rc.Desired, plan: rc.Plan, meter_plan: rc.MeterPlan
    ) -> None:
        """Pending slices whose entries (or meter cells) are about to be written become
        `deploying`."""
        owners = {
            owner
            for update in plan.updates
            if update.kind is not rc.UpdateKind.DELETE
            for owner in wanted.owners.get(rc.entry_key(update.entry), ())
        } | {wanted.meter_owners[m.key] for m in meter_plan.configure}
        if not owners:
            return
        with self.sessions() as db:
            rows = db.scalars(
                slice_query()
                .where(Slice.id.in_(owners), Slice.state == SliceState.PENDING)
                .order_by(Slice.id)
                .with_for_update(of=Slice)
            )
            detail = f"writing to switch {name!r}"
            logged = [
                c for row in rows for c in self._transition(row, SliceState.DEPLOYING, detail)
            ]
            changes.write(db, self.context, logged)
            db.commit()

    def _switch_problem(
        self, switch_id: int, state: SwitchState, error: str, *, cookie: int | None = None
    ) -> None:
        """The switch cannot take entries now: say why on it and on the slices waiting for it
        (slices being written go back to pending). When it does not answer, nothing it held is
        confirmed any more: its active slices become pending too (failed ones keep their
        error) and their confirmations there are forgotten, so a slice crossing another switch
        is not made active by that switch's next run."""
        unreachable = state is SwitchState.UNREACHABLE
        with self.sessions() as db:
            switch = db.get(Switch, switch_id)
            if switch is None:
                return
            detail = f"waiting for switch {switch.name!r}: {error}"
            rows = self._locked_slices(db, switch_id, waiting=not unreachable)
            logged = [
                change
                for row in rows
                if row.state is not SliceState.FAILED
                for change in self._transition(row, SliceState.PENDING, detail)
            ]
            changes.write(db, self.context, logged)
            if unreachable:
                db.execute(
                    sa.update(SliceDeployment)
                    .where(SliceDeployment.switch_id == switch_id)
                    .values(digest=None)
                )
            sync = self._set_reachability(db, switch, state)
            sync.last_error = error
            if cookie is not None:
                sync.pipeline_cookie = f"{cookie:016x}"
            if cookie is not None or unreachable:
                sync.pipeline_in_sync = False
            db.commit()

    def _record(
        self,
        switch_id: int,
        present: Mapping[rc.Key, TableEntry],
        meters: Mapping[rc.MeterKey, MeterConfig],
        written: _Written,
    ) -> None:
        with self.sessions() as db:
            switch = db.get(Switch, switch_id)
            if switch is None:
                return
            rows = self._locked_slices(db, switch_id)
            ids = [row.id for row in rows]
            now_intents = intents(db, slice_ids=ids)
            here = rc.desired_state(i for (_, on), i in now_intents.items() if on == switch_id)
            deployments = {
                (d.slice_id, d.switch_id): d
                for d in db.scalars(
                    sa.select(SliceDeployment).where(SliceDeployment.slice_id.in_(ids))
                )
            }
            involved = {on for _, on in now_intents} | {switch_id}
            named = sa.select(Switch.id, Switch.name).where(Switch.id.in_(involved))
            switch_names = dict(db.execute(named).tuples().all())
            now = _now()
            logged: list[Change] = []
            groups: dict[SharedRows, bool] = {}
            for row in rows:
                intent = now_intents.get((row.id, switch_id))
                held = intent is not None and rc.confirmed(intent, present, meters, groups)
                refused = None if held else written.slice_errors.get(row.id)
                error = here.rejected.get(row.id) or refused
                ok = error is None and held
                deployment = deployments.get((row.id, switch_id))
                if deployment is None:
                    deployment = SliceDeployment(slice_id=row.id, switch_id=switch_id)
                    db.add(deployment)
                    deployments[(row.id, switch_id)] = deployment
                if ok and intent is not None:
                    digest = rc.intent_digest(intent)
                    if deployment.digest != digest:
                        deployment.digest, deployment.confirmed_at = digest, now
                else:
                    deployment.digest = None
                deployment.error = error
                state, detail = _slice_status(row, deployments, now_intents, switch_names)
                logged += self._transition(row, state, detail)
            changes.write(db, self.context, logged)
            sync = self._set_reachability(db, switch, SwitchState.REACHABLE)
            sync.pipeline_cookie = f"{self.pipeline.cookie:016x}"
            sync.pipeline_in_sync = True
            sync.last_error = written.switch_errors(present, meters)
            sync.entries_desired = len(here.entries)
            sync.entries_installed = len(present)
            db.commit()


def _read_meters(session: SwitchSession) -> list[MeterConfig]:
    """The configured cells of the meters the portal manages."""
    return [cell for meter in rc.MANAGED_METERS for cell in session.read_meters(meter)]


def _write(
    session: SwitchSession,
    name: str,
    wanted: rc.Desired,
    plan: rc.Plan,
    meter_plan: rc.MeterPlan,
) -> _Written:
    """Write the plan step by step (meter cells configured first, reset last); map each
    refused update back to the slices needing it."""
    written = _Written()
    if meter_plan.configure:
        outcomes = session.write_meters(meter_plan.configure)
        for config, outcome in zip(meter_plan.configure, outcomes, strict=True):
            if not outcome.ok:
                written.failed += 1
                owner = wanted.meter_owners[config.key]
                written.slice_errors.setdefault(
                    owner, f"switch {name!r} refused {rc.describe_meter(config.key)}: {outcome}"
                )
    _write_steps(session, name, wanted, plan, written)
    if meter_plan.reset:
        for key, outcome in zip(
            meter_plan.reset, session.reset_meters(meter_plan.reset), strict=True
        ):
            if not outcome.ok:
                written.failed += 1
                written.refused_resets[key] = (
                    f"switch {name!r} refused the reset of {rc.describe_meter(key)}: {outcome}"
                )
    return written


def _write_steps(
    session: SwitchSession, name: str, wanted: rc.Desired, plan: rc.Plan, written: _Written
) -> None:
    for step in plan.steps:
        for update, outcome in zip(step, session.write(step), strict=True):
            if outcome.ok:
                continue
            written.failed += 1
            key = rc.entry_key(update.entry)
            text = f"switch {name!r} refused the {update.kind} of {rc.describe(key)}: {outcome}"
            if update.kind is rc.UpdateKind.DELETE:
                written.refused_deletes[key] = text
            for owner in wanted.owners.get(key, ()):
                written.slice_errors.setdefault(owner, text)


def _slice_status(
    row: Slice,
    deployments: Mapping[tuple[int, int], SliceDeployment],
    now_intents: Mapping[tuple[int, int], rc.SliceIntent],
    switch_names: Mapping[int, str],
) -> tuple[SliceState, str | None]:
    """A slice's state from what each switch it crosses confirmed: active when all of them
    hold exactly what it asks for now, failed when one refused it (or cannot hold it)."""
    crossed = [r.switch_id for r in row.switch_rows]
    errors = [
        f"on switch {switch_names.get(on, on)!r}: {d.error}"
        for on in crossed
        if (d := deployments.get((row.id, on))) is not None and d.error is not None
    ]
    if errors:
        return SliceState.FAILED, "; ".join(errors)
    waiting = [
        switch_names.get(on, str(on))
        for on in crossed
        if not _confirmed_on(deployments.get((row.id, on)), now_intents.get((row.id, on)))
    ]
    if not waiting:
        return SliceState.ACTIVE, None
    state = row.state if row.state in (SliceState.PENDING, SliceState.DEPLOYING) else None
    return state or SliceState.PENDING, f"waiting for switch {_names(waiting)}"


def _confirmed_on(deployment: SliceDeployment | None, intent: rc.SliceIntent | None) -> bool:
    return (
        deployment is not None
        and intent is not None
        and intent.error is None
        and deployment.digest == rc.intent_digest(intent)
    )


def _names(names: Iterable[str]) -> str:
    return ", ".join(repr(name) for name in names)
