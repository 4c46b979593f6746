"""Every benchmark of `make bench` still imports, and the slices they create are ones the API
accepts: `make test` does not run them (they time things), so a renamed module or a tightened
limit would otherwise surface only when someone benchmarks. Each is loaded in a fresh
interpreter, as `make bench` runs it (some put tests/ folders on the path)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from sliceportal.domain import dataplane
from sliceportal.schemas.slices import SliceCreate

BENCH = Path(__file__).resolve().parents[2] / "bench"
LOAD = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("benchmark", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
assert callable(getattr(module, "main", None)), "no main()"
"""


@pytest.mark.parametrize("path", sorted(BENCH.glob("bench_*.py")), ids=lambda p: p.stem)
def test_the_benchmark_imports(path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", LOAD, str(path)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr[-2000:]


def _bench_module(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"bench_{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["api", "controlplane"])
def test_the_slices_a_benchmark_creates_pass_the_api_s_validation(name: str) -> None:
    """A benchmark whose slices the API refuses (a burst that cannot hold a frame, a prefix
    past 10.255) fails only when someone benchmarks: check its bodies as the API would."""
    make_body = _bench_module(name).slice_body
    for n in (1, 255, 256, 4095):
        body = SliceCreate.model_validate(make_body(n, 1))
        dataplane.slice_policy(
            body.priority,
            body.rate_bps,
            body.burst_limit_s,
            body.scheme,
            body.marking_threshold_s,
        )
