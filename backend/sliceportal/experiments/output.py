"""An experiment's report as files: CSV tables, a JSON summary (and the plots, `plots.py`).

- ``throughput.csv``: per slice and sampling interval, what the P4Runtime counters said
  (throughput, offered load, drop and mark ratios) and the tap's mean delays;
- ``delay_cdf.csv``: per slice, the CDF of the virtual and real delays of forwarded packets
  from the egress tap (10 us bins, 0.1 ms in a meter baseline run; one row where the CDF changes);
- ``histograms.csv``: the switch's own 8-bucket delay histograms over the measurement window;
- ``summary.json``: settings, per-slice figures and the checks; with experiment 1 also its DC
  figures with DCTCP minimum windows of 1 and 2 beside the paper's (``dctcp_min_cwnd_comparison``);
  with experiments 1 and 3 also the paper's meter baseline run beside the vQueue figures and the
  paper's (``meter_baseline``: per slice throughput and real delay of both runs).
"""

from __future__ import annotations

import csv
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from sliceportal.domain import dataplane as dp
from sliceportal.emulator.layout import DCTCP_MIN_CWND
from sliceportal.experiments.runner import Check, Report, SliceResult, WindowComparison

THROUGHPUT_MATCH = 0.05
"""'Similar throughput' (the paper's Figs. 8 and 14): the meter run within 5% of the vQueue run."""


def write_report(report: Report, out: Path) -> list[Path]:
    """Write the CSVs and the summary into ``out`` (created); returns the paths."""
    out.mkdir(parents=True, exist_ok=True)
    return [
        _throughput(report, out / "throughput.csv"),
        _cdf(report, out / "delay_cdf.csv"),
        _histograms(report, out / "histograms.csv"),
        _summary(report, out / "summary.json"),
    ]


def _throughput(report: Report, path: Path) -> Path:
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(
            [
                "time_s",
                "slice",
                "dp_sid",
                "throughput_mbps",
                "offered_mbps",
                "rate_limit_mbps",
                "vq_drop_ratio",
                "real_drop_ratio",
                "mark_ratio",
                "vq_delay_mean_ms",
                "real_delay_mean_ms",
            ]
        )
        for s in report.samples:
            spec = s.slice_.slice_
            writer.writerow(
                [
                    f"{s.time_s:g}",
                    s.slice_.label,
                    spec.dp_sid,
                    f"{s.stats.throughput_bps / 1e6:.4f}",
                    f"{s.stats.offered_bps / 1e6:.4f}",
                    f"{spec.rate_bps / 1e6:g}",
                    f"{s.stats.vq_drop_ratio:.6f}",
                    f"{s.stats.real_drop_ratio:.6f}",
                    f"{s.stats.mark_ratio:.6f}",
                    "" if s.vq_mean_ms is None else f"{s.vq_mean_ms:.4f}",
                    "" if s.real_mean_ms is None else f"{s.real_mean_ms:.4f}",
                ]
            )
    return path


def _cdf(report: Report, path: Path) -> Path:
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["slice", "queue", "delay_ms", "cdf"])
        for r in report.slices:
            for queue, hist in (("virtual", r.vq_hist_us), ("real", r.real_hist_us)):
                total = int(hist.sum())
                if not total:
                    continue
                cumulative = np.cumsum(hist) / total
                for b in np.flatnonzero(hist):
                    edge_ms = (b + 1) * r.tap_bin_us / 1e3
                    writer.writerow([r.slice_.label, queue, f"{edge_ms:g}", f"{cumulative[b]:.6f}"])
    return path


def _histograms(report: Report, path: Path) -> Path:
    """The switch's histograms, each on its slice's own edges (from its delay target)."""
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["slice", "queue", "bucket", "lower_us", "upper_us", "packets", "cdf"])
        for r in report.slices:
            upper_us = [e * 1e6 for e in dp.histogram_edges_s(r.slice_.slice_.policy().hist_target)]
            lower_us = [0.0, *upper_us]
            for queue, hist in (("virtual", r.p4_vq_hist), ("real", r.p4_real_hist)):
                total = sum(hist) or 1
                running = 0
                for b, count in enumerate(hist):
                    running += count
                    upper = f"{upper_us[b]:g}" if b < len(upper_us) else ""
                    row = [r.slice_.label, queue, b, f"{lower_us[b]:g}", upper, count]
                    writer.writerow([*row, f"{running / total:.6f}"])
    return path


def summary(report: Report) -> dict[str, Any]:
    """The JSON summary (also what `sliceportal experiment` prints)."""
    e = report.experiment
    return {
        "experiment": e.name,
        "title": e.title,
        "link_mbps": e.port_rate_bps / 1e6,
        "duration_s": report.duration_s,
        "warmup_s": report.warmup_s,
        "sample_s": report.sample_s,
        "seed": report.seed,
        "dctcp_min_cwnd": report.dctcp_min_cwnd,
        "slices": [_slice_summary(r) for r in report.slices],
        "dctcp_min_cwnd_comparison": _comparison(report, report.comparison),
        "checks": [asdict(c) for c in report.checks],
        "passed": report.passed,
    } | ({} if report.meter_baseline is None else {"meter_baseline": meter_baseline(report)})


def _figures(r: SliceResult) -> dict[str, Any]:
    return {
        "throughput_mbps": round(r.throughput_bps / 1e6, 3),
        "drop_ratio": round(r.vq_drop_ratio + r.real_drop_ratio, 6),
        "real_delay_ms": {
            "p50": round(r.real.p50_ms, 3),
            "p99": round(r.real.p99_ms, 3),
            "max": round(r.real.max_ms, 3),
        },
    }


def baseline_checks(report: Report) -> list[Check]:
    """The paper's claims on its meter baseline, against this run and its meter run: the same
    throughputs (Figs. 8 and 14) and, in experiment 3, the low-priority slice's real delay
    beyond its burst limit with meters while its virtual queue keeps it within."""
    metered = report.meter_baseline
    figure = report.experiment.baseline_figure
    if metered is None or figure is None:
        return []
    theirs = {r.slice_.label: r for r in metered.slices}
    out = []
    for r in report.slices:
        label, m = r.slice_.label, theirs[r.slice_.label]
        if figure.same_throughput:
            ratio = m.throughput_bps / r.throughput_bps if r.throughput_bps else 0.0
            out.append(
                Check(
                    f"{label}: meter throughput as the vQueue one",
                    abs(ratio - 1) <= THROUGHPUT_MATCH,
                    f"meter {m.throughput_bps / 1e6:.2f} Mbit/s, vQueue "
                    f"{r.throughput_bps / 1e6:.2f} Mbit/s ({ratio - 1:+.1%})",
                )
            )
        if label == figure.real_delay_label:
            burst_ms = r.slice_.slice_.burst_limit_s * 1e3
            out.append(
                Check(
                    f"{label}: real delay beyond the burst limit with meters, within it with "
                    "vQueues",
                    m.real.max_ms > burst_ms and r.real.max_ms <= burst_ms + 1e-3,
                    f"meter max {m.real.max_ms:.1f} ms (p99 {m.real.p99_ms:.1f} ms), vQueue max "
                    f"{r.real.max_ms:.3f} ms, burst limit {burst_ms:g} ms, paper up to "
                    f"{figure.real_delay_max_ms:g} ms",
                )
            )
    return out


def meter_baseline(report: Report) -> dict[str, Any]:
    """The ``meter_baseline`` block: the meter run's figures beside this run's and the paper's."""
    metered = report.meter_baseline
    figure = report.experiment.baseline_figure
    assert metered is not None and figure is not None
    theirs = {r.slice_.label: r for r in metered.slices}
    checks = baseline_checks(report)
    return {
        "experiment": metered.experiment.name,
        "paper": {
            "quote": figure.quote,
            "where": figure.where,
            "same_throughput": figure.same_throughput,
            "real_delay_slice": figure.real_delay_label,
            "real_delay_max_ms": figure.real_delay_max_ms,
        },
        "meter": "trTCM (RFC 2698), colour-blind, bytes: CIR = PIR = rate, CBS = PBS = rate x "
        "burst limit; RED dropped; no virtual queue, no real-queue check",
        "slices": [
            {
                "slice": r.slice_.label,
                "burst_limit_ms": r.slice_.slice_.burst_limit_s * 1e3,
                "vqueue": _figures(r),
                "meter": _figures(theirs[r.slice_.label]),
            }
            for r in report.slices
        ],
        "meter_run_checks": [asdict(c) for c in metered.checks],
        "checks": [asdict(c) for c in checks],
        "passed": metered.passed and all(c.passed for c in checks),
    }


def _comparison(report: Report, comparison: WindowComparison | None) -> dict[str, Any] | None:
    """The paper figure's slice with each DCTCP minimum window, and why they differ."""
    if comparison is None:
        return None
    figure = comparison.figure
    return {
        "slice": figure.label,
        "paper": {
            "vq_delay_ms": figure.vq_delay_ms,
            "quote": figure.quote,
            "where": figure.where,
            "min_cwnd_needed": figure.min_cwnd,
        },
        "runs": [
            {
                "min_cwnd": run.min_cwnd,
                "linux_default": run.min_cwnd == DCTCP_MIN_CWND,
                "this_run": run.min_cwnd == report.dctcp_min_cwnd,
                "vq_delay_p50_ms": round(run.result.vq.p50_ms, 3),
                "vq_delay_mean_ms": round(run.result.vq.mean_ms, 3),
                "vq_delay_p99_ms": round(run.result.vq.p99_ms, 3),
                "vq_delay_max_ms": round(run.result.vq.max_ms, 3),
                "mark_ratio": round(run.result.mark_ratio, 6),
                "vq_drop_ratio": round(run.result.vq_drop_ratio, 6),
                "throughput_mbps": round(run.result.throughput_bps / 1e6, 3),
                "checks_passed": run.passed,
            }
            for run in comparison.runs
        ],
        "note": _note(report, comparison),
    }


def _note(report: Report, comparison: WindowComparison) -> str:
    figure = comparison.figure
    paper_slice = comparison.runs[0].result.slice_
    spec, traffic = paper_slice.slice_, paper_slice.traffic
    figures = "; ".join(
        f"with {r.min_cwnd}{' (this run)' if r.min_cwnd == report.dctcp_min_cwnd else ''}: "
        f"p50 {r.result.vq.p50_ms:.2f} ms, {r.result.mark_ratio:.1%} marked, "
        f"{r.result.vq_drop_ratio:.2%} dropped"
        for r in comparison.runs
    )
    note = (
        f"The paper's {figure.label} figure (virtual-queue delay around "
        f"{figure.vq_delay_ms:g} ms, {figure.where}) needs DCTCP's minimum window at "
        f"{figure.min_cwnd} packet{'s' if figure.min_cwnd > 1 else ''} in this model, not "
        f"Linux's {DCTCP_MIN_CWND}. {figure.label}'s virtual queue {figures}."
    )
    bdp = spec.rate_bps * traffic.rtt_s / (traffic.frame_bytes * 8)
    floor = traffic.flows * DCTCP_MIN_CWND
    if floor >= bdp:
        note += (
            f" At Linux's {DCTCP_MIN_CWND} packets the {traffic.flows} flows keep at least "
            f"{floor} packets in flight, above the slice's "
            f"{spec.rate_bps / 1e6:g} Mbit/s x {traffic.rtt_s * 1e3:g} ms bandwidth-delay "
            f"product of {bdp:.1f} packets: marks alone cannot hold them to the rate limit, so "
            f"the virtual queue sits near its {spec.burst_limit_s * 1e3:g} ms burst limit "
            "and drops police the excess. The testbed presumably absorbed it in host and "
            "BMv2 latency this model does not have."
        )
    return note


def _slice_summary(r: SliceResult) -> dict[str, Any]:
    spec, traffic = r.slice_.slice_, r.slice_.traffic
    return {
        "slice": r.slice_.label,
        "dp_sid": spec.dp_sid,
        "priority": spec.priority,
        "scheme": str(spec.scheme),
        "traffic": f"{traffic.flows} x {traffic.cc.name.lower()}, RTT {traffic.rtt_s * 1e3:g} ms",
        "rate_limit_mbps": spec.rate_bps / 1e6,
        "burst_limit_ms": spec.burst_limit_s * 1e3,
        "throughput_mbps": round(r.throughput_bps / 1e6, 3),
        "offered_mbps": round(r.offered_bps / 1e6, 3),
        "busiest_interval_mbps": round(r.peak_interval_bps / 1e6, 3),
        "vq_drop_ratio": round(r.vq_drop_ratio, 6),
        "real_drop_ratio": round(r.real_drop_ratio, 6),
        "mark_ratio": round(r.mark_ratio, 6),
        "vq_delay_ms": {k: round(v, 3) for k, v in asdict(r.vq).items()},
        "real_delay_ms": {k: round(v, 3) for k, v in asdict(r.real).items()},
        "switch_vq_histogram": list(r.p4_vq_hist),
        "switch_real_histogram": list(r.p4_real_hist),
    }


def _summary(report: Report, path: Path) -> Path:
    path.write_text(json.dumps(summary(report), indent=2) + "\n")
    return path
