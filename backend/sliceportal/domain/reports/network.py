"""The report's input: a whole network of links and the slices crossing them, validated and indexed.

The I/O layer builds a :class:`Network` from the database; everything else in the package works
on the :class:`IndexedNetwork` made from it, where links and slices are numbered by position and
every link carries its slices as the columns the vectorised analytics take.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from sliceportal.domain.bounds import FloatArray, IntArray, SliceArrays, slice_arrays
from sliceportal.domain.spec import (
    MAX_PACKET_BYTES,
    MAX_TIME_S,
    LinkShape,
    Model,
    SliceSpec,
    SpecError,
    check_capacity,
    check_frame_overhead,
    check_integer,
    check_number,
    check_queue_count,
    max_frame_bytes,
    slice_spec,
)


@dataclass(frozen=True, slots=True)
class NetworkLink(LinkShape):
    """An egress port: its capacity, the delay model admission enforces on it, its queues."""

    id: int
    name: str
    """Display name ``switch/link``, unique in the network."""
    switch: str
    capacity_bps: float
    model: Model
    queue_count: int
    mtu_bytes: int
    frame_overhead_bytes: int = 0
    propagation_s: float = 0.0
    """Its cable's propagation delay (0 toward hosts), which a path through it adds."""


@dataclass(frozen=True, slots=True)
class NetworkSlice:
    """A slice as declared, with the links it crosses in path order."""

    id: int
    name: str
    rate_bps: float
    burst_limit_s: float
    delay_target_s: float
    """Per-hop target."""
    e2e_delay_target_s: float | None
    priority: int
    max_packet_bytes: int | None
    """``None``: the largest frame of each link it crosses."""
    link_ids: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Network:
    links: tuple[NetworkLink, ...]
    slices: tuple[NetworkSlice, ...]


@dataclass(frozen=True, slots=True)
class MeasuredSlice:
    """What telemetry measured for one slice over a window (computed by the I/O layer)."""

    window_s: float
    peak_rate_bps: float
    mean_rate_bps: float
    delay_p50_s: float | None
    delay_p95_s: float | None
    delay_p99_s: float | None
    delay_max_s: float | None
    loss_ratio: float | None


def burst_bytes(rate_bps: float, burst_limit_s: float) -> float:
    """The burst a slice may send: its rate for its burst limit (as :func:`slice_spec`)."""
    return rate_bps * burst_limit_s / 8.0


@dataclass(frozen=True, eq=False)
class LinkSlices:
    """The slices crossing one link, as specs and as columns (in network order)."""

    members: IntArray
    """Network indices of the slices."""
    specs: tuple[SliceSpec, ...]
    arrays: SliceArrays
    burst_limit_s: FloatArray
    """Per member: what the burst is a multiple of the rate by (bytes per bit/s)."""

    def scaled(self, factor: float) -> SliceArrays:
        """The columns with every rate (and so every burst) multiplied by ``factor``."""
        rate = self.arrays.rate_bps * factor
        return SliceArrays(
            rate_bps=rate,
            priority=self.arrays.priority,
            burst_bytes=rate * self.burst_limit_s / 8.0,
            delay_target_s=self.arrays.delay_target_s,
            max_packet_bytes=self.arrays.max_packet_bytes,
        )

    def with_priorities(self, priority: int | IntArray) -> SliceArrays:
        """The columns with other priorities (one for all, or one per member)."""
        return SliceArrays(
            rate_bps=self.arrays.rate_bps,
            priority=np.broadcast_to(np.asarray(priority, np.intp), self.members.shape).copy(),
            burst_bytes=self.arrays.burst_bytes,
            delay_target_s=self.arrays.delay_target_s,
            max_packet_bytes=self.arrays.max_packet_bytes,
        )


@dataclass(frozen=True, eq=False)
class IndexedNetwork:
    """A validated network with links and slices numbered by their position."""

    network: Network
    link_index: dict[int, int]
    slice_index: dict[int, int]
    paths: tuple[tuple[int, ...], ...]
    """Per slice, the link indices it crosses in path order."""
    on_link: tuple[LinkSlices, ...]

    @property
    def links(self) -> tuple[NetworkLink, ...]:
        return self.network.links

    @property
    def slices(self) -> tuple[NetworkSlice, ...]:
        return self.network.slices

    def burst_bytes(self, slice_index: int) -> float:
        declared = self.network.slices[slice_index]
        return burst_bytes(declared.rate_bps, declared.burst_limit_s)


def index_network(network: Network) -> IndexedNetwork:
    """Validate ``network`` (naming the offending field) and index it."""
    link_index: dict[int, int] = {}
    link_names: set[str] = set()
    for i, link in enumerate(network.links):
        field = f"links[{i}]."
        if link.id in link_index:
            raise SpecError(field + "id", f"duplicate link id {link.id}")
        if link.name in link_names:
            raise SpecError(field + "name", f"duplicate link name {link.name!r}")
        check_capacity(link.capacity_bps, field + "capacity_bps")
        check_queue_count(link.queue_count, field + "queue_count")
        check_frame_overhead(link.frame_overhead_bytes, field + "frame_overhead_bytes")
        check_integer(link.mtu_bytes, field + "mtu_bytes", minimum=1, maximum=MAX_PACKET_BYTES)
        if link.model not in tuple(Model):
            raise SpecError(field + "model", "must be harkous or netcalc")
        link_index[link.id] = i
        link_names.add(link.name)
    slice_index: dict[int, int] = {}
    slice_names: set[str] = set()
    paths: list[tuple[int, ...]] = []
    members: list[list[int]] = [[] for _ in network.links]
    specs: list[list[SliceSpec]] = [[] for _ in network.links]
    for j, declared in enumerate(network.slices):
        field = f"slices[{j}]."
        if declared.id in slice_index:
            raise SpecError(field + "id", f"duplicate slice id {declared.id}")
        if declared.name in slice_names:
            raise SpecError(field + "name", f"duplicate slice name {declared.name!r}")
        if declared.e2e_delay_target_s is not None:
            check_number(
                declared.e2e_delay_target_s,
                field + "e2e_delay_target_s",
                maximum=MAX_TIME_S,
                allow_zero=False,
            )
        validated = slice_spec(
            declared.name,
            declared.rate_bps,
            declared.priority,
            burst_limit_s=declared.burst_limit_s,
            delay_target_s=declared.delay_target_s,
            max_packet_bytes=declared.max_packet_bytes,
            field_prefix=field,
        )
        path = []
        for k, link_id in enumerate(declared.link_ids):
            if link_id not in link_index:
                raise SpecError(f"{field}link_ids[{k}]", f"unknown link id {link_id}")
            if link_index[link_id] in path:
                raise SpecError(f"{field}link_ids[{k}]", f"link id {link_id} appears twice")
            path.append(link_index[link_id])
        for i in path:
            packet = declared.max_packet_bytes or max_frame_bytes(network.links[i].mtu_bytes)
            specs[i].append(replace(validated, max_packet_bytes=packet))
            members[i].append(j)
        slice_index[declared.id] = j
        slice_names.add(declared.name)
        paths.append(tuple(path))
    # The I/O layer may hand models over as strings; the analytics compare enum members.
    network = Network(
        tuple(replace(link, model=Model(link.model)) for link in network.links), network.slices
    )
    limits = np.array([s.burst_limit_s for s in network.slices], np.float64)
    on_link = tuple(
        LinkSlices(
            members=np.asarray(m, np.intp),
            specs=tuple(s),
            arrays=slice_arrays(s),
            burst_limit_s=limits[np.asarray(m, np.intp)],
        )
        for m, s in zip(members, specs, strict=True)
    )
    return IndexedNetwork(network, link_index, slice_index, tuple(paths), on_link)
