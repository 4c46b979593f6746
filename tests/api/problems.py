"""Assertions on the API's problem answers, shared by the API tests."""

from __future__ import annotations

import httpx


def assert_refused(response: httpx.Response, field: str) -> str:
    """Check `response` is a 422 problem naming `field` first; its message for the field."""
    assert response.status_code == 422, response.text
    assert response.headers["content-type"] == "application/problem+json"
    problem = response.json()
    assert problem["status"] == 422
    assert problem["field"] == field, problem
    assert problem["errors"][0]["field"] == field, problem
    assert "Traceback" not in response.text
    return str(problem["errors"][0]["message"])
