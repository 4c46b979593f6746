"""What the topology page colours links by: each link's live throughput, the sum over the
slices crossing it of what they forwarded on its switch at their latest raw sample, in one
statement (an index range of `telemetry_samples`' primary key per slice and switch)."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.orm import Session

_THROUGHPUT = sa.text(
    """
SELECT crossing.link_id, sum(latest.forwarded_bytes * 8.0 / latest.interval_s)
FROM slice_links crossing
CROSS JOIN LATERAL (
    SELECT sample.forwarded_bytes, sample.interval_s
    FROM telemetry_samples sample
    WHERE sample.slice_id = crossing.slice_id AND sample.switch_id = crossing.switch_id
      AND NOT sample.downsampled AND sample.t > now() - make_interval(secs => :window_s)
    ORDER BY sample.t DESC
    LIMIT 1
) latest
GROUP BY crossing.link_id
"""
)


def link_throughputs(session: Session, window_s: float) -> dict[int, float]:
    """Bit/s forwarded per link by its slices' latest samples of the last `window_s` seconds;
    a link none of whose slices has one is absent (no live data, not idle)."""
    rows = session.execute(_THROUGHPUT, {"window_s": window_s})
    return {link_id: float(bps) for link_id, bps in rows}
