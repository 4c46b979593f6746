"""The lookups a change of a slice runs under its locks stay cheap while the planner's statistics
are stale: a burst of creations (a benchmark, a bulk import) fills the tables faster than
autovacuum analyses them (at most once a minute), and a plan chosen for the few rows the
statistics remember can read every slice of the link."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import psycopg
import pytest

from sliceportal.core import embedded
from sliceportal.db.migrate import upgrade
from sliceportal.db.queries.links import CROSSING_PATHS, LEVEL_LOADS, LOCK_LINKS
from sliceportal.db.queries.slices import MATCH_CLASHES

FILLED = 3000
"""Slices on the link after the statistics were taken (it held one then)."""
PATHS = 5
"""Slices among them with an end-to-end target, crossing the link and a second one."""

_FILL = """
WITH made AS (
    INSERT INTO slices (name, ipv4_prefixes, rate_bps, burst_limit_s, delay_target_s,
                        e2e_delay_target_s, priority)
    SELECT 's' || g, ARRAY[format('10.%%s.%%s.0/24', g / 256, g %% 256)::cidr],
           1e6, 0.01, 0.01, CASE WHEN g = ANY(%(targeted)s) THEN 0.05 END, 1 + g %% 7
    FROM generate_series(%(first)s::integer, %(last)s::integer) AS g
    RETURNING id, e2e_delay_target_s
), held AS (
    INSERT INTO slice_switches (slice_id, switch_id, dp_sid)
    SELECT id, %(switch)s, id FROM made
)
INSERT INTO slice_links (slice_id, link_id, switch_id)
SELECT id, %(link)s, %(switch)s FROM made
UNION ALL
SELECT id, %(second)s, %(switch)s FROM made WHERE e2e_delay_target_s IS NOT NULL
"""
"""Slices `first`..`last` on the link; those numbered in `targeted` have an end-to-end target
and cross the second link too."""


@dataclass(frozen=True)
class Filled:
    conn: psycopg.Connection
    link: int
    second: int


@pytest.fixture
def stale_statistics(postgres_server_url: str) -> Iterator[Filled]:
    """A fresh database analysed with one slice on its link, then filled with `FILLED` more
    slices (prefixes 10.x.y.0/24, all different), `PATHS` of them with an end-to-end target
    crossing a second link of the switch too, and a connection to it."""
    name = f"sliceportal_plans_{uuid.uuid4().hex[:8]}"
    url = embedded.create_database(postgres_server_url, name)
    try:
        upgrade(url)
        with psycopg.connect(embedded.libpq_url(url), autocommit=True) as conn:
            switch = _one(
                conn, "INSERT INTO switches (name, address) VALUES ('s', 'h:1') RETURNING id"
            )
            link, second = (
                _one(
                    conn,
                    "INSERT INTO links (switch_id, name, port, capacity_bps) "
                    "VALUES (%s, %s, %s, 1e11) RETURNING id",
                    (switch, f"l{port}", port),
                )
                for port in (1, 2)
            )
            ids = {"link": link, "second": second, "switch": switch}
            conn.execute(_FILL, {"first": 0, "last": 0, "targeted": []} | ids)
            conn.execute("ANALYZE")
            targeted = list(range(FILLED // PATHS, FILLED + 1, FILLED // PATHS))
            conn.execute(_FILL, {"first": 1, "last": FILLED, "targeted": targeted} | ids)
            yield Filled(conn, link, second)
    finally:
        embedded.drop_database(postgres_server_url, name)


def _one(conn: psycopg.Connection, query: str, params: Any = None) -> Any:
    row = conn.execute(query, params).fetchone()
    assert row is not None
    return row[0]


def _plan(conn: psycopg.Connection, query: str, params: dict[str, Any]) -> dict[str, Any]:
    plan: dict[str, Any] = _one(conn, "EXPLAIN (ANALYZE, FORMAT JSON) " + query, params)[0]["Plan"]
    return plan


def rows_read(plan: dict[str, Any], relation: str) -> int:
    """Rows the nodes scanning `relation` produced, over all their loops."""
    own = plan["Actual Rows"] * plan["Actual Loops"] if plan.get("Relation Name") == relation else 0
    return own + sum(rows_read(child, relation) for child in plan.get("Plans", ()))


def test_clash_query_reads_only_the_links_of_the_slices_sharing_a_prefix(
    stale_statistics: Filled,
) -> None:
    filled = stale_statistics
    plan = _plan(
        filled.conn,
        MATCH_CLASHES,
        {"links": [filled.link], "slice": 0, "vlan": None, "prefixes": ["10.0.7.0/24"]},
    )
    assert rows_read(plan, "slice_links") == 1, plan


@pytest.mark.parametrize(
    "query",
    [LOCK_LINKS, LEVEL_LOADS, CROSSING_PATHS],
    ids=["lock", "loads", "paths"],
)
def test_end_to_end_lookups_read_only_the_slices_with_a_target(
    stale_statistics: Filled, query: str
) -> None:
    """Admission finds the slices with an end-to-end target crossing the changed link, and
    their paths, without reading the link's other slices (each path: two link rows)."""
    filled = stale_statistics
    params = {"links": [filled.link], "changed": [filled.link], "slice": 0}
    plan = _plan(filled.conn, query, params)
    assert rows_read(plan, "slice_links") <= 3 * PATHS, plan
    assert rows_read(plan, "slices") <= PATHS, plan
