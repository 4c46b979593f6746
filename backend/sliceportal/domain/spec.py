"""Slice specifications and the validation of the CLI/API input document.

Every number that enters the analytics passes through here, so the rest of the package can assume
finite, positive, bounded values. The upper limits are far beyond any real link; they exist so that
sums over thousands of slices can never overflow to infinity and turn into a wrong verdict.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

NUM_LEVELS = 8
TOP_PRIORITY = NUM_LEVELS - 1
DEFAULT_MTU_BYTES = 1500

MAX_RATE_BPS = 1e15
"""1 Pbit/s: above any link, low enough that 10^6 summed rates stay exact-ish and finite."""
MAX_TIME_S = 1e6
MAX_BURST_BYTES = 1e21
MAX_PACKET_BYTES = 1_000_000
MAX_NAME_LENGTH = 255

_LINK_KEYS = ("capacity_bps", "mtu_bytes", "slices")
_SLICE_KEYS = (
    "name",
    "rate_bps",
    "priority",
    "burst_limit_s",
    "burst_bytes",
    "delay_target_s",
    "max_packet_bytes",
)


class Model(StrEnum):
    """Which worst-case delay bound to compute."""

    HARKOUS = "harkous"
    """The paper's busy-period equations (1)-(4)."""
    NETCALC = "netcalc"
    """Strict-priority, non-preemptive network calculus: more conservative, provably safe."""


class SpecError(ValueError):
    """Invalid input, naming the offending field (e.g. ``slices[2].rate_bps``)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message

    def prefixed(self, prefix: str) -> SpecError:
        """The same error for a field nested under ``prefix`` (e.g. ``slices[3].``)."""
        return SpecError(prefix + self.field, self.message)


def check_number(
    value: object,
    field: str,
    *,
    maximum: float,
    allow_zero: bool,
) -> float:
    """A finite real in (0, maximum] (or [0, maximum] with ``allow_zero``), as a float."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise SpecError(field, "must be a number")
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):
        raise SpecError(field, "must be a finite number")
    if number < 0 or (number == 0 and not allow_zero):
        raise SpecError(field, "must be at least 0" if allow_zero else "must be greater than 0")
    if number > maximum:
        raise SpecError(field, f"must be at most {maximum:g}")
    return number


def check_integer(value: object, field: str, *, minimum: int, maximum: int) -> int:
    """An integer (not a bool, not 1.0) in [minimum, maximum]."""
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Integral)
        or not minimum <= int(value) <= maximum
    ):
        raise SpecError(field, f"must be an integer from {minimum} to {maximum}")
    return int(value)


def check_capacity(value: object, field: str = "capacity_bps") -> float:
    """A link capacity in bit/s."""
    return check_number(value, field, maximum=MAX_RATE_BPS, allow_zero=False)


def check_levels(value: object, field: str = "levels") -> int:
    """A number of hardware priority queues."""
    return check_integer(value, field, minimum=1, maximum=NUM_LEVELS)


def _check_name(value: object, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise SpecError(field, "must be a non-empty string")
    if len(value) > MAX_NAME_LENGTH:
        raise SpecError(field, f"must be at most {MAX_NAME_LENGTH} characters")
    return value


@dataclass(frozen=True, slots=True)
class SliceSpec:
    """One slice as the analytics sees it on one link: rate, priority, burst and delay target.

    Construction validates, so an invalid SliceSpec cannot exist; build from user input with
    :func:`slice_spec`, which also derives the burst and target and names fields in errors.
    """

    name: str
    rate_bps: float
    priority: int
    burst_bytes: float
    delay_target_s: float
    max_packet_bytes: int = DEFAULT_MTU_BYTES

    def __post_init__(self) -> None:
        _check_name(self.name, "name")
        rate = check_number(self.rate_bps, "rate_bps", maximum=MAX_RATE_BPS, allow_zero=False)
        priority = check_integer(self.priority, "priority", minimum=0, maximum=TOP_PRIORITY)
        burst = check_number(
            self.burst_bytes, "burst_bytes", maximum=MAX_BURST_BYTES, allow_zero=True
        )
        target = check_number(
            self.delay_target_s, "delay_target_s", maximum=MAX_TIME_S, allow_zero=True
        )
        packet = check_integer(
            self.max_packet_bytes, "max_packet_bytes", minimum=1, maximum=MAX_PACKET_BYTES
        )
        # Normalise ints and numpy scalars to the exact types the fields declare.
        object.__setattr__(self, "rate_bps", rate)
        object.__setattr__(self, "priority", priority)
        object.__setattr__(self, "burst_bytes", burst)
        object.__setattr__(self, "delay_target_s", target)
        object.__setattr__(self, "max_packet_bytes", packet)


def slice_spec(
    name: str,
    rate_bps: float,
    priority: int,
    *,
    burst_limit_s: float | None = None,
    burst_bytes: float | None = None,
    delay_target_s: float | None = None,
    max_packet_bytes: int | None = None,
    mtu_bytes: int = DEFAULT_MTU_BYTES,
    field_prefix: str = "",
) -> SliceSpec:
    """Build a validated SliceSpec the way users describe slices.

    The burst is ``rate × burst_limit_s / 8`` bytes unless ``burst_bytes`` is given; the delay
    target defaults to the burst limit (the paper's choice) and must be given when only
    ``burst_bytes`` is; the maximum packet defaults to the link MTU.
    """
    p = field_prefix
    _check_name(name, p + "name")
    rate = check_number(rate_bps, p + "rate_bps", maximum=MAX_RATE_BPS, allow_zero=False)
    check_integer(priority, p + "priority", minimum=0, maximum=TOP_PRIORITY)
    limit = None
    if burst_limit_s is not None:
        limit = check_number(
            burst_limit_s, p + "burst_limit_s", maximum=MAX_TIME_S, allow_zero=True
        )
    if burst_bytes is not None:
        burst = check_number(
            burst_bytes, p + "burst_bytes", maximum=MAX_BURST_BYTES, allow_zero=True
        )
    elif limit is not None:
        burst = rate * limit / 8.0
    else:
        raise SpecError(p + "burst_limit_s", "is required unless burst_bytes is given")
    if delay_target_s is not None:
        target = check_number(
            delay_target_s, p + "delay_target_s", maximum=MAX_TIME_S, allow_zero=True
        )
    elif limit is not None:
        target = limit
    else:
        raise SpecError(p + "delay_target_s", "is required when only burst_bytes is given")
    mtu = check_integer(mtu_bytes, p + "mtu_bytes", minimum=1, maximum=MAX_PACKET_BYTES)
    packet = mtu
    if max_packet_bytes is not None:
        packet = check_integer(
            max_packet_bytes, p + "max_packet_bytes", minimum=1, maximum=MAX_PACKET_BYTES
        )
    return SliceSpec(name, rate, priority, burst, target, packet)


def check_unique_names(slices: tuple[SliceSpec, ...], field: str = "slices") -> None:
    """Names identify slices in every result, so two slices on a link may not share one."""
    if len({spec.name for spec in slices}) == len(slices):
        return
    seen: dict[str, int] = {}
    for index, spec in enumerate(slices):
        first = seen.setdefault(spec.name, index)
        if first != index:
            raise SpecError(
                f"{field}[{index}].name",
                f"duplicate name {spec.name!r} (already used by {field}[{first}])",
            )


@dataclass(frozen=True, slots=True)
class LinkInput:
    """The validated input document: one link and the slices crossing it."""

    capacity_bps: float | None
    mtu_bytes: int
    slices: tuple[SliceSpec, ...]


def _reject_unknown(doc: Mapping[str, object], allowed: tuple[str, ...], prefix: str) -> None:
    for key in doc:
        if key not in allowed:
            raise SpecError(
                f"{prefix}{key}", f"unknown field (expected one of {', '.join(allowed)})"
            )


def parse_link_input(
    doc: object, *, require_capacity: bool, require_slices: bool = False
) -> LinkInput:
    """Validate the JSON document of the CLI and the API (already decoded), naming bad fields.

    JSON ``null`` counts as absent for optional fields. ``require_slices`` rejects an empty
    slice list, for questions that have no meaning on an empty link.
    """
    if not isinstance(doc, Mapping):
        raise SpecError("input", "must be a JSON object with capacity_bps and slices")
    _reject_unknown(doc, _LINK_KEYS, "")
    capacity = doc.get("capacity_bps")
    if capacity is not None:
        capacity = check_capacity(capacity)
    elif require_capacity:
        raise SpecError("capacity_bps", "is required")
    mtu = DEFAULT_MTU_BYTES
    if doc.get("mtu_bytes") is not None:
        mtu = check_integer(doc["mtu_bytes"], "mtu_bytes", minimum=1, maximum=MAX_PACKET_BYTES)
    raw_slices = doc.get("slices")
    if raw_slices is None:
        raise SpecError("slices", "is required")
    if not isinstance(raw_slices, list):
        raise SpecError("slices", "must be a list of slice objects")
    if require_slices and not raw_slices:
        raise SpecError("slices", "must contain at least one slice")
    specs = tuple(_parse_slice(item, f"slices[{i}].", mtu) for i, item in enumerate(raw_slices))
    check_unique_names(specs)
    return LinkInput(capacity_bps=capacity, mtu_bytes=mtu, slices=specs)


def _parse_slice(item: object, prefix: str, mtu: int) -> SliceSpec:
    if not isinstance(item, Mapping):
        raise SpecError(prefix.rstrip("."), "must be an object")
    _reject_unknown(item, _SLICE_KEYS, prefix)
    for required in ("name", "rate_bps", "priority"):
        if item.get(required) is None:
            raise SpecError(prefix + required, "is required")
    return slice_spec(
        item["name"],
        item["rate_bps"],
        item["priority"],
        burst_limit_s=item.get("burst_limit_s"),
        burst_bytes=item.get("burst_bytes"),
        delay_target_s=item.get("delay_target_s"),
        max_packet_bytes=item.get("max_packet_bytes"),
        mtu_bytes=mtu,
        field_prefix=prefix,
    )
