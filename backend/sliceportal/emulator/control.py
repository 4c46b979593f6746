"""The emulator's side door: start and stop traffic over HTTP. Emulator-only.

A real switch has no such thing: P4Runtime configures what a switch does to packets, not which
packets arrive. The emulator has to make its own traffic, and this door lets a demo, a test or
an operator change it while the switch runs. It is plain HTTP with JSON, no authentication:
bind it to 127.0.0.1 (the default), never to a public address.

    GET    /traffic                   the model's status: clock, simulated time, sources, ports
    POST   /traffic/start             start every source       POST /traffic/stop  stop them all
    POST   /traffic/{name}/start      start one source          POST /traffic/{name}/stop
    PUT    /traffic/{name}            add or replace a source (a source object of the profile)
    DELETE /traffic/{name}            remove a source
    PUT    /ports/{port}              {"rate_bps": ..., "queue_depth": ...}

Answers are JSON; errors are ``{"error": "..."}`` with status 400 (bad input) or 404.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from sliceportal.emulator.model.ports import PortConfigError
from sliceportal.emulator.model.switch_model import PacketModel
from sliceportal.emulator.model.traffic import ProfileError, parse_ports, parse_source

logger = logging.getLogger(__name__)

DEFAULT_CONTROL_ADDRESS = "127.0.0.1:9560"
_MAX_BODY = 1 << 20


class _Refused(Exception):
    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class ControlServer:
    """The side door of one `PacketModel`, served from a background thread."""

    def __init__(self, model: PacketModel, address: str = DEFAULT_CONTROL_ADDRESS) -> None:
        host, _, port = address.rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"the control address must be HOST:PORT, got {address!r}")
        self.model = model
        handler = type("Handler", (_Handler,), {"model": model})
        try:
            self._http = ThreadingHTTPServer((host, int(port)), handler)
        except OSError as exc:
            raise OSError(f"cannot listen on {address}: {exc.strerror or exc}") from exc
        self._http.daemon_threads = True
        self.address = f"{host}:{self._http.server_address[1]}"
        self._thread = threading.Thread(
            target=self._http.serve_forever, args=(0.1,), name="emulator-control", daemon=True
        )

    def start(self) -> None:
        self._thread.start()
        logger.info("emulator traffic control on http://%s/traffic", self.address)

    def stop(self) -> None:
        if self._thread.is_alive():
            self._http.shutdown()
        self._http.server_close()

    def __enter__(self) -> ControlServer:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()


class _Handler(BaseHTTPRequestHandler):
    model: PacketModel
    server_version = "sliceportal-emulator-control"

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug("control: " + format, *args)

    def do_GET(self) -> None:
        self._answer(self._get)

    def do_POST(self) -> None:
        self._answer(self._post)

    def do_PUT(self) -> None:
        self._answer(self._put)

    def do_DELETE(self) -> None:
        self._answer(self._delete)

    def _answer(self, route: Callable[[list[str]], object]) -> None:
        parts = [p for p in self.path.split("?", 1)[0].split("/") if p]
        try:
            body = route(parts)
            status = HTTPStatus.OK
        except _Refused as exc:
            status, body = exc.status, {"error": exc.message}
        except KeyError as exc:
            status, body = HTTPStatus.NOT_FOUND, {"error": f"no source named {exc.args[0]!r}"}
        data = json.dumps(body, allow_nan=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> object:
        length = int(self.headers.get("Content-Length") or 0)
        if not 0 < length <= _MAX_BODY:
            raise _Refused(HTTPStatus.BAD_REQUEST, "send a JSON body (at most 1 MB)")
        try:
            return json.loads(self.rfile.read(length))
        except ValueError as exc:
            raise _Refused(HTTPStatus.BAD_REQUEST, f"not JSON: {exc}") from None

    def _get(self, parts: list[str]) -> object:
        if parts == ["traffic"]:
            return self.model.status()
        raise _not_found(self.path)

    def _post(self, parts: list[str]) -> object:
        if len(parts) == 2 and parts[0] == "traffic" and parts[1] in ("start", "stop"):
            for name in self.model.source_names():
                getattr(self.model, parts[1])(name)
            return self.model.status()
        if len(parts) == 3 and parts[0] == "traffic" and parts[2] in ("start", "stop"):
            getattr(self.model, parts[2])(parts[1])
            return self.model.status()
        raise _not_found(self.path)

    def _put(self, parts: list[str]) -> object:
        if len(parts) == 2 and parts[0] == "traffic":
            doc = self._body()
            if isinstance(doc, dict) and doc.setdefault("name", parts[1]) != parts[1]:
                raise _Refused(HTTPStatus.BAD_REQUEST, "the body names another source")
            try:
                self.model.put_source(parse_source(doc))
            except ProfileError as exc:
                raise _Refused(HTTPStatus.BAD_REQUEST, str(exc)) from None
            return self.model.status()
        if len(parts) == 2 and parts[0] == "ports":
            try:
                ((port, config),) = parse_ports({parts[1]: self._body()}).items()
                self.model.set_port(port, config)
            except (ProfileError, PortConfigError) as exc:
                raise _Refused(HTTPStatus.BAD_REQUEST, str(exc)) from None
            return self.model.status()
        raise _not_found(self.path)

    def _delete(self, parts: list[str]) -> object:
        if len(parts) == 2 and parts[0] == "traffic":
            self.model.remove_source(parts[1])
            return self.model.status()
        raise _not_found(self.path)


def _not_found(path: str) -> _Refused:
    return _Refused(HTTPStatus.NOT_FOUND, f"no such resource: {path} (see GET /traffic)")
