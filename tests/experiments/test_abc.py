"""`sliceportal experiment abc-fig4/5/6`: P4-ABC's Figs. 4-6 in a slice, shortened to 20 s.

The ABC claims hold only because the virtual queue gives back the time of a packet ABC drops
(vq_return): before that, under sustained overload the dropped packets alone held the queue at
its burst limit, above every T_drop, and ABC dropped everything.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from experiments.test_paper import run_cli
from sliceportal.cli import CliError
from sliceportal.domain.abc import AbcConfig, AggregateKey
from sliceportal.experiments import abc

ROW_KEYS = {"scheme", "client0_offered_bps", "client0_flows", "client0_bps", "client1_bps"}
DURATION, WARMUP = "20", "5"
MBPS = 1e6

Result = tuple[int, dict[str, object], Path]


def _run(name: str, factory: pytest.TempPathFactory) -> Result:
    out = factory.mktemp("abc") / name
    status = run_cli(name, "--out", str(out), "--duration", DURATION, "--warmup", WARMUP)
    return status, json.loads((out / "summary.json").read_text()), out


@pytest.fixture(scope="module")
def fig4(tmp_path_factory: pytest.TempPathFactory) -> Result:
    return _run("abc-fig4", tmp_path_factory)


@pytest.fixture(scope="module")
def fig5(tmp_path_factory: pytest.TempPathFactory) -> Result:
    return _run("abc-fig5", tmp_path_factory)


@pytest.fixture(scope="module")
def fig6(tmp_path_factory: pytest.TempPathFactory) -> Result:
    return _run("abc-fig6", tmp_path_factory)


def rows_of(doc: dict[str, object]) -> dict[tuple[str, float | None, int], dict[str, float]]:
    rows = doc["rows"]
    assert isinstance(rows, list)
    return {(r["scheme"], r["client0_offered_bps"], r["client0_flows"]): r for r in rows}


def assert_passed(result: Result, scheme: str | None = None) -> None:
    """Every check passed (``scheme``: every check about that scheme's rows)."""
    status, doc, _ = result
    checks = doc["checks"]
    assert isinstance(checks, list)
    if scheme is not None:
        checks = [c for c in checks if c["name"].startswith(f"{scheme}: ")]
        assert checks
    failed = [c for c in checks if not c["passed"]]
    assert not failed, failed
    if scheme is None:
        assert status == 0 and doc["passed"] is True


def test_fig4_tail_drop_rewards_the_heavy_cbr_client(fig4: Result) -> None:
    assert_passed(fig4, "tail drop")
    rows = rows_of(fig4[1])
    for rate in (50e6, 80e6):
        tail = rows[("tail_drop", rate, 1)]
        assert tail["client0_bps"] > tail["client1_bps"]


def test_fig4_abc_protects_the_light_cbr_client(fig4: Result) -> None:
    assert_passed(fig4)
    rows = rows_of(fig4[1])
    for rate in (50e6, 80e6):
        aqm = rows[("abc", rate, 1)]
        assert aqm["client0_bps"] < aqm["client1_bps"]  # ABC does not reward the heavy sender
        assert aqm["client1_bps"] > 0.9 * abc.CLIENT1_CBR_BPS


def test_fig5_tail_drop_shares_per_flow(fig5: Result) -> None:
    assert_passed(fig5, "tail drop")
    tail = rows_of(fig5[1])[("tail_drop", None, 8)]
    assert tail["client1_bps"] < 0.2 * (tail["client0_bps"] + tail["client1_bps"])


def test_fig5_abc_shares_per_client_not_per_flow(fig5: Result) -> None:
    assert_passed(fig5)
    aqm = rows_of(fig5[1])[("abc", None, 8)]
    assert aqm["client1_bps"] > 0.45 * (aqm["client0_bps"] + aqm["client1_bps"])


def test_fig6_tail_drop_starves_the_tcp_client(fig6: Result) -> None:
    assert_passed(fig6, "tail drop")
    assert rows_of(fig6[1])[("tail_drop", 80e6, 1)]["client1_bps"] < 2 * MBPS


def test_fig6_abc_keeps_the_tcp_client_alive_against_cbr(fig6: Result) -> None:
    assert_passed(fig6)
    assert rows_of(fig6[1])[("abc", 80e6, 1)]["client1_bps"] > 20 * MBPS


@pytest.mark.parametrize("name", abc.NAMES)
def test_the_summary_has_the_contracts_rows_and_the_papers_figures(
    name: str, fig4: Result, fig5: Result, fig6: Result
) -> None:
    _, doc, out = {"abc-fig4": fig4, "abc-fig5": fig5, "abc-fig6": fig6}[name]
    figure = abc.FIGURES[name]
    assert doc["experiment"] == name
    rows = doc["rows"]
    assert isinstance(rows, list) and len(rows) == 2 * len(figure.points)
    assert all(set(r) == ROW_KEYS for r in rows)
    keys = [(r["scheme"], r["client0_offered_bps"], r["client0_flows"]) for r in rows]
    if figure.sweeps_rate:
        expected = [(s, mbps * MBPS, 1) for s in ("tail_drop", "abc") for mbps in range(10, 90, 10)]
    else:
        expected = [(s, None, n) for s in ("tail_drop", "abc") for n in (1, 2, 4, 8)]
    assert keys == expected
    paper = doc["paper"]
    assert isinstance(paper, list) and paper
    assert all(set(p) == ROW_KEYS | {"basis"} and p["basis"] for p in paper)
    assert {p.name for p in out.iterdir()} == {"rows.csv", "summary.json", "goodput.png"}
    assert (out / "goodput.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "rows.csv").read_text().splitlines()[0] == (
        "scheme,client0_offered_bps,client0_flows,client0_bps,client1_bps"
    )


def test_the_papers_figures_are_the_texts() -> None:
    fig5 = {(p.scheme, p.client0_flows): p for p in abc.PAPER["abc-fig5"]}
    assert fig5[("abc", 8)].client1_bps == 25 * MBPS  # "in the order of 25 Mb/s"
    fig6 = {(p.scheme, p.client0_offered_bps): p for p in abc.PAPER["abc-fig6"]}
    assert fig6[("abc", 80e6)].client0_bps == 32 * MBPS  # "only up to 32 Mb/s"
    assert fig6[("tail_drop", 80e6)].client1_bps == 0.0  # "hardly any goodput"


def test_the_counters_split_exactly_into_the_two_clients() -> None:
    assert abc.split(15, 10 * 1490 + 5 * 1489, (1490, 1489)) == (10, 5)
    assert abc.split(7, 3 * 1490 + 4 * 1513, (1490, 1513)) == (3, 4)
    with pytest.raises(ValueError, match="no mix"):
        abc.split(10, 10 * 1490 + 1, (1490, 1489))


def test_each_client_has_a_meter_of_its_own() -> None:
    figure = abc.FIGURES["abc-fig4"]
    slices = [abc.abc_slice(abc.dp.Scheme.ABC, i) for i in range(len(figure.points))]
    abc._check_aggregates(slices)
    one_aggregate = dataclasses.replace(
        slices[0], abc=AbcConfig(key=AggregateKey.SOURCE_PREFIX, prefix_length=0)
    )  # every source in one aggregate: the check refuses it
    with pytest.raises(ValueError, match="share an ABC meter"):
        abc._check_aggregates([one_aggregate])


def test_a_claim_that_fails_makes_the_run_fail() -> None:
    # ABC that shares like tail drop: in proportion to the offered rates.
    rows = [
        abc.Row(scheme.value, r, 1, 48e6 * r / (r + 40e6), 48e6 * 40e6 / (r + 40e6))
        for scheme in abc.SCHEMES
        for r in abc.CBR_RATES_BPS
    ]
    failed = {c.name for c in abc.checks("abc-fig4", rows) if not c.passed}
    assert "abc: a heavier client 0 gets clearly less than client 1" in failed
    assert "tail drop: goodput near proportion to the offered rates" not in failed


def test_the_command_refuses_a_duration_of_zero(tmp_path: Path) -> None:
    with pytest.raises(CliError, match="--duration"):
        run_cli("abc-fig5", "--out", str(tmp_path), "--duration", "0")
