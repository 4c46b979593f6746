"""The README's run command: embedded services, a first admin, an emulated switch with the demo
slices deployed, live counters, and a clean Ctrl-C that leaves no process behind."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import psutil

from sliceportal.core.embedded import free_tcp_port
from sliceportal.domain import dataplane as dp
from sliceportal.p4rt.connection import SwitchTarget
from sliceportal.p4rt.session import connect

SLICEPORTAL = Path(sys.executable).parent / "sliceportal"


def _processes_using(path: Path) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(attrs=["cmdline"]):
        cmdline = " ".join(proc.info["cmdline"] or [])
        if str(path) in cmdline:
            found.append(proc)
    return found


def _poll(get: Any, timeout_s: float) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        value = get()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.5)


def _forwarded(address: str, dp_sids: list[int]) -> list[int]:
    reader = connect(SwitchTarget(0, address, 1, 1), timeout_s=5)
    try:
        cells = reader.read_counter_cells([(dp.FORWARDED, sid) for sid in dp_sids])
    finally:
        reader.close()
    return [cells[(dp.FORWARDED, sid)][0] for sid in dp_sids]


def test_serve_embedded_deploys_the_demo_then_ctrl_c_leaves_nothing(tmp_path: Path) -> None:
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
    tree: list[psutil.Process] = []
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
        switch = re.search(r"emulated switch on (\S+)", text)
        assert switch, text
        base = f"http://127.0.0.1:{port}"
        assert httpx.get(f"{base}/api/v1/health", timeout=5).status_code == 200
        token = httpx.post(
            f"{base}/api/v1/login/access-token",
            data={"username": match.group(1), "password": match.group(2)},
            timeout=10,
        )
        assert token.status_code == 200, token.text
        auth = {"Authorization": f"Bearer {token.json()['access_token']}"}

        def demo() -> list[dict[str, Any]]:
            slices = httpx.get(f"{base}/api/v1/slices", headers=auth, timeout=10).json()["data"]
            return slices if {s["state"] for s in slices} == {"active"} else []

        slices = _poll(demo, 60)
        logs = data_dir / "logs" / "worker.log"
        assert [s["name"] for s in slices] == ["DC", "Enterprise", "Peering"], logs.read_text()
        switches = httpx.get(f"{base}/api/v1/switches", headers=auth, timeout=10).json()["data"]
        assert switches[0]["state"] == "reachable" and switches[0]["sync"]["pipeline_in_sync"]
        # the demo traffic flows through the slices: their counters move
        dp_sids = [s["dp_sids"][0]["dp_sid"] for s in slices]
        first = _forwarded(switch.group(1), dp_sids)

        def moving() -> bool:
            now = _forwarded(switch.group(1), dp_sids)
            return all(n > f for n, f in zip(now, first, strict=True))

        assert _poll(moving, 20)
        tree = [psutil.Process(proc.pid), *psutil.Process(proc.pid).children(recursive=True)]
        commands = [" ".join(p.cmdline()) for p in tree]
        for child in ("sliceportal.cli switch", "workers.app worker", "workers.app beat"):
            assert any(child in command for command in commands), commands
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    assert proc.returncode == 0, "".join(output) + (proc.stdout.read() if proc.stdout else "")
    gone, alive = psutil.wait_procs(tree, timeout=20)
    assert alive == [], alive
    deadline = time.monotonic() + 15
    while _processes_using(data_dir) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _processes_using(data_dir) == []
