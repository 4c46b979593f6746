"""`sliceportal poller`: the telemetry poller in the foreground (docs/telemetry.md).

It reads the counters of every switch's slices each period, stores and publishes the samples
and raises the SLA alerts. Run as many as the fleet needs, on one machine or many: they split
the switches between them through leases in PostgreSQL. SIGTERM or Ctrl-C stops it after the
current period and hands its switches over at once.
"""

from __future__ import annotations

import argparse
import logging
import signal
import threading
from types import FrameType


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "poller", help="poll switch counters into telemetry samples and SLA alerts"
    )
    parser.set_defaults(handler=poller)


def poller(args: argparse.Namespace) -> int:
    from sliceportal.core.config import get_settings
    from sliceportal.telemetry.poller import Poller

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    stop = threading.Event()

    def request_stop(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    Poller(get_settings()).run(stop)
    return 0
