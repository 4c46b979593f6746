"""The network: cables between switches and host-facing ports, every refusal naming its field,
the change log of each write, and the topology document."""

from __future__ import annotations

import datetime as dt
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from api.problems import assert_refused
from sliceportal.db.models import TelemetrySample
from sliceportal.domain.p4constants import HIST_BUCKETS
from sliceportal.domain.telemetry import LEGACY_HIST_TARGET
from utils.factories import MBIT, create, create_link, link_body, slice_body, unique

URL = "/api/v1/cables"
Headers = dict[str, str]


def cable_body(a_link_id: int, b_link_id: int, **overrides: Any) -> dict[str, Any]:
    return {
        "name": unique("cable"),
        "a_link_id": a_link_id,
        "b_link_id": b_link_id,
        "propagation_s": 0.001,
    } | overrides


def two_ports(client: TestClient, headers: Headers) -> tuple[dict[str, Any], dict[str, Any]]:
    """A link on each of two new switches."""
    return create_link(client, headers), create_link(client, headers)


def assert_conflict(response: Any, field: str | None) -> str:
    assert response.status_code == 409, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json().get("field") == field, response.json()
    return str(response.json()["detail"])


def changes_of(client: TestClient, headers: Headers, request_id: str) -> list[dict[str, Any]]:
    response = client.get("/api/v1/changes", params={"request_id": request_id}, headers=headers)
    assert response.status_code == 200, response.text
    data: list[dict[str, Any]] = response.json()["data"]
    return data


def test_create_cable_wires_both_ends(client: TestClient, operator_headers: Headers) -> None:
    a, b = two_ports(client, operator_headers)
    request_id = unique("req")
    response = client.post(
        URL,
        json=cable_body(a["id"], b["id"]),
        headers=operator_headers | {"X-Request-ID": request_id},
    )
    assert response.status_code == 201, response.text
    cable = response.json()
    assert (cable["a_link_id"], cable["a_switch_id"]) == (a["id"], a["switch_id"])
    assert (cable["b_link_id"], cable["b_switch_id"]) == (b["id"], b["switch_id"])
    assert cable["propagation_s"] == 0.001
    for link, end in ((a, "a"), (b, "b")):
        read = client.get(f"/api/v1/links/{link['id']}", headers=operator_headers).json()
        assert (read["cable_id"], read["cable_end"]) == (cable["id"], end)
    entries = changes_of(client, operator_headers, request_id)
    by_type = {(e["entity_type"], e["entity_id"]): e for e in entries}
    created = by_type["cable", cable["id"]]
    assert created["action"] == "create"
    assert created["after"]["a_link_id"] == a["id"]
    assert created["after"]["b_link_id"] == b["id"]
    for link in (a, b):
        wired = by_type["link", link["id"]]
        assert wired["action"] == "update"
        assert wired["before"]["cable_id"] is None
        assert wired["after"]["cable_id"] == cable["id"]


def test_create_cable_refusals_name_the_field(
    client: TestClient, operator_headers: Headers
) -> None:
    a, b = two_ports(client, operator_headers)
    same_switch = create(client, "links", operator_headers, link_body(a["switch_id"]))
    for body, field in (
        (cable_body(a["id"], a["id"]), "body.b_link_id"),
        (cable_body(999999999, b["id"]), "body.a_link_id"),
        (cable_body(a["id"], 999999999), "body.b_link_id"),
        (cable_body(a["id"], same_switch["id"]), "body.b_link_id"),
        (cable_body(a["id"], b["id"], propagation_s=-0.001), "body.propagation_s"),
        (cable_body(a["id"], b["id"], propagation_s=2e6), "body.propagation_s"),
        (cable_body(a["id"], b["id"], propagation_s="0.1"), "body.propagation_s"),
        (cable_body(a["id"], b["id"], name=""), "body.name"),
        ({"name": unique("cable"), "a_link_id": a["id"]}, "body.b_link_id"),
    ):
        assert_refused(client.post(URL, json=body, headers=operator_headers), field)


def test_a_port_is_used_once(client: TestClient, operator_headers: Headers) -> None:
    a, b = two_ports(client, operator_headers)
    cable = create(client, "cables", operator_headers, cable_body(a["id"], b["id"]))
    c = create_link(client, operator_headers)
    taken = client.post(URL, json=cable_body(c["id"], b["id"]), headers=operator_headers)
    assert cable["name"] in assert_conflict(taken, "body.b_link_id")
    duplicate = client.post(URL, json=cable_body(a["id"], c["id"]), headers=operator_headers)
    assert_conflict(duplicate, "body.a_link_id")
    name_taken = client.post(
        URL,
        json=cable_body(c["id"], create_link(client, operator_headers)["id"], name=cable["name"]),
        headers=operator_headers,
    )
    assert_conflict(name_taken, "body.name")


def test_a_port_faces_a_switch_or_hosts_not_both(
    client: TestClient, operator_headers: Headers
) -> None:
    hosts = create_link(client, operator_headers, host_ipv4_prefixes=["10.9.0.0/24"])
    vlans = create_link(client, operator_headers, host_vlan_ids=[30])
    other = create_link(client, operator_headers)
    refused = client.post(URL, json=cable_body(other["id"], hosts["id"]), headers=operator_headers)
    assert "10.9.0.0/24" in assert_conflict(refused, "body.b_link_id")
    refused = client.post(URL, json=cable_body(vlans["id"], other["id"]), headers=operator_headers)
    assert "VLAN 30" in assert_conflict(refused, "body.a_link_id")

    far = create_link(client, operator_headers)
    create(client, "cables", operator_headers, cable_body(other["id"], far["id"]))
    for body, field in (
        ({"host_ipv4_prefixes": ["10.8.0.0/24"]}, "body.host_ipv4_prefixes"),
        ({"host_vlan_ids": [12]}, "body.host_vlan_ids"),
    ):
        response = client.patch(f"/api/v1/links/{other['id']}", json=body, headers=operator_headers)
        assert_conflict(response, field)
    cleared = client.patch(
        f"/api/v1/links/{other['id']}", json={"host_vlan_ids": []}, headers=operator_headers
    )
    assert cleared.status_code == 200, cleared.text


def test_host_ports_store_prefixes_and_vlans(client: TestClient, operator_headers: Headers) -> None:
    link = create_link(
        client,
        operator_headers,
        host_ipv4_prefixes=["10.20.0.0/16", "10.1.0.0/24"],
        host_vlan_ids=[20, 10],
    )
    assert link["host_ipv4_prefixes"] == ["10.1.0.0/24", "10.20.0.0/16"]
    assert link["host_vlan_ids"] == [10, 20]
    assert (link["cable_id"], link["cable_end"]) == (None, None)
    request_id = unique("req")
    response = client.patch(
        f"/api/v1/links/{link['id']}",
        json={"host_ipv4_prefixes": ["192.168.1.0/24"]},
        headers=operator_headers | {"X-Request-ID": request_id},
    )
    assert response.status_code == 200, response.text
    assert response.json()["host_ipv4_prefixes"] == ["192.168.1.0/24"]
    (entry,) = changes_of(client, operator_headers, request_id)
    assert entry["before"]["host_ipv4_prefixes"] == ["10.1.0.0/24", "10.20.0.0/16"]
    assert entry["after"]["host_ipv4_prefixes"] == ["192.168.1.0/24"]


def test_host_port_refusals_name_the_field(client: TestClient, operator_headers: Headers) -> None:
    link = create_link(client, operator_headers)
    url = f"/api/v1/links/{link['id']}"
    for body, field in (
        ({"host_ipv4_prefixes": ["10.0.0.1/24"]}, "body.host_ipv4_prefixes.0"),  # host bits
        ({"host_ipv4_prefixes": ["10.0.0.0/33"]}, "body.host_ipv4_prefixes.0"),
        ({"host_ipv4_prefixes": ["not a prefix"]}, "body.host_ipv4_prefixes.0"),
        ({"host_ipv4_prefixes": ["10.0.0.0/8", "10.0.0.0/8"]}, "body.host_ipv4_prefixes"),
        ({"host_vlan_ids": [0]}, "body.host_vlan_ids.0"),
        ({"host_vlan_ids": [4095]}, "body.host_vlan_ids.0"),
        ({"host_vlan_ids": [7, 7]}, "body.host_vlan_ids"),
        ({"host_vlan_ids": ["7"]}, "body.host_vlan_ids.0"),
        ({"host_vlan_ids": None}, "body.host_vlan_ids"),
    ):
        assert_refused(client.patch(url, json=body, headers=operator_headers), field)
    switch_id = link["switch_id"]
    body = link_body(switch_id, host_vlan_ids=[1, 4094, 4094])
    assert_refused(
        client.post("/api/v1/links", json=body, headers=operator_headers), "body.host_vlan_ids"
    )


def test_update_cable(client: TestClient, operator_headers: Headers) -> None:
    a, b = two_ports(client, operator_headers)
    cable = create(client, "cables", operator_headers, cable_body(a["id"], b["id"]))
    url = f"{URL}/{cable['id']}"
    response = client.patch(
        url, json={"propagation_s": 0.005, "description": "dark fibre"}, headers=operator_headers
    )
    assert response.status_code == 200, response.text
    assert response.json()["propagation_s"] == 0.005
    assert client.get(url, headers=operator_headers).json()["description"] == "dark fibre"
    assert_refused(
        client.patch(url, json={"a_link_id": b["id"]}, headers=operator_headers), "body.a_link_id"
    )
    assert_refused(
        client.patch(url, json={"propagation_s": None}, headers=operator_headers),
        "body.propagation_s",
    )
    assert client.patch(f"{URL}/999999999", json={}, headers=operator_headers).status_code == 404


def test_delete_cable_keeps_its_links(client: TestClient, operator_headers: Headers) -> None:
    a, b = two_ports(client, operator_headers)
    cable = create(client, "cables", operator_headers, cable_body(a["id"], b["id"]))
    refused = client.delete(f"/api/v1/links/{a['id']}", headers=operator_headers)
    assert "delete the cable first" in assert_conflict(refused, None)
    request_id = unique("req")
    response = client.delete(
        f"{URL}/{cable['id']}", headers=operator_headers | {"X-Request-ID": request_id}
    )
    assert response.status_code == 204
    assert client.get(f"{URL}/{cable['id']}", headers=operator_headers).status_code == 404
    for link in (a, b):
        read = client.get(f"/api/v1/links/{link['id']}", headers=operator_headers).json()
        assert (read["cable_id"], read["cable_end"]) == (None, None)
    entries = {
        (e["entity_type"], e["action"]) for e in changes_of(client, operator_headers, request_id)
    }
    assert entries == {("cable", "delete"), ("link", "update")}
    assert client.delete(f"/api/v1/links/{a['id']}", headers=operator_headers).status_code == 204
    assert client.delete(f"{URL}/{cable['id']}", headers=operator_headers).status_code == 404


def test_cables_are_for_operators(client: TestClient, viewer_headers: Headers) -> None:
    assert client.get(URL, headers=viewer_headers).status_code == 200
    assert client.post(URL, json=cable_body(1, 2), headers=viewer_headers).status_code == 403


def test_read_cables_by_switch(client: TestClient, operator_headers: Headers) -> None:
    a, b = two_ports(client, operator_headers)
    cable = create(client, "cables", operator_headers, cable_body(a["id"], b["id"]))
    for switch_id in (a["switch_id"], b["switch_id"]):
        page = client.get(URL, params={"switch_id": switch_id}, headers=operator_headers).json()
        assert [c["id"] for c in page["data"]] == [cable["id"]]
    named = client.get(URL, params={"q": cable["name"]}, headers=operator_headers).json()
    assert named["count"] == 1


def test_topology_has_switches_links_far_ends_and_loads(
    client: TestClient, operator_headers: Headers, viewer_headers: Headers
) -> None:
    a, b = two_ports(client, operator_headers)
    hosts = create(
        client,
        "links",
        operator_headers,
        link_body(b["switch_id"], capacity_bps=100 * MBIT, host_ipv4_prefixes=["10.77.0.0/16"]),
    )
    cable = create(
        client, "cables", operator_headers, cable_body(a["id"], b["id"], propagation_s=0.002)
    )
    create(client, "slices", operator_headers, slice_body([hosts["id"]], rate_bps=10 * MBIT))
    response = client.get("/api/v1/topology", headers=viewer_headers)
    assert response.status_code == 200, response.text
    topology = response.json()
    links = {link["id"]: link for link in topology["links"]}
    switches = {switch["id"]: switch for switch in topology["switches"]}
    assert switches[a["switch_id"]]["health"] == "unknown"  # no worker contacted it
    assert links[a["id"]]["far_switch_id"] == b["switch_id"]
    assert links[a["id"]]["far_link_id"] == b["id"]
    assert links[b["id"]]["far_link_id"] == a["id"]
    assert links[a["id"]]["propagation_s"] == 0.002
    host_port = links[hosts["id"]]
    assert (host_port["far_switch_id"], host_port["cable_id"]) == (None, None)
    assert host_port["host_ipv4_prefixes"] == ["10.77.0.0/16"]
    assert (host_port["slice_count"], host_port["reserved_bps"]) == (1, 10 * MBIT)
    assert host_port["throughput_bps"] is None  # no live sample
    assert host_port["utilisation"] is None
    assert {"id": cable["id"], "a_link_id": a["id"], "b_link_id": b["id"]}.items() <= next(
        c for c in topology["cables"] if c["id"] == cable["id"]
    ).items()


def test_topology_throughput_is_the_latest_live_sample_of_the_links_slices(
    client: TestClient, operator_headers: Headers, db: sessionmaker[Session]
) -> None:
    """5 Mbit/s forwarded over the last second by the slice: half of a 10 Mbit/s link; a
    sample older than the live window does not count."""
    link = create_link(client, operator_headers, capacity_bps=10 * MBIT)
    made = create(client, "slices", operator_headers, slice_body([link["id"]], rate_bps=5 * MBIT))
    now = dt.datetime.now(dt.UTC)
    with db() as session:
        for age_s, forwarded_bytes in ((0.5, 625_000), (600.0, 10_000_000)):
            session.add(
                TelemetrySample(
                    slice_id=made["id"],
                    switch_id=link["switch_id"],
                    t=now - dt.timedelta(seconds=age_s),
                    downsampled=False,
                    hist_target=LEGACY_HIST_TARGET,
                    interval_s=1.0,
                    forwarded_packets=1,
                    forwarded_bytes=forwarded_bytes,
                    vq_dropped_packets=0,
                    vq_dropped_bytes=0,
                    real_dropped_packets=0,
                    real_dropped_bytes=0,
                    ecn_marked_packets=0,
                    ecn_marked_bytes=0,
                    aqm_dropped_packets=0,
                    aqm_dropped_bytes=0,
                    vq_hist=[0] * HIST_BUCKETS,
                    rq_hist=[0] * HIST_BUCKETS,
                )
            )
        session.commit()
    topology = client.get("/api/v1/topology", headers=operator_headers).json()
    (read,) = [entry for entry in topology["links"] if entry["id"] == link["id"]]
    assert read["throughput_bps"] == 5 * MBIT
    assert read["utilisation"] == 0.5
