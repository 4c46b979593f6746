"""A real Celery worker on the test Redis and a real local HTTP receiver, for the tests of
everything the workers deliver to webhooks (alerts, reports)."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from celery.contrib.testing.worker import start_worker

from sliceportal.core.config import Settings, get_settings
from sliceportal.db.session import process_engine
from sliceportal.taskqueue import celery_app, direct_queue


def reconnect() -> None:
    """Make the app build its queues and broker connections again from its configuration (it
    builds them once per process; `_after_fork` is its own hook for starting afresh)."""
    celery_app._after_fork()
    celery_app.__dict__.pop("amqp", None)


@contextmanager
def celery_worker(settings: Settings, **environment: str) -> Iterator[None]:
    """A Celery worker thread on the test Redis, on a queue of this run's own (other test
    runs may share the Redis: their workers would take our tasks and not find our rows).
    ``environment`` adds settings the tasks read (e.g. ``SLICEPORTAL_REPORT_WEBHOOK_URLS``)."""
    default_queue, queues = celery_app.conf.task_default_queue, celery_app.conf.task_queues
    own = f"test-{uuid.uuid4().hex}"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DATABASE_URL", settings.database_url)
        patch.setenv("REDIS_URL", settings.redis_url)
        for name, value in environment.items():
            patch.setenv(name, value)
        get_settings.cache_clear()
        process_engine.cache_clear()
        celery_app.conf.update(
            broker_url=settings.redis_url,
            task_default_queue=own,
            task_queues=[direct_queue(own)],  # the worker takes this queue only
        )
        reconnect()
        try:
            with start_worker(
                celery_app, pool="solo", perform_ping_check=False, loglevel="WARNING"
            ):
                yield
        finally:
            celery_app.conf.update(task_default_queue=default_queue, task_queues=queues)
            reconnect()
            get_settings.cache_clear()
            process_engine.cache_clear()


@contextmanager
def receiver(statuses: list[int]) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """An HTTP server answering `statuses` in turn (then 200); yields its URL and requests."""
    received: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.append({"headers": dict(self.headers), "body": json.loads(body)})
            self.send_response(statuses.pop(0) if statuses else 200)
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/hook", received
    finally:
        server.shutdown()
        server.server_close()
