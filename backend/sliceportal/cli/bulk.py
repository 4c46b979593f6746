"""`sliceportal import FILE` and `sliceportal export`: slices as CSV or YAML, through the portal's
API (`POST /api/v1/slices/import`, `GET /api/v1/slices/export`), so an import is admitted,
locked and change-logged exactly as the API does it, as the user the token names.

    export SLICEPORTAL_TOKEN=…   # an API token: POST /api/v1/tokens, or the UI's Tokens page
    sliceportal export --format yaml --out slices.yaml
    sliceportal import slices.csv --api https://portal.example.net

The API is `--api`, else `$SLICEPORTAL_API_URL`, else http://127.0.0.1:8000 (`sliceportal
serve`'s); the token is `$SLICEPORTAL_TOKEN` (never an argument: others can read those). A
refused import is one line (the API's `detail`: how many rows, which, and the first reason)
and exit status 2; nothing was imported then.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from sliceportal.cli import CliError, write_json

DEFAULT_API = "http://127.0.0.1:8000"
TIMEOUT_S = 300.0
"""An import of the most slices one body holds takes seconds; a dead server is found by the
connection, not by this."""
MEDIA_TYPES = {"csv": "text/csv", "yaml": "application/yaml"}
SUFFIXES = {".csv": "csv", ".yaml": "yaml", ".yml": "yaml"}


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    importing = subparsers.add_parser(
        "import",
        help="create the slices of a CSV or YAML file through the API, all or none",
        description="Create every slice of FILE in one transaction, admission once per link "
        "for the whole file (docs/api.md, Import and export). Prints the API's answer "
        "({count, ids}) as JSON.",
    )
    importing.add_argument("file", help="a .csv, .yaml or .yml file; - reads standard input")
    importing.add_argument(
        "--format", choices=tuple(MEDIA_TYPES), help="default: from the file's extension"
    )
    _api_arguments(importing)
    importing.set_defaults(handler=import_file)

    exporting = subparsers.add_parser(
        "export",
        help="every slice as CSV or YAML, a file `sliceportal import` takes back",
        description="Every slice, by id, as CSV or YAML (GET /api/v1/slices/export).",
    )
    exporting.add_argument("--format", choices=tuple(MEDIA_TYPES), default="csv")
    exporting.add_argument("--out", type=Path, help="write here instead of standard output")
    _api_arguments(exporting)
    exporting.set_defaults(handler=export_file)


def _api_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--api",
        default=os.environ.get("SLICEPORTAL_API_URL") or DEFAULT_API,
        help=f"the portal's base URL (default: $SLICEPORTAL_API_URL, else {DEFAULT_API}); "
        "the token is $SLICEPORTAL_TOKEN",
    )


def import_file(args: argparse.Namespace) -> int:
    file_format = args.format or SUFFIXES.get(Path(args.file).suffix.lower())
    if file_format is None:
        raise CliError(f"{args.file}: say --format csv or yaml (the name ends neither way)")
    try:
        data = sys.stdin.buffer.read() if args.file == "-" else Path(args.file).read_bytes()
    except OSError as exc:
        raise CliError(f"{args.file}: cannot read: {exc.strerror or exc}") from None
    answer = _call(
        args.api,
        "POST",
        "/api/v1/slices/import",
        data=data,
        headers={"Content-Type": MEDIA_TYPES[file_format]},
    )
    try:
        created = json.loads(answer)
    except ValueError:  # UnicodeDecodeError too
        message = f"the server at {args.api} answered the import with no JSON: not the API?"
        raise CliError(message) from None
    write_json(created)
    return 0


def export_file(args: argparse.Namespace) -> int:
    answer = _call(args.api, "GET", f"/api/v1/slices/export?format={args.format}")
    if args.out is None:
        sys.stdout.buffer.write(answer)
        return 0
    try:
        args.out.write_bytes(answer)
    except OSError as exc:
        raise CliError(f"{args.out}: cannot write: {exc.strerror or exc}") from None
    return 0


def _call(
    api: str,
    method: str,
    path: str,
    *,
    data: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> bytes:
    """The body of the API's answer; a CliError of one line when it is not a success."""
    token = os.environ.get("SLICEPORTAL_TOKEN")
    if not token:
        raise CliError("set SLICEPORTAL_TOKEN to an API token (POST /api/v1/tokens)")
    url = api.rstrip("/") + path
    if not url.startswith(("http://", "https://")):
        raise CliError(f"--api {api!r} is not an http:// or https:// URL")
    request = urllib.request.Request(  # noqa: S310 - the scheme is checked above
        url,
        data=data,
        method=method,
        headers={"Authorization": f"Bearer {token}"} | (headers or {}),
    )
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:  # noqa: S310
            body: bytes = response.read()
            return body
    except urllib.error.HTTPError as exc:
        raise CliError(f"{method} {url}: {exc.code}: {_problem(exc.read())}") from None
    except urllib.error.URLError as exc:
        raise CliError(f"cannot reach the API at {api} (--api): {exc.reason}") from None
    except TimeoutError:
        raise CliError(f"the API at {api} did not answer within {TIMEOUT_S:g} s") from None


def _problem(body: bytes) -> str:
    """The one line of a problem+json answer: its detail (which names the rows of an import)."""
    try:
        problem: Any = json.loads(body)
        detail = str(problem["detail"])
    except (ValueError, KeyError, TypeError):
        detail = body.decode("utf-8", "replace").strip()
    return " ".join(detail.split())[:2000] or "no detail"
