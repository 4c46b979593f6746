"""The poller against the emulator over gRPC, with the real PostgreSQL and Redis: counters that
moved become samples with the right rates and percentiles; a cell budget spreads the slices."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from sliceportal.alerts.engine import AlertEngine, Timing
from sliceportal.core.channels import Channels
from sliceportal.core.config import Settings
from sliceportal.db import samples as store
from sliceportal.db.models import TelemetrySample
from sliceportal.domain import dataplane as dp
from sliceportal.domain.telemetry import CELLS_PER_SLICE
from sliceportal.emulator.server import EmulatorServer
from sliceportal.p4rt.session import SessionPool
from sliceportal.telemetry.inventory import SwitchWatch, load_inventory
from sliceportal.telemetry.poller import SampleSink, SwitchPoller
from telemetry.helpers import (
    Cells,
    SwitchCounters,
    create_emulator_slices,
    dp_sid_of,
    next_message,
)


class FakeClock:
    """A monotonic clock the test moves, so that intervals (and rates) are exact."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def pool(settings: Settings) -> Iterator[SessionPool]:
    sessions = SessionPool(settings)
    yield sessions
    sessions.close()


@pytest.fixture
def sink(db: sessionmaker[Session], settings: Settings) -> Iterator[SampleSink]:
    client = redis.Redis.from_url(settings.redis_url)
    engine = AlertEngine(db, Timing(1.0, 3.0), [], lambda events: None)
    yield SampleSink(db, client, Channels.of(settings.database_url), engine)
    client.close()


def watch_of(db: sessionmaker[Session], settings: Settings, slice_: dict[str, Any]) -> SwitchWatch:
    with db() as session:
        watch: SwitchWatch = load_inventory(session, settings)[slice_["dp_sids"][0]["switch_id"]]
        return watch


def stored(db: sessionmaker[Session], slice_id: int, t: dt.datetime) -> list[dict[str, Any]]:
    with db() as session:
        records = store.history(session, slice_id, t - dt.timedelta(microseconds=1), t, 1)
    return store.sample_documents(records)


def test_counters_moved_give_samples_with_the_right_rates_and_percentiles(
    client: TestClient,
    operator_headers: dict[str, str],
    db: sessionmaker[Session],
    settings: Settings,
    emulator: EmulatorServer,
    counters: SwitchCounters,
    pool: SessionPool,
    sink: SampleSink,
) -> None:
    # The paper's Peering target, 30 ms: edges 1.875, 3.75, 7.5, 15, 22.5, 26.25 and 30 ms.
    (slice_,) = create_emulator_slices(
        client, operator_headers, emulator.address, delay_target_s=0.03
    )
    clock = FakeClock()
    watch = watch_of(db, settings, slice_)
    assert [s.hist_target for s in watch.slices] == [dp.histogram_target(0.03)]
    poller = SwitchPoller(watch, pool, 1.0, clock=clock)
    first = poller.poll()
    assert first is not None and first.slices == ()  # the first reading is the baseline

    counters.set(
        dp_sid_of(slice_),
        Cells(
            forwarded=(900, 1_125_000),
            vq_dropped=(80, 100_000),
            real_dropped=(20, 25_000),
            aqm_dropped=(40, 50_000),
            marked=(90, 112_500),
            vq_hist=(0, 0, 0, 450, 0, 440, 10, 0),
            rq_hist=(900, 0, 0, 0, 0, 0, 0, 0),
        ),
    )
    clock.advance(2.0)
    batch = poller.poll()
    assert batch is not None
    subscriber = redis.Redis.from_url(settings.redis_url).pubsub(ignore_subscribe_messages=True)
    subscriber.subscribe(Channels.of(settings.database_url).slice(slice_["id"]))
    sink.handle(batch)

    (sample,) = stored(db, slice_["id"], batch.t)
    assert sample["interval_s"] == 2.0
    assert sample["throughput_bps"] == 1_125_000 * 8 / 2
    assert sample["packets_per_s"] == 450
    # drops by reason: burst limit, real queue and CoDel, each over the 1,040 offered
    assert sample["drop_ratio"] == pytest.approx(140 / 1040)
    assert sample["vq_drop_ratio"] == pytest.approx(80 / 1040)
    assert sample["rq_drop_ratio"] == pytest.approx(20 / 1040)
    assert sample["aqm_drop_ratio"] == pytest.approx(40 / 1040)
    assert sample["mark_ratio"] == pytest.approx(0.1)
    assert (sample["vq_delay_p50_s"], sample["vq_delay_p95_s"]) == (0.015, 0.02625)
    assert (sample["vq_delay_p99_s"], sample["vq_delay_max_bucket_s"]) == (0.03, 0.03)
    assert sample["rq_delay_p99_s"] == 0.001875
    assert sample["vq_cdf"][3] == [0.015, 0.5]
    assert [edge for edge, _ in sample["rq_cdf"]] == list(
        dp.histogram_edges_s(watch.slices[0].hist_target)
    )
    assert sample["registers"] == {"vq_delay_s": 0.0, "vq_last_seen_ticks": 0}
    assert not sample["counters_reset"]
    assert json.loads(next_message(subscriber)) == sample
    subscriber.close()

    # The switch loses its counters: the next sample counts what it holds since.
    counters.set(
        dp_sid_of(slice_), Cells(forwarded=(10, 12_500), rq_hist=(10, 0, 0, 0, 0, 0, 0, 0))
    )
    clock.advance(1.0)
    batch = poller.poll()
    assert batch is not None
    sink.handle(batch)
    (sample,) = stored(db, slice_["id"], batch.t)
    assert sample["counters_reset"]
    assert sample["throughput_bps"] == 12_500 * 8
    with db() as session:
        targets = session.scalars(
            select(TelemetrySample.hist_target).where(TelemetrySample.slice_id == slice_["id"])
        ).all()
    assert targets == [dp.histogram_target(0.03)] * 2


def test_a_cell_budget_spreads_slices_and_reports_their_effective_interval(
    client: TestClient,
    operator_headers: dict[str, str],
    db: sessionmaker[Session],
    settings: Settings,
    emulator: EmulatorServer,
    counters: SwitchCounters,
    pool: SessionPool,
) -> None:
    slices = create_emulator_slices(client, operator_headers, emulator.address, 5)
    clock = FakeClock()
    watch = watch_of(db, settings, slices[0])
    poller = SwitchPoller(watch, pool, 1.0, clock=clock)
    # Room for two slices per period (20 counter + 2 register cells each): 3 periods for 5.
    poller.watch = dataclasses.replace(watch, budget_cells=2 * poller.cells_per_slice)
    assert [len(group) for group in poller.groups] == [2, 2, 1]
    for _ in poller.groups:  # a baseline reading of every slice
        poller.poll()
        clock.advance(1.0)
    for slice_ in slices:
        counters.set(dp_sid_of(slice_), Cells(forwarded=(300, 375_000)))

    seen: dict[int, float] = {}
    throughput: dict[int, float] = {}
    for _ in poller.groups:
        batch = poller.poll()
        assert batch is not None and len(batch.slices) <= 2
        for watched, interval, counts in zip(
            batch.slices, batch.intervals, batch.counts, strict=True
        ):
            seen[watched.slice_id] = interval
            throughput[watched.slice_id] = counts[1] * 8 / interval
        clock.advance(1.0)
    assert seen == {slice_["id"]: 3.0 for slice_ in slices}
    assert set(throughput.values()) == {375_000 * 8 / 3}


def test_a_dp_sid_taken_over_by_another_slice_starts_over(
    client: TestClient,
    operator_headers: dict[str, str],
    db: sessionmaker[Session],
    settings: Settings,
    emulator: EmulatorServer,
    pool: SessionPool,
) -> None:
    (slice_,) = create_emulator_slices(client, operator_headers, emulator.address)
    watch = watch_of(db, settings, slice_)
    clock = FakeClock()
    poller = SwitchPoller(watch, pool, 1.0, clock=clock)
    poller.poll()
    clock.advance(1.0)
    (watched,) = watch.slices
    poller.watch = dataclasses.replace(
        watch, slices=(dataclasses.replace(watched, slice_id=watched.slice_id + 10_000),)
    )
    batch = poller.poll()
    assert batch is not None and batch.slices == ()


def test_a_switch_that_cannot_read_registers_is_polled_on_its_counters_alone(
    client: TestClient,
    operator_headers: dict[str, str],
    db: sessionmaker[Session],
    settings: Settings,
    pool: SessionPool,
    sink: SampleSink,
) -> None:
    """Register reads are an emulator-only extra: against a switch that answers them
    UNIMPLEMENTED as BMv2 does, samples carry no registers and the poller reads counters only
    (20 cells a slice, not 22)."""
    with EmulatorServer("127.0.0.1:0", 1, load_pipeline=True, like_bmv2=True) as bmv2:
        counters = SwitchCounters(bmv2.address)
        try:
            (slice_,) = create_emulator_slices(client, operator_headers, bmv2.address)
            clock = FakeClock()
            poller = SwitchPoller(watch_of(db, settings, slice_), pool, 1.0, clock=clock)
            assert poller.poll() is not None  # the baseline
            assert not poller.registers_readable
            assert poller.cells_per_slice == CELLS_PER_SLICE == 21
            counters.set(dp_sid_of(slice_), Cells(forwarded=(100, 125_000)))
            clock.advance(1.0)
            batch = poller.poll()
        finally:
            counters.close()
    assert batch is not None and batch.registers is None
    sink.handle(batch)
    (sample,) = stored(db, slice_["id"], batch.t)
    assert sample["throughput_bps"] == 125_000 * 8 and sample["registers"] is None
