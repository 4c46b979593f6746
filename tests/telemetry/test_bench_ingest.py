"""`bench/bench_ingest.py` runs end to end on a small fleet for a second: ingest, history
during the ingest, the downsampling half-way and the breakdown all print their figures (which
are not checked: `make bench` is where they are read)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_ingest.py"


def test_the_ingest_benchmark_runs(postgres_server_url: str) -> None:
    result = subprocess.run(
        [
            sys.executable,
            str(BENCH),
            "--seconds",
            "1",
            "--switches",
            "2",
            "--slices",
            "64",
            "--breakdown-polls",
            "2",
        ],  # fmt: skip
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=os.environ | {"BENCH_POSTGRES": postgres_server_url},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    for line in (
        "ingest: ",
        "history, idle: p50",
        "history, during ingest: p50",
        "downsampled half-way",
        "CPU per sample",
        "partitioned (0020): ",
    ):
        assert line in result.stdout, result.stdout
