from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from sliceportal.core.config import Settings
from utils.factories import create, link_body, switch_body, unique

URL = "/api/v1/switches"


@pytest.fixture(scope="module")
def tls_dir(settings: Settings) -> Path:
    """The test portal's TLS directory, with a CA certificate and its private key."""
    where = settings.tls_directories()[0]
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
         "-nodes", "-days", "2", "-subj", "/CN=ca", "-keyout", "ca.key", "-out", "ca.pem"],
        cwd=where, check=True, capture_output=True,
    )  # fmt: skip
    return where


def test_create_switch(client: TestClient, operator_headers: dict[str, str], tls_dir: Path) -> None:
    body = switch_body(device_id=3, tls_ca_path=str(tls_dir / "ca.pem"))
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
    client: TestClient, operator_headers: dict[str, str], tls_dir: Path
) -> None:
    created = create(client, "switches", operator_headers, switch_body())
    response = client.patch(
        f"{URL}/{created['id']}",
        json={"tls_cert_path": str(tls_dir / "ca.pem")},
        headers=operator_headers,
    )
    assert response.status_code == 422
    assert response.json()["field"] == "body.tls_key_path"


def test_create_switch_with_mutual_tls_files(
    client: TestClient, operator_headers: dict[str, str], tls_dir: Path
) -> None:
    paths = {
        "tls_ca_path": str(tls_dir / "ca.pem"),
        "tls_cert_path": str(tls_dir / "ca.pem"),
        "tls_key_path": str(tls_dir / "ca.key"),
    }
    response = client.post(URL, json=switch_body(**paths), headers=operator_headers)
    assert response.status_code == 201, response.text
    assert {field: response.json()[field] for field in paths} == paths


def _outside_copy(tls_dir: Path, outside: Path) -> Path:
    """A valid CA certificate, but outside the TLS directory."""
    return Path(shutil.copy(tls_dir / "ca.pem", outside / "ca.pem"))


def _escaping_link(tls_dir: Path, outside: Path) -> Path:
    link = tls_dir / f"{unique('escape')}.pem"
    link.symlink_to(_outside_copy(tls_dir, outside))
    return link


def _not_pem(tls_dir: Path, outside: Path) -> Path:
    notes = tls_dir / "notes.txt"
    notes.write_text("not a certificate\n")
    return notes


def _a_directory(tls_dir: Path, outside: Path) -> Path:
    (tls_dir / "sub").mkdir(exist_ok=True)
    return tls_dir / "sub"


@pytest.mark.parametrize(
    ("place", "why"),
    [
        (lambda tls_dir, outside: Path("/etc/shadow"), "is not inside the TLS directories"),
        (_outside_copy, "is not inside the TLS directories"),
        (_escaping_link, "is not inside the TLS directories"),
        (lambda tls_dir, outside: tls_dir / ".." / "ca.pem", "is not inside the TLS directories"),
        (lambda tls_dir, outside: Path("ca.pem"), "is not an absolute path"),
        (lambda tls_dir, outside: tls_dir / "missing.pem", "does not exist"),
        (_a_directory, "is not a regular file"),
        (_not_pem, "does not hold a PEM certificate"),
        (lambda tls_dir, outside: tls_dir / "ca.key", "does not hold a PEM certificate"),
    ],
    ids=[
        "etc-shadow", "outside", "symlink-out", "dot-dot", "relative", "missing", "directory",
        "not-pem", "key-as-ca",
    ],
)  # fmt: skip
def test_a_tls_file_the_portal_may_not_read_is_refused(
    client: TestClient,
    operator_headers: dict[str, str],
    tls_dir: Path,
    tmp_path: Path,
    place: Callable[[Path, Path], Path],
    why: str,
) -> None:
    path = str(place(tls_dir, tmp_path))
    created = client.post(URL, json=switch_body(tls_ca_path=path), headers=operator_headers)
    assert created.status_code == 422, created.text
    assert created.headers["content-type"] == "application/problem+json"
    assert created.json()["field"] == "body.tls_ca_path"
    assert created.json()["detail"].startswith(f"tls_ca_path: {path} {why}")
    switch = create(client, "switches", operator_headers, switch_body())
    changed = client.patch(
        f"{URL}/{switch['id']}", json={"tls_ca_path": path}, headers=operator_headers
    )
    assert changed.status_code == 422 and changed.json()["field"] == "body.tls_ca_path"


def test_a_certificate_is_not_a_private_key(
    client: TestClient, operator_headers: dict[str, str], tls_dir: Path
) -> None:
    body = switch_body(tls_cert_path=str(tls_dir / "ca.pem"), tls_key_path=str(tls_dir / "ca.pem"))
    response = client.post(URL, json=body, headers=operator_headers)
    assert response.status_code == 422
    assert response.json()["field"] == "body.tls_key_path"
    assert "does not hold a PEM private key" in response.json()["detail"]


@pytest.mark.parametrize(
    "address",
    [
        "8.8.8.8:9559",
        "169.254.169.254:80",
        "switch.example.com:9559",
        "2130706433:9559",
        "[2001:db8::1]:9559",
        "[::ffff:8.8.8.8]:9559",
    ],
)
def test_a_switch_outside_the_allowed_networks_is_refused(
    client: TestClient, operator_headers: dict[str, str], address: str
) -> None:
    created = client.post(URL, json=switch_body(address=address), headers=operator_headers)
    assert created.status_code == 422, created.text
    assert created.json()["field"] == "body.address"
    assert "SLICEPORTAL_SWITCH_NETWORKS" in created.json()["detail"]
    switch = create(client, "switches", operator_headers, switch_body())
    moved = client.patch(
        f"{URL}/{switch['id']}", json={"address": address}, headers=operator_headers
    )
    assert moved.status_code == 422 and moved.json()["field"] == "body.address"


@pytest.mark.parametrize(
    "address", ["10.20.30.40:9559", "172.16.0.9:9559", "192.168.1.1:50051", "localhost:9560"]
)
def test_a_switch_in_the_allowed_networks_is_accepted(
    client: TestClient, operator_headers: dict[str, str], address: str
) -> None:
    response = client.post(URL, json=switch_body(address=address), headers=operator_headers)
    assert response.status_code == 201, response.text
