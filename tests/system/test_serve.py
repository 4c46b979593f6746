"""The README's run command: embedded services, a first admin, and a clean Ctrl-C."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil

from sliceportal.core.embedded import free_tcp_port

SLICEPORTAL = Path(sys.executable).parent / "sliceportal"


def _processes_using(path: Path) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(attrs=["cmdline"]):
        cmdline = " ".join(proc.info["cmdline"] or [])
        if str(path) in cmdline:
            found.append(proc)
    return found


def test_serve_embedded_then_ctrl_c_leaves_nothing(tmp_path: Path) -> None:
    port = free_tcp_port()
    data_dir = tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    proc = subprocess.Popen(
        [str(SLICEPORTAL), "serve", "--port", str(port), "--data-dir", str(data_dir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    output: list[str] = []
    try:
        deadline = time.monotonic() + 120
        assert proc.stdout is not None
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            output.append(line)
            if "Uvicorn running" in line or "Application startup complete" in line:
                break
        text = "".join(output)
        match = re.search(r"user '([^']+)', password '([^']+)'", text)
        assert match, text
        base = f"http://127.0.0.1:{port}"
        assert httpx.get(f"{base}/api/v1/health", timeout=5).status_code == 200
        token = httpx.post(
            f"{base}/api/v1/login/access-token",
            data={"username": match.group(1), "password": match.group(2)},
            timeout=10,
        )
        assert token.status_code == 200, token.text
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    assert proc.returncode == 0, "".join(output)
    deadline = time.monotonic() + 15
    while _processes_using(data_dir) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _processes_using(data_dir) == []
