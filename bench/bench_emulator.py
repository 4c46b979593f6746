"""Benchmarks of the switch emulator's packet model; prints plain ``name: figure`` lines.

Targets (from the design issue): the model simulates >= 250,000 packets per second on one
core in as-fast-as-possible mode; a poller's wildcard read of every counter of a switch with
4,096 slices is timed over P4Runtime. With every slice on CoDel (issue #20) the Poisson run is
repeated and its figure printed beside tail drop's from the same run (target: >= 1M packets per
CPU-second), and codel-table1's closed loop (3 CUBIC flows held by CoDel) is timed; the same
for every slice on ABC.

Figures are per CPU-second of this process (``time.process_time``), which a busy shared
machine distorts far less than wall time; wall time is printed beside them. The numba kernel
is compiled (or loaded from its cache) before anything is timed.

Run: ``.venv/bin/python bench/bench_emulator.py``
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import grpc  # type: ignore[import-untyped, unused-ignore]
import numpy as np

from sliceportal.domain import dataplane as dp
from sliceportal.domain import p4constants as c
from sliceportal.domain.abc import AbcConfig
from sliceportal.domain.codel import CodelConfig
from sliceportal.emulator import layout as L
from sliceportal.emulator.defaults import DEFAULT_P4INFO
from sliceportal.emulator.layout import Congestion
from sliceportal.emulator.model.engine import Engine, compile_kernel
from sliceportal.emulator.model.entries import install
from sliceportal.emulator.model.ports import PortConfig
from sliceportal.emulator.model.program import Headers
from sliceportal.emulator.model.switch_model import Clock, PacketModel
from sliceportal.emulator.model.traffic import Profile, SourceSpec
from sliceportal.emulator.server import EmulatorServer
from sliceportal.emulator.state import DeviceState
from sliceportal.experiments import codel
from sliceportal.experiments.paper import EXPERIMENTS
from sliceportal.experiments.runner import deploy, open_session
from sliceportal.p4rt import cells, proto
from sliceportal.p4rt.p4info import P4InfoIndex
from sliceportal.p4rt.proto import p4r

PORTS = 4
SLICE_RATE_BPS = 2e6
OFFERED_BPS = 1.5e6
SOURCES_PER_SLICE = 4
"""Source addresses per slice in the kernel-only runs: ABC meters each as an aggregate."""


def timed(work: Callable[[], object]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one call."""
    cpu, wall = time.process_time(), time.perf_counter()
    work()
    return time.process_time() - cpu, time.perf_counter() - wall


def packets_per_second(label: str, model: PacketModel, seconds: float) -> float:
    before = model.status()["packets"]["offered"]
    cpu, wall = timed(lambda: model.advance(seconds))
    packets = model.status()["packets"]["offered"] - before
    print(
        f"{label}: {packets / cpu:,.0f} packets per CPU-second "
        f"({packets:,} packets, {seconds:g} s simulated in {cpu:.2f} s CPU, {wall:.2f} s wall)"
    )
    return float(packets / cpu)


def paper_mix() -> None:
    """Experiment 1's 21 TCP flows (closed loop: every packet's fate feeds back)."""
    experiment = EXPERIMENTS["paper-exp1"]
    profile = Profile(
        tuple(s.traffic for s in experiment.slices),
        ports={1: PortConfig(experiment.port_rate_bps, 200_000)},
    )
    model = PacketModel(profile, clock=Clock.MANUAL, chunk_s=0.05)
    entries = dp.dataplane_entries([s.slice_ for s in experiment.slices], experiment.routes)
    with EmulatorServer("127.0.0.1:0", model=model) as server:
        session = open_session(server.address)
        deploy(session, entries)
        session.close()
        model.advance(2.0)  # past slow start
        packets_per_second("simulated, paper-exp1 TCP mix (21 flows)", model, 30.0)


def codel_mix() -> None:
    """codel-table1's closed loop: 3 CUBIC flows in a 100 Mbit/s slice that CoDel holds."""
    traffic = SourceSpec(
        "tcp", "tcp", "10.0.1.1", cc=Congestion.CUBIC, flows=3, rtt_s=codel.RTT_S,
        sender_rate_bps=1e9,
    )  # fmt: skip
    ports = {1: PortConfig(codel.PORT_RATE_BPS, 200_000)}
    model = PacketModel(Profile((traffic,), ports=ports), clock=Clock.MANUAL, chunk_s=0.05)
    entries = dp.dataplane_entries([codel.codel_slice(dp.Scheme.CODEL)], codel.ROUTES)
    with EmulatorServer("127.0.0.1:0", model=model) as server:
        session = open_session(server.address)
        deploy(session, entries)
        session.close()
        model.advance(1.0)
        packets_per_second("simulated, codel-table1 (3 CUBIC flows, CoDel)", model, 20.0)


def many_slices(scheme: dp.Scheme = dp.Scheme.TAIL_DROP) -> float:
    """4,096 slices on 4 ports, one Poisson source each; then (tail drop) the counter read.
    Returns the packets per CPU-second."""
    slices, routes, sources = [], [], []
    for port in range(1, PORTS + 1):
        routes.append(dp.Route(f"10.{4 * (port - 1)}.0.0/14", port, f"02:00:00:00:00:0{port}"))
    for dp_sid in range(c.MAX_SLICES):
        port = 1 + (dp_sid >> 8) // 4
        prefix = f"10.{dp_sid >> 8}.{dp_sid & 255}.0/24"
        slices.append(
            dp.DataplaneSlice(
                dp_sid,
                f"s{dp_sid}",
                None,
                (prefix,) if dp_sid else (),
                SLICE_RATE_BPS,
                0.01,
                dp_sid % 8 if dp_sid else 0,
                scheme,
                None,
                port,
                **scheme_parameters(scheme),
            )  # fmt: skip
        )
        if dp_sid:  # 0 is best effort: it has a policy but matches no traffic of its own
            dst = f"10.{dp_sid >> 8}.{dp_sid & 255}.1"
            sources.append(SourceSpec(f"s{dp_sid}", "poisson", dst, rate_bps=OFFERED_BPS))
    ports = {p: PortConfig(10_000_000_000, 1000) for p in range(1, PORTS + 1)}
    # Long chunks: 4,095 generators cost ~15 us each per chunk in Python.
    model = PacketModel(Profile(tuple(sources), ports=ports), clock=Clock.MANUAL, chunk_s=0.5)
    program = P4InfoIndex.from_file(DEFAULT_P4INFO)
    entries = dp.dataplane_entries(slices, routes)
    with EmulatorServer("127.0.0.1:0", model=model) as server:
        session = open_session(server.address)
        _, wall = timed(partial(deploy, session, entries))
        session.close()
        print(
            f"install 4,096 {scheme} slices with the portal's adapter: {len(entries):,} entries "
            f"in {wall:.2f} s wall ({len(entries) / wall:,.0f} entries/s, batches of 1,000)"
        )
        model.advance(0.5)
        label = f"simulated, 4,095 Poisson {scheme} slices on 4 ports"
        rate = packets_per_second(label, model, 3.0)
        if scheme != dp.Scheme.TAIL_DROP:
            return rate
        cell_count = sum(info.size for info in program.counters.values())
        options = [("grpc.max_receive_message_length", 64 << 20)]
        with grpc.insecure_channel(server.address, options=options) as channel:
            read = channel.unary_stream("/p4.v1.P4Runtime/Read")
            everything = p4r.Entity(counter_entry=p4r.CounterEntry())  # counter_id 0: all
            request = p4r.ReadRequest(device_id=1, entities=[everything]).SerializeToString()
            reads, decodes = [], []
            for _ in range(5):
                responses: list[bytes] = []
                reads.append(timed(partial(fetch, read, request, responses))[1])
                decodes.append(timed(partial(decode_all, responses))[0])
            assert decode_all(responses) == cell_count
        size = sum(len(r) for r in responses)
        print(
            f"wildcard read of all counters, 4,096 slices ({cell_count:,} cells, "
            f"{size / 1e6:.2f} MB): "
            f"median {statistics.median(reads) * 1e3:.0f} ms wall over P4Runtime (raw gRPC), "
            f"+ {statistics.median(decodes) * 1e3:.0f} ms CPU to decode "
            f"(p4rt.cells, protobuf {proto.backend()})"
        )
    return rate


def scheme_parameters(scheme: dp.Scheme) -> dict[str, Any]:
    """A slice's CoDel (5 ms, 100 ms) or ABC (the paper's defaults) parameters."""
    if scheme == dp.Scheme.CODEL:
        return {"codel": CodelConfig.from_seconds(0.005, 0.1)}
    if scheme == dp.Scheme.ABC:
        return {"abc": AbcConfig.with_paper_thresholds(SLICE_RATE_BPS, 0.01)}
    return {}


def kernel_only(scheme: dp.Scheme) -> float:
    """The compiled path alone: 4,095 slices of ``scheme`` on one 10 Gbit/s port, each with
    ``SOURCES_PER_SLICE`` sources (ABC's aggregates), 3 million pre-generated Poisson arrivals
    spread over them (no Python traffic generation); packets per CPU-second of `Engine.run`."""
    slices = [
        dp.DataplaneSlice(
            sid, f"s{sid}", None, (f"10.{sid >> 8}.{sid & 255}.0/24",), SLICE_RATE_BPS, 0.01,
            sid % 8, scheme, None, 1, **scheme_parameters(scheme),
        )
        for sid in range(1, c.MAX_SLICES)
    ]  # fmt: skip
    state = DeviceState(P4InfoIndex.from_file(DEFAULT_P4INFO))
    install(state, dp.dataplane_entries(slices, [dp.Route("10.0.0.0/8", 1, "02:00:00:00:00:01")]))
    engine = Engine(state, {1: PortConfig(10_000_000_000, 1000)}, PortConfig())
    destinations = [
        Headers.parse(f"10.{s.dp_sid >> 8}.{s.dp_sid & 255}.1", ipv4_src=f"192.0.2.{user}")
        for s in slices
        for user in range(1, SOURCES_PER_SLICE + 1)
    ]
    classes = np.array([engine.header_class(headers) for headers in destinations])
    rng = np.random.default_rng(1)
    count = 3_000_000
    seconds = count * 1000 * 8 / (len(slices) * OFFERED_BPS)  # ~1000-byte frames on average
    arrivals = np.zeros((count, L.OL_COLUMNS), np.int64)
    arrivals[:, L.OL_TIME] = np.sort(rng.integers(0, int(seconds * 1e9), count))
    arrivals[:, L.OL_CLS] = classes[rng.integers(0, len(classes), count)]
    arrivals[:, L.OL_LEN] = rng.integers(64, 1519, count)
    arrivals[:, L.OL_ECN] = rng.integers(0, 3, count)
    cpu, wall = timed(lambda: engine.run(int(seconds * 1e9) + 1, arrivals))
    print(
        f"kernel alone, 4,095 {scheme} slices, {count:,} Poisson arrivals: "
        f"{count / cpu:,.0f} packets per CPU-second ({cpu:.2f} s CPU, {wall:.2f} s wall)"
    )
    return count / cpu


def fetch(read: Any, request: bytes, into: list[bytes]) -> None:
    """One Read RPC, every response part collected."""
    into.extend(read(request))


def decode_all(responses: list[bytes]) -> int:
    return len(cells.decode(responses, cells.CellKind.COUNTER))


def main() -> None:
    cpu, wall = timed(compile_kernel)
    print(f"kernel ready (compiled or loaded from numba's cache): {wall:.1f} s wall")
    paper_mix()
    codel_mix()
    floor = many_slices()
    with_codel = many_slices(dp.Scheme.CODEL)
    print(
        f"every slice on CoDel: {with_codel:,.0f} packets per CPU-second, "
        f"{with_codel / floor:.2f} x tail drop's {floor:,.0f} in this run (target 1,000,000)"
    )
    with_abc = many_slices(dp.Scheme.ABC)
    print(
        f"every slice on ABC: {with_abc:,.0f} packets per CPU-second, "
        f"{with_abc / floor:.2f} x tail drop's {floor:,.0f} in this run (target 1,000,000)"
    )
    kernel_floor = kernel_only(dp.Scheme.TAIL_DROP)
    for scheme in (dp.Scheme.CODEL, dp.Scheme.ABC):
        rate = kernel_only(scheme)
        print(
            f"kernel alone, every slice on {scheme}: {rate:,.0f} packets per CPU-second, "
            f"{rate / kernel_floor:.2f} x tail drop's {kernel_floor:,.0f} (target 1,000,000)"
        )


if __name__ == "__main__":
    main()
