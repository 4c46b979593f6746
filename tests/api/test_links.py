from __future__ import annotations

from fastapi.testclient import TestClient

from utils.factories import MBIT, create, link_body, slice_body, switch_body, unique

URL = "/api/v1/links"
Headers = dict[str, str]


def test_create_link_defaults(client: TestClient, operator_headers: Headers) -> None:
    switch = create(client, "switches", operator_headers, switch_body())
    created = create(client, "links", operator_headers, link_body(switch["id"]))
    assert created["queue_count"] == 8
    assert created["model"] == "netcalc"  # the sound bound
    assert created["mtu_bytes"] == 1500
    assert created["frame_overhead_bytes"] == 0  # the capacity counts frame bytes


def test_create_link_unknown_switch(client: TestClient, operator_headers: Headers) -> None:
    response = client.post(URL, json=link_body(999999999), headers=operator_headers)
    assert response.status_code == 422
    assert response.json()["field"] == "body.switch_id"


def test_create_link_invalid(client: TestClient, operator_headers: Headers) -> None:
    switch = create(client, "switches", operator_headers, switch_body())
    for overrides, field in (
        ({"port": 512}, "body.port"),
        ({"port": 511}, "body.port"),  # BMv2's drop port
        ({"capacity_bps": 0}, "body.capacity_bps"),
        ({"queue_count": 9}, "body.queue_count"),
        ({"queue_count": 1}, "body.queue_count"),  # best effort keeps one queue
        ({"frame_overhead_bytes": 65}, "body.frame_overhead_bytes"),
        ({"frame_overhead_bytes": -1}, "body.frame_overhead_bytes"),
        ({"model": "magic"}, "body.model"),
    ):
        response = client.post(
            URL, json=link_body(switch["id"], **overrides), headers=operator_headers
        )
        assert response.status_code == 422, overrides
        assert response.json()["field"] == field


def test_create_link_port_taken(client: TestClient, operator_headers: Headers) -> None:
    switch = create(client, "switches", operator_headers, switch_body())
    create(client, "links", operator_headers, link_body(switch["id"], port=7))
    response = client.post(URL, json=link_body(switch["id"], port=7), headers=operator_headers)
    assert response.status_code == 409
    assert response.json()["field"] == "body.port"


def test_read_links_filters_and_pagination(client: TestClient, operator_headers: Headers) -> None:
    switch = create(client, "switches", operator_headers, switch_body())
    tag = unique("l")
    for port in range(4):
        create(
            client,
            "links",
            operator_headers,
            link_body(
                switch["id"],
                name=f"{tag}-{port}",
                port=port,
                model="netcalc" if port % 2 else "harkous",
            ),
        )
    page = client.get(
        URL, params={"switch_id": switch["id"], "limit": 3}, headers=operator_headers
    ).json()
    assert page["count"] == 4
    assert [link["port"] for link in page["data"]] == [0, 1, 2]
    netcalc = client.get(URL, params={"q": tag, "model": "netcalc"}, headers=operator_headers)
    assert [link["port"] for link in netcalc.json()["data"]] == [1, 3]


def test_update_link(client: TestClient, operator_headers: Headers) -> None:
    switch = create(client, "switches", operator_headers, switch_body())
    link = create(client, "links", operator_headers, link_body(switch["id"]))
    response = client.patch(
        f"{URL}/{link['id']}",
        json={"capacity_bps": 10 * MBIT, "queue_count": 4},
        headers=operator_headers,
    )
    assert response.status_code == 200
    assert response.json()["capacity_bps"] == 10 * MBIT
    assert response.json()["queue_count"] == 4
    moved = client.patch(f"{URL}/{link['id']}", json={"switch_id": 1}, headers=operator_headers)
    assert moved.status_code == 422


def test_delete_link(client: TestClient, operator_headers: Headers) -> None:
    switch = create(client, "switches", operator_headers, switch_body())
    link = create(client, "links", operator_headers, link_body(switch["id"]))
    assert client.delete(f"{URL}/{link['id']}", headers=operator_headers).status_code == 204
    assert client.get(f"{URL}/{link['id']}", headers=operator_headers).status_code == 404


def test_read_link_analysis_not_found(client: TestClient, viewer_headers: Headers) -> None:
    assert client.get(f"{URL}/999999999/analysis", headers=viewer_headers).status_code == 404


def test_frame_overhead_round_trips_and_changes_the_bound(
    client: TestClient, operator_headers: Headers
) -> None:
    """24 bytes of overhead: the capacity is the line rate, so each frame costs 24 bytes more
    on the wire and the same slices get larger bounds."""
    switch = create(client, "switches", operator_headers, switch_body())
    link = create(
        client,
        "links",
        operator_headers,
        link_body(switch["id"], capacity_bps=100 * MBIT, frame_overhead_bytes=24),
    )
    assert link["frame_overhead_bytes"] == 24
    url = f"{URL}/{link['id']}"
    assert client.get(url, headers=operator_headers).json()["frame_overhead_bytes"] == 24
    body = slice_body([link["id"]], rate_bps=10 * MBIT, burst_limit_s=0.01, delay_target_s=0.05)
    create(client, "slices", operator_headers, body)

    def bound() -> float:
        analysis = client.get(f"{url}/analysis", headers=operator_headers).json()
        value: float = analysis["slices"][0]["worst_case_delay_s"]
        return value

    line_rate = bound()
    patched = client.patch(url, json={"frame_overhead_bytes": 0}, headers=operator_headers)
    assert patched.status_code == 200, patched.text
    assert patched.json()["frame_overhead_bytes"] == 0
    assert bound() < line_rate
    entries = client.get(
        "/api/v1/changes",
        params={"entity_type": "link", "entity_id": link["id"]},
        headers=operator_headers,
    ).json()["data"]
    assert entries[0]["before"]["frame_overhead_bytes"] == 24
    assert entries[0]["after"]["frame_overhead_bytes"] == 0


def test_a_frame_overhead_the_slices_do_not_fit_is_refused(
    client: TestClient, operator_headers: Headers
) -> None:
    """The overhead is one of the fields admission re-checks on a link change."""
    switch = create(client, "switches", operator_headers, switch_body())
    link = create(
        client, "links", operator_headers, link_body(switch["id"], capacity_bps=100 * MBIT)
    )
    body = slice_body([link["id"]], rate_bps=90 * MBIT, burst_limit_s=0.001, delay_target_s=1)
    create(client, "slices", operator_headers, body)
    url = f"{URL}/{link['id']}"
    response = client.patch(url, json={"frame_overhead_bytes": 24}, headers=operator_headers)
    assert response.status_code == 409, response.text
    assert response.json()["type"].endswith("/admission-rejected")
    assert client.get(url, headers=operator_headers).json()["frame_overhead_bytes"] == 0
