"""`sliceportal poller` as a process: it joins the live pollers, and SIGTERM stops it cleanly,
giving up its membership and its leases at once (rather than letting them expire)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.orm import Session, sessionmaker

from sliceportal.core.config import Settings
from sliceportal.telemetry.poller import Poller


def wait_for(path: Path, pattern: str, timeout_s: float = 20) -> re.Match[str]:
    deadline = time.monotonic() + timeout_s
    while (match := re.search(pattern, path.read_text())) is None:
        assert time.monotonic() < deadline, f"{pattern!r} not in {path.read_text()!r}"
        time.sleep(0.1)
    return match


def test_pollers_join_and_one_stopped_leaves_at_once(
    settings: Settings, db: sessionmaker[Session], tmp_path: Path
) -> None:
    log = tmp_path / "poller.log"
    env = os.environ | {
        "DATABASE_URL": settings.database_url,
        "REDIS_URL": settings.redis_url,
        "SLICEPORTAL_TELEMETRY_REFRESH_S": "0.3",
        "SLICEPORTAL_P4RT_CONNECT_TIMEOUT_S": "0.5",
    }
    with log.open("wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "sliceportal.cli", "poller"],
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    other = Poller(settings.model_copy(update={"telemetry_refresh_s": 0.3}))
    stop = threading.Event()
    thread = threading.Thread(target=other.run, args=(stop,), daemon=True)
    try:
        name = wait_for(log, r"telemetry poller (\S+) running")[1]
        thread.start()
        assert other.active.wait(10)
        deadline = time.monotonic() + 10
        while set(other.live) != {name, other.poller_id}:  # both live, each sees the other
            assert time.monotonic() < deadline, other.live
            time.sleep(0.1)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=20) == 0
        with db() as session:  # gone at once, not at expiry
            members = set(session.scalars(sa.text("SELECT poller_id FROM telemetry_pollers")))
            held = session.scalar(
                sa.text("SELECT count(*) FROM telemetry_leases WHERE poller_id = :p"), {"p": name}
            )
        assert name not in members and other.poller_id in members
        assert held == 0
        deadline = time.monotonic() + 5
        while other.live != [other.poller_id]:
            assert time.monotonic() < deadline, other.live
            time.sleep(0.1)
    finally:
        if process.poll() is None:
            process.kill()
        stop.set()
        thread.join(timeout=20)
    assert not other.active.is_set()
    with db() as session:
        members = set(session.scalars(sa.text("SELECT poller_id FROM telemetry_pollers")))
    assert other.poller_id not in members
