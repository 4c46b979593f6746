from __future__ import annotations

import logging
import uuid

import psycopg
import pytest
from alembic import command
from sqlalchemy import Engine, create_engine, inspect, select, text
from sqlalchemy.orm import Session

from sliceportal.controlplane.desired import intents
from sliceportal.core import embedded
from sliceportal.db.migrate import alembic_config, downgrade, upgrade
from sliceportal.db.models import Base, Slice
from sliceportal.domain.telemetry import LEGACY_HIST_TARGET


def test_models_and_migrations_agree(migrated_url: str) -> None:
    """`alembic check`: autogenerate finds nothing to add, drop or alter."""
    command.check(alembic_config(migrated_url))


def tables(engine: Engine) -> set[str]:
    """The tables of the database, without the partitions of `telemetry_samples`."""
    with engine.connect() as connection:
        partitions = set(
            connection.scalars(text("SELECT relname FROM pg_class WHERE relispartition"))
        )
    return set(inspect(engine).get_table_names()) - partitions


def test_downgrade_and_upgrade_again(postgres_server_url: str) -> None:
    name = f"sliceportal_migrate_{uuid.uuid4().hex[:8]}"
    url = embedded.create_database(postgres_server_url, name)
    try:
        upgrade(url)
        downgrade(url, "base")
        engine = create_engine(url)
        assert tables(engine) == {"alembic_version"}
        upgrade(url)
        assert tables(engine) == set(Base.metadata.tables) | {"alembic_version"}
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


_BEFORE_0008 = """
WITH switch AS (
    INSERT INTO switches (name, address) VALUES ('s', 'h:1') RETURNING id
), link AS (
    INSERT INTO links (switch_id, name, port, capacity_bps, model, queue_count)
    SELECT id, name, port, capacity, model, queues FROM switch, (VALUES
        ('paper', 1, 331e6, 'harkous', 8),
        ('single', 2, 1e9, 'harkous', 1),
        ('sound', 3, 1e9, 'netcalc', 8)) AS given (name, port, capacity, model, queues)
    RETURNING id, name, switch_id
), made AS (
    INSERT INTO slices (name, vlan_id, rate_bps, burst_limit_s, delay_target_s, priority, state)
    VALUES ('DC', 10, 48e6, 0.02, 0.02, 7, 'active'),
           ('Enterprise', 11, 12e6, 0.01, 0.01, 7, 'active'),
           ('Peering', 12, 240e6, 0.03, 0.03, 6, 'active'),
           ('low', 13, 2e6, 0.01, 0.01, 0, 'active'),
           ('other', 14, 1e6, 0.01, 0.01, 5, 'active')
    RETURNING id, name
), held AS (
    INSERT INTO slice_switches (slice_id, switch_id, dp_sid)
    SELECT made.id, switch.id, made.id FROM made, switch
)
INSERT INTO slice_links (slice_id, link_id, switch_id)
SELECT made.id, link.id, link.switch_id FROM made JOIN link ON CASE
    WHEN made.name IN ('DC', 'Enterprise', 'Peering') THEN link.name = 'paper'
    WHEN made.name = 'low' THEN link.name = 'single'
    ELSE link.name = 'sound' END
"""
"""The paper's slices on a harkous link of 331 Mbit/s, where harkous admits them and netcalc
does not (Peering: 30.6 ms against 30); a harkous link with one queue and a slice at priority
0; a netcalc link that 0008 leaves alone."""


def test_0008_moves_harkous_links_and_best_effort_priorities_with_change_log_entries(
    postgres_server_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    name = f"sliceportal_migrate_{uuid.uuid4().hex[:8]}"
    url = embedded.create_database(postgres_server_url, name)
    try:
        upgrade(url, "0007")
        with psycopg.connect(embedded.libpq_url(url), autocommit=True) as conn:
            conn.execute(_BEFORE_0008)
            assert conn.execute(
                "SELECT priority FROM link_level_loads JOIN links ON links.id = link_id "
                "WHERE links.name = 'single'"
            ).fetchall() == [(0,)]
            with caplog.at_level(logging.WARNING, logger="sliceportal.migrations"):
                upgrade(url)
            links = {
                row[0]: row[1:]
                for row in conn.execute(
                    "SELECT name, model, queue_count, frame_overhead_bytes, capacity_bps FROM links"
                )
            }
            slices = {
                row[0]: row[1:] for row in conn.execute("SELECT name, priority, state FROM slices")
            }
            entries = conn.execute(
                "SELECT entity_type, entity_name, user_id, action, before, after FROM change_log "
                "WHERE request_id = 'migration-0008' ORDER BY id"
            ).fetchall()
            levels = conn.execute(
                "SELECT links.name, priority, slice_count FROM link_level_loads "
                "JOIN links ON links.id = link_id ORDER BY links.name, priority"
            ).fetchall()
            outbox = conn.execute("SELECT task, args FROM outbox").fetchall()
            switch_id = conn.execute("SELECT id FROM switches").fetchone()
            crossing = conn.execute(
                "SELECT count(*) FROM slice_links JOIN links ON links.id = link_id "
                "WHERE links.name = 'paper'"
            ).fetchone()
        engine = create_engine(url)
        with Session(engine) as session:
            low = session.scalars(select(Slice.id).where(Slice.name == "low")).one()
            asked = intents(session, slice_ids=[low])
        engine.dispose()
    finally:
        embedded.drop_database(postgres_server_url, name)

    assert links["paper"] == ("netcalc", 8, 0, 331e6)  # nothing else changes
    assert links["single"] == ("netcalc", 2, 0, 1e9)
    assert links["sound"] == ("netcalc", 8, 0, 1e9)
    assert slices["low"] == (1, "pending")
    assert slices["Peering"] == (6, "active") and slices["other"] == (5, "active")
    assert crossing == (3,)  # the slices that no longer fit stay where they are
    assert levels == [
        ("paper", 6, 1),
        ("paper", 7, 2),
        ("single", 1, 1),
        ("sound", 5, 1),
    ]
    assert switch_id is not None
    assert outbox == [("sliceportal.controlplane.tasks.reconcile_switch", [switch_id[0]])]
    # What the reconciliation the outbox asks for writes: the slice's entries at priority 1.
    (intent,) = asked.values()
    assert intent.error is None
    assert {v for e in intent.entries for k, v in e.params if k == "priority"} == {1}

    logged = {(kind, entity, tuple(sorted(after))): (user, action, before, after)
              for kind, entity, user, action, before, after in entries}  # fmt: skip
    assert len(entries) == 4
    assert logged[("link", "single", ("queue_count",))] == (
        None, "update", {"queue_count": 1}, {"queue_count": 2}
    )  # fmt: skip
    assert logged[("slice", "low", ("priority", "state"))] == (
        None,
        "update",
        {"priority": 0, "state": "active"},
        {"priority": 1, "state": "pending"},
    )
    single = logged[("link", "single", ("model", "no_longer_fit"))]
    assert single == (
        None,
        "update",
        {"model": "harkous"},
        {"model": "netcalc", "no_longer_fit": []},
    )
    paper = logged[("link", "paper", ("min_capacity_bps", "model", "no_longer_fit"))]
    assert paper[:3] == (None, "update", {"model": "harkous"})
    unfit = paper[3]["no_longer_fit"]
    assert [(v["name"], v["delay_target_s"]) for v in unfit] == [("Peering", 0.03)]
    assert unfit[0]["worst_case_delay_s"] == pytest.approx(0.0306, abs=1e-4)
    assert unfit[0]["slice_id"] > 0
    assert paper[3]["min_capacity_bps"] == pytest.approx(336.4e6, rel=1e-3)
    warned = [r.getMessage() for r in caplog.records if r.name == "sliceportal.migrations"]
    assert len(warned) == 1 and "'Peering'" in warned[0] and "'paper'" in warned[0]


_SAMPLE = """
INSERT INTO telemetry_samples (slice_id, t, switch_id, downsampled, {target} interval_s,
    forwarded_packets, forwarded_bytes, vq_dropped_packets, vq_dropped_bytes,
    real_dropped_packets, real_dropped_bytes, ecn_marked_packets, ecn_marked_bytes,
    vq_hist, rq_hist)
VALUES (1, '2026-11-26 12:01:00+00', 1, true, {value} 60, 10, 12500, 0, 0, 0, 0, 0, 0,
        '{{10,0,0,0,0,0,0,0}}', '{{0,0,0,10,0,0,0,0}}')
"""


def test_0009_keeps_the_samples_stored_as_legacy_rows(postgres_server_url: str) -> None:
    """Rows counted on the former global edges stay, marked -1 (`LEGACY_HIST_TARGET`); a row
    of another target may share their minute; a downgrade keeps only the legacy rows."""
    name = f"sliceportal_migrate_{uuid.uuid4().hex[:8]}"
    url = embedded.create_database(postgres_server_url, name)
    try:
        upgrade(url, "0008")
        with psycopg.connect(embedded.libpq_url(url), autocommit=True) as conn:
            conn.execute(_SAMPLE.format(target="", value=""))
            upgrade(url, "0009")
            assert conn.execute(
                "SELECT hist_target, rq_hist FROM telemetry_samples"
            ).fetchall() == [(LEGACY_HIST_TARGET, [0, 0, 0, 10, 0, 0, 0, 0])]
            conn.execute(_SAMPLE.format(target="hist_target,", value="1310720000000,"))
            with pytest.raises(psycopg.errors.CheckViolation):
                conn.execute(_SAMPLE.format(target="hist_target,", value="-2,"))
            with pytest.raises(psycopg.errors.NotNullViolation):
                conn.execute(_SAMPLE.format(target="hist_target,", value="NULL,"))
            assert conn.execute("SELECT count(*) FROM telemetry_samples").fetchone() == (2,)
            downgrade(url, "0008")
            assert conn.execute("SELECT rq_hist FROM telemetry_samples").fetchall() == [
                ([0, 0, 0, 10, 0, 0, 0, 0],)
            ]
    finally:
        embedded.drop_database(postgres_server_url, name)


def test_0010_allows_the_meter_scheme_and_its_downgrade_refuses_while_a_slice_uses_it(
    postgres_server_url: str,
) -> None:
    name = f"sliceportal_migrate_{uuid.uuid4().hex[:8]}"
    url = embedded.create_database(postgres_server_url, name)
    insert = (
        "INSERT INTO slices (name, vlan_id, rate_bps, burst_limit_s, delay_target_s, priority, "
        "scheme) VALUES ('metered', 10, 1e6, 0.01, 0.01, 7, 'meter')"
    )
    try:
        upgrade(url, "0009")
        with psycopg.connect(embedded.libpq_url(url), autocommit=True) as conn:
            with pytest.raises(psycopg.errors.CheckViolation, match="ck_slices_queue_scheme"):
                conn.execute(insert)
            upgrade(url, "0010")
            conn.execute(insert)
            with pytest.raises(psycopg.errors.CheckViolation, match="ck_slices_queue_scheme"):
                conn.execute(insert.replace("'meter'", "'bogus'").replace("'metered'", "'x'"))
            with pytest.raises(RuntimeError, match="'metered'"):
                downgrade(url, "0009")
            assert conn.execute("SELECT version_num FROM alembic_version").fetchone() == ("0010",)
            conn.execute("UPDATE slices SET scheme = 'tail_drop'")
            downgrade(url, "0009")
            with pytest.raises(psycopg.errors.CheckViolation, match="ck_slices_queue_scheme"):
                conn.execute(insert.replace("'metered'", "'again'"))
    finally:
        embedded.drop_database(postgres_server_url, name)


def test_0011_clamps_rates_the_analytics_refuse_and_logs_each_change(
    postgres_server_url: str,
) -> None:
    """A link of 1e308 bit/s (stored while the API took it) broke every report: the upgrade
    brings it to 1 Pbit/s, a slice's 0.5 bit/s to 1 bit/s, each with a change-log entry, and
    the database refuses such values from then on."""
    name = f"sliceportal_migrate_{uuid.uuid4().hex[:8]}"
    url = embedded.create_database(postgres_server_url, name)
    try:
        upgrade(url, "0010")
        with psycopg.connect(embedded.libpq_url(url), autocommit=True) as conn:
            conn.execute("INSERT INTO switches (name, address) VALUES ('s', '127.0.0.1:9')")
            conn.execute(
                "INSERT INTO links (switch_id, name, port, capacity_bps) VALUES "
                "(1, 'huge', 1, 1e308), (1, 'fine', 2, 1e9)"
            )
            conn.execute(
                "INSERT INTO slices (name, vlan_id, rate_bps, burst_limit_s, delay_target_s, "
                "priority) VALUES ('slow', 10, 0.5, 0.01, 0.01, 7)"
            )
            upgrade(url)
            assert conn.execute("SELECT name, capacity_bps FROM links ORDER BY id").fetchall() == [
                ("huge", 1e15),
                ("fine", 1e9),
            ]
            assert conn.execute("SELECT rate_bps FROM slices").fetchall() == [(1.0,)]
            log = conn.execute(
                "SELECT request_id, entity_type, entity_name, before, after FROM change_log "
                "ORDER BY id"
            ).fetchall()
            assert [
                (*entry[:3], *map(float, [*entry[3].values(), *entry[4].values()])) for entry in log
            ] == [
                ("migration-0011", "link", "huge", 1e308, 1e15),
                ("migration-0011", "slice", "slow", 0.5, 1.0),
            ]
            assert [list(entry[3]) for entry in log] == [["capacity_bps"], ["rate_bps"]]
            with pytest.raises(psycopg.errors.CheckViolation, match="ck_links_capacity_range"):
                conn.execute("UPDATE links SET capacity_bps = 2e15 WHERE name = 'fine'")
            with pytest.raises(psycopg.errors.CheckViolation, match="ck_slices_rate_range"):
                conn.execute("UPDATE slices SET rate_bps = 0.5")
            downgrade(url, "0010")
            conn.execute("UPDATE links SET capacity_bps = 2e15 WHERE name = 'fine'")
    finally:
        embedded.drop_database(postgres_server_url, name)


def test_0012_allows_codel_slices_with_their_parameters_and_its_downgrade_refuses_while_one_is(
    postgres_server_url: str,
) -> None:
    """The scheme's CHECK gains codel; its parameters come exactly with it, positive, the
    target below the burst limit; a downgrade refuses while a slice uses codel."""
    name = f"sliceportal_migrate_{uuid.uuid4().hex[:8]}"
    url = embedded.create_database(postgres_server_url, name)
    insert = (
        "INSERT INTO slices (name, vlan_id, rate_bps, burst_limit_s, delay_target_s, priority, "
        "scheme, codel_target_s, codel_interval_s, codel_ecn_mark) "
        "VALUES ('{name}', 10, 1e6, 0.01, 0.01, 7, '{scheme}', {target}, {interval}, {ecn})"
    )

    def refused(constraint: str, **values: object) -> None:
        row = {"name": "x", "scheme": "codel", "target": 0.005, "interval": 0.1, "ecn": "false"}
        with pytest.raises(psycopg.errors.CheckViolation, match=constraint):
            conn.execute(insert.format(**(row | values)))

    try:
        upgrade(url, "0011")
        with psycopg.connect(embedded.libpq_url(url), autocommit=True) as conn:
            with pytest.raises(psycopg.errors.CheckViolation, match="ck_slices_queue_scheme"):
                conn.execute(
                    "INSERT INTO slices (name, vlan_id, rate_bps, burst_limit_s, delay_target_s, "
                    "priority, scheme) VALUES ('early', 10, 1e6, 0.01, 0.01, 7, 'codel')"
                )
            upgrade(url, "0012")
            conn.execute(
                insert.format(name="held", scheme="codel", target=0.005, interval=0.1, ecn="true")
            )
            refused("ck_slices_codel_iff_codel_scheme", ecn="NULL")
            refused("ck_slices_codel_iff_codel_scheme", scheme="tail_drop")
            refused("ck_slices_codel_target_within_burst_limit", target=0.01)
            refused("ck_slices_codel_target_within_burst_limit", target=0)
            refused("ck_slices_codel_interval_positive", interval=0)
            with pytest.raises(RuntimeError, match="'held'"):
                downgrade(url, "0011")
            assert conn.execute("SELECT version_num FROM alembic_version").fetchone() == ("0012",)
            conn.execute(
                "UPDATE slices SET scheme = 'tail_drop', codel_target_s = NULL, "
                "codel_interval_s = NULL, codel_ecn_mark = NULL"
            )
            downgrade(url, "0011")
            columns = conn.execute(
                "SELECT column_name FROM information_schema.columns "
                "WHERE table_name = 'slices' AND column_name LIKE 'codel%'"
            ).fetchall()
            assert columns == []
    finally:
        embedded.drop_database(postgres_server_url, name)


def test_0013_counts_aqm_drops_and_the_samples_stored_before_count_none(
    postgres_server_url: str,
) -> None:
    name = f"sliceportal_migrate_{uuid.uuid4().hex[:8]}"
    url = embedded.create_database(postgres_server_url, name)
    try:
        upgrade(url, "0012")
        with psycopg.connect(embedded.libpq_url(url), autocommit=True) as conn:
            conn.execute(_SAMPLE.format(target="hist_target,", value="1310720000000,"))
            upgrade(url, "0013")
            assert conn.execute(
                "SELECT aqm_dropped_packets, aqm_dropped_bytes FROM telemetry_samples"
            ).fetchall() == [(0, 0)]
            with pytest.raises(psycopg.errors.NotNullViolation, match="aqm_dropped_packets"):
                conn.execute(
                    _SAMPLE.format(target="hist_target,", value="1310720000000,").replace(
                        "12:01", "12:02"
                    )
                )
            downgrade(url, "0012")
            assert conn.execute("SELECT count(*) FROM telemetry_samples").fetchone() == (1,)
    finally:
        embedded.drop_database(postgres_server_url, name)


def _sample_0013(minute: int = 1, downsampled: str = "true", **columns: str) -> str:
    """`_SAMPLE` as migration 0013 stores it (its target and AQM drops), at 12:`minute`, with
    `columns` added (name: SQL value), for the migrations that add columns after it."""
    sql = _SAMPLE.format(
        target="hist_target, aqm_dropped_packets, aqm_dropped_bytes,", value="1310720000000, 0, 0,"
    )
    sql = sql.replace("12:01", f"12:{minute:02d}").replace(
        "+00', 1, true,", f"+00', 1, {downsampled},"
    )
    names = "".join(f", {name}" for name in columns)
    values = "".join(f", {value}" for value in columns.values())
    return sql.replace("vq_hist, rq_hist)", f"vq_hist, rq_hist{names})").replace(
        "'{0,0,0,10,0,0,0,0}')", f"'{{0,0,0,10,0,0,0,0}}'{values})"
    )


def test_0014_keeps_codel_s_state_whole_and_the_samples_stored_before_have_none(
    postgres_server_url: str,
) -> None:
    """Nullable, both or neither, the count not negative; a downgrade drops them."""
    name = f"sliceportal_migrate_{uuid.uuid4().hex[:8]}"
    url = embedded.create_database(postgres_server_url, name)

    def sample(minute: int, dropping: str, count: str) -> str:
        return _sample_0013(minute, codel_dropping=dropping, codel_count=count)

    try:
        upgrade(url, "0013")
        with psycopg.connect(embedded.libpq_url(url), autocommit=True) as conn:
            conn.execute(_sample_0013())
            upgrade(url, "0014")
            conn.execute(sample(2, "true", "7"))
            conn.execute(sample(3, "false", "0"))
            assert conn.execute(
                "SELECT codel_dropping, codel_count FROM telemetry_samples ORDER BY t"
            ).fetchall() == [(None, None), (True, 7), (False, 0)]
            for dropping, count in (("true", "NULL"), ("NULL", "3"), ("false", "-1")):
                with pytest.raises(psycopg.errors.CheckViolation, match="codel_state"):
                    conn.execute(sample(4, dropping, count))
            downgrade(url, "0013")
            assert conn.execute("SELECT count(*) FROM telemetry_samples").fetchone() == (3,)
            columns = conn.execute(
                "SELECT column_name FROM information_schema.columns "
                "WHERE table_name = 'telemetry_samples' AND column_name LIKE 'codel%'"
            ).fetchall()
            assert columns == []
    finally:
        embedded.drop_database(postgres_server_url, name)


def test_0015_allows_abc_slices_with_all_their_parameters_and_its_downgrade_refuses_while_one_is(
    postgres_server_url: str,
) -> None:
    """The scheme's CHECK gains abc; its eight parameters come exactly with it, each in its
    range, the thresholds ordered within the burst limit, the prefix length 32 unless the key
    is a source prefix; a downgrade refuses while a slice uses abc."""
    name = f"sliceportal_migrate_{uuid.uuid4().hex[:8]}"
    url = embedded.create_database(postgres_server_url, name)
    columns = (
        "abc_meter_memory_s, abc_average_memory_s, abc_reference_rate_bps, abc_q_min_s, "
        "abc_q_base_s, abc_gamma_s, abc_key, abc_prefix_length"
    )
    insert = (
        "INSERT INTO slices (name, vlan_id, rate_bps, burst_limit_s, delay_target_s, priority, "
        f"scheme, {columns}) VALUES ('{{name}}', 10, 1e6, 0.01, 0.01, 7, '{{scheme}}', "
        "{meter}, {average}, {reference}, {q_min}, {q_base}, {gamma}, {key}, {length})"
    )
    held = {
        "name": "held",
        "scheme": "abc",
        "meter": 3.0,
        "average": 0.3,
        "reference": 1e4,
        "q_min": 0.0036,
        "q_base": 0.01,
        "gamma": 0.0096,
        "key": "'source_address'",
        "length": 32,
    }

    def refused(constraint: str, **values: object) -> None:
        with pytest.raises(psycopg.errors.CheckViolation, match=constraint):
            conn.execute(insert.format(**(held | {"name": "x"} | values)))

    try:
        upgrade(url, "0014")
        with psycopg.connect(embedded.libpq_url(url), autocommit=True) as conn:
            with pytest.raises(psycopg.errors.CheckViolation, match="ck_slices_queue_scheme"):
                conn.execute(
                    "INSERT INTO slices (name, vlan_id, rate_bps, burst_limit_s, delay_target_s, "
                    "priority, scheme) VALUES ('early', 10, 1e6, 0.01, 0.01, 7, 'abc')"
                )
            upgrade(url, "0015")
            conn.execute(insert.format(**held))
            conn.execute(
                insert.format(**held | {"name": "by_prefix", "key": "'source_prefix'", "length": 0})
            )
            refused("ck_slices_abc_iff_abc_scheme", gamma="NULL")
            refused("ck_slices_abc_iff_abc_scheme", scheme="tail_drop")
            refused("ck_slices_abc_meter_memory_range", meter=0.0005)
            refused("ck_slices_abc_average_memory_range", average=10.5)
            refused("ck_slices_abc_reference_rate_range", reference=0.5)
            refused("ck_slices_abc_q_min_range", q_min=-0.001)
            refused("ck_slices_abc_q_min_range", q_min=0.006, q_base=0.005)
            refused("ck_slices_abc_q_base_within_burst_limit", q_base=0.011)
            refused("ck_slices_abc_gamma_range", gamma=-1)
            refused("ck_slices_abc_key", key="'destination'")
            refused("ck_slices_abc_prefix_length_range", length=24)
            refused("ck_slices_abc_prefix_length_range", key="'source_prefix'", length=33)
            with pytest.raises(psycopg.errors.CheckViolation, match="within_burst_limit"):
                conn.execute("UPDATE slices SET burst_limit_s = 0.005 WHERE name = 'held'")
            with pytest.raises(RuntimeError, match="'held', 'by_prefix'"):
                downgrade(url, "0014")
            assert conn.execute("SELECT version_num FROM alembic_version").fetchone() == ("0015",)
            nulls = ", ".join(f"{column} = NULL" for column in columns.split(", "))
            conn.execute(f"UPDATE slices SET scheme = 'tail_drop', {nulls}")
            downgrade(url, "0014")
            assert (
                conn.execute(
                    "SELECT column_name FROM information_schema.columns "
                    "WHERE table_name = 'slices' AND column_name LIKE 'abc%'"
                ).fetchall()
                == []
            )
            with pytest.raises(psycopg.errors.CheckViolation, match="ck_slices_queue_scheme"):
                conn.execute("UPDATE slices SET scheme = 'abc'")
    finally:
        embedded.drop_database(postgres_server_url, name)


def test_0016_keeps_abc_s_state_as_an_object_of_raw_samples_and_the_ones_before_have_none(
    postgres_server_url: str,
) -> None:
    """Nullable JSONB, an object, never in a minute row; a downgrade drops it."""
    name = f"sliceportal_migrate_{uuid.uuid4().hex[:8]}"
    url = embedded.create_database(postgres_server_url, name)

    def sample(minute: int, abc: str, downsampled: str = "false") -> str:
        return _sample_0013(minute, downsampled=downsampled, abc=abc)

    state = '{"average_activity": 1.5, "active_slots": 0, "aggregates": []}'
    try:
        upgrade(url, "0015")
        with psycopg.connect(embedded.libpq_url(url), autocommit=True) as conn:
            conn.execute(_sample_0013())
            upgrade(url, "0016")
            conn.execute(sample(2, f"'{state}'"))
            conn.execute(sample(3, "NULL", downsampled="true"))
            assert conn.execute("SELECT abc FROM telemetry_samples ORDER BY t").fetchall() == [
                (None,),
                ({"average_activity": 1.5, "active_slots": 0, "aggregates": []},),
                (None,),
            ]
            for abc, downsampled in (("'[1]'", "false"), (f"'{state}'", "true")):
                with pytest.raises(psycopg.errors.CheckViolation, match="abc_state"):
                    conn.execute(sample(4, abc, downsampled))
            downgrade(url, "0015")
            assert conn.execute("SELECT count(*) FROM telemetry_samples").fetchone() == (3,)
            columns = conn.execute(
                "SELECT column_name FROM information_schema.columns "
                "WHERE table_name = 'telemetry_samples' AND column_name = 'abc'"
            ).fetchall()
            assert columns == []
    finally:
        embedded.drop_database(postgres_server_url, name)


def test_0020_moves_the_samples_stored_into_partitions_and_its_downgrade_back(
    postgres_server_url: str,
) -> None:
    """Raw samples land in the partition of their hour, minute rows in that of their day, a
    sample stamped on the hour in the hour it ends; every constraint still holds; a downgrade
    gives one table of the same rows."""
    name = f"sliceportal_migrate_{uuid.uuid4().hex[:8]}"
    url = embedded.create_database(postgres_server_url, name)
    rows = "SELECT t, downsampled, forwarded_bytes FROM telemetry_samples ORDER BY t, downsampled"
    try:
        upgrade(url, "0019")
        with psycopg.connect(embedded.libpq_url(url), autocommit=True) as conn:
            for minute, downsampled in ((1, "true"), (30, "false"), (0, "false")):
                conn.execute(_sample_0013(minute, downsampled))
            conn.execute(_sample_0013(0, "false").replace("12:00:00", "13:00:00"))
            stored = conn.execute(rows).fetchall()
            upgrade(url, "0020")
            assert conn.execute(rows).fetchall() == stored
            where = conn.execute(
                "SELECT to_char(t, 'HH24:MI'), downsampled, tableoid::regclass::text "
                "FROM telemetry_samples ORDER BY t, downsampled"
            ).fetchall()
            assert where == [
                ("12:00", False, "telemetry_samples_raw_20261126_110000"),
                ("12:01", True, "telemetry_samples_minute_20261126_000000"),
                ("12:30", False, "telemetry_samples_raw_20261126_120000"),
                ("13:00", False, "telemetry_samples_raw_20261126_120000"),
            ]
            with pytest.raises(psycopg.errors.UniqueViolation, match="raw_20261126_120000_pkey"):
                conn.execute(_sample_0013(30, "false"))  # the partition's part of the key
            with pytest.raises(psycopg.errors.CheckViolation, match="abc_state"):
                conn.execute(_sample_0013(31, "true", abc="'{}'"))
            conn.execute(_sample_0013(0, "false").replace("2026-11-26 12:00", "2030-01-01 00:00"))
            assert conn.execute(
                "SELECT tableoid::regclass::text FROM telemetry_samples WHERE t >= '2030-01-01'"
            ).fetchall() == [("telemetry_samples_raw_default",)]
            downgrade(url, "0019")
            assert conn.execute(rows).fetchall()[:4] == stored
            assert conn.execute(
                "SELECT relkind FROM pg_class WHERE relname = 'telemetry_samples'"
            ).fetchone() == ("r",)
            with pytest.raises(psycopg.errors.UniqueViolation, match="pk_telemetry_samples"):
                conn.execute(_sample_0013(30, "false"))
    finally:
        embedded.drop_database(postgres_server_url, name)


_BEFORE_0021 = """
WITH switch AS (
    INSERT INTO switches (name, address) VALUES ('s1', 'h:1'), ('s2', 'h:2') RETURNING id, name
), link AS (
    INSERT INTO links (switch_id, name, port, capacity_bps)
    SELECT switch.id, given.name, given.port, 1e9 FROM switch JOIN (VALUES
        (1, 's1', 'to-s2', 1), (2, 's2', 'to-s1', 1), (3, 's2', 'hosts-2', 2),
        (4, 's1', 'hosts-1', 2)
    ) AS given (rank, switch, name, port) ON given.switch = switch.name
    ORDER BY given.rank
    RETURNING id, name, switch_id
), made AS (
    INSERT INTO slices (name, vlan_id, rate_bps, burst_limit_s, delay_target_s, priority)
    VALUES ('one', 10, 1e6, 0.01, 0.01, 1), ('through', 11, 1e6, 0.01, 0.01, 1),
           ('set', 12, 1e6, 0.01, 0.01, 1)
    RETURNING id, name
), crossing (slice, link) AS (
    VALUES ('one', 'hosts-1'), ('through', 'to-s2'), ('through', 'hosts-2'),
           ('set', 'hosts-2'), ('set', 'hosts-1')
), held AS (
    INSERT INTO slice_switches (slice_id, switch_id, dp_sid)
    SELECT DISTINCT made.id, link.switch_id, made.id
    FROM crossing JOIN made ON made.name = crossing.slice JOIN link ON link.name = crossing.link
)
INSERT INTO slice_links (slice_id, link_id, switch_id)
SELECT made.id, link.id, link.switch_id
FROM crossing JOIN made ON made.name = crossing.slice JOIN link ON link.name = crossing.link
"""
"""Two switches joined by a cable (made after 0019), links in this order of ids: a slice on
one link, one whose links in id order go through the cable to s2's hosts, and one on two host
links (no path)."""
_CABLE = """
WITH cable AS (INSERT INTO cables (name) VALUES ('c') RETURNING id)
UPDATE links SET cable_id = cable.id, cable_end = CASE name WHEN 'to-s2' THEN 'a' ELSE 'b' END
FROM cable WHERE links.name IN ('to-s2', 'to-s1')
"""


def test_0021_orders_the_slices_whose_links_form_a_path_and_leaves_the_others_a_set(
    postgres_server_url: str,
) -> None:
    name = f"sliceportal_migrate_{uuid.uuid4().hex[:8]}"
    url = embedded.create_database(postgres_server_url, name)
    try:
        upgrade(url, "0020")
        with psycopg.connect(embedded.libpq_url(url), autocommit=True) as conn:
            conn.execute(_BEFORE_0021)
            with conn.transaction():
                conn.execute(_CABLE)
            upgrade(url, "0021")
            rows = conn.execute(
                "SELECT slices.name, links.name, position FROM slice_links "
                "JOIN slices ON slices.id = slice_id JOIN links ON links.id = link_id "
                "ORDER BY slices.name, position, links.name"
            ).fetchall()
            downgrade(url, "0020")
        assert rows == [
            ("one", "hosts-1", 0),
            ("set", "hosts-1", None),
            ("set", "hosts-2", None),
            ("through", "to-s2", 0),
            ("through", "hosts-2", 1),
        ]
    finally:
        embedded.drop_database(postgres_server_url, name)
