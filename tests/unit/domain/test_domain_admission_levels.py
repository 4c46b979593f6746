"""Admission certified from stored per-level float sums: never admits what a full analysis
refuses, and certifies the ordinary cases (not only the trivial ones)."""

from __future__ import annotations

import math
from dataclasses import replace

from domain_strategies import capacities, slice_lists
from hypothesis import assume, given
from hypothesis import strategies as st
from paper_slices import MBPS, paper_slices

from sliceportal.domain import (
    LevelAggregates,
    Model,
    SliceSpec,
    aggregate_arrays,
    analyze,
    evaluate_levels,
    slice_arrays,
)
from sliceportal.domain.admission.levels import LevelLoad, upper_aggregates, upper_sum
from sliceportal.domain.spec import DEFAULT_MAX_FRAME_BYTES, Framing

MTU = DEFAULT_MAX_FRAME_BYTES
"""The largest frame of the link (1518 bytes on a 1500-byte MTU): what a slice without a packet
size carries and what the stored rows count it as."""
models = st.sampled_from(list(Model))
framings = st.sampled_from([Framing(), Framing(1518, 24), Framing(9018, 0)])


def stored_rows(specs: list[SliceSpec], order: list[int], defaults: set[int]) -> list[LevelLoad]:
    """What the database keeps: per level, float sums in arrival order `order`; the slices in
    `defaults` gave no packet size (their spec carries the MTU)."""
    rows = []
    for level in range(8):
        mine = [i for i in order if specs[i].priority == level]
        if not mine:
            continue
        rate = burst = 0.0
        for i in mine:
            rate += specs[i].rate_bps
            burst += specs[i].burst_bytes
        given_packets = [specs[i].max_packet_bytes for i in mine if i not in defaults]
        rows.append(
            LevelLoad(
                priority=level,
                slice_count=len(mine),
                rate_bps=rate,
                burst_bytes=burst,
                min_delay_target_s=min(specs[i].delay_target_s for i in mine),
                max_packet_bytes=max(given_packets) if given_packets else None,
                default_packet_count=sum(1 for i in mine if i in defaults),
            )
        )
    return rows


@st.composite
def stored_links(draw: st.DrawFn) -> tuple[list[SliceSpec], list[LevelLoad]]:
    """Slices (those without a packet size carrying the MTU) and their rows, summed in an
    arbitrary order."""
    specs = draw(slice_lists(max_size=12))
    defaults = {i for i in range(len(specs)) if draw(st.booleans())}
    specs = [replace(s, max_packet_bytes=MTU) if i in defaults else s for i, s in enumerate(specs)]
    order = draw(st.permutations(range(len(specs))))
    return specs, stored_rows(specs, order, defaults)


def exact(specs: list[SliceSpec]) -> LevelAggregates:
    return aggregate_arrays(slice_arrays(specs))


@given(stored_links())
def test_upper_aggregates_bound_the_correctly_rounded_ones(
    link: tuple[list[SliceSpec], list[LevelLoad]],
) -> None:
    specs, rows = link
    upper, truth = upper_aggregates(rows, MTU), exact(specs)
    assert upper.count == truth.count
    assert upper.min_target_s == truth.min_target_s
    assert upper.max_packet_bytes == truth.max_packet_bytes
    assert all(u >= t for u, t in zip(upper.rate_bps, truth.rate_bps, strict=True))
    assert all(u >= t for u, t in zip(upper.burst_bytes, truth.burst_bytes, strict=True))


@given(stored_links(), slice_lists(min_size=1, max_size=1), capacities, models, framings)
def test_a_certificate_is_never_wrong(
    link: tuple[list[SliceSpec], list[LevelLoad]],
    added: list[SliceSpec],
    capacity: float,
    model: Model,
    framing: Framing,
) -> None:
    specs, rows = link
    candidate = replace(added[0], name="candidate")
    upper = upper_aggregates(rows, MTU, candidate)
    certified = evaluate_levels(upper, capacity, model, framing)
    if certified.admissible:
        assert analyze([*specs, candidate], capacity, model, framing).admissible


@given(stored_links(), st.data(), slice_lists(min_size=1, max_size=1), capacities, models)
def test_a_certificate_for_a_changed_slice_is_never_wrong(
    link: tuple[list[SliceSpec], list[LevelLoad]],
    data: st.DataObject,
    changed: list[SliceSpec],
    capacity: float,
    model: Model,
) -> None:
    """One stored slice taken out and its new version added, as a change of a slice does."""
    specs, rows = link
    assume(specs)
    old = data.draw(st.sampled_from(specs))
    new = replace(changed[0], name=old.name)
    certified = evaluate_levels(upper_aggregates(rows, MTU, new, old), capacity, model)
    if certified.admissible:
        rest = [s for s in specs if s is not old]
        assert analyze([*rest, new], capacity, model).admissible


def test_taking_out_the_last_slice_of_a_level_empties_it_exactly() -> None:
    only = SliceSpec("a", 3e6, 5, 1e4, 0.001, 9000)
    upper = upper_aggregates(stored_rows([only], [0], set()), MTU, removed=only)
    assert upper == exact([])


@given(stored_links(), st.integers(min_value=0, max_value=7), st.floats(0.0, 1e9), models)
def test_bounds_never_shrink_when_a_sum_grows(
    link: tuple[list[SliceSpec], list[LevelLoad]], level: int, extra: float, model: Model
) -> None:
    """What the certificate rests on: growing a level's rate or burst sum moves no bound down."""
    specs, _ = link
    assume(specs)
    before = exact(specs)
    capacity = 2 * sum(s.rate_bps for s in specs)
    for field in ("rate_bps", "burst_bytes"):
        grown = list(getattr(before, field))
        grown[level] += extra
        after = replace(before, **{field: tuple(grown)})
        old, new = (evaluate_levels(a, capacity, model) for a in (before, after))
        assert all(n >= o for n, o in zip(new.bound_s, old.bound_s, strict=True))
        assert new.admissible <= old.admissible


def test_the_paper_slices_are_certified_where_they_fit() -> None:
    """Section V-B's slices on a 2 Gbit/s link, every priority order: certified."""
    for priorities in ((1, 2, 3), (3, 2, 1), (1, 1, 1), (7, 1, 3)):
        *stored, last = paper_slices(*priorities)
        rows = stored_rows(stored, [0, 1], set())
        for model in Model:
            assert analyze([*stored, last], 2000 * MBPS, model).admissible
            certified = evaluate_levels(upper_aggregates(rows, MTU, last), 2000 * MBPS, model)
            assert certified.admissible


def test_a_bound_exactly_on_its_target_is_left_to_the_full_analysis() -> None:
    """Two slices at one level: 8·(B1 + B2)/C equals the target exactly. The full analysis
    admits it; the certificate cannot tell it from a miss by one ulp, so it abstains."""
    first = SliceSpec("a", 0.25e6, 3, 625.0, 0.01, MTU)
    second = SliceSpec("b", 0.25e6, 3, 625.0, 0.01, MTU)
    capacity = 1e6
    assert analyze([first, second], capacity, Model.HARKOUS).admissible
    rows = stored_rows([first], [0], set())
    levels = evaluate_levels(upper_aggregates(rows, MTU, second), capacity, Model.HARKOUS)
    assert not levels.admissible
    assert math.isclose(levels.bound_s[3], 0.01)


def test_upper_sum_of_nothing_or_one_term() -> None:
    assert upper_sum(0.0, 0) == 0.0
    assert upper_sum(3.0, 1) > 3.0
