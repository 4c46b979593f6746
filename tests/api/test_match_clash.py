"""A slice whose classifier entry another slice holds on a switch is refused by the API (409),
not at deployment; overlapping prefixes, other ports and other tables are not clashes."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from sliceportal.api.main import create_app
from sliceportal.core.config import Settings
from utils.factories import create, create_link, link_body, slice_body
from utils.server import running_server

URL = "/api/v1/slices"
CONFLICT = "https://sliceportal.dev/problems/conflict"
Headers = dict[str, str]

PREFIX = "10.7.0.0/24"
OTHER = "10.8.0.0/24"
"""Every test has links of its own (a new switch each), so the prefixes can repeat."""


@pytest.fixture
def link(client: TestClient, operator_headers: Headers) -> dict[str, Any]:
    return create_link(client, operator_headers)


def post(client: TestClient, headers: Headers, body: dict[str, Any]) -> httpx.Response:
    response: httpx.Response = client.post(URL, json=body, headers=headers)
    return response


def assert_clash(response: httpx.Response, field: str, holder: dict[str, Any]) -> None:
    assert response.status_code == 409, response.text
    problem = response.json()
    assert response.headers["content-type"].startswith("application/problem+json")
    assert problem["type"] == CONFLICT
    assert problem["field"] == f"body.{field}"
    assert repr(holder["name"]) in problem["detail"]


def test_same_prefix_on_one_link_refused(
    client: TestClient, operator_headers: Headers, link: dict[str, Any]
) -> None:
    first = create(
        client, "slices", operator_headers, slice_body([link["id"]], ipv4_prefixes=[PREFIX])
    )
    response = post(
        client, operator_headers, slice_body([link["id"]], ipv4_prefixes=[OTHER, PREFIX])
    )
    assert_clash(response, "ipv4_prefixes", first)
    assert f"ipv4_dst={PREFIX}" in response.json()["detail"]


def test_same_vlan_without_prefixes_refused(
    client: TestClient, operator_headers: Headers, link: dict[str, Any]
) -> None:
    """A bare VLAN is the VLAN with prefix /0: listing 0.0.0.0/0 is the same entry."""
    first = create(
        client, "slices", operator_headers, slice_body([link["id"]], vlan_id=42, ipv4_prefixes=[])
    )
    bare = post(client, operator_headers, slice_body([link["id"]], vlan_id=42, ipv4_prefixes=[]))
    assert_clash(bare, "vlan_id", first)
    default = post(
        client, operator_headers, slice_body([link["id"]], vlan_id=42, ipv4_prefixes=["0.0.0.0/0"])
    )
    assert_clash(default, "ipv4_prefixes", first)


def test_same_prefix_and_vlan_refused_but_another_vlan_accepted(
    client: TestClient, operator_headers: Headers, link: dict[str, Any]
) -> None:
    first = create(
        client,
        "slices",
        operator_headers,
        slice_body([link["id"]], vlan_id=10, ipv4_prefixes=[PREFIX]),
    )
    response = post(
        client, operator_headers, slice_body([link["id"]], vlan_id=10, ipv4_prefixes=[PREFIX])
    )
    assert_clash(response, "ipv4_prefixes", first)
    create(
        client,
        "slices",
        operator_headers,
        slice_body([link["id"]], vlan_id=11, ipv4_prefixes=[PREFIX]),
    )


@pytest.mark.parametrize(
    ("first", "second"),
    [
        pytest.param({"length": 16}, {"length": 24}, id="different-prefix-length"),
        pytest.param({"vlan_id": 7}, {}, id="vlan-and-no-vlan"),
        pytest.param({}, {"vlan_id": 7}, id="no-vlan-and-vlan"),
    ],
)
def test_entries_that_differ_accepted(
    client: TestClient,
    operator_headers: Headers,
    link: dict[str, Any],
    first: dict[str, Any],
    second: dict[str, Any],
) -> None:
    """10.0.0.0/16 and 10.0.0.0/24 are two LPM entries (the longer wins); a VLAN slice and a
    prefix slice live in different tables."""

    def body(match: dict[str, Any]) -> dict[str, Any]:
        prefix = f"10.9.0.0/{match.get('length', 16)}"
        return slice_body([link["id"]], ipv4_prefixes=[prefix], vlan_id=match.get("vlan_id"))

    create(client, "slices", operator_headers, body(first))
    create(client, "slices", operator_headers, body(second))


def test_same_prefix_on_another_switch_accepted(
    client: TestClient, operator_headers: Headers, link: dict[str, Any]
) -> None:
    create(client, "slices", operator_headers, slice_body([link["id"]], ipv4_prefixes=[PREFIX]))
    other_switch = create_link(client, operator_headers, port=link["port"])
    create(
        client, "slices", operator_headers, slice_body([other_switch["id"]], ipv4_prefixes=[PREFIX])
    )


def test_same_prefix_out_of_another_port_of_the_switch_refused(
    client: TestClient, operator_headers: Headers, link: dict[str, Any]
) -> None:
    """A switch routes a prefix out of one port: the second slice's route would clash."""
    holder = create(
        client, "slices", operator_headers, slice_body([link["id"]], ipv4_prefixes=[PREFIX])
    )
    port = (link["port"] + 1) % 511
    same_switch = create(client, "links", operator_headers, link_body(link["switch_id"], port=port))
    body = slice_body([same_switch["id"]], vlan_id=30, ipv4_prefixes=[PREFIX])
    response = client.post("/api/v1/slices", json=body, headers=operator_headers)
    assert response.status_code == 409, response.text
    problem = response.json()
    assert problem["field"] == "body.ipv4_prefixes"
    assert holder["name"] in problem["detail"] and "ipv4_lpm" in problem["detail"]
    assert "one route per key" in problem["detail"]


def test_a_slice_with_prefixes_across_two_ports_of_one_switch_refused(
    client: TestClient, operator_headers: Headers, link: dict[str, Any]
) -> None:
    port = (link["port"] + 1) % 511
    second = create(client, "links", operator_headers, link_body(link["switch_id"], port=port))
    body = slice_body([link["id"], second["id"]], ipv4_prefixes=[OTHER])
    response = client.post("/api/v1/slices", json=body, headers=operator_headers)
    assert response.status_code == 409, response.text
    assert response.json()["field"] == "body.link_ids"
    assert "routes each prefix out of one port" in response.json()["detail"]


def test_update_into_a_clash_refused(
    client: TestClient, operator_headers: Headers, link: dict[str, Any]
) -> None:
    taken, free = PREFIX, OTHER
    holder = create(
        client,
        "slices",
        operator_headers,
        slice_body([link["id"]], vlan_id=20, ipv4_prefixes=[taken]),
    )
    elsewhere = create_link(client, operator_headers)
    moved = create(
        client,
        "slices",
        operator_headers,
        slice_body([elsewhere["id"]], vlan_id=20, ipv4_prefixes=[taken]),
    )
    mine = create(
        client,
        "slices",
        operator_headers,
        slice_body([link["id"]], vlan_id=21, ipv4_prefixes=[taken]),
    )

    def patch(slice_: dict[str, Any], body: dict[str, Any]) -> httpx.Response:
        response: httpx.Response = client.patch(
            f"{URL}/{slice_['id']}", json=body, headers=operator_headers
        )
        return response

    assert_clash(patch(mine, {"vlan_id": 20}), "ipv4_prefixes", holder)
    assert_clash(patch(moved, {"link_ids": [link["id"]]}), "ipv4_prefixes", holder)
    assert_clash(
        patch(moved, {"link_ids": [elsewhere["id"], link["id"]], "rate_bps": 2e6}),
        "ipv4_prefixes",
        holder,
    )
    # its own entries are no clash, nor a prefix nobody holds there
    assert patch(holder, {"ipv4_prefixes": [taken, free]}).status_code == 200
    assert_clash(patch(mine, {"ipv4_prefixes": [free], "vlan_id": 20}), "ipv4_prefixes", holder)
    assert patch(mine, {"ipv4_prefixes": ["10.10.0.0/24"], "vlan_id": 20}).status_code == 200
    unchanged = client.get(f"{URL}/{moved['id']}", headers=operator_headers).json()
    assert unchanged["link_ids"] == [elsewhere["id"]]


CLIENTS = 20


async def create_clashing(base: str, headers: Headers, link_id: int, prefix: str) -> list[Any]:
    limits = httpx.Limits(max_connections=CLIENTS)
    async with httpx.AsyncClient(base_url=base, headers=headers, limits=limits, timeout=60) as http:
        bodies = [slice_body([link_id], ipv4_prefixes=[prefix]) for _ in range(CLIENTS)]
        responses = await asyncio.gather(*(http.post(URL, json=b) for b in bodies))
    return [(r.status_code, r.json().get("type")) for r in responses]


def test_concurrent_clashing_creations_admit_exactly_one(
    settings: Settings, client: TestClient, operator_headers: Headers, link: dict[str, Any]
) -> None:
    with running_server(create_app(settings)) as base:
        results = asyncio.run(create_clashing(base, operator_headers, link["id"], PREFIX))

    assert Counter(results) == {(201, None): 1, (409, CONFLICT): CLIENTS - 1}
    stored = client.get(URL, params={"link_id": link["id"]}, headers=operator_headers).json()
    assert stored["count"] == 1
