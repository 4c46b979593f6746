"""The emulator's gRPC server: `EmulatorServer` for in-process use, `run_forever` for the CLI.

The P4Runtime service is registered through a generic handler rather than the generated
`add_P4RuntimeServicer_to_server`, so that a malformed Write or Read answers INVALID_ARGUMENT
(not INTERNAL) and Read streams serialized ReadResponses as they come (counter and register
cells are encoded column-wise, `p4rt.cells`); every message is a generated one.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any, NoReturn, TypeVar

import grpc  # type: ignore[import-untyped, unused-ignore]
from google.protobuf.message import DecodeError

from sliceportal.emulator.arbitration import MAX_SESSIONS, StreamEnd
from sliceportal.emulator.defaults import DEFAULT_DEVICE_ID, DEFAULT_GRPC_ADDRESS, DEFAULT_P4INFO
from sliceportal.emulator.errors import Code, P4RuntimeError
from sliceportal.emulator.pipeline import PipelineModel
from sliceportal.emulator.service import P4RuntimeService, WriteBatchError, batch_status
from sliceportal.p4rt.p4info import P4InfoIndex
from sliceportal.p4rt.proto import p4r

logger = logging.getLogger(__name__)

# Pipeline configs (BMv2 JSON) and big batches exceed gRPC's 4 MB default.
MAX_MESSAGE_BYTES = 64 << 20

_STATUS_CODES = {status.value[0]: status for status in grpc.StatusCode}
T = TypeVar("T")


class EmulatorServer:
    """A P4Runtime switch emulator serving one device on `grpc_address`.

    Starts with no pipeline, like a switch fresh from boot, unless `load_pipeline` is set.
    Use `"127.0.0.1:0"` to get a free port (then read `address`). `like_bmv2`: behave as BMv2
    where clients could otherwise rely on the emulator being kinder (`P4RuntimeService`).
    `write_delay_s` makes each written update take that long (a slow switch, for fault tests;
    `service.write_delay_s` changes it while it runs).
    """

    def __init__(
        self,
        grpc_address: str = DEFAULT_GRPC_ADDRESS,
        device_id: int = DEFAULT_DEVICE_ID,
        p4info_path: Path | None = None,
        *,
        load_pipeline: bool = False,
        model: PipelineModel | None = None,
        like_bmv2: bool = False,
        write_delay_s: float = 0.0,
    ) -> None:
        program = P4InfoIndex.from_file(p4info_path or DEFAULT_P4INFO)
        self.service = P4RuntimeService(program, device_id, model, like_bmv2=like_bmv2)
        self.service.write_delay_s = write_delay_s
        if load_pipeline:
            self.service.load_pipeline()
        # Each open StreamChannel holds a worker thread; leave as many for unary RPCs.
        self._server = grpc.server(
            ThreadPoolExecutor(max_workers=2 * MAX_SESSIONS, thread_name_prefix="p4rt"),
            options=[
                ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
                ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
                ("grpc.so_reuseport", 0),
            ],
        )
        self._server.add_generic_rpc_handlers((_handler(self.service),))
        host = grpc_address.rsplit(":", 1)[0]
        try:
            port = int(self._server.add_insecure_port(grpc_address))
        except RuntimeError as exc:  # grpcio raises instead of returning 0 on bind failure
            raise OSError(f"cannot listen on {grpc_address}: {exc}") from exc
        if port == 0:
            raise OSError(f"cannot listen on {grpc_address}")
        self.address = f"{host}:{port}"

    def start(self) -> None:
        self._server.start()
        logger.info("P4Runtime switch emulator on %s", self.address)

    def stop(self, grace: float | None = None) -> None:
        """Stop serving; all state is lost, as when a switch restarts."""
        self._server.stop(grace).wait()
        self.service.close()

    def __enter__(self) -> EmulatorServer:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()


def run_forever(server: EmulatorServer) -> None:
    """Serve until SIGINT or SIGTERM."""
    stopping = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stopping.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    server.start()
    try:
        stopping.wait()
    finally:
        server.stop(grace=1.0)


# -- gRPC adaptation --------------------------------------------------------------------------


def _abort(context: Any, code: Code, message: str) -> NoReturn:
    context.abort(_STATUS_CODES[int(code)], message)
    raise AssertionError("context.abort returns only by raising")


def _guard(context: Any, call: Callable[[], T]) -> T:
    """Run `call`, turning its P4RuntimeError (or a bug) into the RPC's status.

    `call` must not abort the RPC itself: `context.abort` raises a bare Exception.
    """
    try:
        return call()
    except WriteBatchError as exc:
        details = batch_status(
            Code.UNKNOWN,
            exc.message,
            (None if r is None else (int(r.code), r.message) for r in exc.results),
        )
        context.set_trailing_metadata((("grpc-status-details-bin", details),))
        _abort(context, Code.UNKNOWN, exc.message)
    except P4RuntimeError as exc:
        _abort(context, exc.code, exc.message)
    except Exception:
        logger.exception("P4Runtime request failed inside the emulator")
        _abort(context, Code.INTERNAL, "the emulator failed on this request (see its log)")


def _decoder(decode: Callable[[bytes], T]) -> Callable[[bytes], T | DecodeError]:
    """Hand decoding errors to the handler, which answers INVALID_ARGUMENT (not INTERNAL)."""

    def deserialize(data: bytes) -> T | DecodeError:
        try:
            return decode(data)
        except DecodeError as exc:
            return exc

    return deserialize


def _decoded(context: Any, request: T | DecodeError) -> T:
    if isinstance(request, DecodeError):
        _abort(context, Code.INVALID_ARGUMENT, f"malformed request: {request}")
    return request


def _handler(service: P4RuntimeService) -> Any:
    def write(request: p4r.WriteRequest | DecodeError, context: Any) -> bytes:
        decoded = _decoded(context, request)
        _guard(context, lambda: service.write(decoded))
        return b""

    def read(request: p4r.ReadRequest | DecodeError, context: Any) -> Iterator[bytes]:
        decoded = _decoded(context, request)
        yield from _guard(context, lambda: service.read(decoded))

    def set_pipeline(request: Any, context: Any) -> Any:
        decoded = _decoded(context, request)
        _guard(context, lambda: service.set_pipeline(decoded))
        return p4r.SetForwardingPipelineConfigResponse()

    def get_pipeline(request: Any, context: Any) -> Any:
        decoded = _decoded(context, request)
        return _guard(context, lambda: service.get_pipeline(decoded))

    def capabilities(request: Any, context: Any) -> Any:
        return service.capabilities()

    def stream_channel(requests: Iterator[Any], context: Any) -> Iterator[Any]:
        try:
            session = service.open_stream(requests)
        except P4RuntimeError as exc:
            _abort(context, exc.code, exc.message)
        # Wakes the loop below when the RPC ends from the client's side or at server stop.
        context.add_callback(lambda: session.outbox.put(StreamEnd()))
        try:
            while True:
                item = session.outbox.get()
                if isinstance(item, StreamEnd):
                    if item.code != Code.OK:
                        _abort(context, item.code, item.message)
                    return
                yield item
        finally:
            service.close_stream(session)

    def identity(data: bytes) -> bytes:
        return data

    return grpc.method_handlers_generic_handler(
        "p4.v1.P4Runtime",
        {
            "Write": grpc.unary_unary_rpc_method_handler(
                write,
                request_deserializer=_decoder(p4r.WriteRequest.FromString),
                response_serializer=identity,
            ),
            "Read": grpc.unary_stream_rpc_method_handler(
                read,
                request_deserializer=_decoder(p4r.ReadRequest.FromString),
                response_serializer=identity,
            ),
            "SetForwardingPipelineConfig": grpc.unary_unary_rpc_method_handler(
                set_pipeline,
                request_deserializer=_decoder(p4r.SetForwardingPipelineConfigRequest.FromString),
                response_serializer=p4r.SetForwardingPipelineConfigResponse.SerializeToString,
            ),
            "GetForwardingPipelineConfig": grpc.unary_unary_rpc_method_handler(
                get_pipeline,
                request_deserializer=_decoder(p4r.GetForwardingPipelineConfigRequest.FromString),
                response_serializer=p4r.GetForwardingPipelineConfigResponse.SerializeToString,
            ),
            "Capabilities": grpc.unary_unary_rpc_method_handler(
                capabilities,
                request_deserializer=p4r.CapabilitiesRequest.FromString,
                response_serializer=p4r.CapabilitiesResponse.SerializeToString,
            ),
            "StreamChannel": grpc.stream_stream_rpc_method_handler(
                stream_channel,
                request_deserializer=p4r.StreamMessageRequest.FromString,
                response_serializer=p4r.StreamMessageResponse.SerializeToString,
            ),
        },
    )
