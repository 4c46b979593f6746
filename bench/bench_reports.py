"""Benchmark the capacity planning report: build, document, tables and PDF for a large network.

    python bench/bench_reports.py [--slices 1000] [--links 20] [--repeat 3]

The network: links of 10 Gbit/s under both models, slices on random 1-4-hop paths, half of
them with end-to-end targets (the generator of the report's unit tests).
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "unit" / "domain"))

from reports.report_networks import big_network  # noqa: E402

from sliceportal.domain.reports import build_report  # noqa: E402
from sliceportal.reporting.pdf import render_pdf  # noqa: E402
from sliceportal.reporting.render import document_of  # noqa: E402


def timed(action: Callable[[], Any], repeat: int) -> tuple[Any, list[float]]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = action()
        times.append(time.perf_counter() - start)
    return result, times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slices", type=int, default=1000)
    parser.add_argument("--links", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    network = big_network(args.slices, args.links)
    scope = {link.id for link in network.links}
    now = dt.datetime.now(dt.UTC)
    report, build = timed(
        lambda: build_report(network, "network", None, "network", scope, generated_at=now),
        args.repeat,
    )
    _, to_dict = timed(lambda: document_of(report), args.repeat)
    _, tables = timed(report.tables, args.repeat)
    pdf, render = timed(lambda: render_pdf(report), args.repeat)
    print(f"report of {args.slices} slices over {args.links} links, median of {args.repeat}:")
    for name, times in (
        ("build_report", build),
        ("JSON document", to_dict),
        ("tables (CSV rows)", tables),
        ("PDF", render),
    ):
        print(f"  {name:22s} {statistics.median(times) * 1e3:8.0f} ms")
    print(f"  PDF size {len(pdf) / 1e3:.0f} kB, {len(report.findings)} findings")


if __name__ == "__main__":
    main()
