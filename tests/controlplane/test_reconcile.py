"""Reconciling a switch (no Celery here): the database's slices against the emulator over gRPC."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from sqlalchemy.orm import Session, sessionmaker

from controlplane.network import (
    ELECTION_ID,
    SETUP,
    held,
    make_link,
    make_slice,
    make_switch,
    make_undeployable_slice,
    state_of,
    worker_changes,
)
from sliceportal.controlplane.reconciler import LOCK_NAMESPACE, Outcome, Reconciler, switch_lock
from sliceportal.core.config import Settings
from sliceportal.db.models import OutboxMessage, Slice, SliceDeployment, Switch
from sliceportal.db.session import create_db_engine
from sliceportal.domain import dataplane as dp
from sliceportal.domain.reconcile import EntryUpdate, UpdateKind
from sliceportal.emulator import entities
from sliceportal.emulator.errors import Code, P4RuntimeError
from sliceportal.emulator.server import EmulatorServer
from sliceportal.p4rt.connection import SwitchTarget
from sliceportal.p4rt.proto import p4r
from sliceportal.p4rt.session import connect
from sliceportal.schemas.choices import SwitchState
from sliceportal.services import slices


def one_switch(
    db: sessionmaker[Session], settings: Settings, emulator: EmulatorServer, slices_: int = 2
) -> tuple[int, list[int]]:
    with db() as session:
        switch = make_switch(session, emulator.address, emulator.service.device_id)
        link = make_link(session, settings, switch.id)
        ids = [make_slice(session, [link.id], n).id for n in range(1, slices_ + 1)]
        return switch.id, ids


def test_slices_become_active_only_after_read_back_and_a_second_run_changes_nothing(
    db: sessionmaker[Session], settings: Settings, emulator: EmulatorServer, reconciler: Reconciler
) -> None:
    switch_id, (first, second) = one_switch(db, settings, emulator)
    with db() as session:
        assert state_of(session, first) == ("pending", None)
    report = reconciler.run(switch_id)
    assert report.outcome is Outcome.APPLIED and report.pipeline_pushed
    assert (report.inserted, report.modified, report.deleted, report.failed) == (6, 0, 0, 0)
    assert len(held(emulator, settings)) == 6  # 2 x (classifier, policy, route)
    with db() as session:
        assert state_of(session, first) == ("active", None)
        assert state_of(session, second) == ("active", None)
        switch = session.get(Switch, switch_id)
        assert switch is not None and switch.state is SwitchState.REACHABLE
        assert switch.sync is not None and switch.sync.pipeline_in_sync
        assert (switch.sync.entries_desired, switch.sync.entries_installed) == (6, 6)
        logged = worker_changes(session, reconciler.context.request_id)
        assert [(c.entity_type.value, c.before and c.before["state"], c.after and c.after["state"])
                for c in logged] == [
            ("slice", "pending", "deploying"),
            ("slice", "pending", "deploying"),
            ("slice", "deploying", "active"),
            ("slice", "deploying", "active"),
            ("switch", "unknown", "reachable"),
        ]  # fmt: skip
        assert all(c.user_id is None for c in logged)
    again = reconciler.run(switch_id)
    assert again.outcome is Outcome.IN_SYNC and not again.pipeline_pushed
    with db() as session:
        assert len(worker_changes(session, reconciler.context.request_id)) == 5


def test_changes_and_deletions_are_written_as_a_diff(
    db: sessionmaker[Session], settings: Settings, emulator: EmulatorServer, reconciler: Reconciler
) -> None:
    switch_id, (first, second) = one_switch(db, settings, emulator)
    reconciler.run(switch_id)
    with db() as session:
        slices.update_slice(session, SETUP, first, slices.SliceUpdate(rate_bps=2e6))
        slices.delete_slice(session, SETUP, second)
        assert state_of(session, first)[0] == "pending"
    report = reconciler.run(switch_id)
    assert (report.inserted, report.modified, report.deleted) == (0, 1, 3)
    assert len(held(emulator, settings)) == 3
    with db() as session:
        assert state_of(session, first) == ("active", None)


def test_the_switch_counts_delays_on_edges_ending_at_the_delay_target(
    db: sessionmaker[Session], settings: Settings, emulator: EmulatorServer, reconciler: Reconciler
) -> None:
    """The slice's delay target is its policy's `hist_target` (the paper's Peering target,
    30 ms, above the former global top edge); a new target is a modified policy."""
    with db() as session:
        switch = make_switch(session, emulator.address, emulator.service.device_id)
        link = make_link(session, settings, switch.id)
        peering = make_slice(session, [link.id], 1, delay_target_s=0.03).id
        switch_id = switch.id

    def targets() -> list[int]:
        return [
            value
            for entry in held(emulator, settings)
            for name, value in entry.params
            if name == "hist_target"
        ]

    report = reconciler.run(switch_id)
    assert report.inserted == 3
    assert targets() == [dp.histogram_target(0.03)]
    with db() as session:
        slices.update_slice(session, SETUP, peering, slices.SliceUpdate(delay_target_s=0.05))
    report = reconciler.run(switch_id)
    assert (report.inserted, report.modified, report.deleted) == (0, 1, 0)
    assert targets() == [dp.histogram_target(0.05)]


def test_entries_nobody_asked_for_are_removed(
    db: sessionmaker[Session], settings: Settings, emulator: EmulatorServer, reconciler: Reconciler
) -> None:
    switch_id, _ = one_switch(db, settings, emulator, slices_=1)
    reconciler.run(switch_id)
    # A leftover, written earlier with our own election id (say, by a portal that lost its
    # database): nothing in the database asks for it.
    earlier = SwitchTarget(0, emulator.address, emulator.service.device_id, ELECTION_ID)
    leftover = connect(earlier, settings=settings)
    try:
        stray = dp.route_entry(dp.Route("192.0.2.0/24", 3, "02:00:00:00:00:09"))
        assert leftover.write([EntryUpdate(UpdateKind.INSERT, stray)])[0].ok
    finally:
        leftover.close()
    report = reconciler.run(switch_id)
    assert report.deleted == 1 and len(held(emulator, settings)) == 3


def test_a_restarted_switch_is_backed_off_then_gets_pipeline_and_entries_back(
    db: sessionmaker[Session], settings: Settings, emulator: EmulatorServer, reconciler: Reconciler
) -> None:
    switch_id, ids = one_switch(db, settings, emulator)
    reconciler.run(switch_id)
    address, device_id = emulator.address, emulator.service.device_id
    emulator.stop(grace=0)
    assert reconciler.run(switch_id).outcome is Outcome.UNREACHABLE
    with db() as session:
        switch = session.get(Switch, switch_id)
        assert switch is not None and switch.state is SwitchState.UNREACHABLE
        assert switch.sync is not None and (switch.sync.last_error or "").startswith("unreachable")
        assert not switch.sync.pipeline_in_sync
        for slice_id in ids:  # active before: nothing is confirmed on a switch out of reach
            state, detail = state_of(session, slice_id)
            assert state == "pending" and "unreachable" in (detail or "")
    target = SwitchTarget(switch_id, address, device_id, ELECTION_ID)
    assert reconciler.breaker.is_open(target) and reconciler.breaker.due([target]) == [False]
    assert reconciler.run(switch_id).outcome is Outcome.BACKED_OFF  # no worker waits on it
    restarted = EmulatorServer(address, device_id)
    restarted.start()
    try:
        assert reconciler.breaker.close([target]) == [True]  # as the probe does when it answers
        report = reconciler.run(switch_id)
        assert report.pipeline_pushed and report.inserted == 6
        assert len(held(restarted, settings)) == 6
        with db() as session:
            switch = session.get(Switch, switch_id)
            assert switch is not None and switch.state is SwitchState.REACHABLE
    finally:
        restarted.stop(grace=0)


def test_a_foreign_pipeline_is_left_alone_until_a_deploy_replaces_it(
    db: sessionmaker[Session], settings: Settings, emulator: EmulatorServer, reconciler: Reconciler
) -> None:
    switch_id, (first, _) = one_switch(db, settings, emulator)
    earlier = SwitchTarget(0, emulator.address, emulator.service.device_id, ELECTION_ID)
    other = connect(earlier, settings=settings)
    try:
        other.push_pipeline(12345)
    finally:
        other.close()
    report = reconciler.run(switch_id)
    assert report.outcome is Outcome.FOREIGN_PIPELINE
    with db() as session:
        state, detail = state_of(session, first)
        assert state == "pending" and "deploy" in (detail or "")
        switch = session.get(Switch, switch_id)
        assert switch is not None and switch.sync is not None
        assert switch.sync.pipeline_cookie == f"{12345:016x}" and not switch.sync.pipeline_in_sync
    deployed = reconciler.run(switch_id, deploy=True)
    assert deployed.pipeline_pushed and deployed.inserted == 6
    with db() as session:
        assert state_of(session, first) == ("active", None)


def test_a_refused_entry_fails_only_its_slice_with_the_switchs_error(
    db: sessionmaker[Session],
    settings: Settings,
    emulator: EmulatorServer,
    reconciler: Reconciler,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    switch_id, (good, bad) = one_switch(db, settings, emulator)  # DP_SIDs 1 and 2
    apply_update = entities.apply_update

    def refuse_the_second_policy(state: object, update: object) -> None:
        body = update.entity.table_entry  # type: ignore[attr-defined]
        if body.table_id == 0x02000004 and body.match[0].exact.value == b"\x02":
            raise P4RuntimeError(Code.RESOURCE_EXHAUSTED, "slice_policy is full")
        apply_update(state, update)  # type: ignore[arg-type]

    monkeypatch.setattr(entities, "apply_update", refuse_the_second_policy)
    report = reconciler.run(switch_id)
    assert report.failed == 1
    with db() as session:
        assert state_of(session, good) == ("active", None)
        state, detail = state_of(session, bad)
        assert state == "failed"
        assert "RESOURCE_EXHAUSTED: slice_policy is full" in (detail or "")
        assert "slice_policy dp_sid=2" in (detail or "")
    monkeypatch.undo()
    reconciler.run(switch_id)  # the switch takes it now: the slice recovers
    with db() as session:
        assert state_of(session, bad) == ("active", None)


@pytest.mark.parametrize("kind", ["insert", "delete"])
def test_a_refusal_the_read_back_contradicts_is_no_error(
    db: sessionmaker[Session],
    settings: Settings,
    emulator: EmulatorServer,
    reconciler: Reconciler,
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
) -> None:
    """Another writer (the Write of a run whose worker was killed, still landing) makes the
    same change just before ours: the switch refuses ours, yet holds exactly what we want."""
    switch_id, ids = one_switch(db, settings, emulator)
    if kind == "delete":
        reconciler.run(switch_id)
        with db() as session:
            slices.delete_slice(session, SETUP, ids[1])
    apply_update = entities.apply_update
    raced = {
        "insert": (p4r.Update.INSERT, Code.ALREADY_EXISTS),
        "delete": (p4r.Update.DELETE, Code.NOT_FOUND),
    }[kind]

    def lose_the_race(state: object, update: p4r.Update) -> None:
        apply_update(state, update)  # type: ignore[arg-type]
        if update.type == raced[0] and update.entity.table_entry.table_id == 0x02000004:
            raise P4RuntimeError(raced[1], "the other writer was first")

    monkeypatch.setattr(entities, "apply_update", lose_the_race)
    report = reconciler.run(switch_id)
    assert report.failed == {"insert": 2, "delete": 1}[kind]  # the slices' policies
    with db() as session:
        assert state_of(session, ids[0]) == ("active", None)
        if kind == "insert":
            assert state_of(session, ids[1]) == ("active", None)
        switch = session.get(Switch, switch_id)
        assert switch is not None and switch.sync is not None
        assert switch.sync.last_error is None
        assert switch.sync.entries_installed == switch.sync.entries_desired


def test_a_slice_the_data_plane_cannot_hold_fails_with_the_reason(
    db: sessionmaker[Session], settings: Settings, emulator: EmulatorServer, reconciler: Reconciler
) -> None:
    with db() as session:
        switch = make_switch(session, emulator.address, emulator.service.device_id)
        link = make_link(session, settings, switch.id)
        tiny = make_undeployable_slice(session, [link.id], 1)
        fine = make_slice(session, [link.id], 2)
        switch_id = switch.id
    reconciler.run(switch_id)
    with db() as session:
        state, detail = state_of(session, tiny.id)
        assert state == "failed" and "burst_limit_s" in (detail or "")
        assert state_of(session, fine.id) == ("active", None)
    assert len(held(emulator, settings)) == 3


def test_of_two_slices_claiming_one_key_the_older_wins(
    db: sessionmaker[Session], settings: Settings, emulator: EmulatorServer, reconciler: Reconciler
) -> None:
    with db() as session:
        switch = make_switch(session, emulator.address, emulator.service.device_id)
        one, two = (
            make_link(session, settings, switch.id, 1),
            make_link(session, settings, switch.id, 2),
        )
        older = make_slice(session, [one.id], 7)
        newer = make_slice(session, [two.id], 8)
        # The API refuses the same prefix out of another port of the switch (match clash);
        # a database from before that check, or edited by hand, may still hold it.
        session.execute(
            sa.update(Slice).where(Slice.id == newer.id).values(ipv4_prefixes=older.ipv4_prefixes)
        )
        session.commit()
        switch_id = switch.id
    reconciler.run(switch_id)
    with db() as session:
        assert state_of(session, older.id) == ("active", None)
        state, detail = state_of(session, newer.id)
        assert state == "failed" and older.name in (detail or "")


def test_a_slice_crossing_two_switches_is_active_once_both_confirm(
    db: sessionmaker[Session],
    settings: Settings,
    emulator: EmulatorServer,
    reconciler: Reconciler,
    device_id: int,
) -> None:
    second = EmulatorServer("127.0.0.1:0", device_id + 1)
    second.start()
    try:
        with db() as session:
            a = make_switch(session, emulator.address, emulator.service.device_id)
            b = make_switch(session, second.address, device_id + 1)
            links = [make_link(session, settings, a.id).id, make_link(session, settings, b.id).id]
            crossing = make_slice(session, links, 1).id
        reconciler.run(a.id)
        with db() as session:
            state, detail = state_of(session, crossing)
            assert state == "deploying" and b.name in (detail or "")
        reconciler.run(b.id)
        with db() as session:
            assert state_of(session, crossing) == ("active", None)
            confirmed = session.scalars(
                sa.select(SliceDeployment.switch_id).where(SliceDeployment.slice_id == crossing)
            )
            assert sorted(confirmed) == sorted([a.id, b.id])
        second.stop(grace=0)
        assert reconciler.run(b.id).outcome is Outcome.UNREACHABLE
        reconciler.run(a.id)  # confirms its part again, not the unreachable one's
        with db() as session:
            state, detail = state_of(session, crossing)
            assert state == "pending" and b.name in (detail or "")
    finally:
        second.stop(grace=0)


def test_an_unreachable_switch_leaves_slices_pending_with_the_reason(
    db: sessionmaker[Session], settings: Settings, reconciler: Reconciler, device_id: int
) -> None:
    with db() as session:
        switch = make_switch(session, "127.0.0.1:9", device_id)
        link = make_link(session, settings, switch.id)
        waiting = make_slice(session, [link.id], 1).id
        switch_id = switch.id
    assert reconciler.run(switch_id).outcome is Outcome.UNREACHABLE
    with db() as session:
        state, detail = state_of(session, waiting)
        assert state == "pending" and "unreachable" in (detail or "")


def test_a_deleted_switch_is_nothing_to_do(reconciler: Reconciler) -> None:
    assert reconciler.run(2**31 - 1).outcome is Outcome.GONE


def test_two_reconciliations_of_one_switch_never_interleave(
    engine: sa.Engine, reconciler: Reconciler
) -> None:
    with switch_lock(engine, 424242, wait=False) as first:
        assert first
        with switch_lock(engine, 424242, wait=False) as second:
            assert not second
        assert reconciler.run(424242, wait=False).outcome is Outcome.BUSY
    with switch_lock(engine, 424242, wait=False) as again:
        assert again


class Stopped(BaseException):
    """What a task's soft time limit raises, as far as the lock can tell: anything, anywhere."""


def _advisory_locks_held(engine: sa.Engine, switch_id: int) -> int:
    with engine.connect() as conn:
        query = sa.text(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted"
            " AND classid = :namespace AND objid = :switch_id"
        )
        found = conn.execute(query, {"namespace": LOCK_NAMESPACE, "switch_id": switch_id})
        return int(found.scalar_one())


def test_a_run_stopped_right_after_taking_the_lock_frees_the_switch(
    settings: Settings,
) -> None:
    """Stopped between taking the lock and running the block (at the commit that follows
    the lock): the connection that holds the lock is closed, not pooled still holding it."""
    engine = create_db_engine(settings)  # of its own: the listener below stays on it
    switch_id = 424243

    def stop(_: sa.Connection) -> None:
        raise Stopped

    try:
        sa.event.listen(engine, "commit", stop, once=True)
        with pytest.raises(Stopped), switch_lock(engine, switch_id, wait=False):
            pytest.fail("the block runs only once the lock is taken and committed")
        assert _advisory_locks_held(engine, switch_id) == 0
    finally:
        engine.dispose()


def test_changes_write_outbox_rows_in_their_own_transaction(
    db: sessionmaker[Session], settings: Settings, emulator: EmulatorServer
) -> None:
    switch_id, (first, _) = one_switch(db, settings, emulator)
    with db() as session:
        rows = session.scalars(
            sa.select(OutboxMessage.args).where(OutboxMessage.task.endswith("reconcile_switch"))
        ).all()
        assert [switch_id] in rows
        before = session.scalar(sa.select(sa.func.count()).select_from(OutboxMessage))
        with pytest.raises(Exception):  # noqa: B017 - any refusal rolls the outbox row back
            slices.update_slice(session, SETUP, first, slices.SliceUpdate(link_ids=[10**9]))
        session.rollback()
        after = session.scalar(sa.select(sa.func.count()).select_from(OutboxMessage))
        assert after == before
