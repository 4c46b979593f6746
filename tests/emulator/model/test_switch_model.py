"""`PacketModel`: profile windows, control, its clocks, and its life inside the server."""

from __future__ import annotations

import time

import pytest

from emulator.model.conftest import PROGRAM, StateFactory, counter, tail_drop
from emulator.p4rt import P4INFO, Controller, counter_entry
from sliceportal.domain import dataplane as dp
from sliceportal.domain.reconcile import EntryUpdate, UpdateKind
from sliceportal.emulator.model.ports import PortConfig
from sliceportal.emulator.model.switch_model import Clock, NotAttached, PacketModel
from sliceportal.emulator.model.traffic import Profile, SourceSpec
from sliceportal.emulator.server import EmulatorServer
from sliceportal.emulator.state import DeviceState
from sliceportal.p4rt.entries import EntryCodec

FRAME_BITS = 1514 * 8
CBR_1K = 1000 * FRAME_BITS  # a rate of exactly 1,000 frames per second


def forwarded(state: DeviceState, dp_sid: int) -> int:
    return counter(state, dp.FORWARDED)[0][dp_sid]


def test_sources_send_within_their_profile_window(switch_state: StateFactory) -> None:
    state = switch_state([tail_drop(1, 100e6, 0.01)])
    source = SourceSpec("a", "cbr", "10.0.1.1", rate_bps=CBR_1K, start_s=0.25, stop_s=0.75)
    model = PacketModel(Profile((source,)), clock=Clock.MANUAL)
    model.attach(state)
    model.advance(0.25)
    assert forwarded(state, 1) == 0
    model.advance(1.0)
    assert forwarded(state, 1) == 500
    assert model.status()["sources"][0]["running"] is False


def test_sources_start_and_stop_on_command(switch_state: StateFactory) -> None:
    state = switch_state([tail_drop(1, 100e6, 0.01), tail_drop(2, 100e6, 0.01)])
    sources = (
        SourceSpec("a", "cbr", "10.0.1.1", rate_bps=CBR_1K),
        SourceSpec("b", "cbr", "10.0.2.1", rate_bps=CBR_1K, enabled=False),
    )
    model = PacketModel(Profile(sources), clock=Clock.MANUAL)
    model.attach(state)
    model.advance(0.1)
    model.stop("a")
    model.start("b")
    model.advance(0.2)
    assert (forwarded(state, 1), forwarded(state, 2)) == (100, 200)
    model.put_source(SourceSpec("b", "cbr", "10.0.2.1", rate_bps=2 * CBR_1K))
    model.put_source(SourceSpec("c", "tcp", "10.0.1.1", flows=2, rtt_s=0.01))
    model.advance(0.1)
    assert forwarded(state, 2) == 400
    assert forwarded(state, 1) > 100
    model.remove_source("c")
    settled = forwarded(state, 1)
    model.advance(0.1)
    assert forwarded(state, 1) == settled  # the removed flows' last packets had left already
    with pytest.raises(KeyError):
        model.start("nope")
    status = model.status()
    assert [s["name"] for s in status["sources"]] == ["a", "b"]
    assert status["packets"]["forwarded"] == sum(counter(state, dp.FORWARDED)[0])


def test_port_settings_apply_while_running(switch_state: StateFactory) -> None:
    state = switch_state([])
    source = SourceSpec("a", "cbr", "10.0.9.1", rate_bps=10 * CBR_1K)
    model = PacketModel(Profile((source,), ports={1: PortConfig(CBR_1K, 10)}), clock=Clock.MANUAL)
    model.attach(state)
    model.advance(1.0)
    assert 999 <= forwarded(state, 0) <= 1001
    model.set_port(1, PortConfig(100 * CBR_1K, 10))
    model.advance(1.0)
    assert 10_990 <= forwarded(state, 0) <= 11_010
    assert model.status()["ports"]["1"]["rate_bps"] == 100 * CBR_1K


def test_the_realtime_clock_follows_the_wall_clock(switch_state: StateFactory) -> None:
    state = switch_state([tail_drop(1, 100e6, 0.01)])
    model = PacketModel(Profile((SourceSpec("a", "cbr", "10.0.1.1", rate_bps=CBR_1K),)))
    started = time.monotonic()
    model.attach(state)
    time.sleep(0.6)
    model.detach()
    elapsed = time.monotonic() - started
    sim = model.now_ns / 1e9
    assert 0.2 < sim <= elapsed
    assert abs(forwarded(state, 1) - 1000 * sim) <= 2
    stopped = model.now_ns
    time.sleep(0.05)
    assert model.now_ns == stopped  # detached: time stands still
    assert model.status()["lag_s"] >= 0


def test_the_fast_clock_outruns_the_wall_clock(switch_state: StateFactory) -> None:
    state = switch_state([tail_drop(1, 100e6, 0.01)])
    model = PacketModel(
        Profile((SourceSpec("a", "cbr", "10.0.1.1", rate_bps=CBR_1K),)),
        clock=Clock.FAST,
        chunk_s=0.1,
    )
    model.attach(state)
    time.sleep(0.5)
    model.detach()
    assert model.now_ns > 2e9


def test_a_model_without_a_pipeline_refuses_to_run() -> None:
    model = PacketModel(clock=Clock.MANUAL)
    with pytest.raises(NotAttached):
        model.advance(0.1)
    assert model.status()["attached"] is False


def test_another_program_leaves_the_model_idle() -> None:
    model = PacketModel(clock=Clock.REALTIME)
    model.attach(DeviceState(type(PROGRAM).from_file(P4INFO)))  # the emulator tests' program
    assert model.status()["attached"] is False
    model.detach()


def test_in_the_server_counters_grow_and_a_new_pipeline_starts_afresh() -> None:
    """Entries written over P4Runtime steer the traffic; a re-commit clears the counters
    (a new DeviceState) while simulated time goes on."""
    source = SourceSpec("a", "cbr", "10.0.1.1", rate_bps=CBR_1K)
    model = PacketModel(Profile((source,)), clock=Clock.MANUAL)
    with EmulatorServer("127.0.0.1:0", model=model) as server:
        controller = Controller(server.address)
        try:
            controller.set_pipeline(p4info=PROGRAM.message)
            model.advance(0.5)  # no route yet: everything is dropped by routing
            assert model.status()["packets"]["unrouted"] == 500
            entries = dp.dataplane_entries(
                [tail_drop(1, 100e6, 0.01)], [dp.Route("10.0.0.0/16", 1, "02:00:00:00:00:01")]
            )
            codec = EntryCodec(PROGRAM)
            updates = [codec.encode_update(EntryUpdate(UpdateKind.INSERT, e)) for e in entries]
            controller.write(*updates)
            model.advance(0.5)
            forwarded_id = next(i.id for i in PROGRAM.counters.values() if i.name == dp.FORWARDED)
            (reading,) = controller.read(counter_entry(forwarded_id, 1))
            assert reading.counter_entry.data.packet_count == 500
            controller.set_pipeline(p4info=PROGRAM.message)
            before = model.now_ns
            model.advance(0.1)
            assert model.now_ns == before + 100_000_000
            assert model.status()["packets"]["unrouted"] == 100
        finally:
            controller.close()
