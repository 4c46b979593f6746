"""Errors raised by plain SQL on the driver connection (`crud.driver`) reach the handlers
unwrapped by SQLAlchemy; they get the same problem+json as SQLAlchemy's wrapped ones."""

from __future__ import annotations

import psycopg
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from sliceportal.api import problems


def raising(error: Exception) -> TestClient:
    app = FastAPI()
    problems.install(app)

    @app.get("/fail")
    def fail() -> None:
        raise error

    return TestClient(app, raise_server_exceptions=False)


@pytest.mark.parametrize(
    ("error", "status", "kind"),
    [
        (psycopg.errors.UniqueViolation("duplicate key"), 409, "conflict"),
        (psycopg.errors.ForeignKeyViolation("still referenced"), 409, "conflict"),
        (psycopg.errors.CheckViolation("check"), 422, "validation-error"),
        (psycopg.errors.NumericValueOutOfRange("integer out of range"), 422, "validation-error"),
        (psycopg.OperationalError("server closed the connection"), 503, "database-unavailable"),
        (psycopg.InterfaceError("connection is closed"), 503, "database-unavailable"),
    ],
)
def test_driver_errors_are_problems(error: Exception, status: int, kind: str) -> None:
    response = raising(error).get("/fail")
    assert response.status_code == status
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["type"].endswith(f"/{kind}")
    assert "Traceback" not in response.text
