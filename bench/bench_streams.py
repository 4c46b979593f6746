"""Benchmark live-chart viewers: `--clients` concurrent slice telemetry streams on one API
process, fed one sample a second, and the lag from a sample's publication to each client.

Starts the API (one uvicorn worker) on a fresh database, creates a slice, opens `--clients`
`GET /api/v1/slices/{id}/telemetry/stream` connections, then publishes one sample a second on
the slice's Redis channel, as a poller does, for `--seconds`. Each sample carries its
publication time; each client notes when the sample's frame arrived. Printed: streams opened,
samples received of those owed, lag p50/p95/p99/max, the API process's CPU per second. Target:
1,000 clients, p95 lag <= 1.5 s.

The clients are raw asyncio connections in `--client-processes` processes (the SSE frames are
found in the bytes, no HTTP library per stream), so that the load generator costs little beside
the server it measures; both share this machine's cores.

    python bench/bench_streams.py [--clients 1000] [--seconds 30] [--client-processes 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import redis

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_api import (  # noqa: E402
    ADMIN,
    REDIS,
    bench_database,
    running_api,
    set_up,
    slice_body,
)
from sliceportal.core.channels import Channels  # noqa: E402

OPEN_PER_S = 50
"""Streams each client process opens a second. All at once, they would be refused by the
request gate's queue (`SLICEPORTAL_API_MAX_WAITING`) while each opening is authenticated."""
PADDING = "x" * 400
"""About the size of a real sample document (counters, delay quantiles, histogram)."""


async def _client(
    host: str, port: int, request: bytes, lags: list[float], opened: asyncio.Event
) -> None:
    """One stream: the request written, then each `data:` line's sample time against now."""
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(request)
    await writer.drain()
    buffer = b""
    while True:
        chunk = await reader.read(65536)
        if not chunk:
            return
        now = time.time()
        if b"retry:" in chunk:
            opened.set()
        buffer += chunk
        while (start := buffer.find(b"data: ")) >= 0 and (end := buffer.find(b"\n", start)) >= 0:
            sample = json.loads(buffer[start + 6 : end])
            if "published" in sample:
                lags.append(now - sample["published"])
            buffer = buffer[end + 1 :]


def run_clients(url: str, headers: dict[str, str], count: int, stop: Any, results: Any) -> None:
    """`count` streams until `stop` is set (a process of its own); then puts (opened, lags)
    on `results`."""

    async def main() -> tuple[int, list[float]]:
        parts = urlsplit(url)
        lines = [f"GET {parts.path} HTTP/1.1", f"Host: {parts.netloc}", "Accept: text/event-stream"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        request = ("\r\n".join(lines) + "\r\n\r\n").encode()
        lags: list[float] = []
        events = [asyncio.Event() for _ in range(count)]
        tasks = []
        for event in events:  # OPEN_PER_S a second, as viewers arrive, not one burst
            tasks.append(
                asyncio.ensure_future(
                    _client(parts.hostname or "", parts.port or 80, request, lags, event)
                )
            )
            await asyncio.sleep(1 / OPEN_PER_S)
        while not stop.is_set():
            await asyncio.sleep(0.2)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        return sum(event.is_set() for event in events), lags

    results.put(asyncio.run(main()))


def api_pid(port: int) -> int:
    """The uvicorn process serving `port` (one worker: the server itself)."""
    for proc in Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"uvicorn" in argv and b"--port" in argv and str(port).encode() in argv:
            return int(proc.name)
    raise RuntimeError(f"no uvicorn process on port {port}")


def process_cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--client-processes", type=int, default=2)
    args = parser.parse_args()
    os.environ["SLICEPORTAL_STREAM_MAX_PER_USER"] = str(args.clients)
    os.environ["SLICEPORTAL_STREAM_MAX_TOTAL"] = str(args.clients)
    # Every stream open before the first sample (and the client processes started).
    settle_s = 5.0 + args.clients / (OPEN_PER_S * args.client_processes)
    with bench_database() as database_url, running_api(database_url, workers=1) as base:
        headers, link_ids = set_up(base, ADMIN, 1)
        with httpx.Client(base_url=base, headers=headers, timeout=30) as http:
            created = http.post("/api/v1/slices", json=slice_body(1, link_ids[0]))
            created.raise_for_status()
        slice_id = created.json()["id"]
        url = f"{base}/api/v1/slices/{slice_id}/telemetry/stream"
        context = multiprocessing.get_context("spawn")
        results_queue, stop = context.Queue(), context.Event()
        share, rest = divmod(args.clients, args.client_processes)
        processes = [
            context.Process(
                target=run_clients,
                args=(url, headers, share + (k < rest), stop, results_queue),
            )
            for k in range(args.client_processes)
        ]
        for process in processes:
            process.start()
        server = api_pid(urlsplit(base).port or 80)
        time.sleep(settle_s)
        channel = Channels.of(database_url).slice(slice_id)
        publisher = redis.Redis.from_url(REDIS)
        cpu_before, start = process_cpu_s(server), time.monotonic()
        subscribers = 0
        for tick in range(args.seconds):
            time.sleep(max(0.0, start + tick - time.monotonic()))
            document = json.dumps({"published": time.time(), "padding": PADDING})
            subscribers = max(subscribers, int(publisher.publish(channel, document)))
        cpu_per_s = (process_cpu_s(server) - cpu_before) / (time.monotonic() - start)
        time.sleep(2)  # the last sample's way to the clients
        stop.set()
        results = [results_queue.get(timeout=120) for _ in processes]
        for process in processes:
            process.join(30)
    opened = sum(result[0] for result in results)
    lags = sorted(lag for result in results for lag in result[1])
    owed = opened * args.seconds
    print(
        f"streams: {opened} of {args.clients} opened on one API process "
        f"({subscribers} Redis subscribers at most), {os.cpu_count()} CPUs"
    )
    print(f"samples received: {len(lags)} of {owed} owed ({args.seconds} s at 1 Hz)")
    if len(lags) >= 2:
        quantiles = statistics.quantiles(lags, n=100, method="inclusive")
        print(
            f"lag from publication to client: p50 {quantiles[49] * 1e3:.0f} ms, "
            f"p95 {quantiles[94] * 1e3:.0f} ms, p99 {quantiles[98] * 1e3:.0f} ms, "
            f"max {lags[-1] * 1e3:.0f} ms (target p95 <= 1500 ms)"
        )
    print(f"API process CPU: {cpu_per_s * 100:.0f} % of a core")
    return 0 if opened == args.clients and len(lags) == owed else 1


if __name__ == "__main__":
    sys.exit(main())
