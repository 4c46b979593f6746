"""`python -m sliceportal.telemetry`: the telemetry poller, the same as `sliceportal poller`
(for supervisors that start children with the interpreter, as `sliceportal serve` does)."""

from __future__ import annotations

import argparse
import sys

from sliceportal.cli.poller import poller


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m sliceportal.telemetry", description=__doc__)
    return poller(parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
