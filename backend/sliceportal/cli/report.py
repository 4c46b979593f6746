"""`sliceportal report`: the capacity planning report of the portal's database, as the API
gives it (`GET /api/v1/reports/…`), for scripts and cron jobs.

    sliceportal report network --format pdf --out network.pdf
    sliceportal report switch s1 --growth 10 --horizon 12
    sliceportal report link s1/eth1 --format csv --table slices

The database is the one `DATABASE_URL` (the portal's Settings) names.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.orm import Session

from sliceportal.cli import CliError, database_session
from sliceportal.services.reports import ReportRequest


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from sliceportal.domain.reports.tables import TABLES

    parser = subparsers.add_parser(
        "report",
        help="capacity planning report of the network, a switch or a link",
        description="Bounds under both models, minimum capacity per priority plan, headroom, "
        "growth, measured against declared, and recommendations.",
    )
    parser.add_argument("scope", choices=("network", "switch", "link"))
    parser.add_argument(
        "name", nargs="?", help="the switch (name or id) or link (SWITCH/LINK or id)"
    )
    parser.add_argument(
        "--growth", type=float, default=5.0, help="rate growth, percent per month (default 5)"
    )
    parser.add_argument(
        "--horizon", type=int, default=24, help="growth horizon in months (default 24)"
    )
    parser.add_argument(
        "--window",
        type=float,
        default=3600.0,
        help="seconds of telemetry to compare with the declarations; 0 leaves it out",
    )
    parser.add_argument("--format", choices=("json", "csv", "pdf"), default="json")
    parser.add_argument("--table", choices=TABLES, default="link_slices", help="for --format csv")
    parser.add_argument("--out", type=Path, help="write here instead of standard output")
    parser.set_defaults(handler=report)


def _scope_id(session: Session, scope: str, name: str | None) -> int | None:
    """The id of the switch or link the user named: by name, else by id."""
    from sliceportal.db.models import Link, Switch

    if scope == "network":
        if name is not None:
            raise CliError("a network report takes no name")
        return None
    if name is None:
        raise CliError(f"name the {scope} (see sliceportal report --help)")
    if scope == "switch":
        found = session.scalar(sa.select(Switch.id).where(Switch.name == name))
        if found is None and name.isdigit():
            found = session.scalar(sa.select(Switch.id).where(Switch.id == int(name)))
    elif name.isdigit():
        found = session.scalar(sa.select(Link.id).where(Link.id == int(name)))
    else:
        found = _link_by_path(session, name)
    if found is None:
        raise CliError(f"{scope} {name!r} does not exist")
    return found


def _link_by_path(session: Session, name: str) -> int | None:
    """The link named SWITCH/LINK. Both names may contain "/" themselves, so every split is
    tried; more than one match is ambiguous (the id then names the link)."""
    from sliceportal.db.models import Link, Switch

    splits = [(name[:i], name[i + 1 :]) for i, char in enumerate(name) if char == "/"]
    if not splits:
        raise CliError(f"name the link as SWITCH/LINK or by id, not {name!r}")
    found = session.scalars(
        sa.select(Link.id)
        .join(Switch, Switch.id == Link.switch_id)
        .where(sa.or_(*(sa.and_(Switch.name == s, Link.name == n) for s, n in splits)))
    ).all()
    if len(found) > 1:
        raise CliError(f"link {name!r} is ambiguous (links {sorted(found)}): name it by id")
    return found[0] if found else None


_FLAGS = {
    "growth_percent": "--growth",
    "horizon_months": "--horizon",
    "telemetry_window_s": "--window",
}
"""The CLI flag of each report parameter, for its error messages."""


def _checked_request(args: argparse.Namespace) -> ReportRequest:
    """The parameters checked as the API checks them, before the database is touched."""
    from sliceportal.services.errors import InvalidFieldError

    if args.format == "pdf" and args.out is None and sys.stdout.isatty():
        raise CliError("a PDF needs --out FILE (or redirect standard output)")
    request = ReportRequest(args.scope, None, args.growth, args.horizon, args.window)
    try:
        request.check_parameters()
    except InvalidFieldError as exc:
        raise CliError(f"{_FLAGS.get(exc.field or '', exc.field)} {exc.detail}") from None
    return request


def report(args: argparse.Namespace) -> int:
    from sliceportal.reporting.render import render
    from sliceportal.services.errors import ServiceError
    from sliceportal.services.reports import network_report

    request = _checked_request(args)
    with database_session() as session:
        scoped = replace(request, scope_id=_scope_id(session, args.scope, args.name))
        try:
            data = network_report(session, scoped)
        except ServiceError as exc:
            raise CliError(exc.detail) from None
    output = render(data, args.format, args.table)
    if args.out is None:
        sys.stdout.buffer.write(output)
        sys.stdout.flush()
    else:
        try:
            args.out.write_bytes(output)
        except OSError as exc:
            raise CliError(f"cannot write {args.out}: {exc.strerror}") from None
    return 0
