"""The alert engine on the real PostgreSQL: each rule fires after its hold and resolves after
its clearance, one firing alert per slice and rule (across restarts and racing engines), and
the end-to-end path from the emulator's counters to a stored alert."""

from __future__ import annotations

import dataclasses

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from alerts.helpers import BREACHES, CLEAR, TARGETS, Engine
from sliceportal.alerts.engine import AlertEngine, Timing
from sliceportal.alerts.events import RecordedEvent
from sliceportal.core.channels import Channels
from sliceportal.core.config import Settings
from sliceportal.db.models import Alert, AlertEvent
from sliceportal.domain import analyze, slice_spec
from sliceportal.domain import dataplane as dp
from sliceportal.domain.sla import Rule, Targets
from sliceportal.emulator.server import EmulatorServer
from sliceportal.p4rt.session import SessionPool
from sliceportal.schemas.choices import AlertEventKind, AlertState
from sliceportal.telemetry.inventory import load_inventory
from sliceportal.telemetry.poller import SampleSink, SwitchPoller
from telemetry.helpers import Cells, SwitchCounters, create_emulator_slices, dp_sid_of


def alerts_of(db: sessionmaker[Session], slice_id: int) -> list[Alert]:
    with db() as session:
        return list(session.scalars(select(Alert).where(Alert.slice_id == slice_id)))


@pytest.mark.parametrize("rule", list(Rule))
def test_each_rule_fires_after_its_hold_and_resolves_after_its_clearance(
    db: sessionmaker[Session], slice_id: int, rule: Rule
) -> None:
    engine = Engine(db, slice_id)
    engine.observe(BREACHES[rule], TARGETS[rule])
    assert alerts_of(db, slice_id) == []  # 1 s of the 2 s hold
    engine.observe(BREACHES[rule], TARGETS[rule])
    (alert,) = alerts_of(db, slice_id)
    assert (alert.rule, alert.state, alert.switch_id) == (rule, AlertState.FIRING, 1)
    assert alert.message and alert.threshold is not None
    engine.observe(BREACHES[rule], TARGETS[rule])  # still firing: no second alert
    engine.observe(CLEAR, TARGETS[rule])
    assert alerts_of(db, slice_id)[0].state is AlertState.FIRING
    engine.observe(CLEAR, TARGETS[rule])
    (alert,) = alerts_of(db, slice_id)
    assert alert.state is AlertState.RESOLVED and alert.resolved_at is not None
    assert engine.kinds() == [f"firing:{rule}", f"resolved:{rule}"]
    with db() as session:
        events = session.scalars(select(AlertEvent.kind).where(AlertEvent.alert_id == alert.id))
        assert list(events) == [AlertEventKind.FIRING, AlertEventKind.RESOLVED]


def test_a_restarted_engine_takes_over_the_firing_alert(
    db: sessionmaker[Session], slice_id: int
) -> None:
    first = Engine(db, slice_id)
    for _ in range(2):
        first.observe(BREACHES[Rule.LOSS], TARGETS[Rule.LOSS])
    restarted = Engine(db, slice_id)
    restarted.engine.load()
    for _ in range(3):
        restarted.observe(BREACHES[Rule.LOSS], TARGETS[Rule.LOSS])
    assert len(alerts_of(db, slice_id)) == 1 and restarted.events == []
    for _ in range(2):
        restarted.observe(CLEAR, TARGETS[Rule.LOSS])
    assert [a.state for a in alerts_of(db, slice_id)] == [AlertState.RESOLVED]
    assert restarted.kinds() == ["resolved:loss"]


def test_racing_engines_open_one_alert(db: sessionmaker[Session], slice_id: int) -> None:
    engines = [Engine(db, slice_id), Engine(db, slice_id)]  # neither knows of the other
    for _ in range(2):
        for engine in engines:
            engine.observe(BREACHES[Rule.MARKS], TARGETS[Rule.MARKS])
    assert len(alerts_of(db, slice_id)) == 1
    assert sum(len(engine.events) for engine in engines) == 1


def test_an_alert_resolves_when_its_slice_is_no_longer_sampled(
    db: sessionmaker[Session], slice_id: int
) -> None:
    engine = Engine(db, slice_id)
    for _ in range(2):
        engine.observe(BREACHES[Rule.DELAY], TARGETS[Rule.DELAY])
    engine.engine.retain(set(), engine.t)
    assert [a.state for a in alerts_of(db, slice_id)] == [AlertState.RESOLVED]


def test_the_inventory_holds_the_sla_and_the_analytical_bound(
    client: TestClient,
    operator_headers: dict[str, str],
    db: sessionmaker[Session],
    settings: Settings,
    emulator: EmulatorServer,
) -> None:
    sla = {"min_throughput_bps": 5e6, "max_loss_ratio": 0.01}
    (slice_,) = create_emulator_slices(
        client, operator_headers, emulator.address, capacity_bps=100e6, delay_target_s=0.02, sla=sla
    )
    with db() as session:
        watch = load_inventory(session, settings)[slice_["dp_sids"][0]["switch_id"]]
    (watched,) = watch.slices
    spec = slice_spec(slice_["name"], 10e6, 7, burst_limit_s=0.01, delay_target_s=0.02)
    (bound,) = analyze([spec], 100e6).slices
    assert watched.targets == Targets(
        max_delay_s=0.02,  # no SLA delay: the slice's delay target
        delay_percentile=settings.alert_delay_percentile,
        min_throughput_bps=5e6,
        max_loss_ratio=0.01,
        delay_bound_s=bound.worst_case_delay_s,
    )
    assert watched.hist_target == dp.histogram_target(0.02)  # what desired.py deploys
    assert watch.budget_cells == settings.telemetry_cells_per_period


def test_a_delay_breach_on_the_switch_raises_an_alert(
    client: TestClient,
    operator_headers: dict[str, str],
    db: sessionmaker[Session],
    settings: Settings,
    emulator: EmulatorServer,
    counters: SwitchCounters,
) -> None:
    """Counters on the emulator, read over gRPC, through the sink to a stored alert."""
    import redis

    (slice_,) = create_emulator_slices(client, operator_headers, emulator.address)
    with db() as session:
        watch = load_inventory(session, settings)[slice_["dp_sids"][0]["switch_id"]]
    (watched,) = watch.slices
    watch = dataclasses.replace(
        watch, slices=(dataclasses.replace(watched, targets=Targets(max_delay_s=0.005)),)
    )
    events: list[RecordedEvent] = []
    client_redis = redis.Redis.from_url(settings.redis_url)
    engine = AlertEngine(db, Timing(1.0, 1.0), [], events.extend)
    sink = SampleSink(db, client_redis, Channels.of(settings.database_url), engine)
    pool = SessionPool(settings)
    poller = SwitchPoller(watch, pool, 1.0)
    try:
        poller.poll()
        counters.set(
            dp_sid_of(slice_), Cells(forwarded=(100, 125_000), rq_hist=(0,) * 6 + (100, 0))
        )
        batch = poller.poll()
        assert batch is not None
        sink.handle(dataclasses.replace(batch, intervals=(1.0,)))
    finally:
        pool.close()
        client_redis.close()
    (alert,) = alerts_of(db, slice_["id"])
    # The slice's delay target is its burst limit, 10 ms: bucket 6 is [8.75, 10) ms.
    assert alert.rule is Rule.DELAY and alert.value == 0.01
    assert alert.message == (
        "p99 real-queue delay is between 8.75 ms and 10 ms, the SLA allows 5 ms; 100.00% of "
        "packets took 5 ms or more"
    )
    assert [e.message["event"] for e in events] == ["firing"]
