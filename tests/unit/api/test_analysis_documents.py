"""The analytics' answers are typed models in the OpenAPI document (schemas.analysis) and the
JSON they send is byte for byte what the domain's `to_dict()` gave before they were typed
(other tools read it): pydantic's serialisation of the plain dict, the route's old answer.
No database: the signed-in user is stubbed."""

from __future__ import annotations

import random
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import TypeAdapter, ValidationError

from sliceportal.api import deps
from sliceportal.api.main import create_app
from sliceportal.core.config import Settings
from sliceportal.domain import (
    Model,
    analyze,
    capacity_grid,
    delay_curves,
    min_capacity,
    parse_link_input,
    plan_priorities,
)
from sliceportal.schemas.analysis import LinkAnalysis
from sliceportal.schemas.choices import Role

PLAIN = TypeAdapter(dict[str, Any])


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    app = create_app(Settings())
    app.dependency_overrides[deps.get_current_user] = lambda: SimpleNamespace(
        role=Role.VIEWER, is_active=True
    )
    with TestClient(app) as client:
        yield client


def documents() -> list[dict[str, Any]]:
    """The paper's case C, integers where floats are usual, tiny and huge figures (exponents
    in the JSON), unbounded levels, and random links."""
    rng = random.Random(18)
    docs: list[dict[str, Any]] = [
        {
            "capacity_bps": 330e6,
            "slices": [
                {"name": "DC", "rate_bps": 48e6, "priority": 7, "burst_limit_s": 0.02},
                {"name": "Enterprise", "rate_bps": 12e6, "priority": 7, "burst_limit_s": 0.01},
                {"name": "Peering", "rate_bps": 240e6, "priority": 6, "burst_limit_s": 0.03},
            ],
        },
        {
            "capacity_bps": 330_000_000,
            "mtu_bytes": 9000,
            "frame_overhead_bytes": 24,
            "slices": [
                {
                    "name": "a",
                    "rate_bps": 1000,
                    "priority": 7,
                    "burst_bytes": 3,
                    "delay_target_s": 1,
                },
                {"name": "b", "rate_bps": 400_000_000, "priority": 1, "burst_limit_s": 0},
            ],
        },
        {
            "capacity_bps": 1e15,
            "slices": [{"name": "x", "rate_bps": 1e3, "priority": 3, "burst_limit_s": 1e-6}],
        },
    ]
    for _ in range(8):
        docs.append(
            {
                "capacity_bps": rng.choice([rng.uniform(1e6, 1e10), rng.randint(1, 10**10)]),
                "slices": [
                    {
                        "name": f"s{i}",
                        "rate_bps": rng.choice([rng.uniform(1e3, 1e9), rng.randint(1, 10**9)]),
                        "priority": rng.randint(1, 7),
                        "burst_limit_s": rng.choice([rng.uniform(0, 0.05), 0, 1e-7]),
                    }
                    for i in range(rng.randint(1, 6))
                ],
            }
        )
    return docs


def before(path: str, doc: dict[str, Any]) -> dict[str, Any]:
    """What the untyped routes returned (they answered `dict[str, Any]`)."""
    model = Model("netcalc")
    link = parse_link_input(doc, require_capacity=False)
    if path == "bounds":
        assert link.capacity_bps is not None
        return analyze(link.slices, link.capacity_bps, model, link.framing).to_dict()
    if path == "min-capacity":
        return {
            "model": str(model),
            "min_capacity_bps": min_capacity(link.slices, model, link.framing),
        }
    if path == "priority-plan":
        assert link.capacity_bps is not None
        plan = plan_priorities(link.slices, link.capacity_bps, 7, model, framing=link.framing)
        return {"model": str(model), **plan.to_dict()}
    start = sum(spec.rate_bps for spec in link.slices)
    curves = delay_curves(link.slices, capacity_grid(start, 4 * start, 9), model, link.framing)
    return {"model": str(model), **curves.to_dict()}


@pytest.mark.parametrize("path", ["bounds", "min-capacity", "priority-plan", "curves"])
def test_answers_are_the_bytes_of_the_untyped_documents(client: TestClient, path: str) -> None:
    query = "?model=netcalc" + ("&points=9" if path == "curves" else "")
    for doc in documents():
        response = client.post(f"/api/v1/analysis/{path}{query}", json=doc)
        assert response.status_code == 200, response.text
        assert response.content == PLAIN.dump_json(before(path, doc)), doc


def test_every_answer_is_a_named_schema() -> None:
    """No operation answers JSON of an anonymous shape (`dict[str, Any]`) any more (the
    reports' CSV and PDF and the event streams are not JSON)."""
    document: dict[str, Any] = create_app(Settings()).openapi()
    for path, item in document["paths"].items():
        for method, operation in item.items():
            for code, response in operation["responses"].items():
                json = response.get("content", {}).get("application/json")
                if json is not None:
                    assert "$ref" in json["schema"], f"{method} {path} {code}"
    body = document["paths"]["/api/v1/analysis/bounds"]["post"]["requestBody"]
    assert body["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/LinkDocument"
    }
    schemas = document["components"]["schemas"]
    assert schemas["LinkDocument"]["additionalProperties"] is False
    assert schemas["SliceDocument"]["required"] == ["name", "rate_bps", "priority"]


def test_the_models_are_closed() -> None:
    """A member the domain adds without documenting it fails the API instead of vanishing."""
    doc = before("bounds", documents()[0])
    LinkAnalysis.model_validate(doc)
    with pytest.raises(ValidationError):
        LinkAnalysis.model_validate({**doc, "undocumented": 1})
