"""`sliceportal poller` as a process: it takes the
poller lock, a second poller stands by until the first stops, and SIGTERM stops it cleanly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from sliceportal.core.config import Settings
from sliceportal.telemetry.poller import Poller


def wait_for(path: Path, text: str, timeout_s: float = 20) -> None:
    deadline = time.monotonic() + timeout_s
    while text not in path.read_text():
        assert time.monotonic() < deadline, f"{text!r} not in {path.read_text()!r}"
        time.sleep(0.1)


def test_one_poller_works_and_another_stands_by(settings: Settings, tmp_path: Path) -> None:
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
    try:
        wait_for(log, "telemetry poller active")
        standby = Poller(settings.model_copy(update={"telemetry_refresh_s": 0.3}))
        stop = threading.Event()
        thread = threading.Thread(target=standby.run, args=(stop,), daemon=True)
        thread.start()
        assert not standby.active.wait(1.0)  # the lock is taken: it stands by
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=20) == 0
        assert standby.active.wait(10)  # and takes over
        stop.set()
        thread.join(timeout=20)
        assert not standby.active.is_set()
    finally:
        if process.poll() is None:
            process.kill()
    assert "standing by" not in log.read_text()
