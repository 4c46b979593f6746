"""Slices have ordered paths: stored and validated, admitted end to end with the cables'
propagation, proposed (`POST /slices/propose-path`), and never rerouted by a topology change
(a cable they cross is not deleted; `GET /cables/{id}/affected` proposes a detour each).

The network, four switches with two disjoint routes from s1 to the hosts behind s4 and a
cable between s2 and s3 (1 ms of propagation each):

    s1 --- s2 --- s4 -- hosts
     \\     |     /
      --- s3 ---
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from ipaddress import IPv4Network
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from api.problems import assert_refused
from sliceportal.controlplane.desired import intents
from sliceportal.domain.dataplane import ROUTE_TABLE, classifier_keys
from utils.factories import MBIT, create, link_body, slice_body, switch_body, unique

Headers = dict[str, str]
MS = 1e-3
CABLED = ((1, 2), (1, 3), (2, 4), (3, 4), (2, 3))


@dataclass
class Fabric:
    switches: list[int]
    """Switch ids, s1 first."""
    link: dict[tuple[int, int], int]
    """The link from switch a to switch b (1-based), by (a, b)."""
    cable: dict[tuple[int, int], int]
    """The cable between a and b, by (a, b) as in `CABLED`."""
    hosts: int
    """The host-facing link of s4."""

    def path(self, *switches: int) -> list[int]:
        """The path through `switches` (1-based), out to s4's hosts."""
        hops = [self.link[a, b] for a, b in zip(switches, switches[1:], strict=False)]
        return [*hops, self.hosts]


@pytest.fixture
def fabric(client: TestClient, operator_headers: Headers) -> Fabric:
    switches = [create(client, "switches", operator_headers, switch_body())["id"] for _ in "1234"]
    ports = iter(range(1, 100))
    link: dict[tuple[int, int], int] = {}
    cable: dict[tuple[int, int], int] = {}

    def port(switch: int) -> int:
        body = link_body(switches[switch - 1], port=next(ports))
        return int(create(client, "links", operator_headers, body)["id"])

    for a, b in CABLED:
        link[a, b], link[b, a] = port(a), port(b)
        body = {
            "name": unique("cable"),
            "a_link_id": link[a, b],
            "b_link_id": link[b, a],
            "propagation_s": 1 * MS,
        }
        cable[a, b] = create(client, "cables", operator_headers, body)["id"]
    return Fabric(switches, link, cable, port(4))


def read(client: TestClient, headers: Headers, slice_id: int) -> dict[str, Any]:
    response = client.get(f"/api/v1/slices/{slice_id}", headers=headers)
    assert response.status_code == 200, response.text
    document: dict[str, Any] = response.json()
    return document


def listed(client: TestClient, headers: Headers, slice_id: int, link_id: int) -> dict[str, Any]:
    response = client.get("/api/v1/slices", params={"link_id": link_id}, headers=headers)
    assert response.status_code == 200, response.text
    (document,) = (row for row in response.json()["data"] if row["id"] == slice_id)
    return dict(document)


def path_body(path: list[int], **overrides: Any) -> dict[str, Any]:
    body = slice_body(path, **overrides)
    del body["link_ids"]
    return body | {"path": path}


def test_create_with_a_path_stores_its_order(
    client: TestClient, operator_headers: Headers, fabric: Fabric
) -> None:
    path = fabric.path(1, 3, 4)
    created = create(client, "slices", operator_headers, path_body(path))
    assert created["path"] == path
    assert created["link_ids"] == sorted(path)
    assert {row["switch_id"] for row in created["dp_sids"]} == {
        fabric.switches[0],
        fabric.switches[2],
        fabric.switches[3],
    }
    document = read(client, operator_headers, created["id"])
    assert document == listed(client, operator_headers, created["id"], path[0])
    assert document["path"] == path


def test_link_ids_in_path_order_are_a_path_and_others_a_set(
    client: TestClient, operator_headers: Headers, fabric: Fabric
) -> None:
    path = fabric.path(1, 2, 4)
    ordered = create(client, "slices", operator_headers, slice_body(path))
    assert ordered["path"] == path
    shuffled = [path[2], path[0], path[1]]
    unordered = create(client, "slices", operator_headers, slice_body(shuffled))
    assert unordered["path"] is None
    assert unordered["link_ids"] == sorted(path)
    assert read(client, operator_headers, unordered["id"])["path"] is None


@pytest.mark.parametrize(
    ("hops", "field", "says"),
    [
        (lambda f: [f.link[1, 2], f.link[3, 4], f.hosts], "body.path[1]", "leads to switch"),
        (lambda f: [f.hosts, f.link[4, 2]], "body.path[1]", "is no cable's end"),
        (lambda f: [f.link[1, 2], f.link[2, 1], f.link[1, 3]], "body.path[2]", "leaves switch"),
        (lambda f: [f.link[1, 2], f.link[2, 3], f.link[3, 2]], "body.path[2]", "leads back"),
    ],
    ids=["not-joined", "after-hosts", "loop", "back"],
)
def test_a_broken_path_is_refused_naming_its_index(
    client: TestClient, operator_headers: Headers, fabric: Fabric, hops: Any, field: str, says: str
) -> None:
    response = client.post("/api/v1/slices", json=path_body(hops(fabric)), headers=operator_headers)
    assert says in assert_refused(response, field)


def test_path_and_link_ids_must_name_the_same_links(
    client: TestClient, operator_headers: Headers, fabric: Fabric
) -> None:
    body = path_body(fabric.path(1, 2, 4)) | {"link_ids": fabric.path(1, 3, 4)}
    response = client.post("/api/v1/slices", json=body, headers=operator_headers)
    assert "other links" in assert_refused(response, "body.path")


def test_update_moves_a_slice_to_another_path(
    client: TestClient, operator_headers: Headers, fabric: Fabric
) -> None:
    created = create(client, "slices", operator_headers, path_body(fabric.path(1, 2, 4)))
    detour = fabric.path(1, 3, 2, 4)
    response = client.patch(
        f"/api/v1/slices/{created['id']}", json={"path": detour}, headers=operator_headers
    )
    assert response.status_code == 200, response.text
    assert response.json()["path"] == detour
    document = read(client, operator_headers, created["id"])
    assert document["path"] == detour
    assert document == listed(client, operator_headers, created["id"], detour[0])
    broken = client.patch(
        f"/api/v1/slices/{created['id']}",
        json={"path": [fabric.link[1, 3], fabric.hosts]},
        headers=operator_headers,
    )
    assert_refused(broken, "body.path[1]")


def test_an_end_to_end_target_counts_the_cables_propagation(
    client: TestClient, operator_headers: Headers, fabric: Fabric
) -> None:
    """Two cables of 1 ms: a target of 1.5 ms is out of reach whatever the queues, 5 ms is
    not (three hops of one slice at 10 Mbit/s on 1 Gbit/s links queue well under 1 ms)."""
    path = fabric.path(1, 2, 4)
    refused = client.post(
        "/api/v1/slices",
        json=path_body(path, e2e_delay_target_s=1.5 * MS),
        headers=operator_headers,
    )
    assert refused.status_code == 409, refused.text
    assert refused.json()["type"].endswith("/admission-rejected")
    create(client, "slices", operator_headers, path_body(path, e2e_delay_target_s=5 * MS))


def proposal_body(fabric: Fabric, **overrides: Any) -> dict[str, Any]:
    return {
        "rate_bps": 10 * MBIT,
        "burst_limit_s": 0.01,
        "priority": 7,
        "ingress_switch_id": fabric.switches[0],
        "egress_link_id": fabric.hosts,
    } | overrides


def propose(client: TestClient, headers: Headers, body: dict[str, Any]) -> Any:
    return client.post("/api/v1/slices/propose-path", json=body, headers=headers)


def test_propose_the_shortest_path_then_the_lowest_bound(
    client: TestClient, operator_headers: Headers, fabric: Fabric
) -> None:
    """Both two-cable routes are free and equal: the first (through s2) is proposed. A busy
    slice at the same priority on s1→s2 raises the bound there: then through s3."""
    response = propose(client, operator_headers, proposal_body(fabric))
    assert response.status_code == 200, response.text
    first = response.json()
    assert first["path"] == fabric.path(1, 2, 4)
    assert [hop["propagation_s"] for hop in first["hops"]] == [1 * MS, 1 * MS, 0.0]
    assert first["end_to_end_s"] == pytest.approx(
        sum(hop["bound_s"] + hop["propagation_s"] for hop in first["hops"])
    )
    busy = slice_body([fabric.link[1, 2]], rate_bps=400 * MBIT, burst_limit_s=0.005)
    create(client, "slices", operator_headers, busy)
    second = propose(client, operator_headers, proposal_body(fabric)).json()
    assert second["path"] == fabric.path(1, 3, 4)
    assert second["end_to_end_s"] < first["end_to_end_s"] + 1 * MS


def test_propose_refuses_with_every_candidate_when_none_admits(
    client: TestClient, operator_headers: Headers, fabric: Fabric
) -> None:
    response = propose(client, operator_headers, proposal_body(fabric, e2e_delay_target_s=MS))
    assert response.status_code == 409, response.text
    assert response.headers["content-type"] == "application/problem+json"
    problem = response.json()
    assert problem["type"].endswith("/no-path")
    assert [item["path"] for item in problem["refused"]] == [
        fabric.path(1, 2, 4),
        fabric.path(1, 3, 4),
        fabric.path(1, 2, 3, 4),
        fabric.path(1, 3, 2, 4),
    ]
    assert "end-to-end" in problem["refused"][0]["reason"]
    assert problem["truncated"] is False


def test_propose_no_route(client: TestClient, operator_headers: Headers, fabric: Fabric) -> None:
    island = create(client, "switches", operator_headers, switch_body())["id"]
    response = propose(client, operator_headers, proposal_body(fabric, ingress_switch_id=island))
    assert response.status_code == 409, response.text
    assert "no route" in response.json()["detail"]
    assert response.json()["refused"] == []


def test_propose_refusals_name_the_field(
    client: TestClient, operator_headers: Headers, fabric: Fabric
) -> None:
    cabled = propose(
        client, operator_headers, proposal_body(fabric, egress_link_id=fabric.link[2, 4])
    )
    assert "faces hosts" in assert_refused(cabled, "body.egress_link_id")
    unknown = propose(client, operator_headers, proposal_body(fabric, ingress_switch_id=10**9))
    assert_refused(unknown, "body.ingress_switch_id")


def test_a_cable_slices_cross_is_not_deleted_and_its_slices_get_a_detour(
    client: TestClient, operator_headers: Headers, fabric: Fabric
) -> None:
    crossing = create(client, "slices", operator_headers, path_body(fabric.path(1, 2, 4)))
    cable = fabric.cable[2, 4]
    refused = client.delete(f"/api/v1/cables/{cable}", headers=operator_headers)
    assert refused.status_code == 409, refused.text
    assert crossing["name"] in refused.json()["detail"]
    response = client.get(f"/api/v1/cables/{cable}/affected", headers=operator_headers)
    assert response.status_code == 200, response.text
    (affected,) = response.json()["data"]
    assert affected["slice_id"] == crossing["id"]
    assert affected["path"] == crossing["path"]
    detour = affected["proposal"]["path"]
    assert detour == fabric.path(1, 3, 4)
    moved = client.patch(
        f"/api/v1/slices/{crossing['id']}", json={"path": detour}, headers=operator_headers
    )
    assert moved.status_code == 200, moved.text
    assert client.delete(f"/api/v1/cables/{cable}", headers=operator_headers).status_code == 204


def test_affected_slice_without_a_detour_says_why(
    client: TestClient, operator_headers: Headers, fabric: Fabric
) -> None:
    """From s3, the hosts are one cable away (1 ms): a 1.5 ms target fits that path, not the
    detours around the s3–s4 cable (two cables or more)."""
    on_it = path_body(fabric.path(3, 4), e2e_delay_target_s=1.5 * MS)
    create(client, "slices", operator_headers, on_it)
    response = client.get(f"/api/v1/cables/{fabric.cable[3, 4]}/affected", headers=operator_headers)
    (affected,) = response.json()["data"]
    assert affected["proposal"] is None
    assert "end-to-end" in affected["reason"]


def test_a_slower_cable_is_admitted_against_the_end_to_end_targets_crossing_it(
    client: TestClient, operator_headers: Headers, fabric: Fabric
) -> None:
    create(
        client,
        "slices",
        operator_headers,
        path_body(fabric.path(1, 2, 4), e2e_delay_target_s=5 * MS),
    )
    url = f"/api/v1/cables/{fabric.cable[2, 4]}"
    slower = client.patch(url, json={"propagation_s": 10 * MS}, headers=operator_headers)
    assert slower.status_code == 409, slower.text
    assert slower.json()["type"].endswith("/admission-rejected")
    fine = client.patch(url, json={"propagation_s": 2 * MS}, headers=operator_headers)
    assert fine.status_code == 200, fine.text


def test_deploy_classifies_by_the_same_match_on_every_switch_of_the_path(
    client: TestClient, operator_headers: Headers, fabric: Fabric, db: sessionmaker[Session]
) -> None:
    """Each switch of the path gets the slice's own entries (`controlplane.desired`, one
    intent per switch, reconciled on its own): the same classifier match everywhere, its
    route out of the port of that switch's link on the path."""
    path = fabric.path(1, 3, 4)
    made = create(client, "slices", operator_headers, path_body(path))
    (prefix,) = made["ipv4_prefixes"]
    with db() as session:
        asked = intents(session, slice_ids=[made["id"]])
    for link_id in path:
        link = client.get(f"/api/v1/links/{link_id}", headers=operator_headers).json()
        intent = asked[made["id"], link["switch_id"]]
        assert intent.error is None
        routes = [entry for entry in intent.entries if entry.table == ROUTE_TABLE]
        assert [dict(entry.params)["port"] for entry in routes] == [link["port"]]
        classified = {entry.key for entry in intent.entries if entry.table != ROUTE_TABLE}
        assert set(classifier_keys(link["port"], None, [IPv4Network(prefix)])) <= classified
    assert {switch for _, switch in asked} == {
        fabric.switches[0],
        fabric.switches[2],
        fabric.switches[3],
    }


def test_an_import_stores_paths_and_refuses_a_broken_one_naming_its_row(
    client: TestClient, operator_headers: Headers, fabric: Fabric
) -> None:
    """`POST /slices/import` reads `path` as a creation does (JSON is YAML)."""
    url = "/api/v1/slices/import"
    yaml = operator_headers | {"Content-Type": "application/yaml"}
    good = path_body(fabric.path(1, 2, 4))
    broken = path_body([fabric.link[1, 2], fabric.link[3, 4], fabric.hosts])
    refused = client.post(url, content=json.dumps([good, broken]), headers=yaml)
    assert refused.status_code == 422, refused.text
    assert refused.json()["errors"] == [
        {"row": 2, "field": "path[1]", "message": refused.json()["errors"][0]["message"]}
    ]
    response = client.post(url, content=json.dumps([good]), headers=yaml)
    assert response.status_code == 201, response.text
    (slice_id,) = response.json()["ids"]
    assert read(client, operator_headers, slice_id)["path"] == good["path"]


def test_an_unordered_slice_is_listed_without_a_detour(
    client: TestClient, operator_headers: Headers, fabric: Fabric
) -> None:
    path = fabric.path(1, 2, 4)
    unordered = create(client, "slices", operator_headers, slice_body(path[::-1]))
    response = client.get(f"/api/v1/cables/{fabric.cable[1, 2]}/affected", headers=operator_headers)
    (affected,) = response.json()["data"]
    assert (affected["slice_id"], affected["path"]) == (unordered["id"], None)
    assert affected["proposal"] is None
    assert "unordered" in affected["reason"]
