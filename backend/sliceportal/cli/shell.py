"""`sliceportal shell SWITCH [--exec FILE]`: p4runtime-shell on a managed switch, as a backup.

The operator's interactive P4Runtime shell (IPython, as `python -m p4runtime_sh`), opened on a
switch of the portal's database with what the portal knows of it: its address and device id,
its TLS settings (CA, certificate, key: a secure channel when any is set, as the adapter's) and
the portal's P4Info (the pipeline is never pushed). It arbitrates with an election id below the
portal's for that switch, so the switch keeps the portal primary: the shell reads, the portal
writes (on BMv2, which makes the highest remaining id primary when the primary leaves, the shell
may be primary between two reconciliations, until the portal arbitrates again).

p4runtime-shell pins protobuf<3.21 and p4runtime==1.4.1, so it lives in its own environment,
`.venv-shell/` at the repository root (`make setup` creates it; `SLICEPORTAL_SHELL_VENV` names
another one). The portal never imports it: this command replaces itself with that environment's
Python running `shell_bootstrap.py` (a file of this package that only that interpreter runs).
With `--exec FILE` the bootstrap runs FILE with the shell's names in scope (TableEntry,
CounterEntry, p4info, …) instead of IPython, without a terminal, and exits with its status.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from sliceportal.cli import CliError, database_session
from sliceportal.core.paths import REPO_ROOT
from sliceportal.domain.spec import MAX_BIGINT

SHELL_VENV_VARIABLE = "SLICEPORTAL_SHELL_VENV"
DEFAULT_SHELL_VENV = REPO_ROOT / ".venv-shell"
BOOTSTRAP = Path(__file__).with_name("shell_bootstrap.py")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "shell",
        help="open p4runtime-shell on a managed switch, as a backup controller",
        description="Open p4runtime-shell (IPython) on a switch of the portal's database, with "
        "the portal's P4Info, the switch's device id and TLS settings, and an election id below "
        "the portal's: it can read everything and disturbs nothing (DATABASE_URL).",
    )
    parser.add_argument("switch", metavar="SWITCH", help="the switch's name (or its id)")
    parser.add_argument(
        "--exec",
        dest="script",
        metavar="FILE",
        type=Path,
        help="run this Python script with the shell's names (TableEntry, CounterEntry, …) "
        "in scope instead of the interactive shell; exit with its status",
    )
    parser.add_argument(
        "--election-id",
        type=int,
        default=None,
        help="election id of the shell (default: one below the portal's for that switch; "
        "must be below it)",
    )
    parser.set_defaults(handler=shell)


def shell_python() -> Path:
    """The interpreter of p4runtime-shell's environment, or a CliError saying how to make it."""
    venv = Path(os.environ.get(SHELL_VENV_VARIABLE) or DEFAULT_SHELL_VENV)
    python = venv / "bin" / "python"
    if not os.access(python, os.X_OK):
        raise CliError(
            f"p4runtime-shell's environment is missing ({python} not found): "
            "run `make setup` in the repository to create .venv-shell/"
        )
    return python


def shell_command(args: argparse.Namespace) -> list[str]:
    """The command line that opens the shell: `.venv-shell/bin/python -I bootstrap …`."""
    from sqlalchemy import select

    from sliceportal.core.config import get_settings
    from sliceportal.db.models import Switch

    if args.script is not None and not args.script.is_file():
        raise CliError(f"{args.script}: no such file")
    python = shell_python()
    settings = get_settings()
    if not settings.p4info_path.is_file():
        raise CliError(f"the portal's P4Info {settings.p4info_path} is missing")
    with database_session() as session:
        switch = session.scalar(select(Switch).where(Switch.name == args.switch))
        if switch is None and args.switch.isdigit() and int(args.switch) <= MAX_BIGINT:
            switch = session.get(Switch, int(args.switch))
        if switch is None:
            names = session.scalars(select(Switch.name).order_by(Switch.name).limit(11))
            known = list(names)
            listed = ", ".join(known[:10]) + (", …" if len(known) > 10 else "")
            raise CliError(
                f"no managed switch named {args.switch!r} "
                + (f"(switches: {listed})" if known else "(the portal has no switch)")
            )
        election_id = switch.election_id - 1 if args.election_id is None else args.election_id
        if not 0 <= election_id < switch.election_id:
            raise CliError(
                f"--election-id must be in [0, {switch.election_id - 1}]: below the "
                f"portal's election id {switch.election_id} for {switch.name!r}"
            )
        command = [
            str(python),
            "-I",  # nothing of the portal's environment (PYTHONPATH, user site, cwd)
            str(BOOTSTRAP),
            "--switch-name",
            switch.name,
            "--grpc-addr",
            switch.address,
            "--device-id",
            str(switch.device_id),
            "--election-id",
            str(election_id),
            "--p4info",
            str(settings.p4info_path.resolve()),
            "--timeout",
            f"{settings.p4rt_connect_timeout_s:g}",
        ]
        for option, path in (
            ("--cacert", switch.tls_ca_path),
            ("--cert", switch.tls_cert_path),
            ("--private-key", switch.tls_key_path),
        ):
            if path is not None:
                command += [option, str(Path(path).resolve())]
    if args.script is not None:
        command += ["--exec", str(args.script.resolve())]
    return command


def shell(args: argparse.Namespace) -> int:
    command = shell_command(args)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(command[0], command)  # the shell takes over the terminal, signals and exit status
