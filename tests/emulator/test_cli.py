"""`sliceportal switch` and `python -m sliceportal.cli switch`."""

from __future__ import annotations

import argparse
import signal
import socket
import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from emulator.p4rt import P4INFO
from sliceportal.cli import switch as switch_cli
from sliceportal.p4rt.proto import p4r
from sliceportal.p4rt.proto import p4r_grpc as p4runtime_pb2_grpc


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_register_adds_the_switch_command() -> None:
    parser = argparse.ArgumentParser()
    switch_cli.register(parser.add_subparsers())
    args = parser.parse_args(["switch", "--grpc", "127.0.0.1:9600", "--device-id", "3"])
    assert args.handler is switch_cli.switch
    assert (args.grpc, args.device_id, args.p4info, args.load_pipeline) == (
        "127.0.0.1:9600",
        3,
        None,
        False,
    )
    assert not args.like_bmv2
    assert parser.parse_args(["switch", "--like-bmv2"]).like_bmv2
    with pytest.raises(SystemExit):
        parser.parse_args(["switch", "--device-id", "0"])


def test_module_serves_until_interrupted(tmp_path: Path) -> None:
    address = f"127.0.0.1:{free_port()}"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sliceportal.cli",
            "switch",
            "--grpc",
            address,
            "--p4info",
            str(P4INFO),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        banner = process.stdout.readline()
        assert f"P4Runtime switch emulator on {address}, device id 1" in banner
        with grpc.insecure_channel(address) as channel:
            stub = p4runtime_pb2_grpc.P4RuntimeStub(channel)
            reply = stub.Capabilities(p4r.CapabilitiesRequest(), timeout=10)
            assert reply.p4runtime_api_version
            config = stub.GetForwardingPipelineConfig(
                p4r.GetForwardingPipelineConfigRequest(device_id=1)
            )
            assert not config.HasField("config")
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_an_unreadable_p4info_is_one_line_and_status_2(tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "sliceportal.cli",
            "switch",
            "--p4info",
            str(tmp_path / "missing.txtpb"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "cannot read the P4Info" in result.stderr and result.stderr.count("\n") == 1


def test_a_port_in_use_is_reported(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "sliceportal.cli",
                "switch",
                "--grpc",
                f"127.0.0.1:{port}",
                "--p4info",
                str(P4INFO),
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in result.stderr


@pytest.mark.parametrize("option", ["--grpc", "--control"])
def test_a_port_out_of_range_is_one_line_and_status_2(option: str) -> None:
    """Not a server on some other port (gRPC picked a random one for 99999)."""
    result = subprocess.run(
        [sys.executable, "-m", "sliceportal.cli", "switch", option, "127.0.0.1:99999"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert f"argument {option}: '127.0.0.1:99999': must be host:port with a port in 1..65535" in (
        result.stderr
    )
