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

from sliceportal.domain.p4constants import (
    BMV2_DROP_PORT,
    BURST_LIMIT_MAX_NS,
    MAX_SLICES,
    MIN_BURST_FRAME_BYTES,
    PORT_WIDTH,
    RATE_MAX_BPS,
    RATE_MIN_BPS,
    VLAN_ID_MAX,
    VLAN_ID_MIN,
)

NUM_LEVELS = 8
TOP_PRIORITY = NUM_LEVELS - 1
BEST_EFFORT_PRIORITY = 0
"""Unclassified traffic's level, reserved: it is not policed, so no bound could hold there."""
LOWEST_SLICE_PRIORITY = 1
SLICE_LEVELS = NUM_LEVELS - LOWEST_SLICE_PRIORITY
"""Priority levels slices may use (1 to 7): every hardware queue but best effort's."""
DEFAULT_MTU_BYTES = 1500
ETHERNET_HEADER_BYTES = 14
VLAN_TAG_BYTES = 4
DEFAULT_MAX_FRAME_BYTES = DEFAULT_MTU_BYTES + ETHERNET_HEADER_BYTES + VLAN_TAG_BYTES
"""1518: the largest frame the data plane counts on a 1500-byte MTU (Ethernet, one VLAN tag,
the IP packet; no preamble, no FCS), which is what ``packet_length`` is in the P4 program."""
MIN_FRAME_BYTES = 60
"""The smallest Ethernet frame without its FCS (64 with it): what a frame overhead is charged on."""
MAX_FRAME_OVERHEAD_BYTES = 64
LINE_RATE_OVERHEAD_BYTES = 24
"""Preamble and start delimiter (8), FCS (4) and inter-frame gap (12): what a frame costs on the
wire beyond the bytes the data plane counts, when a capacity is given as the line rate."""

MAX_RATE_BPS = 1e15
"""1 Pbit/s: above any link, low enough that 10^6 summed rates stay exact-ish and finite."""
MIN_RATE_BPS = 1.0
"""1 bit/s: below any link or slice; at 5e-324 bit/s the search for the least capacity met
floats it could not split and never ended."""
MAX_TIME_S = 1e6
MAX_BURST_BYTES = 1e21
MAX_PACKET_BYTES = 1_000_000
MAX_NAME_LENGTH = 255

# The limits of what is stored: every link and slice the API, the CLI and the database accept
# is one the analytics take (above) and, for slices, one the data plane holds
# (`p4constants`). The API's schemas, the services and the migrations read them from here.
MAX_CAPACITY_BPS = MAX_RATE_BPS
"""A link's capacity: the analytics' largest rate (a larger one broke every report)."""
MIN_MTU_BYTES = 64
MAX_MTU_BYTES = 65535
"""A stored link's IP MTU and a slice's largest packet (the IPv4 total length field)."""
MIN_SLICE_RATE_BPS = RATE_MIN_BPS
"""The slowest rate the data plane polices: its byte time fills BYTE_TIME_WIDTH bits."""
MAX_SLICE_RATE_BPS = RATE_MAX_BPS
MAX_BURST_LIMIT_S = BURST_LIMIT_MAX_NS / 1e9
"""The longest burst limit (and marking threshold) the data plane holds: 4 s."""
MIN_BURST_BYTES = MIN_BURST_FRAME_BYTES
"""A burst holds at least one full-size frame, else the slice drops every such packet."""
MAX_SLICE_BURST_BYTES = MAX_SLICE_RATE_BPS * MAX_BURST_LIMIT_S / 8
MAX_DELAY_TARGET_S = 3600.0
"""A delay target, per hop or end to end, or an SLA's delay: an hour is no network's."""
MAX_REPORT_WINDOW_S = 31 * 86400.0
"""The telemetry a report compares with the declarations: a month at most."""
MIN_VLAN_ID = VLAN_ID_MIN
MAX_VLAN_ID = VLAN_ID_MAX
"""The VLAN ids a slice may match (0 and 4095 are reserved)."""
MAX_BIGINT = 2**63 - 1
MAX_DEVICE_ID = MAX_BIGINT
"""P4Runtime's device and election ids are 64-bit; the database keeps them as bigint."""
MAX_OFFSET = MAX_BIGINT
"""The rows a list may skip: PostgreSQL's OFFSET is a bigint."""

_LINK_KEYS = ("capacity_bps", "mtu_bytes", "frame_overhead_bytes", "slices")
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
    """The paper's busy-period equations (1)-(4): shown for comparison, not an upper bound."""
    NETCALC = "netcalc"
    """Strict-priority, non-preemptive network calculus: the sound bound, and the default."""


DEFAULT_MODEL = Model.NETCALC


def max_frame_bytes(mtu_bytes: int) -> int:
    """The largest frame the data plane counts on a link of this IP MTU (one VLAN tag)."""
    return mtu_bytes + ETHERNET_HEADER_BYTES + VLAN_TAG_BYTES


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


def check_rate(value: object, field: str) -> float:
    """A rate or a capacity in bit/s: from MIN_RATE_BPS to MAX_RATE_BPS."""
    rate = check_number(value, field, maximum=MAX_RATE_BPS, allow_zero=False)
    if rate < MIN_RATE_BPS:
        raise SpecError(field, f"must be at least {MIN_RATE_BPS:g} bit/s")
    return rate


def check_capacity(value: object, field: str = "capacity_bps") -> float:
    """A link capacity in bit/s."""
    return check_rate(value, field)


def check_levels(value: object, field: str = "levels") -> int:
    """A number of priority levels for slices (best effort keeps the lowest queue)."""
    return check_integer(value, field, minimum=1, maximum=SLICE_LEVELS)


MIN_QUEUES = 2
"""Best effort keeps one queue to itself, so a link needs at least one more for slices."""
MAX_QUEUES = NUM_LEVELS
"""A link has MIN_QUEUES to MAX_QUEUES queues: best effort keeps one, its slices the others."""
MAX_DP_SID = MAX_SLICES - 1
"""A switch holds MAX_SLICES slice classes; DP_SID 0 is the best-effort class."""
MAX_PORT = (1 << PORT_WIDTH) - 1
"""v1model's egress_spec is PORT_WIDTH bits."""
MAX_LINK_PORT = BMV2_DROP_PORT - 1
"""A link's port: any egress_spec but the top one, which BMv2 reads as "drop" (a link there
would be stored, and every slice on it fail to deploy)."""


def check_queue_count(value: object, field: str = "queue_count") -> int:
    """A link's number of hardware priority queues (best effort's included)."""
    return check_integer(value, field, minimum=MIN_QUEUES, maximum=MAX_QUEUES)


def slice_levels(queue_count: int) -> int:
    """Priority levels the slices of a link with ``queue_count`` hardware queues may use."""
    return min(queue_count, NUM_LEVELS) - 1


def check_priority(value: object, field: str = "priority") -> int:
    """A slice's priority: 1 to 7, since 0 is best effort's."""
    return check_integer(value, field, minimum=LOWEST_SLICE_PRIORITY, maximum=TOP_PRIORITY)


def check_frame_overhead(value: object, field: str = "frame_overhead_bytes") -> int:
    """Bytes a frame costs on the wire beyond what the data plane counts (0 or 24, usually)."""
    return check_integer(value, field, minimum=0, maximum=MAX_FRAME_OVERHEAD_BYTES)


@dataclass(frozen=True, slots=True)
class Framing:
    """What a link's capacity counts, and the frame best effort may block every slice with.

    ``overhead_bytes`` is 0 when the capacity is the rate of frame bytes as the data plane
    counts them (the default), and 24 (:data:`LINE_RATE_OVERHEAD_BYTES`) when it is the line
    rate: then every frame costs that much more on the wire, which the sound bound charges on
    the smallest frame (:data:`MIN_FRAME_BYTES`), so a slice's rate counts
    ``1 + overhead / 60`` times.
    """

    max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES
    """The largest best-effort frame: unclassified traffic is never policed."""
    overhead_bytes: int = 0

    def __post_init__(self) -> None:
        check_integer(
            self.max_frame_bytes,
            "max_frame_bytes",
            minimum=1,
            maximum=MAX_PACKET_BYTES,
        )
        check_integer(
            self.overhead_bytes,
            "frame_overhead_bytes",
            minimum=0,
            maximum=MAX_FRAME_OVERHEAD_BYTES,
        )

    @classmethod
    def of_link(cls, mtu_bytes: int, overhead_bytes: int = 0) -> Framing:
        return cls(max_frame_bytes(mtu_bytes), overhead_bytes)

    @property
    def rate_factor(self) -> float:
        """Wire bits per counted bit, at worst (all frames of the smallest size)."""
        return 1.0 + self.overhead_bytes / MIN_FRAME_BYTES


STANDARD_FRAMING = Framing()


class LinkShape:
    """What follows from a link's MTU, frame overhead and hardware queues, for the link
    records of the services and the reports (dataclasses declaring those three fields)."""

    __slots__ = ()
    mtu_bytes: int
    frame_overhead_bytes: int
    queue_count: int

    @property
    def framing(self) -> Framing:
        """What the capacity counts, and the largest frame (best effort's) on the link."""
        return Framing.of_link(self.mtu_bytes, self.frame_overhead_bytes)

    @property
    def slice_levels(self) -> int:
        """Priority levels its slices may use: every queue but best effort's."""
        return slice_levels(self.queue_count)


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
    max_packet_bytes: int = DEFAULT_MAX_FRAME_BYTES
    """Largest frame of the slice, in the bytes the data plane counts (see :class:`Framing`)."""

    def __post_init__(self) -> None:
        _check_name(self.name, "name")
        rate = check_rate(self.rate_bps, "rate_bps")
        priority = check_priority(self.priority)
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

    The burst is ``rate × burst_limit_s / 8`` bytes, or ``burst_bytes`` (both may be given
    only when they agree); the delay target defaults to the burst limit (the paper's choice)
    and must be given when only ``burst_bytes`` is; the maximum packet defaults to the largest
    frame of the link MTU.
    """
    p = field_prefix
    _check_name(name, p + "name")
    rate = check_rate(rate_bps, p + "rate_bps")
    check_priority(priority, p + "priority")
    limit = None
    if burst_limit_s is not None:
        limit = check_number(
            burst_limit_s, p + "burst_limit_s", maximum=MAX_TIME_S, allow_zero=True
        )
    if burst_bytes is not None:
        burst = check_number(
            burst_bytes, p + "burst_bytes", maximum=MAX_BURST_BYTES, allow_zero=True
        )
        if limit is not None and not burst_agrees(burst, rate, limit):
            raise SpecError(p + "burst_bytes", burst_conflict(burst, rate, limit, p))
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
    packet = max_frame_bytes(mtu)
    if max_packet_bytes is not None:
        packet = check_integer(
            max_packet_bytes, p + "max_packet_bytes", minimum=1, maximum=MAX_PACKET_BYTES
        )
    return SliceSpec(name, rate, priority, burst, target, packet)


def burst_agrees(burst_bytes: float, rate_bps: float, burst_limit_s: float) -> bool:
    """A burst in bytes and a burst limit in seconds describe the same burst (within half a
    byte, or rounding for huge bursts)."""
    return math.isclose(burst_bytes, rate_bps * burst_limit_s / 8.0, rel_tol=1e-9, abs_tol=0.5)


def burst_conflict(burst_bytes: float, rate_bps: float, burst_limit_s: float, prefix: str) -> str:
    """Why a burst in bytes and a burst limit in seconds cannot both be given (the message of
    the CLI's exit 2 and of the API's 422)."""
    return (
        f"disagrees with {prefix}burst_limit_s: rate × burst_limit_s / 8 is "
        f"{rate_bps * burst_limit_s / 8.0:g} bytes, not {burst_bytes:g}; give one of the two"
    )


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
    frame_overhead_bytes: int = 0

    @property
    def framing(self) -> Framing:
        return Framing.of_link(self.mtu_bytes, self.frame_overhead_bytes)


def _reject_unknown(doc: Mapping[str, object], allowed: tuple[str, ...], prefix: str) -> None:
    for key in doc:
        if key not in allowed:
            raise SpecError(
                f"{prefix}{key}", f"unknown field (expected one of {', '.join(allowed)})"
            )


def parse_link_input(
    doc: object,
    *,
    require_capacity: bool,
    require_slices: bool = False,
    other_slice_keys: tuple[str, ...] = (),
) -> LinkInput:
    """Validate the JSON document of the CLI and the API (already decoded), naming bad fields.

    JSON ``null`` counts as absent for optional fields. ``require_slices`` rejects an empty
    slice list, for questions that have no meaning on an empty link. ``other_slice_keys`` are
    slice fields the caller checks itself (the CLI's queue-management scheme,
    `dataplane.check_scheme`): accepted here, not read.
    """
    if not isinstance(doc, Mapping):
        raise SpecError("input", "must be a JSON object with capacity_bps and slices")
    _reject_unknown(doc, _LINK_KEYS, "")
    capacity = doc.get("capacity_bps")
    if capacity is not None:
        capacity = check_capacity(capacity)
    elif require_capacity:
        raise SpecError("capacity_bps", "is required")
    mtu = _parse_mtu(doc)
    overhead = 0
    if doc.get("frame_overhead_bytes") is not None:
        overhead = check_frame_overhead(doc["frame_overhead_bytes"])
    raw_slices = _required_list(doc, "slices", "slice")
    if require_slices and not raw_slices:
        raise SpecError("slices", "must contain at least one slice")
    specs = tuple(
        _parse_slice(item, f"slices[{i}].", mtu, other_slice_keys)
        for i, item in enumerate(raw_slices)
    )
    check_unique_names(specs)
    return LinkInput(
        capacity_bps=capacity, mtu_bytes=mtu, slices=specs, frame_overhead_bytes=overhead
    )


def _parse_mtu(doc: Mapping[str, object]) -> int:
    """The document's IP MTU (``mtu_bytes``; absent or null: the default)."""
    value = doc.get("mtu_bytes")
    if value is None:
        return DEFAULT_MTU_BYTES
    return check_integer(value, "mtu_bytes", minimum=1, maximum=MAX_PACKET_BYTES)


def _required_list(doc: Mapping[str, object], key: str, what: str) -> list[object]:
    items = doc.get(key)
    if items is None:
        raise SpecError(key, "is required")
    if not isinstance(items, list):
        raise SpecError(key, f"must be a list of {what} objects")
    return items


def _parse_slice(
    item: object, prefix: str, mtu: int, other_keys: tuple[str, ...] = ()
) -> SliceSpec:
    if not isinstance(item, Mapping):
        raise SpecError(prefix.rstrip("."), "must be an object")
    _reject_unknown(item, _SLICE_KEYS + other_keys, prefix)
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


# --- Networks: links with propagation delays, slices with ordered paths -----------------------

_NETWORK_KEYS = ("mtu_bytes", "links", "slices")
_NETWORK_LINK_KEYS = ("name", "capacity_bps", "propagation_s")
_PATH_KEY = "path"


@dataclass(frozen=True, slots=True)
class NetworkLink:
    """One egress port of a network as the end-to-end analysis sees it: its capacity, the
    propagation delay to the next switch, and what its capacity counts (:class:`Framing`)."""

    id: int
    """How paths name it (the CLI: its position in the document; the API: its stored id)."""
    name: str
    capacity_bps: float
    propagation_s: float = 0.0
    framing: Framing = STANDARD_FRAMING

    def __post_init__(self) -> None:
        _check_name(self.name, "name")
        object.__setattr__(self, "capacity_bps", check_capacity(self.capacity_bps))
        object.__setattr__(self, "propagation_s", check_propagation(self.propagation_s))


@dataclass(frozen=True, slots=True)
class RoutedSlice:
    """A slice and the links it crosses, in order (link ids). Its ``delay_target_s`` is the
    target of its end-to-end bound."""

    spec: SliceSpec
    path: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class NetworkInput:
    """The validated document of ``sliceportal analyze-network``."""

    mtu_bytes: int
    links: tuple[NetworkLink, ...]
    slices: tuple[RoutedSlice, ...]


def check_propagation(value: object, field: str = "propagation_s") -> float:
    """A link's propagation delay in seconds (0 allowed)."""
    return check_number(value, field, maximum=MAX_TIME_S, allow_zero=True)


def check_network(links: tuple[NetworkLink, ...], slices: tuple[RoutedSlice, ...]) -> None:
    """Links with distinct ids and names, slices with distinct names and paths of at least one
    known link, none twice (a path through the same port twice is a routing loop)."""
    ids = _check_links(links)
    check_unique_names(tuple(routed.spec for routed in slices))
    for index, routed in enumerate(slices):
        field = f"slices[{index}].{_PATH_KEY}"
        if not routed.path:
            raise SpecError(field, "must name at least one link")
        seen: dict[int, int] = {}
        for hop, link_id in enumerate(routed.path):
            if link_id not in ids:
                raise SpecError(f"{field}[{hop}]", f"unknown link id {link_id}")
            first = seen.setdefault(link_id, hop)
            if first != hop:
                raise SpecError(
                    f"{field}[{hop}]",
                    f"link {links[ids[link_id]].name!r} appears twice "
                    f"(already {_PATH_KEY}[{first}]): a path crosses each link once",
                )


def _check_links(links: tuple[NetworkLink, ...]) -> dict[int, int]:
    """Distinct ids and names; the position of each id."""
    ids: dict[int, int] = {}
    names: dict[str, int] = {}
    for index, link in enumerate(links):
        first = ids.setdefault(link.id, index)
        if first != index:
            raise SpecError(f"links[{index}].id", f"duplicate id {link.id} (links[{first}])")
        first = names.setdefault(link.name, index)
        if first != index:
            raise SpecError(
                f"links[{index}].name",
                f"duplicate name {link.name!r} (already used by links[{first}])",
            )
    return ids


def parse_network_input(doc: object) -> NetworkInput:
    """Validate the network document (already decoded), naming bad fields as
    :func:`parse_link_input` does. Paths name links; they become link ids (positions)."""
    if not isinstance(doc, Mapping):
        raise SpecError("input", "must be a JSON object with links and slices")
    _reject_unknown(doc, _NETWORK_KEYS, "")
    mtu = _parse_mtu(doc)
    framing = Framing.of_link(mtu)
    links = tuple(
        _parse_network_link(item, index, framing)
        for index, item in enumerate(_required_list(doc, "links", "link"))
    )
    _check_links(links)
    by_name = {link.name: link.id for link in links}
    slices = []
    for index, item in enumerate(_required_list(doc, "slices", "slice")):
        prefix = f"slices[{index}]."
        spec = _parse_slice(item, prefix, mtu, (_PATH_KEY,))
        assert isinstance(item, Mapping)  # _parse_slice checked it
        slices.append(RoutedSlice(spec, _parse_path(item.get(_PATH_KEY), prefix, by_name)))
    routed = tuple(slices)
    check_network(links, routed)
    return NetworkInput(mtu, links, routed)


def _parse_network_link(item: object, index: int, framing: Framing) -> NetworkLink:
    prefix = f"links[{index}]."
    if not isinstance(item, Mapping):
        raise SpecError(prefix.rstrip("."), "must be an object")
    _reject_unknown(item, _NETWORK_LINK_KEYS, prefix)
    for required in ("name", "capacity_bps"):
        if item.get(required) is None:
            raise SpecError(prefix + required, "is required")
    propagation = item.get("propagation_s")
    try:  # the link validates its own fields
        return NetworkLink(
            index,
            item["name"],
            item["capacity_bps"],
            0.0 if propagation is None else propagation,
            framing,
        )
    except SpecError as error:
        raise error.prefixed(prefix) from None


def _parse_path(value: object, prefix: str, links: Mapping[str, int]) -> tuple[int, ...]:
    field = prefix + _PATH_KEY
    if value is None:
        raise SpecError(field, "is required")
    if not isinstance(value, list):
        raise SpecError(field, "must be a list of link names")
    path = []
    for hop, name in enumerate(value):
        if not isinstance(name, str):
            raise SpecError(f"{field}[{hop}]", "must be a link name (a string)")
        if name not in links:
            raise SpecError(f"{field}[{hop}]", f"unknown link {name!r}")
        path.append(links[name])
    return tuple(path)
