"""`sliceportal experiment`: reproduce the paper's experiments in the emulator.

Each run starts an in-process switch emulator with the packet model, deploys the paper's
slices through P4Runtime as the portal would, runs the traffic of Table I in fast simulated
time, reads the counters back over P4Runtime and writes CSV tables, a JSON summary and PNG
plots into ``--out``. The summary (printed too) checks the paper's claims; the exit status is
1 when one of them does not hold.

DCTCP's window stops at Linux's 2 packets (``--dctcp-min-cwnd``). Experiment 1's DC figure,
"around the 5ms marking threshold", needs 1 in this model: paper-exp1 therefore also runs
with 1 (or with 2, if asked for 1) and its summary's ``dctcp_min_cwnd_comparison`` shows DC's
figures with both beside the paper's, and why they differ.

paper-exp1 and paper-exp3 also run the paper's baseline, every slice policed by a P4 meter
(trTCM) instead of a virtual queue, and their summary's ``meter_baseline`` sets its
throughputs and real delays beside theirs and the paper's (Figs. 8 and 14).
``paper-exp1-meter`` and ``paper-exp3-meter`` run that baseline alone, with all its files.

codel-table1 runs P4-CoDel's Table I (1-3 TCP flows in a 100 Mbit/s slice, tail drop and
CoDel); abc-fig4, abc-fig5 and abc-fig6 run P4-ABC's Figs. 4-6 (two clients through a
50 Mbit/s slice, tail drop and ABC): docs/emulator.md says how each is set up.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from sliceportal.cli import CliError, write_json
from sliceportal.emulator.layout import DCTCP_MIN_CWND

if TYPE_CHECKING:  # the experiments load only when one runs
    from sliceportal.experiments.runner import Check

NAMES = (
    "paper-exp1",
    "paper-exp3",
    "paper-exp1-meter",
    "paper-exp3-meter",
    "codel-table1",
    "abc-fig4",
    "abc-fig5",
    "abc-fig6",
)
ABC_DURATION_S, ABC_WARMUP_S = 60.0, 10.0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "experiment",
        help="reproduce the papers' experiments in the emulator",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "name",
        choices=NAMES,
        help="paper-exp1: 1 Gbit/s link, one queue; paper-exp3: 285 Mbit/s bottleneck, "
        "DC and Enterprise at high priority; -meter: the same with P4 meters instead of "
        "virtual queues (the paper's baseline, Figs. 8 and 14); codel-table1: P4-CoDel's "
        "Table I, 1-3 TCP flows in a 100 Mbit/s slice with tail drop and with CoDel; "
        "abc-fig4/5/6: P4-ABC's Figs. 4-6, two clients through a 50 Mbit/s slice with tail "
        "drop and with ABC (CBR against CBR, n TCP flows against one, CBR against TCP)",
    )
    parser.add_argument("--out", type=Path, required=True, metavar="DIR", help="output directory")
    parser.add_argument(
        "--duration",
        type=_seconds,
        default=None,
        metavar="S",
        help="simulated seconds measured (default as the paper: 250, codel-table1 4; "
        f"abc-fig* {ABC_DURATION_S:g} per run)",
    )
    parser.add_argument(
        "--warmup",
        type=_seconds,
        default=None,
        metavar="S",
        help="simulated seconds run before measuring (default 50 as the paper; codel-table1 0.5, "
        f"abc-fig* {ABC_WARMUP_S:g})",
    )
    parser.add_argument(
        "--sample",
        type=_seconds,
        default=1.0,
        metavar="S",
        help="counter read period, simulated seconds (default 1, the paper's averages)",
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of the traffic (default 1)")
    parser.add_argument(
        "--dctcp-min-cwnd",
        type=_packets,
        default=DCTCP_MIN_CWND,
        metavar="N",
        help=f"floor of the DCTCP window, packets (default {DCTCP_MIN_CWND}, Linux's); "
        "paper-exp1 also runs with 1, which the paper's DC figure needs, and reports both",
    )
    parser.set_defaults(handler=experiment)


N = TypeVar("N", int, float)


def _bounded(parse: Callable[[str], N], low: N, high: N, unit: str) -> Callable[[str], N]:
    """An argparse type: ``parse`` of the text, refused outside [low, high] ``unit``."""

    def check(text: str) -> N:
        try:
            value = parse(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number of {unit}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(
                f"{text!r}: must be between {low:g} and {high:g} {unit}"
            )
        return value

    return check


_seconds = _bounded(float, 0.0, 86_400.0, "seconds")
_packets = _bounded(int, 1, 10_000, "packets")


def experiment(args: argparse.Namespace) -> int:
    if args.out.exists() and not args.out.is_dir():
        raise CliError(f"--out {args.out}: exists and is not a directory")
    if args.name == "codel-table1":
        return _codel_table1(args)
    if args.name.startswith("abc-"):
        return _abc_figure(args)
    from sliceportal.experiments.output import summary, write_report
    from sliceportal.experiments.paper import EXPERIMENTS
    from sliceportal.experiments.plots import write_plots
    from sliceportal.experiments.runner import run

    args.duration = 250.0 if args.duration is None else args.duration
    args.warmup = 50.0 if args.warmup is None else args.warmup
    if args.sample <= 0 or args.duration < args.sample:
        raise CliError("--sample must be positive and --duration at least one --sample")
    report = run(
        EXPERIMENTS[args.name],
        duration_s=args.duration,
        warmup_s=args.warmup,
        sample_s=args.sample,
        seed=args.seed,
        dctcp_min_cwnd=args.dctcp_min_cwnd,
    )
    return _finish(
        args.out,
        lambda: write_report(report, args.out) + write_plots(report, args.out),
        summary(report),
        report.checks,
    )


def _codel_table1(args: argparse.Namespace) -> int:
    from sliceportal.experiments import codel

    duration = 4.0 if args.duration is None else args.duration
    if duration <= 0:
        raise CliError("--duration must be positive")
    report = codel.run(
        duration_s=duration, warmup_s=0.5 if args.warmup is None else args.warmup, seed=args.seed
    )
    return _finish(
        args.out, lambda: codel.write_report(report, args.out), codel.summary(report), report.checks
    )


def _abc_figure(args: argparse.Namespace) -> int:
    from sliceportal.experiments import abc

    duration = ABC_DURATION_S if args.duration is None else args.duration
    if duration <= 0:
        raise CliError("--duration must be positive")
    report = abc.run(
        args.name,
        duration_s=duration,
        warmup_s=ABC_WARMUP_S if args.warmup is None else args.warmup,
        seed=args.seed,
    )
    return _finish(
        args.out, lambda: abc.write_report(report, args.out), abc.summary(report), report.checks
    )


def _finish(
    out: Path,
    write: Callable[[], list[Path]],
    summary: dict[str, Any],
    checks: Sequence[Check],
) -> int:
    """Write the experiment's files, print its summary with their paths, and exit 1 naming
    the checks that failed."""
    try:
        files = write()
    except OSError as exc:
        raise CliError(f"--out {out}: cannot write: {exc.strerror or exc}") from None
    write_json(summary | {"files": [str(f) for f in files]})
    failed = [c.name for c in checks if not c.passed]
    if failed:
        sys.stderr.write(f"sliceportal: {len(failed)} check(s) failed: {'; '.join(failed)}\n")
        return 1
    return 0
