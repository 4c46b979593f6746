"""Benchmark `POST /api/v1/slices` under concurrent clients against the real PostgreSQL.

Starts the API in a uvicorn subprocess on a free port against a fresh database (created and
dropped here), creates an admin, an API token, a switch and a 100 Gbit/s link, then lets
`--clients` concurrent workers POST admissible slices until `--requests` have been sent, and
prints latency percentiles and throughput. Every request takes the same switch and link locks,
so this measures the serialised admission path, the worst case for one link. A closed loop
ends with the same clients sending `GET /api/v1/users/me`, the authentication a creation does
before anything else: the floor no creation can go below on this machine with this client.

The default is closed loop: each client sends its next request when the previous one answered,
so the clients always keep the server saturated and, by Little's law, the mean latency is
clients / throughput whatever the server does. `--rate R` runs open loop instead: each client
sends R requests per second on a fixed schedule whether or not earlier ones answered, and the
latency is counted from the scheduled send time (no coordinated omission), which is what a
realistic offered load of clients x R requests/s sees.

    python bench/bench_api.py [--requests 2000] [--clients 50] [--workers 2] [--rate R]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import statistics
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx

from sliceportal.core import embedded
from sliceportal.core.config import Settings
from sliceportal.db.migrate import upgrade
from sliceportal.db.session import create_db_engine, create_sessionmaker
from sliceportal.services.users import create_admin

SERVER = os.environ.get("BENCH_POSTGRES", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres")
REDIS = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/14")
REPO = Path(__file__).resolve().parent.parent
PASSWORD = "benchmark password"


ADMIN = "bench-admin"


@contextlib.contextmanager
def bench_database() -> Iterator[str]:
    """A fresh database, migrated, with the admin `ADMIN` (password `PASSWORD`): its URL;
    dropped at the end."""
    name = f"sliceportal_bench_{uuid.uuid4().hex[:8]}"
    database_url = embedded.create_database(SERVER, name)
    try:
        upgrade(database_url)
        engine = create_db_engine(Settings(DATABASE_URL=database_url, REDIS_URL=REDIS))
        with create_sessionmaker(engine)() as session:
            create_admin(session, ADMIN, PASSWORD)
        engine.dispose()
        yield database_url
    finally:
        embedded.drop_database(SERVER, name)


@contextlib.contextmanager
def running_api(database_url: str, workers: int) -> Iterator[str]:
    """The API (`start_api`) while inside: its base URL; stopped at the end."""
    process, base = start_api(database_url, workers)
    try:
        yield base
    finally:
        process.terminate()
        process.wait(10)


def start_api(database_url: str, workers: int) -> tuple[subprocess.Popen[bytes], str]:
    per_worker = max(5, 60 // workers)  # connections: enough for the clients, within max
    env = {
        "DATABASE_URL": database_url,
        "REDIS_URL": REDIS,
        "SLICEPORTAL_DB_POOL_SIZE": str(per_worker // 2),
        "SLICEPORTAL_DB_MAX_OVERFLOW": str(per_worker - per_worker // 2),
    }
    return start_uvicorn(["--factory", "sliceportal.api.main:create_app"], workers, env)


def start_uvicorn(
    app: list[str], workers: int, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    """uvicorn serving `app` (its arguments naming the app) on a free loopback port as the
    portal runs (`workers` processes, no access log), once it answers: process and base URL."""
    port = embedded.free_tcp_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            *app,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            str(workers),
            "--no-access-log",
            "--log-level",
            "warning",
        ],
        cwd=REPO,
        env=os.environ | (env or {}),
    )
    deadline = time.monotonic() + 30
    while not embedded.tcp_port_answers("127.0.0.1", port):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise RuntimeError(f"uvicorn did not start {' '.join(app)}")
        time.sleep(0.1)
    return process, f"http://127.0.0.1:{port}"


def set_up(base: str, username: str, links: int) -> tuple[dict[str, str], list[int]]:
    """Log in, make an API token and `links` switches with a big link each (one by default:
    every request then contends for the same locks); return token headers and link ids."""
    with httpx.Client(base_url=base, timeout=30) as http:
        login = http.post(
            "/api/v1/login/access-token", data={"username": username, "password": PASSWORD}
        )
        login.raise_for_status()
        jwt_headers = {"Authorization": f"Bearer {login.json()['access_token']}"}
        token = http.post("/api/v1/tokens", json={"name": "bench"}, headers=jwt_headers)
        headers = {"Authorization": f"Bearer {token.json()['token']}"}
        link_ids = []
        for number in range(links):
            switch = http.post(
                "/api/v1/switches",
                headers=headers,
                json={"name": f"bench-{number}", "address": f"10.0.0.{number}:9559"},
            )
            link = http.post(
                "/api/v1/links",
                headers=headers,
                json={
                    "switch_id": switch.json()["id"],
                    "name": "bench-link",
                    "port": 1,
                    "capacity_bps": 100e9,
                },
            )
            link.raise_for_status()
            link_ids.append(link.json()["id"])
        return headers, link_ids


def slice_body(number: int, link_id: int) -> dict[str, object]:
    """1 Mbit/s, 20 ms bursts (a burst must hold one 1518-byte frame: 12.1 ms at 1 Mbit/s),
    priorities 1-7 in turn (0 is best effort's): thousands of them stay admissible."""
    return {
        "name": f"bench-{number}",
        "ipv4_prefixes": [f"10.{number // 256 % 256}.{number % 256}.0/24"],
        "rate_bps": 1e6,
        "burst_limit_s": 0.02,
        "priority": 1 + number % 7,
        "link_ids": [link_id],
    }


Send = Callable[[httpx.AsyncClient], Awaitable[httpx.Response]]


def creations(link_ids: list[int], first: int) -> Send:
    """POSTs of `slice_body` numbered from `first`, spread over the links in turn."""
    numbers = itertools.count(first)

    def send(http: httpx.AsyncClient) -> Awaitable[httpx.Response]:
        number = next(numbers)
        return http.post(
            "/api/v1/slices", json=slice_body(number, link_ids[number % len(link_ids)])
        )

    return send


def whoami(http: httpx.AsyncClient) -> Awaitable[httpx.Response]:
    """The authentication every creation does first, and nothing else: one indexed read."""
    return http.get("/api/v1/users/me")


async def run(
    base: str, headers: dict[str, str], send: Send, requests: int, clients: int
) -> tuple[list[float], list[int], float]:
    sent = itertools.count()
    latencies: list[float] = []
    statuses: list[int] = []

    async def worker(http: httpx.AsyncClient) -> None:
        while next(sent) < requests:
            start = time.perf_counter()
            response = await send(http)
            latencies.append(time.perf_counter() - start)
            statuses.append(response.status_code)

    async with contextlib.AsyncExitStack() as stack:
        https = await open_clients(stack, clients, base_url=base, headers=headers)
        start = time.perf_counter()
        await asyncio.gather(*(worker(http) for http in https))
        return latencies, statuses, time.perf_counter() - start


async def open_clients(
    stack: contextlib.AsyncExitStack, count: int, **options: Any
) -> list[httpx.AsyncClient]:
    """`count` clients, made before the clock starts: each builds an SSL context, ≈ 20 ms of
    CPU, so 50 made on the schedule put the first second of an open loop behind it and the
    catch-up burst showed as a server tail (p95 380 ms at 50/s, p99 0.9 s at 25/s)."""
    return [
        await stack.enter_async_context(httpx.AsyncClient(timeout=60, **options))
        for _ in range(count)
    ]


async def run_open(
    base: str,
    headers: dict[str, str],
    link_ids: list[int],
    requests: int,
    clients: int,
    first: int,
    rate: float,
) -> tuple[list[float], list[int], float]:
    """`clients` clients each sending `rate` requests/s on a fixed schedule (staggered), until
    `requests` are sent; latency from each request's scheduled time to its answer."""
    send = creations(link_ids, first)
    latencies: list[float] = []
    statuses: list[int] = []
    per_client = -(-requests // clients)
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)

    async def one(http: httpx.AsyncClient, due: float) -> None:
        response = await send(http)
        latencies.append(time.perf_counter() - due)
        statuses.append(response.status_code)

    async def client(http: httpx.AsyncClient, index: int, start: float) -> None:
        pending = []
        for k in range(per_client):
            due = start + (index / clients + k) / rate
            await asyncio.sleep(max(0.0, due - time.perf_counter()))
            pending.append(asyncio.create_task(one(http, due)))
        await asyncio.gather(*pending)

    async with contextlib.AsyncExitStack() as stack:
        https = await open_clients(stack, clients, base_url=base, headers=headers, limits=limits)
        start = time.perf_counter()
        await asyncio.gather(*(client(http, i, start) for i, http in enumerate(https)))
        return latencies, statuses, time.perf_counter() - start


def percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=1000, method="inclusive")[int(q * 10) - 1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--workers", type=int, default=2, help="uvicorn worker processes")
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--links", type=int, default=1, help="spread the slices over N links")
    parser.add_argument(
        "--rate", type=float, help="open loop: requests/s sent by each client on a fixed schedule"
    )
    args = parser.parse_args()

    with bench_database() as database_url, running_api(database_url, args.workers) as base:
        headers, link_ids = set_up(base, ADMIN, args.links)
        asyncio.run(run(base, headers, creations(link_ids, 0), args.warmup, args.clients))
        if args.rate is None:
            latencies, statuses, elapsed = asyncio.run(
                run(
                    base,
                    headers,
                    creations(link_ids, args.warmup),
                    args.requests,
                    args.clients,
                )
            )
            mode = "closed loop"
        else:
            latencies, statuses, elapsed = asyncio.run(
                run_open(
                    base, headers, link_ids, args.requests, args.clients, args.warmup, args.rate
                )
            )
            mode = (
                f"open loop, {args.rate:g} requests/s each ({args.clients * args.rate:g}/s offered)"
            )
        created = [
            latency for latency, status in zip(latencies, statuses, strict=True) if status == 201
        ]
        errors = len(statuses) - len(created)
        print(
            f"POST /api/v1/slices: {len(latencies)} requests, {args.clients} concurrent "
            f"clients ({mode}), {args.workers} uvicorn workers, {os.cpu_count()} CPUs"
        )
        print(
            f"slices at the end: {args.warmup + len(created)} "
            f"on {args.links} link(s) of {args.links} switch(es)"
        )
        refusals = Counter(status for status in statuses if status != 201)
        print(f"errors: {errors}" + "".join(f", {n} x {s}" for s, n in sorted(refusals.items())))
        if errors:
            refused = [
                latency
                for latency, status in zip(latencies, statuses, strict=True)
                if status != 201
            ]
            print(f"p50 latency of the errors: {percentile(refused, 50) * 1e3:.1f} ms")
            print("latencies below: of the created slices (201) only")
        print(f"p50 latency: {percentile(created, 50) * 1e3:.1f} ms")
        print(f"p95 latency: {percentile(created, 95) * 1e3:.1f} ms")
        print(f"p99 latency: {percentile(created, 99) * 1e3:.1f} ms")
        print(f"throughput: {len(latencies) / elapsed:.0f} requests/s")
        print(f"created: {len(created) / elapsed:.0f} slices/s")
        tenth = max(1, len(created) // 10)
        print(
            f"p50 of the first and last tenth of the creations (the link holding "
            f"{args.warmup} and {args.warmup + len(created) - tenth}+ slices): "
            f"{percentile(created[:tenth], 50) * 1e3:.1f} ms, "
            f"{percentile(created[-tenth:], 50) * 1e3:.1f} ms"
        )
        if args.rate is None:
            floor, floor_statuses, floor_elapsed = asyncio.run(
                run(base, headers, whoami, args.requests, args.clients)
            )
            print(
                f"floor, GET /api/v1/users/me (authentication alone) by the same clients: "
                f"p50 {percentile(floor, 50) * 1e3:.1f} ms, "
                f"p95 {percentile(floor, 95) * 1e3:.1f} ms, "
                f"{len(floor) / floor_elapsed:.0f} requests/s, "
                f"{sum(status != 200 for status in floor_statuses)} errors"
            )
        return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
