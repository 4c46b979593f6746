"""A raw-gRPC P4Runtime controller and message builders for the emulator tests.

The ids are those of `data/test.p4info.txtpb`.
"""

from __future__ import annotations

import queue
import threading
from pathlib import Path
from typing import Any

import grpc

from sliceportal.p4rt.proto import p4i, p4r, p4r_grpc, rpc_status, text_format

P4INFO = Path(__file__).parent / "data" / "test.p4info.txtpb"

CLASSIFIER = 33554433  # exact vid (12 bits) + lpm dst (32), size 4, direct counter
ACL = 33554434  # ternary src (32) + range dport (16) + optional proto (8), const default
SLICE_BY_ID = 33554435  # exact slice id (16), size 8192
SET_SLICE = 16777217  # slice_id (16), port (9), priority (3)
DROP = 16777218
TO_DEFAULT_SLICE = 16777219  # port (9); default-only in the classifier
NO_ACTION = 16777220
SLICE_FORWARDED = 302006785  # 4096 cells, packets and bytes
DELAY_HISTOGRAM = 302006786  # 32768 cells, packets
CLASSIFIER_HITS = 318767105  # the classifier's direct counter
VQ_DELAY = 369098753  # bit<32> x 4096
VQ_LAST_TIMESTAMP = 369098754  # bit<48> x 4096

Code = grpc.StatusCode


def load_p4info(path: Path = P4INFO) -> Any:
    message = p4i.P4Info()
    text_format.Parse(path.read_text(), message)
    return message


# -- builders ---------------------------------------------------------------------------------


def exact(field_id: int, value: bytes) -> Any:
    match = p4r.FieldMatch(field_id=field_id)
    match.exact.value = value
    return match


def lpm(field_id: int, value: bytes, prefix_len: int) -> Any:
    match = p4r.FieldMatch(field_id=field_id)
    match.lpm.value = value
    match.lpm.prefix_len = prefix_len
    return match


def ternary(field_id: int, value: bytes, mask: bytes) -> Any:
    match = p4r.FieldMatch(field_id=field_id)
    match.ternary.value = value
    match.ternary.mask = mask
    return match


def range_(field_id: int, low: bytes, high: bytes) -> Any:
    match = p4r.FieldMatch(field_id=field_id)
    match.range.low = low
    match.range.high = high
    return match


def optional(field_id: int, value: bytes) -> Any:
    match = p4r.FieldMatch(field_id=field_id)
    match.optional.value = value
    return match


def table_entry(
    table_id: int,
    matches: list[Any] | tuple[Any, ...] = (),
    action_id: int | None = None,
    params: dict[int, bytes] | None = None,
    **fields: Any,
) -> Any:
    entry = p4r.TableEntry(table_id=table_id, **fields)
    entry.match.extend(matches)
    if action_id is not None:
        action = entry.action.action
        action.action_id = action_id
        for param_id, value in (params or {}).items():
            action.params.add(param_id=param_id, value=value)
    return entry


def canonical(value: int) -> bytes:
    """The shortest byte string of `value`, as P4Runtime reads return it."""
    return value.to_bytes((value.bit_length() + 7) // 8 or 1, "big")


def slice_entry(slice_id: int, port: int = 1, priority: int = 0, **fields: Any) -> Any:
    """An entry of the exact-match SLICE_BY_ID table, in canonical form."""
    return table_entry(
        SLICE_BY_ID,
        [exact(1, canonical(slice_id))],
        SET_SLICE,
        {1: canonical(slice_id), 2: canonical(port), 3: canonical(priority)},
        **fields,
    )


def classifier_entry(vid: int, dst: bytes, prefix_len: int, slice_id: int = 1) -> Any:
    return table_entry(
        CLASSIFIER,
        [exact(1, canonical(vid)), lpm(2, dst, prefix_len)],
        SET_SLICE,
        {1: canonical(slice_id), 2: b"\x01", 3: b"\x07"},
    )


def entity(message: Any) -> Any:
    """Wrap a TableEntry, CounterEntry, ... in an Entity."""
    field = {
        "TableEntry": "table_entry",
        "CounterEntry": "counter_entry",
        "DirectCounterEntry": "direct_counter_entry",
        "RegisterEntry": "register_entry",
        "MeterEntry": "meter_entry",
    }[type(message).__name__]
    wrapped = p4r.Entity()
    getattr(wrapped, field).CopyFrom(message)
    return wrapped


def update(kind: int, message: Any) -> Any:
    return p4r.Update(type=kind, entity=entity(message))


INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE


def counter_entry(counter_id: int, index: int | None = None, **data: int) -> Any:
    entry = p4r.CounterEntry(counter_id=counter_id)
    if index is not None:
        entry.index.index = index
    if data:
        entry.data.CopyFrom(p4r.CounterData(**data))
    return entry


def register_entry(register_id: int, index: int | None = None, value: bytes | None = None) -> Any:
    entry = p4r.RegisterEntry(register_id=register_id)
    if index is not None:
        entry.index.index = index
    if value is not None:
        entry.data.bitstring = value
    return entry


def batch_errors(error: grpc.RpcError) -> list[Any]:
    """The p4.v1.Error of every update of a failed Write, in order."""
    for key, value in error.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            status = rpc_status.Status.FromString(value)
            out = []
            for detail in status.details:
                p4_error = p4r.Error()
                assert detail.Unpack(p4_error)
                out.append(p4_error)
            return out
    raise AssertionError(f"no error details in {error!r}")


# -- the controller ---------------------------------------------------------------------------


class Controller:
    """One controller: a StreamChannel for arbitration and the unary RPCs, over real gRPC."""

    def __init__(
        self,
        address: str,
        election_id: int | None = 1,
        *,
        device_id: int = 1,
        role: str = "",
        arbitrate: bool = True,
    ) -> None:
        # Status details of a 1,000-update batch exceed gRPC's 8 KB metadata default.
        self.channel = grpc.insecure_channel(address, options=[("grpc.max_metadata_size", 1 << 20)])
        self.stub = p4r_grpc.P4RuntimeStub(self.channel)
        self.device_id = device_id
        self.role = role
        self.election_id = election_id
        self._out: queue.Queue[Any] = queue.Queue()
        self.inbox: queue.Queue[Any] = queue.Queue()
        self._stream = self.stub.StreamChannel(iter(self._out.get, None))
        self._reader = threading.Thread(target=self._read_stream, daemon=True)
        self._reader.start()
        if arbitrate:
            response = self.arbitrate()
            assert response.HasField("arbitration"), response

    def _read_stream(self) -> None:
        try:
            for message in self._stream:
                self.inbox.put(message)
        except grpc.RpcError as exc:
            self.inbox.put(exc)
        self.inbox.put(None)

    def arbitrate(self, *, device_id: int | None = None) -> Any:
        """Send a MasterArbitrationUpdate with this controller's election id and role (change
        them first to re-arbitrate); return the next stream message."""
        request = p4r.StreamMessageRequest()
        update = request.arbitration
        update.device_id = self.device_id if device_id is None else device_id
        if self.role:
            update.role.name = self.role
        self._election(update)
        self._out.put(request)
        return self.next_message()

    def send(self, request: Any) -> None:
        self._out.put(request)

    def next_message(self, timeout: float = 5.0) -> Any:
        """The next stream message; raises the stream's RpcError if it ended with one."""
        message = self.inbox.get(timeout=timeout)
        if isinstance(message, grpc.RpcError):
            raise message
        return message

    def has_message(self, wait: float = 0.3) -> bool:
        try:
            message = self.inbox.get(timeout=wait)
        except queue.Empty:
            return False
        self.inbox.put(message)
        return True

    def _election(self, request: Any) -> None:
        if self.election_id is not None:
            request.election_id.high = self.election_id >> 64
            request.election_id.low = self.election_id & ((1 << 64) - 1)

    def write_request(self, *updates: Any, atomicity: int = 0) -> Any:
        request = p4r.WriteRequest(device_id=self.device_id, role=self.role, atomicity=atomicity)
        self._election(request)
        request.updates.extend(updates)
        return request

    def write(self, *updates: Any, atomicity: int = 0) -> None:
        self.stub.Write(self.write_request(*updates, atomicity=atomicity))

    def read(self, *entities: Any, device_id: int | None = None) -> list[Any]:
        request = p4r.ReadRequest(device_id=self.device_id if device_id is None else device_id)
        request.entities.extend(entity(e) for e in entities)
        return [e for response in self.stub.Read(request) for e in response.entities]

    def set_pipeline(
        self,
        action: int = p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT,
        p4info: Any = None,
        device_config: bytes = b"",
        cookie: int | None = None,
        *,
        with_config: bool = True,
    ) -> None:
        request = p4r.SetForwardingPipelineConfigRequest(
            device_id=self.device_id, role=self.role, action=action
        )
        self._election(request)
        if with_config:
            request.config.p4info.CopyFrom(load_p4info() if p4info is None else p4info)
            request.config.p4_device_config = device_config
            if cookie is not None:
                request.config.cookie.cookie = cookie
        self.stub.SetForwardingPipelineConfig(request)

    def get_pipeline(self, response_type: int = 0) -> Any:
        request = p4r.GetForwardingPipelineConfigRequest(
            device_id=self.device_id, response_type=response_type
        )
        return self.stub.GetForwardingPipelineConfig(request)

    def close(self) -> None:
        self._out.put(None)
        self._stream.cancel()
        self._reader.join(timeout=5)
        self.channel.close()
