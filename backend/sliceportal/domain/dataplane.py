"""Slices to the P4Runtime entries of ``p4/sliceportal.p4``, and its counters back to rates.

Pure: no I/O and no protobuf. Entries are plain frozen dataclasses keyed by P4Info names, so the
control plane converts them to protobuf in one adapter and reconciles a switch by diffing the
desired entries against the ones it reads back.

Units (``docs/dataplane.md`` explains the choice):

- Virtual-queue time is counted in *vq units* of 2^-16 ns. A rate is the time one byte takes,
  ``byte_time = ceil(8e9 * 2^16 / rate_bps)`` vq units per byte. Rounding up makes the enforced
  rate never above the declared one, and low by less than ``1 / byte_time``: under 0.08% up to
  ``RATE_MAX_BPS`` (400 Gbit/s).
- The burst limit (C_DELAY) and marking threshold (M_DELAY) are ``floor(seconds * 1e9 * 2^16)``
  vq units: never above the declared value, and short of it by less than 16 femtoseconds.
- A float is read as the decimal it prints as (``0.3`` is exactly 3/10), so the rounding above
  applies to the number the operator wrote, not to its binary approximation.

The module also holds the reference model of the per-packet arithmetic (``vqueue_step``,
``egress_check``, ``delay_bucket``), written to match the P4 code step for step, including
its bit widths, so the emulator and the tests run the same program as the switch.
"""

from __future__ import annotations

import dataclasses
import functools
import ipaddress
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from enum import StrEnum
from fractions import Fraction

from sliceportal.domain import p4constants as c
from sliceportal.domain.abc import (
    AbcConfig,
    AbcParams,
    AggregateKey,
    abc_decay_table,
    abc_log2_table,
    abc_reciprocal_table,
)
from sliceportal.domain.codel import CodelConfig, codel_sqrt_table
from sliceportal.domain.spec import SliceSpec, SpecError
from sliceportal.domain.units import (
    BITS_PER_BYTE,
    TICKS_PER_S,
    VQ_UNITS_PER_S,
    DataplaneValueError,
    exact_number,
    floor_vq_units,
    int_in,
    is_before,
    ticks_since,
    vq_units,
    vq_units_to_seconds,
)

# P4Info names (p4/build/sliceportal.p4info.txtpb), the keys of every entry and reading.
ROUTE_TABLE = "SliceportalIngress.routing.ipv4_lpm"
VLAN_CLASSIFIER = "SliceportalIngress.classifier.vlan_classifier"
PREFIX_CLASSIFIER = "SliceportalIngress.classifier.prefix_classifier"
SLICE_POLICY = "SliceportalIngress.vqueue.slice_policy"
SET_NEXT_HOP = "SliceportalIngress.routing.set_next_hop"
SET_SLICE = "SliceportalIngress.classifier.set_slice"
TAIL_DROP = "SliceportalIngress.vqueue.tail_drop"
ECN_STEP = "SliceportalIngress.vqueue.ecn_step"
METER_POLICY = "SliceportalIngress.vqueue.meter_policy"
CODEL = "SliceportalIngress.vqueue.codel"
CODEL_CONTROL_LAW = "SliceportalIngress.vqueue.codel.codel_control_law"
CODEL_SPACING = "SliceportalIngress.vqueue.codel.codel_spacing"
AQM_DROPPED = "SliceportalIngress.aqm.aqm_dropped"
CODEL_DROPPING_REGISTER = "SliceportalIngress.vqueue.codel.codel_dropping"
CODEL_COUNT_REGISTER = "SliceportalIngress.vqueue.codel.codel_count"
CODEL_LAST_COUNT_REGISTER = "SliceportalIngress.vqueue.codel.codel_last_count"
CODEL_DROP_NEXT_REGISTER = "SliceportalIngress.vqueue.codel.codel_drop_next"
CODEL_FIRST_ABOVE_REGISTER = "SliceportalIngress.vqueue.codel.codel_first_above"
SLICE_METER = "SliceportalIngress.vqueue.slice_meter"
VQ_DROPPED = "SliceportalIngress.vqueue.vq_dropped"
FORWARDED = "SliceportalEgress.monitor.forwarded"
REAL_DROPPED = "SliceportalEgress.monitor.real_dropped"
ECN_MARKED = "SliceportalEgress.monitor.ecn_marked"
VQ_DELAY_HIST = "SliceportalEgress.monitor.vq_delay_hist"
REAL_DELAY_HIST = "SliceportalEgress.monitor.real_delay_hist"
VQ_DELAY_REGISTER = "SliceportalIngress.vqueue.vq_delay"
VQ_LAST_SEEN_REGISTER = "SliceportalIngress.vqueue.vq_last_seen"
ABC = "SliceportalIngress.vqueue.abc"
ABC_METER_DECAY = "SliceportalIngress.vqueue.abc.abc_meter_decay"
ABC_AVERAGE_DECAY = "SliceportalIngress.vqueue.abc.abc_average_decay"
ABC_DECAY = "SliceportalIngress.vqueue.abc.abc_decay"
ABC_LOG2_S = "SliceportalIngress.vqueue.abc.abc_log2_s"
ABC_LOG2_N = "SliceportalIngress.vqueue.abc.abc_log2_n"
ABC_LOG2 = "SliceportalIngress.vqueue.abc.abc_log2"
ABC_RECIPROCAL = "SliceportalIngress.vqueue.abc.abc_reciprocal"
ABC_WEIGHT = "SliceportalIngress.vqueue.abc.abc_weight"
ABC_LOOKUP_TABLES = (ABC_LOG2_S, ABC_LOG2_N, ABC_RECIPROCAL)
"""ABC's function tables (log2 of S and N, 1/count): the same rows for every abc slice."""
ABC_DECAY_TABLES = (ABC_METER_DECAY, ABC_AVERAGE_DECAY)
"""ABC's decay tables: rows per distinct memory (ticks), shared by the slices using it."""
SHARED_TABLES = (CODEL_CONTROL_LAW, *ABC_DECAY_TABLES, *ABC_LOOKUP_TABLES)
"""Tables whose rows belong to no one slice (`SharedRows`)."""
# ABC's registers (include/control/abc.p4): per aggregate (cell dp_sid x 64 + slot) and per
# slice.
ABC_METER_REGISTERS = (
    "SliceportalIngress.vqueue.abc.abc_meter_last",
    "SliceportalIngress.vqueue.abc.abc_meter_s",
    "SliceportalIngress.vqueue.abc.abc_meter_n",
)
ABC_AVERAGE_REGISTERS = (
    "SliceportalIngress.vqueue.abc.abc_average_last",
    "SliceportalIngress.vqueue.abc.abc_average_n",
    "SliceportalIngress.vqueue.abc.abc_a_avg",
)

_BYTE_TIME_NUMERATOR = BITS_PER_BYTE * VQ_UNITS_PER_S
"""byte_time * rate_bps == this: vq units per byte times bits per second."""
_MAC = re.compile(r"[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}")
_ECT = (1, 2)
"""ECN codepoints ECT(1) and ECT(0): the packets that may be marked CE."""


class Scheme(StrEnum):
    """Queue management of a slice: the actions of the slice_policy table. ``meter`` is the
    paper's baseline (Sec. IV-C): a trTCM meter per slice instead of a virtual queue."""

    TAIL_DROP = "tail_drop"
    ECN_STEP = "ecn_step"
    METER = "meter"
    CODEL = "codel"
    ABC = "abc"


class MatchKind(StrEnum):
    EXACT = "exact"
    LPM = "lpm"
    RANGE = "range"


@dataclass(frozen=True)
class FieldMatch:
    """One match field; an LPM field of prefix length 0 is omitted, as P4Runtime requires.
    A range field matches ``value`` .. ``high`` (both included)."""

    field: str
    kind: MatchKind
    value: int
    prefix_len: int | None = None
    high: int | None = None


@dataclass(frozen=True)
class TableEntry:
    """A table entry by P4Info names. ``priority``: only ABC's decay tables need one (a range
    field); their rows never overlap, so every row is written with ``RANGE_PRIORITY``."""

    table: str
    match: tuple[FieldMatch, ...]
    action: str
    params: tuple[tuple[str, int], ...]
    priority: int = 0

    @property
    def key(self) -> tuple[str, tuple[FieldMatch, ...]]:
        """What identifies the entry on the switch: desired and actual are diffed by it."""
        return (self.table, self.match)


def byte_time(rate_bps: float) -> int:
    """The tail_drop/ecn_step ``byte_time`` parameter: vq units per byte at ``rate_bps``.

    Rounded up, so the switch never lets a slice exceed its declared rate.
    """
    rate = exact_number(rate_bps, "rate_bps")
    if not c.RATE_MIN_BPS <= rate <= c.RATE_MAX_BPS:
        raise DataplaneValueError(
            "rate_bps", f"must be in [{c.RATE_MIN_BPS}, {c.RATE_MAX_BPS}] bit/s, got {rate_bps}"
        )
    return math.ceil(_BYTE_TIME_NUMERATOR / rate)


def enforced_rate_bps(units_per_byte: int) -> float:
    """The rate the switch enforces for a ``byte_time`` parameter of ``units_per_byte``."""
    return _BYTE_TIME_NUMERATOR / units_per_byte


def histogram_target(delay_target_s: float) -> int:
    """The ``hist_target`` parameter: a delay target in vq units (rounded down, like C_DELAY),
    capped at the longest the parameter holds (a target beyond it still gets the top bucket
    for "above 4 s")."""
    units = floor_vq_units(delay_target_s, "delay_target_s")
    if units < 0:
        raise DataplaneValueError("delay_target_s", f"must be at least 0, got {delay_target_s}")
    return min(units, c.BURST_LIMIT_MAX_NS * c.VQ_UNITS_PER_NS)


def histogram_edges(target: int) -> tuple[int, ...]:
    """The upper edges of buckets 0-6 for a histogram target in vq units, exactly as
    slice_monitor.p4's ``delay_bucket`` computes them: T/16, T/8, T/4, T/2, T - T/4, T - T/8
    and T, each quotient rounded down. Bucket 7 holds the delays of T and above."""
    return (
        target >> 4,
        target >> 3,
        target >> 2,
        target >> 1,
        target - (target >> 2),
        target - (target >> 3),
        target,
    )


def _prefix(text: object, field: str) -> ipaddress.IPv4Network:
    if not isinstance(text, str):
        raise DataplaneValueError(field, f"must be an IPv4 prefix string, got {text!r}")
    try:
        return ipaddress.IPv4Network(text, strict=True)
    except ValueError as exc:
        raise DataplaneValueError(field, f"not an IPv4 prefix ({exc})") from None


def _lpm(network: ipaddress.IPv4Network) -> tuple[FieldMatch, ...]:
    if network.prefixlen == 0:
        return ()
    return (FieldMatch("ipv4_dst", MatchKind.LPM, int(network.network_address), network.prefixlen),)


def _egress_port(value: object, field: str) -> int:
    port = int_in(value, field, 0, 2**c.PORT_WIDTH - 1)
    if port == c.BMV2_DROP_PORT:
        raise DataplaneValueError(field, f"{port} is BMv2's drop port")
    return port


def min_burst_limit_s(rate_bps: float) -> float:
    """The shortest burst limit that holds one MIN_BURST_FRAME_BYTES frame at ``rate_bps`` (a
    rate the data plane polices), rounded up to 4 significant digits: a limit given as this
    decimal or more is accepted."""
    exact = Fraction(c.MIN_BURST_FRAME_BYTES * byte_time(rate_bps), VQ_UNITS_PER_S)
    scale = Fraction(10) ** (3 - math.floor(math.log10(exact)))
    return float(Fraction(math.ceil(exact * scale)) / scale)


def slice_policy(
    priority: int,
    rate_bps: float,
    burst_limit_s: float,
    scheme: str,
    marking_threshold_s: float | None,
    delay_target_s: float | None = None,
    codel_config: CodelConfig | None = None,
    abc_config: AbcConfig | None = None,
) -> SlicePolicy:
    """The parameters of a slice's slice_policy entry, checked to be workable: what the
    services check before they store a slice, so every stored slice can be deployed.

    A codel slice's target is raised to one full frame's time at the slice rate: RFC 8289
    does not drop while the queue holds at most one MTU (its ``maxpacket`` test)."""
    if scheme not in tuple(Scheme):
        raise DataplaneValueError("scheme", f"must be one of {[s.value for s in Scheme]}")
    bt = byte_time(rate_bps)
    c_delay = vq_units(burst_limit_s, "burst_limit_s")
    if c_delay < c.MIN_BURST_FRAME_BYTES * bt:
        raise DataplaneValueError(
            "burst_limit_s",
            f"must be at least {min_burst_limit_s(rate_bps):g} s at {rate_bps:g} bit/s: "
            f"{burst_limit_s:g} s cannot hold one {c.MIN_BURST_FRAME_BYTES}-byte frame, so "
            "every full-size packet would be dropped",
        )
    m_delay = None
    if scheme == Scheme.ECN_STEP:
        if marking_threshold_s is None:
            raise DataplaneValueError("marking_threshold_s", "ecn_step needs a threshold")
        m_delay = vq_units(marking_threshold_s, "marking_threshold_s")
        if m_delay >= c_delay:
            raise DataplaneValueError(
                "marking_threshold_s", "must be below burst_limit_s, else nothing is marked"
            )
    elif marking_threshold_s is not None:
        raise DataplaneValueError("marking_threshold_s", f"{scheme} marks nothing")
    codel_held = None
    if scheme == Scheme.CODEL:
        if codel_config is None:
            raise DataplaneValueError("codel", "codel needs its parameters")
        if codel_config.target >= c_delay:
            raise DataplaneValueError(
                "codel.target_s", "must be below burst_limit_s, else CoDel never acts"
            )
        if delay_target_s is not None and codel_config.target > floor_vq_units(
            delay_target_s, "delay_target_s"
        ):
            raise DataplaneValueError(
                "codel.target_s", "must be at most the delay target, which it keeps the slice to"
            )
        frame_time = c.MIN_BURST_FRAME_BYTES * bt
        codel_held = dataclasses.replace(codel_config, target=max(codel_config.target, frame_time))
    elif codel_config is not None:
        raise DataplaneValueError("codel", f"{scheme} runs no CoDel")
    abc_params = None
    if scheme == Scheme.ABC:
        if abc_config is None:
            raise DataplaneValueError("abc", "abc needs its parameters")
        try:
            abc_params = abc_config.params(c_delay)
        except DataplaneValueError as exc:
            raise DataplaneValueError(f"abc.{exc.field}", exc.message) from None
    elif abc_config is not None:
        raise DataplaneValueError("abc", f"{scheme} runs no ABC")
    target = burst_limit_s if delay_target_s is None else delay_target_s
    metered = scheme == Scheme.METER
    return SlicePolicy(
        priority, bt, c_delay, m_delay, histogram_target(target), metered, codel_held, abc_params
    )


SCHEME_KEYS = ("scheme", "marking_threshold_s", "codel", "abc")
"""A slice document's queue-management fields (the CLI's analysis input accepts them)."""
_CODEL_KEYS = ("target_s", "interval_s", "ecn_mark")
ABC_KEYS = (
    "meter_memory_s",
    "average_memory_s",
    "reference_rate_bps",
    "q_min_s",
    "q_base_s",
    "gamma_s",
    "key",
    "prefix_length",
)
"""An ``abc`` object's fields, each optional (`abc_config`)."""


def _fields(doc: object, name: str, allowed: tuple[str, ...]) -> Mapping[str, object]:
    """A scheme's parameter object, checked to be an object of known fields."""
    if doc is None:
        return {}
    if not isinstance(doc, Mapping):
        raise DataplaneValueError(name, "must be an object")
    unknown = [key for key in doc if key not in allowed]
    if unknown:
        raise DataplaneValueError(
            f"{name}.{unknown[0]}", f"unknown field (expected one of {', '.join(allowed)})"
        )
    return doc


def abc_config(doc: object, rate_bps: float, burst_limit_s: float) -> AbcConfig:
    """A slice's ABC parameters from its ``abc`` object (None: every default): the paper's
    defaults for what it leaves out, thresholds in seconds at the slice's rate (Q_min and
    Q_base at most the burst limit). Errors name the field as ``abc.<field>``."""
    given = dict(_fields(doc, "abc", ABC_KEYS))
    if "key" in given:
        if given["key"] not in tuple(AggregateKey):
            choices = [k.value for k in AggregateKey]
            raise DataplaneValueError("abc.key", f"must be one of {choices}")
        given["key"] = AggregateKey(str(given["key"]))
    if given.get("key") == AggregateKey.SOURCE_PREFIX and "prefix_length" not in given:
        raise DataplaneValueError("abc.prefix_length", "source_prefix needs a prefix length")
    try:
        return AbcConfig.with_paper_thresholds(rate_bps, burst_limit_s, **given)
    except DataplaneValueError as exc:
        raise DataplaneValueError(f"abc.{exc.field}", exc.message) from None


def check_scheme(doc: Mapping[str, object], spec: SliceSpec, prefix: str = "") -> SlicePolicy:
    """The slice_policy entry the slice of ``spec`` would get with the scheme ``doc`` names
    (``scheme`` tail_drop by default, ``marking_threshold_s`` for ecn_step, ``codel``: target_s,
    interval_s, ecn_mark, each defaulted): the admission checks of a scheme's parameters
    against the slice (a CoDel target above the delay target, a threshold not below the burst
    limit), as `SpecError`s naming the field under ``prefix``."""
    scheme = doc.get("scheme", Scheme.TAIL_DROP)
    codel = doc.get("codel")
    abc = doc.get("abc")
    threshold = doc.get("marking_threshold_s")
    try:
        if scheme not in tuple(Scheme):
            raise DataplaneValueError("scheme", f"must be one of {[s.value for s in Scheme]}")
        given = doc.get("burst_limit_s")  # else the one spec derived from burst_bytes
        burst_limit = (
            given if isinstance(given, float | int) else spec.burst_bytes * 8 / spec.rate_bps
        )
        config = None
        if scheme == Scheme.CODEL:
            config = CodelConfig.from_seconds(**_fields(codel, "codel", _CODEL_KEYS))  # type: ignore[arg-type]
        elif codel is not None:
            raise DataplaneValueError("codel", f"{scheme} runs no CoDel")
        abc_held = None
        if scheme == Scheme.ABC:
            abc_held = abc_config(abc, spec.rate_bps, burst_limit)
        elif abc is not None:
            raise DataplaneValueError("abc", f"{scheme} runs no ABC")
        if threshold is not None and (
            isinstance(threshold, bool) or not isinstance(threshold, int | float)
        ):
            raise DataplaneValueError("marking_threshold_s", "must be a number of seconds")
        return slice_policy(
            spec.priority,
            spec.rate_bps,
            burst_limit,
            str(scheme),
            threshold,
            spec.delay_target_s,
            config,
            abc_held,
        )
    except DataplaneValueError as exc:
        raise SpecError(prefix + exc.field, exc.message) from None


@dataclass(frozen=True)
class DataplaneSlice:
    """A slice as one switch sees it on one egress link; validated on construction.

    ``dp_sid`` ``BEST_EFFORT_DP_SID`` is the best-effort slice: it matches no traffic of its own
    (it gets what nothing else matches) and runs at the lowest priority; defining it only adds
    a virtual queue to best effort.
    """

    dp_sid: int
    name: str
    vlan_id: int | None
    ipv4_dst_prefixes: tuple[str, ...]
    rate_bps: float
    burst_limit_s: float
    priority: int
    scheme: Scheme
    marking_threshold_s: float | None
    egress_port: int
    delay_target_s: float | None = None
    """The SLA's delay target, the top edge of the slice's histograms; None: the burst limit."""
    codel: CodelConfig | None = None
    """A codel slice's CoDel parameters (None for every other scheme)."""
    abc: AbcConfig | None = None
    """An abc slice's ABC parameters (None for every other scheme)."""

    def __post_init__(self) -> None:
        int_in(self.dp_sid, "dp_sid", 0, c.MAX_SLICES - 1)
        if self.vlan_id is not None:
            int_in(self.vlan_id, "vlan_id", c.VLAN_ID_MIN, c.VLAN_ID_MAX)
        if not isinstance(self.ipv4_dst_prefixes, tuple):
            raise DataplaneValueError("ipv4_dst_prefixes", "must be a tuple of prefixes")
        networks = [
            _prefix(p, f"ipv4_dst_prefixes[{i}]") for i, p in enumerate(self.ipv4_dst_prefixes)
        ]
        if len(set(networks)) != len(networks):
            raise DataplaneValueError("ipv4_dst_prefixes", "lists a prefix twice")
        int_in(self.priority, "priority", 0, c.MAX_PRIORITY)
        _egress_port(self.egress_port, "egress_port")
        if self.dp_sid == c.BEST_EFFORT_DP_SID:
            if self.vlan_id is not None or networks:
                raise DataplaneValueError("dp_sid", "the best-effort slice matches no traffic")
            if self.priority != c.BEST_EFFORT_PRIORITY:
                raise DataplaneValueError(
                    "priority", f"the best-effort slice runs at {c.BEST_EFFORT_PRIORITY}"
                )
        elif self.vlan_id is None and not networks:
            raise DataplaneValueError("ipv4_dst_prefixes", "a slice needs a VLAN id or a prefix")
        self.policy()

    def policy(self) -> SlicePolicy:
        """The parameters of this slice's slice_policy entry, checked to be workable."""
        return slice_policy(
            self.priority,
            self.rate_bps,
            self.burst_limit_s,
            self.scheme,
            self.marking_threshold_s,
            self.delay_target_s,
            self.codel,
            self.abc,
        )

    def meter_config(self) -> MeterConfig | None:
        """The slice_meter cell of a meter slice (None for a virtual-queue slice)."""
        if self.scheme != Scheme.METER:
            return None
        rate = exact_number(self.rate_bps, "rate_bps")
        burst = exact_number(self.burst_limit_s, "burst_limit_s")
        cir = math.floor(rate / BITS_PER_BYTE)
        cburst = math.floor(rate * burst / BITS_PER_BYTE)
        return MeterConfig(SLICE_METER, self.dp_sid, cir, cburst, cir, cburst)


@dataclass(frozen=True)
class SlicePolicy:
    """slice_policy action parameters; ``m_delay`` is None for tail_drop."""

    priority: int
    byte_time: int
    c_delay: int
    m_delay: int | None
    hist_target: int
    """The delay target in vq units: the top edge of the slice's delay histograms."""
    metered: bool = False
    """The meter baseline: meter_policy (priority, hist_target); byte_time and c_delay are
    then only the slice's figures, the switch polices with the slice's `MeterConfig`."""
    codel: CodelConfig | None = None
    """The codel action's CoDel parameters, as the switch holds them (target at least one
    frame's time)."""
    abc: AbcParams | None = None
    """The abc action's ABC parameters."""

    @property
    def action(self) -> str:
        if self.metered:
            return METER_POLICY
        if self.codel is not None:
            return CODEL
        if self.abc is not None:
            return ABC
        return TAIL_DROP if self.m_delay is None else ECN_STEP

    @property
    def params(self) -> tuple[tuple[str, int], ...]:
        if self.metered:
            return (("priority", self.priority), ("hist_target", self.hist_target))
        if self.codel is not None:
            return (
                ("priority", self.priority),
                ("byte_time", self.byte_time),
                ("c_delay", self.c_delay),
                ("hist_target", self.hist_target),
                ("target", self.codel.target),
                ("interval", self.codel.interval),
                ("ecn_mark", int(self.codel.ecn_mark)),
            )
        if self.abc is not None:
            return (
                ("priority", self.priority),
                ("byte_time", self.byte_time),
                ("c_delay", self.c_delay),
                ("hist_target", self.hist_target),
                ("q_min", self.abc.q_min),
                ("q_base", self.abc.q_base),
                ("gamma", self.abc.gamma),
                ("activity_offset", self.abc.activity_offset),
                ("meter_memory", self.abc.meter_memory),
                ("average_memory", self.abc.average_memory),
                ("prefix_mask", self.abc.prefix_mask),
            )
        params = [
            ("priority", self.priority),
            ("byte_time", self.byte_time),
            ("c_delay", self.c_delay),
        ]
        if self.m_delay is not None:
            params.append(("m_delay", self.m_delay))
        params.append(("hist_target", self.hist_target))
        return tuple(params)


@dataclass(frozen=True)
class MeterConfig:
    """One cell of an indirect meter, as a P4Runtime MeterEntry (MODIFY) writes it.

    slice_meter is a trTCM (RFC 2698) in bytes, colour-blind. The meter baseline polices a
    slice at its rate with its burst limit as the bucket: CIR = rate / 8 bytes/s and CBS =
    rate x burst_limit / 8 bytes (both rounded down: never above the declared figures), and
    PIR = CIR, PBS = CBS, so the two buckets fill and drain alike, no packet is ever YELLOW and
    RED (dropped) means exactly "out of the slice's profile".
    """

    meter: str
    index: int
    cir: int
    """Committed information rate, bytes per second."""
    cburst: int
    """Committed burst size, bytes."""
    pir: int
    pburst: int

    @property
    def key(self) -> tuple[str, int]:
        return (self.meter, self.index)


def meter_configs(slices: Iterable[DataplaneSlice]) -> tuple[MeterConfig, ...]:
    """The slice_meter cells of the meter slices among ``slices``."""
    return tuple(m for s in slices if (m := s.meter_config()) is not None)


@dataclass(frozen=True)
class Route:
    """An IPv4 route: packets to ``ipv4_dst_prefix`` leave on ``egress_port`` to a next hop."""

    ipv4_dst_prefix: str
    egress_port: int
    next_hop_mac: str

    def __post_init__(self) -> None:
        _prefix(self.ipv4_dst_prefix, "ipv4_dst_prefix")
        _egress_port(self.egress_port, "egress_port")
        if not isinstance(self.next_hop_mac, str) or not _MAC.fullmatch(self.next_hop_mac):
            raise DataplaneValueError(
                "next_hop_mac", f"must look like 02:00:00:00:00:01, got {self.next_hop_mac!r}"
            )


def route_entry(route: Route) -> TableEntry:
    return TableEntry(
        ROUTE_TABLE,
        _lpm(_prefix(route.ipv4_dst_prefix, "ipv4_dst_prefix")),
        SET_NEXT_HOP,
        (
            ("port", route.egress_port),
            ("next_hop_mac", int(route.next_hop_mac.replace(":", ""), 16)),
        ),
    )


EntryKey = tuple[str, tuple[FieldMatch, ...]]
"""`TableEntry.key`: a table and a match."""


def route_key(network: ipaddress.IPv4Network) -> EntryKey:
    """The key of the route of `network`: a switch routes one prefix out of one port."""
    return (ROUTE_TABLE, _lpm(network))


def classifier_keys(
    egress_port: int, vlan_id: int | None, networks: Iterable[ipaddress.IPv4Network]
) -> tuple[EntryKey, ...]:
    """The keys of the classifier entries of a slice matching `vlan_id` and/or `networks` out of
    `egress_port`: one per prefix, or one for a bare VLAN.

    A slice with a VLAN id goes to vlan_classifier (prefix /0 when it lists none), one without
    to prefix_classifier. Public so that the API can refuse a slice whose keys another slice
    holds before the switch would.
    """
    port = FieldMatch("egress_port", MatchKind.EXACT, egress_port)
    matched = list(networks)
    if vlan_id is not None:
        table = VLAN_CLASSIFIER
        head: tuple[FieldMatch, ...] = (port, FieldMatch("vlan_id", MatchKind.EXACT, vlan_id))
        matched = matched or [ipaddress.IPv4Network("0.0.0.0/0")]
    else:
        table, head = PREFIX_CLASSIFIER, (port,)
    return tuple((table, head + _lpm(n)) for n in matched)


def slice_entries(slice_: DataplaneSlice) -> tuple[TableEntry, ...]:
    """The classifier entries of a slice (`classifier_keys`) and its policy; the best-effort
    slice (no VLAN, no prefix) has only its policy. The rows its scheme needs in the
    `SHARED_TABLES` are `shared_rows` of its policy."""
    networks = [ipaddress.IPv4Network(p) for p in slice_.ipv4_dst_prefixes]
    keys = classifier_keys(slice_.egress_port, slice_.vlan_id, networks)
    set_slice = (("dp_sid", slice_.dp_sid),)
    entries = [TableEntry(table, match, SET_SLICE, set_slice) for table, match in keys]
    policy = slice_.policy()
    dp_sid = FieldMatch("dp_sid", MatchKind.EXACT, slice_.dp_sid)
    entries.append(TableEntry(SLICE_POLICY, (dp_sid,), policy.action, policy.params))
    return tuple(entries)


RANGE_PRIORITY = 1
"""The priority of every row of a range table: ABC's rows of one memory never overlap and rows
of other memories differ in the exact field, so any priority gives the same lookups."""


@dataclass(frozen=True)
class SharedRows:
    """A group of rows of one of the `SHARED_TABLES`, a function of ``key`` alone (a CoDel
    interval or an ABC memory in ticks; 0 for ABC's function tables): every slice needing the
    group shares its entries, which are built once per process (up to 42k rows a group)."""

    table: str
    key: int = 0

    @property
    def entries(self) -> tuple[TableEntry, ...]:
        return _shared_entries(self.table, self.key)

    @property
    def memory_field(self) -> str | None:
        """The abc field whose memory a decay group holds rows for (None for other groups)."""
        return {ABC_METER_DECAY: "meter_memory_s", ABC_AVERAGE_DECAY: "average_memory_s"}.get(
            self.table
        )


def shared_rows(policy: SlicePolicy) -> tuple[SharedRows, ...]:
    """The shared row groups a slice_policy action needs installed before it."""
    if policy.codel is not None:
        return (SharedRows(CODEL_CONTROL_LAW, policy.codel.interval),)
    if policy.abc is not None:
        return (
            SharedRows(ABC_METER_DECAY, policy.abc.meter_memory),
            SharedRows(ABC_AVERAGE_DECAY, policy.abc.average_memory),
            *(SharedRows(table) for table in ABC_LOOKUP_TABLES),
        )
    return ()


@functools.cache
def _shared_entries(table: str, key: int) -> tuple[TableEntry, ...]:
    if table == CODEL_CONTROL_LAW:
        return codel_law_entries(key)
    if table in ABC_DECAY_TABLES:
        return abc_decay_entries(table, key)
    if table in ABC_LOOKUP_TABLES:
        return abc_function_entries(table)
    raise ValueError(f"{table} holds no shared rows")


def codel_law_entries(interval: int) -> tuple[TableEntry, ...]:
    """The control-law rows of one interval (ticks)."""
    exact = FieldMatch("interval", MatchKind.EXACT, interval)
    return tuple(
        TableEntry(
            CODEL_CONTROL_LAW,
            (exact, FieldMatch("count", MatchKind.LPM, row.value, row.prefix_len)),
            CODEL_SPACING,
            (("spacing", row.spacing),),
        )
        for row in codel_sqrt_table(interval)
    )


def abc_decay_entries(table: str, memory: int) -> tuple[TableEntry, ...]:
    """The rows of one ABC memory (ticks) in ``table`` (`abc_decay_table`, about 5,500)."""
    exact = FieldMatch("memory", MatchKind.EXACT, memory)
    return tuple(
        TableEntry(
            table,
            (exact, FieldMatch("elapsed", MatchKind.RANGE, row.low, high=row.high)),
            ABC_DECAY,
            (("factor", row.factor), ("ticks", row.low)),
            RANGE_PRIORITY,
        )
        for row in abc_decay_table(memory / TICKS_PER_S)
    )


def abc_function_entries(table: str) -> tuple[TableEntry, ...]:
    """One of ABC's function tables: log2 (of S or of N, `abc_log2_table`, 7,423 rows) or
    1/count (`abc_reciprocal_table`, 41,983 rows)."""
    if table == ABC_RECIPROCAL:
        rows, key, action, param = abc_reciprocal_table().rows, "count", ABC_WEIGHT, "weight"
    else:
        key = {ABC_LOG2_S: "s", ABC_LOG2_N: "n"}[table]
        rows, action, param = abc_log2_table().rows, ABC_LOG2, "value"
    return tuple(
        TableEntry(
            table,
            (FieldMatch(key, MatchKind.LPM, row.prefix, row.prefix_length),),
            action,
            ((param, row.value),),
        )
        for row in rows
    )


def dataplane_entries(
    slices: Iterable[DataplaneSlice], routes: Iterable[Route] = ()
) -> tuple[TableEntry, ...]:
    """Every entry of one switch, refusing two slices (or routes) that claim the same key
    and an ABC memory beyond the decay tables' room (`check_decay_memories`); the shared rows
    the slices' policies need (`shared_rows`) come first, each group once."""
    slices = tuple(slices)
    policies = [s.policy() for s in slices]
    check_decay_memories(policies)
    owner: dict[EntryKey, str] = {}
    groups: dict[SharedRows, None] = {}
    entries: list[TableEntry] = []
    sources: list[tuple[str, str, tuple[TableEntry, ...]]]
    sources = [(f"routes[{i}]", "", (route_entry(r),)) for i, r in enumerate(routes)]
    sources += [(f"slices[{i}]", f" ({s.name})", slice_entries(s)) for i, s in enumerate(slices)]
    for path, label, produced in sources:
        for entry in produced:
            if entry.key in owner:
                field = "dp_sid" if entry.table == SLICE_POLICY else "match"
                raise DataplaneValueError(
                    f"{path}.{field}", f"the same {entry.table} entry as {owner[entry.key]}"
                )
            owner[entry.key] = path + label
            entries.append(entry)
    for policy in policies:
        groups.update(dict.fromkeys(shared_rows(policy)))
    return tuple(entry for group in groups for entry in group.entries) + tuple(entries)


def check_decay_memories(slices: Iterable[DataplaneSlice | SlicePolicy]) -> None:
    """Refuse the slice that would give a decay table rows for more than
    ``ABC_DECAY_MEMORIES`` distinct memories (the table's size; slices of equal memories
    share rows), naming that slice's memory field. A slice may be given by its policy alone
    (the services check one before it has a DP_SID on the switch)."""
    seen: set[SharedRows] = set()
    for i, slice_ in enumerate(slices):
        policy = slice_ if isinstance(slice_, SlicePolicy) else slice_.policy()
        for group in shared_rows(policy):
            if group.memory_field is None:
                continue
            seen.add(group)
            if over_decay_room(seen):
                raise DataplaneValueError(
                    f"slices[{i}].abc.{group.memory_field}",
                    f"a switch holds ABC decay rows for {c.ABC_DECAY_MEMORIES} distinct "
                    f"{group.memory_field} values; use one the switch's other abc slices use",
                )


def over_decay_room(groups: Iterable[SharedRows]) -> str | None:
    """The decay table that ``groups`` give rows for more than ``ABC_DECAY_MEMORIES``
    memories, or None."""
    counts = Counter(group.table for group in groups if group.memory_field is not None)
    return next((t for t, n in counts.items() if n > c.ABC_DECAY_MEMORIES), None)


# --- Reference model of the per-packet arithmetic (vqueue.p4, real_queue.p4) -----------------


def _fits(value: int, width: int) -> int:
    """The P4 value of an intermediate result; a value that does not fit is a bug here."""
    if not 0 <= value < 1 << width:
        raise OverflowError(f"{value} does not fit bit<{width}>")
    return value


@dataclass(frozen=True)
class VirtualQueueState:
    """One slice's registers: vq_delay (vq units) and vq_last_seen (ticks, 0 = no packet)."""

    delay: int = 0
    last_seen: int = 0


def vqueue_step(
    state: VirtualQueueState, now: int, packet_bytes: int, policy: SlicePolicy
) -> tuple[VirtualQueueState, bool]:
    """One packet through the ingress virtual queue: the new registers and whether it passed.

    ``now`` is the ingress timestamp in ticks (modulo 2^TIMESTAMP_WIDTH, as the switch has it).
    """
    elapsed = ticks_since(now, state.last_seen)
    if state.last_seen == 0 or is_before(elapsed):
        elapsed = 0  # first packet, or a timestamp that went backwards
    delay = state.delay
    if elapsed >= c.VQ_ELAPSED_CAP_TICKS:
        delay = 0
    else:
        drained = _fits(elapsed * c.VQ_UNITS_PER_TICK, c.VQ_DELAY_WIDTH)
        delay = 0 if drained >= delay else delay - drained
    tx_time = _fits(packet_bytes * policy.byte_time, c.VQ_DELAY_WIDTH)
    passed = not (delay > policy.c_delay or tx_time > policy.c_delay - delay)
    if passed:
        delay = _fits(delay + tx_time, c.VQ_DELAY_WIDTH)
    return VirtualQueueState(delay, now), passed


def egress_check(
    vq_delay: int, deq_timedelta: int, policy: SlicePolicy, ecn: int
) -> tuple[bool, bool]:
    """(dropped, marked CE) of a packet in egress, deciding on max(virtual, real) delay."""
    worst = max(vq_delay, real_delay_units(deq_timedelta))
    if worst > policy.c_delay:
        return True, False
    marked = policy.m_delay is not None and worst > policy.m_delay and ecn in _ECT
    return False, marked


METER_GREEN, METER_YELLOW, METER_RED = 0, 1, 2
"""v1model's meter colours."""


@dataclass(frozen=True)
class MeterState:
    """One trTCM cell: its committed and peak buckets and the timestamp (ticks) of its last
    packet, 0 for none yet (both buckets are then full, as RFC 2698 starts them).

    Tokens are counted in 1/TICKS_PER_S bytes (microbytes at 1 us ticks), so a rate in bytes per
    second refills exactly ``rate x elapsed ticks`` of them and no rounding happens at all.
    """

    committed: int = 0
    peak: int = 0
    last_seen: int = 0


def meter_step(
    state: MeterState, now: int, packet_bytes: int, config: MeterConfig
) -> tuple[MeterState, int]:
    """One packet through a colour-blind trTCM (RFC 2698, in bytes): the new state and the
    packet's colour. Both buckets refill by the time since the cell's previous packet (none
    for a timestamp that went backwards), capped at their burst sizes; then RED when the peak
    bucket holds fewer tokens than the packet (nothing is taken), YELLOW when the committed one
    does (the peak bucket pays), else GREEN (both pay)."""
    c_cap = config.cburst * TICKS_PER_S
    p_cap = config.pburst * TICKS_PER_S
    if state.last_seen == 0:
        committed, peak = c_cap, p_cap
    else:
        elapsed = ticks_since(now, state.last_seen)
        if is_before(elapsed):
            elapsed = 0
        committed = min(c_cap, state.committed + elapsed * config.cir)
        peak = min(p_cap, state.peak + elapsed * config.pir)
    need = packet_bytes * TICKS_PER_S
    if peak < need:
        color = METER_RED
    elif committed < need:
        color, peak = METER_YELLOW, peak - need
    else:
        color, committed, peak = METER_GREEN, committed - need, peak - need
    return MeterState(committed, peak, now), color


def real_delay_units(deq_timedelta: int) -> int:
    """The real queuing delay (``deq_timedelta`` ticks) in vq units, as egress computes it."""
    return _fits(_fits(deq_timedelta, 32) * c.VQ_UNITS_PER_TICK, c.VQ_DELAY_WIDTH)


def delay_bucket(delay: int, target: int) -> int:
    """Histogram bucket of a delay in vq units for a histogram target in vq units (the P4
    function of the same name)."""
    edges = histogram_edges(target)
    return next((b for b, edge in enumerate(edges) if delay < edge), len(edges))


# --- Monitoring: counter cells to rates, ratios and percentiles -------------------------------


def histogram_index(dp_sid: int, bucket: int) -> int:
    """Cell of (slice, bucket) in vq_delay_hist and real_delay_hist."""
    return (dp_sid << c.HIST_BUCKET_BITS) | bucket


PAIR_COUNTERS = (FORWARDED, VQ_DROPPED, REAL_DROPPED, ECN_MARKED, AQM_DROPPED)
"""The packets-and-bytes counters of a slice, in ``SliceCounters`` order."""


def counter_cells(dp_sid: int) -> tuple[tuple[str, int], ...]:
    """The counter cells of one slice, for a poller that reads only the slices that exist.

    These 5 + 2 x HIST_BUCKETS cells (aqm_dropped counts for codel slices only, and is 0 for
    the others); the adapter reads a whole array instead when most of it is wanted
    (`p4rt.reads.WILDCARD_SHARE`, with BMv2's measured costs).
    """
    int_in(dp_sid, "dp_sid", 0, c.MAX_SLICES - 1)
    cells = [(name, dp_sid) for name in PAIR_COUNTERS]
    for name in (VQ_DELAY_HIST, REAL_DELAY_HIST):
        cells += [(name, histogram_index(dp_sid, b)) for b in range(c.HIST_BUCKETS)]
    return tuple(cells)


@dataclass(frozen=True)
class CounterValue:
    packets: int = 0
    bytes: int = 0


@dataclass(frozen=True)
class SliceCounters:
    """One reading of a slice's counter cells (histograms in bucket order)."""

    forwarded: CounterValue
    vq_dropped: CounterValue
    real_dropped: CounterValue
    ecn_marked: CounterValue
    aqm_dropped: CounterValue
    """Dropped by the slice's queue management (CoDel) before the burst limit."""
    vq_delay_hist: tuple[int, ...]
    real_delay_hist: tuple[int, ...]

    def __post_init__(self) -> None:
        for name in ("vq_delay_hist", "real_delay_hist"):
            if len(getattr(self, name)) != c.HIST_BUCKETS:
                raise DataplaneValueError(name, f"needs {c.HIST_BUCKETS} buckets")
        if any(not isinstance(n, int) or n < 0 for n in self.cells()):
            raise DataplaneValueError("counters", "must be non-negative integers")

    @classmethod
    def from_cells(
        cls, values: Mapping[tuple[str, int], tuple[int, int]], dp_sid: int
    ) -> SliceCounters:
        """The slice's reading out of a read of its `counter_cells` ((name, index) ->
        (packets, bytes); histogram cells count packets)."""
        forwarded, vq_dropped, real_dropped, ecn_marked, aqm_dropped = (
            CounterValue(*values[(name, dp_sid)]) for name in PAIR_COUNTERS
        )
        vq_hist, real_hist = (
            tuple(values[(name, histogram_index(dp_sid, b))][0] for b in range(c.HIST_BUCKETS))
            for name in (VQ_DELAY_HIST, REAL_DELAY_HIST)
        )
        return cls(forwarded, vq_dropped, real_dropped, ecn_marked, aqm_dropped, vq_hist, real_hist)

    @classmethod
    def zero(cls) -> SliceCounters:
        """The reading of a freshly pushed pipeline."""
        empty = (0,) * c.HIST_BUCKETS
        none = CounterValue()
        return cls(none, none, none, none, none, empty, empty)

    def cells(self) -> tuple[int, ...]:
        values: list[int] = []
        for f in fields(self):
            value = getattr(self, f.name)
            values += (value.packets, value.bytes) if isinstance(value, CounterValue) else value
        return tuple(values)


@dataclass(frozen=True)
class DelayBucket:
    """A histogram bucket: [lower_s, upper_s), ``upper_s`` None for the open last one (the
    delays at or above the slice's target)."""

    index: int
    lower_s: float
    upper_s: float | None


@dataclass(frozen=True)
class DelayPercentiles:
    """The buckets holding the 50th, 95th and 99th percentile and the largest delay seen."""

    p50: DelayBucket
    p95: DelayBucket
    p99: DelayBucket
    max: DelayBucket


def histogram_edges_s(target: int) -> tuple[float, ...]:
    """:func:`histogram_edges` in seconds."""
    return tuple(vq_units_to_seconds(edge) for edge in histogram_edges(target))


def delay_percentiles(histogram: Sequence[int], target: int) -> DelayPercentiles | None:
    """Percentile buckets of a delay histogram of target ``target`` (vq units); None when it
    counted no packet.

    A histogram knows a delay only to its bucket, so each percentile is the bucket that holds
    it: "p99 is below upper_s" is exact, a single number would not be.
    """
    edges = histogram_edges_s(target)

    def _bucket(index: int) -> DelayBucket:
        lower = edges[index - 1] if index > 0 else 0.0
        return DelayBucket(index, lower, edges[index] if index < len(edges) else None)

    if len(histogram) != c.HIST_BUCKETS or any(n < 0 for n in histogram):
        raise DataplaneValueError("histogram", f"needs {c.HIST_BUCKETS} non-negative counts")
    total = sum(histogram)
    if total == 0:
        return None

    def at(percent: int) -> DelayBucket:
        running = 0
        for index, count in enumerate(histogram):
            running += count
            if running * 100 >= percent * total:
                return _bucket(index)
        raise AssertionError("unreachable: the running sum reaches the total")

    highest = max(i for i, n in enumerate(histogram) if n)
    return DelayPercentiles(at(50), at(95), at(99), _bucket(highest))


@dataclass(frozen=True)
class SliceStats:
    """What a slice did between two readings. Ratios are 0 when nothing was counted.

    Drop ratios are over the packets offered (forwarded + dropped, whatever dropped them);
    the mark ratio is over the packets forwarded, since only forwarded packets carry a mark.
    """

    throughput_bps: float
    forwarded_pps: float
    offered_bps: float
    vq_drop_ratio: float
    real_drop_ratio: float
    aqm_drop_ratio: float
    mark_ratio: float
    vq_delay: DelayPercentiles | None
    real_delay: DelayPercentiles | None
    counters_reset: bool


def _ratio(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def slice_stats(
    previous: SliceCounters, current: SliceCounters, interval_s: float, hist_target: int
) -> SliceStats:
    """Rates, ratios and delay percentiles over ``interval_s`` between two readings of a slice
    whose histograms have the target ``hist_target`` (vq units).

    Counters only grow (64 bits wrap after decades even at 100 Gbit/s), so a smaller value
    means the switch lost them (restart, pipeline pushed again): then the current reading
    is taken as everything since, and ``counters_reset`` says so.
    """
    if not isinstance(interval_s, int | float) or not interval_s > 0 or math.isinf(interval_s):
        raise DataplaneValueError("interval_s", f"must be a positive duration, got {interval_s!r}")
    reset = any(now < before for now, before in zip(current.cells(), previous.cells(), strict=True))
    base = SliceCounters.zero() if reset else previous

    def delta(name: str) -> CounterValue:
        now, before = getattr(current, name), getattr(base, name)
        return CounterValue(now.packets - before.packets, now.bytes - before.bytes)

    forwarded, vq_dropped = delta("forwarded"), delta("vq_dropped")
    real_dropped, marked = delta("real_dropped"), delta("ecn_marked")
    aqm_dropped = delta("aqm_dropped")
    offered = forwarded.packets + vq_dropped.packets + real_dropped.packets + aqm_dropped.packets
    offered_bytes = forwarded.bytes + vq_dropped.bytes + real_dropped.bytes + aqm_dropped.bytes
    vq_hist = [n - b for n, b in zip(current.vq_delay_hist, base.vq_delay_hist, strict=True)]
    real_hist = [n - b for n, b in zip(current.real_delay_hist, base.real_delay_hist, strict=True)]
    return SliceStats(
        throughput_bps=forwarded.bytes * BITS_PER_BYTE / interval_s,
        forwarded_pps=forwarded.packets / interval_s,
        offered_bps=offered_bytes * BITS_PER_BYTE / interval_s,
        vq_drop_ratio=_ratio(vq_dropped.packets, offered),
        real_drop_ratio=_ratio(real_dropped.packets, offered),
        aqm_drop_ratio=_ratio(aqm_dropped.packets, offered),
        mark_ratio=_ratio(marked.packets, forwarded.packets),
        vq_delay=delay_percentiles(vq_hist, hist_target),
        real_delay=delay_percentiles(real_hist, hist_target),
        counters_reset=reset,
    )
