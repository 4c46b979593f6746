from __future__ import annotations

import argparse
import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from sliceportal import security
from sliceportal.cli import CliError, accounts
from sliceportal.core import embedded
from sliceportal.core.config import Settings, get_settings
from sliceportal.db.models import ChangeLogEntry, User
from sliceportal.schemas.choices import EntityType, Role
from sliceportal.services.users import ensure_first_admin
from utils.factories import unique

Runner = Callable[..., int]


@pytest.fixture
def run(migrated_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Runner]:
    """Run an accounts subcommand against the test database, as `sliceportal …` would."""
    monkeypatch.setitem(os.environ, "DATABASE_URL", migrated_url)
    get_settings.cache_clear()
    parser = argparse.ArgumentParser()
    accounts.register(parser.add_subparsers())

    def run_command(*argv: str) -> int:
        args = parser.parse_args(argv)
        code: int = args.handler(args)
        return code

    yield run_command
    get_settings.cache_clear()


def test_migrate(run: Runner, capsys: pytest.CaptureFixture[str]) -> None:
    assert run("migrate") == 0
    assert "up to date" in capsys.readouterr().out


def test_create_admin_generated_password(
    run: Runner, capsys: pytest.CaptureFixture[str], db: sessionmaker[Session]
) -> None:
    username = unique("root")
    assert run("create-admin", "--username", username, "--email", f"{username}@example.org") == 0
    out = capsys.readouterr().out
    password = out.split("password: ")[1].split()[0]
    with db() as session:
        user = session.scalars(select(User).where(User.username == username)).one()
        assert user.role is Role.ADMIN
        assert user.email == f"{username}@example.org"
        assert user.hashed_password != password
        assert security.verify_password(password, user.hashed_password)
        entry = session.scalars(
            select(ChangeLogEntry).where(
                ChangeLogEntry.entity_type == EntityType.USER, ChangeLogEntry.entity_id == user.id
            )
        ).one()
        assert entry.user_id is None
        assert entry.request_id.startswith("create-admin-")


def test_create_admin_existing(run: Runner, capsys: pytest.CaptureFixture[str]) -> None:
    username = unique("root")
    assert run("create-admin", "--username", username, "--password", "a long password") == 0
    assert "password:" not in capsys.readouterr().out
    with pytest.raises(CliError, match="already exists"):
        run("create-admin", "--username", username)
    assert run("create-admin", "--username", username, "--exist-ok") == 0


def test_create_admin_bad_password(run: Runner) -> None:
    with pytest.raises(CliError, match="--password: String should have at least 8"):
        run("create-admin", "--username", unique("root"), "--password", "short")


def test_ensure_first_admin(settings: Settings, db: sessionmaker[Session]) -> None:
    created = ensure_first_admin(settings)
    with db() as session:
        assert session.scalars(select(User).where(User.role == Role.ADMIN)).first() is not None
        if created is not None:
            username, password = created
            user = session.scalars(select(User).where(User.username == username)).one()
            assert security.verify_password(password, user.hashed_password)
    assert ensure_first_admin(settings) is None


def test_create_admin_in_a_database_never_migrated_is_one_line(postgres_server_url: str) -> None:
    name = f"sliceportal_empty_{uuid.uuid4().hex[:12]}"
    url = embedded.create_database(postgres_server_url, name)
    try:
        result = subprocess.run(
            [sys.executable, "-m", "sliceportal.cli", "create-admin", "--username", "root"],
            env=os.environ | {"DATABASE_URL": url},
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        embedded.drop_database(postgres_server_url, name)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1, result.stderr
    assert "has no sliceportal tables: run `sliceportal migrate` first" in result.stderr
