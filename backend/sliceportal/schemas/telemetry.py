"""Telemetry samples (docs/telemetry.md) and the stream ticket."""

from __future__ import annotations

import datetime as dt

from pydantic import BaseModel, Field

from sliceportal.domain.p4constants import ABC_SLOTS
from sliceportal.domain.telemetry import ABC_TOP_AGGREGATES
from sliceportal.schemas.common import Page


class CodelState(BaseModel):
    """A codel slice's CoDel at the reading, from its registers (RFC 8289's names)."""

    dropping: bool = Field(description="in a dropping spell (register codel_dropping)")
    count: int = Field(
        ge=0,
        description="drops (or marks) of the current spell, or of the last one while not "
        "dropping; 0 before the first (register codel_count)",
    )


class AbcAggregate(BaseModel):
    """One aggregate slot of an abc slice's meters, at the slice's most recent meter update."""

    slot: int = Field(
        ge=0,
        lt=ABC_SLOTS,
        description="the meter slot its key hashes to (CRC-32 of the masked source address, "
        "modulo 64): aggregates sharing a slot share a meter",
    )
    rate_bps: float = Field(
        ge=0,
        description="its metered rate, S/N (time-decayed bytes over decayed time), decayed to "
        "the slice's newest meter update as the meter would",
    )
    activity: float = Field(
        description="log2(rate_bps / reference_rate_bps), -64 to 64: the higher, the lower "
        "its packets' drop threshold"
    )
    idle_s: float = Field(ge=0, description="seconds its last packet came before the newest")


class AbcState(BaseModel):
    """An abc slice's ABC at the reading, from its registers (abc_meter_*, abc_a_avg)."""

    average_activity: float = Field(
        description="the slice's average activity of accepted packets (register abc_a_avg): a "
        "packet more active than this meets a drop threshold below q_base_s"
    )
    active_slots: int = Field(
        ge=0,
        le=ABC_SLOTS,
        description="aggregate slots metered within one meter memory of the newest update",
    )
    aggregates: list[AbcAggregate] = Field(
        max_length=ABC_TOP_AGGREGATES,
        description=f"the busiest slots, by rate, at most {ABC_TOP_AGGREGATES}",
    )


class TelemetrySample(BaseModel):
    """What one slice did on one switch over `interval_s` seconds ending at `t`.

    Delays are histogram bucket edges, the slice's own: its delay target T and T/16, T/8,
    T/4, T/2, 3T/4 and 7T/8 below it (rounded down to the data plane's 1/65,536 ns). A
    percentile is reported as the upper edge of the bucket holding it ("p99 < 7.5 ms"), or T
    for the open last bucket (">= T"); `null` when no packet was forwarded. A CDF point
    `[edge_s, fraction]` is the share of forwarded packets whose delay was below `edge_s`; the
    last point's edge is T, so its fraction is the share within the target. Samples stored
    before per-slice edges keep the former global edges 0.1, 0.5, 1, 2, 5, 10 and 20 ms.
    """

    t: dt.datetime = Field(description="end of the interval")
    slice_id: int
    switch_id: int
    downsampled: bool = Field(description="a sum of samples (one-minute rows, or a bucket)")
    counters_reset: bool = Field(description="the switch lost its counters in this interval")
    interval_s: float = Field(description="seconds measured between two readings")
    throughput_bps: float
    packets_per_s: float
    offered_bps: float = Field(description="forwarded plus dropped")
    drop_ratio: float = Field(description="dropped (for any reason) over offered packets")
    vq_drop_ratio: float = Field(description="dropped at the burst limit (the virtual queue)")
    rq_drop_ratio: float = Field(description="dropped by the real queue (it was full)")
    aqm_drop_ratio: float = Field(
        description="dropped by the slice's CoDel or ABC (0 for other schemes)"
    )
    mark_ratio: float = Field(description="ECN-marked over forwarded packets")
    vq_delay_p50_s: float | None
    vq_delay_p95_s: float | None
    vq_delay_p99_s: float | None
    vq_delay_max_bucket_s: float | None
    rq_delay_p50_s: float | None
    rq_delay_p95_s: float | None
    rq_delay_p99_s: float | None
    rq_delay_max_bucket_s: float | None
    vq_cdf: list[tuple[float, float]] = Field(
        description="[edge_s, fraction] at each of the slice's 7 finite edges; [] without packets"
    )
    rq_cdf: list[tuple[float, float]] = Field(description="the same for the real queue")
    registers: dict[str, int | float] | None = Field(
        description="vq_delay_s and vq_last_seen_ticks, where the switch can read registers; "
        "null in a raw sample (downsampled false) says the switch cannot (BMv2: p4lang/PI#376)"
    )
    codel: CodelState | None = Field(
        description="CoDel's state at the reading: a codel slice's raw sample where the switch "
        "can read registers; null for other schemes, switches that cannot, and sums"
    )
    abc: AbcState | None = Field(
        description="ABC's state at the reading: an abc slice's raw sample where the switch "
        "can read registers; null for other schemes, switches that cannot, and sums"
    )


class TelemetryPublic(Page[TelemetrySample]):
    start: dt.datetime
    end: dt.datetime
    resolution_s: int = Field(description="1: the stored rows; more: sums over buckets")


class StreamTicket(BaseModel):
    ticket: str = Field(description="pass as ?token= to a stream (EventSource sends no headers)")
    expires_in: int = Field(description="seconds the ticket may open streams")
