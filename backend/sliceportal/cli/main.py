"""Entry point of the ``sliceportal`` command (``sliceportal = sliceportal.cli.main:main``).

Adding a subcommand is one line in :data:`REGISTRARS`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn, TypeAlias, cast

from sliceportal import __version__
from sliceportal.cli import (
    CliError,
    accounts,
    analysis,
    bulk,
    experiment,
    poller,
    report,
    serve,
    shell,
    switch,
)
from sliceportal.core.config import SettingsError
from sliceportal.core.signing import SigningKeyError
from sliceportal.domain import SpecError

Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

REGISTRARS: tuple[Callable[[Subparsers], None], ...] = (
    analysis.register,
    accounts.register,
    serve.register,
    switch.register,
    experiment.register,
    poller.register,
    report.register,
    shell.register,
    bulk.register,
)


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line, like every other error of the command."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="sliceportal",
        description="Guaranteed-delay network slices on P4 switches.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    # Subcommand parsers are _Parser too (argparse uses the parent's class), typed as the base.
    subparsers = cast(
        Subparsers, parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    )
    for register in REGISTRARS:
        register(subparsers)
    return parser


def _fail(message: str, status: int) -> int:
    sys.stderr.write(f"sliceportal: {message}\n")
    return status


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; 0 on success, 2 on bad input, 1 on an internal error."""
    args = build_parser().parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except (CliError, SpecError, SettingsError, SigningKeyError) as exc:
        return _fail(str(exc), 2)
    except BrokenPipeError:
        # The reader went away (e.g. `| head`). Point stdout at devnull so that the flush at
        # exit does not fail again (the recipe of the Python docs on SIGPIPE).
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if os.environ.get("SLICEPORTAL_DEBUG"):
            raise
        first_line = next(iter(str(exc).splitlines()), "")
        return _fail(
            f"internal error: {type(exc).__name__}: {first_line} (SLICEPORTAL_DEBUG=1 shows more)",
            1,
        )
