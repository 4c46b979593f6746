"""The poller against the emulator over gRPC, with the real PostgreSQL and Redis: counters that
moved become samples with the right rates and percentiles; a cell budget spreads the slices;
a codel slice's samples carry CoDel's state, an abc slice's its busiest aggregates, where the
switch reads registers."""

from __future__ import annotations

import dataclasses
import datetime as dt
import ipaddress
import json
import math
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from sliceportal.alerts.engine import AlertEngine, Timing
from sliceportal.controlplane.desired import intents
from sliceportal.core.channels import Channels
from sliceportal.core.config import Settings
from sliceportal.db import samples as store
from sliceportal.db.models import TelemetrySample
from sliceportal.domain import dataplane as dp
from sliceportal.domain.abc import aggregate_slot
from sliceportal.domain.reconcile import EntryUpdate, UpdateKind, desired_state
from sliceportal.domain.telemetry import (
    ABC_REGISTER_CELLS,
    CELLS_PER_SLICE,
    CODEL_REGISTER_CELLS,
    AbcWatch,
)
from sliceportal.emulator.model.switch_model import Clock, PacketModel
from sliceportal.emulator.model.traffic import SourceSpec
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

CODEL = {"scheme": "codel", "codel": {"target_s": 0.005, "interval_s": 0.1}}
"""A codel slice of `slice_body`'s 10 Mbit/s and 10 ms burst limit: CoDel acts at 5 ms."""


class FakeClock:
    """A monotonic clock the test moves, so that intervals (and rates) are exact, and the wall
    clock moving with it (samples' times: stored samples of a slice cannot overlap)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self._started = dt.datetime.now(dt.UTC)

    def wall(self) -> dt.datetime:
        return self._started + dt.timedelta(seconds=self.now - 1000.0)

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


def clocked(watch: SwitchWatch, pool: SessionPool) -> tuple[SwitchPoller, FakeClock]:
    """A switch poller of a 1 s period on a `FakeClock` (its monotonic and wall clocks)."""
    clock = FakeClock()
    return SwitchPoller(watch, pool, 1.0, clock=clock, wall=clock.wall), clock


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
    watch = watch_of(db, settings, slice_)
    assert [s.hist_target for s in watch.slices] == [dp.histogram_target(0.03)]
    poller, clock = clocked(watch, pool)
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
    watch = watch_of(db, settings, slices[0])
    poller, clock = clocked(watch, pool)
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
    poller, clock = clocked(watch, pool)
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
    UNIMPLEMENTED as BMv2 does, samples carry no registers, nor CoDel's state of a codel
    slice, and the poller reads counters only (21 cells a slice, not 23 or 25)."""
    with EmulatorServer("127.0.0.1:0", 1, load_pipeline=True, like_bmv2=True) as bmv2:
        counters = SwitchCounters(bmv2.address)
        try:
            (slice_,) = create_emulator_slices(client, operator_headers, bmv2.address, **CODEL)
            poller, clock = clocked(watch_of(db, settings, slice_), pool)
            assert poller.poll() is not None  # the baseline
            assert not poller.registers_readable
            assert poller.cells_per_slice == CELLS_PER_SLICE == 21
            counters.set(dp_sid_of(slice_), Cells(forwarded=(100, 125_000)))
            clock.advance(1.0)
            batch = poller.poll()
        finally:
            counters.close()
    assert batch is not None and batch.registers is None and batch.codel is None
    sink.handle(batch)
    (sample,) = stored(db, slice_["id"], batch.t)
    assert sample["throughput_bps"] == 125_000 * 8 and sample["registers"] is None
    assert sample["codel"] is None and not sample["downsampled"]
    with db() as session:
        row = session.scalars(
            select(TelemetrySample).where(TelemetrySample.slice_id == slice_["id"])
        ).one()
    assert (row.codel_dropping, row.codel_count) == (None, None)


def deploy(db: sessionmaker[Session], pool: SessionPool, watch: SwitchWatch) -> None:
    """Write the switch's entries as the reconciler would (the pipeline is loaded already)."""
    with db() as session:
        wanted = desired_state(intents(session, switch_id=watch.switch_id).values())
    updates = [EntryUpdate(UpdateKind.INSERT, entry) for entry in wanted.entries.values()]
    assert all(outcome.ok for outcome in pool.get(watch.target).write(updates))


def codel_registers(emulator: EmulatorServer, dp_sid: int) -> tuple[bool, int]:
    """CoDel's state as the emulator holds it, read in process (not over P4Runtime)."""
    state = emulator.service.state
    assert state is not None
    values = {array.info.name: array.values for array in state.registers.values()}
    return (
        bool(values[dp.CODEL_DROPPING_REGISTER][dp_sid]),
        int(values[dp.CODEL_COUNT_REGISTER][dp_sid]),
    )


def test_a_codel_slice_s_samples_carry_codel_s_state_read_with_the_registers(
    client: TestClient,
    operator_headers: dict[str, str],
    db: sessionmaker[Session],
    settings: Settings,
    pool: SessionPool,
    sink: SampleSink,
) -> None:
    """Traffic through the emulator's packet model: 20 Mbit/s into a 10 Mbit/s codel slice
    keeps its delay above CoDel's target, so CoDel drops, spell after spell; light traffic
    afterwards ends the spell. The poller reads both states, with the registers it reads
    anyway, and only for the codel slice."""
    model = PacketModel(clock=Clock.MANUAL)
    with EmulatorServer("127.0.0.1:0", 1, load_pipeline=True, model=model) as emulator:
        codel_slice, other = create_emulator_slices(
            client, operator_headers, emulator.address, 2, **CODEL
        )
        client.patch(
            f"/api/v1/slices/{other['id']}", json={"scheme": "tail_drop"}, headers=operator_headers
        ).raise_for_status()
        watch = watch_of(db, settings, codel_slice)
        assert [s.codel for s in watch.slices] == [True, False]
        deploy(db, pool, watch)
        poller, clock = clocked(watch, pool)
        assert poller.poll() is not None  # the baseline
        sid = dp_sid_of(codel_slice)

        model.put_source(SourceSpec("heavy", "cbr", "10.0.0.1", rate_bps=20e6))
        model.advance(1.0)
        clock.advance(1.0)
        batch = poller.poll()
        assert batch is not None and batch.codel is not None
        dropping, count = codel_registers(emulator, sid)
        assert dropping and count >= 2
        assert batch.codel.tolist() == [[1, count], [-1, -1]]
        sink.handle(batch)
        (sample,) = stored(db, codel_slice["id"], batch.t)
        assert sample["codel"] == {"dropping": True, "count": count}
        assert sample["aqm_drop_ratio"] > 0  # its drops, counted as before
        (tail_drop,) = stored(db, other["id"], batch.t)
        assert tail_drop["codel"] is None

        model.remove_source("heavy")
        model.put_source(SourceSpec("light", "cbr", "10.0.0.1", rate_bps=1e6))
        model.advance(1.0)
        clock.advance(1.0)
        batch = poller.poll()
        assert batch is not None and batch.codel is not None
        assert codel_registers(emulator, sid) == (False, count)  # the spell's count stays
        assert batch.codel.tolist() == [[0, count], [-1, -1]]
        sink.handle(batch)
        (sample,) = stored(db, codel_slice["id"], batch.t)
        assert sample["codel"] == {"dropping": False, "count": count}
    with db() as session:
        rows = session.execute(
            select(TelemetrySample.codel_dropping, TelemetrySample.codel_count)
            .where(TelemetrySample.slice_id == codel_slice["id"])
            .order_by(TelemetrySample.t)
        ).all()
    assert [tuple(row) for row in rows] == [(True, count), (False, count)]


ABC = {"scheme": "abc", "abc": {"meter_memory_s": 1.0, "reference_rate_bps": 1e5}}
"""An abc slice of `slice_body`'s 10 Mbit/s: activity 0 at 100 kbit/s, meters of 1 s."""


def set_abc_registers(
    emulator: EmulatorServer, dp_sid: int, slots: dict[int, tuple[int, int, int]], average: int
) -> None:
    """Write an abc slice's meter cells (slot -> last, S, N) and its stored average into the
    emulator's registers, in process, as its packet model would leave them."""
    state = emulator.service.state
    assert state is not None
    arrays = {array.info.name: array.values for array in state.registers.values()}
    with state.lock:
        for slot, cells in slots.items():
            for name, value in zip(dp.ABC_METER_REGISTERS, cells, strict=True):
                arrays[name][dp_sid * 64 + slot] = value
        arrays[dp.ABC_AVERAGE_REGISTERS[2]][dp_sid] = average


def test_an_abc_slice_s_samples_carry_its_busiest_aggregates_read_with_the_registers(
    client: TestClient,
    operator_headers: dict[str, str],
    db: sessionmaker[Session],
    settings: Settings,
    emulator: EmulatorServer,
    pool: SessionPool,
    sink: SampleSink,
) -> None:
    """The poller reads an abc slice's 64 meter cells and its average with the registers it
    reads anyway, for the abc slice only; its samples (published and stored) name its
    busiest slots with their rates and activities and the slice's average activity."""
    abc_slice, other = create_emulator_slices(client, operator_headers, emulator.address, 2, **ABC)
    client.patch(
        f"/api/v1/slices/{other['id']}", json={"scheme": "tail_drop"}, headers=operator_headers
    ).raise_for_status()
    watch = watch_of(db, settings, abc_slice)
    assert [s.abc for s in watch.slices] == [AbcWatch(1e5, 1.0), None]
    poller, clock = clocked(watch, pool)
    assert poller.poll() is not None  # the baseline
    one = 1 << 16  # Q16
    second = 1_000_000  # ticks
    set_abc_registers(
        emulator,
        dp_sid_of(abc_slice),
        {  # 800 kbit/s (100,000 bytes over 1 s) and 200 kbit/s, both updated at 5 s
            9: (5 * second, 100_000 * one, second * one),
            41: (5 * second, 25_000 * one, second * one),
        },
        average=round(1.5 * 256) << 32,  # activity 1.5 over zero
    )
    clock.advance(1.0)
    batch = poller.poll()
    assert batch is not None and batch.abc is not None
    assert batch.abc[1] == "null"
    sink.handle(batch)
    (sample,) = stored(db, abc_slice["id"], batch.t)
    assert sample["abc"] == {
        "average_activity": 1.5,
        "active_slots": 2,
        "aggregates": [
            {"slot": 9, "rate_bps": 800_000.0, "activity": 3.0, "idle_s": 0.0},
            {"slot": 41, "rate_bps": 200_000.0, "activity": 1.0, "idle_s": 0.0},
        ],
    }
    assert json.loads(batch.abc[0]) == sample["abc"]
    (tail_drop,) = stored(db, other["id"], batch.t)
    assert tail_drop["abc"] is None
    with db() as session:
        rows = session.execute(
            select(TelemetrySample.slice_id, TelemetrySample.abc).where(
                TelemetrySample.slice_id.in_([abc_slice["id"], other["id"]])
            )
        ).tuples()
        found = dict(rows.all())
    assert found == {
        abc_slice["id"]: sample["abc"],
        other["id"]: None,
    }


def test_a_switch_that_cannot_read_registers_gives_an_abc_slice_no_aggregates(
    client: TestClient,
    operator_headers: dict[str, str],
    db: sessionmaker[Session],
    settings: Settings,
    pool: SessionPool,
    sink: SampleSink,
) -> None:
    """Against a switch that answers register reads UNIMPLEMENTED (BMv2), an abc slice is
    polled on its counters alone (21 cells, not 218) and its samples say abc null."""
    with EmulatorServer("127.0.0.1:0", 1, load_pipeline=True, like_bmv2=True) as bmv2:
        (slice_,) = create_emulator_slices(client, operator_headers, bmv2.address, **ABC)
        poller, clock = clocked(watch_of(db, settings, slice_), pool)
        assert poller.poll() is not None
        clock.advance(1.0)
        batch = poller.poll()
    assert not poller.registers_readable and poller.cells_per_slice == CELLS_PER_SLICE
    assert batch is not None and batch.abc is None
    sink.handle(batch)
    (sample,) = stored(db, slice_["id"], batch.t)
    assert sample["abc"] is None and sample["registers"] is None


@pytest.mark.parametrize(
    ("options", "extra_cells", "without"),
    [(CODEL, CODEL_REGISTER_CELLS, {"codel": False}), (ABC, ABC_REGISTER_CELLS, {"abc": None})],
    ids=["codel", "abc"],
)
def test_codel_and_abc_slices_read_their_register_cells_more_within_the_budget(
    client: TestClient,
    operator_headers: dict[str, str],
    db: sessionmaker[Session],
    settings: Settings,
    emulator: EmulatorServer,
    pool: SessionPool,
    options: dict[str, Any],
    extra_cells: int,
    without: dict[str, Any],
) -> None:
    """A codel slice costs 23 + 2 cells, an abc slice 23 + 195, another 23: a budget of
    2 x 23 plus one slice's extra cells fits one such slice and one other, and two such slices
    need two periods."""
    slices = create_emulator_slices(client, operator_headers, emulator.address, 2, **options)
    watch = watch_of(db, settings, slices[0])
    poller = SwitchPoller(watch, pool, 1.0, clock=FakeClock())
    fits_one = 2 * poller.cells_per_slice + extra_cells
    poller.watch = dataclasses.replace(watch, budget_cells=fits_one)
    assert [len(group) for group in poller.groups] == [1, 1]
    mixed = (watch.slices[0], dataclasses.replace(watch.slices[1], **without))
    poller.watch = dataclasses.replace(watch, budget_cells=fits_one, slices=mixed)
    assert [len(group) for group in poller.groups] == [2]


def test_an_abc_slice_s_busiest_aggregates_are_its_sources_through_the_packet_model(
    client: TestClient,
    operator_headers: dict[str, str],
    db: sessionmaker[Session],
    settings: Settings,
    pool: SessionPool,
    sink: SampleSink,
) -> None:
    """Traffic through the emulator's packet model, which runs ABC: Poisson sources of 12 and
    2 Mbit/s share a 10 Mbit/s abc slice. The poller reads their meters back as the two
    busiest slots (the slots their source addresses hash to) at about their offered rates
    (ABC meters the packets the virtual queue took: nearly all, since ABC's drops give their
    time back to it), the heavy one the more active, the slice's average between them; ABC,
    not the burst limit, does the dropping, counted as the slice's aqm drops, and the slice
    still carries its rate."""
    model = PacketModel(clock=Clock.MANUAL)
    with EmulatorServer("127.0.0.1:0", 1, load_pipeline=True, model=model) as emulator:
        (abc_slice,) = create_emulator_slices(client, operator_headers, emulator.address, **ABC)
        watch = watch_of(db, settings, abc_slice)
        deploy(db, pool, watch)
        poller, clock = clocked(watch, pool)
        assert poller.poll() is not None  # the baseline
        sid = dp_sid_of(abc_slice)
        rates = {"192.0.2.10": 12e6, "192.0.2.20": 2e6}
        for source, rate in rates.items():
            model.put_source(
                SourceSpec(source, "poisson", "10.0.0.1", ipv4_src=source, rate_bps=rate)
            )
        model.advance(2.0)
        clock.advance(2.0)
        batch = poller.poll()
    assert batch is not None and batch.abc is not None
    sink.handle(batch)
    (sample,) = stored(db, abc_slice["id"], batch.t)
    state = sample["abc"]
    slots = {
        source: aggregate_slot(0xFFFFFFFF, sid, ipaddress.IPv4Address(source)) - sid * 64
        for source in rates
    }
    heavy, light, *rest = state["aggregates"]
    assert (heavy["slot"], light["slot"], rest) == (slots["192.0.2.10"], slots["192.0.2.20"], [])
    assert heavy["rate_bps"] == pytest.approx(12e6, rel=0.1)
    assert light["rate_bps"] == pytest.approx(2e6, rel=0.15)
    for aggregate in (heavy, light):
        expected = math.log2(aggregate["rate_bps"] / 1e5)
        assert aggregate["activity"] == pytest.approx(expected, abs=0.01)
        assert aggregate["idle_s"] < 0.05
    assert light["activity"] < state["average_activity"] < heavy["activity"]
    assert state["active_slots"] == 2
    assert sample["aqm_drop_ratio"] > 10 * sample["vq_drop_ratio"]  # ABC dropped, counted
    assert sample["throughput_bps"] == pytest.approx(10e6, rel=0.05)
