"""Import and export of slices (`POST /slices/import`, `GET /slices/export`): one transaction,
all or nothing, every offending row named, admission once per link for the whole batch."""

from __future__ import annotations

import csv
import io
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
import yaml
from fastapi.testclient import TestClient
from httpx import Response

from utils.factories import MBIT, create_link, slice_body, unique, unique_prefix
from utils.server import running_server

URL = "/api/v1/slices"
Headers = dict[str, str]
CSV = {"Content-Type": "text/csv"}
YAML = {"Content-Type": "application/yaml"}


def _import(
    client: TestClient, headers: Headers, body: str, media: dict[str, str] = CSV
) -> Response:
    return client.post(f"{URL}/import", content=body.encode(), headers=headers | media)


def _csv(rows: list[dict[str, Any]]) -> str:
    columns = list(dict.fromkeys(key for row in rows for key in row))
    out = io.StringIO()
    writer = csv.DictWriter(out, columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def _names_stored(client: TestClient, headers: Headers, names: list[str]) -> list[str]:
    found = []
    for name in names:
        page = client.get(URL, params={"q": name}, headers=headers).json()
        found += [row["name"] for row in page["data"] if row["name"] == name]
    return found


def _row_errors(response: Response, status: int) -> list[tuple[int | None, str | None]]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    return [(error.get("row"), error["field"]) for error in response.json()["errors"]]


@pytest.fixture
def links(client: TestClient, operator_headers: Headers) -> list[dict[str, Any]]:
    return [create_link(client, operator_headers) for _ in range(2)]


def test_csv_import_creates_every_row(
    client: TestClient, operator_headers: Headers, links: list[dict[str, Any]]
) -> None:
    first, second = links
    names = [unique("bulk") for _ in range(3)]
    prefixes = [unique_prefix(), unique_prefix()]
    text = (
        "name,ipv4_prefixes,rate_bps,burst_limit_s,priority,link_ids,sla.max_delay_s,"
        "scheme,codel.target_s\n"
        f'{names[0]},"{prefixes[0]},{prefixes[1]}",10000000,0.01,7,{first["id"]},0.02,,\n'
        f'{names[1]},{unique_prefix()},2e7,0.005,6,"{first["id"]},{second["id"]}",,codel,'
        "0.002\n"
        f"{names[2]},{unique_prefix()},1000000.5,0.02,5,{second['id']},,,\n"
    )
    response = _import(client, operator_headers, text)
    assert response.status_code == 201, response.text
    ids = response.json()["ids"]
    assert response.json()["count"] == 3
    slices = [client.get(f"{URL}/{i}", headers=operator_headers).json() for i in ids]
    assert [s["name"] for s in slices] == names
    assert slices[0]["ipv4_prefixes"] == sorted(prefixes)
    assert slices[0]["sla"]["max_delay_s"] == 0.02
    assert slices[0]["state"] == "pending"
    assert slices[1]["rate_bps"] == 2e7
    assert slices[1]["link_ids"] == sorted([first["id"], second["id"]])
    assert slices[1]["codel"] == {"target_s": 0.002, "interval_s": 0.1, "ecn_mark": False}
    assert slices[2]["rate_bps"] == 1000000.5
    # DP_SIDs allocated per switch, one after the other, as single creations get them
    assert slices[0]["dp_sids"] == [{"switch_id": first["switch_id"], "dp_sid": 1}]
    assert slices[1]["dp_sids"] == [
        {"switch_id": first["switch_id"], "dp_sid": 2},
        {"switch_id": second["switch_id"], "dp_sid": 1},
    ]
    changes = client.get(
        "/api/v1/changes",
        params={"entity_type": "slice", "entity_id": ids[1]},
        headers=operator_headers,
    ).json()["data"]
    assert changes[0]["action"] == "create"
    assert changes[0]["after"]["dp_sids"] == {
        str(first["switch_id"]): 2,
        str(second["switch_id"]): 1,
    }


def test_yaml_import(
    client: TestClient, operator_headers: Headers, links: list[dict[str, Any]]
) -> None:
    bodies = [slice_body([links[0]["id"]]), slice_body([links[1]["id"]], vlan_id=300)]
    bodies[1]["abc"] = {"meter_memory_s": 0.1}
    bodies[1]["scheme"] = "abc"
    text = yaml.safe_dump(bodies).replace("10000000.0", "1e7")  # YAML 1.2 floats are read too
    response = _import(client, operator_headers, text, YAML)
    assert response.status_code == 201, response.text
    second = client.get(f"{URL}/{response.json()['ids'][1]}", headers=operator_headers).json()
    assert second["abc"]["meter_memory_s"] == 0.1
    assert second["rate_bps"] == 10 * MBIT


def test_invalid_rows_are_all_reported_and_nothing_is_stored(
    client: TestClient, operator_headers: Headers, links: list[dict[str, Any]]
) -> None:
    link_id = links[0]["id"]
    rows = [
        slice_body([link_id]),
        slice_body([link_id], rate_bps="fast"),  # per field, as POST /slices
        slice_body([link_id], ipv4_prefixes=[]),  # across fields: no match
        slice_body([link_id], scheme="ecn_step", marking_threshold_s=0.5),  # above the burst
    ]
    for row in rows:
        row["ipv4_prefixes"] = ",".join(row["ipv4_prefixes"])
        row["link_ids"] = str(link_id)
    response = _import(client, operator_headers, _csv(rows))
    errors = _row_errors(response, 422)
    assert (2, "rate_bps") in errors
    assert (3, "vlan_id") in errors
    assert any(row == 4 and field and "marking_threshold_s" in field for row, field in errors)
    assert not any(row == 1 for row, _ in errors)
    assert "row 2" in response.json()["detail"]
    assert _names_stored(client, operator_headers, [r["name"] for r in rows]) == []


def test_conflicting_rows(
    client: TestClient, operator_headers: Headers, links: list[dict[str, Any]]
) -> None:
    link_id = links[0]["id"]
    stored = client.post(URL, json=slice_body([link_id]), headers=operator_headers).json()
    shared = unique_prefix()
    rows = [
        slice_body([link_id], name=stored["name"]),  # a stored name
        slice_body([link_id], ipv4_prefixes=[shared]),
        slice_body([link_id], ipv4_prefixes=[shared]),  # the entry of row 2
        slice_body([link_id], ipv4_prefixes=stored["ipv4_prefixes"]),  # the stored one's
        slice_body([link_id], name="dup-" + stored["name"]),
        slice_body([link_id], name="dup-" + stored["name"]),  # the name of row 5
        slice_body([links[0]["id"] + 10_000_000]),
    ]
    response = _import(client, operator_headers, yaml.safe_dump(rows[:-1]), YAML)
    errors = _row_errors(response, 409)
    assert errors == [(1, "name"), (3, "ipv4_prefixes"), (4, "ipv4_prefixes"), (6, "name")]
    assert response.json()["type"].endswith("/conflict")
    assert _names_stored(client, operator_headers, [rows[1]["name"]]) == []

    response = _import(client, operator_headers, yaml.safe_dump(rows[-1:]), YAML)
    assert _row_errors(response, 422) == [(1, "link_ids")]


def test_admission_checks_the_batch_together(client: TestClient, operator_headers: Headers) -> None:
    """Each slice fits the link alone; together they exceed it: refused as a whole."""
    link = create_link(client, operator_headers, capacity_bps=100 * MBIT)
    rows = [slice_body([link["id"]], rate_bps=12 * MBIT) for _ in range(9)]
    response = _import(client, operator_headers, yaml.safe_dump(rows), YAML)
    errors = _row_errors(response, 409)
    problem = response.json()
    assert problem["type"].endswith("/admission-rejected")
    assert {row for row, _ in errors} == set(range(1, 10))
    assert problem["violations"] and problem["fixes"]
    assert _names_stored(client, operator_headers, [r["name"] for r in rows]) == []

    response = _import(client, operator_headers, yaml.safe_dump(rows[:8]), YAML)
    assert response.status_code == 201, response.text


def test_a_stored_slice_pushed_out_blames_the_rows_on_its_link(
    client: TestClient, operator_headers: Headers
) -> None:
    link = create_link(client, operator_headers, capacity_bps=100 * MBIT)
    stored = slice_body([link["id"]], rate_bps=10 * MBIT, priority=1, burst_limit_s=0.1)
    stored["delay_target_s"] = 0.25
    assert client.post(URL, json=stored, headers=operator_headers).status_code == 201
    rows = [slice_body([link["id"]], rate_bps=45 * MBIT, burst_limit_s=0.1) for _ in range(2)]
    for row in rows:
        row["delay_target_s"] = 0.25
    response = _import(client, operator_headers, yaml.safe_dump(rows), YAML)
    errors = _row_errors(response, 409)
    assert {row for row, _ in errors} == {1, 2}
    assert any(stored["name"] in e["message"] for e in response.json()["errors"])


@pytest.mark.parametrize(
    ("body", "media", "status", "says"),
    [
        ("name\nx\n", {"Content-Type": "application/json"}, 415, "text/csv"),
        ("nom,rate_bps\nx,1\n", CSV, 422, "unknown CSV column 'nom'"),
        ("name,name\nx,y\n", CSV, 422, "appears twice"),
        ("name,rate_bps\nx\n", CSV, 422, "row 1 has 1 cells"),
        ("- name: [x\n", YAML, 422, "not valid YAML"),
        ("name: x\n", YAML, 422, "a list of slices"),
        ("- 3\n", YAML, 422, "row"),
        ("- name: 2024-13-01\n", YAML, 422, "not valid YAML"),
        (f"name,rate_bps\nx,{'9' * 5000}\n", CSV, 422, "row 1"),
    ],
)
def test_unreadable_files(
    client: TestClient,
    operator_headers: Headers,
    body: str,
    media: dict[str, str],
    status: int,
    says: str,
) -> None:
    response = _import(client, operator_headers, body, media)
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert says in response.text


def test_viewers_cannot_import(client: TestClient, viewer_headers: Headers) -> None:
    response = _import(client, viewer_headers, "name\n")
    assert response.status_code == 403


@pytest.mark.parametrize("file_format", ["csv", "yaml"])
def test_export_imports_back_to_the_same_slices(
    client: TestClient, operator_headers: Headers, links: list[dict[str, Any]], file_format: str
) -> None:
    first, second = links
    bodies = [
        slice_body([first["id"]], description='a "quoted", comma', sla={"max_loss_ratio": 0.01}),
        slice_body([first["id"], second["id"]], vlan_id=None, e2e_delay_target_s=0.05),
        slice_body([second["id"]], scheme="codel", codel={"target_s": 0.003, "ecn_mark": True}),
        slice_body([second["id"]], scheme="abc", rate_bps=3.3e6, max_packet_bytes=1000),
        slice_body([first["id"]], scheme="ecn_step", marking_threshold_s=0.004, vlan_id=77),
    ]
    names = {body["name"] for body in bodies}
    ids = []
    for body in bodies:
        response = client.post(URL, json=body, headers=operator_headers)
        assert response.status_code == 201, response.text
        ids.append(response.json()["id"])

    def exported() -> tuple[str, list[dict[str, Any]]]:
        response = client.get(
            f"{URL}/export", params={"format": file_format}, headers=operator_headers
        )
        assert response.status_code == 200, response.text
        text = response.text
        if file_format == "csv":
            assert response.headers["content-type"].startswith("text/csv")
            lines = text.splitlines(keepends=True)
            kept = [lines[0]] + [line for line in lines[1:] if line.split(",")[0] in names]
            documents = list(csv.DictReader(io.StringIO("".join(kept))))
            return "".join(kept), documents
        assert response.headers["content-type"].startswith("application/yaml")
        documents = [d for d in yaml.safe_load(text) if d["name"] in names]
        return yaml.safe_dump(documents, sort_keys=False), documents

    text, documents = exported()
    assert len(documents) == len(bodies)
    for slice_id in ids:
        client.delete(f"{URL}/{slice_id}", headers=operator_headers)
    assert _names_stored(client, operator_headers, sorted(names)) == []

    response = _import(client, operator_headers, text, CSV if file_format == "csv" else YAML)
    assert response.status_code == 201, response.text
    assert exported()[1] == documents


def test_an_end_to_end_target_is_checked_on_the_row_s_path(
    client: TestClient, operator_headers: Headers, links: list[dict[str, Any]]
) -> None:
    path = [link["id"] for link in links]
    rows = [
        slice_body(path, vlan_id=None, e2e_delay_target_s=0.05),
        slice_body(path, vlan_id=None, e2e_delay_target_s=1e-6),  # below two hops' bounds
    ]
    response = _import(client, operator_headers, yaml.safe_dump(rows), YAML)
    assert _row_errors(response, 409) == [(2, "e2e_delay_target_s")]
    assert response.json()["violations"][0]["kind"] == "end-to-end"
    assert _names_stored(client, operator_headers, [r["name"] for r in rows]) == []


def test_concurrent_imports_and_creations_of_one_entry_admit_exactly_one(
    app: Any, client: TestClient, operator_headers: Headers
) -> None:
    """The import takes the switch and link locks of single creations, in the same order: of
    imports and creations racing for one prefix on one link, one wins, the others get 409."""
    link = create_link(client, operator_headers)
    prefix = unique_prefix()

    def batch() -> list[dict[str, Any]]:
        rows = [slice_body([link["id"]]) for _ in range(20)]
        rows[-1]["ipv4_prefixes"] = [prefix]
        return rows

    with running_server(app) as base, httpx.Client(base_url=base, timeout=60) as http:

        def attempt(number: int) -> int:
            if number % 2:
                body = slice_body([link["id"]], ipv4_prefixes=[prefix])
                return http.post(URL, json=body, headers=operator_headers).status_code
            text = yaml.safe_dump(batch())
            headers = operator_headers | YAML
            return http.post(f"{URL}/import", content=text, headers=headers).status_code

        with ThreadPoolExecutor(8) as pool:
            statuses = Counter(pool.map(attempt, range(8)))
    assert statuses == {201: 1, 409: 7}
    stored = client.get(URL, params={"prefix": prefix}, headers=operator_headers).json()
    assert stored["count"] == 1


def test_abc_memories_count_the_rows_before(
    client: TestClient, operator_headers: Headers, links: list[dict[str, Any]]
) -> None:
    """A switch has decay rows for 16 distinct memories: the 17th distinct one among the
    rows is refused, naming its row; a memory a row before it uses fits."""
    rows = [
        slice_body([links[0]["id"]], scheme="abc", abc={"meter_memory_s": 0.01 * (1 + n)})
        for n in range(17)
    ]
    rows.append(slice_body([links[0]["id"]], scheme="abc", abc={"meter_memory_s": 0.01}))
    response = _import(client, operator_headers, yaml.safe_dump(rows), YAML)
    assert _row_errors(response, 409) == [(17, "abc.meter_memory_s")]
    response = _import(client, operator_headers, yaml.safe_dump(rows[:16] + rows[17:]), YAML)
    assert response.status_code == 201, response.text
