"""HTTP around the operations: the `Allow` header of a 405 on every path of the OpenAPI document,
the cap on request bodies (declared or chunked, over a real server), and credentials that are
garbage."""

from __future__ import annotations

import re
import socket

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from sliceportal.api.main import create_app
from sliceportal.core.config import Settings
from utils.factories import whitespace_chunks
from utils.server import running_server

Headers = dict[str, str]


def template(path: str) -> re.Pattern[str]:
    return re.compile("^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(path)) + "$")


def test_a_405_allows_every_method_the_document_gives_its_path(
    app: FastAPI, client: TestClient
) -> None:
    """`OPTIONS` (which no operation takes) on each path of the document: 405, and `Allow`
    names the path's operations; a literal path a template also matches (`/users/me`,
    `/users/{user_id}`) takes the template's methods too, as the router routes them. (Before,
    `Allow` named the first route's methods only: `OPTIONS /slices` allowed GET, not POST.)"""
    paths: dict[str, set[str]] = {
        path: {method.upper() for method in operations}
        for path, operations in app.openapi()["paths"].items()
    }
    for path in paths:
        concrete = re.sub(r"\{[^}]+\}", "7", path)
        expected = set().union(
            *(methods for other, methods in paths.items() if template(other).match(concrete))
        )
        answer = client.options(concrete)
        assert answer.status_code == 405, (path, answer.text)
        assert answer.headers["content-type"] == "application/problem+json"
        allowed = set(answer.headers["allow"].split(", "))
        assert allowed == expected, path
    assert paths["/api/v1/slices"] == {"GET", "POST"}
    assert client.options("/api/v1/users/me").headers["allow"] == "GET, PATCH, DELETE"


def declared_only(base: str, path: str, length: int, headers: Headers) -> tuple[str, str]:
    """POST with `Content-Length: length` and no body yet: the answer's head and body."""
    url = httpx.URL(base)
    with socket.create_connection((url.host, url.port), timeout=10) as sock:
        lines = [f"POST {path} HTTP/1.1", f"Host: {url.host}", f"Content-Length: {length}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        answer = b""
        while chunk := sock.recv(65536):  # the server closes after its answer
            answer += chunk
    head, _, body = answer.decode().partition("\r\n\r\n")
    return head, body


def assert_too_large(response: httpx.Response, limit: int) -> None:
    assert response.status_code == 413, response.text
    assert response.headers["content-type"] == "application/problem+json"
    problem = response.json()
    assert problem["type"].endswith("/content-too-large")
    assert f"larger than {limit} bytes" in problem["detail"]


def test_request_bodies_over_the_cap_are_refused_declared_or_chunked(
    settings: Settings, client: TestClient, viewer_headers: Headers
) -> None:
    """By default (2 MiB) a 10 MB body is refused (before, it was read and parsed); over a
    real server with a cap of 64 KiB, a body that declares its length is refused before it is
    read, a chunked one as soon as the bytes read pass the cap, and one within the cap is
    parsed as usual."""
    ten_mb = b"[" + b" " * 10_000_000 + b"]"
    assert_too_large(
        client.post("/api/v1/analysis/bounds", content=ten_mb, headers=viewer_headers),
        2 * 1024 * 1024,
    )
    cap = 64 * 1024
    app = create_app(settings.model_copy(update={"api_max_body_bytes": cap}))
    json = viewer_headers | {"Content-Type": "application/json"}
    with running_server(app) as base, httpx.Client(base_url=base, headers=json) as http:
        head, body = declared_only(base, "/api/v1/analysis/bounds", 10_000_000, json)
        assert head.startswith("HTTP/1.1 413 ")  # though no byte of the body was sent
        assert "content-type: application/problem+json" in head.lower()
        assert f"larger than {cap} bytes" in body
        chunked = http.post("/api/v1/analysis/bounds", content=whitespace_chunks(10_000_000))
        assert "content-length" not in chunked.request.headers
        assert_too_large(chunked, cap)
        within = http.post("/api/v1/analysis/bounds", content=whitespace_chunks(cap - 2))
        assert within.status_code == 422, within.text  # parsed: whitespace is no document
        assert http.get("/api/v1/switches").status_code == 200


@pytest.mark.parametrize(
    ("path", "headers"),
    [
        ("/api/v1/switches", {"Cookie": b"sliceportal_session=\xff\xfe"}),
        ("/api/v1/switches", {"Authorization": b"Bearer \xff\xfe"}),
        ("/api/v1/switches", {"Authorization": b"Bearer sp_" + b"\xff" * 40}),
        ("/api/v1/switches", {"Authorization": "Bearer sp_" + "\x00" * 40}),
        ("/api/v1/stream?token=garbage", {}),
        ("/api/v1/stream?token=%FF%FE", {}),
        ("/api/v1/stream?token=a.b.c", {}),
    ],
)
def test_malformed_credentials_are_a_401_problem(
    client: TestClient, path: str, headers: dict[str, str | bytes]
) -> None:
    """A cookie, bearer token or stream ticket that is garbage, or not even UTF-8, is refused
    as any wrong credential is, never a 500."""
    response = client.get(path, headers=headers)
    assert response.status_code == 401, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["type"].endswith("/unauthorized")
    assert "expired" in response.json()["detail"]  # read and refused, not found missing


def test_an_access_token_is_no_stream_ticket(client: TestClient, viewer_headers: Headers) -> None:
    """`?token=` takes the short-lived stream tickets only, not the login's access token."""
    access_token = viewer_headers["Authorization"].removeprefix("Bearer ")
    response = client.get("/api/v1/stream", params={"token": access_token})
    assert response.status_code == 401, response.text
    assert "stream ticket" in response.json()["detail"]
