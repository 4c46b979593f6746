"""The clash query a creation runs under the switch locks stays cheap while the planner's
statistics are stale: a burst of creations (a benchmark, a bulk import) fills the tables faster
than autovacuum analyses them (at most once a minute), and a plan chosen for the few rows the
statistics remember can read every slice of the link. (The end-to-end lookups of admission still
can: docs/api.md, "What is left".)"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from sliceportal.core import embedded
from sliceportal.db.migrate import upgrade
from sliceportal.services.slices import _MATCH_CLASHES

FILLED = 3000
"""Slices on the one link after the statistics were taken (it held one then)."""


@pytest.fixture
def stale_statistics(postgres_server_url: str) -> Iterator[tuple[psycopg.Connection, int]]:
    """A fresh database analysed with one slice on its link, then filled with `FILLED` more
    slices (prefixes 10.x.y.0/24, all different), and a connection to it; yields the link."""
    name = f"sliceportal_plans_{uuid.uuid4().hex[:8]}"
    url = embedded.create_database(postgres_server_url, name)
    try:
        upgrade(url)
        with psycopg.connect(embedded.libpq_url(url), autocommit=True) as conn:
            switch = _one(
                conn, "INSERT INTO switches (name, address) VALUES ('s', 'h:1') RETURNING id"
            )
            link = _one(
                conn,
                "INSERT INTO links (switch_id, name, port, capacity_bps) "
                "VALUES (%s, 'l', 1, 1e11) RETURNING id",
                (switch,),
            )
            fill = """
            WITH made AS (
                INSERT INTO slices (name, ipv4_prefixes, rate_bps, burst_limit_s, delay_target_s,
                                    priority)
                SELECT 's' || g, ARRAY[format('10.%%s.%%s.0/24', g / 256, g %% 256)::cidr],
                       1e6, 0.01, 0.01, g %% 8
                FROM generate_series(%(first)s::integer, %(last)s::integer) AS g
                RETURNING id
            ), held AS (
                INSERT INTO slice_switches (slice_id, switch_id, dp_sid)
                SELECT id, %(switch)s, id FROM made
            )
            INSERT INTO slice_links (slice_id, link_id, switch_id)
            SELECT id, %(link)s, %(switch)s FROM made
            """
            conn.execute(fill, {"first": 0, "last": 0, "link": link, "switch": switch})
            conn.execute("ANALYZE")
            conn.execute(fill, {"first": 1, "last": FILLED, "link": link, "switch": switch})
            yield conn, link
    finally:
        embedded.drop_database(postgres_server_url, name)


def _one(conn: psycopg.Connection, query: str, params: Any = None) -> Any:
    row = conn.execute(query, params).fetchone()
    assert row is not None
    return row[0]


def rows_read(plan: dict[str, Any], relation: str) -> int:
    """Rows the nodes scanning `relation` produced, over all their loops."""
    own = plan["Actual Rows"] * plan["Actual Loops"] if plan.get("Relation Name") == relation else 0
    return own + sum(rows_read(child, relation) for child in plan.get("Plans", ()))


def test_clash_query_reads_only_the_links_of_the_slices_sharing_a_prefix(
    stale_statistics: tuple[psycopg.Connection, int],
) -> None:
    conn, link = stale_statistics
    explained = _one(
        conn,
        "EXPLAIN (ANALYZE, FORMAT JSON) " + _MATCH_CLASHES,
        {"links": [link], "slice": 0, "vlan": None, "prefixes": ["10.0.7.0/24"]},
    )
    plan = explained[0]["Plan"]
    assert rows_read(plan, "slice_links") == 1, plan
