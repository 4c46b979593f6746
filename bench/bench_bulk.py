"""Benchmark the bulk import of slices (`POST /api/v1/slices/import`) against the real PostgreSQL.

Starts the API in a uvicorn subprocess against a fresh database (as bench_api.py does), makes
`--links` switches with one 100 Gbit/s link each, then imports `--slices` slices spread evenly
over them, once as CSV and once as YAML (on a second set of links), each in one request: every
row validated, the links locked, the batch admitted once per link with all its slices on it.
Prints each import's time beside the issue's target (issue 22, section 4: 10,000 slices over 20
links imported with admission in <= 3 s), the export's time, and where the time of an import
goes, measured in-process on a third set of links (parsing, validation, locks and checks,
inserts, admission, change log and commit).

    python bench/bench_bulk.py [--slices 10000] [--links 20]
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import sys
import time
from pathlib import Path

import httpx
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_api import ADMIN, REDIS, bench_database, running_api, set_up  # noqa: E402
from sliceportal.core.config import Settings  # noqa: E402
from sliceportal.db.changes import ChangeContext  # noqa: E402
from sliceportal.db.session import create_db_engine, create_sessionmaker  # noqa: E402
from sliceportal.schemas.slicefiles import FileFormat, parse  # noqa: E402
from sliceportal.services import bulk  # noqa: E402

TARGET_S = 3.0
MAX_BODY_BYTES = 16 * 1024 * 1024
"""The bench raises the API's body limit (2 MiB by default) so that YAML, which is wordier
than CSV, fits 10,000 slices in one body too."""


def slice_rows(count: int, link_ids: list[int], tag: str) -> list[dict[str, object]]:
    """`count` admissible slices spread round-robin over `link_ids`: 10 Mbit/s, priorities 1-7
    (a link of 8 queues), each its own /24 (unique per link, so no classifier clash)."""
    rows: list[dict[str, object]] = []
    for number in range(count):
        rows.append(
            {
                "name": f"{tag}-{number}",
                "ipv4_prefixes": [f"10.{number >> 8 & 255}.{number & 255}.0/24"],
                "rate_bps": 10e6,
                "burst_limit_s": 0.01,
                "delay_target_s": 0.05,
                "priority": 1 + number % 7,
                "link_ids": [link_ids[number % len(link_ids)]],
            }
        )
    return rows


def as_csv(rows: list[dict[str, object]]) -> bytes:
    out = io.StringIO()
    writer = csv.DictWriter(out, list(rows[0]), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow(
            row | {key: ",".join(map(str, row[key])) for key in ("ipv4_prefixes", "link_ids")}  # type: ignore[call-overload]
        )
    return out.getvalue().encode()


def post_import(
    http: httpx.Client, headers: dict[str, str], body: bytes, media: str
) -> tuple[float, int]:
    start = time.perf_counter()
    response = http.post(
        "/api/v1/slices/import", content=body, headers=headers | {"Content-Type": media}
    )
    took = time.perf_counter() - start
    if response.status_code != 201:
        raise SystemExit(f"import refused: {response.status_code} {response.text[:500]}")
    return took, int(response.json()["count"])


def in_process(database_url: str, rows: list[dict[str, object]]) -> dict[str, float]:
    """Where an import's time goes, in this process: the phases of `services.bulk`."""
    engine = create_db_engine(Settings(DATABASE_URL=database_url, REDIS_URL=REDIS))
    body = as_csv(rows)
    phases: dict[str, float] = {}
    yaml_body = yaml.safe_dump(rows).encode()
    start = time.perf_counter()
    parse(yaml_body, FileFormat.YAML)
    phases["parse YAML (not imported)"] = time.perf_counter() - start
    start = time.perf_counter()
    documents = parse(body, FileFormat.CSV)
    phases["parse CSV"] = time.perf_counter() - start
    marks: list[tuple[str, float]] = []

    def timed(name: str, function):  # type: ignore[no-untyped-def]
        def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
            begin = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                marks.append((name, time.perf_counter() - begin))

        return wrapper

    originals = {
        "prepare": bulk.slices.prepare,
        "lock_batch": bulk.queries.lock_batch,
        "_check_matches": bulk._check_matches,
        "_store": bulk._store,
        "_admit": bulk._admit,
    }
    bulk.slices.prepare = timed("validate (per row)", originals["prepare"])  # type: ignore[method-assign]
    bulk.queries.lock_batch = timed("locks and reads", originals["lock_batch"])  # type: ignore[method-assign]
    bulk._check_matches = timed("classifier clashes", originals["_check_matches"])
    bulk._store = timed("inserts, admission, log, commit", originals["_store"])
    bulk._admit = timed("  of which admission", originals["_admit"])
    try:
        with create_sessionmaker(engine)() as session:
            start = time.perf_counter()
            bulk.import_slices(session, ChangeContext(None, "bench"), documents)
            phases["import_slices"] = time.perf_counter() - start
    finally:
        bulk.slices.prepare = originals["prepare"]  # type: ignore[method-assign]
        bulk.queries.lock_batch = originals["lock_batch"]  # type: ignore[method-assign]
        bulk._check_matches = originals["_check_matches"]
        bulk._store = originals["_store"]
        bulk._admit = originals["_admit"]
        engine.dispose()
    for name, took in marks:
        phases[name] = phases.get(name, 0.0) + took
    return phases


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slices", type=int, default=10_000)
    parser.add_argument("--links", type=int, default=20)
    args = parser.parse_args()

    os.environ["SLICEPORTAL_API_MAX_BODY_BYTES"] = str(MAX_BODY_BYTES)
    with bench_database() as database_url, running_api(database_url, 1) as base:
        headers, link_ids = set_up(base, ADMIN, 3 * args.links)
        csv_links = link_ids[: args.links]
        yaml_links = link_ids[args.links : 2 * args.links]
        csv_body = as_csv(slice_rows(args.slices, csv_links, "csv"))
        yaml_body = yaml.safe_dump(slice_rows(args.slices, yaml_links, "yaml")).encode()
        print(
            f"import of {args.slices} slices over {args.links} links of 100 Gbit/s, one request "
            f"each, 1 uvicorn worker, {os.cpu_count()} CPUs "
            f"(CSV {len(csv_body) / 1e6:.1f} MB, YAML {len(yaml_body) / 1e6:.1f} MB)"
        )
        with httpx.Client(base_url=base, timeout=600) as http:
            took, count = post_import(http, headers, csv_body, "text/csv")
            print(f"  CSV import: {took:.2f} s for {count} slices (target <= {TARGET_S:g} s)")
            took, count = post_import(http, headers, yaml_body, "application/yaml")
            print(f"  YAML import: {took:.2f} s for {count} slices (target <= {TARGET_S:g} s)")
            start = time.perf_counter()
            exported = http.get("/api/v1/slices/export", params={"format": "csv"}, headers=headers)
            exported.raise_for_status()
            took = time.perf_counter() - start
            lines = exported.text.count("\n") - 1
            print(f"  CSV export of all {lines} slices: {took:.2f} s")
        phases = in_process(database_url, slice_rows(args.slices, link_ids[2 * args.links :], "in"))
        print("  where the time goes (in-process, the same import on a third set of links):")
        for phase, took in phases.items():
            print(f"    {phase:34s} {took * 1e3:8.0f} ms")
        return 0


if __name__ == "__main__":
    sys.exit(main())
