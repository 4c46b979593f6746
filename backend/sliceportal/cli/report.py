"""`sliceportal report`: the capacity planning report of the portal's database, as the API
gives it (`GET /api/v1/reports/…`), for scripts and cron jobs.

    sliceportal report network --format pdf --out network.pdf
    sliceportal report switch s1 --growth 10 --horizon 12
    sliceportal report link s1/eth1 --format csv --table slices

The database is the one `DATABASE_URL` (the portal's Settings) names.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.orm import Session

from sliceportal.cli import CliError
from sliceportal.core.config import get_settings
from sliceportal.services.reports import (
    MAX_GROWTH_PERCENT,
    MAX_HORIZON_MONTHS,
    MAX_WINDOW_S,
    ReportRequest,
)

_FORMATS = ("json", "csv", "pdf")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from sliceportal.reporting.csv_tables import TABLES

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
    parser.add_argument("--format", choices=_FORMATS, default="json")
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


def _check_bounds(args: argparse.Namespace) -> None:
    if not 0 <= args.growth <= MAX_GROWTH_PERCENT:
        raise CliError(f"--growth must be from 0 to {MAX_GROWTH_PERCENT:g}")
    if not 1 <= args.horizon <= MAX_HORIZON_MONTHS:
        raise CliError(f"--horizon must be from 1 to {MAX_HORIZON_MONTHS}")
    if not 0 <= args.window <= MAX_WINDOW_S:
        raise CliError(f"--window must be from 0 to {MAX_WINDOW_S:g} seconds")
    if args.format == "pdf" and args.out is None and sys.stdout.isatty():
        raise CliError("a PDF needs --out FILE (or redirect standard output)")


def report(args: argparse.Namespace) -> int:
    from sliceportal.api.schemas.reports import Report
    from sliceportal.db.session import create_db_engine, create_sessionmaker
    from sliceportal.reporting.csv_tables import render_csv
    from sliceportal.reporting.pdf import render_pdf
    from sliceportal.services.errors import ServiceError
    from sliceportal.services.reports import network_report

    _check_bounds(args)
    settings = get_settings()
    engine = create_db_engine(settings)
    try:
        with create_sessionmaker(engine)() as session:
            request = ReportRequest(
                args.scope,
                _scope_id(session, args.scope, args.name),
                args.growth,
                args.horizon,
                args.window,
            )
            try:
                data = network_report(session, request)
            except ServiceError as exc:
                raise CliError(exc.detail) from None
    except sa.exc.OperationalError as exc:
        where = engine.url.render_as_string(hide_password=True)
        reason = str(exc.orig).splitlines()[0] if exc.orig else str(exc)
        raise CliError(f"cannot reach the database {where} (DATABASE_URL): {reason}") from None
    finally:
        engine.dispose()
    output: bytes
    if args.format == "json":
        document = Report.model_validate(data.to_dict())
        output = (json.dumps(document.model_dump(mode="json"), indent=2) + "\n").encode()
    elif args.format == "csv":
        output = render_csv(data.tables()[args.table]).encode()
    else:
        output = render_pdf(Report.model_validate(data.to_dict()))
    if args.out is None:
        sys.stdout.buffer.write(output)
        sys.stdout.flush()
    else:
        try:
            args.out.write_bytes(output)
        except OSError as exc:
            raise CliError(f"cannot write {args.out}: {exc.strerror}") from None
    return 0
