"""`sliceportal experiment codel-table1`: P4-CoDel's Table I inside a slice, shortened to 2 s."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiments.test_paper import run_cli
from sliceportal.cli import CliError
from sliceportal.experiments import codel

ROW_KEYS = {"scheme", "flows", "throughput_bps", "loss_pct", "mean_delay_ms", "p99_delay_ms"}


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, object], Path]:
    out = tmp_path_factory.mktemp("codel") / "table1"
    status = run_cli("codel-table1", "--out", str(out), "--duration", "2")
    return status, json.loads((out / "summary.json").read_text()), out


def test_the_papers_claims_hold_and_codel_removes_the_bufferbloat(
    table: tuple[int, dict[str, object], Path],
) -> None:
    status, doc, _ = table
    failed = [c for c in doc["checks"] if not c["passed"]]  # type: ignore[attr-defined]
    assert status == 0 and doc["passed"] is True, failed
    rows = {(r["scheme"], r["flows"]): r for r in doc["rows"]}  # type: ignore[attr-defined]
    for flows in codel.FLOWS:
        tail, aqm = rows[("tail_drop", flows)], rows[("codel", flows)]
        assert tail["mean_delay_ms"] > 50  # the queue fills towards its 100 ms burst limit
        assert aqm["mean_delay_ms"] < 10 and aqm["throughput_bps"] > 0.9 * codel.SLICE_RATE_BPS


def test_the_summary_has_the_contracts_rows_and_the_papers_table(
    table: tuple[int, dict[str, object], Path],
) -> None:
    _, doc, out = table
    rows = doc["rows"]
    assert isinstance(rows, list) and len(rows) == 6
    assert all(set(r) == ROW_KEYS for r in rows)
    assert [(r["scheme"], r["flows"]) for r in rows] == [
        (scheme, flows) for scheme in ("tail_drop", "codel") for flows in (1, 2, 3)
    ]
    paper = doc["paper"]
    assert isinstance(paper, list)
    assert {(p["target"], p["flows"], p["loss_pct"], p["mean_delay_ms"]) for p in paper} >= {
        ("P4-ASIC", 1, 0.16, 5.59), ("P4-ASIC", 3, 0.44, 8.17), ("Linux", 2, 0.17, 6.5)
    }  # fmt: skip
    assert {p.name for p in out.iterdir()} == {"rows.csv", "summary.json", "delay.png"}
    assert (out / "delay.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "rows.csv").read_text().splitlines()[0] == (
        "scheme,flows,throughput_bps,loss_pct,mean_delay_ms,p99_delay_ms"
    )


def test_a_claim_that_fails_makes_the_run_fail() -> None:
    rows = [
        codel.Row(
            scheme.value, flows, 1e8, 0.1 * flows, 80.0, 99.0
        )  # codel as bloated as tail drop
        for scheme in codel.SCHEMES
        for flows in codel.FLOWS
    ]
    failed = {c.name for c in codel.checks(rows) if not c.passed}
    assert "codel, 1 flow(s): mean delay near the 5 ms target" in failed
    assert "1 flow(s): tail drop's bufferbloat removed" in failed


def test_the_command_refuses_a_duration_of_zero(tmp_path: Path) -> None:
    with pytest.raises(CliError, match="--duration"):
        run_cli("codel-table1", "--out", str(tmp_path), "--duration", "0")
