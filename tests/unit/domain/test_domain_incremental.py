"""Incremental admission: every verdict equals a full recomputation, after any history."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from paper_slices import MBPS, paper_slices

from sliceportal.domain import (
    LinkState,
    Model,
    SliceSpec,
    SpecError,
    analyze,
    min_capacity,
    slice_spec,
)
from sliceportal.domain.spec import STANDARD_FRAMING, Framing


@st.composite
def specs(draw: st.DrawFn, name: str) -> SliceSpec:
    return SliceSpec(
        name=name,
        rate_bps=draw(st.floats(min_value=1e3, max_value=1e8)),
        priority=draw(st.integers(min_value=1, max_value=7)),
        burst_bytes=draw(st.floats(min_value=0.0, max_value=1e5)),
        delay_target_s=draw(st.one_of(st.just(0.01), st.floats(min_value=0.0, max_value=0.1))),
        max_packet_bytes=draw(st.sampled_from([64, 1500, 9000])),
    )


def _assert_same(
    verdict: object,
    expected: list[SliceSpec],
    capacity: float,
    model: Model,
    framing: Framing = STANDARD_FRAMING,
) -> None:
    from sliceportal.domain import AdmissionVerdict

    assert isinstance(verdict, AdmissionVerdict)
    full = analyze(expected, capacity, model, framing)
    assert verdict.admissible == full.admissible
    assert verdict.violations == full.violations  # bit-for-bit: same floats, same sentences
    assert verdict.min_capacity_bps == min_capacity(expected, model, framing)


@settings(max_examples=100, deadline=None)
@given(
    data=st.data(),
    model=st.sampled_from(list(Model)),
    framing=st.sampled_from([Framing(), Framing(1518, 24), Framing(9018, 0)]),
)
def test_incremental_verdicts_equal_full_recomputation(
    data: st.DataObject, model: Model, framing: Framing
) -> None:
    initial = [data.draw(specs(f"s{i}")) for i in range(data.draw(st.integers(0, 12)))]
    total = sum(s.rate_bps for s in initial) or 1e6
    capacity = total * data.draw(st.floats(min_value=0.8, max_value=4.0))
    state = LinkState(capacity, model, initial, framing)
    mirror = list(initial)
    fresh = 0
    for _ in range(data.draw(st.integers(1, 15))):
        kind = data.draw(st.sampled_from(["add", "replace", "remove"] if mirror else ["add"]))
        fresh += 1
        if kind == "add":
            spec = data.draw(specs(f"n{fresh}"))
            expected = [*mirror, spec]
            verdict = state.check_add(spec)
        else:
            index = data.draw(st.integers(0, len(mirror) - 1))
            old = mirror[index].name
            if kind == "replace":
                spec = data.draw(specs(data.draw(st.sampled_from([old, f"n{fresh}"]))))
                expected = [*mirror[:index], spec, *mirror[index + 1 :]]
                verdict = state.check_replace(old, spec)
            else:
                expected = mirror[:index] + mirror[index + 1 :]
                verdict = state.check_remove(old)
        _assert_same(verdict, expected, capacity, model, framing)
        if data.draw(st.booleans()):
            if kind == "add":
                state.add(spec)
            elif kind == "replace":
                state.replace(old, spec)
            else:
                state.remove(old)
            mirror = expected
        # The lazily built analysis is that of the link the check was about, even after changes.
        if data.draw(st.booleans()):
            expected_analysis = analyze(expected, capacity, model, framing)
            assert verdict.analysis.to_dict() == expected_analysis.to_dict()
        assert list(state.specs()) == mirror
    assert state.analysis().to_dict() == analyze(mirror, capacity, model, framing).to_dict()


def test_a_link_state_defaults_to_netcalc_and_charges_its_framing() -> None:
    state = LinkState(1e9, slices=[SliceSpec("voice", 100e6, 7, 1536.0, 1.0)])
    assert state.model is Model.NETCALC
    (bound,) = state.analysis().slices
    assert bound.worst_case_delay_s == pytest.approx(8 * (1536 + 12.5 + 1518) / 1e9)
    line_rate = LinkState(
        1e9, slices=[SliceSpec("voice", 100e6, 7, 1536.0, 1.0)], framing=Framing(1518, 24)
    )
    (bound,) = line_rate.analysis().slices
    assert bound.worst_case_delay_s == pytest.approx(8 * (1.4 * 1548.5 + 1542) / 1e9)
    # 800 Mbit/s more fits the counted bytes, not the wire's 1.4 times as much.
    more = SliceSpec("bulk", 800e6, 1, 0.0, 1.0)
    assert state.check_add(more).admissible
    assert not line_rate.check_add(more).admissible


def test_check_add_reports_the_slices_a_new_slice_would_break() -> None:
    state = LinkState(340 * MBPS, Model.HARKOUS, paper_slices(7, 6, 5))
    assert state.analysis().admissible
    video = slice_spec("Video", 40e6, 6, burst_limit_s=0.05, delay_target_s=0.01)
    verdict = state.check_add(video)
    assert not verdict.admissible
    assert [v.name for v in verdict.violations] == ["Enterprise", "Peering", "Video"]
    assert verdict.plan is None
    assert len(state) == 3  # a check changes nothing
    assert state.check_add(
        slice_spec("Tiny", 1e3, 1, burst_bytes=100, delay_target_s=0.1)
    ).admissible


def test_replace_and_remove() -> None:
    state = LinkState(300 * MBPS, Model.NETCALC, paper_slices(7, 6, 5))
    assert not state.analysis().admissible
    assert state.check_remove("Peering").admissible
    lighter = slice_spec("Peering", 200e6, 5, burst_limit_s=0.03)
    assert state.check_replace("Peering", lighter).admissible
    state.replace("Peering", lighter)
    assert state.analysis().admissible
    state.remove("DC")
    assert "DC" not in state and [s.name for s in state.specs()] == ["Enterprise", "Peering"]


def test_names_must_exist_or_be_free() -> None:
    state = LinkState(1e9, Model.HARKOUS, paper_slices(7, 6, 5))
    with pytest.raises(SpecError, match="name: a slice named 'DC' is already on this link"):
        state.check_add(paper_slices(7, 6, 5)[0])
    with pytest.raises(SpecError, match="name: no slice named 'nope' on this link"):
        state.check_remove("nope")
    with pytest.raises(SpecError, match="already on this link"):
        state.replace("DC", paper_slices(7, 6, 5)[1])
    with pytest.raises(SpecError, match="duplicate|already"):
        LinkState(1e9, Model.HARKOUS, paper_slices(7, 6, 5) * 2)


def test_removing_everything_leaves_an_empty_admissible_link() -> None:
    state = LinkState(1e9, Model.HARKOUS, paper_slices(7, 7, 7))
    for name in ("DC", "Enterprise", "Peering"):
        state.remove(name)
    assert len(state) == 0
    assert state.aggregates().rate_bps == (0.0,) * 8
    assert state.check_add(paper_slices(7, 7, 7)[0]).admissible
