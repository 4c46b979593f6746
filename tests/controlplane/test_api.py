"""The control plane in the API: deploy and reconcile (202 with a task id, 503 without a queue),
switch status and slice state detail in the public forms."""

from __future__ import annotations

import base64
import json
import time
from typing import Any

import redis
import sqlalchemy as sa
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from controlplane.network import (
    held,
    make_link,
    make_slice,
    make_switch,
    make_undeployable_slice,
)
from sliceportal.api.main import create_app
from sliceportal.controlplane.reconciler import Outcome, Reconciler
from sliceportal.core.config import Settings
from sliceportal.core.embedded import free_tcp_port
from sliceportal.db.models import OutboxMessage, SliceSwitch
from sliceportal.domain import dataplane as dp
from sliceportal.domain.abc import AbcConfig, AggregateKey
from sliceportal.domain.codel import CodelConfig
from sliceportal.emulator.server import EmulatorServer
from sliceportal.p4rt.connection import SwitchTarget
from sliceportal.p4rt.session import connect
from utils.factories import switch_body


def queued(redis_url: str, task_id: str) -> dict[str, Any]:
    """The message of `task_id` in Celery's default queue: its task name, args and kwargs."""
    client = redis.Redis.from_url(redis_url)
    for raw in client.lrange("celery", 0, -1):
        message = json.loads(raw)
        if message["headers"]["id"] == task_id:
            args, kwargs, _ = json.loads(base64.b64decode(message["body"]))
            return {"task": message["headers"]["task"], "args": args, "kwargs": kwargs}
    raise AssertionError(f"task {task_id} is not queued")


def test_deploy_and_reconcile_queue_a_task_and_answer_202(
    client: TestClient,
    operator_headers: dict[str, str],
    settings: Settings,
    db: sessionmaker[Session],
) -> None:
    switch = client.post("/api/v1/switches", json=switch_body(), headers=operator_headers).json()
    for action, deploy in (("deploy", True), ("reconcile", False)):
        response = client.post(
            f"/api/v1/switches/{switch['id']}/{action}", headers=operator_headers
        )
        assert response.status_code == 202, response.text
        body = response.json()
        assert body["switch_id"] == switch["id"] and body["deploy"] is deploy
        assert queued(settings.redis_url, body["task_id"]) == {
            "task": "sliceportal.controlplane.tasks.reconcile_switch",
            "args": [switch["id"], "deploy"] if deploy else [switch["id"]],
            "kwargs": {},
        }
        with db() as session:
            row = session.scalars(
                sa.select(OutboxMessage).where(OutboxMessage.task_id == body["task_id"])
            ).one()
            assert row.dispatched_at is not None  # sent through the outbox before the answer


def test_deploy_needs_the_operator_role_and_an_existing_switch(
    client: TestClient, viewer_headers: dict[str, str], operator_headers: dict[str, str]
) -> None:
    switch = client.post("/api/v1/switches", json=switch_body(), headers=operator_headers).json()
    assert (
        client.post(f"/api/v1/switches/{switch['id']}/deploy", headers=viewer_headers).status_code
        == 403
    )
    missing = client.post("/api/v1/switches/999999999/reconcile", headers=operator_headers)
    assert missing.status_code == 404


def test_deploy_without_a_task_queue_is_503_not_500_and_queues_nothing(
    settings: Settings,
    client: TestClient,
    operator_headers: dict[str, str],
    db: sessionmaker[Session],
) -> None:
    switch = client.post("/api/v1/switches", json=switch_body(), headers=operator_headers).json()
    no_redis = settings.model_copy(update={"redis_url": f"redis://127.0.0.1:{free_tcp_port()}/0"})
    with TestClient(create_app(no_redis)) as offline:
        response = offline.post(f"/api/v1/switches/{switch['id']}/deploy", headers=operator_headers)
    assert response.status_code == 503, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["type"].endswith("/redis-unavailable")
    assert response.headers["Retry-After"]
    with db() as session:  # withdrawn from the outbox: no dispatcher sends it later
        deploys = session.scalars(
            sa.select(OutboxMessage).where(OutboxMessage.args == [switch["id"], "deploy"])
        ).all()
        assert deploys == []


def test_switch_status_and_slice_state_detail_are_public(
    client: TestClient,
    operator_headers: dict[str, str],
    db: sessionmaker[Session],
    settings: Settings,
    emulator: EmulatorServer,
    reconciler: Reconciler,
) -> None:
    with db() as session:
        switch = make_switch(session, emulator.address, emulator.service.device_id)
        link = make_link(session, settings, switch.id)
        good = make_slice(session, [link.id], 1)
        tiny = make_undeployable_slice(session, [link.id], 2)
    before = client.get(f"/api/v1/switches/{switch.id}", headers=operator_headers).json()
    assert before["state"] == "unknown" and before["sync"] is None
    reconciler.run(switch.id)
    after = client.get(f"/api/v1/switches/{switch.id}", headers=operator_headers).json()
    assert after["state"] == "reachable"
    sync = after["sync"]
    assert sync["pipeline_in_sync"] and len(sync["pipeline_cookie"]) == 16
    assert (sync["entries_desired"], sync["entries_installed"]) == (3, 3)
    assert sync["last_reconcile_at"] and sync["last_error"] is None
    listed = client.get("/api/v1/switches", params={"q": switch.name}, headers=operator_headers)
    assert listed.json()["data"][0]["sync"] == sync
    ok = client.get(f"/api/v1/slices/{good.id}", headers=operator_headers).json()
    assert (ok["state"], ok["state_detail"]) == ("active", None)
    failed = client.get(f"/api/v1/slices/{tiny.id}", headers=operator_headers).json()
    assert failed["state"] == "failed" and "burst_limit_s" in failed["state_detail"]
    changes = client.get(
        "/api/v1/changes",
        params={"request_id": reconciler.context.request_id, "entity_type": "slice"},
        headers=operator_headers,
    ).json()
    assert changes["count"] == 3  # good: pending -> deploying -> active; tiny: -> failed
    assert all(entry["user_id"] is None for entry in changes["data"])

    emulator.stop(grace=0)  # the switch goes away: nothing it holds is known any more
    assert reconciler.run(switch.id).outcome is Outcome.UNREACHABLE
    down = client.get(f"/api/v1/switches/{switch.id}", headers=operator_headers).json()
    assert down["state"] == "unreachable"
    assert (down["sync"]["pipeline_in_sync"], down["sync"]["entries_installed"]) == (None, None)
    assert down["sync"]["entries_desired"] == 3 and down["sync"]["last_error"]
    waiting = client.get(f"/api/v1/slices/{good.id}", headers=operator_headers).json()
    assert waiting["state"] == "pending" and "unreachable" in waiting["state_detail"]
    failed = client.get(f"/api/v1/slices/{tiny.id}", headers=operator_headers).json()
    assert failed["state"] == "failed"  # its own error stands


def test_a_meter_slice_through_the_api_configures_modifies_and_resets_its_meter_cell(
    client: TestClient,
    operator_headers: dict[str, str],
    db: sessionmaker[Session],
    settings: Settings,
    emulator: EmulatorServer,
    reconciler: Reconciler,
) -> None:
    """scheme meter: the slice's policy is meter_policy and its slice_meter cell (at its
    DP_SID) holds CIR = rate / 8 and CBS = rate x burst limit / 8 (PIR, PBS alike), read back
    with the portal's client; a rate change modifies the cell; deleting the slice resets the
    cell to unconfigured."""
    with db() as session:
        switch = make_switch(session, emulator.address, emulator.service.device_id)
        link = make_link(session, settings, switch.id)
        switch_id, link_id = switch.id, link.id
    body = {
        "name": "metered",
        "ipv4_prefixes": ["10.9.0.0/24"],
        "rate_bps": 2e6,
        "burst_limit_s": 0.02,
        "priority": 7,
        "link_ids": [link_id],
        "scheme": "meter",
    }
    refused = client.post(
        "/api/v1/slices", json=body | {"marking_threshold_s": 0.01}, headers=operator_headers
    )
    assert refused.status_code == 422, refused.text
    assert "marking_threshold_s" in refused.text
    created = client.post("/api/v1/slices", json=body, headers=operator_headers)
    assert created.status_code == 201, created.text
    slice_id = created.json()["id"]
    assert created.json()["scheme"] == "meter"
    with db() as session:
        (dp_sid,) = session.scalars(
            sa.select(SliceSwitch.dp_sid).where(SliceSwitch.slice_id == slice_id)
        ).all()

    def cells() -> list[dp.MeterConfig]:
        switch = connect(
            SwitchTarget(0, emulator.address, emulator.service.device_id, 1), settings=settings
        )
        try:
            assert all(e.action != dp.TAIL_DROP for e in switch.read_entries())
            return switch.read_meters(dp.SLICE_METER)
        finally:
            switch.close()

    report = reconciler.run(switch_id)
    assert (report.inserted, report.meters_configured, report.failed) == (3, 1, 0)
    assert cells() == [dp.MeterConfig(dp.SLICE_METER, dp_sid, 250_000, 5_000, 250_000, 5_000)]
    got = client.get(f"/api/v1/slices/{slice_id}", headers=operator_headers).json()
    assert (got["state"], got["state_detail"]) == ("active", None)
    assert reconciler.run(switch_id).outcome is Outcome.IN_SYNC

    changed = client.patch(
        f"/api/v1/slices/{slice_id}", json={"rate_bps": 4e6}, headers=operator_headers
    )
    assert changed.status_code == 200, changed.text
    report = reconciler.run(switch_id)
    # meter_policy has no rate parameter: only the cell changes
    assert (report.inserted, report.modified, report.meters_configured) == (0, 0, 1)
    assert cells() == [dp.MeterConfig(dp.SLICE_METER, dp_sid, 500_000, 10_000, 500_000, 10_000)]
    got = client.get(f"/api/v1/slices/{slice_id}", headers=operator_headers).json()
    assert (got["state"], got["state_detail"]) == ("active", None)

    deleted = client.delete(f"/api/v1/slices/{slice_id}", headers=operator_headers)
    assert deleted.status_code == 204, deleted.text
    report = reconciler.run(switch_id)
    assert (report.deleted, report.meters_reset, report.failed) == (3, 1, 0)
    assert cells() == []
    assert reconciler.run(switch_id).outcome is Outcome.IN_SYNC


def test_codel_slices_through_the_api_deploy_their_policy_and_share_the_control_law(
    client: TestClient,
    operator_headers: dict[str, str],
    db: sessionmaker[Session],
    settings: Settings,
    emulator: EmulatorServer,
    reconciler: Reconciler,
) -> None:
    """scheme codel: each slice's policy is the codel action with its parameters in switch
    units, read back with the portal's client; two slices of one interval share its
    control-law rows, which stay while either slice does and go with the last."""
    with db() as session:
        switch = make_switch(session, emulator.address, emulator.service.device_id)
        link = make_link(session, settings, switch.id)
        switch_id, link_id = switch.id, link.id
    body = {"rate_bps": 2e6, "burst_limit_s": 0.02, "priority": 7, "link_ids": [link_id]}
    codel = {"target_s": 0.01, "interval_s": 0.05, "ecn_mark": True}
    ids = []
    for index, given in enumerate(({"codel": codel}, {"codel": codel | {"ecn_mark": False}})):
        created = client.post(
            "/api/v1/slices",
            json=body
            | given
            | {"name": f"codel-{index}", "ipv4_prefixes": [f"10.8.{index}.0/24"]}
            | {"scheme": "codel"},
            headers=operator_headers,
        )
        assert created.status_code == 201, created.text
        ids.append(created.json()["id"])
    interval_ticks = 50_000  # 50 ms of 1 us ticks
    law = set(dp.codel_law_entries(interval_ticks))

    report = reconciler.run(switch_id)
    # per slice: policy, classifier entry and route; the law's rows once
    assert (report.inserted, report.failed) == (2 * 3 + len(law), 0)
    on_switch = held(emulator, settings)
    assert {e for e in on_switch if e.table == dp.CODEL_CONTROL_LAW} == law
    policies = {e.params for e in on_switch if e.table == dp.SLICE_POLICY}
    assert {e.action for e in on_switch if e.table == dp.SLICE_POLICY} == {dp.CODEL}
    expected = dp.slice_policy(
        7, 2e6, 0.02, dp.Scheme.CODEL, None, 0.02, CodelConfig.from_seconds(0.01, 0.05, True)
    )
    assert expected.params in policies
    assert dict(expected.params)["interval"] == interval_ticks
    assert {dict(p)["ecn_mark"] for p in policies} == {0, 1}
    for slice_id in ids:
        got = client.get(f"/api/v1/slices/{slice_id}", headers=operator_headers).json()
        assert (got["state"], got["state_detail"]) == ("active", None)
    assert reconciler.run(switch_id).outcome is Outcome.IN_SYNC

    # A scheme change modifies the policy in place; the other slice keeps the law.
    for change, actions in (
        ({"scheme": "tail_drop"}, [dp.CODEL, dp.TAIL_DROP]),
        ({"scheme": "codel", "codel": codel}, [dp.CODEL, dp.CODEL]),
    ):
        changed = client.patch(f"/api/v1/slices/{ids[1]}", json=change, headers=operator_headers)
        assert changed.status_code == 200, changed.text
        report = reconciler.run(switch_id)
        assert (report.inserted, report.modified, report.deleted) == (0, 1, 0)
        on_switch = held(emulator, settings)
        assert sorted(e.action for e in on_switch if e.table == dp.SLICE_POLICY) == actions
        assert {e for e in on_switch if e.table == dp.CODEL_CONTROL_LAW} == law

    deleted = client.delete(f"/api/v1/slices/{ids[0]}", headers=operator_headers)
    assert deleted.status_code == 204, deleted.text
    assert reconciler.run(switch_id).deleted == 3  # its own entries, not the shared law
    assert reconciler.run(switch_id).outcome is Outcome.IN_SYNC
    assert {e for e in held(emulator, settings) if e.table == dp.CODEL_CONTROL_LAW} == law
    deleted = client.delete(f"/api/v1/slices/{ids[1]}", headers=operator_headers)
    assert deleted.status_code == 204, deleted.text
    assert reconciler.run(switch_id).deleted == 3 + len(law)
    assert held(emulator, settings) == []


def test_abc_slices_through_the_api_deploy_their_policy_and_share_abc_s_rows(
    client: TestClient,
    operator_headers: dict[str, str],
    db: sessionmaker[Session],
    settings: Settings,
    emulator: EmulatorServer,
    reconciler: Reconciler,
) -> None:
    """scheme abc: each slice's policy is the abc action with its resolved parameters in
    switch units, read back with the portal's client; the decay rows of each distinct memory
    and the log2 and 1/count rows are written once, shared, kept while an abc slice needs them
    and deleted with the last. Deploying them (~68k entries) is timed and printed (in a process
    that has not built ABC's rows yet, building them is part of it)."""
    with db() as session:
        switch = make_switch(session, emulator.address, emulator.service.device_id)
        link = make_link(session, settings, switch.id)
        switch_id, link_id = switch.id, link.id
    body = {"rate_bps": 50e6, "burst_limit_s": 0.01, "priority": 6, "link_ids": [link_id]}
    ids, configs = [], []
    given = ({}, {"average_memory_s": 0.1, "key": "source_prefix", "prefix_length": 24})
    for index, abc in enumerate(given):
        created = client.post(
            "/api/v1/slices",
            json=body
            | {"name": f"abc-{index}", "ipv4_prefixes": [f"10.9.{index}.0/24"]}
            | {"scheme": "abc", "abc": abc},
            headers=operator_headers,
        )
        assert created.status_code == 201, created.text
        ids.append(created.json()["id"])
        resolved = created.json()["abc"]
        configs.append(AbcConfig(**resolved | {"key": AggregateKey(resolved["key"])}))
    started = time.perf_counter()
    report = reconciler.run(switch_id)
    elapsed = time.perf_counter() - started
    print(f"\nabc deploy: {report.inserted} entries in {elapsed:.2f} s")

    def shared_on(on_switch: list[dp.TableEntry]) -> set[dp.TableEntry]:
        return {e for e in on_switch if e.table in dp.SHARED_TABLES}

    meter_3s = set(dp.SharedRows(dp.ABC_METER_DECAY, 3_000_000).entries)
    average = {
        memory: set(dp.SharedRows(dp.ABC_AVERAGE_DECAY, memory).entries)
        for memory in (300_000, 100_000)
    }
    lookups = {e for table in dp.ABC_LOOKUP_TABLES for e in dp.SharedRows(table).entries}
    shared = meter_3s | average[300_000] | average[100_000] | lookups

    # per slice: policy, classifier entry and route; ABC's rows once
    assert (report.inserted, report.failed) == (2 * 3 + len(shared), 0)
    assert len(shared) > 60_000
    on_switch = held(emulator, settings)
    assert shared_on(on_switch) == shared
    policies = {e.params for e in on_switch if e.table == dp.SLICE_POLICY}
    assert {e.action for e in on_switch if e.table == dp.SLICE_POLICY} == {dp.ABC}
    for config in configs:
        expected = dp.slice_policy(6, 50e6, 0.01, dp.Scheme.ABC, None, 0.01, abc_config=config)
        assert expected.params in policies
    by_prefix = next(p for p in policies if dict(p)["average_memory"] == 100_000)
    assert dict(by_prefix)["prefix_mask"] == 0xFFFFFF00
    for slice_id in ids:
        got = client.get(f"/api/v1/slices/{slice_id}", headers=operator_headers).json()
        assert (got["state"], got["state_detail"]) == ("active", None)
    assert reconciler.run(switch_id).outcome is Outcome.IN_SYNC

    # Leaving abc modifies the policy in place; the rows only it needed go after it.
    changed = client.patch(
        f"/api/v1/slices/{ids[1]}", json={"scheme": "tail_drop"}, headers=operator_headers
    )
    assert changed.status_code == 200, changed.text
    report = reconciler.run(switch_id)
    assert (report.inserted, report.modified, report.deleted) == (0, 1, len(average[100_000]))
    on_switch = held(emulator, settings)
    assert sorted(e.action for e in on_switch if e.table == dp.SLICE_POLICY) == [
        dp.ABC,
        dp.TAIL_DROP,
    ]
    assert shared_on(on_switch) == meter_3s | average[300_000] | lookups

    deleted = client.delete(f"/api/v1/slices/{ids[0]}", headers=operator_headers)
    assert deleted.status_code == 204, deleted.text
    report = reconciler.run(switch_id)
    assert report.deleted == 3 + len(meter_3s | average[300_000] | lookups)
    assert shared_on(held(emulator, settings)) == set()
    assert reconciler.run(switch_id).outcome is Outcome.IN_SYNC
