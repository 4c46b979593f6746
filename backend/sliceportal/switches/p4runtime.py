"""The portal's P4Runtime adapter: the only module that imports p4runtime-shell.

One `SwitchSession` per switch and process (kept in a `SessionPool`), built on
`p4runtime_sh.p4runtime.P4RuntimeClient` — never the shell's global client — with what that
class lacks for a control plane:

- channel options: P4Runtime's per-update errors of a failed batch travel in the
  `grpc-status-details-bin` trailer, which exceeds gRPC's default metadata limit for big
  batches (the specification advises 8192 + 100 bytes per update; we allow 1 KiB per update,
  since error messages vary), and big reads exceed the default message size;
- TLS and mutual TLS from the switch's configured CA, certificate and key;
- errors raised, never `sys.exit` (the client's constructor exits the process when a switch
  does not answer) and arbitration on demand: a session opens its StreamChannel, with the
  switch's election id, only to write or push a pipeline. Readers (the telemetry poller) never
  compete for mastership, and the control plane releases it after each reconciliation, since a
  second stream with the same election id is refused and every worker process has its own
  session;
- Write and Read go over the client's channel as hand-encoded bytes (`sliceportal.p4rt.wire`),
  because p4runtime-shell's `write` loops forever on a partly failed batch (its error iterator
  does not advance past OK entries) and the pure-Python protobuf it pins needs ~0.8 s to build
  1,000 entries and seconds to parse a large counter read;
- counter and register cells are asked for by array (`read_counters`): a whole array by one
  wildcard entity when most of its cells are wanted, else cell by cell, as BMv2 can afford;
  the answer becomes numpy columns through a compiled scanner (`sliceportal.p4rt.scan`), a few
  milliseconds for the 90,000 cells of 4,096 slices.

Updates go in batches of at most 1,000 per WriteRequest (CONTINUE_ON_ERROR, the only atomicity
BMv2 has); each update gets its own outcome, decoded from the batch's `p4.v1.Error`s. gRPC
failures become `SwitchError`, or `TransientSwitchError` for UNAVAILABLE and DEADLINE_EXCEEDED,
the only ones worth retrying.
"""

from __future__ import annotations

import hashlib
import logging
import os
import queue
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import grpc  # type: ignore[import-untyped, unused-ignore]
import numpy as np
import numpy.typing as npt
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc  # type: ignore[import-untyped, unused-ignore]
from p4runtime_sh.p4runtime import P4RuntimeClient  # type: ignore[import-untyped, unused-ignore]

from sliceportal.core.config import Settings, get_settings
from sliceportal.domain.dataplane import MeterConfig, TableEntry
from sliceportal.domain.reconcile import MANAGED_TABLES, EntryUpdate
from sliceportal.p4rt import wire
from sliceportal.p4rt.entries import EntryCodec
from sliceportal.p4rt.p4info import P4InfoIndex

if TYPE_CHECKING:
    from sliceportal.db.models import Switch

logger = logging.getLogger(__name__)

MAX_BATCH = 1000
"""Updates per WriteRequest at most: BMv2's sweet spot, and a bounded error trailer."""
METADATA_BYTES_PER_UPDATE = 1024
CACHED_REQUESTS = 8
"""Encoded Read requests of cell sets kept per session (a poller re-reads the same cells)."""
WILDCARD_SHARE = 0.5
"""An array is read whole (one wildcard entity) when at least this share of its cells is
wanted. BMv2 answers about 0.1 ms per cell either way, so a wildcard must not bring in many
unwanted cells; a poller within its cell budget (2,000 a period) never reaches half of a
4,096-cell array. The emulator answers a whole array in a millisecond or two."""
MAX_MESSAGE_BYTES = 64 << 20
TRANSIENT_CODES = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})
_STATUS_CODES = {status.value[0]: status for status in grpc.StatusCode}
_LOW_64 = (1 << 64) - 1
_GetConfig = p4runtime_pb2.GetForwardingPipelineConfigRequest
_SetConfig = p4runtime_pb2.SetForwardingPipelineConfigRequest


class SwitchError(Exception):
    """A switch refused a request or could not be reached; `code` is the gRPC status (None
    when the request never reached the switch, e.g. an unreadable certificate)."""

    def __init__(self, message: str, code: grpc.StatusCode | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __str__(self) -> str:
        return self.message if self.code is None else f"{self.code.name}: {self.message}"


class TransientSwitchError(SwitchError):
    """UNAVAILABLE or DEADLINE_EXCEEDED: the switch may answer later, so the task retries."""


def _rpc_error(exc: grpc.RpcError, what: str) -> SwitchError:
    code = exc.code()
    cls = TransientSwitchError if code in TRANSIENT_CODES else SwitchError
    return cls(f"{what}: {exc.details() or 'no details'}", code)


@dataclass(frozen=True)
class SwitchTarget:
    """How to reach one switch: what a session is keyed by (a change means a new session)."""

    switch_id: int
    address: str
    device_id: int
    election_id: int
    tls_ca_path: str | None = None
    tls_cert_path: str | None = None
    tls_key_path: str | None = None

    @classmethod
    def of(cls, switch: Switch) -> SwitchTarget:
        return cls(
            switch.id,
            switch.address,
            switch.device_id,
            switch.election_id,
            switch.tls_ca_path,
            switch.tls_cert_path,
            switch.tls_key_path,
        )

    @property
    def uses_tls(self) -> bool:
        return any((self.tls_ca_path, self.tls_cert_path, self.tls_key_path))


@dataclass(frozen=True)
class UpdateOutcome:
    """What the switch answered to one update of a batch."""

    code: grpc.StatusCode
    message: str = ""

    @property
    def ok(self) -> bool:
        return bool(self.code == grpc.StatusCode.OK)

    def __str__(self) -> str:
        return "OK" if self.ok else f"{self.code.name}: {self.message}"


OK = UpdateOutcome(grpc.StatusCode.OK)


def pipeline_cookie(p4info: bytes, device_config: bytes) -> int:
    """The cookie of a pipeline: the first 8 bytes of a SHA-256 over P4Info and device config
    (length-prefixed, so no two pairs collide by concatenation). Stable across runs and hosts,
    so a switch that reports it already runs exactly this pipeline."""
    digest = hashlib.sha256(len(p4info).to_bytes(8, "big") + p4info + device_config).digest()
    return int.from_bytes(digest[:8], "big")


@dataclass(frozen=True)
class Pipeline:
    """The program the portal deploys: its P4Info, BMv2 device config (empty when the program
    was not compiled: the emulator needs none) and cookie."""

    program: P4InfoIndex
    device_config: bytes
    cookie: int
    codec: EntryCodec

    @classmethod
    def load(cls, p4info_path: Path, device_config_path: Path) -> Pipeline:
        try:
            p4info = p4info_path.read_bytes()
        except OSError as exc:
            raise SwitchError(f"cannot read the P4Info {p4info_path}: {exc.strerror}") from None
        device_config = device_config_path.read_bytes() if device_config_path.is_file() else b""
        program = P4InfoIndex.from_file(p4info_path)
        return cls(
            program, device_config, pipeline_cookie(p4info, device_config), EntryCodec(program)
        )


@lru_cache(maxsize=4)
def load_pipeline(p4info_path: Path, device_config_path: Path) -> Pipeline:
    """`Pipeline.load`, once per process and pair of paths."""
    return Pipeline.load(p4info_path, device_config_path)


def settings_pipeline(settings: Settings) -> Pipeline:
    return load_pipeline(settings.p4info_path, settings.p4_device_config_path)


class _Client(P4RuntimeClient):  # type: ignore[misc]
    """p4runtime-shell's client on a channel of ours, arbitrating when asked, never exiting.

    `P4RuntimeClient.__init__` is deliberately not called: it opens a channel without options
    and arbitrates at once, calling `sys.exit` when the switch does not answer in 2 s. The
    stream machinery (`set_up_stream`, its receive thread and queues) is the library's.
    """

    def __init__(self, target: SwitchTarget, channel: Any, timeout_s: float) -> None:
        self.device_id = target.device_id
        self.election_id = (target.election_id >> 64, target.election_id & _LOW_64)
        self.role_name = None
        self.channel = channel
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(channel)
        self.stream_out_q: queue.Queue[Any] | None = None
        self.stream_in_q: dict[str, queue.Queue[Any]] | None = None
        self.stream_recv_thread: threading.Thread | None = None
        self.timeout_s = timeout_s
        self.is_primary = False

    def handshake(self) -> None:
        """Send our MasterArbitrationUpdate and wait for the switch's answer (no exit)."""
        assert self.stream_out_q is not None
        request = p4runtime_pb2.StreamMessageRequest()
        request.arbitration.device_id = self.device_id
        request.arbitration.election_id.high = self.election_id[0]
        request.arbitration.election_id.low = self.election_id[1]
        self.stream_out_q.put(request)
        reply = self.get_stream_packet("arbitration", timeout=self.timeout_s)
        if reply is None:
            self.end_stream()
            raise TransientSwitchError(
                "the switch did not answer the arbitration (stream closed or refused; "
                "is another controller using this election id?)",
                grpc.StatusCode.UNAVAILABLE,
            )
        self.is_primary = reply.arbitration.status.code == grpc.StatusCode.OK.value[0]

    @property
    def streaming(self) -> bool:
        return self.stream_recv_thread is not None and self.stream_recv_thread.is_alive()

    def end_stream(self) -> None:
        """Close the StreamChannel (giving up mastership), keeping the channel."""
        if self.stream_out_q is not None:
            self.stream_out_q.put(None)
        if self.stream_recv_thread is not None:
            self.stream_recv_thread.join(self.timeout_s)
            if self.stream_recv_thread.is_alive():
                self.stream.cancel()
                self.stream_recv_thread.join(self.timeout_s)
        self.stream_out_q = self.stream_in_q = self.stream_recv_thread = None
        self.is_primary = False


def _channel(target: SwitchTarget, batch_size: int) -> Any:
    options = [
        ("grpc.max_metadata_size", 8192 + METADATA_BYTES_PER_UPDATE * batch_size),
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        # gRPC backs off up to 2 minutes between reconnections; a restarted switch should be
        # found again within seconds.
        ("grpc.initial_reconnect_backoff_ms", 250),
        ("grpc.max_reconnect_backoff_ms", 2000),
        # gRPC shares one connection per address between channels by default: a new session
        # then inherited another channel's attempt still failing against the switch before
        # it restarted, and `wait_until_ready` reported that stale failure as its own.
        ("grpc.use_local_subchannel_pool", 1),
    ]
    if not target.uses_tls:
        return grpc.insecure_channel(target.address, options=options)

    def pem(path: str | None) -> bytes | None:
        if path is None:
            return None
        try:
            return Path(path).read_bytes()
        except OSError as exc:
            raise SwitchError(f"cannot read {path}: {exc.strerror}") from None

    credentials = grpc.ssl_channel_credentials(
        root_certificates=pem(target.tls_ca_path),
        private_key=pem(target.tls_key_path),
        certificate_chain=pem(target.tls_cert_path),
    )
    return grpc.secure_channel(target.address, credentials, options=options)


Cells = Mapping[str, npt.NDArray[np.int64]]
"""Counter or register array name -> the indices of the cells wanted."""
Column = npt.NDArray[np.uint64]


@dataclass(frozen=True)
class _ReadPlan:
    requests: list[bytes]
    ids: dict[str, int]
    """Array name -> P4Info id."""
    wanted: dict[str, npt.NDArray[np.int64]]


def _by_array(cells: Sequence[tuple[str, int]]) -> dict[str, npt.NDArray[np.int64]]:
    """(name, index) cells as `Cells`, in order within each array."""
    indices: dict[str, list[int]] = {}
    for name, index in cells:
        indices.setdefault(name, []).append(index)
    return {name: np.array(found, dtype=np.int64) for name, found in indices.items()}


def _gather(
    mine: npt.NDArray[np.bool_],
    indices: Column,
    columns: tuple[Column, ...],
    wanted: npt.NDArray[np.int64],
    name: str,
) -> list[Column]:
    """The `columns` of the `wanted` cells of one array, out of the cells a Read returned
    (`mine`: those of this array)."""
    size = int(wanted.max()) + 1 if len(wanted) else 0
    at = indices[mine]
    inside = at < size
    at = at[inside].astype(np.int64)
    seen = np.zeros(size, dtype=np.bool_)
    seen[at] = True
    if not seen[wanted].all():
        missing = int(wanted[~seen[wanted]][0])
        raise SwitchError(f"the switch did not return cell {missing} of {name}")
    gathered = []
    for column in columns:
        full = np.zeros(size, dtype=np.uint64)
        full[at] = column[mine][inside]
        gathered.append(full[wanted])
    return gathered


def _chunks(items: Sequence[bytes], size: int) -> Iterator[Sequence[bytes]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class SwitchSession:
    """One connected client of one switch: reads at any time, writes as the primary."""

    def __init__(
        self,
        target: SwitchTarget,
        pipeline: Pipeline,
        *,
        rpc_timeout_s: float,
        batch_size: int = MAX_BATCH,
        cells_per_read: int = 4096,
    ) -> None:
        if not 1 <= batch_size <= MAX_BATCH:
            raise ValueError(f"batch_size must be in [1, {MAX_BATCH}]")
        self.target = target
        self.pipeline = pipeline
        self.rpc_timeout_s = rpc_timeout_s
        self.batch_size = batch_size
        self.cells_per_read = cells_per_read
        self._lock = threading.RLock()  # one arbitration and one batch at a time
        channel = _channel(target, batch_size)
        self._client = _Client(target, channel, rpc_timeout_s)
        self._write_rpc = channel.unary_unary("/p4.v1.P4Runtime/Write")
        self._read_rpc = channel.unary_stream("/p4.v1.P4Runtime/Read")
        self._plans: dict[tuple[object, ...], _ReadPlan] = {}
        self.closed = False

    def wait_until_ready(self, timeout_s: float) -> None:
        """Wait for the channel to connect. TransientSwitchError (UNAVAILABLE) when an attempt
        made while waiting fails (refused, TLS handshake failed), or after `timeout_s` without
        an answer: gRPC itself would keep trying, and a task would sit out its whole timeout."""
        states: queue.SimpleQueue[Any] = queue.SimpleQueue()
        channel = self._client.channel
        channel.subscribe(states.put, try_to_connect=True)
        deadline = time.monotonic() + timeout_s
        attempted = False  # a channel in back-off reports its last failure first
        try:
            while True:
                try:
                    state = states.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    problem = f"no answer from {self.target.address} within {timeout_s:g} s"
                    break
                if state == grpc.ChannelConnectivity.READY:
                    return
                attempted |= state == grpc.ChannelConnectivity.CONNECTING
                if state == grpc.ChannelConnectivity.SHUTDOWN or (
                    attempted and state == grpc.ChannelConnectivity.TRANSIENT_FAILURE
                ):
                    problem = f"cannot connect to {self.target.address}"
                    break
        finally:
            channel.unsubscribe(states.put)
        raise TransientSwitchError(problem, grpc.StatusCode.UNAVAILABLE)

    # -- mastership ---------------------------------------------------------------------

    @property
    def is_primary(self) -> bool:
        return bool(self._client.streaming and self._client.is_primary)

    def _arbitrate(self) -> None:
        """Open the StreamChannel unless it is open (a stream the switch dropped is reopened)."""
        if self._client.streaming:
            return
        self._client.end_stream()
        try:
            self._client.set_up_stream()
        except grpc.RpcError as exc:
            self._client.end_stream()
            raise _rpc_error(exc, "StreamChannel") from None

    def release_mastership(self) -> None:
        """Close the StreamChannel, so that another process may arbitrate with this id."""
        with self._lock:
            self._client.end_stream()

    # -- pipeline -----------------------------------------------------------------------

    def pipeline_cookie(self, timeout_s: float | None = None) -> int | None:
        """The cookie of the switch's pipeline; None when it has none (or no cookie)."""
        request = _GetConfig(device_id=self.target.device_id, response_type=_GetConfig.COOKIE_ONLY)
        try:
            reply = self._client.stub.GetForwardingPipelineConfig(
                request, timeout=timeout_s or self.rpc_timeout_s
            )
        except grpc.RpcError as exc:
            if exc.code() == grpc.StatusCode.FAILED_PRECONDITION:  # BMv2 without a pipeline
                return None
            raise _rpc_error(exc, "GetForwardingPipelineConfig") from None
        if not reply.HasField("config") or not reply.config.HasField("cookie"):
            return None
        cookie: int = reply.config.cookie.cookie
        return cookie or None

    def push_pipeline(self, cookie: int) -> None:
        """VERIFY_AND_COMMIT our P4Info and device config under `cookie` (clears all entries)."""
        request = _SetConfig(device_id=self.target.device_id, action=_SetConfig.VERIFY_AND_COMMIT)
        request.election_id.high, request.election_id.low = self._client.election_id
        request.config.p4info.CopyFrom(self.pipeline.program.message)
        request.config.p4_device_config = self.pipeline.device_config
        request.config.cookie.cookie = cookie
        with self._lock:
            self._arbitrate()
            try:
                self._client.stub.SetForwardingPipelineConfig(request, timeout=self.rpc_timeout_s)
            except grpc.RpcError as exc:
                raise _rpc_error(exc, "SetForwardingPipelineConfig") from None

    # -- entries ------------------------------------------------------------------------

    def read_entries(self) -> list[TableEntry]:
        """Every entry of the tables the portal manages (default entries excluded)."""
        codec = self.pipeline.codec
        entities = [
            wire.encode_entity(
                wire.EntityKind.TABLE_ENTRY,
                wire.encode_table_entry(codec.table(name).id, (), None),
            )
            for name in MANAGED_TABLES
        ]
        return [
            codec.decode(entity.body)
            for entity in self._read(entities, "Read table entries")
            if isinstance(entity.body, wire.TableEntry)
        ]

    def write(self, updates: Sequence[EntryUpdate]) -> list[UpdateOutcome]:
        """Write `updates` in batches of at most `batch_size`, in order; one outcome each.

        A batch the switch refuses whole (not primary, no pipeline, unreachable) raises; a
        batch with failed updates does not: their outcomes carry the switch's code and text.
        """
        codec = self.pipeline.codec
        encoded = [codec.encode_update(update) for update in updates]
        outcomes: list[UpdateOutcome] = []
        with self._lock:
            for batch in _chunks(encoded, self.batch_size):
                outcomes += self._write_batch(batch)
        return outcomes

    def _write_batch(self, batch: Sequence[bytes], *, again: bool = True) -> list[UpdateOutcome]:
        self._arbitrate()
        target = self.target
        request = wire.encode_write_request(target.device_id, target.election_id, batch)
        try:
            self._write_rpc(request, timeout=self.rpc_timeout_s)
        except grpc.RpcError as exc:
            code = exc.code()
            if code == grpc.StatusCode.UNKNOWN:
                details = _batch_errors(exc, len(batch))
                if details is not None:
                    return details
            if again and code in (grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.NOT_FOUND):
                # Our stream may have died with a switch restart: arbitrate again, once.
                self._client.end_stream()
                return self._write_batch(batch, again=False)
            raise _rpc_error(exc, "Write") from None
        return [OK] * len(batch)

    def write_meters(self, configs: Sequence[MeterConfig]) -> list[UpdateOutcome]:
        """Configure meter cells (MeterEntry MODIFY), in batches; one outcome each, as `write`."""
        codec = self.pipeline.codec
        encoded = [codec.encode_meter_update(config) for config in configs]
        outcomes: list[UpdateOutcome] = []
        with self._lock:
            for batch in _chunks(encoded, self.batch_size):
                outcomes += self._write_batch(batch)
        return outcomes

    def reset_meters(self, cells: Sequence[tuple[str, int]]) -> list[UpdateOutcome]:
        """Reset meter cells (meter name, index) to unconfigured (MeterEntry MODIFY without a
        config), in batches; one outcome each, as `write`."""
        codec = self.pipeline.codec
        encoded = [codec.encode_meter_reset(meter, index) for meter, index in cells]
        outcomes: list[UpdateOutcome] = []
        with self._lock:
            for batch in _chunks(encoded, self.batch_size):
                outcomes += self._write_batch(batch)
        return outcomes

    def read_meters(self, name: str) -> list[MeterConfig]:
        """The configured cells of meter `name` (unconfigured cells are left out)."""
        codec = self.pipeline.codec
        request = wire.encode_entity(
            wire.EntityKind.METER_ENTRY, wire.encode_cell_entry(codec.meter_id(name), None)
        )
        out = []
        for entity in self._read([request], "Read meters"):
            if isinstance(entity.body, wire.MeterEntry):
                config = codec.decode_meter(entity.body)
                if config is not None:
                    out.append(config)
        return out

    # -- counters and registers ---------------------------------------------------------

    def read_counters(self, wanted: Cells) -> dict[str, tuple[Column, Column]]:
        """(packets, bytes) of the `wanted` cells of each counter array (name -> indices), in
        the order asked. SwitchError when the switch leaves out a wanted cell."""
        plan = self._plan(wire.EntityKind.COUNTER_ENTRY, wanted)
        read = wire.counter_cells(self._read_plan(plan, "Read counters"))
        found = {}
        for name, cells in plan.wanted.items():
            mine = read.counter_ids == plan.ids[name]
            packets, byte_counts = _gather(
                mine, read.indices, (read.packets, read.bytes), cells, name
            )
            found[name] = (packets, byte_counts)
        return found

    def read_register_values(self, wanted: Cells) -> dict[str, Column] | None:
        """The values of the `wanted` cells of each register array, in the order asked; None
        when the target cannot read registers (BMv2's P4Runtime server answers UNIMPLEMENTED,
        p4lang/PI#376)."""
        plan = self._plan(wire.EntityKind.REGISTER_ENTRY, wanted)
        try:
            read = wire.register_cells(self._read_plan(plan, "Read registers"))
        except SwitchError as exc:
            if exc.code == grpc.StatusCode.UNIMPLEMENTED:
                return None
            raise
        return {
            name: _gather(
                read.register_ids == plan.ids[name], read.indices, (read.values,), cells, name
            )[0]
            for name, cells in plan.wanted.items()
        }

    def read_counter_cells(
        self, cells: Sequence[tuple[str, int]]
    ) -> dict[tuple[str, int], tuple[int, int]]:
        """(counter name, index) -> (packets, bytes): `read_counters` for a few cells."""
        wanted = _by_array(cells)
        read = self.read_counters(wanted)
        return {
            (name, index): (packets, byte_count)
            for name, (packet_column, byte_column) in read.items()
            for index, packets, byte_count in zip(
                wanted[name].tolist(),
                packet_column.tolist(),
                byte_column.tolist(),
                strict=True,
            )
        }

    def read_registers(self, cells: Sequence[tuple[str, int]]) -> dict[tuple[str, int], int] | None:
        """(register name, index) -> value: `read_register_values` for a few cells."""
        wanted = _by_array(cells)
        read = self.read_register_values(wanted)
        if read is None:
            return None
        return {
            (name, index): value
            for name, column in read.items()
            for index, value in zip(wanted[name].tolist(), column.tolist(), strict=True)
        }

    def _plan(self, kind: wire.EntityKind, wanted: Cells) -> _ReadPlan:
        """The Read requests of `wanted` cells, kept for the last few cell sets (a poller asks
        for the same cells period after period).

        An array of which at least `WILDCARD_SHARE` of the cells are wanted is read whole, by
        one wildcard entity (BMv2 supports those, one array per entity); the others cell by
        cell. At most `cells_per_read` entities per Read.
        """
        key = (kind, tuple((name, cells.tobytes()) for name, cells in wanted.items()))
        plan = self._plans.get(key)
        if plan is not None:
            return plan
        codec, program = self.pipeline.codec, self.pipeline.program
        entities: list[bytes] = []
        ids: dict[str, int] = {}
        arrays: dict[str, npt.NDArray[np.int64]] = {}
        for name, cells in wanted.items():
            if kind == wire.EntityKind.COUNTER_ENTRY:
                entry_id = codec.counter_id(name)
                size = program.counters[entry_id].size
            else:
                entry_id = codec.register_id(name)
                size = program.registers[entry_id].size
            ids[name] = entry_id
            arrays[name] = np.asarray(cells, dtype=np.int64)
            distinct = np.unique(arrays[name])
            if len(distinct) >= WILDCARD_SHARE * size:
                entities.append(wire.encode_entity(kind, wire.encode_cell_entry(entry_id, None)))
            else:
                entities += [
                    wire.encode_entity(kind, wire.encode_cell_entry(entry_id, index))
                    for index in distinct.tolist()
                ]
        device_id, step = self.target.device_id, self.cells_per_read
        requests = [
            wire.encode_read_request(device_id, entities[start : start + step])
            for start in range(0, len(entities), step)
        ]
        plan = _ReadPlan(requests, ids, arrays)
        if len(self._plans) >= CACHED_REQUESTS:
            self._plans.pop(next(iter(self._plans)))
        self._plans[key] = plan
        return plan

    def _read_plan(self, plan: _ReadPlan, what: str) -> list[bytes]:
        """The serialized ReadResponses to every request of `plan`: one stream to decode (its
        concatenation parses as one ReadResponse)."""
        return [part for request in plan.requests for part in self._read_raw(request, what)]

    def _read_raw(self, request: bytes, what: str) -> list[bytes]:
        """The serialized ReadResponses to one serialized ReadRequest."""
        try:
            return list(self._read_rpc(request, timeout=self.rpc_timeout_s))
        except grpc.RpcError as exc:
            raise _rpc_error(exc, what) from None

    def _read(self, entities: Iterable[bytes], what: str) -> list[wire.Entity]:
        request = wire.encode_read_request(self.target.device_id, entities)
        responses = self._read_raw(request, what)
        try:
            return [entity for part in responses for entity in wire.decode_read_response(part)]
        except wire.WireError as exc:
            raise SwitchError(f"{what}: malformed response: {exc}") from None

    def close(self) -> None:
        with self._lock:
            if self.closed:
                return
            self.closed = True
            self._client.end_stream()
            self._client.channel.close()


def _batch_errors(exc: grpc.RpcError, size: int) -> list[UpdateOutcome] | None:
    """The per-update outcomes of a failed batch, from its `google.rpc.Status` trailer."""
    for key, value in exc.trailing_metadata() or ():
        if key != "grpc-status-details-bin":
            continue
        try:
            status = wire.decode_status(value)
        except wire.WireError:
            logger.warning("undecodable error details from a switch", exc_info=True)
            return None
        if len(status.errors) != size:
            return None
        return [
            OK
            if e.code == 0
            else UpdateOutcome(_STATUS_CODES.get(e.code, grpc.StatusCode.UNKNOWN), e.message)
            for e in status.errors
        ]
    return None


def connect(
    target: SwitchTarget,
    *,
    timeout_s: float = 5.0,
    settings: Settings | None = None,
    pipeline: Pipeline | None = None,
) -> SwitchSession:
    """A session with `target` once its channel is up (TransientSwitchError after `timeout_s`)."""
    settings = settings or get_settings()
    session = SwitchSession(
        target,
        pipeline or settings_pipeline(settings),
        rpc_timeout_s=settings.p4rt_rpc_timeout_s,
        batch_size=settings.p4rt_batch_size,
        cells_per_read=settings.p4rt_cells_per_read,
    )
    try:
        session.wait_until_ready(timeout_s)
    except TransientSwitchError:
        session.close()
        raise
    return session


class SessionPool:
    """The sessions of one process, one per switch, replaced when the switch's target changes
    or after `drop` (which the control plane calls when a switch stops answering)."""

    def __init__(self, settings: Settings | None = None, pipeline: Pipeline | None = None) -> None:
        self._settings = settings
        self._pipeline = pipeline
        self._lock = threading.Lock()
        self._sessions: dict[int, SwitchSession] = {}

    def get(self, target: SwitchTarget, *, timeout_s: float | None = None) -> SwitchSession:
        """The session of `target`, connecting (within `timeout_s`, default the settings'
        `p4rt_connect_timeout_s`) when there is none or the target changed."""
        with self._lock:
            session = self._sessions.get(target.switch_id)
            if session is not None and session.target == target and not session.closed:
                return session
            self._sessions.pop(target.switch_id, None)
        if session is not None:
            session.close()
        settings = self._settings or get_settings()
        session = connect(
            target,
            timeout_s=timeout_s or settings.p4rt_connect_timeout_s,
            settings=settings,
            pipeline=self._pipeline,
        )
        with self._lock:
            previous = self._sessions.get(target.switch_id)
            self._sessions[target.switch_id] = session
        if previous is not None:
            previous.close()
        return session

    def drop(self, switch_id: int) -> None:
        with self._lock:
            session = self._sessions.pop(switch_id, None)
        if session is not None:
            session.close()

    def close(self) -> None:
        with self._lock:
            sessions = list(self._sessions.values())
            self._sessions.clear()
        for session in sessions:
            session.close()


_shared: SessionPool | None = None


def shared_pool() -> SessionPool:
    """This process's pool. Created on first use, and forgotten in a forked child: gRPC
    channels do not survive `fork` (Celery's prefork workers fork from a parent)."""
    global _shared
    if _shared is None:
        _shared = SessionPool()
    return _shared


def _forget_shared_pool() -> None:
    global _shared
    _shared = None


os.register_at_fork(after_in_child=_forget_shared_pool)
