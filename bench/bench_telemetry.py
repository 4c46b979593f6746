"""Benchmark the telemetry: poll-and-parse time for 4,096 slices, and breach-to-alert latency.

The emulator runs in a subprocess (as a switch would: its own process and core), with every
counter cell of its 4,096 slices holding realistic values that grow twice a second.

1. Poll and parse: one `SwitchPoller.poll()` of all 4,096 slices (81,920 counter cells and
   8,192 register cells over P4Runtime, decoded, differenced into counts), `--polls` times.
   Target: p95 < 50 ms.
2. Breach to alert: the whole poller (inventory from a fresh PostgreSQL database, sink, alert
   engine, Redis) on the same switch with `--slices` slices (256, which one period reads, and
   4,096), one with a loss SLA. The emulator
   is told to start dropping that slice's packets; the time until the `firing` event arrives on
   Redis is the latency. Repeated `--breaches` times (each breach cleared and its alert
   resolved first). Target: <= 3 s.

    python bench/bench_telemetry.py [--polls 30] [--slices 256,4096] [--breaches 10]

Uses the PostgreSQL at BENCH_POSTGRES (default: the local server) and the Redis at REDIS_URL
(default: database 14 of the local one).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import redis
import sqlalchemy as sa

from sliceportal.core import embedded
from sliceportal.core.channels import Channels
from sliceportal.core.config import Settings
from sliceportal.db.migrate import upgrade
from sliceportal.db.models import Link, Slice, SliceLink, SliceSla, SliceSwitch, Switch
from sliceportal.db.session import create_db_engine
from sliceportal.domain import dataplane as dp
from sliceportal.domain import p4constants as c
from sliceportal.domain.sla import Targets
from sliceportal.domain.telemetry import counter_indices, register_indices
from sliceportal.p4rt import proto
from sliceportal.p4rt.connection import SwitchTarget
from sliceportal.p4rt.session import SessionPool
from sliceportal.telemetry.inventory import SliceWatch, SwitchWatch
from sliceportal.telemetry.poller import Poller, SwitchPoller

SERVER = os.environ.get("BENCH_POSTGRES", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres")
REDIS = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/14")
BREACH_DP_SID = 1


def serve_emulator(port: int) -> None:
    """The subprocess: an emulator whose counters grow like traffic; `breach`/`clear` lines on
    stdin start and stop the drops of slice BREACH_DP_SID."""
    from sliceportal.emulator.server import EmulatorServer

    server = EmulatorServer(f"127.0.0.1:{port}", 1, load_pipeline=True)
    server.start()
    service = server.service
    state = service.state
    assert state is not None
    ids = {info.name: cid for cid, info in service.program.counters.items()}
    rng = np.random.default_rng(1)
    with state.lock:
        for array in state.counters.values():
            array.packets[:] = rng.integers(1 << 20, 1 << 40, array.packets.shape)
            array.bytes[:] = array.packets * 1000
    breaching = threading.Event()

    def traffic() -> None:
        forwarded = state.counters[ids[dp.FORWARDED]]
        dropped = state.counters[ids[dp.VQ_DROPPED]]
        while True:
            time.sleep(0.05)
            with state.lock:
                forwarded.packets += 50  # 1,000 packets/s of 1,000 bytes per slice
                forwarded.bytes += 50_000
                if breaching.is_set():
                    dropped.packets[BREACH_DP_SID] += 10  # a sixth of the packets dropped
                    dropped.bytes[BREACH_DP_SID] += 10_000

    threading.Thread(target=traffic, daemon=True).start()
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    for line in sys.stdin:
        (breaching.set if line.strip() == "breach" else breaching.clear)()


@contextmanager
def emulator() -> Iterator[tuple[str, subprocess.Popen[str]]]:
    port = embedded.free_tcp_port()
    process = subprocess.Popen(
        [sys.executable, __file__, "--serve-emulator", str(port)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stdout.readline().strip() == "ready"
    try:
        yield f"127.0.0.1:{port}", process
    finally:
        process.kill()
        process.wait()


def percentiles(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return (
        f"p50 {statistics.median(ordered) * 1e3:.1f} ms, p95 {p95 * 1e3:.1f} ms, "
        f"max {ordered[-1] * 1e3:.1f} ms"
    )


def bench_poll(address: str, polls: int) -> None:
    target = dp.histogram_target(0.01)
    slices = tuple(SliceWatch(10_000 + sid, sid, Targets(), target) for sid in range(c.MAX_SLICES))
    watch = SwitchWatch(SwitchTarget(1, address, 1, 1), 10**6, slices)
    pool = SessionPool(Settings(REDIS_URL=REDIS))
    poller = SwitchPoller(watch, pool, 60.0)  # a long period: all slices in every read
    poller.poll()  # connect, and the baseline reading
    times = []
    for _ in range(polls):
        started = time.perf_counter()
        batch = poller.poll()
        times.append(time.perf_counter() - started)
        assert batch is not None and len(batch.slices) == c.MAX_SLICES
        time.sleep(0.2)
    session = pool.get(watch.target)
    every = range(c.MAX_SLICES)
    counters, registers = counter_indices(every), register_indices(every)
    reads = []
    for _ in range(polls):  # the adapter's share: the same reads, nothing done with them
        started = time.perf_counter()
        session.read_counters(counters)
        session.read_register_values(registers)
        reads.append(time.perf_counter() - started)
        time.sleep(0.2)
    pool.close()
    cells = c.MAX_SLICES * poller.cells_per_slice
    print(f"protobuf backend: {proto.backend()}")
    print(f"poll and parse, {c.MAX_SLICES} slices ({cells} cells): {percentiles(times)}")
    print(f"  of which the P4Runtime reads (adapter and emulator): {percentiles(reads)}")


def create_inventory(database_url: str, address: str, count: int) -> None:
    """A switch, a link and `count` slices (DP_SID 1…), written directly: no admission."""
    engine = create_db_engine(Settings(DATABASE_URL=database_url))
    with engine.begin() as conn:
        switch_id = conn.scalar(
            sa.insert(Switch)
            .values(name="bench", address=address, kind="emulator")
            .returning(Switch.id)
        )
        link_id = conn.scalar(
            sa.insert(Link)
            .values(switch_id=switch_id, name="eth1", port=1, capacity_bps=1e12)
            .returning(Link.id)
        )
        ids = conn.scalars(
            sa.insert(Slice).returning(Slice.id, sort_by_parameter_order=True),
            [
                {
                    "name": f"s{i}",
                    "vlan_id": None,
                    "ipv4_prefixes": [f"10.{i // 256}.{i % 256}.0/24"],
                    "rate_bps": 1e6,
                    "burst_limit_s": 0.01,
                    "delay_target_s": 0.01,
                    "priority": 7,
                }
                for i in range(count)
            ],
        ).all()
        conn.execute(
            sa.insert(SliceSla),
            [
                {"slice_id": sid, "max_loss_ratio": 0.05 if n == 0 else None}
                for n, sid in enumerate(ids)
            ],
        )
        conn.execute(
            sa.insert(SliceSwitch),
            [
                {"slice_id": sid, "switch_id": switch_id, "dp_sid": n + 1}
                for n, sid in enumerate(ids)
            ],
        )
        conn.execute(
            sa.insert(SliceLink),
            [{"slice_id": sid, "link_id": link_id, "switch_id": switch_id} for sid in ids],
        )
    engine.dispose()


def next_event(pubsub: redis.client.PubSub, kind: str, timeout_s: float = 30) -> float:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        message = pubsub.get_message(ignore_subscribe_messages=True, timeout=0.05)
        if message is not None and json.loads(message["data"])["event"] == kind:
            return time.monotonic()
    raise RuntimeError(f"no {kind} alert within {timeout_s} s")


def bench_alerts(address: str, process: subprocess.Popen[str], count: int, breaches: int) -> None:
    name = f"sliceportal_bench_{uuid.uuid4().hex[:8]}"
    database_url = embedded.create_database(SERVER, name)
    try:
        upgrade(database_url)
        create_inventory(database_url, address, min(count, c.MAX_SLICES - 1))
        settings = Settings(DATABASE_URL=database_url, REDIS_URL=REDIS)
        poller = Poller(settings)
        pubsub = redis.Redis.from_url(REDIS).pubsub()
        pubsub.subscribe(Channels.of(database_url).alerts)
        stop = threading.Event()
        thread = threading.Thread(target=poller.run, args=(stop,), daemon=True)
        thread.start()
        assert process.stdin is not None
        latencies, groups = [], set()
        try:
            time.sleep(3 * settings.telemetry_refresh_s)  # inventory, baselines
            for _ in range(breaches):
                process.stdin.write("breach\n")
                process.stdin.flush()
                started = time.monotonic()
                latencies.append(next_event(pubsub, "firing") - started)
                groups |= {len(p.groups) for p in poller.switches.values()}
                process.stdin.write("clear\n")
                process.stdin.flush()
                next_event(pubsub, "resolved")
        finally:
            stop.set()
            thread.join(timeout=30)
            pubsub.close()
        print(
            f"breach to alert, {count} slices on the switch (read in "
            f"{'/'.join(map(str, sorted(groups)))} period(s)), {breaches} breaches: "
            f"{percentiles(latencies)}"
        )
    finally:
        embedded.drop_database(SERVER, name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--polls", type=int, default=30)
    parser.add_argument(
        "--slices",
        type=lambda text: [int(n) for n in text.split(",")],
        default=[256, c.MAX_SLICES],
        help="slices on the switch for the alert latency, comma-separated (default 256,4096)",
    )
    parser.add_argument("--breaches", type=int, default=10)
    parser.add_argument("--serve-emulator", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_emulator:
        serve_emulator(args.serve_emulator)
        return
    with emulator() as (address, process):
        bench_poll(address, args.polls)
        for count in args.slices:
            bench_alerts(address, process, count, args.breaches)
    print(f"(at {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC, load {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
