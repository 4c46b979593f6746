"""The alerts API: the list with its filters, one alert, and acknowledging (operators only,
change-logged, idempotent, pushed to the browser streams)."""

from __future__ import annotations

import json

import redis
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from alerts.helpers import BREACHES, TARGETS, Engine, second
from sliceportal.core.channels import Channels
from sliceportal.core.config import Settings
from sliceportal.domain.sla import Rule, Targets
from telemetry.helpers import next_message


def test_read_alerts_filtered(
    client: TestClient, viewer_headers: dict[str, str], db: sessionmaker[Session], slice_id: int
) -> None:
    engine = Engine(db, slice_id)
    targets = Targets(max_loss_ratio=0.01, max_mark_ratio=0.05)
    for _ in range(2):
        engine.observe(second(dropped=100, marked=200), targets)  # both fire
    for _ in range(2):
        engine.observe(second(dropped=100), targets)  # marks resolve
    response = client.get("/api/v1/alerts", params={"slice_id": slice_id}, headers=viewer_headers)
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 2
    assert [(a["rule"], a["state"]) for a in body["data"]] == [
        ("marks", "resolved"),
        ("loss", "firing"),
    ]  # newest first
    loss = body["data"][1]
    assert loss["slice_name"] and loss["message"] == "loss 4.76% is above the maximum 1.00%"
    assert loss["threshold"] == 0.01 and loss["acknowledged_at"] is None
    firing = client.get(
        "/api/v1/alerts",
        params={"slice_id": slice_id, "state": "firing", "rule": "loss"},
        headers=viewer_headers,
    ).json()
    assert [a["id"] for a in firing["data"]] == [loss["id"]]
    one = client.get(f"/api/v1/alerts/{loss['id']}", headers=viewer_headers)
    assert one.json() == loss
    assert client.get("/api/v1/alerts/0", headers=viewer_headers).status_code == 404
    assert (
        client.get("/api/v1/alerts", params={"rule": "nope"}, headers=viewer_headers).status_code
        == 422
    )


def test_acknowledge_alert(
    client: TestClient,
    operator_headers: dict[str, str],
    viewer_headers: dict[str, str],
    db: sessionmaker[Session],
    settings: Settings,
    slice_id: int,
) -> None:
    engine = Engine(db, slice_id)
    for _ in range(2):
        engine.observe(BREACHES[Rule.DELAY], TARGETS[Rule.DELAY])
    (alert,) = client.get(
        "/api/v1/alerts", params={"slice_id": slice_id}, headers=viewer_headers
    ).json()["data"]
    path = f"/api/v1/alerts/{alert['id']}/ack"
    assert client.post(path, headers=viewer_headers).status_code == 403

    subscriber = redis.Redis.from_url(settings.redis_url).pubsub()
    subscriber.subscribe(Channels.of(settings.database_url).alerts)
    response = client.post(path, headers=operator_headers)
    assert response.status_code == 200, response.text
    acked = response.json()
    me = client.get("/api/v1/users/me", headers=operator_headers).json()
    assert acked["acknowledged_by"] == me["id"] and acked["acknowledged_at"]
    assert acked["state"] == "firing"  # acknowledging does not resolve
    pushed = json.loads(next_message(subscriber))
    assert pushed["event"] == "acknowledged" and pushed["alert"]["id"] == alert["id"]
    subscriber.close()

    again = client.post(path, headers=operator_headers).json()
    assert again["acknowledged_at"] == acked["acknowledged_at"]
    changes = client.get(
        "/api/v1/changes",
        params={"entity_type": "alert", "entity_id": alert["id"]},
        headers=operator_headers,
    ).json()
    (change,) = changes["data"]
    assert change["action"] == "update" and change["user_id"] == me["id"]
    assert change["before"]["acknowledged_at"] is None
    assert change["after"]["acknowledged_by"] == me["id"]
    assert client.post("/api/v1/alerts/0/ack", headers=operator_headers).status_code == 404
