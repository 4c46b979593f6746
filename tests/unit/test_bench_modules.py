"""Every benchmark of `make bench` still imports: `make test` does not run them (they time
things), so a renamed module would otherwise surface only when someone benchmarks. Each is
loaded in a fresh interpreter, as `make bench` runs it (some put tests/ folders on the path)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

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
