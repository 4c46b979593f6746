"""Helpers of the fault tests: watching the supervised Celery worker and beat, a Redis that can
be stopped and started again on its port, a TCP proxy in front of PostgreSQL that can be cut
or frozen, a switch that never answers and a watch on the task queue's length."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Sequence

import psutil
import redis
import sqlalchemy as sa

from sliceportal.controlplane.supervisor import Child
from sliceportal.core.embedded import EmbeddedRedis, tcp_port_answers


def wait_for(
    condition: Callable[[], object], timeout_s: float, what: str, *, logs: Sequence[Child] = ()
) -> float:
    """Poll `condition` until it is true; the seconds it took. After `timeout_s`, an
    AssertionError naming `what`, with the end of each of `logs` as it is when the wait fails."""
    start = time.monotonic()
    while not condition():
        if time.monotonic() - start > timeout_s:
            shown = "".join(f"\n{tail(child)}" for child in logs)
            raise AssertionError(f"not within {timeout_s} s: {what}{shown}")
        time.sleep(0.05)
    return time.monotonic() - start


def log_of(child: Child) -> str:
    assert child.log is not None
    return child.log.read_text(errors="replace") if child.log.exists() else ""


def tail(child: Child, lines: int = 60) -> str:
    return "\n".join(log_of(child).splitlines()[-lines:])


def wait_until_logged(child: Child, text: str, timeout_s: float = 60) -> None:
    wait_for(lambda: text in log_of(child), timeout_s, f"{child.name} logs {text!r}", logs=[child])


def kill_pool(worker: Child) -> None:
    """SIGKILL the worker's pool processes, which run the tasks (its master forks new ones)."""
    assert worker.process is not None
    for process in psutil.Process(worker.process.pid).children(recursive=True):
        process.kill()


def kill_worker(worker: Child) -> int:
    """SIGKILL the worker's main process (its pool dies with it); the pid killed."""
    assert worker.process is not None
    pid = worker.process.pid
    os.kill(pid, signal.SIGKILL)
    return pid


def restart_redis(redis: EmbeddedRedis) -> EmbeddedRedis:
    """The same redis-server command again: same port, empty (it keeps nothing on disk)."""
    process = subprocess.Popen(
        redis.process.args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    port = int(redis.url.rsplit(":", 1)[1].split("/")[0])
    wait_for(lambda: tcp_port_answers("127.0.0.1", port), 10, "redis-server listening")
    return EmbeddedRedis(process=process, url=redis.url)


class TcpProxy:
    """Forwards 127.0.0.1:`port` to an upstream (TCP or Unix socket); `cut` refuses new
    connections and drops the open ones, as a PostgreSQL that went away; `restore` undoes it.
    `freeze` keeps every connection open, and takes new ones, but forwards nothing, as a
    PostgreSQL stopped by SIGSTOP or hung (its kernel still acknowledges what is sent);
    `thaw` forwards again, what was held first."""

    def __init__(self, upstream: Callable[[], socket.socket]) -> None:
        self._upstream = upstream
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()
        self._listener: socket.socket | None = None
        self._flowing = threading.Event()
        self._flowing.set()
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        self.port: int = probe.getsockname()[1]
        probe.close()
        self.restore()

    def restore(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def freeze(self) -> None:
        self._flowing.clear()

    def thaw(self) -> None:
        self._flowing.set()

    def cut(self) -> None:
        self._flowing.set()  # a pump holding data while frozen meets the closed socket
        with self._lock:
            listener, self._listener = self._listener, None
            sockets, self._sockets = self._sockets, set()
        if listener is not None:
            listener.close()
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                server = self._upstream()
            except OSError:
                client.close()
                continue
            with self._lock:
                if self._listener is not listener:
                    client.close()
                    server.close()
                    return
                self._sockets |= {client, server}
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                self._flowing.wait()
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)


def database_proxy(database_url: str) -> tuple[TcpProxy, str]:
    """A proxy in front of the database's server, and the database's URL through it."""
    url = sa.make_url(database_url)
    socket_dir = url.query.get("host")
    if isinstance(socket_dir, str):  # the embedded server listens on a Unix socket only
        path = f"{socket_dir}/.s.PGSQL.{url.port or 5432}"

        def upstream() -> socket.socket:
            sock = socket.socket(socket.AF_UNIX)
            sock.connect(path)
            return sock

    else:
        address = (url.host or "127.0.0.1", url.port or 5432)

        def upstream() -> socket.socket:
            return socket.create_connection(address)

    proxy = TcpProxy(upstream)
    proxied = url.set(host="127.0.0.1", port=proxy.port, query={})
    return proxy, proxied.render_as_string(hide_password=False)


class SilentSwitch:
    """An address that accepts TCP connections and never says a word, as a switch that hangs or
    an address whose packets vanish: a client waits for its whole timeout, where a closed port
    refuses at once."""

    def __init__(self) -> None:
        self._listener = socket.socket()
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(128)  # the kernel completes handshakes; nobody accepts them
        self.address = f"127.0.0.1:{self._listener.getsockname()[1]}"

    def close(self) -> None:
        self._listener.close()


class QueueWatch:
    """Samples the length of Celery's queue in Redis (`celery`: waiting; `unacked`: delivered
    to a worker, running or held for a countdown) every `period_s` until stopped."""

    def __init__(self, redis_url: str, period_s: float = 0.1) -> None:
        self._client = redis.Redis.from_url(redis_url)
        self._period_s = period_s
        self._stopping = threading.Event()
        self.samples: list[tuple[int, int]] = []
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stopping.wait(self._period_s):
            pipe = self._client.pipeline()
            pipe.llen("celery")
            pipe.hlen("unacked")
            waiting, delivered = pipe.execute()
            self.samples.append((int(waiting), int(delivered)))

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join()
        self._client.close()

    @property
    def longest(self) -> int:
        """The most tasks queued or delivered at once."""
        return max((w + d for w, d in self.samples), default=0)
