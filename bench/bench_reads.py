"""Benchmark an authenticated `GET /api/v1/slices/{id}` against its floors, with `wrk`.

The load comes from `wrk` (C, Debian's package), not from Python: an httpx client tops out near
420 requests/s on this machine even against a bare app, so it would measure itself. Every
figure is printed beside two floors measured in the same run on the same machine:

- a bare FastAPI app (one `async` route returning a constant) under the same uvicorn workers:
  the ceiling of this server stack and of the load generator together;
- the portal's own unauthenticated `GET /api/v1/health` (middleware, routing, no database).

The slice is read with an API token and with a login's access token (JWT), by `--connections`
connections for `--seconds` each, after a warm-up. Printed per run: requests/s, p50 and p99.

    python bench/bench_reads.py [--connections 50] [--seconds 10] [--workers 2]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_api import (
    ADMIN,
    PASSWORD,
    bench_database,
    running_api,
    set_up,
    slice_body,
    start_uvicorn,
)  # noqa: E402

BARE_APP = """
from fastapi import FastAPI

app = FastAPI()


@app.get("/")
async def alive() -> dict[str, str]:
    return {"message": "alive"}
"""


class Run(NamedTuple):  # not a dataclass: the bench-module test loads this file unregistered
    requests_per_s: float
    p50_ms: float
    p99_ms: float
    errors: int


def wrk(url: str, connections: int, seconds: int, headers: dict[str, str] | None = None) -> Run:
    """One `wrk` run; its latency distribution parsed from `--latency`."""
    command = ["wrk", f"-t{min(2, connections)}", f"-c{connections}", f"-d{seconds}s", "--latency"]
    for name, value in (headers or {}).items():
        command += ["-H", f"{name}: {value}"]
    out = subprocess.run([*command, url], capture_output=True, text=True, check=True).stdout
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    socket_errors = re.search(r"Socket errors: (.*)", out)
    errors = int(non_2xx.group(1)) if non_2xx else 0
    if socket_errors:
        errors += sum(int(n) for n in re.findall(r"\d+", socket_errors.group(1)))
    return Run(
        requests_per_s=float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),  # type: ignore[union-attr]
        p50_ms=_ms(re.search(r"50%\s+([\d.]+\w+)", out).group(1)),  # type: ignore[union-attr]
        p99_ms=_ms(re.search(r"99%\s+([\d.]+\w+)", out).group(1)),  # type: ignore[union-attr]
        errors=errors,
    )


def _ms(value: str) -> float:
    number, unit = re.fullmatch(r"([\d.]+)(\w+)", value).groups()  # type: ignore[union-attr]
    return float(number) * {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 60e3}[unit]


@contextlib.contextmanager
def bare_app(workers: int, directory: Path) -> Iterator[str]:
    """The bare app under uvicorn as the portal runs (`start_uvicorn`)."""
    (directory / "bare_app.py").write_text(BARE_APP)
    process, base = start_uvicorn(["--app-dir", str(directory), "bare_app:app"], workers)
    try:
        yield f"{base}/"
    finally:
        process.terminate()
        process.wait(10)


def report(name: str, run: Run, floors: dict[str, Run]) -> None:
    ratios = ", ".join(
        f"{run.requests_per_s / floor.requests_per_s:.2f} of {floor_name}"
        for floor_name, floor in floors.items()
    )
    print(
        f"{name}: {run.requests_per_s:.0f} requests/s, p50 {run.p50_ms:.1f} ms, "
        f"p99 {run.p99_ms:.1f} ms, {run.errors} errors" + (f" ({ratios})" if ratios else "")
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2, help="uvicorn worker processes")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        print("bench_reads: wrk is missing (apt-get install wrk; scripts/setup-test-tools)")
        return 1
    load = (args.connections, args.seconds)
    print(
        f"wrk, {args.connections} connections, {args.seconds} s per run, "
        f"{args.workers} uvicorn workers, {os.cpu_count()} CPUs"
    )
    with contextlib.ExitStack() as stack:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        bare = wrk(stack.enter_context(bare_app(args.workers, scratch)), *load)
        database_url = stack.enter_context(bench_database())
        base = stack.enter_context(running_api(database_url, args.workers))
        token_headers, link_ids = set_up(base, ADMIN, 1)
        with httpx.Client(base_url=base, timeout=30) as http:
            created = http.post(
                "/api/v1/slices", json=slice_body(1, link_ids[0]), headers=token_headers
            )
            created.raise_for_status()
            login = http.post(
                "/api/v1/login/access-token", data={"username": ADMIN, "password": PASSWORD}
            )
            jwt_headers = {"Authorization": f"Bearer {login.json()['access_token']}"}
        slice_url = f"{base}/api/v1/slices/{created.json()['id']}"
        wrk(slice_url, args.connections, 2, token_headers)  # warm-up: pools filled, code paths hot
        health = wrk(f"{base}/api/v1/health", *load)
        floors = {"the bare app": bare, "health": health}
        report("floor, bare FastAPI app", bare, {})
        report(
            "floor, GET /api/v1/health (no authentication, no database)",
            health,
            {"the bare app": bare},
        )
        report("GET /api/v1/slices/{id}, API token", wrk(slice_url, *load, token_headers), floors)
        report(
            "GET /api/v1/slices/{id}, access token (JWT)",
            wrk(slice_url, *load, jwt_headers),
            floors,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
