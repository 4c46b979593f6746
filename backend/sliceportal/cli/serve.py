"""`sliceportal serve`: the whole portal in one foreground process tree, for a newcomer's laptop.

Uses the PostgreSQL and Redis named by `DATABASE_URL` / `REDIS_URL` when set; otherwise starts
embedded ones from the Python wheels under `--data-dir`, so no Docker and no system service is
needed. It migrates the database and creates a first admin (printing the password once). Then,
under a supervisor (`controlplane.supervisor`, which restarts a child that dies), it runs an
emulated switch with the demo traffic, the Celery worker and beat, and the telemetry poller;
registers the switches (the emulator and `SLICEPORTAL_BOOTSTRAP_SWITCHES`) with, on the first
start, the paper's demo slices; deploys them; and serves the API. The children log to
`--data-dir`/logs. Ctrl-C stops everything it started.

`--data-dir` (default `SLICEPORTAL_DATA_DIR`) becomes `SLICEPORTAL_DATA_DIR` of the children,
so that they find the generated signing key there (`core.signing`); it logs where the key
comes from, never the key. X-Forwarded-For is believed from `SLICEPORTAL_TRUSTED_PROXIES` only.

docker-compose runs the same command with `--no-switch --no-workers`: its worker, beat, poller
and BMv2 switch are services of their own.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import sys
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from sliceportal.cli import CliError, host_port, listen_host, tcp_port
from sliceportal.core import embedded
from sliceportal.core.config import Settings, get_settings
from sliceportal.emulator.defaults import DEFAULT_GRPC_ADDRESS

if TYPE_CHECKING:
    from sliceportal.controlplane.bootstrap import SwitchSpec


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("serve", help="run the portal (embedded services by default)")
    parser.add_argument(
        "--host", type=listen_host, default="127.0.0.1", help="address to listen on"
    )
    parser.add_argument("--port", type=tcp_port, default=8000, help="HTTP port")
    parser.add_argument(
        "--data-dir",
        default=None,
        help="where embedded PostgreSQL and Redis keep their files, the logs and the generated "
        "signing key (default: SLICEPORTAL_DATA_DIR, else ./.sliceportal)",
    )
    parser.add_argument(
        "--switch",
        type=host_port,
        default=DEFAULT_GRPC_ADDRESS,
        metavar="HOST:PORT",
        help=f"P4Runtime address of the emulated switch (default: {DEFAULT_GRPC_ADDRESS}; "
        "another free port when it is taken)",
    )
    parser.add_argument("--no-switch", action="store_true", help="run no emulated switch")
    parser.add_argument(
        "--no-traffic", action="store_true", help="run the emulated switch without demo traffic"
    )
    parser.add_argument(
        "--no-workers",
        action="store_true",
        help="run no Celery worker, beat and poller (they run elsewhere, as in docker-compose)",
    )
    parser.set_defaults(handler=serve)


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _switch_address(wanted: str) -> str:
    """`wanted` (checked by `host_port`), or the same host on a free port when something
    listens there already."""
    host, _, port = wanted.rpartition(":")
    if embedded.tcp_port_answers(host, int(port)):
        return f"{host}:{embedded.free_tcp_port(host)}"
    return wanted


def serve(args: argparse.Namespace) -> int:
    import uvicorn

    from sliceportal.api.main import create_app
    from sliceportal.controlplane.bootstrap import (
        BootstrapError,
        SwitchSpec,
        bootstrap,
        demo_traffic,
        parse_switches,
    )
    from sliceportal.controlplane.supervisor import Child, Supervisor, celery_children
    from sliceportal.db.migrate import upgrade
    from sliceportal.db.session import create_db_engine, create_sessionmaker
    from sliceportal.schemas.choices import SwitchKind
    from sliceportal.services.users import ensure_first_admin

    data_dir = Path(args.data_dir or get_settings().data_dir).resolve()  # refuses bad settings
    os.environ["SLICEPORTAL_DATA_DIR"] = str(data_dir)
    get_settings.cache_clear()
    logs = data_dir / "logs"
    _say(f"signing key: {get_settings().signing_key_source()}")
    try:
        switches = parse_switches(get_settings().bootstrap_switches)
    except BootstrapError as exc:
        raise CliError(f"SLICEPORTAL_BOOTSTRAP_SWITCHES: {exc}") from None
    _check_switch_addresses(args, switches, get_settings())
    with contextlib.ExitStack() as stack:
        if not os.environ.get("DATABASE_URL"):
            server_url = embedded.start_embedded_postgres(data_dir / "postgres")
            os.environ["DATABASE_URL"] = embedded.ensure_database(server_url, "sliceportal")
            url = os.environ["DATABASE_URL"]
            _say(f"embedded PostgreSQL in {data_dir / 'postgres'} (DATABASE_URL={url})")
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

        children = []
        if not args.no_switch:
            address = _switch_address(args.switch)
            command = [sys.executable, "-m", "sliceportal.cli", "switch", "--grpc", address]
            if not args.no_traffic:
                profile = data_dir / "demo-traffic.json"
                profile.write_text(json.dumps(demo_traffic(), indent=2) + "\n")
                command += ["--traffic", str(profile)]
            children.append(Child("switch", command, log=logs / "switch.log"))
            switches.insert(0, SwitchSpec("emulator", address, SwitchKind.EMULATOR))
            _say(f"emulated switch on {address} (log: {logs / 'switch.log'})")
        if not args.no_workers:
            children += celery_children(logs, data_dir / "celerybeat-schedule")
            sliceportal = shutil.which("sliceportal") or str(
                Path(sys.executable).parent / "sliceportal"
            )
            children.append(Child("poller", [sliceportal, "poller"], log=logs / "poller.log"))
            _say(f"Celery workers (main and slow lane) and beat, telemetry poller (logs: {logs})")
        supervisor = Supervisor(children)
        stack.callback(supervisor.stop)
        supervisor.start()

        engine = create_db_engine(settings)
        with create_sessionmaker(engine)() as session:
            ids = bootstrap(session, settings, switches)
        engine.dispose()
        if ids:
            _say(f"deploying switch(es) {', '.join(s.name for s in switches)}")
        _say(f"sliceportal on http://{args.host}:{args.port}  (API docs at /docs; Ctrl-C stops)")
        # uvicorn shuts down on SIGINT/SIGTERM and then raises the signal again; handled here,
        # it ends `run` and the children are stopped on the way out (SIGTERM's default action
        # would end the process at once and leave them running).
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, _stop)
        with contextlib.suppress(_Stopped):
            uvicorn.run(
                create_app(settings),
                host=args.host,
                port=args.port,
                log_level="info",
                **_proxy_options(settings),
            )
    return 0


def _check_switch_addresses(
    args: argparse.Namespace, switches: list[SwitchSpec], settings: Settings
) -> None:
    """Refuse, before starting anything, a switch the API would refuse to register."""
    from sliceportal.schemas.switches import check_address, check_switch_network

    given = [(spec.address, f"SLICEPORTAL_BOOTSTRAP_SWITCHES: {spec.name}") for spec in switches]
    if not args.no_switch:
        given.append((args.switch, "--switch"))
    for address, where in given:
        try:
            check_address(address)
            check_switch_network(address, settings.switch_networks)
        except ValueError as exc:
            raise CliError(f"{where}: {address!r}: {exc}") from None


def _proxy_options(settings: Settings) -> dict[str, Any]:
    """uvicorn's handling of X-Forwarded-For/-Proto: from the trusted proxies only, and with
    none configured not at all (uvicorn's own default believes any local process, which could
    then pose as any client address, e.g. to the login throttle)."""
    if not settings.trusted_proxies:
        return {"proxy_headers": False}
    return {"proxy_headers": True, "forwarded_allow_ips": list(settings.trusted_proxies)}


class _Stopped(Exception):
    """SIGINT or SIGTERM after the server shut down."""


def _stop(signum: int, frame: FrameType | None) -> None:
    raise _Stopped
