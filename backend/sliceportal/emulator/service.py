"""The P4Runtime RPCs of one emulated device, independent of gRPC plumbing (see `server.py`).

Every method either returns its answer or raises `P4RuntimeError`; a Write batch with failed
updates raises `WriteBatchError`, which carries one result per update.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterable, Iterator
from itertools import chain
from typing import Any

from sliceportal.emulator import entities
from sliceportal.emulator.arbitration import Arbiter, Session, StreamEnd, election_id_of
from sliceportal.emulator.errors import Code, P4RuntimeError, invalid
from sliceportal.emulator.pipeline import NoTraffic, PipelineModel
from sliceportal.emulator.state import DeviceState
from sliceportal.p4rt.p4info import P4InfoIndex
from sliceportal.p4rt.proto import p4r, rpc_status

logger = logging.getLogger(__name__)

P4RUNTIME_API_VERSION = "1.4.1"
"""The P4Runtime version of the protos the emulator is built on (finsy's)."""
_SetAction = p4r.SetForwardingPipelineConfigRequest
_GetType = p4r.GetForwardingPipelineConfigRequest


class WriteBatchError(P4RuntimeError):
    """Some updates of a Write batch failed; `results` has one entry per update (None: OK)."""

    def __init__(self, results: list[P4RuntimeError | None]) -> None:
        failed = [(i, r) for i, r in enumerate(results) if r is not None]
        first_index, first = failed[0]
        super().__init__(
            Code.UNKNOWN,
            f"{len(failed)} of {len(results)} updates failed; first, update {first_index}: "
            f"{first.code.name}: {first.message}",
        )
        self.results = results


class P4RuntimeService:
    """The P4Runtime RPCs of one device. `like_bmv2` makes it behave as BMv2 does where a
    client could otherwise come to rely on the emulator being kinder (docs/emulator.md, "Like
    BMv2"): the highest live election id is primary (the one that remains is promoted when the
    primary leaves), a pipeline committed with an empty device config fails every Read and Write
    with UNKNOWN, and register reads answer UNIMPLEMENTED."""

    def __init__(
        self,
        program: P4InfoIndex,
        device_id: int = 1,
        model: PipelineModel | None = None,
        *,
        like_bmv2: bool = False,
    ) -> None:
        self.program = program
        self.device_id = device_id
        self.like_bmv2 = like_bmv2
        self.arbiter = Arbiter(device_id, highest_live_wins=like_bmv2)
        self._model = model or NoTraffic()
        self._lock = threading.Lock()  # guards the four fields below
        self._config: Any = None  # the ForwardingPipelineConfig saved or committed last
        self._uncommitted = False  # a VERIFY_AND_SAVE awaits its COMMIT
        self._unserved = False  # like BMv2: the committed config had no device config
        self._attached: DeviceState | None = None  # the state the model runs on
        self.state: DeviceState | None = None  # what Read and Write act on
        self.write_delay_s = 0.0
        """Seconds each update of a Write takes before the batch applies: a slow switch, so
        that a fault test can be sure to interrupt a push (0: as fast as it goes)."""

    # -- pipeline ---------------------------------------------------------------------------

    def load_pipeline(self) -> None:
        """Commit the modelled program as if a controller had (no device config, no cookie)."""
        config = p4r.ForwardingPipelineConfig()
        config.p4info.CopyFrom(self.program.message)
        with self._lock:
            self._commit(config, keep_state=False)
            self._unserved = False  # as BMv2 started with the program's JSON

    def set_pipeline(self, request: Any) -> None:
        """SetForwardingPipelineConfig."""
        self.arbiter.check_primary(request.device_id, request.role, election_id_of(request))
        action = request.action
        with self._lock:
            if action == _SetAction.COMMIT:
                if request.HasField("config"):
                    raise invalid(
                        "COMMIT takes no config: it realizes the one VERIFY_AND_SAVE saved"
                    )
                if not self._uncommitted:
                    raise P4RuntimeError(Code.NOT_FOUND, "no saved config to commit")
                self._commit(self._config, keep_state=True)
                return
            if action not in (
                _SetAction.VERIFY,
                _SetAction.VERIFY_AND_SAVE,
                _SetAction.VERIFY_AND_COMMIT,
                _SetAction.RECONCILE_AND_COMMIT,
            ):
                raise invalid(f"unknown SetForwardingPipelineConfig action {action}")
            self._verify(request)
            if action == _SetAction.VERIFY_AND_SAVE:
                self._config = request.config
                self._uncommitted = True
                if self.state is None:  # writes until COMMIT go to a fresh state
                    self.state = DeviceState(self.program)
            elif action != _SetAction.VERIFY:
                # Only the same program is accepted, so reconciling keeps every entry.
                keep = action == _SetAction.RECONCILE_AND_COMMIT
                self._commit(request.config, keep_state=keep)

    def _commit(self, config: Any, *, keep_state: bool) -> None:
        if not keep_state or self.state is None:
            self.state = DeviceState(self.program)
        self._config = config
        self._uncommitted = False
        self._unserved = self.like_bmv2 and not config.p4_device_config
        if self._attached is not self.state:
            if self._attached is not None:
                self._model.detach()
            self._model.attach(self.state)
            self._attached = self.state
        logger.info("pipeline committed on device %d", self.device_id)

    def _verify(self, request: Any) -> None:
        if not request.HasField("config"):
            raise invalid("the request carries no config")
        config = request.config
        try:
            incoming = P4InfoIndex(config.p4info)
        except ValueError as exc:
            raise invalid(f"the P4Info cannot be served: {exc}") from exc
        difference = self.program.first_difference(incoming)
        if difference is not None:
            raise invalid(
                f"the emulator models only its own program, and this P4Info differs: {difference}"
            )
        _check_device_config(config.p4_device_config)

    def get_pipeline(self, request: Any) -> Any:
        """GetForwardingPipelineConfig; `config` is unset while no pipeline is set."""
        if request.device_id != self.device_id:
            raise P4RuntimeError(Code.NOT_FOUND, f"no device with id {request.device_id}")
        kind = request.response_type
        if kind not in _GetType.ResponseType.values():
            raise invalid(f"unknown response_type {kind}")
        response = p4r.GetForwardingPipelineConfigResponse()
        with self._lock:
            config = self._config
        if config is None:
            return response
        out = response.config
        out.SetInParent()
        if kind in (_GetType.ALL, _GetType.P4INFO_AND_COOKIE):
            out.p4info.CopyFrom(config.p4info)
        if kind in (_GetType.ALL, _GetType.DEVICE_CONFIG_AND_COOKIE):
            out.p4_device_config = config.p4_device_config
        if config.HasField("cookie"):
            out.cookie.CopyFrom(config.cookie)
        return response

    # -- entities ---------------------------------------------------------------------------

    def write(self, request: p4r.WriteRequest) -> None:
        self.arbiter.check_primary(request.device_id, request.role, election_id_of(request))
        state = self._require_state()
        if request.atomicity != 0:  # only CONTINUE_ON_ERROR, as on BMv2
            raise P4RuntimeError(
                Code.UNIMPLEMENTED, "only CONTINUE_ON_ERROR batches are supported (as on BMv2)"
            )
        if self.write_delay_s:
            time.sleep(self.write_delay_s * len(request.updates))
        results: list[P4RuntimeError | None] = []
        failed = False
        with state.lock:
            for update in request.updates:
                try:
                    entities.apply_update(state, update)
                    results.append(None)
                except P4RuntimeError as exc:
                    results.append(exc)
                    failed = True
        if failed:
            raise WriteBatchError(results)

    def read(self, request: p4r.ReadRequest) -> Iterator[bytes]:
        """Serialized ReadResponses; an invalid request fails the whole Read, as on BMv2."""
        if request.device_id != self.device_id:
            raise P4RuntimeError(Code.NOT_FOUND, f"no device with id {request.device_id}")
        state = self._require_state()
        parts: list[Iterable[bytes]] = []
        with state.lock:
            for i, entity in enumerate(request.entities):
                if self.like_bmv2 and entity.WhichOneof("entity") == "register_entry":
                    raise P4RuntimeError(
                        Code.UNIMPLEMENTED, "register reads are not implemented (p4lang/PI#376)"
                    )
                try:
                    parts.append(entities.read(state, entity))
                except P4RuntimeError as exc:
                    where = f"entity {i}: " if len(request.entities) > 1 else ""
                    raise P4RuntimeError(exc.code, where + exc.message) from None
        return _at_least_one(read_responses(chain.from_iterable(parts)))

    def _require_state(self) -> DeviceState:
        state = self.state
        if state is None:
            raise P4RuntimeError(
                Code.FAILED_PRECONDITION, "no forwarding pipeline config is set on this device"
            )
        if self._unserved:
            raise P4RuntimeError(
                Code.UNKNOWN,
                "the pipeline was committed with an empty p4_device_config: there is no "
                "program to serve (as on BMv2, which accepts it and then fails every request)",
            )
        return state

    # -- stream -----------------------------------------------------------------------------

    def open_stream(self, requests: Iterator[Any]) -> Session:
        """Serve one StreamChannel: a thread consumes `requests`; answers queue in the outbox."""
        session = self.arbiter.open()
        thread = threading.Thread(
            target=self._serve_stream, args=(session, requests), name="p4rt-stream", daemon=True
        )
        thread.start()
        return session

    def close_stream(self, session: Session) -> None:
        self.arbiter.close(session)

    def _serve_stream(self, session: Session, requests: Iterator[Any]) -> None:
        end = StreamEnd()
        try:
            for request in requests:
                kind = request.WhichOneof("update")
                if kind == "arbitration":
                    try:
                        self.arbiter.arbitrate(session, request.arbitration)
                    except P4RuntimeError as exc:
                        end = StreamEnd(exc.code, exc.message)
                        return
                else:
                    session.outbox.put(_stream_error(request, kind))
        except Exception:  # gRPC raises from the iterator when the client goes away
            logger.debug("stream closed by the client", exc_info=True)
        finally:
            session.outbox.put(end)

    @staticmethod
    def capabilities() -> Any:
        return p4r.CapabilitiesResponse(p4runtime_api_version=P4RUNTIME_API_VERSION)

    def close(self) -> None:
        """The device goes away: stop the model."""
        with self._lock:
            if self._attached is not None:
                self._model.detach()
                self._attached = None


def _check_device_config(data: bytes) -> None:
    """Accept no device config, or one that looks like BMv2's JSON (the program's compile)."""
    if not data:
        return
    try:
        document = json.loads(data)
    except ValueError:
        raise invalid("p4_device_config is neither empty nor a BMv2 JSON") from None
    if not isinstance(document, dict) or "pipelines" not in document:
        raise invalid("p4_device_config is JSON but not a BMv2 JSON (no 'pipelines')")


def _stream_error(request: Any, kind: str | None) -> Any:
    """The emulator has no packet I/O or digests (yet): say so on the stream."""
    response = p4r.StreamMessageResponse()
    error = response.error
    error.canonical_code = Code.UNIMPLEMENTED
    if kind == "packet":
        error.message = "the emulator does not do packet I/O"
        error.packet_out.packet_out.CopyFrom(request.packet)
    elif kind == "digest_ack":
        error.message = "the emulator sends no digests"
        error.digest_list_ack.digest_list_ack.CopyFrom(request.digest_ack)
    else:
        error.message = f"unsupported stream message {kind!r}"
        error.other.SetInParent()
    return response


def read_responses(parts: Iterable[bytes], max_bytes: int = 256 << 10) -> Iterator[bytes]:
    """Serialized ReadResponse parts (whole entities each; cells come `p4rt.cells.CHUNK_CELLS`
    to a part) packed into ReadResponses of at most `max_bytes` unless one part is bigger:
    gRPC clients refuse messages over 4 MB by default, so a large read is streamed in parts,
    and small ones let a client decode a part while the next is encoded and sent."""
    packed: list[bytes] = []
    size = 0
    for part in parts:
        if packed and size + len(part) > max_bytes:
            yield b"".join(packed)
            packed, size = [], 0
        packed.append(part)
        size += len(part)
    if packed:
        yield b"".join(packed)


def batch_status(code: int, message: str, errors: Iterable[tuple[int, str] | None]) -> bytes:
    """A serialized google.rpc.Status whose details hold one p4.v1.Error per update (None for
    OK): what P4Runtime clients read from the `grpc-status-details-bin` trailer of a failed
    Write."""
    status = rpc_status.Status(code=code, message=message)
    ok = p4r.Error()
    for error in errors:
        detail = status.details.add()
        if error is None:
            detail.Pack(ok)
        else:
            error_code, error_message = error
            detail.Pack(
                p4r.Error(
                    canonical_code=error_code, message=error_message, space="sliceportal-emulator"
                )
            )
    return status.SerializeToString()


def _at_least_one(responses: Iterator[bytes]) -> Iterator[bytes]:
    """BMv2 answers every Read with at least one (possibly empty) ReadResponse."""
    empty = True
    for response in responses:
        empty = False
        yield response
    if empty:
        yield b""
