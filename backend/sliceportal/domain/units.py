"""The data plane's units and the checks every conversion into them shares.

Pure: no I/O. Both ``dataplane`` (slices to entries) and the per-slice schemes (``codel``,
``abc``) convert into these units, so they live below all of them. ``dataplane``'s docstring
explains the choice of units.
"""

from __future__ import annotations

import math
from enum import StrEnum
from fractions import Fraction

from sliceportal.domain import p4constants as c

NS_PER_S = 1_000_000_000
BITS_PER_BYTE = 8
VQ_UNITS_PER_S = NS_PER_S * c.VQ_UNITS_PER_NS
TICKS_PER_S = NS_PER_S // c.TIMESTAMP_TICK_NS
TIMESTAMP_MOD = 1 << c.TIMESTAMP_WIDTH
"""Timestamps and every time computed from them are modulo this, as the switch keeps them."""


class DataplaneValueError(ValueError):
    """A value the data plane cannot hold, naming the field (e.g. ``slices[2].rate_bps``)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message

    def prefixed(self, prefix: str) -> DataplaneValueError:
        """The same error for a field nested under ``prefix`` (e.g. ``slices[3].``)."""
        return DataplaneValueError(prefix + self.field, self.message)


class Verdict(StrEnum):
    """What a per-packet step of a slice's queue management does with the packet."""

    FORWARD = "forward"
    DROP = "drop"
    MARK = "mark"


def int_in(value: object, field: str, low: int, high: int) -> int:
    """``value`` as an integer in [low, high], else the error naming ``field``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise DataplaneValueError(field, f"must be an integer, got {value!r}")
    if not low <= value <= high:
        raise DataplaneValueError(field, f"must be in [{low}, {high}], got {value}")
    return value


def exact_number(value: object, field: str) -> Fraction:
    """``value`` as an exact number: a float is taken as the decimal it prints as."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise DataplaneValueError(field, f"must be a number, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise DataplaneValueError(field, f"must be finite, got {value!r}")
    return Fraction(value) if isinstance(value, int) else Fraction(repr(value))


def vq_units(seconds: float, field: str) -> int:
    """A burst limit or marking threshold in vq units, rounded down (never above declared)."""
    value = exact_number(seconds, field)
    limit = Fraction(c.BURST_LIMIT_MAX_NS, NS_PER_S)
    if not 0 <= value <= limit:
        raise DataplaneValueError(field, f"must be in [0, {float(limit)}] s, got {seconds}")
    return floor_vq_units(seconds, field)


def floor_vq_units(seconds: float, field: str) -> int:
    """``seconds`` (read as the decimal it prints as) in whole vq units, rounded down, with no
    range check: the one conversion behind every threshold the data plane or an alert holds."""
    return math.floor(exact_number(seconds, field) * VQ_UNITS_PER_S)


def vq_units_to_seconds(units: int) -> float:
    return units / VQ_UNITS_PER_S


def ticks_since(now: int, then: int) -> int:
    """``now - then`` in ticks, modulo 2^TIMESTAMP_WIDTH as the switch subtracts timestamps:
    a timestamp wrap in between costs nothing."""
    return (now - then) % TIMESTAMP_MOD


def is_before(elapsed: int) -> bool:
    """Whether a `ticks_since` difference is negative (its top bit set): ``now`` is before
    ``then``, a timestamp that went backwards."""
    return bool(elapsed >> (c.TIMESTAMP_WIDTH - 1))
