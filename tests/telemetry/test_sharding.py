"""Pollers share the switches (docs/telemetry.md "Pollers share the switches"): three
`sliceportal poller` processes and twelve emulated switches; one poller is killed with
SIGKILL. Every switch is read by one poller at a time, none goes unread for more than two
periods (the dead poller's switches are taken over once its leases expire), and no sample is
stored twice."""

from __future__ import annotations

import datetime as dt
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from sliceportal.core.config import Settings
from sliceportal.emulator.server import EmulatorServer
from telemetry.helpers import create_emulator_slices

PERIOD_S = 1.0
SWITCHES = 12
POLLERS = 3
POLL_GAP_S = 0.3
"""Reads of one switch closer than this belong to one poll (counters, then registers)."""
_LINE = re.compile(r"^(\S+ \S+) INFO \S+ (polling|stopped polling) switch (\d+)$")


class ReadLog:
    """The times an emulated switch was read (its P4Runtime Read requests)."""

    def __init__(self, server: EmulatorServer) -> None:
        self.times: list[float] = []
        self._lock = threading.Lock()
        original = server.service.read

        def read(request: Any) -> Any:
            with self._lock:
                self.times.append(time.monotonic())
            return original(request)

        server.service.read = read  # type: ignore[method-assign]

    def polls(self) -> list[float]:
        with self._lock:
            times = list(self.times)
        polls: list[float] = []
        for t in times:
            if not polls or t - polls[-1] > POLL_GAP_S:
                polls.append(t)
        return polls


@pytest.fixture
def switches() -> Iterator[list[EmulatorServer]]:
    servers = [EmulatorServer("127.0.0.1:0", 1, load_pipeline=True) for _ in range(SWITCHES)]
    for server in servers:
        server.start()
    yield servers
    for server in servers:
        server.stop(grace=0)


def _ownership(log: Path, killed_at: dt.datetime | None) -> dict[int, list[list[dt.datetime]]]:
    """Per switch, the [start, end] spans a poller polled it, from its log."""
    spans: dict[int, list[list[dt.datetime]]] = defaultdict(list)
    for line in log.read_text().splitlines():
        match = _LINE.match(line)
        if match is None:
            continue
        at = dt.datetime.strptime(match[1], "%Y-%m-%d %H:%M:%S,%f")
        switch_id = int(match[3])
        if match[2] == "polling":
            spans[switch_id].append([at, dt.datetime.max])
        else:
            spans[switch_id][-1][1] = at
    if killed_at is not None:
        for per_switch in spans.values():
            for span in per_switch:
                span[1] = min(span[1], killed_at)
    return spans


def test_three_pollers_share_twelve_switches_and_survive_a_kill(
    settings: Settings,
    client: TestClient,
    operator_headers: dict[str, str],
    db: sessionmaker[Session],
    switches: list[EmulatorServer],
    tmp_path: Path,
) -> None:
    reads = [ReadLog(server) for server in switches]
    created = [create_emulator_slices(client, operator_headers, s.address)[0] for s in switches]
    switch_ids = [slice_["dp_sids"][0]["switch_id"] for slice_ in created]
    slice_ids = [slice_["id"] for slice_ in created]
    env = os.environ | {
        "DATABASE_URL": settings.database_url,
        "REDIS_URL": settings.redis_url,
        "SLICEPORTAL_TELEMETRY_POLL_INTERVAL_S": str(PERIOD_S),
        "SLICEPORTAL_TELEMETRY_REFRESH_S": "0.5",
        "SLICEPORTAL_P4RT_CONNECT_TIMEOUT_S": "0.5",
    }
    logs = [tmp_path / f"poller-{i}.log" for i in range(POLLERS)]
    processes = []
    for log in logs:
        with log.open("wb") as output:
            processes.append(
                subprocess.Popen(
                    [sys.executable, "-m", "sliceportal.cli", "poller"],
                    env=env,
                    stdout=output,
                    stderr=subprocess.STDOUT,
                )
            )
    try:
        # All three running, every switch read steadily.
        deadline = time.monotonic() + 30
        while not all(len(r.polls()) >= 3 for r in reads) or not all(
            "running" in log.read_text() for log in logs
        ):
            assert time.monotonic() < deadline, [len(r.polls()) for r in reads]
            time.sleep(0.2)
        time.sleep(4 * PERIOD_S)  # the shares settle: joining pollers take theirs
        steady = time.monotonic()
        owners = {
            i: {s for s, spans in _ownership(log, None).items() if spans[-1][1] == dt.datetime.max}
            for i, log in enumerate(logs)
        }
        mine = [owners[i] & set(switch_ids) for i in range(POLLERS)]
        # Balanced over every switch of the database (other tests' switches too): each poller
        # holds a share, none more than its cap.
        held = set().union(*owners.values())
        cap = -(-len(held) // POLLERS)
        assert all(0 < len(owners[i]) <= cap for i in range(POLLERS)), owners
        victim = max(range(POLLERS), key=lambda i: len(mine[i]))
        time.sleep(2 * PERIOD_S)
        killed = time.monotonic()
        killed_at = dt.datetime.now()
        processes[victim].send_signal(signal.SIGKILL)
        processes[victim].wait(timeout=10)
        time.sleep(6 * PERIOD_S)
        ended = time.monotonic()
    finally:
        for process in processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
    texts = [log.read_text() for log in logs]

    # No switch went unread for more than two periods: consecutive polls at most three
    # periods apart (a little slack for a busy machine), the victim's switches included.
    gaps = {}
    for switch_id, log in zip(switch_ids, reads, strict=True):
        polls = [t for t in log.polls() if steady <= t <= ended]
        gaps[switch_id] = max(b - a for a, b in zip(polls, polls[1:], strict=False))
        assert polls[-1] > ended - 2 * PERIOD_S, switch_id  # still read at the end
    worst = max(gaps.values())
    takeover = max(
        next(t for t in log.polls() if t > killed) - killed
        for switch_id, log in zip(switch_ids, reads, strict=True)
        if switch_id in mine[victim]
    )
    print(f"\nworst gap between polls {worst:.2f} s, takeover after kill -9 {takeover:.2f} s")
    assert worst <= 3.25 * PERIOD_S, gaps
    assert takeover <= 2.25 * PERIOD_S

    # One poller at a time per switch: the spans of different pollers never overlap.
    spans = [_ownership(log, killed_at if i == victim else None) for i, log in enumerate(logs)]
    for switch_id in switch_ids:
        held = sorted(
            (start, end, i) for i in range(POLLERS) for start, end in spans[i].get(switch_id, [])
        )
        for (_, end, first), (start, _, second) in zip(held, held[1:], strict=False):
            assert first == second or end <= start, (switch_id, held)
    for switch_id in mine[victim]:  # taken over by a survivor
        assert any(spans[i].get(switch_id) for i in range(POLLERS) if i != victim)

    # No sample refused by the constraint (none was read twice), and none stored twice.
    assert not any("not stored" in text for text in texts), texts
    with db() as session:
        overlapping = session.scalar(
            sa.text(
                "SELECT count(*) FROM ("
                " SELECT t - make_interval(secs => interval_s) AS since,"
                "  lag(t) OVER (PARTITION BY slice_id, switch_id ORDER BY t) AS previous"
                " FROM telemetry_samples WHERE slice_id = ANY(:ids) AND NOT downsampled) q"
                " WHERE since < previous - interval '10 milliseconds'"
            ),
            {"ids": slice_ids},
        )
        stored = session.scalar(
            sa.text("SELECT count(*) FROM telemetry_samples WHERE slice_id = ANY(:ids)"),
            {"ids": slice_ids},
        )
    assert overlapping == 0
    assert stored >= SWITCHES * 8
