"""`mount_spa`: the built UI at `/`, client routes fall back to index.html, and nothing under
the API or the docs is shadowed. No database: building the app connects to nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from sliceportal.api.main import create_app
from sliceportal.api.spa import mount_spa
from sliceportal.core.config import Settings


@pytest.fixture
def dist(tmp_path: Path) -> Path:
    (tmp_path / "assets").mkdir()
    (tmp_path / "index.html").write_text("<!doctype html><div id=root></div>")
    (tmp_path / "assets" / "index-abc123.js").write_text("console.log(1)")
    (tmp_path / "favicon.svg").write_text("<svg/>")
    (tmp_path.parent / "secret.txt").write_text("not served")
    return tmp_path


@pytest.fixture
def client(dist: Path) -> TestClient:
    app = create_app(Settings(ui_dist_dir=dist))
    mount_spa(app, dist)  # a second call is harmless
    return TestClient(app)


@pytest.mark.parametrize("path", ["/", "/slices/7", "/links/3/", "/users"])
def test_client_routes_get_index_html(client: TestClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 200
    assert "id=root" in response.text
    assert response.headers["cache-control"] == "no-cache"


def test_assets_are_served_and_cached(client: TestClient) -> None:
    response = client.get("/assets/index-abc123.js")
    assert response.status_code == 200
    assert "immutable" in response.headers["cache-control"]
    assert client.get("/favicon.svg").text == "<svg/>"


@pytest.mark.parametrize(
    "path", ["/assets/gone-123.js", "/robots.txt", "/../secret.txt", "/%2e%2e/secret.txt"]
)
def test_missing_files_and_escapes_are_404(client: TestClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 404
    assert "not served" not in response.text


@pytest.mark.parametrize("path", ["/api", "/api/v1/nope", "/docs/nope", "/redoc/x"])
def test_api_and_docs_are_not_shadowed(client: TestClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("application/problem+json")


def test_api_and_docs_still_answer(client: TestClient) -> None:
    assert client.get("/api/v1/health").json() == {"message": "alive"}
    assert client.get("/docs").status_code == 200
    assert client.get("/api/v1/openapi.json").json()["info"]["title"] == "sliceportal"


def test_no_build_serves_the_api_only(tmp_path: Path) -> None:
    app = create_app(Settings(ui_dist_dir=tmp_path / "missing"))
    client = TestClient(app)
    assert client.get("/").status_code == 404
    assert client.get("/api/v1/health").status_code == 200
