"""Declarative base with a constraint naming convention, and the change-logging mixin.

The naming convention gives every constraint a predictable name, so migrations are stable and
the API can tell which field a violated constraint is about (see `models.CONSTRAINT_FIELDS`).
"""

from __future__ import annotations

import datetime as dt
import ipaddress
from collections.abc import Mapping
from enum import Enum, StrEnum
from typing import TYPE_CHECKING, Any, ClassVar

import sqlalchemy as sa
from sqlalchemy.orm import DeclarativeBase, Mapped, class_mapper, mapped_column

from sliceportal.schemas.choices import EntityType

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_N_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def choice_type(enum_cls: type[StrEnum], name: str) -> sa.Enum:
    """A VARCHAR + CHECK column type for a string enum.

    Not a native PostgreSQL enum: adding a state later is a CHECK change, not an ALTER TYPE
    that cannot run inside a transaction.
    """
    return sa.Enum(
        enum_cls,
        name=name,
        native_enum=False,
        create_constraint=True,
        length=32,
        values_callable=lambda members: [member.value for member in members],
        validate_strings=True,
    )


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class Base(DeclarativeBase):
    metadata = sa.MetaData(naming_convention=NAMING_CONVENTION)


class Timestamped:
    """Creation and last-change times, set by the database clock."""

    created_at: Mapped[dt.datetime] = mapped_column(
        sa.DateTime(timezone=True), server_default=sa.func.now()
    )
    updated_at: Mapped[dt.datetime] = mapped_column(
        sa.DateTime(timezone=True), server_default=sa.func.now(), onupdate=sa.func.now()
    )


def json_value(value: object) -> Any:
    """`value` as something JSON can hold (for change-log snapshots)."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, ipaddress.IPv4Network):
        return str(value)
    if isinstance(value, list | tuple):
        return [json_value(item) for item in value]
    return value


class ChangeLogged:
    """Mixin for rows whose changes land in the change log (netbox's ChangeLoggingMixin).

    `snapshot()` is the JSON stored as `before`/`after`; columns in `__snapshot_exclude__`
    (secrets) are never written there.
    """

    __snapshot_exclude__: ClassVar[frozenset[str]] = frozenset({"created_at", "updated_at"})
    _snapshot_key_cache: ClassVar[list[str]]
    entity_type: ClassVar[EntityType]
    if TYPE_CHECKING:  # declared by each model; an annotation here would map a column
        id: int

    @property
    def display_name(self) -> str:
        """How the change log names the row (kept there after the row is gone)."""
        return str(getattr(self, "name", ""))

    def snapshot(self) -> dict[str, Any]:
        return {key: json_value(getattr(self, key)) for key in self._snapshot_keys()}

    @classmethod
    def snapshot_of(cls, columns: Mapping[str, Any]) -> dict[str, Any]:
        """The snapshot of the columns of a row of this model that plain SQL wrote (what its
        RETURNING gave), as `snapshot` gives them of a loaded row."""
        return {key: json_value(columns[key]) for key in cls._snapshot_keys()}

    @classmethod
    def _snapshot_keys(cls) -> list[str]:
        """The model's snapshot columns, looked up once per model (an import snapshots
        thousands of rows)."""
        keys: list[str] | None = cls.__dict__.get("_snapshot_key_cache")
        if keys is None:
            keys = [
                column.key
                for column in class_mapper(cls).column_attrs
                if column.key not in cls.__snapshot_exclude__
            ]
            cls._snapshot_key_cache = keys
        return keys
