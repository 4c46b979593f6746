"""Slice specs and the validation of the input document: every bad field is named."""

from __future__ import annotations

import math
from typing import Any

import pytest

from sliceportal.domain import LinkInput, SliceSpec, SpecError, parse_link_input, slice_spec
from sliceportal.domain.spec import (
    DEFAULT_MAX_FRAME_BYTES,
    SLICE_LEVELS,
    Framing,
    burst_agrees,
    check_levels,
    check_priority,
    check_queue_count,
    max_frame_bytes,
    slice_levels,
)


def test_burst_is_rate_times_burst_limit_and_target_defaults_to_it() -> None:
    spec = slice_spec("DC", 48e6, 7, burst_limit_s=0.02)
    assert spec.burst_bytes == pytest.approx(120_000)
    assert spec.delay_target_s == 0.02
    assert spec.max_packet_bytes == 1518  # 1500 MTU + 14 Ethernet + 4 VLAN


def test_burst_bytes_disagreeing_with_the_burst_limit_are_refused() -> None:
    with pytest.raises(SpecError) as caught:
        slice_spec("a", 1e6, 1, burst_limit_s=0.5, burst_bytes=1000, field_prefix="slices[2].")
    assert caught.value.field == "slices[2].burst_bytes"
    assert caught.value.message.startswith("disagrees with slices[2].burst_limit_s")
    assert "62500" in caught.value.message  # what the limit means: 1e6 × 0.5 / 8 bytes


def test_burst_bytes_agreeing_with_the_burst_limit_are_accepted() -> None:
    spec = slice_spec("a", 1e6, 1, burst_limit_s=0.5, burst_bytes=62_500, max_packet_bytes=9000)
    assert (spec.burst_bytes, spec.delay_target_s, spec.max_packet_bytes) == (62_500, 0.5, 9000)
    # Within half a byte still agrees (a rounded burst); a whole byte off does not.
    assert slice_spec("a", 1e6, 1, burst_limit_s=0.5, burst_bytes=62_500.4).burst_bytes == 62_500.4
    with pytest.raises(SpecError, match="disagrees"):
        slice_spec("a", 1e6, 1, burst_limit_s=0.5, burst_bytes=62_501)


def test_burst_agreement_is_half_a_byte_or_relative_rounding() -> None:
    assert burst_agrees(62_500.5, 1e6, 0.5)
    assert not burst_agrees(62_500.6, 1e6, 0.5)
    huge = 1e15 * 1e5 / 8.0  # 1.25e19 bytes: half a byte is below the float spacing
    assert burst_agrees(huge * (1 + 1e-10), 1e15, 1e5)
    assert not burst_agrees(huge * (1 + 1e-8), 1e15, 1e5)


def test_max_packet_defaults_to_the_largest_frame_of_the_link_mtu() -> None:
    assert max_frame_bytes(9000) == 9018
    assert max_frame_bytes(1500) == DEFAULT_MAX_FRAME_BYTES == 1518
    assert slice_spec("a", 1e6, 1, burst_limit_s=0.1, mtu_bytes=9000).max_packet_bytes == 9018
    assert SliceSpec("a", 1e6, 1, 0.0, 0.1).max_packet_bytes == 1518


def test_target_is_required_when_only_burst_bytes_is_given() -> None:
    with pytest.raises(SpecError) as caught:
        slice_spec("a", 1e6, 1, burst_bytes=100, field_prefix="slices[4].")
    assert caught.value.field == "slices[4].delay_target_s"
    assert str(caught.value) == (
        "slices[4].delay_target_s: is required when only burst_bytes is given"
    )


def test_a_burst_is_required() -> None:
    with pytest.raises(SpecError, match=r"^burst_limit_s: is required unless burst_bytes"):
        slice_spec("a", 1e6, 1)


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"rate_bps": 0.0}, "rate_bps", "must be greater than 0"),
        ({"rate_bps": -1.0}, "rate_bps", "must be greater than 0"),
        ({"rate_bps": math.nan}, "rate_bps", "must be a finite number"),
        ({"rate_bps": math.inf}, "rate_bps", "must be a finite number"),
        ({"rate_bps": 1e16}, "rate_bps", "must be at most 1e+15"),
        ({"rate_bps": True}, "rate_bps", "must be a number"),
        ({"priority": 8}, "priority", "must be an integer from 1 to 7"),
        ({"priority": 0}, "priority", "must be an integer from 1 to 7"),
        ({"priority": -1}, "priority", "must be an integer from 1 to 7"),
        ({"priority": 1.0}, "priority", "must be an integer from 1 to 7"),
        ({"priority": False}, "priority", "must be an integer from 1 to 7"),
        ({"burst_bytes": -1.0}, "burst_bytes", "must be at least 0"),
        ({"delay_target_s": -0.1}, "delay_target_s", "must be at least 0"),
        ({"max_packet_bytes": 0}, "max_packet_bytes", "must be an integer from 1 to 1000000"),
        ({"name": ""}, "name", "must be a non-empty string"),
        ({"name": 3}, "name", "must be a non-empty string"),
    ],
)
def test_slice_spec_refuses_invalid_fields(
    changes: dict[str, Any], field: str, message: str
) -> None:
    values: dict[str, Any] = {
        "name": "a",
        "rate_bps": 1e6,
        "priority": 3,
        "burst_bytes": 10.0,
        "delay_target_s": 0.01,
        "max_packet_bytes": 1500,
    } | changes
    with pytest.raises(SpecError) as caught:
        SliceSpec(**values)
    assert (caught.value.field, caught.value.message) == (field, message)


def test_slice_spec_normalises_numbers_to_the_declared_types() -> None:
    spec = SliceSpec("a", 10, 1, 0, 1)
    assert isinstance(spec.rate_bps, float) and isinstance(spec.burst_bytes, float)


def _doc(**slice_fields: Any) -> dict[str, Any]:
    fields = {"name": "a", "rate_bps": 1e6, "priority": 1, "burst_limit_s": 0.01} | slice_fields
    return {"capacity_bps": 1e9, "slices": [{k: v for k, v in fields.items() if v is not ...}]}


def test_parse_link_input_accepts_the_documented_schema() -> None:
    doc = {
        "capacity_bps": 1e9,
        "mtu_bytes": 9000,
        "slices": [
            {"name": "a", "rate_bps": 1e6, "priority": 7, "burst_limit_s": 0.01},
            {
                "name": "b",
                "rate_bps": 2e6,
                "priority": 1,
                "burst_bytes": 5000,
                "delay_target_s": 0.02,
                "max_packet_bytes": 1500,
            },
        ],
    }
    link = parse_link_input(doc, require_capacity=True)
    assert link == LinkInput(
        capacity_bps=1e9,
        mtu_bytes=9000,
        slices=(
            SliceSpec("a", 1e6, 7, 1250.0, 0.01, 9018),
            SliceSpec("b", 2e6, 1, 5000.0, 0.02, 1500),
        ),
    )
    assert link.frame_overhead_bytes == 0
    assert link.framing == Framing(max_frame_bytes=9018, overhead_bytes=0)


@pytest.mark.parametrize("overhead", [0, 24, 64])
def test_parse_link_input_accepts_a_frame_overhead(overhead: int) -> None:
    link = parse_link_input(_doc() | {"frame_overhead_bytes": overhead}, require_capacity=True)
    assert link.frame_overhead_bytes == overhead
    assert link.framing == Framing(1518, overhead)


def test_frame_overhead_defaults_to_zero_also_when_null() -> None:
    for doc in (_doc(), _doc() | {"frame_overhead_bytes": None}):
        link = parse_link_input(doc, require_capacity=True)
        assert (link.frame_overhead_bytes, link.framing) == (0, Framing())


def test_null_optional_fields_count_as_absent() -> None:
    link = parse_link_input(_doc(burst_bytes=None, max_packet_bytes=None), require_capacity=True)
    assert link.slices[0].burst_bytes == 1250.0


def test_capacity_is_optional_when_not_required() -> None:
    doc = _doc()
    del doc["capacity_bps"]
    assert parse_link_input(doc, require_capacity=False).capacity_bps is None


@pytest.mark.parametrize(
    ("doc", "error"),
    [
        ([], "input: must be a JSON object with capacity_bps and slices"),
        ({"slices": []}, "capacity_bps: is required"),
        ({"capacity_bps": "1e9", "slices": []}, "capacity_bps: must be a number"),
        ({"capacity_bps": 0, "slices": []}, "capacity_bps: must be greater than 0"),
        ({"capacity_bps": 1e9}, "slices: is required"),
        ({"capacity_bps": 1e9, "slices": {}}, "slices: must be a list of slice objects"),
        ({"capacity_bps": 1e9, "slices": [], "colour": 1}, "colour: unknown field"),
        ({"capacity_bps": 1e9, "mtu_bytes": 0, "slices": []}, "mtu_bytes: must be an integer"),
        ({"capacity_bps": 1e9, "slices": [3]}, "slices[0]: must be an object"),
        (_doc(priority=9), "slices[0].priority: must be an integer from 1 to 7"),
        (_doc(priority=0), "slices[0].priority: must be an integer from 1 to 7"),
        (_doc(priority=1.5), "slices[0].priority: must be an integer from 1 to 7"),
        (_doc(priority=True), "slices[0].priority: must be an integer from 1 to 7"),
        (
            _doc(burst_bytes=1),
            "slices[0].burst_bytes: disagrees with slices[0].burst_limit_s",
        ),
        (
            _doc() | {"frame_overhead_bytes": 65},
            "frame_overhead_bytes: must be an integer from 0 to 64",
        ),
        (
            _doc() | {"frame_overhead_bytes": -1},
            "frame_overhead_bytes: must be an integer from 0 to 64",
        ),
        (
            _doc() | {"frame_overhead_bytes": 24.0},
            "frame_overhead_bytes: must be an integer from 0 to 64",
        ),
        (
            _doc() | {"frame_overhead_bytes": "24"},
            "frame_overhead_bytes: must be an integer from 0 to 64",
        ),
        (_doc(priority=...), "slices[0].priority: is required"),
        (_doc(name=...), "slices[0].name: is required"),
        (_doc(rate_bps=-5), "slices[0].rate_bps: must be greater than 0"),
        (_doc(rate_bps=math.nan), "slices[0].rate_bps: must be a finite number"),
        (_doc(burst_limit_s=math.inf), "slices[0].burst_limit_s: must be a finite number"),
        (_doc(burst_limit_s=...), "slices[0].burst_limit_s: is required unless burst_bytes"),
        (_doc(colour="red"), "slices[0].colour: unknown field"),
        (_doc(max_packet_bytes=1500.0), "slices[0].max_packet_bytes: must be an integer"),
    ],
)
def test_parse_link_input_names_the_bad_field(doc: object, error: str) -> None:
    with pytest.raises(SpecError) as caught:
        parse_link_input(doc, require_capacity=True)
    assert str(caught.value).startswith(error)


def test_duplicate_names_are_refused_naming_both() -> None:
    doc = _doc()
    doc["slices"].append(dict(doc["slices"][0]))
    with pytest.raises(SpecError) as caught:
        parse_link_input(doc, require_capacity=True)
    assert str(caught.value) == "slices[1].name: duplicate name 'a' (already used by slices[0])"


def test_an_empty_slice_list_can_be_refused() -> None:
    with pytest.raises(SpecError, match="slices: must contain at least one slice"):
        parse_link_input({"slices": []}, require_capacity=False, require_slices=True)


@pytest.mark.parametrize("priority", [0, -1, 8])
def test_priority_zero_is_best_efforts_and_refused_for_slices(priority: int) -> None:
    with pytest.raises(SpecError, match=r"^priority: must be an integer from 1 to 7$"):
        check_priority(priority)
    with pytest.raises(SpecError, match=r"^slices\[0\]\.priority: must be an integer from 1 to 7"):
        slice_spec("a", 1e6, priority, burst_limit_s=0.01, field_prefix="slices[0].")


@pytest.mark.parametrize("priority", [1, 7])
def test_slices_use_priorities_one_to_seven(priority: int) -> None:
    assert check_priority(priority) == priority
    assert slice_spec("a", 1e6, priority, burst_limit_s=0.01).priority == priority


def test_planner_levels_are_one_to_seven() -> None:
    assert SLICE_LEVELS == 7
    assert [check_levels(n) for n in (1, 7)] == [1, 7]
    for bad in (0, 8):
        with pytest.raises(SpecError, match=r"^levels: must be an integer from 1 to 7"):
            check_levels(bad)


def test_a_link_has_two_to_eight_queues_and_best_effort_keeps_one() -> None:
    assert [check_queue_count(n) for n in (2, 8)] == [2, 8]
    for bad in (0, 1, 9, 2.0, True):
        with pytest.raises(SpecError, match=r"^queue_count: must be an integer from 2 to 8"):
            check_queue_count(bad)
    assert [slice_levels(n) for n in range(2, 9)] == [1, 2, 3, 4, 5, 6, 7]
    assert slice_levels(16) == 7  # never more than the data plane's eight queues


def test_framing_defaults_and_validation() -> None:
    assert Framing() == Framing(1518, 0) == Framing.of_link(1500)
    assert Framing().rate_factor == 1.0
    assert Framing(1518, 24).rate_factor == pytest.approx(1.4)
    assert Framing.of_link(9000, 24) == Framing(9018, 24)
    with pytest.raises(SpecError, match=r"^frame_overhead_bytes: must be an integer from 0 to 64"):
        Framing(1518, 65)
    with pytest.raises(SpecError, match=r"^max_frame_bytes: must be an integer from 1"):
        Framing(0, 0)
