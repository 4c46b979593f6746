"""`sliceportal switch`: run the P4Runtime switch emulator in the foreground.

Like a switch fresh from boot it holds no pipeline until a controller sets one (or
`--load-pipeline`), and it forgets everything when it stops. Once a pipeline is set, the
packet model runs the traffic of `--traffic PROFILE.json` through it, on the `--clock` of
choice; `--control HOST:PORT` opens the emulator-only HTTP side door that starts and stops
that traffic (docs/emulator.md, "The packet model").
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sliceportal.cli import CliError, host_port, read_json
from sliceportal.emulator.defaults import DEFAULT_DEVICE_ID, DEFAULT_GRPC_ADDRESS, DEFAULT_P4INFO

CLOCKS = ("realtime", "fast")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("switch", help="run the P4Runtime switch emulator")
    add_arguments(parser)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--grpc",
        type=host_port,
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
    parser.add_argument(
        "--like-bmv2",
        action="store_true",
        help="behave as BMv2 does where a client could come to rely on the emulator being "
        "kinder: the highest remaining election id becomes primary when the primary leaves, "
        "a pipeline with an empty device config fails every read and write (UNKNOWN), "
        "register reads answer UNIMPLEMENTED",
    )
    parser.add_argument(
        "--traffic",
        metavar="PROFILE.json",
        default=None,
        help="traffic to run through the switch: sources, seed and port settings "
        "(default: none; add sources through --control)",
    )
    parser.add_argument(
        "--clock",
        choices=CLOCKS,
        default="realtime",
        help="realtime: simulated time follows the wall clock (counters move as you watch); "
        "fast: as fast as the CPU allows (default: realtime)",
    )
    parser.add_argument(
        "--control",
        type=host_port,
        metavar="HOST:PORT",
        default=None,
        help="serve the emulator-only HTTP side door that starts and stops traffic "
        "(e.g. 127.0.0.1:9560; no authentication: keep it on localhost)",
    )
    parser.add_argument(
        "--port-rate",
        metavar="PORT=BPS",
        type=_port_rate,
        action="append",
        default=[],
        help="line rate of an egress port in bit/s, e.g. 1=285e6 (repeatable; "
        "overrides the profile; default 1e9)",
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


def _port_rate(text: str) -> tuple[int, int]:
    from sliceportal.emulator.model.ports import PortConfig, PortConfigError, check_port

    port, sep, rate = text.partition("=")
    try:
        if not sep:
            raise ValueError
        number, bps = int(port), float(rate)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not PORT=BPS (e.g. 1=285e6)") from None
    try:
        check_port(number)
        PortConfig(round(bps))
    except (PortConfigError, OverflowError, ValueError) as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: {exc}") from None
    return number, round(bps)


def switch(args: argparse.Namespace) -> int:
    from sliceportal.emulator.control import ControlServer
    from sliceportal.emulator.model.ports import PortConfig
    from sliceportal.emulator.model.switch_model import Clock, PacketModel
    from sliceportal.emulator.model.traffic import Profile, ProfileError, parse_profile
    from sliceportal.emulator.server import EmulatorServer, run_forever
    from sliceportal.p4rt.p4info import P4InfoError

    profile = Profile()
    if args.traffic is not None:
        try:
            profile = parse_profile(read_json(args.traffic))
        except ProfileError as exc:
            raise CliError(f"{args.traffic}: {exc}") from None
    rates: dict[int, int] = dict(args.port_rate)
    ports = {
        port: PortConfig(rate, profile.ports.get(port, PortConfig()).queue_depth)
        for port, rate in rates.items()
    }
    model = PacketModel(profile.with_ports(ports), clock=Clock(args.clock))
    p4info = args.p4info or DEFAULT_P4INFO
    try:
        control = None if args.control is None else ControlServer(model, args.control)
    except (OSError, ValueError) as exc:
        raise CliError(str(exc)) from None
    try:
        server = EmulatorServer(
            args.grpc,
            args.device_id,
            p4info,
            load_pipeline=args.load_pipeline,
            model=model,
            like_bmv2=args.like_bmv2,
        )
    except (P4InfoError, OSError) as exc:
        if control is not None:
            control.stop()
        raise CliError(str(exc)) from None
    sources = len(profile.sources)
    sys.stdout.write(
        f"P4Runtime switch emulator on {server.address}, device id {args.device_id}, "
        f"program {p4info}, {sources} traffic source{'s' * (sources != 1)}, "
        f"{args.clock} clock{', like BMv2' * args.like_bmv2}  (Ctrl-C stops)\n"
    )
    if control is not None:
        sys.stdout.write(f"traffic control (emulator only): http://{control.address}/traffic\n")
        control.start()
    sys.stdout.flush()
    try:
        run_forever(server)
    finally:
        if control is not None:
            control.stop()
    return 0
