"""The ``sliceportal`` command line: one parser, subcommands registered by topic modules.

Each topic module has ``register(subparsers)``, which adds its subcommands and sets a
``handler(args) -> int`` default on each. Handlers report bad input by raising
:class:`CliError` (or letting a :class:`~sliceportal.domain.SpecError` through): ``main`` turns
it into one line on stderr and exit status 2. Machine-readable output goes to stdout as one
JSON document (:func:`write_json`).
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


class CliError(Exception):
    """Bad input or an unreadable file: one line on stderr, exit status 2."""


def host_port(text: str) -> str:
    """An argparse type: `host:port`, `ipv4:port` or `[ipv6]:port` with a port in 1..65535,
    checked as the API checks switch addresses (a bad one is a usage error, not a server on
    some other port)."""
    from sliceportal.schemas.switches import check_address

    try:
        return check_address(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: {exc}") from None


def tcp_port(text: str) -> int:
    """An argparse type: a TCP port, 1..65535."""
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a TCP port (1..65535)")
    return int(text)


def listen_host(text: str) -> str:
    """An argparse type: an IP address or host name to listen on (refused before anything
    starts, not when the server binds)."""
    from sliceportal.core.config import HOST_NAME

    try:
        ipaddress.ip_address(text)
    except ValueError:
        if not HOST_NAME.match(text):
            raise argparse.ArgumentTypeError(
                f"{text!r} is not an IP address or host name"
            ) from None
    return text


UNDEFINED_TABLE = "42P01"
"""PostgreSQL's SQLSTATE for a missing table: the database was never migrated."""


class _DuplicateKeyError(ValueError):
    pass


def _reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """JSON allows repeated keys and keeps the last; a config tool should not guess."""
    doc: dict[str, Any] = {}
    for key, value in pairs:
        if key in doc:
            raise _DuplicateKeyError(f"duplicate key {key!r} in an object")
        doc[key] = value
    return doc


def read_json(path: str) -> object:
    """The JSON document in file ``path`` (``-`` for stdin), or a :class:`CliError` saying why not.

    ``NaN`` and ``Infinity`` literals are decoded here and rejected by the field validation,
    which can name the field.
    """
    name = "stdin" if path == "-" else path
    try:
        if path == "-":
            stream = getattr(sys.stdin, "buffer", None)
            data = stream.read() if stream is not None else sys.stdin.read().encode()
        else:
            data = Path(path).read_bytes()
    except OSError as exc:
        raise CliError(f"{name}: cannot read: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CliError(f"{name}: not UTF-8 text (bad byte at offset {exc.start})") from None
    try:
        return json.loads(text, object_pairs_hook=_reject_duplicate_keys)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno}, column {exc.colno}"
        raise CliError(f"{name}: not valid JSON: {exc.msg} ({where})") from None
    except RecursionError:
        raise CliError(f"{name}: not valid JSON: nested too deeply") from None
    except ValueError as exc:  # duplicate keys, integers beyond Python's digit limit
        raise CliError(f"{name}: not valid JSON: {exc}") from None


def write_json(doc: object) -> None:
    """Print one JSON document (never NaN or Infinity, which JSON does not have)."""
    sys.stdout.write(json.dumps(doc, indent=2, allow_nan=False) + "\n")


@contextmanager
def database_session() -> Iterator[Session]:
    """A session on the portal's database (DATABASE_URL), disposed of afterwards; a database
    that does not answer is one line naming it, not a traceback."""
    import sqlalchemy as sa

    from sliceportal.core.config import get_settings
    from sliceportal.db.session import create_db_engine, create_sessionmaker

    engine = create_db_engine(get_settings())
    where = engine.url.render_as_string(hide_password=True)
    try:
        with create_sessionmaker(engine)() as session:
            yield session
    except sa.exc.OperationalError as exc:
        reason = str(exc.orig).splitlines()[0] if exc.orig else str(exc)
        raise CliError(f"cannot reach the database {where} (DATABASE_URL): {reason}") from None
    except sa.exc.ProgrammingError as exc:
        if getattr(exc.orig, "sqlstate", None) != UNDEFINED_TABLE:
            raise
        raise CliError(
            f"the database {where} (DATABASE_URL) has no sliceportal tables: "
            "run `sliceportal migrate` first"
        ) from None
    finally:
        engine.dispose()
