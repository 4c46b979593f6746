"""The OpenAPI document says exactly what the API accepts (issue 19, defect 9): `null` only
where the API takes it, required fields required, and the limits of `domain.spec`, so a client
generated from the document (or a fuzzer) sends what the API takes."""

from __future__ import annotations

from typing import Any

import pytest

from sliceportal.api.main import create_app
from sliceportal.core.config import Settings
from sliceportal.domain import spec
from sliceportal.schemas import links, slices, switches, users
from sliceportal.schemas.common import PatchModel

Schema = dict[str, Any]


@pytest.fixture(scope="module")
def document() -> Schema:
    openapi: Schema = create_app(Settings()).openapi()
    return openapi


def _accepts_null(schema: Schema) -> bool:
    return any(option.get("type") == "null" for option in schema.get("anyOf", [schema]))


@pytest.mark.parametrize(
    "model",
    [
        links.LinkUpdate,
        slices.SliceUpdate,
        switches.SwitchUpdate,
        users.UserUpdate,
        users.UserUpdateMe,
    ],
)
def test_updates_are_nullable_only_where_null_clears(
    document: Schema, model: type[PatchModel]
) -> None:
    """`model: null` and `scheme: null` were documented but answered 422."""
    properties = document["components"]["schemas"][model.__name__]["properties"]
    nullable = {name for name, schema in properties.items() if _accepts_null(schema)}
    assert nullable == set(model.nullable)
    assert all("default" not in schema for schema in properties.values())


def _body(document: Schema, operation: str) -> Schema:
    body = document["paths"][f"/api/v1/analysis/{operation}"]["post"]["requestBody"]
    ref: str = body["content"]["application/json"]["schema"]["$ref"]
    schema: Schema = document["components"]["schemas"][ref.rsplit("/", 1)[1]]
    return schema


@pytest.mark.parametrize(
    ("operation", "required", "min_slices"),
    [
        ("bounds", ["capacity_bps", "slices"], 0),
        ("priority-plan", ["capacity_bps", "slices"], 0),
        ("min-capacity", ["slices"], 1),
        ("curves", ["slices"], 1),
    ],
)
def test_analysis_bodies_say_what_each_operation_needs(
    document: Schema, operation: str, required: list[str], min_slices: int
) -> None:
    """`{}` and a document without a capacity were valid for every analysis operation."""
    schema = _body(document, operation)
    assert schema["required"] == required
    assert schema["properties"]["slices"].get("minItems", 0) == min_slices
    capacity = schema["properties"]["capacity_bps"]
    if "capacity_bps" in required:
        assert capacity["maximum"] == spec.MAX_RATE_BPS and not _accepts_null(capacity)


def test_limits_come_from_the_domain(document: Schema) -> None:
    schemas = document["components"]["schemas"]
    capacity = schemas["LinkCreate"]["properties"]["capacity_bps"]
    assert capacity["maximum"] == spec.MAX_CAPACITY_BPS
    rate = schemas["SliceCreate"]["properties"]["rate_bps"]
    assert (rate["minimum"], rate["maximum"]) == (
        spec.MIN_SLICE_RATE_BPS,
        spec.MAX_SLICE_RATE_BPS,
    )
    skip = next(
        parameter
        for parameter in document["paths"]["/api/v1/switches"]["get"]["parameters"]
        if parameter["name"] == "skip"
    )
    assert skip["schema"]["maximum"] == spec.MAX_OFFSET
