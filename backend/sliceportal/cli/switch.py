"""`sliceportal switch`: run the P4Runtime switch emulator in the foreground.

Like a switch fresh from boot it holds no pipeline until a controller sets one (or
`--load-pipeline`), and it forgets everything when it stops.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sliceportal.cli import CliError
from sliceportal.emulator.defaults import DEFAULT_DEVICE_ID, DEFAULT_GRPC_ADDRESS, DEFAULT_P4INFO


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("switch", help="run the P4Runtime switch emulator")
    add_arguments(parser)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--grpc",
        default=DEFAULT_GRPC_ADDRESS,
        metavar="HOST:PORT",
        help=f"address of the P4Runtime server (default: {DEFAULT_GRPC_ADDRESS})",
    )
    parser.add_argument(
        "--device-id",
        type=_device_id,
        default=DEFAULT_DEVICE_ID,
        help=f"P4Runtime device id to answer on (default: {DEFAULT_DEVICE_ID})",
    )
    parser.add_argument(
        "--p4info",
        type=Path,
        default=None,
        help="P4Info of the program to model (default: p4/build/sliceportal.p4info.txtpb)",
    )
    parser.add_argument(
        "--load-pipeline",
        action="store_true",
        help="start with the program's pipeline committed, as if a controller had set it",
    )
    parser.set_defaults(handler=switch)


def _device_id(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if not 0 < value < 1 << 64:
        raise argparse.ArgumentTypeError("a device id is an integer from 1 to 2**64-1")
    return value


def switch(args: argparse.Namespace) -> int:
    from sliceportal.emulator.p4info import P4InfoError
    from sliceportal.emulator.server import EmulatorServer, run_forever

    p4info = args.p4info or DEFAULT_P4INFO
    try:
        server = EmulatorServer(args.grpc, args.device_id, p4info, load_pipeline=args.load_pipeline)
    except (P4InfoError, OSError) as exc:
        raise CliError(str(exc)) from None
    sys.stdout.write(
        f"P4Runtime switch emulator on {server.address}, device id {args.device_id}, "
        f"program {p4info}  (Ctrl-C stops)\n"
    )
    sys.stdout.flush()
    run_forever(server)
    return 0
