"""One connected client per switch and process (`SwitchSession`), kept in a `SessionPool`.

A session reads at any time and writes as the primary, arbitrating on demand
(`connection.StreamChannel`). Every message is a generated one (`p4rt.proto`): Write requests are
serialized by gRPC from the generated `WriteRequest`, and responses that carry nothing (Write)
are not decoded; Read requests of cell sets are serialized once and kept (`reads.plan`), and
their answers are decoded column-wise (`p4rt.cells`). gRPC failures become `SwitchError`, or
`TransientSwitchError` for UNAVAILABLE and DEADLINE_EXCEEDED, the only ones worth retrying.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

import grpc  # type: ignore[import-untyped, unused-ignore]
from google.protobuf.message import DecodeError

from sliceportal.core.config import Settings, get_settings
from sliceportal.domain.dataplane import MeterConfig, TableEntry
from sliceportal.domain.reconcile import MANAGED_TABLES, EntryUpdate
from sliceportal.p4rt import cells, reads
from sliceportal.p4rt.connection import (
    StreamChannel,
    SwitchTarget,
    open_channel,
    wait_until_ready,
)
from sliceportal.p4rt.errors import SwitchError, TransientSwitchError, rpc_error
from sliceportal.p4rt.pipeline import Pipeline, settings_pipeline
from sliceportal.p4rt.proto import p4r, p4r_grpc
from sliceportal.p4rt.writes import MAX_BATCH, OK, UpdateOutcome, batch_outcomes, batches

T = TypeVar("T")
_GetConfig = p4r.GetForwardingPipelineConfigRequest
_SetConfig = p4r.SetForwardingPipelineConfigRequest


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
        self._channel = open_channel(target, batch_size)
        self._stub = p4r_grpc.P4RuntimeStub(self._channel)
        self._stream = StreamChannel(self._channel, target, rpc_timeout_s)
        self._write_rpc = self._channel.unary_unary(
            "/p4.v1.P4Runtime/Write", request_serializer=p4r.WriteRequest.SerializeToString
        )
        self._read_rpc = self._channel.unary_stream("/p4.v1.P4Runtime/Read")
        self._plans: dict[tuple[object, ...], reads.ReadPlan] = {}
        self.closed = False

    def wait_until_ready(self, timeout_s: float) -> None:
        """See `connection.wait_until_ready`."""
        wait_until_ready(self._channel, self.target.address, timeout_s)

    # -- mastership ---------------------------------------------------------------------

    @property
    def is_primary(self) -> bool:
        return self._stream.open and self._stream.is_primary

    def release_mastership(self) -> None:
        """Close the StreamChannel, so that another process may arbitrate with this id."""
        with self._lock:
            self._stream.close()

    # -- pipeline -----------------------------------------------------------------------

    def pipeline_cookie(self, timeout_s: float | None = None) -> int | None:
        """The cookie of the switch's pipeline; None when it has none (or no cookie)."""
        request = _GetConfig(device_id=self.target.device_id, response_type=_GetConfig.COOKIE_ONLY)
        try:
            reply = self._stub.GetForwardingPipelineConfig(
                request, timeout=timeout_s or self.rpc_timeout_s
            )
        except grpc.RpcError as exc:
            if exc.code() == grpc.StatusCode.FAILED_PRECONDITION:  # BMv2 without a pipeline
                return None
            raise rpc_error(exc, "GetForwardingPipelineConfig") from None
        if not reply.HasField("config") or not reply.config.HasField("cookie"):
            return None
        cookie: int = reply.config.cookie.cookie
        return cookie or None

    def pipeline_problem(self) -> str | None:
        """Why the switch does not serve the pipeline whose cookie it reports; None when it
        does. One small read, the default entry of a managed table, compared with the P4Info's:
        BMv2 given an empty device config reports the cookie it was given and answers every read
        and write UNKNOWN, so a cookie alone proves nothing. Other refusals raise, as reads do."""
        codec = self.pipeline.codec
        tables = [codec.table(name) for name in MANAGED_TABLES]
        table = next((t for t in tables if t.const_default_action_id), tables[0])
        request = p4r.Entity(table_entry=p4r.TableEntry(table_id=table.id, is_default_action=True))
        try:
            read = self._read([request], f"Read the default entry of {table.name}")
        except SwitchError as exc:
            if exc.code in (grpc.StatusCode.UNKNOWN, grpc.StatusCode.FAILED_PRECONDITION):
                return f"the switch reports the portal's pipeline but cannot serve it ({exc})"
            raise
        actions = [
            e.table_entry.action.action.action_id
            for e in read
            if e.WhichOneof("entity") == "table_entry"
        ]
        wanted = table.const_default_action_id  # 0: any default action will do
        if len(actions) != 1 or wanted not in (0, actions[0]):
            return (
                "the switch reports the portal's pipeline but not its default entry in "
                f"{table.name}"
            )
        return None

    def push_pipeline(self, cookie: int) -> None:
        """VERIFY_AND_COMMIT our P4Info and device config under `cookie` (clears all entries).
        MissingDeviceConfig, before anything is sent, when the target needs a device config
        and the pipeline has none."""
        self.pipeline.check_deployable(self.target.kind)
        request = _SetConfig(
            device_id=self.target.device_id,
            election_id=self.target.election_uint128,
            action=_SetConfig.VERIFY_AND_COMMIT,
        )
        request.config.p4info.CopyFrom(self.pipeline.program.message)
        request.config.p4_device_config = self.pipeline.device_config
        request.config.cookie.cookie = cookie
        with self._lock:
            self._stream.arbitrate()
            try:
                self._stub.SetForwardingPipelineConfig(request, timeout=self.rpc_timeout_s)
            except grpc.RpcError as exc:
                raise rpc_error(exc, "SetForwardingPipelineConfig") from None

    # -- entries and meters -------------------------------------------------------------

    def read_entries(self) -> list[TableEntry]:
        """Every entry of the tables the portal manages (default entries excluded)."""
        codec = self.pipeline.codec
        entities = [
            p4r.Entity(table_entry=p4r.TableEntry(table_id=codec.table(name).id))
            for name in MANAGED_TABLES
        ]
        return [
            codec.decode(entity.table_entry)
            for entity in self._read(entities, "Read table entries")
            if entity.WhichOneof("entity") == "table_entry"
        ]

    def write(self, updates: Sequence[EntryUpdate]) -> list[UpdateOutcome]:
        """Write `updates` in batches of at most `batch_size`, in order; one outcome each.

        A batch the switch refuses whole (not primary, no pipeline, unreachable) raises; a
        batch with failed updates does not: their outcomes carry the switch's code and text.
        Each batch is encoded while the switch applies the one before it (one batch in flight
        at most, so batches still reach the switch one at a time and in order): the switch's
        work and ours overlap. An entry the P4Info does not know raises once the batch in
        flight is answered; the batches before it stay written, as after any partly failed
        push, and the reconciler's read-back sees them.
        """
        return self._write(updates, self.pipeline.codec.fill_update)

    def write_meters(self, configs: Sequence[MeterConfig]) -> list[UpdateOutcome]:
        """Configure meter cells (MeterEntry MODIFY), in batches; one outcome each, as `write`."""
        return self._write(configs, self.pipeline.codec.fill_meter_update)

    def reset_meters(self, cells_: Sequence[tuple[str, int]]) -> list[UpdateOutcome]:
        """Reset meter cells (meter name, index) to unconfigured (MeterEntry MODIFY without a
        config), in batches; one outcome each, as `write`."""
        return self._write(cells_, self.pipeline.codec.fill_meter_reset)

    def read_meters(self, name: str) -> list[MeterConfig]:
        """The configured cells of meter `name` (unconfigured cells are left out)."""
        codec = self.pipeline.codec
        request = p4r.Entity(meter_entry=p4r.MeterEntry(meter_id=codec.meter_id(name)))
        out = []
        for entity in self._read([request], "Read meters"):
            if entity.WhichOneof("entity") == "meter_entry":
                config = codec.decode_meter(entity.meter_entry)
                if config is not None:
                    out.append(config)
        return out

    def _write(
        self, items: Sequence[T], fill: Callable[[p4r.Update, T], None]
    ) -> list[UpdateOutcome]:
        outcomes: list[UpdateOutcome] = []
        with self._lock:
            in_flight: tuple[p4r.WriteRequest, grpc.Future] | None = None
            try:
                for batch in batches(items, self.batch_size):
                    request = p4r.WriteRequest(
                        device_id=self.target.device_id, election_id=self.target.election_uint128
                    )
                    add = request.updates.add
                    for item in batch:
                        fill(add(), item)
                    if in_flight is not None:
                        answered, in_flight = in_flight, None
                        outcomes += self._answer(*answered)
                    self._stream.arbitrate()
                    in_flight = request, self._write_rpc.future(request, timeout=self.rpc_timeout_s)
            finally:  # a batch in flight is answered even when encoding the next one failed
                if in_flight is not None:
                    outcomes += self._answer(*in_flight)
        return outcomes

    def _answer(self, request: p4r.WriteRequest, call: grpc.Future) -> list[UpdateOutcome]:
        """The outcomes of a batch sent with `future`, once the switch answers."""
        try:
            call.result()
        except grpc.RpcError as exc:
            return self._refused(request, exc, again=True)
        return [OK] * len(request.updates)

    def _write_batch(self, request: p4r.WriteRequest, *, again: bool = True) -> list[UpdateOutcome]:
        self._stream.arbitrate()
        try:
            self._write_rpc(request, timeout=self.rpc_timeout_s)
        except grpc.RpcError as exc:
            return self._refused(request, exc, again=again)
        return [OK] * len(request.updates)

    def _refused(
        self, request: p4r.WriteRequest, exc: grpc.RpcError, *, again: bool
    ) -> list[UpdateOutcome]:
        """A batch's outcomes from the error the switch answered: each update's own from the
        status details, or the batch again once after a new arbitration, or SwitchError."""
        size = len(request.updates)
        code = exc.code()
        if code == grpc.StatusCode.UNKNOWN:
            outcomes = batch_outcomes(exc, size)
            if outcomes is not None:
                return outcomes
        if again and code in (grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.NOT_FOUND):
            # Our stream may have died with a switch restart: arbitrate again, once.
            self._stream.close()
            return self._write_batch(request, again=False)
        raise rpc_error(exc, "Write") from None

    # -- counters and registers ---------------------------------------------------------

    def read_counters(self, wanted: reads.Cells) -> dict[str, tuple[reads.Column, reads.Column]]:
        """(packets, bytes) of the `wanted` cells of each counter array (name -> indices), in
        the order asked. SwitchError when the switch leaves out a wanted cell."""
        plan = self._plan(cells.CellKind.COUNTER, wanted)
        read = self._read_cells(plan, cells.CellKind.COUNTER, "Read counters")
        return {
            name: (packets, byte_counts)
            for name, (packets, byte_counts) in reads.columns(plan, read, 2).items()
        }

    def read_register_values(self, wanted: reads.Cells) -> dict[str, reads.Column] | None:
        """The values of the `wanted` cells of each register array, in the order asked; None
        when the target cannot read registers (BMv2's P4Runtime server answers UNIMPLEMENTED,
        p4lang/PI#376)."""
        plan = self._plan(cells.CellKind.REGISTER, wanted)
        try:
            read = self._read_cells(plan, cells.CellKind.REGISTER, "Read registers")
        except SwitchError as exc:
            if exc.code == grpc.StatusCode.UNIMPLEMENTED:
                return None
            raise
        return {name: values for name, (values,) in reads.columns(plan, read, 1).items()}

    def read_counter_cells(
        self, cells_: Sequence[tuple[str, int]]
    ) -> dict[tuple[str, int], tuple[int, int]]:
        """(counter name, index) -> (packets, bytes): `read_counters` for a few cells."""
        wanted = reads.by_array(cells_)
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

    def read_registers(
        self, cells_: Sequence[tuple[str, int]]
    ) -> dict[tuple[str, int], int] | None:
        """(register name, index) -> value: `read_register_values` for a few cells."""
        wanted = reads.by_array(cells_)
        read = self.read_register_values(wanted)
        if read is None:
            return None
        return {
            (name, index): value
            for name, column in read.items()
            for index, value in zip(wanted[name].tolist(), column.tolist(), strict=True)
        }

    def _plan(self, kind: cells.CellKind, wanted: reads.Cells) -> reads.ReadPlan:
        """`reads.plan`, kept for the last few cell sets."""
        key = (kind, tuple((name, indices.tobytes()) for name, indices in wanted.items()))
        found = self._plans.get(key)
        if found is None:
            found = reads.plan(
                kind, wanted, self.pipeline, self.target.device_id, self.cells_per_read
            )
            if len(self._plans) >= reads.CACHED_PLANS:
                self._plans.pop(next(iter(self._plans)))
            self._plans[key] = found
        return found

    def _read_cells(self, plan: reads.ReadPlan, kind: cells.CellKind, what: str) -> cells.Cells:
        """The cells of `plan`'s reads, each ReadResponse decoded as it arrives: while we decode
        one, the switch encodes and sends the next."""
        try:
            return cells.Cells.joined(
                [
                    cells.decode([response], kind)
                    for request in plan.requests
                    for response in self._read_stream(request, what)
                ]
            )
        except (DecodeError, ValueError) as exc:
            raise SwitchError(f"{what}: malformed response: {exc}") from None

    def _read_stream(self, request: bytes, what: str) -> Iterator[bytes]:
        """The serialized ReadResponses to one serialized ReadRequest, as they arrive."""
        try:
            yield from self._read_rpc(request, timeout=self.rpc_timeout_s)
        except grpc.RpcError as exc:
            raise rpc_error(exc, what) from None

    def _read(self, entities: Sequence[p4r.Entity], what: str) -> list[p4r.Entity]:
        request = p4r.ReadRequest(device_id=self.target.device_id, entities=entities)
        try:
            return [
                entity
                for part in self._read_stream(request.SerializeToString(), what)
                for entity in p4r.ReadResponse.FromString(part).entities
            ]
        except DecodeError as exc:
            raise SwitchError(f"{what}: malformed response: {exc}") from None

    def close(self, *, at_once: bool = False) -> None:
        """Close the stream (the switch ends it), then the channel; `at_once` closes the
        channel first, cancelling every call in flight, for a run stopped from outside that
        must not wait for a slow switch."""
        if at_once:
            self._channel.close()
        with self._lock:
            if self.closed:
                return
            self.closed = True
            self._stream.close()
            self._channel.close()


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

    def drop(self, switch_id: int, *, at_once: bool = False) -> None:
        """Forget the switch's session and close it (`SwitchSession.close`)."""
        with self._lock:
            session = self._sessions.pop(switch_id, None)
        if session is not None:
            session.close(at_once=at_once)

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
