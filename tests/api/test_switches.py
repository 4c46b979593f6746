from __future__ import annotations

from fastapi.testclient import TestClient

from utils.factories import create, link_body, switch_body, unique

URL = "/api/v1/switches"


def test_create_switch(client: TestClient, operator_headers: dict[str, str]) -> None:
    body = switch_body(device_id=3, tls_ca_path="/etc/ca.pem")
    response = client.post(URL, json=body, headers=operator_headers)
    assert response.status_code == 201, response.text
    created = response.json()
    assert created["name"] == body["name"]
    assert created["device_id"] == 3
    assert created["election_id"] == 1
    assert created["kind"] == "emulator"
    assert created["state"] == "unknown"


def test_read_switch(
    client: TestClient, viewer_headers: dict[str, str], operator_headers: dict[str, str]
) -> None:
    created = create(client, "switches", operator_headers, switch_body())
    response = client.get(f"{URL}/{created['id']}", headers=viewer_headers)
    assert response.status_code == 200
    assert response.json() == created


def test_read_switch_not_found(client: TestClient, viewer_headers: dict[str, str]) -> None:
    response = client.get(f"{URL}/999999999", headers=viewer_headers)
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["type"].endswith("/not-found")


def test_read_switches_pagination_and_filters(
    client: TestClient, operator_headers: dict[str, str]
) -> None:
    tag = unique("page")
    ids = [
        create(client, "switches", operator_headers, switch_body(name=f"{tag}-{i}"))["id"]
        for i in range(5)
    ]
    first = client.get(URL, params={"q": tag, "limit": 2}, headers=operator_headers).json()
    second = client.get(URL, params={"q": tag, "skip": 2, "limit": 2}, headers=operator_headers)
    assert first["count"] == 5
    assert [s["id"] for s in first["data"]] == ids[:2]
    assert [s["id"] for s in second.json()["data"]] == ids[2:4]
    bmv2 = client.get(URL, params={"q": tag, "kind": "bmv2"}, headers=operator_headers).json()
    assert bmv2 == {"data": [], "count": 0}
    emulators = client.get(URL, params={"q": tag, "kind": "emulator"}, headers=operator_headers)
    assert emulators.json()["count"] == 5


def test_update_switch(client: TestClient, operator_headers: dict[str, str]) -> None:
    created = create(client, "switches", operator_headers, switch_body())
    response = client.patch(
        f"{URL}/{created['id']}",
        json={"address": "[::1]:9559", "description": "lab"},
        headers=operator_headers,
    )
    assert response.status_code == 200, response.text
    updated = response.json()
    assert updated["address"] == "[::1]:9559"
    assert updated["description"] == "lab"
    assert updated["name"] == created["name"]


def test_update_switch_null_name(client: TestClient, operator_headers: dict[str, str]) -> None:
    created = create(client, "switches", operator_headers, switch_body())
    response = client.patch(f"{URL}/{created['id']}", json={"name": None}, headers=operator_headers)
    assert response.status_code == 422
    assert response.json()["field"] == "body.name"


def test_create_switch_duplicate_name(client: TestClient, operator_headers: dict[str, str]) -> None:
    created = create(client, "switches", operator_headers, switch_body())
    response = client.post(URL, json=switch_body(name=created["name"]), headers=operator_headers)
    assert response.status_code == 409
    assert response.json()["field"] == "body.name"


def test_create_switch_bad_address(client: TestClient, operator_headers: dict[str, str]) -> None:
    for address in ("localhost", "host:0", "bad host:9559", "[zz]:1"):
        response = client.post(URL, json=switch_body(address=address), headers=operator_headers)
        assert response.status_code == 422, address
        assert response.json()["field"] == "body.address"


def test_delete_switch(client: TestClient, operator_headers: dict[str, str]) -> None:
    created = create(client, "switches", operator_headers, switch_body())
    assert client.delete(f"{URL}/{created['id']}", headers=operator_headers).status_code == 204
    assert client.get(f"{URL}/{created['id']}", headers=operator_headers).status_code == 404


def test_delete_switch_with_links(client: TestClient, operator_headers: dict[str, str]) -> None:
    switch = create(client, "switches", operator_headers, switch_body())
    create(client, "links", operator_headers, link_body(switch["id"]))
    response = client.delete(f"{URL}/{switch['id']}", headers=operator_headers)
    assert response.status_code == 409
    assert "links" in response.json()["detail"]


def test_update_switch_cert_without_key(
    client: TestClient, operator_headers: dict[str, str]
) -> None:
    created = create(client, "switches", operator_headers, switch_body())
    response = client.patch(
        f"{URL}/{created['id']}", json={"tls_cert_path": "/etc/cert.pem"}, headers=operator_headers
    )
    assert response.status_code == 422
    assert response.json()["field"] == "body.tls_key_path"
