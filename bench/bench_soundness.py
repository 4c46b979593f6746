"""How tight the default (netcalc) bound is: measured worst delay / bound over random links
driven adversarially in the emulator (`sliceportal.experiments.soundness`).

Prints the distribution of measured/bound (1.0 = the bound is reached; above 1 would be a
violation, which `tests/experiments/test_soundness.py` forbids) and the same for the paper's
eq. (3), which the same traffic exceeds.

Run: ``.venv/bin/python bench/bench_soundness.py [LINKS]``
"""

from __future__ import annotations

import sys
import time

import numpy as np

from sliceportal.emulator.model.engine import compile_kernel
from sliceportal.experiments.soundness import check, tightness


def main() -> None:
    links = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    compile_kernel()
    started = time.perf_counter()
    results = check(links, seed=7)
    elapsed = time.perf_counter() - started
    figures = tightness(results)
    print(f"soundness links: {figures['links']}, slices {figures['slices']}, {elapsed:.1f} s")
    print(f"soundness over bound: {figures['over_bound']}")
    print(
        "soundness measured/bound: "
        f"min {figures['ratio_min']:.3f}, p10 {figures['ratio_p10']:.3f}, "
        f"median {figures['ratio_median']:.3f}, p90 {figures['ratio_p90']:.3f}, "
        f"max {figures['ratio_max']:.4f}"
    )
    paper = np.array([r.measured_s / r.paper_bound_s for r in results if r.paper_bound_s])
    print(
        f"paper eq. (3) exceeded: {figures['over_paper_bound']} of {len(paper)} slices, "
        f"measured/paper median {np.median(paper):.3f}, max {paper.max():.2f}"
    )


if __name__ == "__main__":
    main()
