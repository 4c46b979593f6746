"""The paper's experiments 1 and 3, shortened, through the real P4Runtime path."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from sliceportal.cli import CliError
from sliceportal.cli import experiment as experiment_cli
from sliceportal.domain import dataplane as dp
from sliceportal.emulator.layout import DCTCP_MIN_CWND
from sliceportal.emulator.model.engine import compile_kernel
from sliceportal.emulator.model.switch_model import Clock, PacketModel
from sliceportal.emulator.model.traffic import Profile
from sliceportal.emulator.server import EmulatorServer
from sliceportal.experiments.output import summary
from sliceportal.experiments.paper import EXPERIMENTS
from sliceportal.experiments.runner import (
    DeployError,
    Report,
    SliceResult,
    deploy,
    open_session,
    read_slices,
    run,
)

MBPS = 1e6
SUMMARY_KEYS = {"experiment", "title", "link_mbps", "duration_s", "warmup_s", "sample_s", "seed",
                "slices", "checks", "passed"}  # fmt: skip
"""What summary.json held before the DCTCP comparison: other tools read these."""


@pytest.fixture(scope="module", autouse=True)
def compiled_kernel() -> None:
    compile_kernel()


@pytest.fixture(scope="module")
def exp1() -> Report:
    return run(EXPERIMENTS["paper-exp1"], duration_s=8, warmup_s=4)


@pytest.fixture(scope="module")
def exp3() -> Report:
    return run(EXPERIMENTS["paper-exp3"], duration_s=8, warmup_s=4)


def by_label(report: Report) -> dict[str, SliceResult]:
    return {r.slice_.label: r for r in report.slices}


def test_experiment_1_every_slice_within_its_limits(exp1: Report) -> None:
    """Fig. 6-7: rate limits obeyed, virtual delay under the burst limit, real delay in
    microseconds on the uncongested 1 Gbit/s link. With Linux's DCTCP minimum window of 2
    (the default) the 10 DC flows hold 20 packets in flight, above the slice's bandwidth-delay
    product of 19.8: every packet is marked, the virtual queue sits near its 20 ms burst
    limit and drops police the excess (measured: mean 18.9 ms, 100 % marked, 0.6 % dropped)."""
    assert exp1.passed, [c for c in exp1.checks if not c.passed]
    assert exp1.dctcp_min_cwnd == DCTCP_MIN_CWND == 2
    r = by_label(exp1)
    assert 0.95 * 48 * MBPS < r["DC"].throughput_bps <= 48.05 * MBPS
    assert 9 * MBPS < r["Enterprise"].throughput_bps < 12 * MBPS  # "slightly above 10 Mbps"
    assert 0.85 * 240 * MBPS < r["Peering"].throughput_bps <= 240.3 * MBPS
    dc = r["DC"]
    assert 15 < dc.vq.p50_ms and dc.vq.mean_ms < 20  # near the burst limit, not the 5 ms step
    assert dc.mark_ratio > 0.99 and 0.001 < dc.vq_drop_ratio < 0.02  # all marked, some dropped
    for result in r.values():
        assert result.real.p99_ms < 0.2
        assert result.real_drop_ratio == 0


def test_experiment_1_with_a_dctcp_window_of_1_gives_the_papers_dc_figure(exp1: Report) -> None:
    """The paper's "around the 5ms marking threshold" needs a minimum window of 1: the report
    carries that run beside the main one, DC's virtual queue near its 5 ms step, marked and
    hardly ever dropped."""
    comparison = exp1.comparison
    assert comparison is not None
    assert (comparison.figure.label, comparison.figure.min_cwnd) == ("DC", 1)
    one, two = comparison.runs
    assert (one.min_cwnd, two.min_cwnd) == (1, 2)
    assert two.result is by_label(exp1)["DC"] and two.passed  # the main run
    assert one.passed
    assert 3 < one.result.vq.p50_ms < 10 and 3 < one.result.vq.mean_ms < 10
    assert one.result.vq_drop_ratio < 0.01 < one.result.mark_ratio < 0.9
    assert 0.95 * 48 * MBPS < one.result.throughput_bps <= 48.05 * MBPS


def test_the_summary_says_which_window_and_shows_both(exp1: Report, exp3: Report) -> None:
    doc = summary(exp1)
    assert SUMMARY_KEYS <= set(doc)
    assert doc["dctcp_min_cwnd"] == 2
    comparison = doc["dctcp_min_cwnd_comparison"]
    assert comparison["slice"] == "DC"
    assert comparison["paper"]["vq_delay_ms"] == 5.0
    assert comparison["paper"]["min_cwnd_needed"] == 1
    runs = {run["min_cwnd"]: run for run in comparison["runs"]}
    assert set(runs) == {1, 2}
    assert runs[2]["this_run"] and runs[2]["linux_default"]
    assert not runs[1]["this_run"] and not runs[1]["linux_default"]
    dc = doc["slices"][0]
    assert runs[2]["vq_delay_p50_ms"] == dc["vq_delay_ms"]["p50_ms"] > 15
    assert runs[2]["mark_ratio"] == dc["mark_ratio"]
    assert runs[2]["vq_drop_ratio"] == dc["vq_drop_ratio"]
    assert 3 < runs[1]["vq_delay_p50_ms"] < 10 and runs[1]["vq_drop_ratio"] < 0.01
    note = comparison["note"]
    assert "needs DCTCP's minimum window at 1 packet" in note and "Linux's 2" in note
    assert "with 2 (this run)" in note and "bandwidth-delay product of 19.8 packets" in note
    json.dumps(doc)
    # Experiment 3 makes no such claim: Linux's window, nothing to compare.
    doc = summary(exp3)
    assert SUMMARY_KEYS <= set(doc)
    assert doc["dctcp_min_cwnd"] == 2 and doc["dctcp_min_cwnd_comparison"] is None


def test_experiment_3_the_real_queue_bounds_the_low_priority_slice(exp3: Report) -> None:
    """Fig. 13-14: DC and Enterprise keep their service; Peering gets what is left of the
    285 Mbit/s and a real delay held near, never above, its 30 ms burst limit."""
    assert exp3.passed, [c for c in exp3.checks if not c.passed]
    r = by_label(exp3)
    assert 0.95 * 48 * MBPS < r["DC"].throughput_bps
    assert 9 * MBPS < r["Enterprise"].throughput_bps
    leftover = 285 * MBPS - r["DC"].throughput_bps - r["Enterprise"].throughput_bps
    assert 0.95 * leftover < r["Peering"].throughput_bps <= leftover * 1.001
    peering = r["Peering"]
    assert 15 < peering.real.p50_ms and peering.real.max_ms <= 30.001
    assert peering.real_drop_ratio > 0  # the egress check, not the virtual queue, drops
    assert peering.vq.p99_ms < 5
    for label in ("DC", "Enterprise"):
        assert r[label].real.p99_ms < 1


@pytest.mark.parametrize("name", ["exp1", "exp3"])
def test_the_switch_histograms_count_every_forwarded_packet(
    name: str, request: pytest.FixtureRequest
) -> None:
    report: Report = request.getfixturevalue(name)
    for r in report.slices:
        total = sum(r.p4_vq_hist)
        assert total == sum(r.p4_real_hist) == int(r.vq_hist_us.sum())
        forwarded = sum(s.stats.forwarded_pps * report.sample_s for s in report.samples
                        if s.slice_ is r.slice_)  # fmt: skip
        assert total == round(forwarded)


def run_cli(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    experiment_cli.register(parser.add_subparsers())
    args = parser.parse_args(["experiment", *argv])
    result: int = args.handler(args)
    return result


def test_the_command_writes_csv_json_and_png(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "exp3"
    assert run_cli("paper-exp3", "--out", str(out), "--duration", "2", "--warmup", "1") == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["experiment"] == "paper-exp3" and printed["passed"] is True
    names = {"throughput.csv", "delay_cdf.csv", "histograms.csv", "summary.json",
             "throughput.png", "delay_cdf.png"}  # fmt: skip
    assert {Path(f).name for f in printed["files"]} == names == {p.name for p in out.iterdir()}
    for png in ("throughput.png", "delay_cdf.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = (out / "throughput.csv").read_text().splitlines()
    assert rows[0].startswith("time_s,slice,dp_sid,throughput_mbps")
    assert len(rows) == 1 + 2 * 3  # two samples of three slices
    assert json.loads((out / "summary.json").read_text())["slices"][2]["slice"] == "Peering"


def test_experiment_3_meters_leave_peerings_real_queue_uncontrolled(exp3: Report) -> None:
    """Fig. 14: with P4 meters Peering's real delay far exceeds its 30 ms burst limit (the
    paper: up to 800 ms), while its virtual queue keeps it within; DC and Enterprise, at high
    priority, see almost none either way, and every slice keeps its throughput."""
    metered = exp3.meter_baseline
    assert metered is not None and metered.experiment.name == "paper-exp3-meter"
    assert all(s.slice_.scheme == dp.Scheme.METER for s in metered.experiment.slices)
    vqueue, meter = by_label(exp3), by_label(metered)
    assert vqueue["Peering"].real.max_ms <= 30 + 1e-3
    assert meter["Peering"].real.max_ms > 3 * 30
    assert meter["Peering"].real.p50_ms > 30
    assert meter["Peering"].real_drop_ratio == 0 and meter["Peering"].vq.max_ms == 0
    for label in ("DC", "Enterprise"):
        assert meter[label].real.p99_ms <= 1.0
    for label, r in vqueue.items():
        assert meter[label].throughput_bps == pytest.approx(r.throughput_bps, rel=0.05)
    assert metered.passed
    block = summary(exp3)["meter_baseline"]
    assert block["passed"] is True and block["paper"]["real_delay_max_ms"] == 800
    peering = block["slices"][2]
    assert peering["slice"] == "Peering" and peering["meter"]["real_delay_ms"]["max"] > 90
    assert peering["vqueue"]["real_delay_ms"]["max"] <= 30.001


def test_experiment_1_meters_give_the_vqueue_throughputs(exp1: Report) -> None:
    """Fig. 8: on the uncongested link the meter baseline's throughputs match the vQueue run's."""
    metered = exp1.meter_baseline
    assert metered is not None and metered.passed
    meter = by_label(metered)
    for label, r in by_label(exp1).items():
        assert meter[label].throughput_bps == pytest.approx(r.throughput_bps, rel=0.05)
        assert meter[label].real.p99_ms <= 1.0
    block = summary(exp1)["meter_baseline"]
    assert block["experiment"] == "paper-exp1-meter" and block["passed"] is True
    assert [c["passed"] for c in block["checks"]] == [True] * 3
    assert "meter_baseline" not in summary(metered)


def test_the_command_runs_the_meter_baseline_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "exp3-meter"
    assert run_cli("paper-exp3-meter", "--out", str(out), "--duration", "2", "--warmup", "1") == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["experiment"] == "paper-exp3-meter" and printed["passed"] is True
    assert {s["scheme"] for s in printed["slices"]} == {"meter"}
    assert "meter_baseline" not in printed


def test_the_command_runs_experiment_1_with_another_window_and_still_compares(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "exp1"
    argv = ("--out", str(out), "--duration", "2", "--warmup", "1", "--dctcp-min-cwnd", "1")
    assert run_cli("paper-exp1", *argv) == 0
    printed = json.loads(capsys.readouterr().out)
    written = json.loads((out / "summary.json").read_text())
    assert {k: v for k, v in printed.items() if k != "files"} == written
    assert written["dctcp_min_cwnd"] == 1
    runs = written["dctcp_min_cwnd_comparison"]["runs"]
    assert [(r["min_cwnd"], r["this_run"], r["linux_default"]) for r in runs] == [
        (1, True, False),
        (2, False, True),
    ]
    assert runs[0]["vq_delay_p50_ms"] == written["slices"][0]["vq_delay_ms"]["p50_ms"]


@pytest.mark.parametrize(
    "argv",
    [["--sample", "0"], ["--duration", "0.5", "--sample", "1"]],
)
def test_the_command_refuses_impossible_timings(tmp_path: Path, argv: list[str]) -> None:
    with pytest.raises(CliError):
        run_cli("paper-exp1", "--out", str(tmp_path), *argv)


@pytest.mark.parametrize("window", ["0", "1.5", "10001"])
def test_the_command_refuses_a_window_below_one_packet(
    tmp_path: Path, window: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        run_cli("paper-exp1", "--out", str(tmp_path), "--dctcp-min-cwnd", window)
    assert "--dctcp-min-cwnd" in capsys.readouterr().err


def test_a_run_refuses_a_window_below_one_packet() -> None:
    with pytest.raises(ValueError, match="at least 1 packet"):
        run(EXPERIMENTS["paper-exp1"], duration_s=1, warmup_s=0, dctcp_min_cwnd=0)


def test_slices_read_over_p4runtime_are_the_switch_counters() -> None:
    """The experiment's path: the portal's adapter deploys, then reads each slice's 21 cells;
    they are the emulator's own counter values. A refused entry stops the deployment."""
    experiment = EXPERIMENTS["paper-exp3"]
    model = PacketModel(Profile(tuple(s.traffic for s in experiment.slices)), clock=Clock.MANUAL)
    entries = dp.dataplane_entries([s.slice_ for s in experiment.slices], experiment.routes)
    with EmulatorServer("127.0.0.1:0", model=model) as server:
        session = open_session(server.address)
        try:
            deploy(session, entries)
            model.advance(1.0)
            readings = read_slices(session, [1, 2, 3])
            state = server.service.state
            assert state is not None
            arrays = {i.name: state.counters[i.id] for i in state.program.counters.values()}
            for dp_sid, reading in readings.items():
                forwarded, hist = arrays[dp.FORWARDED], arrays[dp.VQ_DELAY_HIST]
                assert reading.forwarded.packets == forwarded.packets[dp_sid] > 0
                assert reading.forwarded.bytes == forwarded.bytes[dp_sid]
                cells = hist.packets[dp_sid * 8 : dp_sid * 8 + 8].tolist()
                assert list(reading.vq_delay_hist) == cells
            with pytest.raises(DeployError, match="1 entries refused; first: .*ALREADY_EXISTS"):
                deploy(session, [*entries, entries[0]])
        finally:
            session.close()
