"""The report's figures, after the paper's: throughput per slice over time (Fig. 7 / 14) and
the CDFs of virtual and real queuing delay (Fig. 6 / 13).

Built on `matplotlib.figure.Figure` directly (no pyplot): no global state, no GUI backend,
safe to call from any thread.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from sliceportal.domain import dataplane as dp
from sliceportal.experiments.runner import Report, SliceResult

COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e")
DPI = 120


def write_plots(report: Report, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    return [_throughput(report, out / "throughput.png"), _cdf(report, out / "delay_cdf.png")]


def _throughput(report: Report, path: Path) -> Path:
    slices = report.slices
    fig = Figure(figsize=(8, 2.3 * len(slices) + 0.6), dpi=DPI, layout="constrained")
    axes = fig.subplots(len(slices), 1, sharex=True, squeeze=False)[:, 0]
    for ax, r, color in zip(axes, slices, COLORS, strict=False):
        label = r.slice_.label
        times = [s.time_s for s in report.samples if s.slice_.label == label]
        mbps = [s.stats.throughput_bps / 1e6 for s in report.samples if s.slice_.label == label]
        limit = r.slice_.slice_.rate_bps / 1e6
        ax.plot(times, mbps, color=color, marker="." if len(times) < 60 else None, label=label)
        ax.axhline(
            limit, color=color, linestyle="--", linewidth=1, label=f"rate limit {limit:g} Mbit/s"
        )
        priority = r.slice_.slice_.priority
        above = [o for o in slices if o.slice_.slice_.priority > priority]
        if report.experiment.congested and above:
            link = report.experiment.port_rate_bps
            left = (link - sum(o.throughput_bps for o in above)) / 1e6
            ax.axhline(
                left, color="gray", linestyle=":", linewidth=1,
                label=f"left by higher priorities {left:.1f} Mbit/s",
            )  # fmt: skip
        ax.set_ylim(0, limit * 1.25)
        ax.set_ylabel("Mbit/s")
        ax.set_title(
            f"{label}: mean {r.throughput_bps / 1e6:.1f} Mbit/s", loc="left", fontsize="medium"
        )
        ax.legend(loc="lower right", fontsize="small")
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel(f"time after warm-up (s), {report.sample_s:g} s averages")
    fig.suptitle(f"{report.experiment.title}\nthroughput per slice (counters read over P4Runtime)")
    fig.savefig(path)
    return path


def _cdf(report: Report, path: Path) -> Path:
    slices = report.slices
    fig = Figure(figsize=(4.2 * len(slices), 4.6), dpi=DPI, layout="constrained")
    axes = fig.subplots(1, len(slices), squeeze=False)[0]
    for ax, r in zip(axes, slices, strict=False):
        _one_cdf(ax, r)
    axes[0].set_ylabel("CDF of forwarded packets")
    fig.suptitle(f"{report.experiment.title}\nqueuing delay of the forwarded packets")
    handles = [
        _key("virtual queue (egress tap)", COLORS[0]),
        _key("virtual (switch histogram)", COLORS[0], marker=True),
        _key("real queue (egress tap)", COLORS[1]),
        _key("real (switch histogram)", COLORS[1], marker=True),
        _key("burst limit", "gray", style=":"),
        _key("marking threshold", "gray", style="-."),
    ]
    fig.legend(handles=handles, loc="outside lower center", ncols=3, fontsize="small")
    fig.savefig(path)
    return path


def _key(
    label: str, color: str, *, style: Literal["-", ":", "-."] = "-", marker: bool = False
) -> Line2D:
    """A legend entry: a line, or an open circle for the switch's histogram points."""
    if marker:
        return Line2D([], [], color=color, marker="o", fillstyle="none", ls="", label=label)
    return Line2D([], [], color=color, linestyle=style, linewidth=1.5, label=label)


def _one_cdf(ax: Axes, r: SliceResult) -> None:
    spec = r.slice_.slice_
    burst_ms = spec.burst_limit_s * 1e3
    for hist, switch_hist, color in (
        (r.vq_hist_us, r.p4_vq_hist, COLORS[0]),
        (r.real_hist_us, r.p4_real_hist, COLORS[1]),
    ):
        total = int(hist.sum())
        if total:
            edges_ms = np.arange(len(hist) + 1) * r.tap_bin_us / 1e3
            cdf = np.concatenate([[0.0], np.cumsum(hist) / total])
            ax.step(edges_ms, cdf, where="post", color=color)
        switch_total = sum(switch_hist)
        if switch_total:
            upper_ms = np.array(dp.histogram_edges_s(spec.policy().hist_target)) * 1e3
            cdf = np.cumsum(switch_hist[:-1]) / switch_total
            ax.plot(upper_ms, cdf, "o", color=color, fillstyle="none")
    ax.axvline(burst_ms, color="gray", linewidth=1, linestyle=":")
    if spec.marking_threshold_s is not None:
        ax.axvline(spec.marking_threshold_s * 1e3, color="gray", linewidth=1, linestyle="-.")
    ax.set_xlim(-0.02 * burst_ms * 1.2, burst_ms * 1.2)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("delay (ms)")
    ax.set_title(
        f"{r.slice_.label} (burst limit {burst_ms:g} ms)\n"
        f"p99: virtual {r.vq.p99_ms:.2f} ms, real {r.real.p99_ms:.2f} ms",
        fontsize="medium",
    )
    ax.grid(alpha=0.3)
