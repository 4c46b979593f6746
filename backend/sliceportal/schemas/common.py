"""Shared pieces of the request/response schemas."""

from __future__ import annotations

import datetime as dt
from ipaddress import IPv4Network
from typing import Annotated, Any, ClassVar, Generic, Literal, TypeVar

from annotated_types import Ge, Le
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    Strict,
    ValidationInfo,
    field_validator,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

Name = Annotated[
    str,
    Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9 _.:/@+-]*$"),
]


def _no_nul(value: str) -> str:
    """PostgreSQL text cannot hold NUL: refused here, naming the field, not by the driver
    (whose error names none)."""
    if "\x00" in value:
        raise ValueError("must not contain a NUL character")
    return value


NoNul = AfterValidator(_no_nul)


SortableT = TypeVar("SortableT", int, IPv4Network)


def sorted_once_each(values: list[SortableT]) -> list[SortableT]:
    """A prefix or VLAN listed twice is a mistake (a switch takes one entry per key)."""
    seen: set[SortableT] = set()
    for value in values:
        if value in seen:
            raise ValueError(f"lists {value} twice")
        seen.add(value)
    return sorted(values)


Description = Annotated[str, Field(max_length=2000), NoNul]
FilterText = Annotated[str, NoNul]
"""Free text in a query filter (`q`, a request id)."""
MAX_ROW_ID = 2**31 - 1
"""Row ids are PostgreSQL `integer`s."""
RowId = Annotated[int, Ge(-MAX_ROW_ID - 1), Le(MAX_ROW_ID)]
"""An id in a path, a filter or a body: one the column cannot hold is a 422 naming the field,
not a database error (it was a 500: `integer out of range`); any other that names no row is a
404 (or the 422 of its field), as before."""
BodyId = Annotated[RowId, Strict()]
"""An id in a body. Every number and boolean of a body is `Strict`, taken only as JSON writes
it: `true` is no VLAN 1, `"5"` no 5 and `1.0` no integer (an integer is a number). Paths and
queries, which are text, convert."""


def _not_a_number(value: object) -> object:
    """Pydantic reads a number as seconds since 1970: `until=0.5` was a moment of 1970."""
    if isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return value
        raise ValueError("must be an ISO 8601 date and time (2026-01-31T12:00:00Z), not a number")
    return value


Timestamp = Annotated[dt.datetime, BeforeValidator(_not_a_number)]
"""A moment in a query: ISO 8601 only."""


class InputModel(BaseModel):
    """Bodies reject unknown fields (a typo is an error, not a silent default) and NaN/inf."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, str_strip_whitespace=True)


class PatchModel(InputModel):
    """An XUpdate: every field optional, applied with `model_dump(exclude_unset=True)`.

    Omitting a field keeps it; sending `null` clears it, which only `nullable` fields allow.
    """

    nullable: ClassVar[frozenset[str]] = frozenset()

    @field_validator("*", mode="after")
    @classmethod
    def _null_only_where_nullable(cls, value: Any, info: ValidationInfo) -> Any:
        if value is None and info.field_name not in cls.nullable:
            raise ValueError("may be omitted but not null")
        return value

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        """Document what the validator above takes: `null` only where it clears a field, and
        no default (an omitted field keeps its value, it is not set to null)."""
        json_schema = handler(core_schema)
        for name, field in handler.resolve_ref_schema(json_schema)["properties"].items():
            field.pop("default", None)
            options = field.get("anyOf")
            if name in cls.nullable or options is None:
                continue
            kept = [option for option in options if option.get("type") != "null"]
            if len(kept) == 1:
                del field["anyOf"]
                field.update(kept[0])
            else:
                field["anyOf"] = kept
        return json_schema


class PublicModel(BaseModel):
    model_config = ConfigDict(from_attributes=True)


ItemT = TypeVar("ItemT", bound=BaseModel)


class Page(BaseModel, Generic[ItemT]):
    """One page of a list and the number of items matching the filters."""

    data: list[ItemT]
    count: int


class Message(BaseModel):
    message: str


class Readiness(BaseModel):
    """Both dependencies answered (a 503 problem otherwise)."""

    database: Literal["ok"]
    redis: Literal["ok"]
