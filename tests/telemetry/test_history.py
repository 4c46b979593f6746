"""Samples in PostgreSQL: time-range history through the API, downsampling to one-minute rows
and retention."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from sliceportal.db import partitions
from sliceportal.db import samples as store
from sliceportal.db.models import TelemetrySample
from sliceportal.domain import dataplane as dp
from sliceportal.domain.telemetry import COLUMNS, LEGACY_EDGES_US, LEGACY_HIST_TARGET
from utils import factories

T0 = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)
"""A minute boundary, far enough in the past for every age cutoff."""
T1 = T0 + dt.timedelta(days=1)
ROWS_ONLY = 7_000_007
"""A slice id no slice of the API gets (ids count from 1 in a run): samples written straight
into the table, not mixed with the samples of slices other tests create."""
TARGET = dp.histogram_target(0.02)
"""The samples' histogram target unless said: edges 1.25, 2.5, 5, 10, 15, 17.5, 20 ms."""


def downsample(db: sessionmaker[Session], now: dt.datetime) -> int:
    """Downsampling as beat runs it: after an hour, raw partitions of an hour."""
    return partitions.downsample(db.kw["bind"], now, 3600, dt.timedelta(hours=1))


def counts(forwarded_packets: int, *, rq_bucket: int = 0) -> tuple[int, ...]:
    values = [0] * len(COLUMNS)
    values[0], values[1] = forwarded_packets, forwarded_packets * 1250
    values[COLUMNS.index(f"rq_hist_{rq_bucket}")] = forwarded_packets
    values[COLUMNS.index("vq_hist_0")] = forwarded_packets
    return tuple(values)


def add_samples(
    db: sessionmaker[Session],
    slice_id: int,
    start: dt.datetime,
    seconds: int,
    packets: int = 100,
    *,
    target: int = TARGET,
    rq_bucket: int = 0,
) -> None:
    """One raw sample a second for `seconds`, each of `packets` packets of 1,250 bytes, their
    real-queue delays in `rq_bucket` of histograms of `target`."""
    with db() as session:
        store.insert_samples(
            session,
            (
                store.SampleRecord(
                    slice_id,
                    1,
                    start + dt.timedelta(seconds=i + 1),
                    1.0,
                    counts(packets, rq_bucket=rq_bucket),
                    target,
                )
                for i in range(seconds)
            ),
        )
        session.commit()


@pytest.fixture
def slice_id(client: TestClient, operator_headers: dict[str, str]) -> int:
    link = factories.create_link(client, operator_headers)
    created = factories.create(
        client, "slices", operator_headers, factories.slice_body([link["id"]])
    )
    value: int = created["id"]
    return value


def history(
    client: TestClient, headers: dict[str, str], slice_id: int, **query: Any
) -> dict[str, Any]:
    params = {k: v.isoformat() if isinstance(v, dt.datetime) else v for k, v in query.items()}
    response = client.get(f"/api/v1/slices/{slice_id}/telemetry", params=params, headers=headers)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_history_returns_the_samples_of_a_time_range(
    client: TestClient,
    viewer_headers: dict[str, str],
    db: sessionmaker[Session],
    slice_id: int,
) -> None:
    add_samples(db, slice_id, T0, 120)
    body = history(
        client,
        viewer_headers,
        slice_id,
        start=T0 + dt.timedelta(seconds=10),
        end=T0 + dt.timedelta(seconds=20),
    )
    assert body["resolution_s"] == 1
    assert body["count"] == 10
    times = [dt.datetime.fromisoformat(s["t"]) for s in body["data"]]
    assert times[0] == T0 + dt.timedelta(seconds=11) and times[-1] == T0 + dt.timedelta(seconds=20)
    first = body["data"][0]
    assert first["throughput_bps"] == 100 * 1250 * 8
    assert first["slice_id"] == slice_id and first["switch_id"] == 1


def test_history_at_a_coarser_resolution_sums_the_samples(
    client: TestClient,
    viewer_headers: dict[str, str],
    db: sessionmaker[Session],
    slice_id: int,
) -> None:
    add_samples(db, slice_id, T0, 120)
    body = history(
        client, viewer_headers, slice_id, start=T0, end=T0 + dt.timedelta(minutes=2), resolution=30
    )
    assert body["resolution_s"] == 30
    assert [s["interval_s"] for s in body["data"]] == [30.0] * 4  # (T0, T0 + 30], …
    assert {s["throughput_bps"] for s in body["data"]} == {100 * 1250 * 8}
    assert body["data"][1]["rq_delay_p99_s"] == 0.00125


def test_history_picks_a_resolution_of_at_most_1000_points(
    client: TestClient, viewer_headers: dict[str, str], slice_id: int
) -> None:
    body = history(client, viewer_headers, slice_id, start=T0, end=T0 + dt.timedelta(hours=10))
    assert body["resolution_s"] == 36
    assert history(client, viewer_headers, slice_id)["resolution_s"] == 4  # the last hour


def test_history_refuses_bad_ranges(
    client: TestClient, viewer_headers: dict[str, str], slice_id: int
) -> None:
    path = f"/api/v1/slices/{slice_id}/telemetry"
    inverted = {"start": (T0 + dt.timedelta(seconds=1)).isoformat(), "end": T0.isoformat()}
    response = client.get(path, params=inverted, headers=viewer_headers)
    assert response.status_code == 422
    assert response.json()["field"] == "query.start"
    week = {"start": T0.isoformat(), "end": (T0 + dt.timedelta(days=7)).isoformat()}
    response = client.get(path, params=week | {"resolution": 1}, headers=viewer_headers)
    assert response.status_code == 422
    assert response.json()["field"] == "query.resolution"
    assert client.get(path, headers={}).status_code == 401


def test_history_of_an_unknown_slice(client: TestClient, viewer_headers: dict[str, str]) -> None:
    response = client.get("/api/v1/slices/999999/telemetry", headers=viewer_headers)
    assert response.status_code == 404


def raw_and_minute_rows(db: sessionmaker[Session], slice_id: int) -> tuple[int, int]:
    with db() as session:
        rows = session.execute(
            select(TelemetrySample.downsampled, func.count())
            .where(TelemetrySample.slice_id == slice_id)
            .group_by(TelemetrySample.downsampled)
        ).tuples()
        found = dict(rows.all())
    return found.get(False, 0), found.get(True, 0)


def test_downsampling_folds_old_samples_into_exact_minute_rows(
    client: TestClient,
    viewer_headers: dict[str, str],
    db: sessionmaker[Session],
    slice_id: int,
) -> None:
    add_samples(db, slice_id, T0, 150)  # 12:00:01 .. 12:02:30
    now = T0 + dt.timedelta(hours=1, minutes=2, seconds=40)  # the cutoff is 12:02:00
    before = history(client, viewer_headers, slice_id, start=T0, end=now, resolution=60)
    for _ in range(2):  # the second run finds nothing left to fold
        downsample(db, now)
        # Samples up to 12:02:00 become the minutes (12:00, 12:01] and (12:01, 12:02] of 60
        # samples each; the 30 of the minute not yet whole stay raw.
        assert raw_and_minute_rows(db, slice_id) == (30, 2)
    after = history(client, viewer_headers, slice_id, start=T0, end=now, resolution=60)
    assert [s["throughput_bps"] for s in after["data"]] == [
        s["throughput_bps"] for s in before["data"]
    ]
    stored = history(client, viewer_headers, slice_id, start=T0, end=now)["data"]
    minute = stored[0]
    assert minute["downsampled"] and minute["interval_s"] == 60.0
    assert dt.datetime.fromisoformat(minute["t"]) == T0 + dt.timedelta(minutes=1)
    assert minute["throughput_bps"] == 100 * 1250 * 8


def test_retention_deletes_old_rows(db: sessionmaker[Session], slice_id: int) -> None:
    add_samples(db, slice_id, T0, 10)
    add_samples(db, slice_id, T0 + dt.timedelta(days=8), 10)
    partitions.expire(db.kw["bind"], T0 + dt.timedelta(days=8, seconds=30), 7 * 86400)
    assert raw_and_minute_rows(db, slice_id) == (10, 0)


def test_samples_are_copied_with_their_registers_escaped(db: sessionmaker[Session]) -> None:
    odd = {"vq_delay_s": 0.5, "note": "tab\there, back\\slash, line\nbreak, \\N"}
    records = [
        store.SampleRecord(
            ROWS_ONLY, 2, T0, 0.25, counts(3), TARGET, counters_reset=True, registers=odd
        ),
        store.SampleRecord(ROWS_ONLY, 2, T0 + dt.timedelta(seconds=1), 1.0, counts(4), TARGET),
    ]
    with db() as session:
        assert store.insert_samples(session, records) == 2
        session.commit()
        rows = session.scalars(
            select(TelemetrySample).where(TelemetrySample.slice_id == ROWS_ONLY).order_by("t")
        ).all()
    assert [row.registers for row in rows] == [odd, None]
    assert [(row.interval_s, row.counters_reset, row.t, row.hist_target) for row in rows] == [
        (0.25, True, T0, TARGET),
        (1.0, False, T0 + dt.timedelta(seconds=1), TARGET),
    ]
    assert rows[0].vq_hist == [3] + [0] * 7 and rows[1].forwarded_bytes == 4 * 1250


def test_histograms_of_different_targets_are_never_added(
    client: TestClient,
    viewer_headers: dict[str, str],
    db: sessionmaker[Session],
    slice_id: int,
) -> None:
    """The slice's target goes from 20 to 30 ms at 12:00:30 (of T1: other tests write samples
    at T0): that minute keeps one row per target when downsampled, a coarser history one bucket
    per target, each on its edges."""
    thirty = dp.histogram_target(0.03)
    add_samples(db, slice_id, T1, 30, rq_bucket=7)  # 20 ms or more
    add_samples(db, slice_id, T1 + dt.timedelta(seconds=30), 90, target=thirty, rq_bucket=7)
    now = T1 + dt.timedelta(hours=1, minutes=2, seconds=40)
    before = history(client, viewer_headers, slice_id, start=T1, end=now, resolution=60)
    downsample(db, now)
    with db() as session:
        minutes = session.execute(
            select(TelemetrySample.t, TelemetrySample.hist_target, TelemetrySample.rq_hist)
            .where(TelemetrySample.slice_id == slice_id, TelemetrySample.t > T1)
            .where(TelemetrySample.downsampled)
            .order_by(TelemetrySample.t, TelemetrySample.hist_target)
        ).all()
    first, second = T1 + dt.timedelta(minutes=1), T1 + dt.timedelta(minutes=2)
    assert [tuple(row) for row in minutes] == [
        (first, TARGET, [0] * 7 + [3000]),
        (first, thirty, [0] * 7 + [3000]),
        (second, thirty, [0] * 7 + [6000]),
    ]
    after = history(client, viewer_headers, slice_id, start=T1, end=now, resolution=60)
    for found in (before, after):
        delays = [(s["interval_s"], s["rq_delay_max_bucket_s"]) for s in found["data"]]
        assert delays == [(30.0, 0.02), (30.0, 0.03), (60.0, 0.03)]
        assert found["data"][0]["rq_cdf"][-1] == [0.02, 0.0]
        assert found["data"][1]["rq_cdf"][-1] == [0.03, 0.0]


def test_legacy_rows_are_read_on_the_former_global_edges(
    client: TestClient,
    viewer_headers: dict[str, str],
    db: sessionmaker[Session],
    slice_id: int,
) -> None:
    add_samples(db, slice_id, T1, 1, target=LEGACY_HIST_TARGET, rq_bucket=3)
    (sample,) = history(client, viewer_headers, slice_id, start=T1, end=T1 + dt.timedelta(1))[
        "data"
    ]
    assert sample["rq_delay_p99_s"] == 0.002  # [1, 2) ms on the old edges
    assert [edge for edge, _ in sample["rq_cdf"]] == [us / 1e6 for us in LEGACY_EDGES_US]


def raw_then_summed(
    client: TestClient,
    viewer_headers: dict[str, str],
    db: sessionmaker[Session],
    slice_id: int,
    records: list[store.SampleRecord],
    field: str,
) -> list[dict[str, Any]]:
    """Store ``records`` (within T1's first minute); their raw samples, once it is checked
    that the sums, a minute's bucket and the minute row downsampling leaves, say ``field``
    null."""
    with db() as session:
        store.insert_samples(session, records)
        session.commit()
    end = T1 + dt.timedelta(minutes=1)
    raw: list[dict[str, Any]] = history(
        client, viewer_headers, slice_id, start=T1, end=end, resolution=1
    )["data"]
    (summed,) = history(client, viewer_headers, slice_id, start=T1, end=end, resolution=60)["data"]
    assert summed[field] is None and summed["downsampled"]
    downsample(db, T1 + dt.timedelta(hours=2))
    (minute,) = history(client, viewer_headers, slice_id, start=T1, end=end, resolution=1)["data"]
    assert minute[field] is None and minute["downsampled"]
    return raw


def test_history_carries_codel_s_state_of_raw_samples_only(
    client: TestClient,
    viewer_headers: dict[str, str],
    db: sessionmaker[Session],
    slice_id: int,
) -> None:
    """A raw sample says CoDel's state at its reading (a typed `CodelState`); sums (coarser
    buckets, minute rows) say none: a state at an instant does not add up. A raw sample
    without registers (a switch that cannot read them) has neither."""
    registers = {"vq_delay_s": 0.006, "vq_last_seen_ticks": 42}
    records = [
        store.SampleRecord(slice_id, 1, T1 + dt.timedelta(seconds=1), 1.0, counts(5), TARGET,
                           registers=registers, codel=(True, 7)),
        store.SampleRecord(slice_id, 1, T1 + dt.timedelta(seconds=2), 1.0, counts(5), TARGET,
                           registers=registers, codel=(False, 7)),
        store.SampleRecord(slice_id, 1, T1 + dt.timedelta(seconds=3), 1.0, counts(5), TARGET),
    ]  # fmt: skip
    raw = raw_then_summed(client, viewer_headers, db, slice_id, records, "codel")
    assert [(s["codel"], s["registers"] is not None) for s in raw] == [
        ({"dropping": True, "count": 7}, True),
        ({"dropping": False, "count": 7}, True),
        (None, False),
    ]

    schema = client.get("/api/v1/openapi.json").json()["components"]["schemas"]
    assert schema["CodelState"]["required"] == ["dropping", "count"]
    assert schema["TelemetrySample"]["properties"]["codel"]["anyOf"] == [
        {"$ref": "#/components/schemas/CodelState"},
        {"type": "null"},
    ]


def test_history_carries_abc_s_state_of_raw_samples_only(
    client: TestClient,
    viewer_headers: dict[str, str],
    db: sessionmaker[Session],
    slice_id: int,
) -> None:
    """A raw sample says ABC's state at its reading (a typed `AbcState`: the busiest
    aggregates and the average activity); sums (coarser buckets, minute rows) say none."""
    registers = {"vq_delay_s": 0.006, "vq_last_seen_ticks": 42}
    state = {
        "average_activity": 2.25,
        "active_slots": 1,
        "aggregates": [{"slot": 3, "rate_bps": 4e6, "activity": 8.644, "idle_s": 0.0}],
    }
    records = [
        store.SampleRecord(slice_id, 1, T1 + dt.timedelta(seconds=1), 1.0, counts(5), TARGET,
                           registers=registers, abc=state),
        store.SampleRecord(slice_id, 1, T1 + dt.timedelta(seconds=2), 1.0, counts(5), TARGET),
    ]  # fmt: skip
    raw = raw_then_summed(client, viewer_headers, db, slice_id, records, "abc")
    assert [s["abc"] for s in raw] == [state, None]

    schema = client.get("/api/v1/openapi.json").json()["components"]["schemas"]
    assert schema["AbcState"]["required"] == ["average_activity", "active_slots", "aggregates"]
    assert schema["AbcAggregate"]["required"] == ["slot", "rate_bps", "activity", "idle_s"]
    assert schema["TelemetrySample"]["properties"]["abc"]["anyOf"] == [
        {"$ref": "#/components/schemas/AbcState"},
        {"type": "null"},
    ]
