"""Benchmarks of the control plane; prints plain ``name: figure`` lines.

1. Entries pushed per second to the emulator (a subprocess) through the adapter, in batches of
   1,000 per WriteRequest, and entries read back per second. Target: >= 5,000 entries/s.
2. Activation latency, from the API accepting a slice (POST /api/v1/slices answered 201) to
   the read-back that confirms it (the slice `active`), over the whole stack: a scratch
   database, an embedded Redis, the supervised Celery worker and beat, the emulator.
   Target: p95 < 1 s for a slice of 11 entries (5 prefixes: 5 classifier entries, 5 routes,
   1 policy).
3. Entries/s and counter cells/s through the adapter as a ratio to the floor, a bare gRPC
   client sending requests serialized before the clock starts and taking responses as bytes,
   undecoded (`BareClient`), in the same run: on the emulator, and on a real BMv2 when one is
   at hand (`/tmp/p4tool/ENV.sh` puts `simple_switch_grpc` on PATH; skipped with a note
   otherwise). Target: >= 0.9.

Run: ``.venv/bin/python bench/bench_controlplane.py [--slices 30]``
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

import grpc  # type: ignore[import-untyped, unused-ignore]
import numpy as np
import sqlalchemy as sa
from fastapi.testclient import TestClient

from sliceportal import security
from sliceportal.api.main import create_app
from sliceportal.controlplane.supervisor import Child, Supervisor, celery_children
from sliceportal.core import embedded
from sliceportal.core.config import Settings, get_settings
from sliceportal.db.changes import ChangeContext
from sliceportal.db.migrate import upgrade
from sliceportal.db.models import Slice, Switch
from sliceportal.db.session import create_db_engine, create_sessionmaker
from sliceportal.domain import dataplane as dp
from sliceportal.domain import reconcile as rc
from sliceportal.p4rt import reads
from sliceportal.p4rt.cells import CellKind
from sliceportal.p4rt.connection import SwitchTarget
from sliceportal.p4rt.pipeline import settings_pipeline
from sliceportal.p4rt.proto import p4r
from sliceportal.p4rt.session import SwitchSession, connect
from sliceportal.schemas.choices import SwitchKind, SwitchState
from sliceportal.schemas.links import LinkCreate
from sliceportal.schemas.switches import SwitchCreate
from sliceportal.services import links, switches
from sliceportal.services.users import create_admin

SERVER = os.environ.get("BENCH_POSTGRES", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres")
P4TOOL_ENV = Path("/tmp/p4tool/ENV.sh")
ROUNDS = 7
SETUP = ChangeContext(user_id=None, request_id="bench-setup")


def say(name: str, figure: str) -> None:
    print(f"{name}: {figure}", flush=True)


def wait_for(condition: Callable[[], object], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"not within {timeout_s} s: {what}")
        time.sleep(0.01)


def updates(slices: int, prefixes: int, port: int = 1) -> list[rc.EntryUpdate]:
    """INSERTs of `slices` slices of `prefixes` prefixes each, in install order."""
    intents = [
        rc.slice_intent(
            n,
            f"s{n}",
            [
                dp.DataplaneSlice(
                    n,
                    f"s{n}",
                    None,
                    tuple(f"10.{n}.{p}.0/24" for p in range(prefixes)),
                    10e6,
                    0.01,
                    7,
                    dp.Scheme.TAIL_DROP,
                    None,
                    port,
                )
            ],
        )
        for n in range(1, slices + 1)
    ]
    return list(rc.plan(rc.desired_state(intents).entries, []).updates)


@contextmanager
def emulator_process() -> Iterator[str]:
    address = f"127.0.0.1:{embedded.free_tcp_port()}"
    process = subprocess.Popen(
        [sys.executable, "-m", "sliceportal.cli", "switch", "--grpc", address],
        stdout=subprocess.DEVNULL,
    )
    try:
        host, port = address.split(":")
        wait_for(lambda: embedded.tcp_port_answers(host, int(port)), 30, "the emulator listens")
        yield address
    finally:
        process.terminate()
        process.wait(10)


def bench_emulator_push(settings: Settings) -> None:
    inserts = updates(100, 49)  # 100 policies, 4,900 classifier entries, 4,900 routes
    with emulator_process() as address:
        session = connect(SwitchTarget(1, address, 1, 10), settings=settings)
        try:
            session.push_pipeline(settings_pipeline(settings).cookie)
            session.write(updates(1, 1))  # warm up: arbitration, codec caches
            session.write([rc.EntryUpdate(rc.UpdateKind.DELETE, u.entry) for u in updates(1, 1)])
            start = time.perf_counter()
            outcomes = session.write(inserts)
            pushed = time.perf_counter() - start
            assert all(o.ok for o in outcomes)
            start = time.perf_counter()
            held = session.read_entries()
            read = time.perf_counter() - start
        finally:
            session.close()
    rate = len(inserts) / pushed
    say("emulator push", f"{len(inserts)} entries in {pushed:.2f} s = {rate:,.0f} entries/s")
    say("emulator push target", "5,000 entries/s")
    say(
        "emulator read-back",
        f"{len(held)} entries in {read:.2f} s = {len(held) / read:,.0f} entries/s",
    )


@contextmanager
def scratch_database() -> Iterator[str]:
    server = SERVER
    workdir = None
    if not embedded.tcp_port_answers("127.0.0.1", 5432) and "BENCH_POSTGRES" not in os.environ:
        workdir = Path(tempfile.mkdtemp(prefix="bench-pg-"))
        server = embedded.start_embedded_postgres(workdir / "data")
    name = f"sliceportal_bench_{uuid.uuid4().hex[:8]}"
    url = embedded.create_database(server, name)
    try:
        yield url
    finally:
        embedded.drop_database(server, name)
        if workdir is not None:
            shutil.rmtree(workdir, ignore_errors=True)


def slice_body(n: int, link_id: int) -> dict[str, object]:
    """The `n`th timed slice: five prefixes (11 entries with its policy and routes), 1 Mbit/s,
    a 20 ms burst (it must hold one 1518-byte frame: 12.1 ms at 1 Mbit/s)."""
    return {
        "name": f"bench-{n}",
        "ipv4_prefixes": [f"10.{(5 * n + p) // 256}.{(5 * n + p) % 256}.0/24" for p in range(5)],
        "rate_bps": 1e6,
        "burst_limit_s": 0.02,
        "priority": 7,
        "link_ids": [link_id],
    }


def bench_activation(count: int) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="bench-controlplane-"))
    redis = embedded.start_embedded_redis(workdir / "redis")
    try:
        with scratch_database() as database_url:
            activation(database_url, redis.url, workdir, count)
    finally:
        redis.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def activation(database_url: str, redis_url: str, workdir: Path, count: int) -> None:
    upgrade(database_url)
    settings = Settings(
        DATABASE_URL=database_url,
        REDIS_URL=redis_url,
        secret_key="bench-secret-key-of-a-decent-length",
    )
    env = {**os.environ, "DATABASE_URL": database_url, "REDIS_URL": redis_url}
    env.update(SLICEPORTAL_SECRET_KEY=settings.signing_key())
    address = f"127.0.0.1:{embedded.free_tcp_port()}"
    switch = Child(
        "switch",
        [sys.executable, "-m", "sliceportal.cli", "switch", "--grpc", address],
        env,
        workdir / "switch.log",
    )
    supervisor = Supervisor([switch, *celery_children(workdir, workdir / "beat-schedule", env=env)])
    engine = create_db_engine(settings)
    sessions = create_sessionmaker(engine)
    supervisor.start()
    try:
        for name, ready in (("worker", "ready."), ("beat", "beat: Starting")):
            wait_for(partial(logged, supervisor.child(name), ready), 120, f"{name} started")
        with sessions() as db:
            admin = create_admin(db, "bench-admin", "benchmark password")
            row = switches.create_switch(
                db, SETUP, SwitchCreate(name="bench", address=address, kind="emulator"), settings
            )
            link = links.create_link(
                db,
                SETUP,
                LinkCreate(switch_id=row.id, name="eth1", port=1, capacity_bps=100e9),
                settings,
            )
            switch_id, link_id = row.id, link.id

        def reachable() -> bool:
            with sessions() as db:
                found = db.get(Switch, switch_id)
                return found is not None and found.state is SwitchState.REACHABLE

        wait_for(reachable, 60, "the switch deployed")
        token, _ = security.create_access_token(admin.id, settings)
        headers = {"Authorization": f"Bearer {token}"}
        latencies = []
        with TestClient(create_app(settings)) as api:
            for n in range(1, count + 1):
                response = api.post("/api/v1/slices", json=slice_body(n, link_id), headers=headers)
                accepted = time.perf_counter()
                assert response.status_code == 201, response.text
                slice_id = response.json()["id"]
                with engine.connect() as conn:
                    wait_for(partial(active, conn, slice_id), 30, f"slice {n} active")
                latencies.append(time.perf_counter() - accepted)
        latencies.sort()
        p95 = statistics.quantiles(latencies, n=20, method="inclusive")[18]
        say(
            "activation latency (API accept -> read-back, 11-entry slices)",
            f"p50 {statistics.median(latencies) * 1e3:.0f} ms, p95 {p95 * 1e3:.0f} ms, "
            f"max {latencies[-1] * 1e3:.0f} ms over {count} slices (target p95 < 1 s)",
        )
    finally:
        supervisor.stop()
        engine.dispose()


def logged(child: Child, text: str) -> bool:
    return child.log is not None and child.log.exists() and text in child.log.read_text()


def active(conn: sa.Connection, slice_id: int) -> bool:
    state = conn.execute(sa.select(Slice.state).where(Slice.id == slice_id)).scalar_one()
    conn.rollback()
    return bool(state == "active")


def p4tool_env() -> dict[str, str] | None:
    """The environment /tmp/p4tool/ENV.sh sets up, when it exists and finds simple_switch_grpc."""
    if not P4TOOL_ENV.is_file():
        return None
    dumped = subprocess.run(
        ["bash", "-c", f"source {P4TOOL_ENV} >/dev/null 2>&1 && env -0"],
        capture_output=True,
        check=False,
    ).stdout
    env = dict(item.split("=", 1) for item in dumped.decode().split("\0") if "=" in item)
    return env if shutil.which("simple_switch_grpc", path=env.get("PATH")) else None


class BareClient:
    """The floor: a bare gRPC channel that sends requests serialized before the clock starts
    and takes the answers as bytes, undecoded (no request serializer, no response
    deserializer): what any client must at least spend on the same work."""

    def __init__(self, address: str) -> None:
        options = [
            ("grpc.max_metadata_size", 1 << 20),
            ("grpc.max_receive_message_length", 64 << 20),
        ]
        self.channel = grpc.insecure_channel(address, options=options)
        self.write_rpc = self.channel.unary_unary("/p4.v1.P4Runtime/Write")
        self.read_rpc = self.channel.unary_stream("/p4.v1.P4Runtime/Read")

    def write(self, requests: list[bytes]) -> None:
        for request in requests:
            self.write_rpc(request, timeout=60)

    def read(self, requests: list[bytes]) -> int:
        return sum(len(part) for request in requests for part in self.read_rpc(request, timeout=60))


def encoded_writes(session: SwitchSession, updates: list[rc.EntryUpdate]) -> list[bytes]:
    """The serialized WriteRequests of `updates`, 1,000 a batch, as the session would send."""
    codec, target = session.pipeline.codec, session.target
    election = p4r.Uint128(high=target.election_id >> 64, low=target.election_id & (2**64 - 1))
    return [
        p4r.WriteRequest(
            device_id=target.device_id,
            election_id=election,
            updates=[codec.encode_update(u) for u in updates[start : start + 1000]],
        ).SerializeToString()
        for start in range(0, len(updates), 1000)
    ]


def compare_with_floor(session: SwitchSession, switch: str) -> None:
    """Entries/s and counter cells/s through the adapter, as a ratio to `BareClient` in the
    same run (alternating, best of each: the machine may be busy)."""
    inserts = updates(40, 49)  # 40 policies, 1,960 classifier entries, 1,960 routes
    deletes = [rc.EntryUpdate(rc.UpdateKind.DELETE, u.entry) for u in reversed(inserts)]
    bare = BareClient(session.target.address)
    bare_inserts, bare_deletes = encoded_writes(session, inserts), encoded_writes(session, deletes)
    session.write(inserts[:1])  # arbitrate: the bare client writes with the session's id
    session.write(deletes[-1:])
    adapter_s, bare_s = [], []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        assert all(outcome.ok for outcome in session.write(inserts))
        adapter_s.append(time.perf_counter() - start)
        bare.write(bare_deletes)
        start = time.perf_counter()
        bare.write(bare_inserts)
        bare_s.append(time.perf_counter() - start)
        assert all(outcome.ok for outcome in session.write(deletes))
    adapter, plain = min(adapter_s), min(bare_s)
    say(f"{switch} push through the adapter", f"{len(inserts) / adapter:,.0f} entries/s")
    say(f"{switch} push, bare gRPC floor", f"{len(inserts) / plain:,.0f} entries/s")
    say(f"{switch} push ratio adapter/floor", f"{plain / adapter:.2f} (target >= 0.9)")

    program = session.pipeline.program
    histogram = next(c for c in program.counters.values() if c.size == 8 * 4096)
    for label, wanted in (
        ("4,096 named cells", {histogram.name: np.arange(0, histogram.size, 8)}),
        ("a whole 4,096-cell array", {dp.FORWARDED: np.arange(4096)}),
        (f"a whole {histogram.size:,}-cell array", {histogram.name: np.arange(histogram.size)}),
    ):
        cell_count = sum(len(cells) for cells in wanted.values())
        plan = reads.plan(
            CellKind.COUNTER, wanted, session.pipeline, session.target.device_id, 4096
        )
        adapter_s, bare_s = [], []
        for _ in range(3 * ROUNDS):
            start = time.perf_counter()
            found = session.read_counters(wanted)
            adapter_s.append(time.perf_counter() - start)
            assert sum(len(packets) for packets, _ in found.values()) == cell_count
            start = time.perf_counter()
            assert bare.read(plan.requests) > 0
            bare_s.append(time.perf_counter() - start)
        adapter, plain = min(adapter_s), min(bare_s)
        say(
            f"{switch} counter read of {label}",
            f"adapter {cell_count / adapter:,.0f} cells/s ({adapter * 1e3:.1f} ms), "
            f"floor {cell_count / plain:,.0f} cells/s ({plain * 1e3:.1f} ms), "
            f"ratio {plain / adapter:.2f} (target >= 0.9)",
        )
    bare.channel.close()


def bench_emulator_floor(settings: Settings) -> None:
    with emulator_process() as address:
        session = connect(SwitchTarget(1, address, 1, 10), settings=settings)
        try:
            session.push_pipeline(settings_pipeline(settings).cookie)
            compare_with_floor(session, "emulator")
        finally:
            session.close()


def bench_bmv2(settings: Settings) -> None:
    env = p4tool_env()
    if env is None:
        print(f"BMv2 comparison: skipped (no {P4TOOL_ENV} putting simple_switch_grpc on PATH)")
        return
    if not settings.p4_device_config_path.is_file():
        missing = settings.p4_device_config_path
        print(f"BMv2 comparison: skipped (no {missing}: run make -C p4 compile)")
        return
    port, thrift = embedded.free_tcp_port(), embedded.free_tcp_port()
    address = f"127.0.0.1:{port}"
    process = subprocess.Popen(
        ["simple_switch_grpc", "--device-id", "1", "--no-p4", "--thrift-port", str(thrift),
         "--", "--grpc-server-addr", address, "--priority-queues", "8"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wait_for(
            lambda: embedded.tcp_port_answers("127.0.0.1", port), 30, "simple_switch_grpc listens"
        )
        target = SwitchTarget(1, address, 1, 10, kind=SwitchKind.BMV2)
        session = connect(target, settings=settings)
        try:
            session.push_pipeline(settings_pipeline(settings).cookie)
            compare_with_floor(session, "BMv2")
        finally:
            session.close()
    finally:
        process.terminate()
        process.wait(10)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slices", type=int, default=30, help="slices timed for the latency")
    parser.add_argument("--bmv2-only", action="store_true", help="only the BMv2 comparison")
    parser.add_argument("--no-activation", action="store_true", help="skip the latency part")
    args = parser.parse_args()
    settings = get_settings()
    say("machine", f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    if not args.bmv2_only:
        bench_emulator_push(settings)
        bench_emulator_floor(settings)
        if not args.no_activation:
            bench_activation(args.slices)
    bench_bmv2(settings)
    return 0


if __name__ == "__main__":
    sys.exit(main())
