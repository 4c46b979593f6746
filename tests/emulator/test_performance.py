"""The control plane must push >= 5,000 entries/s, and a poller reads whole counter arrays.

Budgets are checked on the emulator's CPU time (robust to a loaded machine) and, more loosely,
on wall-clock time over real gRPC.
"""

from __future__ import annotations

import time
from functools import partial

import pytest
from p4.v1 import p4runtime_pb2 as p4r

from emulator.p4rt import (
    DELAY_HISTOGRAM,
    DELETE,
    INSERT,
    MODIFY,
    SLICE_BY_ID,
    Controller,
    counter_entry,
    entity,
    slice_entry,
    table_entry,
    update,
)
from sliceportal.emulator import wire
from sliceportal.emulator.server import EmulatorServer


def batch(controller: Controller, kind: int = INSERT, count: int = 1000) -> p4r.WriteRequest:
    updates = (update(kind, slice_entry(i, port=i % 512, priority=i % 8)) for i in range(count))
    return controller.write_request(*updates)


def test_a_batch_of_1000_inserts_takes_well_under_100_ms(
    controller: Controller, server: EmulatorServer
) -> None:
    raw = batch(controller).SerializeToString()
    start = time.thread_time()
    server.service.write(wire.decode_write_request(raw))
    cpu = time.thread_time() - start
    assert cpu < 0.1, f"decoding and applying 1,000 INSERTs took {cpu * 1000:.0f} ms of CPU"
    state = server.service.state
    assert state is not None and len(state.tables[slice_entry(0).table_id].entries) == 1000


def test_writes_over_grpc_exceed_5000_entries_per_second(controller: Controller) -> None:
    """Batches of 1,000 INSERTs, MODIFYs and DELETEs, serialized beforehand: the client's
    pure-Python protobuf would otherwise dominate."""
    write = controller.channel.unary_unary(
        "/p4.v1.P4Runtime/Write",
        request_serializer=lambda raw: raw,
        response_deserializer=p4r.WriteResponse.FromString,
    )
    request = batch(controller)
    batches = []
    for kind in (INSERT, MODIFY, DELETE):
        for item in request.updates:
            item.type = kind
        batches.append(request.SerializeToString())
    times = []
    for raw in batches:
        start = time.perf_counter()
        write(raw)
        times.append(time.perf_counter() - start)
    assert 1000 / min(times) >= 5000, f"best batch of 1,000 took {min(times) * 1000:.0f} ms"
    assert controller.read(table_entry(SLICE_BY_ID)) == []


def test_a_wildcard_read_of_32768_counter_cells_is_quick(
    controller: Controller, server: EmulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Smaller responses, so that checking the last one does not parse 32,768 cells in Python.
    monkeypatch.setattr(wire, "read_responses", partial(wire.read_responses, max_bytes=64_000))
    state = server.service.state
    assert state is not None
    state.counters[DELAY_HISTOGRAM].packets[:] = range(10**6, 10**6 + 32768)
    request = p4r.ReadRequest(device_id=1)
    request.entities.append(entity(counter_entry(DELAY_HISTOGRAM)))
    decoded = wire.decode_read_request(request.SerializeToString())
    list(server.service.read(decoded))  # the first read of an array caches its cell prefixes

    start = time.thread_time()
    responses = list(server.service.read(decoded))
    cpu = time.thread_time() - start
    assert cpu < 0.25, f"encoding 32,768 counter cells took {cpu * 1000:.0f} ms of CPU"
    last = p4r.ReadResponse.FromString(responses[-1]).entities[-1].counter_entry
    assert (last.index.index, last.data.packet_count) == (32767, 10**6 + 32767)

    read = controller.channel.unary_stream(
        "/p4.v1.P4Runtime/Read",
        request_serializer=p4r.ReadRequest.SerializeToString,
        response_deserializer=lambda raw: raw,
    )
    start = time.perf_counter()
    size = sum(len(raw) for raw in read(request))
    elapsed = time.perf_counter() - start
    assert size > 500_000 and elapsed < 1.0, f"the read took {elapsed * 1000:.0f} ms"
