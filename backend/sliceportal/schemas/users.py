from __future__ import annotations

import datetime as dt
from typing import Annotated

from pydantic import Field, Strict

from sliceportal.schemas.choices import Role
from sliceportal.schemas.common import InputModel, NoNul, Page, PatchModel, PublicModel

Username = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.@-]+$")]
Password = Annotated[str, Field(min_length=8, max_length=128)]
FullName = Annotated[str, Field(max_length=255), NoNul]
Email = Annotated[str, Field(max_length=254, pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$")]


class UserCreate(InputModel):
    username: Username
    password: Password
    email: Email | None = None
    full_name: FullName = ""
    role: Role = Role.VIEWER
    is_active: Annotated[bool, Strict()] = True


class UserUpdate(PatchModel):
    nullable = frozenset({"email"})

    password: Password | None = None
    email: Email | None = None
    full_name: FullName | None = None
    role: Role | None = None
    is_active: Annotated[bool, Strict()] | None = None


class UserUpdateMe(PatchModel):
    """What users may change about themselves (not their role)."""

    nullable = frozenset({"email"})

    current_password: str | None = None
    password: Password | None = None
    email: Email | None = None
    full_name: FullName | None = None


class UserPublic(PublicModel):
    id: int
    username: str
    email: str | None
    full_name: str
    role: Role
    is_active: bool
    created_at: dt.datetime


UsersPublic = Page[UserPublic]
