"""`sliceportal switch --traffic --clock --control --port-rate`."""

from __future__ import annotations

import argparse
import json
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from sliceportal.cli import switch as switch_cli


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    switch_cli.register(parser.add_subparsers())
    return parser.parse_args(["switch", *argv])


def test_the_traffic_flags_parse() -> None:
    args = parse("--traffic", "p.json", "--clock", "fast", "--control", "127.0.0.1:9560",
                 "--port-rate", "1=285e6", "--port-rate", "2=1000000000")  # fmt: skip
    assert (args.traffic, args.clock, args.control) == ("p.json", "fast", "127.0.0.1:9560")
    assert args.port_rate == [(1, 285_000_000), (2, 1_000_000_000)]
    defaults = parse()
    assert (defaults.traffic, defaults.clock, defaults.control, defaults.port_rate) == (
        None,
        "realtime",
        None,
        [],
    )


@pytest.mark.parametrize(
    "flag", ["--port-rate=1", "--port-rate=x=1e9", "--port-rate=511=1e9", "--port-rate=1=0",
             "--clock=slow"],
)  # fmt: skip
def test_bad_traffic_flags_are_usage_errors(flag: str) -> None:
    with pytest.raises(SystemExit):
        parse(flag)


def get(address: str) -> Any:
    with urllib.request.urlopen(f"http://{address}/traffic", timeout=10) as response:
        return json.loads(response.read())


def test_the_switch_runs_a_profile_in_real_time_and_obeys_its_side_door(tmp_path: Path) -> None:
    profile = tmp_path / "profile.json"
    profile.write_text(
        json.dumps(
            {"sources": [{"name": "a", "pattern": "cbr", "ipv4_dst": "10.0.1.1", "rate_bps": 1e6}]}
        )
    )
    grpc, control = f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"
    process = subprocess.Popen(
        [sys.executable, "-m", "sliceportal.cli", "switch", "--grpc", grpc, "--load-pipeline",
         "--traffic", str(profile), "--control", control, "--port-rate", "1=1e7"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        assert "1 traffic source, realtime clock" in process.stdout.readline()
        assert f"http://{control}/traffic" in process.stdout.readline()
        deadline = time.monotonic() + 30
        status = get(control)
        while status["packets"]["offered"] < 20 and time.monotonic() < deadline:
            time.sleep(0.1)
            status = get(control)
        assert status["packets"]["offered"] >= 20  # ~82 frames/s, all unrouted: no entries yet
        assert status["ports"]["1"]["rate_bps"] == 10_000_000
        request = urllib.request.Request(f"http://{control}/traffic/a/stop", method="POST")
        urllib.request.urlopen(request, timeout=10).close()
        time.sleep(0.3)
        stopped = get(control)["packets"]["offered"]
        time.sleep(0.3)
        assert get(control)["packets"]["offered"] == stopped
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_a_bad_profile_is_one_line_and_status_2(tmp_path: Path) -> None:
    profile = tmp_path / "profile.json"
    profile.write_text('{"sources": [{"name": "a", "pattern": "cbr", "ipv4_dst": "10.0.1.1"}]}')
    result = subprocess.run(
        [sys.executable, "-m", "sliceportal.cli", "switch", "--traffic", str(profile)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "rate_bps: must be a number" in result.stderr and result.stderr.count("\n") == 1
