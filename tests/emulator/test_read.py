"""Read: wildcards and keys over tables, counters, direct counters and registers."""

from __future__ import annotations

from functools import partial

import grpc
import numpy as np
import pytest

from emulator.p4rt import (
    ACL,
    CLASSIFIER,
    CLASSIFIER_HITS,
    DELAY_HISTOGRAM,
    DROP,
    INSERT,
    SET_SLICE,
    SLICE_BY_ID,
    SLICE_FORWARDED,
    VQ_DELAY,
    VQ_LAST_TIMESTAMP,
    Code,
    Controller,
    classifier_entry,
    counter_entry,
    exact,
    register_entry,
    slice_entry,
    table_entry,
    ternary,
    update,
)
from sliceportal.emulator import service
from sliceportal.emulator.server import EmulatorServer
from sliceportal.p4rt import cells
from sliceportal.p4rt.proto import p4r

NET_10 = b"\x0a\x00\x00\x00"


def read_error(controller: Controller, *entities: object) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as caught:
        controller.read(*entities)
    return caught.value


def test_wildcard_read_returns_entries_in_insertion_order(controller: Controller) -> None:
    ids = [5, 1, 9, 3]
    controller.write(*(update(INSERT, slice_entry(i)) for i in ids))
    read = controller.read(table_entry(SLICE_BY_ID))
    assert [e.table_entry.match[0].exact.value[0] for e in read] == ids


def test_reading_all_tables_goes_in_p4info_order_without_default_entries(
    controller: Controller,
) -> None:
    controller.write(update(INSERT, slice_entry(1)), update(INSERT, classifier_entry(1, NET_10, 8)))
    read = controller.read(table_entry(0))
    assert [e.table_entry.table_id for e in read] == [CLASSIFIER, SLICE_BY_ID]
    assert not any(e.table_entry.is_default_action for e in read)


def test_read_by_key(controller: Controller) -> None:
    controller.write(update(INSERT, slice_entry(1)), update(INSERT, slice_entry(2, port=7)))
    (read,) = controller.read(table_entry(SLICE_BY_ID, [exact(1, b"\x00\x02")]))
    assert read.table_entry == slice_entry(2, port=7)
    assert controller.read(table_entry(SLICE_BY_ID, [exact(1, b"\x03")])) == []


def test_read_filters_on_priority_action_and_metadata(controller: Controller) -> None:
    def acl(priority: int, src: int) -> p4r.TableEntry:
        return table_entry(
            ACL, [ternary(1, bytes([src]), b"\xff")], DROP, priority=priority, metadata=b"m"
        )

    controller.write(
        update(INSERT, acl(10, 1)), update(INSERT, acl(20, 1)), update(INSERT, acl(20, 2))
    )
    assert len(controller.read(table_entry(ACL, priority=20))) == 2
    (by_key,) = controller.read(table_entry(ACL, [ternary(1, b"\x01", b"\xff")], priority=10))
    assert by_key.table_entry.priority == 10
    assert len(controller.read(table_entry(ACL, [ternary(1, b"\x01", b"\xff")]))) == 2
    assert len(controller.read(table_entry(ACL, action_id=DROP))) == 3
    assert controller.read(table_entry(ACL, action_id=SET_SLICE)) == []
    assert controller.read(table_entry(ACL, metadata=b"other")) == []


def test_read_default_entry_with_its_counter(controller: Controller) -> None:
    (read,) = controller.read(
        table_entry(CLASSIFIER, is_default_action=True, counter_data=p4r.CounterData())
    )
    assert read.table_entry.is_default_action
    assert read.table_entry.HasField("counter_data")


def test_counter_data_only_when_asked(controller: Controller) -> None:
    controller.write(update(INSERT, classifier_entry(1, NET_10, 8)))
    (plain,) = controller.read(table_entry(CLASSIFIER))
    assert not plain.table_entry.HasField("counter_data")
    (counted,) = controller.read(table_entry(CLASSIFIER, counter_data=p4r.CounterData()))
    assert counted.table_entry.HasField("counter_data")


def test_wildcard_counter_read_gives_every_cell(
    controller: Controller, server: EmulatorServer
) -> None:
    state = server.service.state
    assert state is not None
    forwarded = state.counters[SLICE_FORWARDED]
    forwarded.packets[:] = np.arange(4096)
    forwarded.bytes[:] = np.arange(4096) * 1500
    cells = controller.read(counter_entry(SLICE_FORWARDED))
    assert [c.counter_entry.index.index for c in cells] == list(range(4096))
    assert cells[4095].counter_entry.data.packet_count == 4095
    assert cells[4095].counter_entry.data.byte_count == 4095 * 1500
    assert all(c.counter_entry.counter_id == SLICE_FORWARDED for c in cells)
    assert cells[0].counter_entry.HasField("index") and cells[0].counter_entry.HasField("data")


def test_counter_read_by_index_and_packets_only_unit(
    controller: Controller, server: EmulatorServer
) -> None:
    state = server.service.state
    assert state is not None
    state.counters[DELAY_HISTOGRAM].packets[12345] = 7
    state.counters[DELAY_HISTOGRAM].bytes[12345] = 999  # a PACKETS counter reports no bytes
    (cell,) = controller.read(counter_entry(DELAY_HISTOGRAM, 12345))
    assert cell.counter_entry.index.index == 12345
    assert cell.counter_entry.data.packet_count == 7
    assert cell.counter_entry.data.byte_count == 0


def test_a_large_read_is_streamed_in_several_responses(
    controller: Controller, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cells, "CHUNK_CELLS", 128)
    monkeypatch.setattr(service, "read_responses", partial(service.read_responses, max_bytes=8_000))
    request = p4r.ReadRequest(device_id=1)
    request.entities.add().counter_entry.counter_id = SLICE_FORWARDED
    responses = list(controller.stub.Read(request))
    assert len(responses) > 5
    assert sum(len(r.entities) for r in responses) == 4096
    assert all(r.ByteSize() < 8_100 for r in responses)


def test_direct_counter_entries(controller: Controller, server: EmulatorServer) -> None:
    controller.write(
        update(INSERT, classifier_entry(1, NET_10, 8)),
        update(INSERT, classifier_entry(2, NET_10, 8)),
    )
    state = server.service.state
    assert state is not None
    first = next(iter(state.tables[CLASSIFIER].entries.values()))
    first.packet_count, first.byte_count = 3, 300

    wildcard = p4r.DirectCounterEntry()
    wildcard.table_entry.table_id = CLASSIFIER
    read = controller.read(wildcard)
    assert [(e.direct_counter_entry.data.packet_count) for e in read] == [3, 0]
    assert read[0].direct_counter_entry.table_entry == table_entry(
        CLASSIFIER, classifier_entry(1, NET_10, 8).match
    )

    one = p4r.DirectCounterEntry()
    one.table_entry.CopyFrom(classifier_entry(1, NET_10, 8))
    (read_one,) = controller.read(one)
    assert read_one.direct_counter_entry.data.byte_count == 300

    one.table_entry.CopyFrom(classifier_entry(3, NET_10, 8))
    assert read_error(controller, one).code() == Code.NOT_FOUND
    no_counter = p4r.DirectCounterEntry()
    no_counter.table_entry.table_id = SLICE_BY_ID
    assert read_error(controller, no_counter).code() == Code.INVALID_ARGUMENT


def test_register_reads(controller: Controller, server: EmulatorServer) -> None:
    state = server.service.state
    assert state is not None
    state.registers[VQ_LAST_TIMESTAMP].values[2] = (1 << 48) - 1
    cells = controller.read(register_entry(VQ_LAST_TIMESTAMP))
    assert len(cells) == 4096
    assert cells[2].register_entry.data.bitstring == b"\xff" * 6
    assert cells[3].register_entry.data.bitstring == b"\x00"
    assert len(controller.read(register_entry(0))) == 2 * 4096
    (one,) = controller.read(register_entry(VQ_LAST_TIMESTAMP, 2))
    assert one.register_entry.index.index == 2


@pytest.mark.parametrize(
    ("request_entity", "code"),
    [
        (table_entry(777), Code.INVALID_ARGUMENT),
        (table_entry(SLICE_BY_ID, [exact(1, b"\x01\x00\x00")]), Code.INVALID_ARGUMENT),
        (table_entry(0, [exact(1, b"\x01")]), Code.INVALID_ARGUMENT),
        (table_entry(SLICE_BY_ID, priority=3), Code.INVALID_ARGUMENT),
        (counter_entry(777), Code.INVALID_ARGUMENT),
        (counter_entry(CLASSIFIER_HITS), Code.INVALID_ARGUMENT),
        (counter_entry(SLICE_FORWARDED, 4096), Code.OUT_OF_RANGE),
        (counter_entry(SLICE_FORWARDED, -2), Code.INVALID_ARGUMENT),
        (counter_entry(0, 1), Code.INVALID_ARGUMENT),
        (register_entry(VQ_DELAY, 4096), Code.OUT_OF_RANGE),
        (register_entry(123), Code.INVALID_ARGUMENT),
        (p4r.MeterEntry(meter_id=1), Code.INVALID_ARGUMENT),
    ],
    ids=[
        "unknown-table",
        "key-too-wide",
        "key-without-table",
        "priority-on-exact-table",
        "unknown-counter",
        "direct-counter-as-counter",
        "counter-index-too-high",
        "counter-index-negative",
        "index-without-counter",
        "register-index-too-high",
        "unknown-register",
        "unknown-meter",
    ],
)
def test_invalid_reads_fail_the_read(
    controller: Controller, request_entity: object, code: grpc.StatusCode
) -> None:
    assert read_error(controller, request_entity).code() == code


def test_one_bad_entity_fails_the_whole_read_as_on_bmv2(controller: Controller) -> None:
    error = read_error(controller, table_entry(SLICE_BY_ID), counter_entry(777))
    assert error.code() == Code.INVALID_ARGUMENT
    assert error.details().startswith("entity 1:")


def test_empty_entity_and_unknown_device(controller: Controller) -> None:
    request = p4r.ReadRequest(device_id=1)
    request.entities.add()
    with pytest.raises(grpc.RpcError) as caught:
        list(controller.stub.Read(request))
    assert caught.value.code() == Code.INVALID_ARGUMENT
    with pytest.raises(grpc.RpcError) as caught:
        controller.read(table_entry(0), device_id=5)
    assert caught.value.code() == Code.NOT_FOUND


def test_an_empty_result_is_one_empty_response(controller: Controller) -> None:
    request = p4r.ReadRequest(device_id=1)
    request.entities.add().table_entry.table_id = SLICE_BY_ID
    assert list(controller.stub.Read(request)) == [p4r.ReadResponse()]


def test_backups_and_strangers_may_read(controller: Controller, server: EmulatorServer) -> None:
    controller.write(update(INSERT, slice_entry(1)))
    backup = Controller(server.address, 0)  # a backup: reading is open to all
    assert [e.table_entry for e in backup.read(table_entry(SLICE_BY_ID))] == [slice_entry(1)]
    backup.close()
    stranger = Controller(server.address, None, arbitrate=False)
    assert [e.table_entry for e in stranger.read(table_entry(SLICE_BY_ID))] == [slice_entry(1)]
    stranger.close()
