"""`sliceportal migrate` and `sliceportal create-admin`: scripted set-up of a portal.

`create-admin` prints a generated password once when none is given; with `--exist-ok` an
existing user of that name is left alone (exit 0), so set-up scripts can run it every time.
Bad input (a taken name, a short password) is a CliError, like every subcommand's.
"""

from __future__ import annotations

import argparse
import sys

from pydantic import ValidationError
from sqlalchemy import select

from sliceportal.cli import CliError, database_session
from sliceportal.core.config import get_settings


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    migrate_parser = subparsers.add_parser("migrate", help="upgrade the database schema")
    migrate_parser.set_defaults(handler=migrate)
    admin = subparsers.add_parser("create-admin", help="create an administrator account")
    admin.add_argument("--username", required=True)
    admin.add_argument("--password", help="default: generate one and print it once")
    admin.add_argument("--email")
    admin.add_argument(
        "--exist-ok", action="store_true", help="succeed without change if the user exists"
    )
    admin.set_defaults(handler=create_admin)


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")


def migrate(args: argparse.Namespace) -> int:
    from sliceportal.db.migrate import upgrade

    upgrade(get_settings().database_url)
    _say("database schema is up to date")
    return 0


def create_admin(args: argparse.Namespace) -> int:
    from sliceportal import security
    from sliceportal.db.models import User
    from sliceportal.services import users
    from sliceportal.services.errors import ServiceError

    with database_session() as session:
        existing = session.scalar(select(User).where(User.username == args.username))
        if existing is not None:
            if args.exist_ok:
                _say(f"user {args.username!r} exists ({existing.role.value}); left as is")
                return 0
            raise CliError(f"user {args.username!r} already exists (--exist-ok to accept)")
        password = args.password or security.generate_password()
        try:
            users.create_admin(session, args.username, password, args.email)
        except ServiceError as exc:
            raise CliError(exc.detail) from None
        except ValidationError as exc:
            raise CliError(
                "; ".join(f"--{error['loc'][0]}: {error['msg']}" for error in exc.errors())
            ) from None
    _say(f"created admin {args.username!r}")
    if not args.password:
        _say(f"password: {password}  (shown once)")
    return 0
