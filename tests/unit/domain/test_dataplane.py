"""Slices to P4Runtime entries: unit conversions, rounding, widths and validation."""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sliceportal.domain import p4constants as c
from sliceportal.domain.dataplane import (
    ECN_STEP,
    PREFIX_CLASSIFIER,
    ROUTE_TABLE,
    SET_NEXT_HOP,
    SET_SLICE,
    SLICE_POLICY,
    TAIL_DROP,
    VLAN_CLASSIFIER,
    DataplaneSlice,
    FieldMatch,
    MatchKind,
    Route,
    Scheme,
    TableEntry,
    byte_time,
    dataplane_entries,
    enforced_rate_bps,
    route_entry,
    slice_entries,
)
from sliceportal.domain.units import (
    VQ_UNITS_PER_S,
    DataplaneValueError,
    vq_units,
    vq_units_to_seconds,
)

MS = 1e-3


def make_slice(**overrides: Any) -> DataplaneSlice:
    """The paper's DC slice (Table II, BMv2 column), with overrides."""
    fields: dict[str, Any] = {
        "dp_sid": 1,
        "name": "DC",
        "vlan_id": 100,
        "ipv4_dst_prefixes": ("10.1.0.0/16",),
        "rate_bps": 48e6,
        "burst_limit_s": 20 * MS,
        "priority": 7,
        "scheme": Scheme.ECN_STEP,
        "marking_threshold_s": 5 * MS,
        "egress_port": 2,
    }
    fields.update(overrides)
    return DataplaneSlice(**fields)


def rate_error(rate_bps: float) -> float:
    """How much lower than declared the enforced rate is, relative to the declared rate."""
    return 1 - enforced_rate_bps(byte_time(rate_bps)) / rate_bps


# --- unit conversions ------------------------------------------------------------------------


def test_byte_time_of_the_paper_rates() -> None:
    # 8 bit x 1e9 ns x 2^16 units / rate, rounded up.
    assert byte_time(48e6) == 10_922_667  # 10_922_666.67
    assert byte_time(12e6) == 43_690_667  # 43_690_666.67
    assert byte_time(240e6) == 2_184_534  # 2_184_533.33
    assert byte_time(1e9) == 524_288  # exact: no rounding at 1 Gbit/s


@pytest.mark.parametrize(
    "rate_bps",
    [1e6, 2.5e6, 10e6, 48e6, 100e6, 1e9, 2.5e9, 10e9, 25e9, 40e9, 99_999_999_999, 100e9],
)
def test_rate_error_below_0_1_percent_from_1_mbit_to_100_gbit(rate_bps: float) -> None:
    assert 0 <= rate_error(rate_bps) < 1e-3


@given(st.integers(min_value=c.RATE_MIN_BPS, max_value=c.RATE_MAX_BPS))
def test_enforced_rate_never_above_declared_and_within_0_1_percent(rate_bps: int) -> None:
    bt = byte_time(rate_bps)
    assert bt < 2**c.BYTE_TIME_WIDTH
    assert Fraction(8 * VQ_UNITS_PER_S, bt) <= rate_bps  # exact: never above the declared rate
    assert rate_error(rate_bps) < 1e-3


def test_rate_error_bound_is_the_byte_time_resolution() -> None:
    """The worst case is the fastest rate, where a byte is the fewest units."""
    worst = byte_time(c.RATE_MAX_BPS)
    assert worst == 1311  # 20 ps per byte at 400 Gbit/s
    assert 1 / worst < 1e-3
    assert rate_error(100e9) < 1 / byte_time(100e9) < 2e-4


def test_rate_limits_at_both_ends() -> None:
    assert byte_time(c.RATE_MIN_BPS) == 4_194_304_000 < 2**32
    assert byte_time(c.RATE_MAX_BPS) == 1311
    for bad in (c.RATE_MIN_BPS - 1, c.RATE_MAX_BPS + 1, 0, -1e6):
        with pytest.raises(DataplaneValueError, match="rate_bps") as info:
            byte_time(bad)
        assert info.value.field == "rate_bps"


@pytest.mark.parametrize("bad", [math.nan, math.inf, True, "48e6", None])
def test_rates_that_are_not_finite_numbers_are_refused(bad: object) -> None:
    with pytest.raises(DataplaneValueError, match="rate_bps"):
        byte_time(bad)  # type: ignore[arg-type]


def test_floats_are_read_as_the_decimal_written() -> None:
    assert byte_time(48e6) == byte_time(48_000_000)
    # 0.3 is 0.29999999999999998889776975 in binary; flooring that would lose a unit.
    assert vq_units(0.3, "burst_limit_s") == 3 * VQ_UNITS_PER_S // 10
    assert vq_units(20 * MS, "burst_limit_s") == 1_310_720_000_000


def test_vq_units_round_down_and_convert_back() -> None:
    assert VQ_UNITS_PER_S == 65_536_000_000_000
    assert vq_units(0, "m") == 0
    assert vq_units(2.5e-14, "m") == 1  # 1.6384 units
    assert vq_units_to_seconds(vq_units(1.0, "m")) == 1.0
    top = Fraction(c.BURST_LIMIT_MAX_NS, 10**9)
    assert vq_units(float(top), "m") == c.BURST_LIMIT_MAX_NS * c.VQ_UNITS_PER_NS < 2**48
    for bad in (-1e-9, float(top) + 1e-9):
        with pytest.raises(DataplaneValueError, match="^m: "):
            vq_units(bad, "m")


@given(st.floats(min_value=0, max_value=4.0, allow_nan=False))
def test_vq_units_never_above_declared(seconds: float) -> None:
    units = vq_units(seconds, "burst_limit_s")
    declared = Fraction(repr(seconds)) * VQ_UNITS_PER_S
    assert units <= declared < units + 1


def test_one_second_burst_at_100_gbit_fits_its_parameter() -> None:
    policy = make_slice(rate_bps=100e9, burst_limit_s=1.0, marking_threshold_s=0.5).policy()
    assert policy.c_delay == VQ_UNITS_PER_S < 2**c.VQ_PARAM_WIDTH
    assert policy.byte_time == 5243  # 80 ps per byte, 5242.88 units
    # The largest transmission time any packet can have stays far inside the delay width.
    assert (2**32 - 1) * policy.byte_time < 2**c.VQ_DELAY_WIDTH


# --- entries -----------------------------------------------------------------------------------


def test_vlan_and_prefix_slice_entries() -> None:
    entries = slice_entries(make_slice(ipv4_dst_prefixes=("10.1.0.0/16", "192.0.2.128/25")))
    port, vlan = (
        FieldMatch("egress_port", MatchKind.EXACT, 2),
        FieldMatch("vlan_id", MatchKind.EXACT, 100),
    )
    assert entries == (
        TableEntry(
            VLAN_CLASSIFIER,
            (port, vlan, FieldMatch("ipv4_dst", MatchKind.LPM, 0x0A010000, 16)),
            SET_SLICE,
            (("dp_sid", 1),),
        ),
        TableEntry(
            VLAN_CLASSIFIER,
            (port, vlan, FieldMatch("ipv4_dst", MatchKind.LPM, 0xC0000280, 25)),
            SET_SLICE,
            (("dp_sid", 1),),
        ),
        TableEntry(
            SLICE_POLICY,
            (FieldMatch("dp_sid", MatchKind.EXACT, 1),),
            ECN_STEP,
            (
                ("priority", 7),
                ("byte_time", 10_922_667),
                ("c_delay", 1_310_720_000_000),
                ("m_delay", 327_680_000_000),
                ("hist_target", 1_310_720_000_000),  # no delay target: the 20 ms burst limit
            ),
        ),
    )


def test_vlan_only_slice_omits_the_zero_length_prefix() -> None:
    classifier, _ = slice_entries(make_slice(ipv4_dst_prefixes=()))
    assert classifier.table == VLAN_CLASSIFIER
    assert [m.field for m in classifier.match] == ["egress_port", "vlan_id"]


def test_prefix_only_slices_go_to_the_prefix_classifier() -> None:
    entries = slice_entries(
        make_slice(
            vlan_id=None,
            ipv4_dst_prefixes=("0.0.0.0/0", "10.9.9.9/32"),
            scheme=Scheme.TAIL_DROP,
            marking_threshold_s=None,
        )
    )
    assert [e.table for e in entries] == [PREFIX_CLASSIFIER, PREFIX_CLASSIFIER, SLICE_POLICY]
    assert entries[0].match == (FieldMatch("egress_port", MatchKind.EXACT, 2),)
    assert entries[1].match[1] == FieldMatch("ipv4_dst", MatchKind.LPM, 0x0A090909, 32)
    assert entries[2].action == TAIL_DROP
    assert [name for name, _ in entries[2].params] == [
        "priority",
        "byte_time",
        "c_delay",
        "hist_target",
    ]


def test_paper_table_ii_policies() -> None:
    enterprise = make_slice(
        dp_sid=2, rate_bps=12e6, burst_limit_s=10 * MS, scheme="tail_drop", marking_threshold_s=None
    )
    peering = make_slice(
        dp_sid=3,
        rate_bps=240e6,
        burst_limit_s=30 * MS,
        scheme="tail_drop",
        marking_threshold_s=None,
    )
    assert enterprise.policy().params == (
        ("priority", 7),
        ("byte_time", 43_690_667),
        ("c_delay", 655_360_000_000),
        ("hist_target", 655_360_000_000),
    )
    assert peering.policy().params[1:] == (
        ("byte_time", 2_184_534),
        ("c_delay", 1_966_080_000_000),
        ("hist_target", 1_966_080_000_000),
    )


def test_the_histogram_target_is_the_delay_target() -> None:
    """The SLA's delay target, not the burst limit, tops the histograms when it is given: the
    paper's Peering slice (30 ms) above the former global top edge of 20 ms, a target below
    the burst limit, and one beyond the longest the parameter holds (capped at 4 s)."""
    assert make_slice(delay_target_s=30 * MS).policy().hist_target == 1_966_080_000_000
    assert make_slice(delay_target_s=5 * MS).policy().hist_target == 327_680_000_000
    assert make_slice(delay_target_s=9.0).policy().hist_target == 4 * VQ_UNITS_PER_S
    with pytest.raises(DataplaneValueError, match="delay_target_s"):
        make_slice(delay_target_s=-1.0).policy()


def test_best_effort_slice_has_only_a_policy() -> None:
    best_effort = make_slice(
        dp_sid=c.BEST_EFFORT_DP_SID, vlan_id=None, ipv4_dst_prefixes=(), priority=0
    )
    (entry,) = slice_entries(best_effort)
    assert entry.table == SLICE_POLICY
    assert entry.match == (FieldMatch("dp_sid", MatchKind.EXACT, 0),)


def test_route_entry() -> None:
    entry = route_entry(Route("10.1.0.0/16", 2, "02:00:00:00:01:fe"))
    assert entry == TableEntry(
        ROUTE_TABLE,
        (FieldMatch("ipv4_dst", MatchKind.LPM, 0x0A010000, 16),),
        SET_NEXT_HOP,
        (("port", 2), ("next_hop_mac", 0x0200000001FE)),
    )
    assert route_entry(Route("0.0.0.0/0", 1, "02:00:00:00:00:01")).match == ()


def test_dataplane_entries_refuse_two_owners_of_a_key() -> None:
    dc = make_slice()
    entries = dataplane_entries([dc, make_slice(dp_sid=2, vlan_id=200)])
    assert len(entries) == 4
    with pytest.raises(DataplaneValueError, match=r"slices\[1\]\.dp_sid: .*slices\[0\] \(DC\)"):
        dataplane_entries([dc, make_slice(vlan_id=200)])
    with pytest.raises(DataplaneValueError, match=r"slices\[1\]\.match"):
        dataplane_entries([dc, make_slice(dp_sid=2, name="copy")])
    route = Route("10.0.0.0/8", 1, "02:00:00:00:00:01")
    with pytest.raises(DataplaneValueError, match=r"routes\[1\]\.match"):
        dataplane_entries([], [route, route])


def test_entries_are_hashable_for_diffing() -> None:
    desired = set(slice_entries(make_slice()))
    changed = set(slice_entries(make_slice(rate_bps=50e6)))
    assert {e.key for e in desired} == {e.key for e in changed}
    assert [e.table for e in desired - changed] == [SLICE_POLICY]


# --- validation --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "good", "bad"),
    [
        ("dp_sid", [1, c.MAX_SLICES - 1], [c.MAX_SLICES, -1, 1.0, True]),
        ("vlan_id", [c.VLAN_ID_MIN, c.VLAN_ID_MAX, None], [0, 4095, 4096]),
        ("priority", [0, c.MAX_PRIORITY], [-1, 8]),
        ("egress_port", [0, 510], [c.BMV2_DROP_PORT, 512, -1]),
    ],
)
def test_integer_fields_at_their_widths(field: str, good: list[Any], bad: list[Any]) -> None:
    for value in good:
        assert getattr(make_slice(**{field: value}), field) == value
    for value in bad:
        with pytest.raises(DataplaneValueError) as info:
            make_slice(**{field: value})
        assert info.value.field == field


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"ipv4_dst_prefixes": ("10.1.0.1/16",)}, "ipv4_dst_prefixes[0]"),
        ({"ipv4_dst_prefixes": ("10.1.0.0/16", "10.300.0.0/16")}, "ipv4_dst_prefixes[1]"),
        ({"ipv4_dst_prefixes": ("10.1.0.0/16", "10.1.0.0/16")}, "ipv4_dst_prefixes"),
        ({"ipv4_dst_prefixes": ["10.1.0.0/16"]}, "ipv4_dst_prefixes"),
        ({"vlan_id": None, "ipv4_dst_prefixes": ()}, "ipv4_dst_prefixes"),
        ({"burst_limit_s": 0}, "burst_limit_s"),
        ({"burst_limit_s": 5.0}, "burst_limit_s"),
        ({"rate_bps": 1e6, "burst_limit_s": 12 * MS}, "burst_limit_s"),  # 1518 B is 12.1 ms
        ({"marking_threshold_s": None}, "marking_threshold_s"),
        ({"marking_threshold_s": 20 * MS}, "marking_threshold_s"),
        ({"scheme": Scheme.TAIL_DROP}, "marking_threshold_s"),
        ({"scheme": "red"}, "scheme"),
        ({"dp_sid": 0}, "dp_sid"),
        ({"dp_sid": 0, "vlan_id": None, "ipv4_dst_prefixes": ()}, "priority"),
    ],
)
def test_unworkable_slices_are_refused_naming_the_field(
    overrides: dict[str, Any], field: str
) -> None:
    with pytest.raises(DataplaneValueError) as info:
        make_slice(**overrides)
    assert info.value.field == field
    assert str(info.value).startswith(f"{field}: ")


def test_burst_limit_of_exactly_one_frame_is_accepted() -> None:
    one_frame = Fraction(c.MIN_BURST_FRAME_BYTES * 8, 1_000_000)  # at 1 Mbit/s
    accepted = make_slice(rate_bps=1e6, burst_limit_s=float(one_frame), marking_threshold_s=0.0)
    assert accepted.policy().m_delay == 0  # a zero threshold marks every ECT packet


@pytest.mark.parametrize(
    ("route", "field"),
    [
        (("10.0.0.1/8", 1, "02:00:00:00:00:01"), "ipv4_dst_prefix"),
        (("10.0.0.0/8", 511, "02:00:00:00:00:01"), "egress_port"),
        (("10.0.0.0/8", 1, "02-00-00-00-00-01"), "next_hop_mac"),
    ],
)
def test_bad_routes_are_refused(route: tuple[Any, ...], field: str) -> None:
    with pytest.raises(DataplaneValueError) as info:
        Route(*route)
    assert info.value.field == field


def test_errors_nest_under_a_prefix() -> None:
    with pytest.raises(DataplaneValueError) as info:
        make_slice(priority=9)
    assert info.value.prefixed("slices[4].").field == "slices[4].priority"
    assert isinstance(info.value, ValueError)


def test_slices_are_immutable() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        make_slice().rate_bps = 1.0  # type: ignore[misc]


# --- The meter baseline (Harkous et al. 2021, Sec. IV-C) -------------------------------------


def test_meter_slice_gets_meter_policy_and_a_meter_cell() -> None:
    from sliceportal.domain.dataplane import METER_POLICY, SLICE_METER, MeterConfig, meter_configs

    meter = make_slice(scheme=Scheme.METER, marking_threshold_s=None, delay_target_s=10 * MS)
    policy = slice_entries(meter)[-1]
    assert policy.table == SLICE_POLICY
    assert policy.action == METER_POLICY
    assert policy.params == (("priority", 7), ("hist_target", vq_units(10 * MS, "t")))
    # CIR 48 Mbit/s = 6,000,000 B/s; CBS 20 ms at that rate = 120,000 B; PIR/PBS the same.
    config = MeterConfig(SLICE_METER, 1, 6_000_000, 120_000, 6_000_000, 120_000)
    assert meter.meter_config() == config
    assert meter_configs([meter, make_slice(dp_sid=2, vlan_id=101)]) == (config,)
    assert make_slice().meter_config() is None


def test_meter_slice_rounds_its_figures_down_and_marks_nothing() -> None:
    odd = make_slice(
        scheme=Scheme.METER, marking_threshold_s=None, rate_bps=1_000_007, burst_limit_s=0.3
    )
    config = odd.meter_config()
    assert config is not None
    assert (config.cir, config.cburst) == (125_000, 37_500)  # 125,000.875 and 37,500.2625
    with pytest.raises(DataplaneValueError) as info:
        make_slice(scheme=Scheme.METER)
    assert info.value.field == "marking_threshold_s"


def test_meter_step_is_rfc_2698_colour_blind() -> None:
    from sliceportal.domain.dataplane import (
        METER_GREEN,
        METER_RED,
        METER_YELLOW,
        SLICE_METER,
        MeterConfig,
        MeterState,
        meter_step,
    )

    # CIR 1,000 B/s, CBS 1,000 B; PIR 2,000 B/s, PBS 2,000 B. Ticks are microseconds.
    config = MeterConfig(SLICE_METER, 0, 1_000, 1_000, 2_000, 2_000)
    state, color = meter_step(MeterState(), 10, 1_000, config)  # both buckets start full
    assert color == METER_GREEN
    state, color = meter_step(state, 10, 1_000, config)  # committed empty, peak has 1,000
    assert color == METER_YELLOW
    state, color = meter_step(state, 10, 1, config)  # peak empty: red, nothing taken
    assert color == METER_RED
    assert (state.committed, state.peak) == (0, 0)
    # 0.5 s later: 500 B committed, 1,000 B peak.
    state, color = meter_step(state, 500_010, 500, config)
    assert color == METER_GREEN
    state, color = meter_step(state, 500_010, 501, config)  # peak holds only 500
    assert color == METER_RED
    state, color = meter_step(state, 500_010, 500, config)
    assert color == METER_YELLOW
    # Refill is capped at the burst sizes, and a timestamp going backwards refills nothing.
    state, _ = meter_step(state, 100_000_000, 1, config)
    assert (state.committed, state.peak) == (999 * 10**6, 1_999 * 10**6)
    state, color = meter_step(state, 50, 2_000, config)
    assert color == METER_RED
