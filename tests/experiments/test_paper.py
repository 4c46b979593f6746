"""The paper's experiments 1 and 3, shortened, through the real P4Runtime path."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from sliceportal.cli import CliError
from sliceportal.cli import experiment as experiment_cli
from sliceportal.domain import dataplane as dp
from sliceportal.emulator.model.engine import compile_kernel
from sliceportal.emulator.model.switch_model import Clock, PacketModel
from sliceportal.emulator.model.traffic import Profile
from sliceportal.emulator.server import EmulatorServer
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
    microseconds on the uncongested 1 Gbit/s link."""
    assert exp1.passed, [c for c in exp1.checks if not c.passed]
    r = by_label(exp1)
    assert 0.95 * 48 * MBPS < r["DC"].throughput_bps <= 48.05 * MBPS
    assert 9 * MBPS < r["Enterprise"].throughput_bps < 12 * MBPS  # "slightly above 10 Mbps"
    assert 0.85 * 240 * MBPS < r["Peering"].throughput_bps <= 240.3 * MBPS
    assert 3 < r["DC"].vq.mean_ms < 10  # DCTCP holds the virtual queue near its 5 ms step
    assert r["DC"].vq_drop_ratio < 0.01 < r["DC"].mark_ratio  # marked, hardly dropped
    for result in r.values():
        assert result.real.p99_ms < 0.2
        assert result.real_drop_ratio == 0


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


@pytest.mark.parametrize(
    "argv",
    [["--sample", "0"], ["--duration", "0.5", "--sample", "1"]],
)
def test_the_command_refuses_impossible_timings(tmp_path: Path, argv: list[str]) -> None:
    with pytest.raises(CliError):
        run_cli("paper-exp1", "--out", str(tmp_path), *argv)


def test_slices_read_over_p4runtime_are_the_switch_counters() -> None:
    """The experiment's path: the portal's adapter deploys, then reads each slice's 20 cells;
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
