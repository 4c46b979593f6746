"""The `sliceportal analyze | min-capacity | plan-priorities` contract: JSON out, one-line errors.

Every case runs in-process (fast); the installed console script is also run as a subprocess
for the happy paths and for every bad input, since that is what other tools call.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from sliceportal.cli.main import main

SCRIPT = Path(sys.executable).parent / "sliceportal"

PAPER = {
    "capacity_bps": 300e6,
    "slices": [
        {"name": "DC", "rate_bps": 48e6, "priority": 7, "burst_limit_s": 0.02},
        {"name": "Enterprise", "rate_bps": 12e6, "priority": 6, "burst_limit_s": 0.01},
        {"name": "Peering", "rate_bps": 240e6, "priority": 5, "burst_limit_s": 0.03},
    ],
}


def _with_slice(**fields: Any) -> str:
    base = {"name": "a", "rate_bps": 1e6, "priority": 1, "burst_limit_s": 0.01}
    doc = {"capacity_bps": 1e9, "slices": [base | fields]}
    return json.dumps(doc)


# (command, stdin text, expected stderr line after "sliceportal: ")
BAD_INPUTS: list[tuple[str, str, str]] = [
    ("analyze", '{"capacity_bps": 1e9, "slices": [{"name": "a", "priority": 1}]}',
     "slices[0].rate_bps: is required"),
    ("analyze", '{"capacity_bps": "fast", "slices": []}', "capacity_bps: must be a number"),
    ("analyze", _with_slice(rate_bps=-1), "slices[0].rate_bps: must be greater than 0"),
    ("analyze", _with_slice(rate_bps=0), "slices[0].rate_bps: must be greater than 0"),
    ("analyze",
     '{"capacity_bps": 1e9, "slices": [{"name": "a", "rate_bps": NaN, "priority": 1}]}',
     "slices[0].rate_bps: must be a finite number"),
    ("analyze", '{"capacity_bps": Infinity, "slices": []}',
     "capacity_bps: must be a finite number"),
    ("analyze", '{"capacity_bps": 1e999, "slices": []}', "capacity_bps: must be a finite number"),
    ("analyze", json.dumps({"capacity_bps": 1e9, "slices": [PAPER["slices"][0]] * 2}),
     "slices[1].name: duplicate name 'DC' (already used by slices[0])"),
    ("analyze", _with_slice(priority=9), "slices[0].priority: must be an integer from 1 to 7"),
    ("analyze", _with_slice(priority=0), "slices[0].priority: must be an integer from 1 to 7"),
    ("analyze", _with_slice(priority=1.5), "slices[0].priority: must be an integer from 1 to 7"),
    ("analyze", _with_slice(priority=True), "slices[0].priority: must be an integer from 1 to 7"),
    ("analyze", _with_slice(burst_bytes=10),
     "slices[0].burst_bytes: disagrees with slices[0].burst_limit_s: rate × burst_limit_s / 8 "
     "is 1250 bytes, not 10; give one of the two"),
    ("analyze", '{"capacity_bps": 1e9, "frame_overhead_bytes": 65, "slices": []}',
     "frame_overhead_bytes: must be an integer from 0 to 64"),
    ("analyze", "{capacity_bps: 1}",
     "stdin: not valid JSON: Expecting property name enclosed in double quotes (line 1, column 2)"),
    ("analyze", "", "stdin: not valid JSON: Expecting value (line 1, column 1)"),
    ("analyze", '{"capacity_bps": 1e9, "slices": [], "links": []}',
     "links: unknown field (expected one of capacity_bps, mtu_bytes, frame_overhead_bytes, "
     "slices)"),
    ("analyze", _with_slice(colour="red"),
     "slices[0].colour: unknown field (expected one of name, rate_bps, priority, burst_limit_s, "
     "burst_bytes, delay_target_s, max_packet_bytes, scheme, marking_threshold_s, codel, abc)"),
    ("analyze", _with_slice(scheme="red", burst_limit_s=0.05),
     "slices[0].scheme: must be one of ['tail_drop', 'ecn_step', 'meter', 'codel', 'abc']"),
    ("analyze",
     _with_slice(scheme="codel", burst_limit_s=0.05, delay_target_s=0.02, codel={"target_s": 0.03}),
     "slices[0].codel.target_s: must be at most the delay target, which it keeps the slice to"),
    ("analyze", _with_slice(scheme="codel", burst_limit_s=0.05, codel={"target_s": 0.05}),
     "slices[0].codel.target_s: must be below burst_limit_s, else CoDel never acts"),
    ("analyze", _with_slice(scheme="codel", burst_limit_s=0.05, codel={"interval": 0.1}),
     "slices[0].codel.interval: unknown field (expected one of target_s, interval_s, ecn_mark)"),
    ("analyze", _with_slice(scheme="codel", burst_limit_s=0.05, codel={"ecn_mark": 1}),
     "slices[0].codel.ecn_mark: must be a boolean, got 1"),
    ("analyze", _with_slice(burst_limit_s=0.05, codel={"target_s": 0.001}),
     "slices[0].codel: tail_drop runs no CoDel"),
    ("analyze", _with_slice(scheme="ecn_step", burst_limit_s=0.05),
     "slices[0].marking_threshold_s: ecn_step needs a threshold"),
    ("analyze", _with_slice(scheme="ecn_step", burst_limit_s=0.05, marking_threshold_s=0.05),
     "slices[0].marking_threshold_s: must be below burst_limit_s, else nothing is marked"),
    ("analyze", '{"capacity_bps": 1e9, "mtu_bytes": 0, "slices": []}',
     "mtu_bytes: must be an integer from 1 to 1000000"),
    ("analyze", '{"capacity_bps": 1e9, "capacity_bps": 2e9, "slices": []}',
     "stdin: not valid JSON: duplicate key 'capacity_bps' in an object"),
    ("analyze", "[1, 2]", "input: must be a JSON object with capacity_bps and slices"),
    ("analyze", '{"slices": []}', "capacity_bps: is required"),
    ("analyze", "[" * 100_000, "stdin: not valid JSON: nested too deeply"),
    ("min-capacity", '{"slices": []}', "slices: must contain at least one slice"),
    ("plan-priorities", _with_slice(burst_limit_s=None, burst_bytes=10),
     "slices[0].delay_target_s: is required when only burst_bytes is given"),
]  # fmt: skip


def _run(argv: list[str], stdin: str, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
    return main(argv)


def _analyze_file(tmp_path: Path, doc: object) -> Path:
    path = tmp_path / "link.json"
    path.write_text(json.dumps(doc))
    return path


def test_analyze_prints_every_slice_in_input_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(_analyze_file(tmp_path, PAPER))
    assert main(["analyze", path]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert list(doc) == ["model", "capacity_bps", "admissible", "total_rate_bps", "slices"]
    assert doc["model"] == "netcalc" and doc["admissible"] is False  # the sound bound, by default
    assert [s["name"] for s in doc["slices"]] == ["DC", "Enterprise", "Peering"]
    assert doc["slices"][2]["meets_target"] is False
    netcalc = doc["slices"][2]["worst_case_delay_s"]
    assert main(["analyze", "--model", "harkous", path]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["model"] == "harkous"
    assert doc["slices"][2]["worst_case_delay_s"] == pytest.approx(0.0336762, rel=1e-5)
    assert netcalc > doc["slices"][2]["worst_case_delay_s"]


def test_a_slices_scheme_is_checked_and_leaves_the_bounds_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["analyze", str(_analyze_file(tmp_path, PAPER))]) == 0
    plain = json.loads(capsys.readouterr().out)
    schemes = [
        {"scheme": "ecn_step", "marking_threshold_s": 0.005},
        {"scheme": "codel", "codel": {"target_s": 0.002, "interval_s": 0.05, "ecn_mark": True}},
        {"scheme": "meter"},
    ]
    doc = dict(PAPER, slices=[s | m for s, m in zip(PAPER["slices"], schemes, strict=True)])
    assert main(["analyze", str(_analyze_file(tmp_path, doc))]) == 0
    assert json.loads(capsys.readouterr().out) == plain


def test_analyze_prints_null_for_unbounded_delays(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = dict(PAPER, capacity_bps=50e6)
    assert _run(["analyze", "--model", "netcalc", "-"], json.dumps(doc), monkeypatch) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["model"] == "netcalc"
    assert [s["worst_case_delay_s"] for s in out["slices"]][1:] == [None, None]
    assert out["slices"][2]["slack_s"] is None


def test_min_capacity_ignores_the_capacity(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = {"slices": PAPER["slices"]}
    assert _run(["min-capacity", "--model", "harkous", "-"], json.dumps(doc), monkeypatch) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out) == ["model", "min_capacity_bps"]
    assert out["min_capacity_bps"] == pytest.approx(330.0e6, abs=0.1e6)  # the paper's Table III
    assert _run(["min-capacity", "-"], json.dumps(doc), monkeypatch) == 0
    netcalc = json.loads(capsys.readouterr().out)
    assert netcalc["model"] == "netcalc" and netcalc["min_capacity_bps"] > 330.1e6


def test_a_line_rate_capacity_needs_more(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """frame_overhead_bytes 24: the capacity is the line rate, so every frame costs 24 bytes
    more on the wire and the same slices need a larger capacity."""
    needed = []
    for overhead in (0, 24):
        doc = {"frame_overhead_bytes": overhead, "slices": PAPER["slices"]}
        assert _run(["min-capacity", "-"], json.dumps(doc), monkeypatch) == 0
        needed.append(json.loads(capsys.readouterr().out)["min_capacity_bps"])
    assert needed[1] > needed[0] * 1.3


def test_min_capacity_prints_null_when_none_works(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    slices = [
        {"name": "a", "rate_bps": 1e6, "priority": 7, "burst_bytes": 10, "delay_target_s": 1},
        {"name": "b", "rate_bps": 1e6, "priority": 1, "burst_limit_s": 0},
    ]
    assert _run(["min-capacity", "-"], json.dumps({"slices": slices}), monkeypatch) == 0
    assert json.loads(capsys.readouterr().out) == {"model": "netcalc", "min_capacity_bps": None}


def test_plan_priorities(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = dict(PAPER, capacity_bps=400e6)
    assert _run(["plan-priorities", "--levels", "2", "-"], json.dumps(doc), monkeypatch) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["model"] == "netcalc" and out["feasible"] is True and out["exhaustive"] is True
    assert out["priorities"] == {"DC": 7, "Enterprise": 7, "Peering": 6}
    doc = dict(PAPER, capacity_bps=330e6)
    harkous = ["plan-priorities", "--model", "harkous", "--levels", "2", "-"]
    assert _run(harkous, json.dumps(doc), monkeypatch) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["model"] == "harkous" and out["feasible"] is True
    assert out["priorities"] == {"DC": 7, "Enterprise": 7, "Peering": 6}
    assert _run(["plan-priorities", "--levels", "1", "-"], json.dumps(doc), monkeypatch) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["feasible"], out["priorities"], out["exhaustive"]) == (False, {}, True)
    assert out["reason"].startswith("no plan exists")


@pytest.mark.parametrize(("command", "stdin", "message"), BAD_INPUTS)
def test_bad_input_is_one_line_naming_the_field(
    command: str,
    stdin: str,
    message: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert _run([command, "-"], stdin, monkeypatch) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"sliceportal: {message}\n"


def test_unreadable_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "missing.json"
    assert main(["analyze", str(missing)]) == 2
    assert (
        capsys.readouterr().err
        == f"sliceportal: {missing}: cannot read: No such file or directory\n"
    )
    assert main(["analyze", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"sliceportal: {tmp_path}: cannot read: Is a directory\n"
    binary = tmp_path / "binary.json"
    binary.write_bytes(b'{"a": "\xff"}')
    assert main(["analyze", str(binary)]) == 2
    assert (
        capsys.readouterr().err == f"sliceportal: {binary}: not UTF-8 text (bad byte at offset 7)\n"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["plan-priorities", "--levels", "8", "-"],
            "argument --levels: must be an integer from 1 to 7",
        ),
        (["analyze", "--model", "best", "-"], "argument --model: invalid choice: 'best'"),
        (["analyze"], "the following arguments are required: FILE"),
        ([], "the following arguments are required: COMMAND"),
    ],
)
def test_usage_errors_are_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and err.startswith("sliceportal")


def _script(argv: list[str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *argv], input=stdin, capture_output=True, text=True, timeout=120
    )


def test_installed_script_happy_paths(tmp_path: Path) -> None:
    path = _analyze_file(tmp_path, PAPER)
    with ThreadPoolExecutor(max_workers=3) as pool:
        analyzed, capacity, plan = pool.map(
            lambda argv: _script(argv, json.dumps(PAPER)),
            [
                ["analyze", str(path)],
                ["min-capacity", "-"],
                ["plan-priorities", "-", "--model", "netcalc"],
            ],
        )
    for result in (analyzed, capacity, plan):
        assert (result.returncode, result.stderr) == (0, "")
    assert json.loads(analyzed.stdout)["total_rate_bps"] == 300e6
    assert json.loads(capacity.stdout)["model"] == "netcalc"
    assert json.loads(capacity.stdout)["min_capacity_bps"] > 330.1e6
    assert json.loads(plan.stdout)["model"] == "netcalc"


def test_installed_script_reports_bad_input_without_a_traceback(tmp_path: Path) -> None:
    # A dozen of the cases above (every other one), plus a missing file and a usage error.
    cases = [([command, "-"], stdin, message) for command, stdin, message in BAD_INPUTS[::2]]
    cases.append((["analyze", str(tmp_path / "missing.json")], "", "cannot read"))
    cases.append((["plan-priorities", "--levels", "0", "-"], "{}", "argument --levels"))
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda case: _script(case[0], case[1]), cases))
    for (argv, _, message), result in zip(cases, results, strict=True):
        assert result.returncode == 2, (argv, result.stderr)
        assert result.stdout == ""
        assert result.stderr.count("\n") == 1, result.stderr
        assert result.stderr.startswith("sliceportal") and message in result.stderr
