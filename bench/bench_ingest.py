"""Benchmark the telemetry ingest at fleet volume, with the slice history read while it runs.

Issue 22, section 2: sustained ingest of samples (target >= 100,000 samples/s) with the
slice-history query's p95 printed during the ingest, and where the time goes.

1. Ingest: `--writers` processes, each the sink of a poller holding its share of `--switches`
   switches of `--slices` slices, store one poll of a switch after another for `--seconds`
   through the pollers' write path (`store.record_poll` and `store.insert_batch`, the COPY,
   one transaction per poll, as `SampleSink.handle` stores a batch), as fast as they can. Each
   switch's clock advances a period per poll, so the samples cross partition boundaries when
   the writers outrun real time.
2. History: meanwhile `--readers` processes ask `store.history` (the SQL of
   `GET /slices/{id}/telemetry` without `start`/`end`: the last hour at 4 s) for random slices
   that hold an hour of samples, back to back; the same before the ingest, for comparison.
3. Maintenance: half-way through, the previous hour's raw partition is downsampled and dropped
   (`partitions.downsample`), as beat would: its time and the worst history latency around it.
4. Where the time goes: CPU seconds of the writers (formatting rows, psycopg) and of their
   PostgreSQL backends (COPY: parsing, heap, indexes, WAL) from /proc, the WAL written, and a
   breakdown measured by storing the same polls into tables that have less: no constraints
   or indexes, CHECKs, + primary key, + BRIN (the unpartitioned table of 0018), and the
   partitioned table; each time split into COPY and commit.

    python bench/bench_ingest.py [--seconds 30] [--writers 2] [--switches 25] [--slices 4096]

Uses the PostgreSQL at BENCH_POSTGRES (default: the local server); a fresh database, dropped
at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import multiprocessing as mp
import os
import random
import statistics
import threading
import time
import uuid
from collections.abc import Iterator
from multiprocessing.synchronize import Event
from typing import NamedTuple

import numpy as np
import sqlalchemy as sa
from sqlalchemy.orm import Session

from sliceportal.core import embedded
from sliceportal.db import partitions
from sliceportal.db import samples as store
from sliceportal.db.migrate import upgrade
from sliceportal.domain import dataplane as dp
from sliceportal.domain.telemetry import COLUMNS

SERVER = os.environ.get("BENCH_POSTGRES", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres")
TARGET = 100_000
"""Samples a second (issue 22, section 2)."""
HOUR = dt.timedelta(hours=1)
PERIOD = dt.timedelta(seconds=1)
HISTORY_SLICES = 64
"""Slices (of switch 1) given an hour of samples before the ingest, for the history reads."""
HIST_TARGET = dp.histogram_target(0.02)
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


@contextlib.contextmanager
def bench_database() -> Iterator[str]:
    name = f"sliceportal_bench_ingest_{uuid.uuid4().hex[:8]}"
    url = embedded.create_database(SERVER, name)
    try:
        upgrade(url)
        yield url
    finally:
        embedded.drop_database(SERVER, name)


def percentiles(values: list[float]) -> str:
    if not values:
        return "no samples"
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return (
        f"p50 {statistics.median(ordered) * 1e3:.1f} ms, p95 {p95 * 1e3:.1f} ms, "
        f"max {ordered[-1] * 1e3:.1f} ms ({len(ordered)} queries)"
    )


def cpu_seconds(pid: int) -> float:
    """User and system CPU seconds of a process of this machine (/proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def poll_counts(slices: int) -> np.ndarray:
    """A poll's counts: packets, bytes and histograms of plausible sizes."""
    rng = np.random.default_rng(slices)
    counts = rng.integers(0, 100_000, (slices, len(COLUMNS)), dtype=np.int64)
    return counts


def store_poll(
    session: Session, switch_id: int, t: dt.datetime, slice_ids: list[int], counts: np.ndarray
) -> None:
    """One poll of one switch, stored as `SampleSink.handle` stores it (no registers)."""
    iso = t.isoformat()
    store.record_poll(session, switch_id, iso, PERIOD.total_seconds())
    store.insert_batch(
        session,
        switch_id,
        iso,
        slice_ids,
        [PERIOD.total_seconds()] * len(slice_ids),
        counts,
        np.full(len(slice_ids), HIST_TARGET, dtype=np.int64),
        [False] * len(slice_ids),
        None,
    )


class WriterResult(NamedTuple):
    """What a writer stored and what it cost (a tuple: it crosses a process boundary)."""

    samples: int
    polls: int
    copy_s: float
    commit_s: float
    client_cpu_s: float
    server_cpu_s: float


def write(
    url: str,
    switch_ids: list[int],
    slices: int,
    start: dt.datetime,
    go: Event,
    seconds: float,
    results: mp.Queue[WriterResult],
) -> None:
    """A writer process: polls of its switches one after another until `seconds` passed."""
    engine = sa.create_engine(url, pool_size=1)  # one backend throughout, as a sink's
    slice_ids = list(range(1, slices + 1))
    counts = poll_counts(slices)
    clocks = dict.fromkeys(switch_ids, start)
    samples = polls = 0
    copy_s = commit_s = 0.0
    with Session(engine) as session:
        backend = session.scalar(sa.text("SELECT pg_backend_pid()"))
        session.commit()
        go.wait()
        client_cpu, server_cpu = time.process_time(), cpu_seconds(backend)
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            for switch_id in switch_ids:
                clocks[switch_id] += PERIOD
                began = time.perf_counter()
                store_poll(session, switch_id, clocks[switch_id], slice_ids, counts)
                copied = time.perf_counter()
                session.commit()
                commit_s += time.perf_counter() - copied
                copy_s += copied - began
                samples += slices
                polls += 1
        client_cpu = time.process_time() - client_cpu
        server_cpu = cpu_seconds(backend) - server_cpu
    engine.dispose()
    results.put(WriterResult(samples, polls, copy_s, commit_s, client_cpu, server_cpu))


def read(url: str, end: dt.datetime, go: Event, stop: Event, results: mp.Queue[list]) -> None:
    """A reader process: histories of random slices of switch 1, back to back, until `stop`;
    each (finished at, seconds taken, CPU seconds of this process: SQLAlchemy and psycopg
    turning the rows into records)."""
    engine = sa.create_engine(url, pool_size=1)
    taken: list[tuple[float, float, float]] = []
    rng = random.Random(os.getpid())
    go.wait()
    with Session(engine) as session:
        while not stop.is_set():
            slice_id = rng.randint(1, HISTORY_SLICES)
            began, cpu = time.perf_counter(), time.process_time()
            rows = store.history(session, slice_id, end - HOUR, end, 4)
            session.rollback()
            done = time.perf_counter()
            assert rows, "the history is empty"
            taken.append((done, done - began, time.process_time() - cpu))
    engine.dispose()
    results.put(taken)


def prefill(engine: sa.Engine, now: dt.datetime) -> None:
    """An hour of samples up to ``now`` for slices 1..HISTORY_SLICES of switch 1."""
    slice_ids = list(range(1, HISTORY_SLICES + 1))
    counts = poll_counts(HISTORY_SLICES)
    with Session(engine) as session:
        for second in range(int(HOUR.total_seconds()), 0, -1):
            store_poll(session, 1, now - second * PERIOD, slice_ids, counts)
        session.commit()
        session.execute(sa.text("ANALYZE telemetry_samples"))
        session.commit()


def idle_history(url: str, end: dt.datetime, seconds: float) -> list[tuple[float, float, float]]:
    go, stop = mp.Event(), mp.Event()
    results: mp.Queue[list] = mp.Queue()
    reader = mp.Process(target=read, args=(url, end, go, stop, results))
    reader.start()
    go.set()
    time.sleep(seconds)
    stop.set()
    taken = results.get(timeout=120)
    reader.join()
    return taken


def wal_bytes(engine: sa.Engine) -> int:
    with engine.connect() as connection:
        return int(connection.scalar(sa.text("SELECT pg_current_wal_lsn() - '0/0'::pg_lsn")))


def bench_ingest(url: str, args: argparse.Namespace) -> None:
    engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    partitions.ensure_partitions(engine, partitions.RAW, now - HOUR, now + 3 * HOUR, HOUR)
    partitions.ensure_partitions(
        engine, partitions.MINUTE, now - HOUR, now + 3 * HOUR, partitions.MINUTE_SPAN
    )
    prefill(engine, now)
    print(f"history of {HISTORY_SLICES} slices: an hour of samples each ({3600} rows)")
    idle = idle_history(url, now + dt.timedelta(seconds=3 * args.seconds), min(5.0, args.seconds))
    print(f"history, idle: {percentiles([took for _, took, _ in idle])}")
    python = statistics.median(cpu for _, _, cpu in idle)
    print(
        f"  of which Python (SQLAlchemy, psycopg, records): p50 {python * 1e3:.1f} ms; "
        "the rest is PostgreSQL (an index scan and a heap page per row of the slice: its "
        "rows of an hour lie among all the others') and waiting for a core"
    )

    go, stop = mp.Event(), mp.Event()
    written: mp.Queue[WriterResult] = mp.Queue()
    answered: mp.Queue[list] = mp.Queue()
    switches = list(range(1, args.switches + 1))
    writers = [
        mp.Process(
            target=write,
            args=(url, switches[i :: args.writers], args.slices, now, go, args.seconds, written),
        )
        for i in range(args.writers)
    ]
    # The last hour up to past the samples the writers will write: each query reads the
    # partition being written to, as the slice page does.
    end = now + dt.timedelta(seconds=3 * args.seconds)
    readers = [
        mp.Process(target=read, args=(url, end, go, stop, answered)) for _ in range(args.readers)
    ]
    for process in writers + readers:
        process.start()
    time.sleep(1.0)  # connected and waiting
    wal_before = wal_bytes(engine)
    maintenance: list[tuple[float, float]] = []

    def downsample_half_way() -> None:
        time.sleep(args.seconds / 2)
        began = time.perf_counter()
        # The hour before `now` is wholly older than an hour at now + 1 h.
        rows = partitions.downsample(engine, now + HOUR, 3600, HOUR)
        maintenance.append((began, time.perf_counter()))
        print(f"downsampled half-way: {rows} minute rows, the raw partition dropped", end="; ")

    maintainer = threading.Thread(target=downsample_half_way)
    began = time.perf_counter()
    go.set()
    if args.maintenance:
        maintainer.start()
    results = [written.get(timeout=args.seconds + 120) for _ in writers]
    elapsed = time.perf_counter() - began
    stop.set()
    taken = [entry for _ in readers for entry in answered.get(timeout=120)]
    for process in writers + readers:
        process.join()
    if args.maintenance:
        maintainer.join()
    wal = wal_bytes(engine) - wal_before

    samples = sum(r.samples for r in results)
    polls = sum(r.polls for r in results)
    rate = samples / elapsed
    during = [took for done, took, _ in taken if done <= began + elapsed]
    print(f"{maintenance[0][1] - maintenance[0][0]:.2f} s" if maintenance else "")
    print(
        f"ingest: {samples:,} samples in {elapsed:.1f} s = {rate:,.0f} samples/s "
        f"(target >= {TARGET:,}: {'met' if rate >= TARGET else 'NOT met'}); "
        f"{polls:,} polls of {args.slices:,} slices by {args.writers} writers"
    )
    print(f"history, during ingest: {percentiles(during)}")
    if maintenance:
        start, end = maintenance[0]
        around = [took for done, took, _ in taken if start <= done <= end + 1.0]
        print(f"history, while downsampling (and 1 s after): {percentiles(around)}")
    copy_s = sum(r.copy_s for r in results)
    commit_s = sum(r.commit_s for r in results)
    client = sum(r.client_cpu_s for r in results)
    server = sum(r.server_cpu_s for r in results)
    print(
        f"writers' wall time: {copy_s / (copy_s + commit_s):.0%} in record_poll + COPY, "
        f"{commit_s / (copy_s + commit_s):.0%} in commit "
        f"({commit_s / polls * 1e3:.1f} ms a commit)"
    )
    print(
        f"CPU per sample: writers (formatting, psycopg) {client / samples * 1e6:.1f} us, "
        f"their PostgreSQL backends (COPY) {server / samples * 1e6:.1f} us; "
        f"{(client + server) / elapsed:.2f} of {os.cpu_count()} cores busy with the ingest "
        f"(load average {os.getloadavg()[0]:.1f}): {samples / (client + server):,.0f} samples "
        "per CPU second"
    )
    print(f"WAL: {wal / samples:.0f} bytes a sample, {wal / elapsed / 1e6:.0f} MB/s")
    engine.dispose()


VARIANTS = {
    "no constraints or indexes": "",
    "+ CHECKs": "INCLUDING CONSTRAINTS",
    "+ primary key": "INCLUDING CONSTRAINTS",
    "+ BRIN (0018's table)": "INCLUDING CONSTRAINTS",
}


def bench_breakdown(url: str, polls: int, slices: int) -> None:
    """Store ``polls`` polls into each variant (a schema of its own first on the search path,
    so `insert_batch`'s COPY lands there) and into the partitioned table; COPY and commit
    timed apart, the backend's CPU from /proc."""
    engine = sa.create_engine(url, pool_size=1)
    counts = poll_counts(slices)
    slice_ids = list(range(1, slices + 1))
    start = dt.datetime.now(dt.UTC).replace(microsecond=0) + 2 * HOUR
    with engine.begin() as connection:
        for i, (name, including) in enumerate(VARIANTS.items()):
            schema = f"variant_{i}"
            connection.execute(sa.text(f"CREATE SCHEMA {schema}"))
            connection.execute(
                sa.text(
                    f"CREATE TABLE {schema}.telemetry_samples "
                    f"(LIKE public.telemetry_samples {including})"
                )
            )
            if "primary key" in name or "BRIN" in name:
                connection.execute(
                    sa.text(
                        f"ALTER TABLE {schema}.telemetry_samples ADD PRIMARY KEY "
                        "(slice_id, t, switch_id, downsampled, hist_target)"
                    )
                )
            if "BRIN" in name:
                connection.execute(
                    sa.text(f"CREATE INDEX ON {schema}.telemetry_samples USING brin (t)")
                )
    print(f"where a poll of {slices:,} samples goes ({polls} polls each, one writer):")
    for i, name in enumerate([*VARIANTS, "partitioned (0020)"]):
        schema = f"variant_{i}" if name in VARIANTS else "public"
        copy_s = commit_s = 0.0
        with Session(engine) as session:
            session.execute(sa.text(f"SET search_path = {schema}, public"))
            backend = session.scalar(sa.text("SELECT pg_backend_pid()"))
            session.commit()
            client, server = time.process_time(), cpu_seconds(backend)
            for poll in range(polls):
                began = time.perf_counter()
                store.insert_batch(
                    session,
                    1000 + i,
                    (start + poll * PERIOD).isoformat(),
                    slice_ids,
                    [1.0] * slices,
                    counts,
                    np.full(slices, HIST_TARGET, dtype=np.int64),
                    [False] * slices,
                    None,
                )
                copied = time.perf_counter()
                session.commit()
                commit_s += time.perf_counter() - copied
                copy_s += copied - began
            client, server = time.process_time() - client, cpu_seconds(backend) - server
        rate = polls * slices / (copy_s + commit_s)
        print(
            f"  {name}: {rate:,.0f} samples/s; a poll {copy_s / polls * 1e3:.1f} ms COPY + "
            f"{commit_s / polls * 1e3:.1f} ms commit; CPU per sample "
            f"{client / polls / slices * 1e6:.1f} us client, "
            f"{server / polls / slices * 1e6:.1f} us server"
        )
    engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--writers", type=int, default=2)
    parser.add_argument("--readers", type=int, default=1)
    parser.add_argument("--switches", type=int, default=25)
    parser.add_argument("--slices", type=int, default=4096)
    parser.add_argument("--breakdown-polls", type=int, default=50)
    parser.add_argument(
        "--no-maintenance",
        dest="maintenance",
        action="store_false",
        help="do not downsample the previous hour half-way through",
    )
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)")
    print(
        f"{args.switches} switches x {args.slices:,} slices = "
        f"{args.switches * args.slices:,} samples per period; {args.seconds:.0f} s of ingest"
    )
    with bench_database() as url:
        bench_ingest(url, args)
        bench_breakdown(url, args.breakdown_polls, args.slices)


if __name__ == "__main__":
    main()
