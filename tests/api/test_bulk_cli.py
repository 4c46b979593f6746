"""`sliceportal import FILE` and `sliceportal export` against a real server."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from fastapi import FastAPI
from fastapi.testclient import TestClient

from sliceportal.cli.main import main
from sliceportal.core.embedded import free_tcp_port
from utils.factories import create_link, slice_body
from utils.server import running_server

Headers = dict[str, str]


@pytest.fixture(scope="module")
def api(app: FastAPI) -> Iterator[str]:
    with running_server(app) as url:
        yield url


@pytest.fixture
def token(monkeypatch: pytest.MonkeyPatch, operator_headers: Headers) -> None:
    monkeypatch.setenv("SLICEPORTAL_TOKEN", operator_headers["Authorization"].split()[1])


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.usefixtures("token")
def test_export_then_import_back(
    api: str,
    client: TestClient,
    operator_headers: Headers,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    link = create_link(client, operator_headers)
    bodies = [slice_body([link["id"]]) for _ in range(2)]
    ids = [
        client.post("/api/v1/slices", json=b, headers=operator_headers).json()["id"] for b in bodies
    ]
    out = tmp_path / "slices.yaml"
    assert main(["export", "--format", "yaml", "--out", str(out), "--api", api]) == 0
    mine = [d for d in yaml.safe_load(out.read_text()) if d["link_ids"] == [link["id"]]]
    assert [d["name"] for d in mine] == [b["name"] for b in bodies]
    for slice_id in ids:
        client.delete(f"/api/v1/slices/{slice_id}", headers=operator_headers)
    mine_file = tmp_path / "mine.yml"
    mine_file.write_text(yaml.safe_dump(mine))
    capsys.readouterr()
    assert main(["import", str(mine_file), "--api", api]) == 0
    answer: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert answer["count"] == 2
    names = [
        client.get(f"/api/v1/slices/{i}", headers=operator_headers).json()["name"]
        for i in answer["ids"]
    ]
    assert names == [b["name"] for b in bodies]

    assert main(["export", "--api", api]) == 0  # CSV on standard output by default
    assert capsys.readouterr().out.startswith("name,description,vlan_id,")


@pytest.mark.usefixtures("token")
def test_a_refused_import_is_one_line_and_status_2(
    api: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("name,rate_bps,burst_limit_s,priority,link_ids,vlan_id\nx,fast,0.01,7,1,5\n")
    assert main(["import", str(bad), "--api", api]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "422" in line and "row 1, rate_bps" in line

    unknown = tmp_path / "slices.txt"
    unknown.write_text("name\n")
    assert main(["import", str(unknown), "--api", api]) == 2
    assert "--format" in _one_line(capsys.readouterr().err)

    assert main(["import", str(tmp_path / "missing.csv"), "--api", api]) == 2
    assert "cannot read" in _one_line(capsys.readouterr().err)

    nowhere = f"http://127.0.0.1:{free_tcp_port()}"
    assert main(["export", "--api", nowhere]) == 2
    assert "cannot reach the API" in _one_line(capsys.readouterr().err)


def test_without_a_token(
    api: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("SLICEPORTAL_TOKEN", raising=False)
    assert main(["export", "--api", api]) == 2
    assert "SLICEPORTAL_TOKEN" in _one_line(capsys.readouterr().err)
    monkeypatch.setenv("SLICEPORTAL_TOKEN", "not-a-token")
    assert main(["export", "--api", api]) == 2
    assert "401" in _one_line(capsys.readouterr().err)


class _NotTheApi(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(b"<html>a web server</html>")

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.usefixtures("token")
def test_an_import_answered_by_something_else_is_one_line_and_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "slices.csv"
    file.write_text("name\n")
    server = HTTPServer(("127.0.0.1", 0), _NotTheApi)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        api = f"http://127.0.0.1:{server.server_port}"
        assert main(["import", str(file), "--api", api]) == 2
    finally:
        server.shutdown()
        server.server_close()
    assert "no JSON" in _one_line(capsys.readouterr().err)
