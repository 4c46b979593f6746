"""The default bound against adversarial packets in the emulator (docs/analysis.md, "How the
bound is checked"): hundreds of random links, not one slice may wait longer than its bound."""

from __future__ import annotations

import pytest

from sliceportal.domain import dataplane as dp
from sliceportal.domain.spec import Framing
from sliceportal.emulator.model.engine import compile_kernel
from sliceportal.experiments.soundness import SliceResult, check, tightness

LINKS = 300


@pytest.fixture(scope="module", autouse=True)
def compiled_kernel() -> None:
    compile_kernel()


@pytest.fixture(scope="module")
def results() -> list[SliceResult]:
    return check(LINKS, seed=2026)


def test_no_slice_waits_longer_than_its_default_bound(results: list[SliceResult]) -> None:
    figures = tightness(results)
    print(f"soundness: {figures}")
    assert figures["links"] >= LINKS * 0.95 and figures["slices"] >= 2 * LINKS
    over = [r for r in results if r.measured_s > r.bound_s]
    assert not over, over[:5]


def test_the_adversary_reaches_the_bound(results: list[SliceResult]) -> None:
    """A check whose traffic stays far from the bound would prove nothing: the worst cases
    come within 0.5 % of it, and half the slices within 10 %."""
    figures = tightness(results)
    assert figures["ratio_max"] > 0.995
    assert figures["ratio_median"] > 0.9


def test_the_paper_bound_is_exceeded_on_the_same_traffic(results: list[SliceResult]) -> None:
    """The paper's eq. (3) is not an upper bound: the same runs exceed it for most slices."""
    figures = tightness(results)
    assert figures["over_paper_bound"] > figures["slices"] // 2
    assert figures["paper_ratio_max"] > 2.0


def test_the_check_fails_a_bound_that_forgets_best_effort() -> None:
    """The check has teeth: a bound told that no best-effort frame can block (a 1-byte largest
    frame) is exceeded on the very same traffic."""
    results = check(40, seed=2026, framing=Framing(max_frame_bytes=1))
    assert any(r.measured_s > r.bound_s for r in results)


def test_codel_slices_keep_the_same_bound() -> None:
    """CoDel only drops (or marks) packets the virtual queue took, so its slices wait no longer
    than tail drop's bound; the runs do reach CoDel's drops (1 ms interval)."""
    results = check(60, seed=2027, scheme=dp.Scheme.CODEL)
    figures = tightness(results)
    print(f"soundness with CoDel: {figures}")
    assert figures["slices"] >= 100
    assert not [r for r in results if r.measured_s > r.bound_s]
    assert sum(r.aqm_dropped for r in results) > 0


def test_abc_slices_keep_the_same_bound() -> None:
    """ABC too drops only packets the virtual queue took, and never above the burst limit, so
    its slices wait no longer than tail drop's bound; the runs do reach ABC's drops."""
    results = check(30, seed=2028, scheme=dp.Scheme.ABC)
    figures = tightness(results)
    print(f"soundness with ABC: {figures}")
    assert figures["slices"] >= 50
    assert not [r for r in results if r.measured_s > r.bound_s]
    assert sum(r.aqm_dropped for r in results) > 0
