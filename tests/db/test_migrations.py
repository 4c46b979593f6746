from __future__ import annotations

import uuid

import psycopg
from alembic import command
from sqlalchemy import create_engine, inspect

from sliceportal.core import embedded
from sliceportal.db.migrate import alembic_config, downgrade, upgrade
from sliceportal.db.models import Base


def test_models_and_migrations_agree(migrated_url: str) -> None:
    """`alembic check`: autogenerate finds nothing to add, drop or alter."""
    command.check(alembic_config(migrated_url))


def test_downgrade_and_upgrade_again(postgres_server_url: str) -> None:
    name = f"sliceportal_migrate_{uuid.uuid4().hex[:8]}"
    url = embedded.create_database(postgres_server_url, name)
    try:
        upgrade(url)
        downgrade(url, "base")
        engine = create_engine(url)
        assert set(inspect(engine).get_table_names()) == {"alembic_version"}
        upgrade(url)
        assert set(inspect(engine).get_table_names()) == set(Base.metadata.tables) | {
            "alembic_version"
        }
        engine.dispose()
    finally:
        embedded.drop_database(postgres_server_url, name)


def test_link_rows_of_stored_slices_with_an_end_to_end_target_are_flagged(
    postgres_server_url: str,
) -> None:
    """0007 sets `slice_links.has_e2e_target` on the rows that exist when it runs."""
    name = f"sliceportal_migrate_{uuid.uuid4().hex[:8]}"
    url = embedded.create_database(postgres_server_url, name)
    try:
        upgrade(url, "0006")
        with psycopg.connect(embedded.libpq_url(url), autocommit=True) as conn:
            conn.execute(
                """
                WITH switch AS (
                    INSERT INTO switches (name, address) VALUES ('s', 'h:1') RETURNING id
                ), link AS (
                    INSERT INTO links (switch_id, name, port, capacity_bps)
                    SELECT id, 'l', 1, 1e9 FROM switch RETURNING id, switch_id
                ), made AS (
                    INSERT INTO slices (name, vlan_id, rate_bps, burst_limit_s,
                                        delay_target_s, e2e_delay_target_s, priority)
                    VALUES ('with', 10, 1e6, 0.01, 0.01, 0.05, 1),
                           ('without', 20, 1e6, 0.01, 0.01, NULL, 1)
                    RETURNING id
                ), held AS (
                    INSERT INTO slice_switches (slice_id, switch_id, dp_sid)
                    SELECT made.id, link.switch_id, made.id FROM made, link
                )
                INSERT INTO slice_links (slice_id, link_id, switch_id)
                SELECT made.id, link.id, link.switch_id FROM made, link
                """
            )
            upgrade(url)
            flags = conn.execute(
                "SELECT slices.name, has_e2e_target FROM slice_links JOIN slices ON id = slice_id"
            ).fetchall()
        assert sorted(flags) == [("with", True), ("without", False)]
    finally:
        embedded.drop_database(postgres_server_url, name)
