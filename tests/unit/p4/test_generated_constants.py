"""The P4, Python and TypeScript constants are generated from p4/constants.json and up to date."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from sliceportal.domain import p4constants

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "gen_p4_constants.py"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_p4_constants", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_files_are_up_to_date() -> None:
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr


def test_python_constants_equal_the_json() -> None:
    source = json.loads((ROOT / "p4" / "constants.json").read_text())
    for entry in source["constants"]:
        value = entry["value"]
        expected = tuple(value) if isinstance(value, list) else value
        assert getattr(p4constants, entry["name"]) == expected, entry["name"]


def test_derived_constants() -> None:
    assert p4constants.HIST_BUCKETS == 8  # slice_monitor.p4's delay_bucket compares 7 edges
    assert p4constants.HIST_BEST_EFFORT_TARGET_VQ == (
        p4constants.HIST_BEST_EFFORT_TARGET_US * 1000 * 2**p4constants.VQ_FRAC_BITS
    )
    assert p4constants.HIST_BEST_EFFORT_TARGET_VQ < 2**p4constants.VQ_PARAM_WIDTH
    assert p4constants.HIST_SIZE == p4constants.MAX_SLICES * p4constants.HIST_BUCKETS
    assert p4constants.VQ_UNITS_PER_TICK == p4constants.TIMESTAMP_TICK_NS * 2**16
    assert p4constants.MAX_PRIORITY == 7
    # The cap drains the largest storable delay, and is the smallest tick count that does.
    cap = p4constants.VQ_ELAPSED_CAP_TICKS
    assert cap * p4constants.VQ_UNITS_PER_TICK >= 2**p4constants.VQ_PARAM_WIDTH
    assert (cap - 1) * p4constants.VQ_UNITS_PER_TICK < 2**p4constants.VQ_PARAM_WIDTH


def test_p4_and_typescript_carry_the_same_values() -> None:
    p4 = (ROOT / "p4" / "include" / "shared" / "constants.p4").read_text()
    ts = (ROOT / "frontend" / "src" / "config" / "p4-constants.ts").read_text()
    names = (
        "MAX_SLICES",
        "HIST_SIZE",
        "VQ_UNITS_PER_TICK",
        "BEST_EFFORT_DP_SID",
        "HIST_BEST_EFFORT_TARGET_US",
        "HIST_BEST_EFFORT_TARGET_VQ",
    )
    for name in names:
        value = getattr(p4constants, name)
        assert f"#define {name} {value}\n" in p4
        ts_value = ts.split(f"export const {name} = ", 1)[1].split(";", 1)[0]
        assert int(ts_value.replace("_", "")) == value
    assert "HIST_EDGE_" not in p4 and "HIST_BUCKET_EDGES_US" not in ts  # edges are per slice


@pytest.mark.parametrize(
    ("name", "value", "why"),
    [
        ("HIST_BUCKET_BITS", 4, "exactly 7 edges"),
        ("HIST_BEST_EFFORT_TARGET_US", 0, "HIST_BEST_EFFORT_TARGET_US must be positive"),
        ("HIST_BEST_EFFORT_TARGET_US", 5_000_000, "HIST_BEST_EFFORT_TARGET_US must be positive"),
        ("MAX_SLICES", 70000, "DP_SID_WIDTH"),
        ("RATE_MIN_BPS", 100000, "BYTE_TIME_WIDTH"),
        ("BURST_LIMIT_MAX_NS", 5_000_000_000, "VQ_PARAM_WIDTH"),
        ("BYTE_TIME_WIDTH", 40, "transmission time can overflow"),
        ("ABC_SLOT_BITS", 21, "meter index exceeds bit<32>"),
        ("ABC_DECAY_WIDTH", 31, "a factor of 1.0 does not fit ABC_DECAY_WIDTH"),
        ("ABC_STATE_WIDTH", 97, "S x f can overflow bit<128>"),
        ("ABC_MEMORY_WIDTH", 20, "a memory does not fit ABC_MEMORY_WIDTH"),
        ("ABC_COUNT_WIDTH", 48, "the count exceeds ABC_COUNT_WIDTH"),
        ("ABC_ACTIVITY_WIDTH", 14, "ABC_ACTIVITY_MAX does not fit ABC_ACTIVITY_WIDTH"),
        ("ABC_REFERENCE_RATE_MIN_BPS", 0, "ABC_REFERENCE_RATE_MIN_BPS must be positive"),
        ("ABC_GAMMA_WIDTH", 48, "gamma does not fit ABC_GAMMA_WIDTH"),
        ("ABC_AVERAGE_EXTRA_BITS", 50, "A_avg does not fit ABC_STATE_WIDTH"),
    ],
)
def test_generator_refuses_unsafe_constants(
    tmp_path: Path, name: str, value: object, why: str
) -> None:
    source = json.loads((ROOT / "p4" / "constants.json").read_text())
    for entry in source["constants"]:
        if entry["name"] == name:
            entry["value"] = value
    path = tmp_path / "constants.json"
    path.write_text(json.dumps(source))
    with pytest.raises(SystemExit, match=why):
        _generator().load(path)
