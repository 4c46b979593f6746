"""CoDel (RFC 8289) inside a slice: the per-packet reference in the P4 program's integer arithmetic.

Pure: no I/O. The P4 step, the emulator's kernel and the test vectors
(``p4/tests/vectors/steps/codel.json``) all follow ``codel_step`` bit for bit;
``docs/dataplane.md`` ("CoDel inside a slice") explains the choices.

Units and widths (each value fits the BMv2 register or action parameter it will live in):

- The sojourn time is the slice's virtual-queue delay in vq units (2^-16 ns, ``vq_delay``'s
  bit<64>); ``target`` is in the same unit, at most 4 s (< 2^48, a bit<48> parameter like
  ``c_delay``), rounded down like every threshold of the data plane.
- The clock is the ingress timestamp in ticks (``TIMESTAMP_TICK_NS``, 1 us on BMv2), modulo
  2^48. ``interval``, the control-law spacings, ``drop_next`` and ``first_above_time`` are in
  ticks: the first two fit bit<32> (4 s is 4 x 10^6 ticks), the two times are bit<48>
  registers like ``vq_last_seen``. Comparing times in ticks needs no multiplication.
- ``count`` and ``last_count`` are bit<32>; ``count`` saturates at 2^32 - 1 instead of
  wrapping to 0 (a ``?:`` in P4), which no table entry would match.

A time ``a`` is "at or after" ``b`` when ``(a - b) mod 2^48`` has its top bit clear: the
signed difference the virtual queue already uses (``dataplane.ticks_since`` and ``is_before``),
so a timestamp wrap costs nothing.
``first_above_time`` 0 means "not above target" (RFC 8289's sentinel); a deadline that lands
on 0 modulo 2^48 is stored as 1, one tick late.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sliceportal.domain import p4constants as c
from sliceportal.domain.spec import MAX_BURST_LIMIT_S
from sliceportal.domain.units import (
    TICKS_PER_S,
    TIMESTAMP_MOD,
    VQ_UNITS_PER_S,
    DataplaneValueError,
    Verdict,
    floor_vq_units,
    is_before,
    ticks_since,
)

COUNT_WIDTH = 32
COUNT_MAX = (1 << COUNT_WIDTH) - 1
SPACING_WIDTH = 32
"""Bits of ``interval`` and of the control-law table's spacing (ticks)."""
TARGET_WIDTH = 48
EXACT_COUNTS = 16
"""Counts 1..EXACT_COUNTS have an exact (/32) entry in the control-law table."""
REENTRY_INTERVALS = 16
"""RFC 8289: re-entering dropping within 16 intervals of the last drop resumes the old rate."""
TARGET_DEFAULT_S = 0.005
INTERVAL_DEFAULT_S = 0.1
INTERVAL_MIN_S = 0.001
"""Shortest interval: at 1 us ticks its spacings still have three significant digits."""
LPM_MAX_RELATIVE_ERROR = (math.sqrt(2) - 1) / (math.sqrt(2) + 1)
"""Largest |spacing / (interval / sqrt(count)) - 1| of an LPM row (count > 16), before the
rounding to whole ticks: (sqrt 2 - 1) / (sqrt 2 + 1) = 17.2%, approached as count -> 2^(k+1)."""


@dataclass(frozen=True)
class ControlLawRow:
    """One entry of the control-law table: LPM on bit<32> ``count`` -> spacing in ticks.

    Rows for count 1..16 are exact (prefix length 32); row k >= 4 matches the counts whose
    highest set bit is bit k (value 2^k, prefix length 32 - k), i.e. [2^k, 2^(k+1))."""

    value: int
    prefix_len: int
    spacing: int


def _sqrt_table_row(interval: int, low: int, high: int) -> int:
    """interval / sqrt(count) for every count in [low, high] with the least largest relative
    error: 2 * interval / (sqrt low + sqrt high), rounded to the nearest tick, at least 1."""
    spacing = 2 * interval / (math.sqrt(low) + math.sqrt(high))
    return max(1, round(spacing))


def codel_sqrt_table(interval: int) -> tuple[ControlLawRow, ...]:
    """The control-law table the control plane writes for an interval in ticks: 16 exact rows,
    then one row per highest-bit position 4..31 (the exact rows win inside 16..31)."""
    exact = tuple(
        ControlLawRow(n, COUNT_WIDTH, _sqrt_table_row(interval, n, n))
        for n in range(1, EXACT_COUNTS + 1)
    )
    first_bit = EXACT_COUNTS.bit_length() - 1
    lpm = tuple(
        ControlLawRow(
            1 << k,
            COUNT_WIDTH - k,
            _sqrt_table_row(interval, max(1 << k, EXACT_COUNTS + 1), (2 << k) - 1),
        )
        for k in range(first_bit, COUNT_WIDTH)
    )
    return exact + lpm


@dataclass(frozen=True)
class CodelConfig:
    """A slice's CoDel parameters as the switch holds them: ``target`` in vq units,
    ``interval`` in ticks, ``ecn_mark`` (CE-mark ECN-capable packets instead of dropping),
    and the control-law rows of its interval, longest prefix first (``codel_sqrt_table``, or
    whatever the switch's table holds)."""

    target: int
    interval: int
    ecn_mark: bool
    law: tuple[ControlLawRow, ...]

    @classmethod
    def from_seconds(
        cls,
        target_s: float = TARGET_DEFAULT_S,
        interval_s: float = INTERVAL_DEFAULT_S,
        ecn_mark: bool = False,
    ) -> CodelConfig:
        """Validate and convert; each error names its field (``codel.target_s`` ...)."""
        target = floor_vq_units(target_s, "codel.target_s")
        if not 0 < target <= MAX_BURST_LIMIT_S * VQ_UNITS_PER_S:
            raise DataplaneValueError(
                "codel.target_s", f"must be in (0, {MAX_BURST_LIMIT_S}] s, got {target_s}"
            )
        interval = floor_vq_units(interval_s, "codel.interval_s") // c.VQ_UNITS_PER_TICK
        if not INTERVAL_MIN_S * TICKS_PER_S <= interval <= MAX_BURST_LIMIT_S * TICKS_PER_S:
            raise DataplaneValueError(
                "codel.interval_s",
                f"must be in [{INTERVAL_MIN_S}, {MAX_BURST_LIMIT_S}] s, got {interval_s}",
            )
        if not isinstance(ecn_mark, bool):
            raise DataplaneValueError("codel.ecn_mark", f"must be a boolean, got {ecn_mark!r}")
        return cls.from_units(target, interval, ecn_mark)

    @classmethod
    def from_units(cls, target: int, interval: int, ecn_mark: bool) -> CodelConfig:
        """From switch units (vq units, ticks), e.g. as read back from table entries."""
        return cls(target, interval, ecn_mark, by_prefix_length(codel_sqrt_table(interval)))

    def spacing(self, count: int) -> int | None:
        """The control-law table's answer for ``count``: its longest matching row's spacing,
        interval / sqrt(count) in ticks with the standard rows; None when no row matches."""
        for row in self.law:
            shift = COUNT_WIDTH - row.prefix_len
            if count >> shift == row.value >> shift:
                return row.spacing
        return None


def by_prefix_length(rows: tuple[ControlLawRow, ...]) -> tuple[ControlLawRow, ...]:
    """Rows in lookup order: longest prefix first (the first match is the longest)."""
    return tuple(sorted(rows, key=lambda row: (-row.prefix_len, row.value)))


@dataclass(frozen=True)
class CodelState:
    """One slice's CoDel registers, by RFC 8289's names (times in ticks modulo 2^48)."""

    dropping: bool = False
    count: int = 0
    last_count: int = 0
    drop_next: int = 0
    first_above_time: int = 0


def codel_step(
    state: CodelState, config: CodelConfig, now: int, sojourn: int, ecn_capable: bool
) -> tuple[CodelState, Verdict]:
    """One packet through CoDel: RFC 8289's ``dequeue`` for a pipeline that sees each packet
    once (the RFC's loop over further packets at the same instant becomes the next packets'
    steps). ``now`` is the ingress timestamp in ticks, ``sojourn`` the slice's virtual-queue
    delay in vq units that the packet waits behind."""
    first_above = state.first_above_time
    ok_to_drop = False
    if sojourn < config.target:
        first_above = 0
    elif first_above == 0:
        first_above = (now + config.interval) % TIMESTAMP_MOD or 1
    else:
        ok_to_drop = not is_before(ticks_since(now, first_above))

    dropping, count = state.dropping, state.count
    last_count, drop_next = state.last_count, state.drop_next
    signal = False
    entering = False
    if dropping:
        if not ok_to_drop:
            dropping = False
        elif not is_before(ticks_since(now, drop_next)):
            signal = True
            count = min(count + 1, COUNT_MAX)
    elif ok_to_drop:
        signal, dropping, entering = True, True, True
        delta = (count - last_count) % (1 << COUNT_WIDTH)
        since = ticks_since(now, drop_next)
        recent = since < REENTRY_INTERVALS * config.interval or is_before(since)
        count = delta if delta > 1 and recent else 1
        last_count = count
    spacing = config.spacing(count) if signal else None
    if spacing is not None:  # the control-law table's action; no row: drop_next stays
        drop_next = ((now if entering else drop_next) + spacing) % TIMESTAMP_MOD

    verdict = Verdict.FORWARD
    if signal:
        verdict = Verdict.MARK if config.ecn_mark and ecn_capable else Verdict.DROP
    return CodelState(dropping, count, last_count, drop_next, first_above), verdict
