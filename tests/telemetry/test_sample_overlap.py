"""A sample cannot be stored twice: raw samples of one slice on one switch whose intervals'
second halves overlap are refused by the database (migration 0017), while a poller's
consecutive samples, which abut, and minute rows are stored as before."""

from __future__ import annotations

import datetime as dt
import itertools

import numpy as np
import psycopg
import pytest
import sqlalchemy as sa
from sqlalchemy.orm import Session, sessionmaker

from sliceportal.db import samples as store
from sliceportal.domain.telemetry import COLUMNS

_IDS = itertools.count(9_100_000)
REFUSED = "ex_telemetry_samples_no_overlap|pk_telemetry_samples"
"""The exclusion constraint, or the primary key for the very same instant."""
T0 = dt.datetime(2026, 1, 1, 12, tzinfo=dt.UTC)


def _store(
    db: sessionmaker[Session], slice_id: int, switch_id: int, t: dt.datetime, interval_s: float
) -> None:
    with db() as session:
        store.insert_batch(
            session,
            switch_id,
            t.isoformat(),
            [slice_id],
            [interval_s],
            np.zeros((1, len(COLUMNS)), dtype=np.int64),
            np.zeros(1, dtype=np.int64),
            [False],
            None,
        )
        session.commit()


def test_abutting_samples_are_stored(db: sessionmaker[Session]) -> None:
    slice_id = next(_IDS)
    for i in range(1, 4):  # (0, 1], (1, 2], (2, 3]: wall and monotonic clocks a little apart
        _store(db, slice_id, 1, T0 + dt.timedelta(seconds=i, microseconds=-3 * i), 1.0)
    _store(db, slice_id, 2, T0 + dt.timedelta(seconds=3), 1.0)  # another switch
    _store(db, next(_IDS), 1, T0 + dt.timedelta(seconds=3), 1.0)  # another slice
    with db() as session:
        count = session.scalar(
            sa.text("SELECT count(*) FROM telemetry_samples WHERE slice_id = :s"), {"s": slice_id}
        )
    assert count == 4


@pytest.mark.parametrize("offset_s", [0.0, 0.3, 0.45, 0.55, 0.7, 0.999])
def test_a_second_reading_of_the_same_period_is_refused(
    db: sessionmaker[Session], offset_s: float
) -> None:
    """Two pollers reading one switch every second, ``offset_s`` apart: the second one's
    sample overlaps the first one's (or the first one's next) and cannot be stored."""
    slice_id = next(_IDS)
    _store(db, slice_id, 1, T0 + dt.timedelta(seconds=1), 1.0)
    _store(db, slice_id, 1, T0 + dt.timedelta(seconds=2), 1.0)
    with pytest.raises(psycopg.errors.IntegrityError, match=REFUSED):
        _store(db, slice_id, 1, T0 + dt.timedelta(seconds=1 + offset_s), 1.0)


def test_minute_rows_are_not_constrained(db: sessionmaker[Session]) -> None:
    """A minute row (a sum over its samples) may span the interval of a raw sample."""
    slice_id = next(_IDS)
    _store(db, slice_id, 1, T0 + dt.timedelta(seconds=60), 60.0)
    with db() as session:
        session.execute(
            sa.text("UPDATE telemetry_samples SET downsampled = true WHERE slice_id = :s"),
            {"s": slice_id},
        )
        session.commit()
    _store(db, slice_id, 1, T0 + dt.timedelta(seconds=59), 1.0)
    with db() as session:
        count = session.scalar(
            sa.text("SELECT count(*) FROM telemetry_samples WHERE slice_id = :s"), {"s": slice_id}
        )
    assert count == 2
