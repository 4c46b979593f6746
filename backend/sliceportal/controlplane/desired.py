"""What the database asks of each switch: the slices crossing it, through the translation.

A slice's placement on a switch is one `DataplaneSlice` per link it crosses there (its DP_SID
on that switch, the link's port). Its delay target becomes the top edge of its delay
histograms (`hist_target`: "above the target" is exactly the top bucket; the telemetry
inventory labels the slice's samples with the same value). The slice's priority goes to the
data plane as is: admission already keeps a link within its `queue_count` levels, and
simple_switch with `--priority-queues 8` (and the emulator) serve all eight. A slice the
translation refuses (say a burst limit too short for one full-size frame at its rate) gets an
intent with the translation's error and no entries.
"""

from __future__ import annotations

from collections.abc import Iterable

import sqlalchemy as sa
from sqlalchemy.orm import Session

from sliceportal.db.models import Link, Slice, SliceLink, SliceSwitch
from sliceportal.domain import dataplane as dp
from sliceportal.domain import units
from sliceportal.domain.codel import CodelConfig
from sliceportal.domain.reconcile import SliceIntent, slice_intent


def _placement(row: Slice, dp_sid: int, port: int) -> dp.DataplaneSlice:
    codel = None if row.codel is None else CodelConfig.from_seconds(**row.codel)
    return dp.DataplaneSlice(
        dp_sid=dp_sid,
        name=row.name,
        vlan_id=row.vlan_id,
        ipv4_dst_prefixes=tuple(str(prefix) for prefix in row.ipv4_prefixes),
        rate_bps=row.rate_bps,
        burst_limit_s=row.burst_limit_s,
        priority=row.priority,
        scheme=dp.Scheme(row.scheme.value),
        marking_threshold_s=row.marking_threshold_s,
        egress_port=port,
        delay_target_s=row.delay_target_s,
        codel=codel,
        abc=row.abc_config(),
    )


def _intent(row: Slice, placements: Iterable[tuple[int, int]]) -> SliceIntent:
    try:
        translated = [_placement(row, dp_sid, port) for dp_sid, port in placements]
    except units.DataplaneValueError as exc:
        return SliceIntent(row.id, row.name, error=f"the data plane cannot hold it: {exc}")
    return slice_intent(row.id, row.name, translated)


def intents(
    session: Session, *, switch_id: int | None = None, slice_ids: Iterable[int] | None = None
) -> dict[tuple[int, int], SliceIntent]:
    """(slice id, switch id) -> intent, for the slices crossing `switch_id` and/or the given
    slices (on every switch they cross), in one query."""
    query = (
        sa.select(Slice, SliceSwitch.switch_id, SliceSwitch.dp_sid, Link.port)
        .join(SliceSwitch, SliceSwitch.slice_id == Slice.id)
        .join(
            SliceLink,
            (SliceLink.slice_id == Slice.id) & (SliceLink.switch_id == SliceSwitch.switch_id),
        )
        .join(Link, Link.id == SliceLink.link_id)
        .order_by(Slice.id, SliceSwitch.switch_id, Link.port)
    )
    if switch_id is not None:
        query = query.where(SliceSwitch.switch_id == switch_id)
    if slice_ids is not None:
        query = query.where(Slice.id.in_(list(slice_ids)))
    grouped: dict[tuple[int, int], tuple[Slice, list[tuple[int, int]]]] = {}
    for row, on_switch, dp_sid, port in session.execute(query).tuples():
        grouped.setdefault((row.id, on_switch), (row, []))[1].append((dp_sid, port))
    return {key: _intent(row, placements) for key, (row, placements) in grouped.items()}
