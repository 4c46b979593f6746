"""Run a paper experiment in the emulator through the real P4Runtime path, and report it.

The switch is an in-process `EmulatorServer` with the packet model on the manual (fast) clock.
The portal's own P4Runtime client (`p4rt.session.SwitchSession`) commits the pipeline and
installs the entries that `domain.dataplane` translates the slices to, exactly as the portal
deploys them. Every ``sample_s`` of simulated time it reads the slices' counters back over
P4Runtime: throughput, drops, marks and the switch's 8-bucket delay histograms come from there.
Finer delay distributions (the paper's CDFs, from per-packet measurements on the outgoing link)
come from the model's egress tap, the emulator's stand-in for that capture.

DCTCP's minimum window is Linux's 2 packets unless asked otherwise. An experiment with a
`PaperFigure` (experiment 1's DC delay) runs again with the window that figure needs, and with
Linux's if it was asked for another, and its report compares the slice's figures
(`WindowComparison`).

An experiment the paper compares with P4 meters (`Experiment.baseline_figure`) runs again with
every slice on the meter scheme (`Experiment.meter_baseline`), and its report holds that run
(`Report.meter_baseline`) for the summary to set beside its own figures and the paper's.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

import numpy as np
import numpy.typing as npt

from sliceportal.domain import dataplane as dp
from sliceportal.domain.reconcile import EntryUpdate, UpdateKind
from sliceportal.emulator.defaults import DEFAULT_P4INFO
from sliceportal.emulator.layout import DCTCP_MIN_CWND
from sliceportal.emulator.model.engine import TapReading, compile_kernel
from sliceportal.emulator.model.ports import PortConfig
from sliceportal.emulator.model.switch_model import Clock, PacketModel
from sliceportal.emulator.model.traffic import Profile
from sliceportal.emulator.server import EmulatorServer
from sliceportal.experiments.paper import (
    EGRESS_PORT,
    QUEUE_DEPTH,
    Experiment,
    PaperFigure,
    PaperSlice,
)
from sliceportal.p4rt.connection import SwitchTarget
from sliceportal.p4rt.pipeline import Pipeline
from sliceportal.p4rt.session import SwitchSession

DEVICE_CONFIG = DEFAULT_P4INFO.parent / "sliceportal.json"
"""The BMv2 JSON the pipeline is committed with (the emulator checks only its shape)."""
HIGH_PRIORITY_REAL_P99_MS = 1.0
"""'Almost no' real queuing delay: a few frame times of a 285 Mbit/s link."""
CONGESTED_REAL_P99_MS = 10.0
"""In experiment 3 the low-priority slice is held by its real queue: its p99 is well up."""
TAP_BIN_US, TAP_BINS = 10, 10_000
"""The egress tap: 10 us bins up to 100 ms, beyond every delay a virtual queue allows."""
METER_TAP_BIN_US, METER_TAP_BINS = 100, 100_000
"""The egress tap of a meter baseline run: 0.1 ms bins up to 10 s, since nothing bounds its
real queue (the paper saw up to 800 ms; 100 ms would cap its percentiles)."""
_RATE_SLACK = 1.001  # byte_time rounding is below 0.1 %; counters count whole frames
_RPC_TIMEOUT_S = 30.0


class DeployError(RuntimeError):
    """The emulator refused the experiment's entries (a bug: they come from the translation)."""


@dataclass(frozen=True)
class Sample:
    """One slice over one sampling interval ending at ``time_s`` (since the warm-up ended)."""

    time_s: float
    slice_: PaperSlice
    stats: dp.SliceStats
    vq_mean_ms: float | None
    real_mean_ms: float | None


@dataclass(frozen=True)
class Delays:
    """Delay percentiles (ms) of the forwarded packets, to the tap's resolution: each is the
    upper edge of the bin holding it. ``max_ms`` is exact, over the whole run."""

    p50_ms: float
    p95_ms: float
    p99_ms: float
    max_ms: float
    mean_ms: float


@dataclass(frozen=True)
class SliceResult:
    slice_: PaperSlice
    throughput_bps: float
    offered_bps: float
    peak_interval_bps: float
    vq_drop_ratio: float
    real_drop_ratio: float
    mark_ratio: float
    vq: Delays
    real: Delays
    vq_hist_us: npt.NDArray[np.int64]
    real_hist_us: npt.NDArray[np.int64]
    tap_bin_us: int
    p4_vq_hist: tuple[int, ...]
    p4_real_hist: tuple[int, ...]


@dataclass(frozen=True)
class Check:
    name: str
    passed: bool
    detail: str


RowT = TypeVar("RowT")


@dataclass
class RowsReport(Generic[RowT]):
    """What a table-shaped experiment measured: its run settings, one row per run, and the
    paper's claims checked on them."""

    duration_s: float
    warmup_s: float
    seed: int
    rows: list[RowT]
    checks: list[Check]

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)


def write_rows_and_summary(rows: Sequence[Any], doc: dict[str, Any], out: Path) -> list[Path]:
    """``rows.csv`` (one line per dataclass row) and ``summary.json`` (``doc``) into ``out``
    (created): what every table-shaped experiment writes beside its plot."""
    out.mkdir(parents=True, exist_ok=True)
    table = out / "rows.csv"
    with table.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(asdict(rows[0])))
        writer.writeheader()
        writer.writerows(asdict(r) for r in rows)
    summary = out / "summary.json"
    summary.write_text(json.dumps(doc, indent=2) + "\n")
    return [table, summary]


@dataclass(frozen=True)
class WindowRun:
    """The paper figure's slice in a run with one DCTCP minimum window."""

    min_cwnd: int
    result: SliceResult
    passed: bool
    """Every check of that run held."""


@dataclass(frozen=True)
class WindowComparison:
    """The same experiment with the DCTCP minimum windows the figure and Linux use (and the
    one asked for), ascending; one of them is the report's own run."""

    figure: PaperFigure
    runs: tuple[WindowRun, ...]


@dataclass
class Report:
    experiment: Experiment
    duration_s: float
    warmup_s: float
    sample_s: float
    seed: int
    dctcp_min_cwnd: int = DCTCP_MIN_CWND
    samples: list[Sample] = field(default_factory=list)
    slices: list[SliceResult] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    comparison: WindowComparison | None = None
    meter_baseline: Report | None = None
    """The same traffic with every slice on P4 meters (the paper's baseline), when the
    experiment has a `BaselineFigure`."""

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)


def open_session(address: str) -> SwitchSession:
    """A session with the in-process emulator, as the portal opens one with a switch."""
    target = SwitchTarget(switch_id=0, address=address, device_id=1, election_id=1)
    pipeline = Pipeline.load(DEFAULT_P4INFO, DEVICE_CONFIG)
    return SwitchSession(target, pipeline, rpc_timeout_s=_RPC_TIMEOUT_S)


def deploy(
    session: SwitchSession,
    entries: Sequence[dp.TableEntry],
    meters: Sequence[dp.MeterConfig] = (),
) -> None:
    """Commit the pipeline, INSERT the entries and configure the meter cells (the meter
    baseline's slices), as the portal deploys a switch."""
    session.push_pipeline(session.pipeline.cookie)
    outcomes = session.write([EntryUpdate(UpdateKind.INSERT, e) for e in entries])
    failed = [f"{e.table}: {o}" for e, o in zip(entries, outcomes, strict=True) if not o.ok]
    meter_outcomes = session.write_meters(meters)
    failed += [
        f"{m.meter}[{m.index}]: {o}"
        for m, o in zip(meters, meter_outcomes, strict=True)
        if not o.ok
    ]
    if failed:
        raise DeployError(f"{len(failed)} entries refused; first: {failed[0]}")


def read_slices(session: SwitchSession, dp_sids: Sequence[int]) -> dict[int, dp.SliceCounters]:
    """Every slice's counter cells (`dataplane.counter_cells`), in one Read."""
    cells = [cell for dp_sid in dp_sids for cell in dp.counter_cells(dp_sid)]
    values = session.read_counter_cells(cells)
    return {dp_sid: dp.SliceCounters.from_cells(values, dp_sid) for dp_sid in dp_sids}


def run(
    experiment: Experiment,
    *,
    duration_s: float,
    warmup_s: float,
    sample_s: float = 1.0,
    seed: int = 1,
    dctcp_min_cwnd: int = DCTCP_MIN_CWND,
    compare: bool = True,
    meter_baseline: bool = True,
) -> Report:
    """Warm up for ``warmup_s`` (TCP finds its rates; the paper skipped 50 s), then measure
    ``duration_s``, reading the counters over P4Runtime every ``sample_s``. DCTCP's window
    stops at ``dctcp_min_cwnd`` packets; when the experiment has a `PaperFigure` (and
    ``compare``), it runs again with the figure's window and Linux's, those not run yet, and
    the report's ``comparison`` holds the figure's slice in each run. When the experiment has a
    `BaselineFigure` (and ``meter_baseline``), the same traffic runs with P4 meters too, with the
    same window, into the report's ``meter_baseline``."""
    if duration_s < sample_s or sample_s <= 0 or warmup_s < 0:
        raise ValueError("need duration_s >= sample_s > 0 and warmup_s >= 0")
    if dctcp_min_cwnd < 1:
        raise ValueError(f"dctcp_min_cwnd must be at least 1 packet, got {dctcp_min_cwnd}")

    def once(window: int) -> Report:
        return _run(
            experiment.with_dctcp_min_cwnd(window), window, duration_s, warmup_s, sample_s, seed
        )

    report = once(dctcp_min_cwnd)
    figure = experiment.paper_figure
    if compare and figure is not None:
        runs = []
        for window in sorted({dctcp_min_cwnd, figure.min_cwnd, DCTCP_MIN_CWND}):
            other = report if window == dctcp_min_cwnd else once(window)
            result = next(r for r in other.slices if r.slice_.label == figure.label)
            runs.append(WindowRun(window, result, other.passed))
        report.comparison = WindowComparison(figure, tuple(runs))
    if meter_baseline and experiment.baseline_figure is not None:
        metered = experiment.meter_baseline().with_dctcp_min_cwnd(dctcp_min_cwnd)
        report.meter_baseline = _run(metered, dctcp_min_cwnd, duration_s, warmup_s, sample_s, seed)
    return report


def _run(
    experiment: Experiment,
    dctcp_min_cwnd: int,
    duration_s: float,
    warmup_s: float,
    sample_s: float,
    seed: int,
) -> Report:
    port = PortConfig(experiment.port_rate_bps, QUEUE_DEPTH)
    profile = Profile(tuple(s.traffic for s in experiment.slices), seed, {EGRESS_PORT: port})
    bin_us, bins = (
        (METER_TAP_BIN_US, METER_TAP_BINS) if experiment.metered else (TAP_BIN_US, TAP_BINS)
    )
    model = PacketModel(profile, clock=Clock.MANUAL, chunk_s=0.05, tap_bins=bins, tap_bin_us=bin_us)
    compile_kernel()
    report = Report(experiment, duration_s, warmup_s, sample_s, seed, dctcp_min_cwnd)
    slices = experiment.slices
    sids = [s.slice_.dp_sid for s in slices]

    def counters(session: SwitchSession) -> dict[str, dp.SliceCounters]:
        readings = read_slices(session, sids)
        return {s.label: readings[s.slice_.dp_sid] for s in slices}

    def taps() -> dict[str, TapReading]:
        return {s.label: model.tap_reading(s.slice_.dp_sid) for s in slices}

    with EmulatorServer("127.0.0.1:0", model=model) as server:
        session = open_session(server.address)
        try:
            defined = [s.slice_ for s in slices]
            deploy(
                session,
                dp.dataplane_entries(defined, experiment.routes),
                dp.meter_configs(defined),
            )
            for dp_sid in sids:
                model.tap(dp_sid)
            model.advance(warmup_s)
            first, first_tap = counters(session), taps()
            before, before_tap = first, first_tap
            samples = round(duration_s / sample_s)
            for k in range(1, samples + 1):
                model.advance(sample_s)
                now, now_tap = counters(session), taps()
                for s in slices:
                    report.samples.append(
                        _sample(k * sample_s, s, before, now, before_tap, now_tap, sample_s)
                    )
                before, before_tap = now, now_tap
        finally:
            session.close()
    window = samples * sample_s
    for s in slices:
        start, end = first[s.label], before[s.label]
        report.slices.append(
            _slice_result(
                s,
                dp.slice_stats(start, end, window, s.slice_.policy().hist_target),
                report,
                (first_tap[s.label], before_tap[s.label]),
                (
                    _minus(end.vq_delay_hist, start.vq_delay_hist),
                    _minus(end.real_delay_hist, start.real_delay_hist),
                ),
            )
        )
    report.checks = checks(report)
    return report


def _sample(
    time_s: float,
    s: PaperSlice,
    before: dict[str, dp.SliceCounters],
    now: dict[str, dp.SliceCounters],
    before_tap: dict[str, TapReading],
    now_tap: dict[str, TapReading],
    sample_s: float,
) -> Sample:
    tap_now, tap_then = now_tap[s.label], before_tap[s.label]
    packets = tap_now.packets - tap_then.packets

    def mean_ms(now_us: int, then_us: int) -> float | None:
        return (now_us - then_us) / packets / 1e3 if packets else None

    return Sample(
        time_s,
        s,
        dp.slice_stats(before[s.label], now[s.label], sample_s, s.slice_.policy().hist_target),
        mean_ms(tap_now.vq_sum_us, tap_then.vq_sum_us),
        mean_ms(tap_now.real_sum_us, tap_then.real_sum_us),
    )


def _minus(after: tuple[int, ...], before: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(a - b for a, b in zip(after, before, strict=True))


def _slice_result(
    s: PaperSlice,
    overall: dp.SliceStats,
    report: Report,
    taps: tuple[TapReading, TapReading],
    p4_hists: tuple[tuple[int, ...], tuple[int, ...]],
) -> SliceResult:
    start, end = taps
    vq_hist = end.vq_hist - start.vq_hist
    real_hist = end.real_hist - start.real_hist
    packets = end.packets - start.packets
    own = [x.stats for x in report.samples if x.slice_ is s]
    return SliceResult(
        s,
        overall.throughput_bps,
        overall.offered_bps,
        max(x.throughput_bps for x in own),
        overall.vq_drop_ratio,
        overall.real_drop_ratio,
        overall.mark_ratio,
        tap_delays(vq_hist, end.bin_us, end.vq_max_us, end.vq_sum_us - start.vq_sum_us, packets),
        tap_delays(
            real_hist, end.bin_us, end.real_max_us, end.real_sum_us - start.real_sum_us, packets
        ),
        vq_hist,
        real_hist,
        end.bin_us,
        *p4_hists,
    )


def tap_delays(
    hist: npt.NDArray[np.int64], bin_us: int, max_us: int, sum_us: int, packets: int
) -> Delays:
    total = int(hist.sum())
    if total == 0:
        return Delays(0.0, 0.0, 0.0, max_us / 1e3, 0.0)
    cumulative = np.cumsum(hist)

    def at(share: float) -> float:
        index = int(np.searchsorted(cumulative, share * total))
        return (index + 1) * bin_us / 1e3

    return Delays(at(0.50), at(0.95), at(0.99), max_us / 1e3, sum_us / max(packets, 1) / 1e3)


def checks(report: Report) -> list[Check]:
    """The paper's claims, as assertions on what the experiment measured."""
    out = []
    for r in report.slices:
        spec = r.slice_.slice_
        label = r.slice_.label
        burst_ms = spec.burst_limit_s * 1e3
        # Admitted bytes in any interval T are at most rate x T + burst; forwarding can lag
        # admission by the real queue's delay, itself at most one burst limit.
        slack = 2 * spec.burst_limit_s
        bound = spec.rate_bps * (1 + slack / report.sample_s) * _RATE_SLACK
        out.append(
            Check(
                f"{label}: throughput within the rate limit",
                r.peak_interval_bps <= bound
                and r.throughput_bps
                <= spec.rate_bps * (1 + slack / report.duration_s) * _RATE_SLACK,
                f"mean {r.throughput_bps / 1e6:.2f} Mbit/s, busiest {report.sample_s:g} s "
                f"{r.peak_interval_bps / 1e6:.2f} Mbit/s, limit {spec.rate_bps / 1e6:g} Mbit/s",
            )
        )
        metered = report.experiment.metered
        if not metered:
            out.append(
                Check(
                    f"{label}: virtual-queue delay within the burst limit",
                    r.vq.max_ms <= burst_ms,
                    f"max {r.vq.max_ms:.3f} ms, burst limit {burst_ms:g} ms",
                )
            )
        high = spec.priority == max(s.slice_.priority for s in report.experiment.slices)
        if metered and report.experiment.congested and not high:
            # The paper's Fig. 14: meters bound the rate, nothing bounds the real queue.
            out.append(
                Check(
                    f"{label}: real delay beyond the burst limit (meters leave it uncontrolled)",
                    r.real.max_ms > burst_ms,
                    f"real p99 {r.real.p99_ms:.3f} ms, max {r.real.max_ms:.3f} ms, "
                    f"burst limit {burst_ms:g} ms",
                )
            )
        elif not report.experiment.congested or high:
            out.append(
                Check(
                    f"{label}: almost no real queuing delay",
                    r.real.p99_ms <= HIGH_PRIORITY_REAL_P99_MS,
                    f"real p99 {r.real.p99_ms:.3f} ms, max {r.real.max_ms:.3f} ms",
                )
            )
        else:
            out.append(
                Check(
                    f"{label}: real delay bounded by the burst limit, and reached",
                    r.real.max_ms <= burst_ms + 1e-3 and r.real.p99_ms >= CONGESTED_REAL_P99_MS,
                    f"real p99 {r.real.p99_ms:.3f} ms, max {r.real.max_ms:.3f} ms, "
                    f"burst limit {burst_ms:g} ms",
                )
            )
    return out
