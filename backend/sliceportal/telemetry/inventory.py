"""What the poller watches, read from the database: per switch, its slices (DP_SID) with the SLA
targets, the analytical delay bound each alert rule compares against, and the histogram target
the switch counts each slice's delays with.

The bound of a slice on a switch is the largest worst-case delay (the link's model, over the
slices stored on it) among the links of that switch the slice crosses: a switch measures one
hop, so its histogram is compared with the bound of that hop, not with the end-to-end sum.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.orm import Session

from sliceportal.core.config import Settings
from sliceportal.db.models import Link, Slice, SliceSla, SliceSwitch, Switch
from sliceportal.db.queries.links import link_params, read_loads
from sliceportal.domain import analyze_arrays, units
from sliceportal.domain import dataplane as dp
from sliceportal.domain import p4constants as c
from sliceportal.domain.sla import Targets
from sliceportal.domain.telemetry import AbcWatch
from sliceportal.p4rt.connection import SwitchTarget
from sliceportal.schemas.choices import QueueScheme


@dataclass(frozen=True)
class SliceWatch:
    slice_id: int
    dp_sid: int
    targets: Targets
    hist_target: int
    """The top edge of the slice's delay histograms, vq units (`hist_target_of`)."""
    codel: bool = False
    """The slice runs CoDel: the poller reads its state (`codel_dropping`, `codel_count`)."""
    abc: AbcWatch | None = None
    """The slice runs ABC: the poller reads its meters and average (`telemetry.abc_json`)."""


def hist_target_of(dp_sid: int, delay_target_s: float) -> int:
    """The histogram target the switch counts a slice's delays with: its delay target, as
    `controlplane.desired` deploys it (`dataplane.histogram_target`); best effort's own.

    A target the data plane refuses (not a finite number) leaves the slice without entries on
    the switch (`desired` reports the error): its counters stay at zero, and the best-effort
    target is as good as any."""
    if dp_sid == c.BEST_EFFORT_DP_SID:
        return c.HIST_BEST_EFFORT_TARGET_VQ
    try:
        return dp.histogram_target(delay_target_s)
    except units.DataplaneValueError:
        return c.HIST_BEST_EFFORT_TARGET_VQ


@dataclass(frozen=True)
class SwitchWatch:
    target: SwitchTarget
    budget_cells: int
    """Counter cells to read per period (`Settings.telemetry_*cells_per_period`)."""
    slices: tuple[SliceWatch, ...]
    """In DP_SID order."""

    @property
    def switch_id(self) -> int:
        return self.target.switch_id


def analytical_bounds(session: Session) -> dict[tuple[int, int], float]:
    """(slice id, switch id) -> the slice's largest bounded worst-case delay on that switch."""
    links = list(session.scalars(sa.select(Link).order_by(Link.id)))
    params = [link_params(link) for link in links]
    loads = read_loads(session, params).links
    ids = dict(session.execute(sa.select(Slice.name, Slice.id)).tuples().all())
    bounds: dict[tuple[int, int], float] = {}
    for link, param in zip(links, params, strict=True):
        load = loads[link.id]
        if not load.names:
            continue
        analysis = analyze_arrays(load.arrays(), link.capacity_bps, link.model, param.framing)
        for name, bound in zip(load.names, analysis.bound_s.tolist(), strict=True):
            key = (ids[name], link.switch_id)
            if math.isfinite(bound) and bound > bounds.get(key, -1.0):
                bounds[key] = bound
    return bounds


def load_inventory(session: Session, settings: Settings) -> dict[int, SwitchWatch]:
    """Every switch with the slices that hold a DP_SID on it."""
    bounds = analytical_bounds(session)
    rows = session.execute(
        sa.select(
            SliceSwitch.switch_id,
            SliceSwitch.slice_id,
            SliceSwitch.dp_sid,
            Slice.delay_target_s,
            Slice.scheme,
            Slice.abc_reference_rate_bps,
            Slice.abc_meter_memory_s,
            SliceSla.max_delay_s,
            SliceSla.min_throughput_bps,
            SliceSla.max_loss_ratio,
            SliceSla.max_mark_ratio,
        )
        .join(Slice, Slice.id == SliceSwitch.slice_id)
        .outerjoin(SliceSla, SliceSla.slice_id == SliceSwitch.slice_id)
        .order_by(SliceSwitch.switch_id, SliceSwitch.dp_sid)
    ).all()
    slices: dict[int, list[SliceWatch]] = defaultdict(list)
    for row in rows:
        targets = Targets(
            max_delay_s=row.max_delay_s if row.max_delay_s is not None else row.delay_target_s,
            delay_percentile=settings.alert_delay_percentile,
            min_throughput_bps=row.min_throughput_bps,
            max_loss_ratio=row.max_loss_ratio,
            max_mark_ratio=row.max_mark_ratio,
            delay_bound_s=bounds.get((row.slice_id, row.switch_id)),
        )
        hist_target = hist_target_of(row.dp_sid, row.delay_target_s)
        codel = row.scheme is QueueScheme.CODEL
        abc = None
        if row.scheme is QueueScheme.ABC and row.abc_meter_memory_s is not None:
            abc = AbcWatch(row.abc_reference_rate_bps, row.abc_meter_memory_s)
        slices[row.switch_id].append(
            SliceWatch(row.slice_id, row.dp_sid, targets, hist_target, codel, abc)
        )
    inventory = {}
    for switch in session.scalars(sa.select(Switch).order_by(Switch.id)):
        inventory[switch.id] = SwitchWatch(
            SwitchTarget.of(switch),
            settings.telemetry_cells_per_period,
            tuple(slices.get(switch.id, ())),
        )
    return inventory
