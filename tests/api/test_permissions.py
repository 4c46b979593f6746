"""The role matrix: every operation of the OpenAPI document × anonymous, viewer, operator and
admin, against a real server. The expected outcome comes from the document itself
(`x-required-role`, taken from each route's dependencies), checked against the table of
docs/api.md, so a route added later is in the matrix by construction and its role is documented
or this fails."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from sliceportal.api.main import API_PREFIX
from sliceportal.api.openapi import ANONYMOUS, ROLE_EXTENSION
from sliceportal.schemas.choices import Role
from utils.server import running_server

Headers = dict[str, str]
Operation = tuple[str, str]
"""(METHOD, path as in the document)"""

DOCS = Path(__file__).resolve().parents[2] / "docs" / "api.md"
MISSING_ID = "999999999"
"""A valid id that names no row: the authorisation is decided before any lookup."""

_ROW = re.compile(r"^\|(?P<operations>[^|]*`[^|]*)\|(?P<role>[^|]+)\|")
_OPERATION = re.compile(r"`(?P<methods>[A-Z]+(?:/[A-Z]+)*) (?P<path>/[^`]*)`")
_PARAMETER = re.compile(r"\{[^}]*\}")


def _shape(path: str) -> str:
    """`/links/{link_id}` and the docs' `/links/{id}` alike."""
    return _PARAMETER.sub("{}", path)


def documented_roles(text: str) -> dict[Operation, str]:
    """The table under "## Endpoints": (METHOD, shaped path) -> role (`—` is anonymous)."""
    section = text.split("\n## Endpoints\n", 1)[1].split("\n## ", 1)[0]
    roles: dict[Operation, str] = {}
    for line in section.splitlines():
        row = _ROW.match(line)
        if row is None:
            continue
        role = row["role"].strip().replace("—", ANONYMOUS)
        for found in _OPERATION.finditer(row["operations"]):
            for method in found["methods"].split("/"):
                key = (method, _shape(API_PREFIX + found["path"]))
                assert key not in roles, f"docs/api.md lists {key} twice"
                roles[key] = role
    return roles


@pytest.fixture(scope="module")
def document(app: FastAPI) -> dict[str, Any]:
    openapi: dict[str, Any] = app.openapi()
    return openapi


def operations(document: dict[str, Any]) -> list[tuple[Operation, dict[str, Any]]]:
    return [
        ((method.upper(), path), operation)
        for path, item in document["paths"].items()
        for method, operation in item.items()
    ]


def test_every_operation_has_its_documented_role(document: dict[str, Any]) -> None:
    documented = documented_roles(DOCS.read_text())
    declared = {
        (method, _shape(path)): operation.get(ROLE_EXTENSION)
        for (method, path), operation in operations(document)
    }
    assert len(declared) >= 46
    assert None not in declared.values(), "operations without x-required-role"
    assert declared == documented, "docs/api.md's table and the OpenAPI document disagree"


@pytest.fixture(scope="module")
def base_url(app: FastAPI) -> Iterator[str]:
    """A real server: the streams answer with a stream, read here only up to the status."""
    with running_server(app) as url:
        yield url


@pytest.fixture(scope="module")
def identities(
    viewer_headers: Headers, operator_headers: Headers, admin_headers: Headers
) -> dict[str, Headers]:
    return {
        ANONYMOUS: {},
        Role.VIEWER.value: viewer_headers,
        Role.OPERATOR.value: operator_headers,
        Role.ADMIN.value: admin_headers,
    }


def _rank(identity: str) -> int:
    return -1 if identity == ANONYMOUS else Role(identity).rank


def expected(required: str, identity: str) -> int | None:
    """401 without a token, 403 below the role, None (anything but those two) otherwise."""
    if _rank(identity) >= _rank(required):
        return None
    return 401 if identity == ANONYMOUS else 403


def status_of(client: httpx.Client, method: str, path: str, headers: Headers) -> int:
    """The answer's status to a call without a body (a body is checked after the role)."""
    with client.stream(method, _PARAMETER.sub(MISSING_ID, path), headers=headers) as response:
        return response.status_code


def test_the_role_matrix(
    document: dict[str, Any], base_url: str, identities: dict[str, Headers]
) -> None:
    calls = 0
    wrong = []
    with httpx.Client(base_url=base_url, timeout=30) as client:
        for (method, path), operation in operations(document):
            required = operation[ROLE_EXTENSION]
            for identity, headers in identities.items():
                status = status_of(client, method, path, headers)
                calls += 1
                want = expected(required, identity)
                if status in {401, 403} if want is None else status != want:
                    wrong.append(f"{method} {path} as {identity}: {status}, expected {want}")
    assert not wrong, "\n".join(wrong)
    assert calls == 4 * len(operations(document))
