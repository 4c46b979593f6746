from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from fastapi.testclient import TestClient
from httpx import Response
from sqlalchemy import text
from sqlalchemy.orm import Session, sessionmaker

from api.problems import assert_refused
from sliceportal.db.models import MAX_DP_SID
from utils.factories import MBIT, create, create_link, link_body, slice_body, switch_body, unique

URL = "/api/v1/slices"
Headers = dict[str, str]


@pytest.fixture
def link(client: TestClient, operator_headers: Headers) -> dict[str, Any]:
    return create_link(client, operator_headers)


def test_create_slice(client: TestClient, operator_headers: Headers, link: dict[str, Any]) -> None:
    body = slice_body(
        [link["id"]],
        vlan_id=100,
        ipv4_prefixes=["10.2.0.0/16", "10.1.0.0/16", "192.0.2.7"],
        scheme="ecn_step",
        marking_threshold_s=0.005,
        sla={"max_delay_s": 0.01, "max_loss_ratio": 0.001},
    )
    response = client.post(URL, json=body, headers=operator_headers)
    assert response.status_code == 201, response.text
    created = response.json()
    assert created["state"] == "pending"
    assert created["ipv4_prefixes"] == ["10.1.0.0/16", "10.2.0.0/16", "192.0.2.7/32"]
    assert created["delay_target_s"] == 0.01
    assert created["burst_bytes"] == pytest.approx(10 * MBIT * 0.01 / 8)
    assert created["link_ids"] == [link["id"]]
    assert created["dp_sids"] == [{"switch_id": link["switch_id"], "dp_sid": 1}]
    assert created["sla"] == {
        "max_delay_s": 0.01,
        "min_throughput_bps": None,
        "max_loss_ratio": 0.001,
        "max_mark_ratio": None,
    }


def test_create_slice_burst_bytes(
    client: TestClient, operator_headers: Headers, link: dict[str, Any]
) -> None:
    body = slice_body([link["id"]], burst_bytes=25_000, delay_target_s=0.05)
    del body["burst_limit_s"]
    created = create(client, "slices", operator_headers, body)
    assert created["burst_limit_s"] == pytest.approx(25_000 * 8 / (10 * MBIT))
    assert created["delay_target_s"] == 0.05


def test_burst_bytes_with_a_burst_limit_that_agrees(
    client: TestClient, operator_headers: Headers, link: dict[str, Any]
) -> None:
    """10 Mbit/s for 10 ms is 12,500 bytes: giving both is fine when they say the same."""
    body = slice_body([link["id"]], burst_limit_s=0.01, burst_bytes=12_500)
    created = create(client, "slices", operator_headers, body)
    assert (created["burst_limit_s"], created["burst_bytes"]) == (0.01, 12_500)


def assert_burst_conflict(response: Response) -> None:
    """422 naming both fields: neither is wrong alone."""
    assert response.status_code == 422, response.text
    problem = response.json()
    assert problem["type"].endswith("/validation-error")
    assert problem["field"] == "body.burst_bytes"
    assert [error["field"] for error in problem["errors"]] == [
        "body.burst_bytes",
        "body.burst_limit_s",
    ]
    assert "burst_bytes" in problem["detail"] and "burst_limit_s" in problem["detail"]


def test_burst_bytes_that_disagree_with_the_burst_limit(
    client: TestClient, operator_headers: Headers, link: dict[str, Any]
) -> None:
    body = slice_body([link["id"]], burst_limit_s=0.01, burst_bytes=25_000)
    assert_burst_conflict(client.post(URL, json=body, headers=operator_headers))
    created = create(client, "slices", operator_headers, slice_body([link["id"]]))
    response = client.patch(
        f"{URL}/{created['id']}",
        json={"burst_limit_s": 0.02, "burst_bytes": 12_500},
        headers=operator_headers,
    )
    assert_burst_conflict(response)
    agreeing = client.patch(
        f"{URL}/{created['id']}",
        json={"rate_bps": 5 * MBIT, "burst_limit_s": 0.02, "burst_bytes": 12_500},
        headers=operator_headers,
    )
    assert agreeing.status_code == 200, agreeing.text
    assert agreeing.json()["burst_limit_s"] == 0.02


def test_create_slice_dp_sids_lowest_free(
    client: TestClient, operator_headers: Headers, link: dict[str, Any]
) -> None:
    ids = [
        create(client, "slices", operator_headers, slice_body([link["id"]]))["id"] for _ in range(3)
    ]
    client.delete(f"{URL}/{ids[1]}", headers=operator_headers)
    again = create(client, "slices", operator_headers, slice_body([link["id"]]))
    assert again["dp_sids"][0]["dp_sid"] == 2
    fourth = create(client, "slices", operator_headers, slice_body([link["id"]]))
    assert fourth["dp_sids"][0]["dp_sid"] == 4


def test_create_slice_dp_sid_taken(
    client: TestClient, operator_headers: Headers, link: dict[str, Any]
) -> None:
    """Refused by the statement that writes the links with the commit: nothing is left."""
    create(client, "slices", operator_headers, slice_body([link["id"]], dp_sid=42))
    body = slice_body([link["id"]], dp_sid=42)
    request_id = unique("req")
    response = client.post(URL, json=body, headers=operator_headers | {"X-Request-ID": request_id})
    assert response.status_code == 409
    assert response.json()["field"] == "body.dp_sid"
    assert "DP_SID 42 is taken on switch" in response.json()["detail"]
    assert_nothing_left(client, operator_headers, body["name"], request_id)


def assert_nothing_left(client: TestClient, headers: Headers, name: str, request_id: str) -> None:
    """No slice of that name, and no change-log entry of the refused request."""
    found = client.get(URL, params={"q": name}, headers=headers).json()
    assert [s["name"] for s in found["data"] if s["name"] == name] == []
    logged = client.get("/api/v1/changes", params={"request_id": request_id}, headers=headers)
    assert logged.json()["data"] == []


def test_create_slice_across_switches(client: TestClient, operator_headers: Headers) -> None:
    """Two links of one switch share the slice's DP_SID there; a bare VLAN slice, since one
    listing prefixes would need their routes out of both ports (test_match_clash.py)."""
    first, second = create_link(client, operator_headers), create_link(client, operator_headers)
    switch = first["switch_id"]
    same_switch = create(client, "links", operator_headers, link_body(switch, port=510))
    created = create(
        client,
        "slices",
        operator_headers,
        slice_body([first["id"], second["id"], same_switch["id"]], vlan_id=41, ipv4_prefixes=[]),
    )
    assert sorted(created["link_ids"]) == sorted([first["id"], second["id"], same_switch["id"]])
    assert {d["switch_id"] for d in created["dp_sids"]} == {switch, second["switch_id"]}


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"rate_bps": -1}, "body.rate_bps"),
        ({"priority": 9}, "body.priority"),
        ({"priority": 0}, "body.priority"),  # best effort's
        ({"ipv4_prefixes": ["10.0.0.0/33"]}, "body.ipv4_prefixes.0"),
        ({"ipv4_prefixes": ["10.0.0.1/24"]}, "body.ipv4_prefixes.0"),
        ({"vlan_id": 5000}, "body.vlan_id"),
        ({"scheme": "ecn_step"}, "body.marking_threshold_s"),
        ({"scheme": "ecn_step", "marking_threshold_s": 0.5}, "body.marking_threshold_s"),
        ({"marking_threshold_s": 0.001}, "body.marking_threshold_s"),
        ({"codel": {}}, "body.codel"),  # tail_drop runs no CoDel
        ({"scheme": "codel", "codel": {"target_s": 0.01}}, "body.codel.target_s"),  # burst
        (
            {"scheme": "codel", "burst_limit_s": 0.02, "delay_target_s": 0.008}
            | {"codel": {"target_s": 0.009}},
            "body.codel.target_s",
        ),
        ({"scheme": "codel", "codel": {"interval_s": 0.0005}}, "body.codel.interval_s"),
        ({"scheme": "codel", "codel": {"ecn_mark": "yes"}}, "body.codel.ecn_mark"),
        ({"scheme": "codel", "codel": {"target": 0.001}}, "body.codel.target"),
        ({"abc": {}}, "body.abc"),  # tail_drop runs no ABC
        ({"scheme": "codel", "abc": {}}, "body.abc"),
        ({"scheme": "abc", "abc": {"q_base_s": 0.02}}, "body.abc.q_base_s"),  # burst 10 ms
        ({"scheme": "abc", "abc": {"q_min_s": 0.011}}, "body.abc.q_min_s"),
        ({"scheme": "abc", "abc": {"q_min_s": 0.005, "q_base_s": 0.004}}, "body.abc.q_base_s"),
        ({"scheme": "abc", "abc": {"gamma_s": -0.001}}, "body.abc.gamma_s"),
        ({"scheme": "abc", "abc": {"gamma_s": 5}}, "body.abc.gamma_s"),
        ({"scheme": "abc", "abc": {"meter_memory_s": 0}}, "body.abc.meter_memory_s"),
        ({"scheme": "abc", "abc": {"meter_memory_s": None}}, "body.abc.meter_memory_s"),
        ({"scheme": "abc", "abc": {"average_memory_s": 11}}, "body.abc.average_memory_s"),
        ({"scheme": "abc", "abc": {"reference_rate_bps": 0.5}}, "body.abc.reference_rate_bps"),
        ({"scheme": "abc", "abc": {"key": "destination"}}, "body.abc.key"),
        ({"scheme": "abc", "abc": {"key": "source_prefix"}}, "body.abc.prefix_length"),
        ({"scheme": "abc", "abc": {"prefix_length": 24}}, "body.abc.prefix_length"),
        (
            {"scheme": "abc", "abc": {"key": "source_prefix", "prefix_length": 33}},
            "body.abc.prefix_length",
        ),
        ({"scheme": "abc", "abc": {"prefix_length": 32.0}}, "body.abc.prefix_length"),
        ({"scheme": "abc", "abc": {"q_min_s": "1ms"}}, "body.abc.q_min_s"),
        ({"scheme": "abc", "abc": {"memory_s": 1.0}}, "body.abc.memory_s"),
        ({"scheme": "abc", "abc": []}, "body.abc"),
        ({"link_ids": [999999999]}, "body.link_ids"),
        ({"link_ids": []}, "body.link_ids"),
        ({"ipv4_prefixes": []}, "body.vlan_id"),
        ({"burst_limit_s": None}, "body.burst_limit_s"),
        ({"burst_bytes": 1000}, "body.burst_bytes"),
        ({"rate_bps": "fast"}, "body.rate_bps"),
        ({"color": "blue"}, "body.color"),
        ({"name": ""}, "body.name"),
    ],
)
def test_create_slice_invalid(
    client: TestClient,
    operator_headers: Headers,
    link: dict[str, Any],
    overrides: dict[str, Any],
    field: str,
) -> None:
    response = client.post(
        URL, json=slice_body([link["id"]], **overrides), headers=operator_headers
    )
    assert_refused(response, field)


def test_create_slice_not_json(client: TestClient, operator_headers: Headers) -> None:
    response = client.post(
        URL, content=b"{nope", headers=operator_headers | {"Content-Type": "application/json"}
    )
    assert response.status_code == 422
    assert response.json()["field"].startswith("body")


def test_read_slice_not_found(client: TestClient, viewer_headers: Headers) -> None:
    response = client.get(f"{URL}/999999999", headers=viewer_headers)
    assert response.status_code == 404
    assert response.json()["title"] == "Not found"


def test_read_slices_filters(client: TestClient, operator_headers: Headers) -> None:
    link, other = create_link(client, operator_headers), create_link(client, operator_headers)
    tag = unique("flt")
    a = create(
        client,
        "slices",
        operator_headers,
        slice_body([link["id"]], name=f"{tag}-a", priority=5, vlan_id=7),
    )
    b = create(
        client,
        "slices",
        operator_headers,
        slice_body([other["id"]], name=f"{tag}-b", ipv4_prefixes=["10.9.0.0/16"]),
    )

    def names(**params: Any) -> list[str]:
        response = client.get(URL, params={"q": tag, **params}, headers=operator_headers)
        assert response.status_code == 200, response.text
        return [s["name"] for s in response.json()["data"]]

    assert names() == [a["name"], b["name"]]
    assert names(link_id=link["id"]) == [a["name"]]
    assert names(switch_id=other["switch_id"]) == [b["name"]]
    assert names(priority=5) == [a["name"]]
    assert names(vlan_id=7) == [a["name"]]
    assert names(prefix="10.9.0.0/16") == [b["name"]]
    assert names(state="active") == []
    assert names(limit=1, skip=1) == [b["name"]]


def test_update_slice(client: TestClient, operator_headers: Headers, link: dict[str, Any]) -> None:
    created = create(client, "slices", operator_headers, slice_body([link["id"]], vlan_id=10))
    response = client.patch(
        f"{URL}/{created['id']}",
        json={"rate_bps": 20 * MBIT, "vlan_id": None, "sla": {"min_throughput_bps": 1e6}},
        headers=operator_headers,
    )
    assert response.status_code == 200, response.text
    updated = response.json()
    assert updated["rate_bps"] == 20 * MBIT
    assert updated["vlan_id"] is None
    assert updated["sla"]["min_throughput_bps"] == 1e6
    assert updated["burst_limit_s"] == created["burst_limit_s"]
    assert updated["dp_sids"] == created["dp_sids"]


def test_update_slice_to_tail_drop_clears_threshold(
    client: TestClient, operator_headers: Headers, link: dict[str, Any]
) -> None:
    created = create(
        client,
        "slices",
        operator_headers,
        slice_body([link["id"]], scheme="ecn_step", marking_threshold_s=0.002),
    )
    response = client.patch(
        f"{URL}/{created['id']}", json={"scheme": "tail_drop"}, headers=operator_headers
    )
    assert response.status_code == 200, response.text
    assert response.json()["marking_threshold_s"] is None


def test_create_codel_slice_reads_back_its_parameters(
    client: TestClient, operator_headers: Headers, link: dict[str, Any]
) -> None:
    defaults = create(client, "slices", operator_headers, slice_body([link["id"]], scheme="codel"))
    assert defaults["scheme"] == "codel"
    assert defaults["codel"] == {"target_s": 0.005, "interval_s": 0.1, "ecn_mark": False}
    given = {"target_s": 0.002, "interval_s": 0.05, "ecn_mark": True}
    created = create(
        client, "slices", operator_headers, slice_body([link["id"]], scheme="codel", codel=given)
    )
    read = client.get(f"{URL}/{created['id']}", headers=operator_headers).json()
    assert read["codel"] == given
    assert read["marking_threshold_s"] is None
    assert create(client, "slices", operator_headers, slice_body([link["id"]]))["codel"] is None


def test_update_slice_scheme_to_codel_and_back(
    client: TestClient, operator_headers: Headers, link: dict[str, Any]
) -> None:
    """Becoming codel takes the defaults, changing them replaces the object, leaving codel
    clears them; a change that would leave the target at or above the burst limit is refused."""
    created = create(client, "slices", operator_headers, slice_body([link["id"]]))
    url = f"{URL}/{created['id']}"

    def patch(body: dict[str, Any]) -> Response:
        return client.patch(url, json=body, headers=operator_headers)

    became = patch({"scheme": "codel"})
    assert became.status_code == 200, became.text
    assert became.json()["codel"] == {"target_s": 0.005, "interval_s": 0.1, "ecn_mark": False}
    changed = patch({"codel": {"target_s": 0.003, "ecn_mark": True}})
    assert changed.status_code == 200, changed.text
    assert changed.json()["codel"] == {"target_s": 0.003, "interval_s": 0.1, "ecn_mark": True}
    assert_refused(patch({"burst_limit_s": 0.003}), "body.codel.target_s")
    assert_refused(patch({"codel": None}), "body.codel")
    assert_refused(patch({"scheme": "tail_drop", "codel": {}}), "body.codel")
    left = patch({"scheme": "ecn_step", "marking_threshold_s": 0.002})
    assert left.status_code == 200, left.text
    assert left.json()["codel"] is None
    back = patch({"scheme": "codel"})
    assert back.json()["codel"] == {"target_s": 0.005, "interval_s": 0.1, "ecn_mark": False}
    assert back.json()["marking_threshold_s"] is None
    dropped = patch({"scheme": "tail_drop"})
    assert dropped.status_code == 200, dropped.text
    assert dropped.json()["codel"] is None


PACKET_S = 1500 * 8 / (10 * MBIT)
"""A full-size packet's time at slice_body's rate: the unit of ABC's default thresholds."""
ABC_DEFAULTS = {
    "meter_memory_s": 3.0,
    "average_memory_s": 0.3,
    "reference_rate_bps": 1e4,
    "q_min_s": pytest.approx(6 * PACKET_S),
    "q_base_s": 0.01,  # 20 packets' time (24 ms) capped at the burst limit
    "gamma_s": pytest.approx(16 * PACKET_S),
    "key": "source_address",
    "prefix_length": 32,
}


def test_create_abc_slice_reads_back_its_parameters_resolved(
    client: TestClient, operator_headers: Headers, link: dict[str, Any]
) -> None:
    """Members left out take the paper's defaults at the slice's rate and burst limit, stored
    as they resolve, so a read shows what the switch holds."""
    defaults = create(client, "slices", operator_headers, slice_body([link["id"]], scheme="abc"))
    assert defaults["scheme"] == "abc"
    assert defaults["abc"] == ABC_DEFAULTS
    assert (defaults["codel"], defaults["marking_threshold_s"]) == (None, None)
    given = {"meter_memory_s": 1.0, "q_base_s": 0.004, "key": "source_prefix", "prefix_length": 24}
    created = create(
        client, "slices", operator_headers, slice_body([link["id"]], scheme="abc", abc=given)
    )
    read = client.get(f"{URL}/{created['id']}", headers=operator_headers).json()
    # q_min_s defaults to at most the q_base_s given; the rest as given or defaulted
    assert read["abc"] == ABC_DEFAULTS | given | {"q_min_s": 0.004}
    whole = {
        "meter_memory_s": 0.5,
        "average_memory_s": 0.05,
        "reference_rate_bps": 1e6,
        "q_min_s": 0.001,
        "q_base_s": 0.008,
        "gamma_s": 0.002,
        "key": "source_address",
        "prefix_length": 32,
    }
    created = create(
        client, "slices", operator_headers, slice_body([link["id"]], scheme="abc", abc=whole)
    )
    assert created["abc"] == whole
    assert create(client, "slices", operator_headers, slice_body([link["id"]]))["abc"] is None


def test_update_slice_scheme_to_abc_and_back(
    client: TestClient, operator_headers: Headers, link: dict[str, Any]
) -> None:
    """Becoming abc takes the defaults, `abc` replaces the object (resolved at the slice's
    rate), an abc slice keeps its values when its rate changes, a burst limit below its
    q_base_s is refused naming it, and leaving abc clears them."""
    created = create(client, "slices", operator_headers, slice_body([link["id"]]))
    url = f"{URL}/{created['id']}"

    def patch(body: dict[str, Any]) -> Response:
        return client.patch(url, json=body, headers=operator_headers)

    became = patch({"scheme": "abc"})
    assert became.status_code == 200, became.text
    assert became.json()["abc"] == ABC_DEFAULTS
    changed = patch({"abc": {"average_memory_s": 0.1}})
    assert changed.status_code == 200, changed.text
    assert changed.json()["abc"] == ABC_DEFAULTS | {"average_memory_s": 0.1}
    faster = patch({"rate_bps": 20 * MBIT})
    assert faster.status_code == 200, faster.text
    assert faster.json()["abc"] == changed.json()["abc"]  # stored: the switch's values
    again = patch({"abc": {}})  # the defaults at the new rate: half the packet time
    assert again.json()["abc"]["q_min_s"] == pytest.approx(3 * PACKET_S)
    assert again.json()["abc"]["gamma_s"] == pytest.approx(8 * PACKET_S)
    assert_refused(patch({"burst_limit_s": 0.005}), "body.abc.q_base_s")
    assert_refused(patch({"abc": None}), "body.abc")
    assert_refused(patch({"abc": {"q_base_s": 0.02}}), "body.abc.q_base_s")
    assert_refused(patch({"scheme": "tail_drop", "abc": {}}), "body.abc")
    left = patch({"scheme": "codel"})
    assert left.status_code == 200, left.text
    assert (left.json()["abc"], left.json()["codel"]["target_s"]) == (None, 0.005)
    back = patch({"scheme": "abc", "abc": {"key": "source_prefix", "prefix_length": 16}})
    assert back.status_code == 200, back.text
    assert back.json()["codel"] is None
    assert back.json()["abc"]["prefix_length"] == 16
    dropped = patch({"scheme": "tail_drop"})
    assert dropped.status_code == 200, dropped.text
    assert dropped.json()["abc"] is None


def test_a_switch_refuses_a_17th_abc_memory(
    client: TestClient, operator_headers: Headers, link: dict[str, Any]
) -> None:
    """A switch's decay tables hold rows for 16 meter memories and 16 average memories:
    the abc slice that would bring a 17th to a switch it crosses is refused (409 naming the
    field); a memory the switch's abc slices use, another switch, and other schemes are not."""

    def abc_slice(links: list[int], **abc: Any) -> Response:
        body = slice_body(links, scheme="abc", rate_bps=MBIT, burst_limit_s=0.05, abc=abc)
        return client.post(URL, json=body, headers=operator_headers)

    def assert_conflict(response: Response, field: str) -> None:
        assert response.status_code == 409, response.text
        assert response.headers["content-type"] == "application/problem+json"
        assert response.json()["field"] == field
        assert "16 distinct" in response.json()["detail"]

    memories = [round(1.0 + i / 10, 1) for i in range(16)]
    for i, memory in enumerate(memories):
        made = abc_slice([link["id"]], meter_memory_s=memory, average_memory_s=0.01 + i / 100)
        assert made.status_code == 201, made.text
    new_meter = abc_slice([link["id"]], meter_memory_s=9.0)
    assert_conflict(new_meter, "body.abc.meter_memory_s")
    assert "1, 1.1, 1.2" in new_meter.json()["detail"]
    new_average = abc_slice([link["id"]], meter_memory_s=1.0, average_memory_s=0.9)
    assert_conflict(new_average, "body.abc.average_memory_s")
    assert abc_slice([link["id"]], meter_memory_s=1.5, average_memory_s=0.02).status_code == 201
    other = create_link(client, operator_headers)
    elsewhere = abc_slice([other["id"]], meter_memory_s=9.0, average_memory_s=0.9)
    assert elsewhere.status_code == 201, elsewhere.text
    plain = create(client, "slices", operator_headers, slice_body([link["id"]]))

    def patch(slice_id: int, body: dict[str, Any]) -> Response:
        return client.patch(f"{URL}/{slice_id}", json=body, headers=operator_headers)

    moved = patch(elsewhere.json()["id"], {"link_ids": [link["id"]]})
    assert_conflict(moved, "body.abc.meter_memory_s")
    assert_conflict(patch(plain["id"], {"scheme": "abc"}), "body.abc.meter_memory_s")
    reused = patch(plain["id"], {"scheme": "abc", "abc": {"meter_memory_s": 1.0}})
    assert_conflict(reused, "body.abc.average_memory_s")
    fits = patch(
        plain["id"], {"scheme": "abc", "abc": {"meter_memory_s": 1.0, "average_memory_s": 0.01}}
    )
    assert fits.status_code == 200, fits.text
    # The slice's own memories do not count against it: it may change them to another pair
    # as long as what the switch then holds fits.
    first = client.get(URL, params={"link_id": link["id"]}, headers=operator_headers).json()
    lone = next(s for s in first["data"] if s["abc"] and s["abc"]["meter_memory_s"] == 2.5)
    assert patch(lone["id"], {"abc": {"meter_memory_s": 9.0}}).status_code == 200


def test_update_slice_needs_a_match(
    client: TestClient, operator_headers: Headers, link: dict[str, Any]
) -> None:
    created = create(client, "slices", operator_headers, slice_body([link["id"]]))
    response = client.patch(
        f"{URL}/{created['id']}", json={"ipv4_prefixes": []}, headers=operator_headers
    )
    assert response.status_code == 422
    assert response.json()["field"] == "body.vlan_id"


def test_update_slice_links(client: TestClient, operator_headers: Headers) -> None:
    first, second = create_link(client, operator_headers), create_link(client, operator_headers)
    created = create(client, "slices", operator_headers, slice_body([first["id"]]))
    response = client.patch(
        f"{URL}/{created['id']}", json={"link_ids": [second["id"]]}, headers=operator_headers
    )
    assert response.status_code == 200, response.text
    updated = response.json()
    assert updated["link_ids"] == [second["id"]]
    assert [d["switch_id"] for d in updated["dp_sids"]] == [second["switch_id"]]
    empty = client.get(f"/api/v1/links/{first['id']}/analysis", headers=operator_headers)
    assert empty.json()["slices"] == []


def test_update_slice_not_found(client: TestClient, operator_headers: Headers) -> None:
    response = client.patch(f"{URL}/999999999", json={"rate_bps": MBIT}, headers=operator_headers)
    assert response.status_code == 404


def test_delete_slice(client: TestClient, operator_headers: Headers, link: dict[str, Any]) -> None:
    created = create(client, "slices", operator_headers, slice_body([link["id"]]))
    assert client.delete(f"{URL}/{created['id']}", headers=operator_headers).status_code == 204
    assert client.get(f"{URL}/{created['id']}", headers=operator_headers).status_code == 404
    assert client.delete(f"{URL}/{created['id']}", headers=operator_headers).status_code == 404


def test_delete_link_with_slices(
    client: TestClient, operator_headers: Headers, link: dict[str, Any]
) -> None:
    create(client, "slices", operator_headers, slice_body([link["id"]]))
    response = client.delete(f"/api/v1/links/{link['id']}", headers=operator_headers)
    assert response.status_code == 409


def test_create_slice_duplicate_name(
    client: TestClient, operator_headers: Headers, link: dict[str, Any]
) -> None:
    created = create(client, "slices", operator_headers, slice_body([link["id"]]))
    response = client.post(
        URL, json=slice_body([link["id"]], name=created["name"]), headers=operator_headers
    )
    assert response.status_code == 409
    assert response.json()["field"] == "body.name"
    assert response.json()["detail"] == f"slice name {created['name']!r} is already taken"


def test_switch_body_is_valid(client: TestClient, operator_headers: Headers) -> None:
    """Guards the factories: a default body is accepted as is."""
    create(client, "switches", operator_headers, switch_body())


def test_create_slice_dp_sid_one_freed_is_reused_first(
    client: TestClient, operator_headers: Headers, link: dict[str, Any]
) -> None:
    ids = [
        create(client, "slices", operator_headers, slice_body([link["id"]]))["id"] for _ in range(2)
    ]
    client.delete(f"{URL}/{ids[0]}", headers=operator_headers)
    again = create(client, "slices", operator_headers, slice_body([link["id"]]))
    assert again["dp_sids"][0]["dp_sid"] == 1


@contextmanager
def every_dp_sid_held(db: sessionmaker[Session], switch_id: int) -> Iterator[None]:
    """Every DP_SID of the switch held (rows written directly: 4,095 creations take long), and
    freed afterwards: other tests list every slice of the shared database."""
    prefix = unique("full-")
    with db() as session:
        session.execute(
            text(
                "WITH made AS (INSERT INTO slices (name, vlan_id, rate_bps, burst_limit_s, "
                "delay_target_s, priority) SELECT :prefix || n, 10, 1, 0.01, 0.01, 1 "
                "FROM generate_series(1, :count) AS n RETURNING id), "
                "slas AS (INSERT INTO slice_slas (slice_id) SELECT id FROM made) "
                "INSERT INTO slice_switches (slice_id, switch_id, dp_sid) "
                "SELECT id, :switch, row_number() OVER (ORDER BY id) FROM made"
            ),
            {"prefix": prefix, "count": MAX_DP_SID, "switch": switch_id},
        )
        session.commit()
    try:
        yield
    finally:
        with db() as session:
            session.execute(text("DELETE FROM slices WHERE name LIKE :p"), {"p": prefix + "%"})
            session.commit()


def assert_no_dp_sid_left(
    client: TestClient, headers: Headers, response: Response, switch_id: int
) -> None:
    assert response.status_code == 409
    assert response.json()["field"] == "body.link_ids"
    switch = client.get(f"/api/v1/switches/{switch_id}", headers=headers).json()
    assert response.json()["detail"] == f"switch {switch['name']!r} has no free DP_SID left"


def test_create_slice_no_dp_sid_left(
    client: TestClient,
    operator_headers: Headers,
    link: dict[str, Any],
    db: sessionmaker[Session],
) -> None:
    body = slice_body([link["id"]])
    request_id = unique("req")
    with every_dp_sid_held(db, link["switch_id"]):
        response = client.post(
            URL, json=body, headers=operator_headers | {"X-Request-ID": request_id}
        )
    assert_no_dp_sid_left(client, operator_headers, response, link["switch_id"])
    assert_nothing_left(client, operator_headers, body["name"], request_id)


def test_move_slice_to_a_switch_with_no_dp_sid_left(
    client: TestClient,
    operator_headers: Headers,
    link: dict[str, Any],
    db: sessionmaker[Session],
) -> None:
    """The change is refused and rolled back: the slice stays where it was."""
    created = create(client, "slices", operator_headers, slice_body([link["id"]]))
    other = create_link(client, operator_headers)
    with every_dp_sid_held(db, other["switch_id"]):
        response = client.patch(
            f"{URL}/{created['id']}", json={"link_ids": [other["id"]]}, headers=operator_headers
        )
    assert_no_dp_sid_left(client, operator_headers, response, other["switch_id"])
    kept = client.get(f"{URL}/{created['id']}", headers=operator_headers).json()
    assert kept["link_ids"] == [link["id"]] and kept["dp_sids"] == created["dp_sids"]


def test_reading_a_slice_gives_the_document_its_list_gives(
    client: TestClient, operator_headers: Headers
) -> None:
    """`GET /slices/{id}` is one statement on the event loop (`db.aio`), the list is the ORM:
    the same document for every scheme, SLA, links over two switches and DP_SIDs."""
    first, second = create_link(client, operator_headers), create_link(client, operator_headers)
    bodies = [
        slice_body([first["id"], second["id"]], sla={"max_delay_s": 0.01, "max_mark_ratio": 1}),
        slice_body([first["id"]], scheme="ecn_step", marking_threshold_s=0.005),
        slice_body([second["id"]], scheme="codel", codel={"target_s": 0.002, "ecn_mark": True}),
        slice_body([first["id"]], scheme="abc", abc={"key": "source_prefix", "prefix_length": 24}),
    ]
    ids = [create(client, "slices", operator_headers, body)["id"] for body in bodies]
    listed = client.get(URL, params={"limit": 1000}, headers=operator_headers).json()["data"]
    by_id = {document["id"]: document for document in listed}
    for slice_id in ids:
        read = client.get(f"{URL}/{slice_id}", headers=operator_headers)
        assert read.status_code == 200, read.text
        assert read.json() == by_id[slice_id]
