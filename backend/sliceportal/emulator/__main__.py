"""`python -m sliceportal.emulator`: the same as `sliceportal switch`."""

from __future__ import annotations

import argparse
import sys

from sliceportal.cli import CliError
from sliceportal.cli.switch import add_arguments, switch


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m sliceportal.emulator", description=__doc__)
    add_arguments(parser)
    try:
        return switch(parser.parse_args())
    except CliError as exc:
        sys.stderr.write(f"{parser.prog}: {exc}\n")
        return 2


if __name__ == "__main__":
    sys.exit(main())
