"""A sample cannot be stored twice: a poll's samples are stored with a row of
`telemetry_polls`, and a poll of a switch overlapping another (the switch read by two
pollers) is refused with its samples (migration 0017). A poller's consecutive polls, which
abut, are stored."""

from __future__ import annotations

import datetime as dt
import itertools

import numpy as np
import pytest
import sqlalchemy as sa
from sqlalchemy.orm import Session, sessionmaker

from sliceportal.db import partitions
from sliceportal.db import samples as store
from sliceportal.domain.telemetry import COLUMNS

_IDS = itertools.count(9_100_000)
REFUSED = "ex_telemetry_polls_no_overlap|pk_telemetry_polls"
"""The exclusion constraint, or the primary key for the very same instant."""
T0 = dt.datetime(2026, 1, 1, 12, tzinfo=dt.UTC)


def _store(
    db: sessionmaker[Session], switch_id: int, slice_ids: list[int], t: dt.datetime, since_s: float
) -> None:
    """One poll of ``switch_id`` at ``t``, ``since_s`` after the previous one, and its
    samples (one interval of ``since_s`` each), in one transaction as the sink stores them."""
    with db() as session:
        store.record_poll(session, switch_id, t.isoformat(), since_s)
        store.insert_batch(
            session,
            switch_id,
            t.isoformat(),
            slice_ids,
            [since_s] * len(slice_ids),
            np.zeros((len(slice_ids), len(COLUMNS)), dtype=np.int64),
            np.zeros(len(slice_ids), dtype=np.int64),
            [False] * len(slice_ids),
            None,
        )
        session.commit()


def _samples(db: sessionmaker[Session], slice_id: int) -> int:
    with db() as session:
        count: int = session.scalar(
            sa.text("SELECT count(*) FROM telemetry_samples WHERE slice_id = :s"), {"s": slice_id}
        )
    return count


def test_abutting_polls_and_other_switches_are_stored(db: sessionmaker[Session]) -> None:
    switch_id, other, slice_id = next(_IDS), next(_IDS), next(_IDS)
    for i in range(1, 4):  # (0, 1], (1, 2], (2, 3]: wall and monotonic clocks a little apart
        t = T0 + dt.timedelta(seconds=i, microseconds=-3 * i)
        _store(db, switch_id, [slice_id], t, 1.0)
    _store(db, other, [slice_id], T0 + dt.timedelta(seconds=2.5), 1.0)  # another switch
    assert _samples(db, slice_id) == 4


@pytest.mark.parametrize("offset_s", [0.0, 0.3, 0.45, 0.55, 0.7, 0.999])
def test_a_second_reading_of_the_same_period_is_refused_with_its_samples(
    db: sessionmaker[Session], offset_s: float
) -> None:
    """Two pollers reading one switch every second, ``offset_s`` apart: the second one's
    poll overlaps the first one's (or the first one's next) and its samples are not stored."""
    switch_id, slice_id = next(_IDS), next(_IDS)
    _store(db, switch_id, [slice_id], T0 + dt.timedelta(seconds=1), 1.0)
    _store(db, switch_id, [slice_id], T0 + dt.timedelta(seconds=2), 1.0)
    with pytest.raises(sa.exc.IntegrityError, match=REFUSED):
        _store(db, switch_id, [slice_id], T0 + dt.timedelta(seconds=1 + offset_s), 1.0)
    assert _samples(db, slice_id) == 2


def test_downsampling_forgets_the_polls_of_the_samples_it_moves(
    db: sessionmaker[Session],
) -> None:
    switch_id, slice_id = next(_IDS), next(_IDS)
    now = dt.datetime.now(dt.UTC)
    old = now - dt.timedelta(hours=2)
    _store(db, switch_id, [slice_id], old, 1.0)
    _store(db, switch_id, [slice_id], now, 1.0)
    partitions.downsample(db.kw["bind"], now, 3600, dt.timedelta(hours=1))
    with db() as session:
        polls = session.scalars(
            sa.text("SELECT t FROM telemetry_polls WHERE switch_id = :s"), {"s": switch_id}
        ).all()
    assert polls == [now]
