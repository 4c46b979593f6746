"""Samples are partitioned by time (migration 0020, `db.partitions`): partitions are made
ahead, a partition holds `(start, end]` like a sample's interval, downsampling folds a whole
raw partition into minute rows and drops it, retention drops whole partitions.

Each test works in hours of its own, years away from the other tests' samples: downsampling
and retention act on everything older than their cutoff (2020-02 and 2020-03 here), and
nothing of the other tests is that old."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from sliceportal.db import partitions
from sliceportal.db import samples as store
from telemetry.test_history import add_samples, counts, history
from utils import factories

HOUR = dt.timedelta(hours=1)
TICK = dt.timedelta(microseconds=1)
TARGET = 655360000


def engine_of(db: sessionmaker[Session]) -> sa.Engine:
    engine: sa.Engine = db.kw["bind"]
    return engine


def names(db: sessionmaker[Session], parent: str) -> list[str]:
    with engine_of(db).connect() as connection:
        return [p.name for p in partitions.partitions(connection, parent)]


def partition_of(db: sessionmaker[Session], slice_id: int) -> dict[dt.datetime, str]:
    """Where each row of ``slice_id`` is stored: its time -> its partition."""
    with db() as session:
        rows = session.execute(
            sa.text(
                "SELECT t, tableoid::regclass::text FROM telemetry_samples WHERE slice_id = :s"
            ),
            {"s": slice_id},
        )
        return dict(rows.tuples().all())


def test_partitions_are_made_ahead_once(db: sessionmaker[Session]) -> None:
    now = dt.datetime(2031, 5, 5, 10, 20, tzinfo=dt.UTC)
    until = partitions.ensure_ahead(engine_of(db), now, HOUR)
    assert until == dt.datetime(2031, 5, 5, 13, tzinfo=dt.UTC)
    raw = [n for n in names(db, partitions.RAW) if "20310505" in n]
    assert raw == [
        "telemetry_samples_raw_20310505_100000",
        "telemetry_samples_raw_20310505_110000",
        "telemetry_samples_raw_20310505_120000",
    ]
    assert "telemetry_samples_minute_20310505_000000" in names(db, partitions.MINUTE)
    assert partitions.ensure_partitions(engine_of(db), partitions.RAW, now, until, HOUR) == []


def test_a_partition_holds_its_end_and_not_its_start(db: sessionmaker[Session]) -> None:
    """A sample stamped on the hour belongs to the hour it ends, as its interval does."""
    hour = dt.datetime(2031, 6, 1, 10, tzinfo=dt.UTC)
    partitions.ensure_partitions(engine_of(db), partitions.RAW, hour - HOUR, hour + HOUR, HOUR)
    slice_id = 8_100_001
    with db() as session:
        store.insert_samples(
            session,
            [
                store.SampleRecord(slice_id, 1, t, 1.0, counts(1), TARGET)
                for t in (hour, hour + TICK, hour + HOUR)
            ],
        )
        session.commit()
    assert partition_of(db, slice_id) == {
        hour: "telemetry_samples_raw_20310601_090000",
        hour + TICK: "telemetry_samples_raw_20310601_100000",
        hour + HOUR: "telemetry_samples_raw_20310601_100000",
    }


def test_a_sample_without_a_partition_is_kept_and_moves_into_the_one_made_for_it(
    db: sessionmaker[Session],
) -> None:
    hour = dt.datetime(2031, 7, 1, 10, tzinfo=dt.UTC)
    slice_id = 8_100_002
    with db() as session:
        store.insert_samples(
            session, [store.SampleRecord(slice_id, 1, hour + HOUR / 2, 1.0, counts(1), TARGET)]
        )
        session.commit()
    assert set(partition_of(db, slice_id).values()) == {"telemetry_samples_raw_default"}
    partitions.ensure_partitions(engine_of(db), partitions.RAW, hour, hour + HOUR, HOUR)
    assert set(partition_of(db, slice_id).values()) == {"telemetry_samples_raw_20310701_100000"}


def minute_history(
    client: TestClient, headers: dict[str, str], slice_id: int, start: dt.datetime
) -> list[tuple[Any, ...]]:
    end = start + HOUR
    fields = ("t", "interval_s", "throughput_bps", "rq_delay_p99_s", "vq_cdf")
    found = []
    for resolution in (60, 300):
        data = history(client, headers, slice_id, start=start, end=end, resolution=resolution)
        found += [tuple(s[f] if f != "vq_cdf" else str(s[f]) for f in fields) for s in data["data"]]
    return found


@pytest.fixture
def api_slice_id(client: TestClient, operator_headers: dict[str, str]) -> int:
    """A slice of the API, whose history the API answers."""
    link = factories.create_link(client, operator_headers)
    body = factories.slice_body([link["id"]])
    created: int = factories.create(client, "slices", operator_headers, body)["id"]
    return created


def test_downsampling_folds_a_whole_raw_partition_and_drops_it(
    client: TestClient,
    viewer_headers: dict[str, str],
    db: sessionmaker[Session],
    api_slice_id: int,
) -> None:
    """The hour's samples become minute rows and its partition is dropped, not emptied: the
    history at whole minutes reads the same. The next hour, not wholly past the age, stays
    raw."""
    hour, slice_id = dt.datetime(2020, 2, 1, 10, tzinfo=dt.UTC), api_slice_id
    partitions.ensure_partitions(engine_of(db), partitions.RAW, hour, hour + 2 * HOUR, HOUR)
    add_samples(db, slice_id, hour + dt.timedelta(minutes=20), 600)  # 10:20:01 .. 10:30:00
    add_samples(db, slice_id, hour + HOUR, 90, rq_bucket=3)  # 11:00:01 .. 11:01:30
    before = minute_history(client, viewer_headers, slice_id, hour)
    now = hour + 2 * HOUR + dt.timedelta(minutes=30)  # the cutoff is 11:30
    partitions.downsample(engine_of(db), now, 3600, HOUR)
    assert "telemetry_samples_raw_20200201_100000" not in names(db, partitions.RAW)
    assert "telemetry_samples_raw_20200201_110000" in names(db, partitions.RAW)
    end = hour + 2 * HOUR
    stored = history(client, viewer_headers, slice_id, start=hour, end=end, resolution=1)["data"]
    assert [s["downsampled"] for s in stored] == [True] * 10 + [False] * 90
    assert stored[0]["t"] == (hour + dt.timedelta(minutes=21)).isoformat().replace("+00:00", "Z")
    assert minute_history(client, viewer_headers, slice_id, hour) == before
    assert set(partition_of(db, slice_id).values()) >= {"telemetry_samples_minute_20200201_000000"}


def test_retention_drops_whole_partitions(db: sessionmaker[Session]) -> None:
    day = dt.datetime(2020, 3, 1, tzinfo=dt.UTC)
    engine = engine_of(db)
    partitions.ensure_partitions(engine, partitions.RAW, day, day + 2 * HOUR, HOUR)
    partitions.ensure_partitions(engine, partitions.MINUTE, day, day + HOUR, partitions.MINUTE_SPAN)
    slice_id = 8_100_003
    with db() as session:
        store.insert_samples(
            session,
            [
                store.SampleRecord(slice_id, 1, t, 1.0, counts(1), TARGET)
                for t in (day + HOUR / 2, day + HOUR * 3 / 2)
            ],
        )
        session.commit()
    dropped = partitions.expire(engine, day + 7 * 24 * HOUR + HOUR * 5 / 4, 7 * 86400)
    assert dropped >= 1
    raw = [n for n in names(db, partitions.RAW) if "20200301" in n]
    assert raw == ["telemetry_samples_raw_20200301_010000"]  # 01:00-02:00 is not wholly old
    assert list(partition_of(db, slice_id)) == [day + HOUR * 3 / 2]
    assert "telemetry_samples_minute_20200301_000000" in names(db, partitions.MINUTE)
