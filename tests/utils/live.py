"""Processes of a live portal for the tests that run one (the UI end to end, Prometheus): each
started with its output in a log file of its own, stopped politely, then killed."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def start_process(
    name: str, command: list[str], env: dict[str, str], logs: Path
) -> subprocess.Popen[bytes]:
    with (logs / f"{name}.log").open("w") as out:
        return subprocess.Popen(command, env=env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)


def stop_process(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


def wait_for_port(port: int, proc: subprocess.Popen[bytes], log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
            return
        if proc.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"{log.stem} did not start:\n{log.read_text()}")
        time.sleep(0.2)
