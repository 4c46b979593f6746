"""P4-CoDel's Table I (Kundel et al. 2021, section IV) inside a slice, in the emulator.

The paper runs 1, 2 and 3 TCP flows for 4 s through a CoDel queue shaped to 100 Mbit/s
(target 5 ms, interval 100 ms) and reports each target's packet loss and mean latency. Here the
queue is a 100 Mbit/s slice's virtual queue on a 1 Gbit/s port, with a burst limit of 100 ms:
the same traffic runs once with ``tail_drop`` (the slice's queue fills to the burst limit:
bufferbloat inside the slice) and once with ``codel``. The slices go to the switch through
P4Runtime as the portal deploys them; drops and throughput come from the switch's counters,
the delays (the slice's virtual-queue delay of each forwarded packet, what it waits at the
slice's rate) from the model's egress tap.

The port runs at the slice's 100 Mbit/s, so the queue is real and TCP's ACK clock sees it (a
virtual queue alone delays nothing: senders would see only their base RTT); the slice's virtual
queue, a hair slower (its byte time is rounded up), is what CoDel and the burst limit act on,
and the delays reported are the real queue's, what the packets waited.

Settings the paper leaves open (docs/emulator.md, "P4-CoDel's Table I"): CUBIC senders with a
5 ms base RTT behind 1 Gbit/s NICs, 1514-byte frames, not ECN-capable; a 0.5 s warm-up, then
the 4 s measured.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from sliceportal.domain import dataplane as dp
from sliceportal.domain.codel import CodelConfig
from sliceportal.emulator.layout import Congestion
from sliceportal.emulator.model.engine import compile_kernel
from sliceportal.emulator.model.ports import PortConfig
from sliceportal.emulator.model.switch_model import Clock, PacketModel
from sliceportal.emulator.model.traffic import Profile, SourceSpec
from sliceportal.emulator.server import EmulatorServer
from sliceportal.experiments.paper import EGRESS_PORT, QUEUE_DEPTH, ROUTES, SENDER_RATE_BPS
from sliceportal.experiments.runner import (
    Check,
    RowsReport,
    deploy,
    open_session,
    read_slices,
    tap_delays,
    write_rows_and_summary,
)

NAME = "codel-table1"
SLICE_RATE_BPS = 100e6
BURST_LIMIT_S = 0.1
PORT_RATE_BPS = 100_000_000
TARGET_S, INTERVAL_S = 0.005, 0.1
RTT_S = 0.005
FLOWS = (1, 2, 3)
SCHEMES = (dp.Scheme.TAIL_DROP, dp.Scheme.CODEL)
TAP_BIN_US, TAP_BINS = 10, 20_000
DP_SID = 1

CODEL_MEAN_DELAY_MAX_MS = 2 * TARGET_S * 1e3
"""CoDel holds the slice's queue near its 5 ms target: the paper's means are 5.5-8.2 ms."""
BUFFERBLOAT_FACTOR = 3.0
"""Tail drop's mean delay is at least this many times CoDel's (its queue fills to 100 ms)."""
UTILISATION_MIN = 0.9
"""CoDel keeps the slice busy: at least 90% of its rate (the paper's runs are at 100 Mbit/s)."""
CODEL_LOSS_MAX_PCT = 1.0
"""CoDel drops little: the paper's losses are 0.05-0.45%."""


@dataclass(frozen=True)
class PaperRow:
    """One cell pair of the paper's Table I: the keys of ``summary.json``'s ``paper``."""

    target: str
    flows: int
    loss_pct: float
    mean_delay_ms: float


PAPER = (
    PaperRow("P4-ASIC", 1, 0.16, 5.59),
    PaperRow("P4-ASIC", 2, 0.36, 6.86),
    PaperRow("P4-ASIC", 3, 0.44, 8.17),
    PaperRow("Linux", 1, 0.05, 5.7),
    PaperRow("Linux", 2, 0.17, 6.5),
    PaperRow("Linux", 3, 0.33, 7.2),
)
"""Table I of the paper: CoDel at 100 Mbit/s, 4 s runs (loss and mean latency)."""


@dataclass(frozen=True)
class Row:
    """One run: the keys of ``summary.json``'s ``rows``, exactly."""

    scheme: str
    flows: int
    throughput_bps: float
    loss_pct: float
    mean_delay_ms: float
    p99_delay_ms: float


CodelReport = RowsReport[Row]


def codel_slice(scheme: dp.Scheme) -> dp.DataplaneSlice:
    """The 100 Mbit/s slice of the runs, with tail drop or CoDel (5 ms, 100 ms)."""
    codel = CodelConfig.from_seconds(TARGET_S, INTERVAL_S) if scheme == dp.Scheme.CODEL else None
    return dp.DataplaneSlice(
        DP_SID, "bulk", None, ("10.0.1.0/24",), SLICE_RATE_BPS, BURST_LIMIT_S, 7, scheme, None,
        EGRESS_PORT, codel=codel,
    )  # fmt: skip


def run(*, duration_s: float = 4.0, warmup_s: float = 0.5, seed: int = 1) -> CodelReport:
    """Every (scheme, flows) run of the table, then the paper's claims as checks."""
    if duration_s <= 0 or warmup_s < 0:
        raise ValueError("need duration_s > 0 and warmup_s >= 0")
    rows = [
        _run(scheme, flows, duration_s, warmup_s, seed) for scheme in SCHEMES for flows in FLOWS
    ]
    return CodelReport(duration_s, warmup_s, seed, rows, checks(rows))


def _run(scheme: dp.Scheme, flows: int, duration_s: float, warmup_s: float, seed: int) -> Row:
    traffic = SourceSpec(
        name="tcp",
        pattern="tcp",
        ipv4_dst="10.0.1.1",
        cc=Congestion.CUBIC,
        flows=flows,
        rtt_s=RTT_S,
        sender_rate_bps=SENDER_RATE_BPS,
    )
    port = PortConfig(PORT_RATE_BPS, QUEUE_DEPTH)
    profile = Profile((traffic,), seed, {EGRESS_PORT: port})
    model = PacketModel(
        profile, clock=Clock.MANUAL, chunk_s=0.05, tap_bins=TAP_BINS, tap_bin_us=TAP_BIN_US
    )
    compile_kernel()
    slice_ = codel_slice(scheme)
    with EmulatorServer("127.0.0.1:0", model=model) as server:
        session = open_session(server.address)
        try:
            deploy(session, dp.dataplane_entries([slice_], ROUTES))
            model.tap(DP_SID)
            model.advance(warmup_s)
            before, tap_before = read_slices(session, [DP_SID]), model.tap_reading(DP_SID)
            model.advance(duration_s)
            after, tap_after = read_slices(session, [DP_SID]), model.tap_reading(DP_SID)
        finally:
            session.close()
    stats = dp.slice_stats(before[DP_SID], after[DP_SID], duration_s, slice_.policy().hist_target)
    lost = stats.vq_drop_ratio + stats.real_drop_ratio + stats.aqm_drop_ratio  # every drop
    packets = tap_after.packets - tap_before.packets
    delays = tap_delays(
        tap_after.real_hist - tap_before.real_hist,
        tap_after.bin_us,
        tap_after.real_max_us,
        tap_after.real_sum_us - tap_before.real_sum_us,
        packets,
    )
    return Row(
        scheme.value,
        flows,
        stats.throughput_bps,
        100 * lost,
        delays.mean_ms,
        delays.p99_ms,
    )


def checks(rows: list[Row]) -> list[Check]:
    """The paper's claims (and the point of CoDel inside a slice) on the measured rows."""
    by = {(r.scheme, r.flows): r for r in rows}
    out = []
    for flows in FLOWS:
        codel, tail = by[(dp.Scheme.CODEL.value, flows)], by[(dp.Scheme.TAIL_DROP.value, flows)]
        out += [
            Check(
                f"codel, {flows} flow(s): mean delay near the 5 ms target",
                codel.mean_delay_ms <= CODEL_MEAN_DELAY_MAX_MS,
                f"mean {codel.mean_delay_ms:.2f} ms, p99 {codel.p99_delay_ms:.2f} ms "
                f"(at most {CODEL_MEAN_DELAY_MAX_MS:g} ms)",
            ),
            Check(
                f"{flows} flow(s): tail drop's bufferbloat removed",
                tail.mean_delay_ms >= BUFFERBLOAT_FACTOR * codel.mean_delay_ms,
                f"tail drop mean {tail.mean_delay_ms:.2f} ms, codel {codel.mean_delay_ms:.2f} ms",
            ),
            Check(
                f"codel, {flows} flow(s): the slice stays busy",
                codel.throughput_bps >= UTILISATION_MIN * SLICE_RATE_BPS,
                f"{codel.throughput_bps / 1e6:.1f} Mbit/s of {SLICE_RATE_BPS / 1e6:g}",
            ),
            Check(
                f"codel, {flows} flow(s): little loss",
                codel.loss_pct <= CODEL_LOSS_MAX_PCT,
                f"{codel.loss_pct:.3f} % (at most {CODEL_LOSS_MAX_PCT:g} %)",
            ),
        ]
    one, three = by[(dp.Scheme.CODEL.value, 1)], by[(dp.Scheme.CODEL.value, FLOWS[-1])]
    out.append(
        Check(
            "codel: loss grows with the number of flows (the paper's Table I)",
            three.loss_pct > one.loss_pct,
            f"{one.loss_pct:.3f} % with 1 flow, {three.loss_pct:.3f} % with {FLOWS[-1]}",
        )
    )
    return out


def summary(report: CodelReport) -> dict[str, Any]:
    """``summary.json``: settings, ``rows`` (our runs), ``paper`` (Table I), ``checks``."""
    return {
        "experiment": NAME,
        "title": "P4-CoDel Table I inside a 100 Mbit/s slice: tail drop against CoDel",
        "slice_mbps": SLICE_RATE_BPS / 1e6,
        "burst_limit_ms": BURST_LIMIT_S * 1e3,
        "target_ms": TARGET_S * 1e3,
        "interval_ms": INTERVAL_S * 1e3,
        "rtt_ms": RTT_S * 1e3,
        "duration_s": report.duration_s,
        "warmup_s": report.warmup_s,
        "seed": report.seed,
        "rows": [asdict(r) for r in report.rows],
        "paper": [asdict(p) for p in PAPER],
        "checks": [asdict(c) for c in report.checks],
        "passed": report.passed,
    }


def write_report(report: CodelReport, out: Path) -> list[Path]:
    """``rows.csv``, ``summary.json`` and ``delay.png`` into ``out`` (created)."""
    files = write_rows_and_summary(report.rows, summary(report), out)
    return [*files, _plot(report, out / "delay.png")]


def _plot(report: CodelReport, path: Path) -> Path:
    """Mean and p99 delay per flow count, ours beside the paper's means."""
    fig = Figure(figsize=(7, 3.6), dpi=120, layout="constrained")
    ax = fig.subplots()
    for scheme, color in zip(SCHEMES, ("#d62728", "#1f77b4"), strict=True):
        rows = [r for r in report.rows if r.scheme == scheme.value]
        flows = [r.flows for r in rows]
        ax.plot(flows, [r.mean_delay_ms for r in rows], "o-", color=color, label=f"{scheme} mean")
        ax.plot(flows, [r.p99_delay_ms for r in rows], "x--", color=color, label=f"{scheme} p99")
    for target, marker in (("P4-ASIC", "s"), ("Linux", "^")):
        cells = [p for p in PAPER if p.target == target]
        ax.plot([p.flows for p in cells], [p.mean_delay_ms for p in cells], marker,
                color="gray", label=f"paper {target} mean")  # fmt: skip
    ax.set_xticks(list(FLOWS))
    ax.set_xlabel("TCP CUBIC flows")
    ax.set_ylabel("delay in the slice (ms)")
    ax.set_yscale("log")
    ax.legend(fontsize=7)
    fig.savefig(path)
    return path
