"""The per-level sums admission reads (`link_level_loads`), and the link rows' flag of a slice
with an end-to-end target, follow every change of the slices; a creation is decided from the
sums without reading the link's slices, unless they cannot prove the answer."""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from sliceportal.db.models import LinkLevelLoad, Slice, SliceLink
from sliceportal.db.queries import links as link_queries
from sliceportal.domain.admission import Loads
from utils.factories import MBIT, create, create_link, slice_body

Headers = dict[str, str]


def stored_rows(session: Session, link_ids: list[int]) -> dict[tuple[int, int], LinkLevelLoad]:
    rows = session.scalars(select(LinkLevelLoad).where(LinkLevelLoad.link_id.in_(link_ids)))
    return {(row.link_id, row.priority): row for row in rows}


def expected_rows(session: Session, link_ids: list[int]) -> dict[tuple[int, int], dict[str, Any]]:
    """The rows recomputed here from the stored slices, in Python."""
    levels: dict[tuple[int, int], list[Slice]] = defaultdict(list)
    crossing = session.execute(
        select(SliceLink.link_id, Slice).join(Slice).where(SliceLink.link_id.in_(link_ids))
    )
    for link_id, row in crossing.tuples():
        levels[link_id, row.priority].append(row)
    return {
        key: {
            "slice_count": len(rows),
            "rate_bps": math.fsum(r.rate_bps for r in rows),
            "burst_bytes": math.fsum(r.rate_bps * r.burst_limit_s / 8 for r in rows),
            "min_delay_target_s": min(r.delay_target_s for r in rows),
            "max_packet_bytes": max((r.max_packet_bytes or 0 for r in rows), default=0) or None,
            "default_packet_count": sum(1 for r in rows if r.max_packet_bytes is None),
        }
        for key, rows in levels.items()
    }


def assert_rows_follow(db: sessionmaker[Session], link_ids: list[int]) -> None:
    with db() as session:
        stored, expected = stored_rows(session, link_ids), expected_rows(session, link_ids)
        flags = session.execute(
            select(SliceLink.has_e2e_target, Slice.e2e_delay_target_s)
            .join(Slice)
            .where(SliceLink.link_id.in_(link_ids))
        )
        assert all(flag == (target is not None) for flag, target in flags.tuples())
    assert stored.keys() == expected.keys()
    for key, want in expected.items():
        row = stored[key]
        for column, value in want.items():
            if column in ("rate_bps", "burst_bytes"):
                assert getattr(row, column) == pytest.approx(value, rel=1e-12), (key, column)
            else:
                assert getattr(row, column) == value, (key, column)


def test_rows_follow_creations_changes_moves_and_deletions(
    db: sessionmaker[Session], client: TestClient, operator_headers: Headers
) -> None:
    links = [create_link(client, operator_headers)["id"] for _ in range(3)]
    made = [
        create(
            client,
            "slices",
            operator_headers,
            slice_body(
                [links[i % 2]] if i % 3 else links[:2],
                rate_bps=(i + 1) * 11 * MBIT,
                burst_limit_s=0.002 * (i + 1),
                delay_target_s=0.5 - 0.01 * i,
                priority=i % 4 + 4,
                **({"max_packet_bytes": 200 + 100 * i} if i % 2 else {}),
                **({} if i % 3 else {"e2e_delay_target_s": 1.0}),
            ),
        )
        for i in range(8)
    ]
    assert_rows_follow(db, links)

    def patch(slice_id: int, body: dict[str, Any]) -> None:
        response = client.patch(f"/api/v1/slices/{slice_id}", json=body, headers=operator_headers)
        assert response.status_code == 200, response.text

    patch(made[0]["id"], {"rate_bps": 8 * MBIT})  # a sum goes down
    patch(made[1]["id"], {"priority": 1, "max_packet_bytes": None})  # level and packet change
    patch(made[2]["id"], {"delay_target_s": 0.005, "burst_limit_s": 0.0005})  # tighter minimum
    patch(made[3]["id"], {"link_ids": [links[2]]})  # moves to the third link, with its target
    patch(made[4]["id"], {"name": made[4]["name"] + "-renamed"})  # nothing admission reads
    patch(made[5]["id"], {"e2e_delay_target_s": 1.0})  # gets an end-to-end target
    patch(made[6]["id"], {"e2e_delay_target_s": None})  # loses it
    patch(made[0]["id"], {"e2e_delay_target_s": 2.0})  # keeps one
    assert_rows_follow(db, links)

    for gone in made[:6]:
        response = client.delete(f"/api/v1/slices/{gone['id']}", headers=operator_headers)
        assert response.status_code == 204
    assert_rows_follow(db, links)
    with db() as session:
        left = set(stored_rows(session, links))
    assert left == {(links[0], 6), (links[1], 6), (links[1], 7)}  # the third link is empty


def test_creations_and_changes_that_fit_read_no_slices(
    client: TestClient, operator_headers: Headers, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = (create_link(client, operator_headers)["id"] for _ in range(2))
    made = [
        create(client, "slices", operator_headers, slice_body([first], priority=priority))
        for priority in range(1, 8)
    ]

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a fitting change read every slice of the link")

    monkeypatch.setattr(link_queries, "read_loads", refuse)
    create(client, "slices", operator_headers, slice_body([first], priority=3))
    for slice_id, body in (
        (made[0]["id"], {"rate_bps": 20 * MBIT, "priority": 2}),
        (made[1]["id"], {"link_ids": [first, second], "e2e_delay_target_s": 0.05}),
        (made[2]["id"], {"link_ids": [second], "max_packet_bytes": 9000}),
    ):
        response = client.patch(f"/api/v1/slices/{slice_id}", json=body, headers=operator_headers)
        assert response.status_code == 200, response.text


def test_a_change_that_does_not_fit_is_refused_by_the_full_analysis(
    client: TestClient, operator_headers: Headers
) -> None:
    link = create_link(client, operator_headers, capacity_bps=100 * MBIT)
    made = create(client, "slices", operator_headers, slice_body([link["id"]]))
    create(client, "slices", operator_headers, slice_body([link["id"]]))
    response = client.patch(
        f"/api/v1/slices/{made['id']}", json={"rate_bps": 95 * MBIT}, headers=operator_headers
    )
    assert response.status_code == 409
    problem = response.json()
    assert problem["type"].endswith("admission-rejected"), problem
    assert made["name"] in {v["slice"] for v in problem["violations"]}
    assert "capacity" in {f["kind"] for f in problem["fixes"]}


def test_a_creation_on_its_target_exactly_is_decided_by_the_full_analysis(
    client: TestClient, operator_headers: Headers, monkeypatch: pytest.MonkeyPatch
) -> None:
    """8·(B1 + B2)/C is the target to the bit under harkous: admitted, by the full analysis."""
    link = create_link(client, operator_headers, capacity_bps=10 * MBIT, model="harkous")
    body = {"rate_bps": 2.5 * MBIT, "burst_limit_s": 0.02, "delay_target_s": 0.01}
    create(client, "slices", operator_headers, slice_body([link["id"]], **body))
    full_reads = []
    read_loads = link_queries.read_loads

    def counted(*args: Any, **kwargs: Any) -> Loads:
        full_reads.append(args)
        return read_loads(*args, **kwargs)

    monkeypatch.setattr(link_queries, "read_loads", counted)
    create(client, "slices", operator_headers, slice_body([link["id"]], **body))
    assert len(full_reads) == 1
    analysis = client.get(f"/api/v1/links/{link['id']}/analysis", headers=operator_headers)
    assert analysis.json()["admissible"] is True
    assert [s["worst_case_delay_s"] for s in analysis.json()["slices"]] == [0.01, 0.01]
