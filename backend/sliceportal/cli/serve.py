"""`sliceportal serve`: the whole portal in one foreground process tree, for a newcomer's laptop.

Uses the PostgreSQL and Redis named by `DATABASE_URL` / `REDIS_URL` when set; otherwise starts
embedded ones from the Python wheels under `--data-dir`, so no Docker and no system service is
needed. It migrates the database, creates a first admin (printing the password once) and serves
the API. Ctrl-C stops everything it started.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path

from sliceportal.core import embedded
from sliceportal.core.config import get_settings


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("serve", help="run the portal (embedded services by default)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=8000, help="HTTP port")
    parser.add_argument(
        "--data-dir",
        default=".sliceportal",
        help="where embedded PostgreSQL and Redis keep their files (default: ./.sliceportal)",
    )
    parser.set_defaults(handler=serve)


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def serve(args: argparse.Namespace) -> int:
    import uvicorn

    from sliceportal.api.main import create_app
    from sliceportal.db.migrate import upgrade
    from sliceportal.services.users import ensure_first_admin

    data_dir = Path(args.data_dir).resolve()
    with contextlib.ExitStack() as stack:
        if not os.environ.get("DATABASE_URL"):
            server_url = embedded.start_embedded_postgres(data_dir / "postgres")
            os.environ["DATABASE_URL"] = embedded.ensure_database(server_url, "sliceportal")
            _say(f"embedded PostgreSQL in {data_dir / 'postgres'}")
        if not os.environ.get("REDIS_URL"):
            redis_server = embedded.start_embedded_redis(data_dir / "redis")
            stack.callback(redis_server.stop)
            os.environ["REDIS_URL"] = redis_server.url
            _say(f"embedded Redis at {redis_server.url}")
        get_settings.cache_clear()
        settings = get_settings()
        upgrade(settings.database_url)
        created = ensure_first_admin(settings)
        if created is not None:
            username, password = created
            _say(f"created the first admin: user {username!r}, password {password!r}")
            _say("(shown once; change it under Users, or create another with create-admin)")
        _say(f"sliceportal on http://{args.host}:{args.port}  (API docs at /docs; Ctrl-C stops)")
        uvicorn.run(create_app(settings), host=args.host, port=args.port, log_level="info")
    return 0
