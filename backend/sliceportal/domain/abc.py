"""Activity-based congestion management (P4-ABC) inside a slice, in the P4 program's fixed point.

The paper (Menth et al., 2019) meters each aggregate of a slice (a source host or prefix) and
drops a packet when the slice's queue exceeds a threshold that falls with the packet's activity.
It used floating-point externs; this module is the integer reference of the same arithmetic on
stock BMv2, step for step as the P4 program will do it. The float equations:

TDRM-UTEMA rate meter (Menth & Hauser 2017), memory ``M`` (``beta = 1/M``), measurement start
``t_0``, packet ``i`` of ``X_i`` bytes at ``t_i``::

    f_i = exp(-(t_i - t_{i-1}) / M)
    S_i = f_i * S_{i-1} + X_i                 # time-decayed bytes
    N_i = f_i * N_{i-1} + (1 - f_i) * M       # = M * (1 - exp(-(t_i - t_0)/M)), decayed time
    R_i = S_i / N_i                           # the rate, unbiased from t_0 on

Activity ``A = log2(R / R_r)``. UTEMA of the accepted packets' activities, memory ``M_AA``::

    N_i = f_i * N_{i-1} + [accepted]          # decayed count
    A_avg_i = A_avg_{i-1} + [accepted] * (A_i - A_avg_{i-1}) / N_i     # = S_i / N_i

Drop when ``Q > T_drop = max(Q_min, Q_base - gamma * (A - A_avg))``, with ``T_drop`` capped at
the slice's burst limit (which stays the hard cap).

Fixed point (``docs/dataplane.md``, "ABC inside a slice", states widths and measured errors):

- Time is BMv2's ``ingress_global_timestamp`` (µs ticks, 48 bits, differences modulo 2^48).
  ``t_0`` is the switch's start (registers start at zero), as in the paper's meter.
- ``f`` comes from a range table on the elapsed ticks (``abc_decay_table``) in Q48, valued at
  the row's low end; ``last`` advances by those ticks only, so the rest of the gap is carried
  to the next packet instead of lost (see ``abc_decay_table``).
- ``S`` is bytes in Q16, ``N`` is µs in Q16 (both bit<64>); products are taken in bit<128>.
- ``log2`` of ``S`` and ``N`` comes from one LPM table each (``abc_log2_table``): the prefix is
  the leading zeros, the leading one and ``LOG2_MANTISSA_BITS`` mantissa bits; the value is
  log2 of the interval's midpoint in Q8. ``1/N`` for the average comes from the same kind of
  table (``abc_reciprocal_table``, Q32, exact at the rows' low ends).
- Activities are Q8 with a bias of ``ACTIVITY_BIAS`` so all arithmetic is unsigned, clamped to
  ``[0, ACTIVITY_MAX]`` (activity -64 .. +64).
- Thresholds are vq units (2^-16 ns of the slice's queueing delay, as in ``dataplane``).

Each register read-modify-write is one function below, i.e. one P4 action.
"""

from __future__ import annotations

import ipaddress
import math
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from sliceportal.domain import p4constants as c
from sliceportal.domain.spec import MAX_BURST_LIMIT_S
from sliceportal.domain.units import (
    TICKS_PER_S,
    TIMESTAMP_MOD,
    VQ_UNITS_PER_S,
    DataplaneValueError,
    Verdict,
    floor_vq_units,
    ticks_since,
)

DECAY_FRAC_BITS = 48
"""``f*S`` must stay exact to a fraction of the smallest packet (2^6 bytes) while S reaches
2^40 bytes; in Q31 the factor after a gap of 20 memories is 4 units, and 1.4 of activity off."""
DECAY_ONE = 1 << DECAY_FRAC_BITS
DECAY_EXACT_TICKS = 1024
DECAY_ROWS_PER_OCTAVE = 64
DECAY_ROWS_PER_MEMORY = 128

STATE_FRAC_BITS = 16
STATE_WIDTH = 64
STATE_MAX = (1 << STATE_WIDTH) - 1

ACTIVITY_FRAC_BITS = 8
ACTIVITY_ONE = 1 << ACTIVITY_FRAC_BITS
ACTIVITY_BIAS = 64 * ACTIVITY_ONE
ACTIVITY_MAX = 128 * ACTIVITY_ONE - 1
ACTIVITY_MASK = (1 << c.ABC_ACTIVITY_WIDTH) - 1
LOG2_MANTISSA_BITS = 7

RECIPROCAL_FRAC_BITS = 32
RECIPROCAL_MANTISSA_BITS = 10
COUNT_WIDTH = 50
"""Bits a Q16 packet count can reach: 400 Gbit/s of 64-byte frames over a 10 s memory is
under 2^33 packets."""
AVERAGE_EXTRA_BITS = 32
"""Fractional bits the activity average keeps below Q8, so a step of weight 1/N (N up to
2^33 packets) is not lost to rounding."""
GAMMA_FRAC_BITS = 16

AGGREGATE_SLOTS = 64
"""Meter slots per slice: the aggregate key hashes (CRC-32) into one of these."""

METER_MEMORY_DEFAULT_S = 3.0
AVERAGE_MEMORY_DEFAULT_S = 0.3
REFERENCE_RATE_DEFAULT_BPS = 10_000.0
MEMORY_MIN_S = 0.001
MEMORY_MAX_S = 10.0
REFERENCE_RATE_MIN_BPS = 1.0
REFERENCE_RATE_MAX_BPS = float(c.RATE_MAX_BPS)


class AggregateKey(StrEnum):
    SOURCE_ADDRESS = "source_address"
    SOURCE_PREFIX = "source_prefix"


PAPER_PACKET_BYTES = 1500
PAPER_THRESHOLDS_PACKETS = (6, 20, 16)
"""The paper's Q_min, Q_base and gamma, in packets of ``PAPER_PACKET_BYTES``."""


def _in_range(value: float, field: str, low: float, high: float, unit: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise DataplaneValueError(field, f"must be a number of {unit}, got {value!r}")
    if not math.isfinite(value) or not low <= value <= high:
        raise DataplaneValueError(field, f"must be in [{low}, {high}] {unit}, got {value}")


@dataclass(frozen=True)
class AbcConfig:
    """One slice's ABC parameters as the operator gives them, validated; `params` gives the
    abc action's integers for a slice of a given burst limit."""

    meter_memory_s: float = METER_MEMORY_DEFAULT_S
    average_memory_s: float = AVERAGE_MEMORY_DEFAULT_S
    reference_rate_bps: float = REFERENCE_RATE_DEFAULT_BPS
    q_min_s: float = 0.0
    q_base_s: float = 0.0
    gamma_s: float = 0.0
    key: AggregateKey = AggregateKey.SOURCE_ADDRESS
    prefix_length: int = 32

    def __post_init__(self) -> None:
        _in_range(self.meter_memory_s, "meter_memory_s", MEMORY_MIN_S, MEMORY_MAX_S, "s")
        _in_range(self.average_memory_s, "average_memory_s", MEMORY_MIN_S, MEMORY_MAX_S, "s")
        _in_range(
            self.reference_rate_bps,
            "reference_rate_bps",
            REFERENCE_RATE_MIN_BPS,
            REFERENCE_RATE_MAX_BPS,
            "bit/s",
        )
        for name in ("q_min_s", "q_base_s"):
            _in_range(getattr(self, name), name, 0.0, MAX_BURST_LIMIT_S, "s")
        if self.q_base_s < self.q_min_s:
            raise DataplaneValueError("q_base_s", "must be at least q_min_s")
        _in_range(self.gamma_s, "gamma_s", 0.0, MAX_BURST_LIMIT_S, "s per unit of activity")
        if self.key not in tuple(AggregateKey):
            raise DataplaneValueError("key", f"must be one of {[k.value for k in AggregateKey]}")
        low = 0 if self.key == AggregateKey.SOURCE_PREFIX else 32
        if (
            isinstance(self.prefix_length, bool)
            or not isinstance(self.prefix_length, int)
            or not low <= self.prefix_length <= 32
        ):
            raise DataplaneValueError("prefix_length", f"must be an integer in [{low}, 32]")

    @classmethod
    def with_paper_thresholds(
        cls, rate_bps: float, burst_limit_s: float, **given: Any
    ) -> AbcConfig:
        """The paper's defaults for what ``given`` leaves out: its thresholds as the delays of
        6, 20 and 16 full-size packets at the slice's rate (1.44, 4.8 and 3.84 ms at the
        paper's 50 Mbit/s), Q_min and Q_base at most the burst limit."""
        _in_range(rate_bps, "rate_bps", c.RATE_MIN_BPS, c.RATE_MAX_BPS, "bit/s")
        q_min, q_base, gamma = (
            n * PAPER_PACKET_BYTES * 8 / rate_bps for n in PAPER_THRESHOLDS_PACKETS
        )
        defaults = {
            "q_min_s": min(q_min, burst_limit_s),
            "q_base_s": min(q_base, burst_limit_s),
            "gamma_s": gamma,
        }
        for name in ("q_min_s", "q_base_s"):  # checked here: the defaults compare with them
            if name in given:
                _in_range(given[name], name, 0.0, MAX_BURST_LIMIT_S, "s")
        if "q_min_s" in given and "q_base_s" not in given:
            defaults["q_base_s"] = max(defaults["q_base_s"], given["q_min_s"])
        if "q_base_s" in given and "q_min_s" not in given:
            defaults["q_min_s"] = min(defaults["q_min_s"], given["q_base_s"])
        return cls(**(defaults | given))

    @property
    def prefix_mask(self) -> int:
        """The aggregate's source prefix as a 32-bit mask (all ones: per source address)."""
        return (0xFFFFFFFF << (32 - self.prefix_length)) & 0xFFFFFFFF

    def params(self, c_delay: int) -> AbcParams:
        """The abc action's data for a slice whose burst limit is ``c_delay`` vq units; a
        threshold above it is refused (T_drop never admits what the virtual queue would not)."""
        for name in ("q_min_s", "q_base_s"):
            if floor_vq_units(getattr(self, name), name) > c_delay:
                raise DataplaneValueError(name, "must be at most the slice's burst_limit_s")
        per_step = self.gamma_s * VQ_UNITS_PER_S / ACTIVITY_ONE
        reference = math.log2(self.reference_rate_bps / 8 / TICKS_PER_S)
        return AbcParams(
            q_min=floor_vq_units(self.q_min_s, "q_min_s"),
            q_base=floor_vq_units(self.q_base_s, "q_base_s"),
            gamma=round(per_step * (1 << GAMMA_FRAC_BITS)),
            activity_offset=ACTIVITY_BIAS - round(reference * ACTIVITY_ONE),
            meter_memory=round(self.meter_memory_s * TICKS_PER_S),
            average_memory=round(self.average_memory_s * TICKS_PER_S),
            prefix_mask=self.prefix_mask,
            c_delay=c_delay,
        )


@dataclass(frozen=True)
class AbcParams:
    """A slice's ABC as the switch holds it: the abc action's data, all integers.

    ``q_min``, ``q_base``: vq units; ``gamma``: vq units per Q8 activity step, Q16
    (``gamma*dA = gamma_fx*dA_q8 >> 16``); ``activity_offset``: ``ACTIVITY_BIAS - log2(R_r in
    bytes/tick)`` in Q8, added to log2 S - log2 N; the memories in ticks (the decay tables'
    key); ``prefix_mask`` the aggregate's source mask; ``c_delay`` the burst limit the same
    action carries, which caps T_drop.
    """

    q_min: int
    q_base: int
    gamma: int
    activity_offset: int
    meter_memory: int
    average_memory: int
    prefix_mask: int
    c_delay: int


@dataclass(frozen=True)
class DecayRow:
    """Elapsed ticks ``low .. high`` decay by ``factor`` = ``exp(-low/M)``; 0 on the last row.
    ``ticks``: what the row's action says it decays by, None for its low end (every row the
    control plane writes; a switch may hold others)."""

    low: int
    high: int
    factor: int
    ticks: int | None = None


def abc_decay_table(memory_s: float) -> tuple[DecayRow, ...]:
    """Range rows on elapsed ticks -> ``exp(-low/M)`` in Q48, covering 0 .. 2^48 - 1.

    Exact per tick below ``DECAY_EXACT_TICKS``; above, rows ``1/DECAY_ROWS_PER_OCTAVE`` of
    an octave wide but at most ``M/DECAY_ROWS_PER_MEMORY``. A row valued anywhere but at the
    exact gap decays by a slightly wrong time, and over many gaps those errors added up (a
    constant gap repeats the same one): 0.2 of activity after 40 gaps of M/2. So each row is
    exact for its low end, the meter decays by exactly those ticks and keeps the rest of the
    gap (under 1/64 of it and under ``M/128``) for the next packet: the state lags the clock
    by less than one row, whatever came before. The last row (factor 0, the only one: abc.p4
    reads factor 0 as "the whole gap", see ``decay_step``) starts where the factor rounds to
    zero, about 34 M, and decays by the whole gap: 5,300-5,900 rows for memories of 1 ms to
    10 s.
    """
    _in_range(memory_s, "memory_s", MEMORY_MIN_S, MEMORY_MAX_S, "s")
    memory_ticks = memory_s * TICKS_PER_S

    def factor(ticks: int) -> int:
        return round(math.exp(-ticks / memory_ticks) * DECAY_ONE)

    widest = math.floor(memory_ticks / DECAY_ROWS_PER_MEMORY)
    rows = [DecayRow(t, t, factor(t)) for t in range(DECAY_EXACT_TICKS)]
    low = DECAY_EXACT_TICKS
    while low < TIMESTAMP_MOD:
        step = max(1, min(low // DECAY_ROWS_PER_OCTAVE, widest))
        high = min(low + step - 1, TIMESTAMP_MOD - 1)
        value = factor(low)
        if value == 0:
            rows.append(DecayRow(low, TIMESTAMP_MOD - 1, 0))
            break
        rows.append(DecayRow(low, high, value))
        low = high + 1
    return tuple(rows)


def decay_row(table: tuple[DecayRow, ...], ticks: int) -> DecayRow | None:
    """The range-table lookup over rows sorted by ``low`` that do not overlap (what the
    control plane writes): bisect on ``low``; None where no row covers ``ticks``."""
    lo, hi = 0, len(table) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if table[mid].low <= ticks:
            lo = mid
        else:
            hi = mid - 1
    if not table or not table[lo].low <= ticks <= table[lo].high:
        return None
    return table[lo]


def decay_step(table: tuple[DecayRow, ...], elapsed: int) -> tuple[int, int]:
    """The factor for ``elapsed`` ticks and the ticks it decays by: the row's low end, or all
    of ``elapsed`` on the last row, where nothing is left to decay and so nothing to carry.
    No row (a memory without rows): the table's default, factor 0, so the whole gap too."""
    row = decay_row(table, elapsed)
    if row is None or row.factor == 0:
        return 0, elapsed
    return row.factor, row.low if row.ticks is None else row.ticks


@dataclass(frozen=True)
class LpmRow:
    """``value`` for keys whose top ``prefix_length`` bits (of ``width``) equal ``prefix``'s."""

    prefix: int
    prefix_length: int
    value: int


@dataclass(frozen=True)
class MantissaTable:
    """An LPM table with one row per leading-one position and mantissa: a function by lookup.

    A key's longest matching row is the one with its leading one and its next
    ``min(mantissa_bits, msb)`` bits (its *cell*), so ``lookup`` finds it directly; zero
    matches no row and gets the default action's 0. Rows of another shape (a switch may hold
    any) are found by a plain longest-prefix search instead.
    """

    width: int
    mantissa_bits: int
    rows: tuple[LpmRow, ...]
    _index: Mapping[tuple[int, int], int] = field(init=False, repr=False, compare=False)
    _lengths: tuple[int, ...] = field(init=False, repr=False, compare=False)
    """Prefix lengths present, longest first; empty when every row is a whole cell."""

    def __post_init__(self) -> None:
        index = {(row.prefix, row.prefix_length): row.value for row in self.rows}
        object.__setattr__(self, "_index", index)
        cells = all(self.is_cell(row) for row in self.rows)
        lengths = () if cells else sorted({r.prefix_length for r in self.rows}, reverse=True)
        object.__setattr__(self, "_lengths", tuple(lengths))

    @classmethod
    def build(
        cls, width: int, mantissa_bits: int, fn: Callable[[int, int], int], key_bits: int = 0
    ) -> MantissaTable:
        """Rows for keys below ``2^key_bits`` (all of ``width`` when 0)."""
        rows = []
        for msb in range(key_bits or width):
            bits = min(mantissa_bits, msb)
            span = 1 << (msb - bits)
            for mantissa in range(1 << bits):
                low = ((1 << bits) | mantissa) * span
                rows.append(LpmRow(low, width - msb + bits, fn(low, span)))
        return cls(width, mantissa_bits, tuple(rows))

    def cell_length(self, key: int) -> int:
        """The prefix length of the cell of ``key`` (> 0)."""
        msb = key.bit_length() - 1
        return self.width - msb + min(self.mantissa_bits, msb)

    def is_cell(self, row: LpmRow) -> bool:
        """True when ``row`` covers exactly one cell (the rows `build` makes)."""
        kept = row.prefix >> (self.width - row.prefix_length) if row.prefix_length else 0
        return kept != 0 and row.prefix_length == self.cell_length(row.prefix)

    def lookup(self, key: int) -> int:
        if self._lengths:
            for length in self._lengths:
                shift = self.width - length
                found = self._index.get((key >> shift << shift, length))
                if found is not None:
                    return found
            return 0
        if key == 0:
            return 0
        length = self.cell_length(key)
        shift = self.width - length
        return self._index.get((key >> shift << shift, length), 0)


def abc_log2_table(width: int = STATE_WIDTH) -> MantissaTable:
    """log2 of the interval's midpoint in Q8 (``LOG2_MANTISSA_BITS`` mantissa bits)."""
    return MantissaTable.build(
        width,
        LOG2_MANTISSA_BITS,
        lambda low, span: round(math.log2(low + (span - 1) / 2) * ACTIVITY_ONE),
    )


def abc_reciprocal_table(width: int = STATE_WIDTH) -> MantissaTable:
    """``1/n`` in Q32 for a Q16 count ``n`` below ``2^COUNT_WIDTH`` (1.0 for ``n <= 1``).

    Valued at the row's low end, so whole counts up to ``2^RECIPROCAL_MANTISSA_BITS`` (the
    first packets after an idle period) get their exact weight.
    """
    scale = 1 << (RECIPROCAL_FRAC_BITS + STATE_FRAC_BITS)
    return MantissaTable.build(
        width,
        RECIPROCAL_MANTISSA_BITS,
        lambda low, _span: min(round(scale / low), 1 << RECIPROCAL_FRAC_BITS),
        COUNT_WIDTH,
    )


def _decay(value: int, factor: int) -> int:
    return (value * factor) >> DECAY_FRAC_BITS


@dataclass(frozen=True)
class MeterState:
    """Registers of one aggregate slot: the time S and N are decayed to (bit<48>, the last
    arrival less the part of its gap carried forward), S (bit<64>), N (bit<64>)."""

    last: int = 0
    bytes_q16: int = 0
    time_q16: int = 0


@dataclass(frozen=True)
class AbcTables:
    """The tables the control plane writes for one slice's memories."""

    meter_decay: tuple[DecayRow, ...]
    average_decay: tuple[DecayRow, ...]
    log2_s: MantissaTable
    log2_n: MantissaTable
    reciprocal: MantissaTable

    @classmethod
    def for_config(cls, config: AbcConfig) -> AbcTables:
        log2 = abc_log2_table()
        return cls(
            abc_decay_table(config.meter_memory_s),
            abc_decay_table(config.average_memory_s),
            log2,
            log2,
            abc_reciprocal_table(),
        )


def abc_meter_step(
    state: MeterState, params: AbcParams, tables: AbcTables, now: int, packet_bytes: int
) -> tuple[MeterState, int]:
    """One packet through its aggregate's meter: the new state and its biased Q8 activity.

    P4: action ``meter_time`` (read ``last``) -> range table ``meter_decay`` (f and the ticks
    it decays by) -> action ``meter_update`` (RMW ``last``, ``S`` and ``N`` together, bit<128>
    products) -> LPM ``log2_bytes`` and ``log2_time`` on the updated S and N -> action
    ``set_activity``.
    """
    elapsed = ticks_since(now, state.last)
    factor, decayed_ticks = decay_step(tables.meter_decay, elapsed)
    memory = params.meter_memory << STATE_FRAC_BITS
    decayed = _decay(state.bytes_q16, factor) + (packet_bytes << STATE_FRAC_BITS)
    bytes_q16 = min(decayed, STATE_MAX)
    time_q16 = memory - _decay(memory - state.time_q16, factor)
    new = MeterState((state.last + decayed_ticks) % TIMESTAMP_MOD, bytes_q16, time_q16)
    return new, abc_activity(params, tables, bytes_q16, time_q16)


def abc_activity(params: AbcParams, tables: AbcTables, bytes_q16: int, time_q16: int) -> int:
    """``log2(S/N / R_r)`` biased Q8, clamped; N = 0 (a packet at t_0) counts as the maximum."""
    if time_q16 == 0:
        return ACTIVITY_MAX
    log_bytes = tables.log2_s.lookup(bytes_q16)
    log_time = tables.log2_n.lookup(time_q16)
    activity = log_bytes + params.activity_offset
    if activity <= log_time:
        return 0
    return min(activity - log_time, ACTIVITY_MAX)


@dataclass(frozen=True)
class SliceState:
    """Registers of one slice's activity average: the time N is decayed to (bit<48>, as in
    ``MeterState``), N (bit<64>, Q16) and A_avg (bit<64>, biased Q8 with ``AVERAGE_EXTRA_BITS``
    more)."""

    last: int = 0
    count_q16: int = 0
    average: int = ACTIVITY_BIAS << AVERAGE_EXTRA_BITS


def drop_threshold(params: AbcParams, activity: int, average: int) -> int:
    """``min(burst, max(Q_min, Q_base - gamma*(A - A_avg)))`` in vq units (action data)."""
    if activity >= average:
        cut = (params.gamma * (activity - average)) >> GAMMA_FRAC_BITS
        threshold = params.q_base - cut if cut < params.q_base else 0
    else:
        threshold = params.q_base + ((params.gamma * (average - activity)) >> GAMMA_FRAC_BITS)
    return min(params.c_delay, max(params.q_min, threshold))


def abc_slice_step(
    state: SliceState,
    params: AbcParams,
    tables: AbcTables,
    now: int,
    activity: int,
    queue_delay: int,
) -> tuple[SliceState, Verdict]:
    """The slice's decision for a packet of ``activity`` with the queue at ``queue_delay``.

    P4: action ``average_time`` (read ``last``) -> range table ``average_decay`` (f and the
    ticks it decays by) -> read ``A_avg``, compare with ``drop_threshold`` -> action
    ``average_count`` (RMW ``last`` and ``N``: decay, plus one when accepted) -> LPM
    ``reciprocal`` on N -> action ``average_update`` (RMW ``A_avg``, only when accepted).
    """
    elapsed = ticks_since(now, state.last)
    factor, decayed_ticks = decay_step(tables.average_decay, elapsed)
    average_q8 = (state.average >> AVERAGE_EXTRA_BITS) & ACTIVITY_MASK  # abc_activity_t
    threshold = drop_threshold(params, activity, average_q8)
    accepted = queue_delay <= threshold
    count = _decay(state.count_q16, factor) + (1 << STATE_FRAC_BITS if accepted else 0)
    count &= STATE_MAX  # bit<64>: wraps only for a count no packet sequence reaches
    average = state.average
    if accepted:
        weight = tables.reciprocal.lookup(count)
        sample = activity << AVERAGE_EXTRA_BITS
        step = (weight * abs(sample - average)) >> RECIPROCAL_FRAC_BITS
        average = (average + step if sample >= average else average - step) & STATE_MAX
    verdict = Verdict.FORWARD if accepted else Verdict.DROP
    last = (state.last + decayed_ticks) % TIMESTAMP_MOD
    return SliceState(last, count, average), verdict


def aggregate_slot(prefix_mask: int, dp_sid: int, source: ipaddress.IPv4Address) -> int:
    """Register index of a packet's aggregate: ``dp_sid * AGGREGATE_SLOTS + crc32(key) % slots``.

    The key is the source address masked by ``prefix_mask`` (all ones: the address). Two
    aggregates in one slot share a meter: their summed rate only raises both activities.
    """
    key = (int(source) & prefix_mask).to_bytes(4, "big")
    return dp_sid * AGGREGATE_SLOTS + zlib.crc32(key) % AGGREGATE_SLOTS
