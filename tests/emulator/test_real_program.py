"""The emulator with its default program: the repository's P4Info (p4/build/), driven by
p4runtime-shell's client as the portal drives it. Entries are derived from the P4Info itself,
so these tests follow the program as it changes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc  # type: ignore[import-untyped, unused-ignore]
import pytest

from emulator.p4rt import (
    INSERT,
    MODIFY,
    Controller,
    batch_errors,
    canonical,
    counter_entry,
    entity,
    exact,
    lpm,
    optional,
    range_,
    register_entry,
    table_entry,
    ternary,
    update,
)
from sliceportal.emulator.defaults import DEFAULT_P4INFO
from sliceportal.emulator.server import EmulatorServer
from sliceportal.p4rt.p4info import ActionScope, MatchType, P4InfoIndex, TableInfo
from sliceportal.p4rt.proto import p4r

PROGRAM = P4InfoIndex.from_file(DEFAULT_P4INFO)
ENTRY_TABLES = [t for t in PROGRAM.tables.values() if t.match_fields]
"""The tables the control plane writes; the keyless ones (codel_state) only run their const
default action, which makes a register read-modify-write one atomic action on BMv2."""


class Client:
    """A primary controller of the emulator serving the default program, writing whole
    WriteRequests (the device and election ids filled in)."""

    def __init__(self, controller: Controller) -> None:
        self.controller = controller

    def write(self, request: Any) -> None:
        request.device_id = self.controller.device_id
        self.controller._election(request)
        self.controller.stub.Write(request)

    def get_p4info(self) -> Any:
        response_type = p4r.GetForwardingPipelineConfigRequest.P4INFO_AND_COOKIE
        return self.controller.get_pipeline(response_type).config.p4info

    def read_one(self, message: Any) -> Any:
        request = p4r.ReadRequest(device_id=self.controller.device_id, entities=[message])
        return self.controller.stub.Read(request)


@pytest.fixture
def client() -> Iterator[Client]:
    """A primary controller of an emulator serving the default program."""
    with EmulatorServer("127.0.0.1:0") as emulator:
        controller = Controller(emulator.address, 1)
        controller.set_pipeline(p4info=PROGRAM.message)
        yield Client(controller)
        controller.close()


def some_entry(table: TableInfo, n: int = 1) -> Any:
    """A valid entry of `table` in canonical form, the n-th of a family of distinct ones."""
    matches = []
    for field in table.match_fields:
        top = (1 << field.bitwidth) - 1
        if field.kind == MatchType.EXACT:
            matches.append(exact(field.id, canonical(n)))
        elif field.kind == MatchType.LPM:
            prefix = min(field.bitwidth, max(1, n.bit_length()))
            matches.append(lpm(field.id, canonical(n << (field.bitwidth - prefix)), prefix))
        elif field.kind == MatchType.TERNARY:
            matches.append(ternary(field.id, canonical(n & top), canonical(top)))
        elif field.kind == MatchType.RANGE:
            matches.append(range_(field.id, canonical(n), canonical(n + 1)))
        else:
            matches.append(optional(field.id, canonical(n)))
    action_id = next(a for a, s in table.action_scopes.items() if s != ActionScope.DEFAULT_ONLY)
    params = {p.id: canonical((1 << p.bitwidth) - 1) for p in PROGRAM.actions[action_id].params}
    return table_entry(
        table.id, matches, action_id, params, priority=n if table.needs_priority else 0
    )


def read(client: Client, message: Any) -> list[Any]:
    return [e for response in client.read_one(entity(message)) for e in response.entities]


def test_the_default_program_is_served(client: Client) -> None:
    assert client.get_p4info() == PROGRAM.message
    assert PROGRAM.tables and PROGRAM.counters and PROGRAM.registers


@pytest.mark.parametrize("table", ENTRY_TABLES, ids=lambda t: t.name)
def test_every_table_takes_entries_and_reads_them_back(client: Client, table: TableInfo) -> None:
    entries = [some_entry(table, n) for n in (1, 2, 3)]
    request = p4r.WriteRequest()
    request.updates.extend(update(INSERT, e) for e in entries)
    client.write(request)
    assert [e.table_entry for e in read(client, table_entry(table.id))] == entries


def test_all_tables_at_once(client: Client) -> None:
    request = p4r.WriteRequest()
    request.updates.extend(update(INSERT, some_entry(t)) for t in ENTRY_TABLES)
    client.write(request)
    read_back = read(client, table_entry(0))
    assert [e.table_entry.table_id for e in read_back] == [t.id for t in ENTRY_TABLES]


@pytest.mark.parametrize(
    "table", [t for t in PROGRAM.tables.values() if not t.match_fields], ids=lambda t: t.name
)
def test_a_keyless_table_takes_no_entry(client: Client, table: TableInfo) -> None:
    action_id = next(iter(table.action_scopes))
    request = p4r.WriteRequest()
    request.updates.append(update(INSERT, table_entry(table.id, [], action_id, {})))
    with pytest.raises(grpc.RpcError) as refused:
        client.write(request)
    (error,) = batch_errors(refused.value)
    assert "has no match key" in error.message
    assert read(client, table_entry(table.id)) == []


@pytest.mark.parametrize("counter", PROGRAM.counters.values(), ids=lambda c: c.name)
def test_every_counter_reads_whole_and_by_index(client: Client, counter: Any) -> None:
    last = counter.size - 1
    request = p4r.WriteRequest()
    request.updates.append(
        update(MODIFY, counter_entry(counter.id, last, packet_count=3, byte_count=4))
    )
    client.write(request)
    (cell,) = read(client, counter_entry(counter.id, last))
    assert cell.counter_entry.data.packet_count == 3
    if counter.size <= 4096:  # parsing larger arrays in pure-Python protobuf takes seconds
        assert len(read(client, counter_entry(counter.id))) == counter.size


@pytest.mark.parametrize("register", PROGRAM.registers.values(), ids=lambda r: r.name)
def test_every_register_holds_its_full_width(client: Client, register: Any) -> None:
    top = canonical((1 << register.bitwidth) - 1)
    request = p4r.WriteRequest()
    request.updates.append(update(MODIFY, register_entry(register.id, register.size - 1, top)))
    client.write(request)
    (cell,) = read(client, register_entry(register.id, register.size - 1))
    assert cell.register_entry.data.bitstring == top


def test_meters_take_configs_by_modify_and_read_them_back(client: Client) -> None:
    """slice_meter (the meter baseline): cells exist, so only MODIFY; an unset config resets."""
    (meter,) = PROGRAM.meters.values()
    config = p4r.MeterConfig(cir=6_000_000, cburst=120_000, pir=6_000_000, pburst=120_000)
    request = p4r.WriteRequest()
    request.updates.append(
        update(MODIFY, p4r.MeterEntry(meter_id=meter.id, index=p4r.Index(index=7), config=config))
    )
    client.write(request)
    (cell,) = read(client, p4r.MeterEntry(meter_id=meter.id, index=p4r.Index(index=7)))
    assert cell.meter_entry.config == config and cell.meter_entry.index.index == 7
    cells = read(client, p4r.MeterEntry(meter_id=meter.id))
    assert len(cells) == meter.size
    assert [c.meter_entry.index.index for c in cells if c.meter_entry.HasField("config")] == [7]
    assert len(read(client, p4r.MeterEntry())) == meter.size

    request = p4r.WriteRequest()
    request.updates.append(
        update(MODIFY, p4r.MeterEntry(meter_id=meter.id, index=p4r.Index(index=7)))
    )
    client.write(request)
    (cell,) = read(client, p4r.MeterEntry(meter_id=meter.id, index=p4r.Index(index=7)))
    assert not cell.meter_entry.HasField("config")


@pytest.mark.parametrize(
    ("kind", "message", "code"),
    [
        (
            INSERT,
            {"index": 1, "config": {"cir": 1, "cburst": 1, "pir": 1, "pburst": 1}},
            "INVALID_ARGUMENT",
        ),
        (MODIFY, {"index": 4096}, "OUT_OF_RANGE"),
        (
            MODIFY,
            {"index": 1, "config": {"cir": 2, "cburst": 1, "pir": 1, "pburst": 1}},
            "INVALID_ARGUMENT",
        ),
        (
            MODIFY,
            {"index": 1, "config": {"cir": -1, "cburst": 1, "pir": 1, "pburst": 1}},
            "INVALID_ARGUMENT",
        ),
    ],
    ids=["insert", "index-too-high", "pir-below-cir", "negative"],
)
def test_bad_meter_writes_are_refused(
    client: Client, kind: int, message: dict[str, Any], code: str
) -> None:
    (meter,) = PROGRAM.meters.values()
    entry = p4r.MeterEntry(meter_id=meter.id, index=p4r.Index(index=message["index"]))
    if "config" in message:
        entry.config.CopyFrom(p4r.MeterConfig(**message["config"]))
    request = p4r.WriteRequest()
    request.updates.append(update(kind, entry))
    with pytest.raises(Exception) as info:
        client.write(request)
    assert code in str(info.value)
