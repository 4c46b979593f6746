"""Benchmarks of the control plane; prints plain ``name: figure`` lines.

1. Entries pushed per second to the emulator (a subprocess) through the adapter, in batches of
   1,000 per WriteRequest, and entries read back per second. Target: >= 5,000 entries/s.
2. Activation latency, from the API accepting a slice (POST /api/v1/slices answered 201) to
   the read-back that confirms it (the slice `active`), over the whole stack: a scratch
   database, an embedded Redis, the supervised Celery worker and beat, the emulator.
   Target: p95 < 1 s for a slice of 11 entries (5 prefixes: 5 classifier entries, 5 routes,
   1 policy).
3. With a real BMv2 at hand (`/tmp/p4tool/ENV.sh` puts `simple_switch_grpc` on PATH), entries/s
   and counter cells/s through the adapter as a ratio to a bare gRPC client (pre-encoded
   requests, responses not decoded) in the same run. Target: >= 0.9. Skipped, with a note,
   otherwise.

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
import sqlalchemy as sa
from fastapi.testclient import TestClient

from sliceportal import security
from sliceportal.api.main import create_app
from sliceportal.api.schemas.links import LinkCreate
from sliceportal.api.schemas.switches import SwitchCreate
from sliceportal.controlplane.supervisor import Child, Supervisor, celery_children
from sliceportal.core import embedded
from sliceportal.core.config import Environment, Settings, get_settings
from sliceportal.db.choices import SwitchState
from sliceportal.db.migrate import upgrade
from sliceportal.db.models import Slice, Switch
from sliceportal.db.session import create_db_engine, create_sessionmaker
from sliceportal.domain import dataplane as dp
from sliceportal.domain import reconcile as rc
from sliceportal.p4rt import wire
from sliceportal.p4rt.connection import SwitchTarget
from sliceportal.p4rt.pipeline import settings_pipeline
from sliceportal.p4rt.session import SwitchSession, connect
from sliceportal.services import links, switches
from sliceportal.services.changes import ChangeContext
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
        [sys.executable, "-m", "sliceportal.emulator", "--grpc", address],
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
        environment=Environment.TEST,
        secret_key="bench-secret-key-of-a-decent-length",
    )
    env = {**os.environ, "DATABASE_URL": database_url, "REDIS_URL": redis_url}
    env.update(SLICEPORTAL_ENVIRONMENT="test", SLICEPORTAL_SECRET_KEY=settings.secret_key)
    address = f"127.0.0.1:{embedded.free_tcp_port()}"
    switch = Child(
        "switch",
        [sys.executable, "-m", "sliceportal.emulator", "--grpc", address],
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
                db, SETUP, SwitchCreate(name="bench", address=address, kind="emulator")
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
                body = {
                    "name": f"bench-{n}",
                    "ipv4_prefixes": [f"10.{n}.{p}.0/24" for p in range(5)],
                    "rate_bps": 1e6,
                    "burst_limit_s": 0.02,
                    "priority": 7,
                    "link_ids": [link_id],
                }
                response = api.post("/api/v1/slices", json=body, headers=headers)
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


Row = tuple[int, int, list[tuple[int, wire.MatchKind, int, int]], int, tuple[int, ...], list[int]]
"""An update by ids: type, table, (field, kind, value, prefix length), action, params, args."""


def resolve(session: SwitchSession, update: rc.EntryUpdate) -> Row:
    """What a bare client would have at hand: the update with every name already an id."""
    program, entry = session.pipeline.program, update.entry
    table = session.pipeline.codec.table(entry.table)
    fields = {f.name: f for f in table.match_fields}
    action = next(a for a in program.actions.values() if a.name == entry.action)
    values = dict(entry.params)
    kind = {"insert": 1, "modify": 2, "delete": 3}[update.kind.value]
    matches = [
        (fields[m.field].id, fields[m.field].kind, m.value, m.prefix_len or 0) for m in entry.match
    ]
    return (
        kind,
        table.id,
        matches,
        action.id,
        action.param_ids,
        [values[p.name] for p in action.params],
    )


class BareClient:
    """The least a client must do for the same work, with no adapter: encode updates from ids
    and send them 1,000 per WriteRequest; send a counter Read and decode the cells."""

    def __init__(self, session: SwitchSession) -> None:
        self.channel = grpc.insecure_channel(
            session.target.address, options=[("grpc.max_metadata_size", 1 << 20)]
        )
        self.write_rpc = self.channel.unary_unary("/p4.v1.P4Runtime/Write")
        self.read_rpc = self.channel.unary_stream("/p4.v1.P4Runtime/Read")
        self.device_id, self.election_id = session.target.device_id, session.target.election_id

    def write(self, rows: list[Row]) -> None:
        for start in range(0, len(rows), 1000):
            updates = []
            for kind, table_id, matches, action_id, param_ids, args in rows[start : start + 1000]:
                encoded = [wire.encode_field_match(*match) for match in matches]
                action = wire.encode_table_action(action_id, param_ids, args) if kind != 3 else None
                body = wire.encode_table_entry(table_id, encoded, action)
                updates.append(
                    wire.encode_update(wire.UpdateType(kind), wire.EntityKind.TABLE_ENTRY, body)
                )
            request = wire.encode_write_request(self.device_id, self.election_id, updates)
            self.write_rpc(request, timeout=60)

    def read_cells(self, request: bytes) -> int:
        parts = list(self.read_rpc(request, timeout=60))
        return sum(len(wire.decode_counter_cells(part)) for part in parts)


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
        session = connect(SwitchTarget(1, address, 1, 10), settings=settings)
        try:
            session.push_pipeline(settings_pipeline(settings).cookie)
            compare_on_bmv2(session)
        finally:
            session.close()
    finally:
        process.terminate()
        process.wait(10)


def compare_on_bmv2(session: SwitchSession) -> None:
    inserts = updates(40, 49)  # 40 policies, 1,960 classifier entries, 1,960 routes
    deletes = [rc.EntryUpdate(rc.UpdateKind.DELETE, u.entry) for u in reversed(inserts)]
    bare = BareClient(session)
    bare_inserts = [resolve(session, u) for u in inserts]
    bare_deletes = [resolve(session, u) for u in deletes]
    session.write(inserts[:1])  # arbitrate: the bare client writes with the session's id
    session.write(deletes[-1:])
    adapter_s, bare_s = [], []
    for _ in range(ROUNDS):  # alternating, best of each: the machine may be busy
        start = time.perf_counter()
        assert all(outcome.ok for outcome in session.write(inserts))
        adapter_s.append(time.perf_counter() - start)
        bare.write(bare_deletes)
        start = time.perf_counter()
        bare.write(bare_inserts)
        bare_s.append(time.perf_counter() - start)
        assert all(outcome.ok for outcome in session.write(deletes))
    adapter, plain = min(adapter_s), min(bare_s)
    say("BMv2 push through the adapter", f"{len(inserts) / adapter:,.0f} entries/s")
    say("BMv2 push, bare gRPC client", f"{len(inserts) / plain:,.0f} entries/s")
    say("BMv2 push ratio adapter/bare", f"{plain / adapter:.2f} (target >= 0.9)")

    cells = [(dp.FORWARDED, i) for i in range(4096)]
    codec = session.pipeline.codec
    entities = [
        wire.encode_entity(
            wire.EntityKind.COUNTER_ENTRY, wire.encode_cell_entry(codec.counter_id(n), i)
        )
        for n, i in cells
    ]
    request = wire.encode_read_request(session.target.device_id, entities)
    adapter_s, bare_s = [], []
    for _ in range(3 * ROUNDS):
        start = time.perf_counter()
        assert len(session.read_counter_cells(cells)) == len(cells)
        adapter_s.append(time.perf_counter() - start)
        start = time.perf_counter()
        assert bare.read_cells(request) == len(cells)
        bare_s.append(time.perf_counter() - start)
    adapter, plain = min(adapter_s), min(bare_s)
    say("BMv2 counter cells through the adapter", f"{len(cells) / adapter:,.0f} cells/s")
    say("BMv2 counter cells, bare gRPC client", f"{len(cells) / plain:,.0f} cells/s")
    say("BMv2 counter cells ratio adapter/bare", f"{plain / adapter:.2f} (target >= 0.9)")
    bare.channel.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slices", type=int, default=30, help="slices timed for the latency")
    parser.add_argument("--bmv2-only", action="store_true", help="only the BMv2 comparison")
    args = parser.parse_args()
    settings = get_settings()
    say("machine", f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    if not args.bmv2_only:
        bench_emulator_push(settings)
        bench_activation(args.slices)
    bench_bmv2(settings)
    return 0


if __name__ == "__main__":
    sys.exit(main())
