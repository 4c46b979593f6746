"""The emulator with its default program: the repository's P4Info (p4/build/), driven by
p4runtime-shell's client as the portal drives it. Entries are derived from the P4Info itself,
so these tests follow the program as it changes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from p4.v1 import p4runtime_pb2 as p4r
from p4runtime_sh.p4runtime import P4RuntimeClient
from sliceportal.emulator.wire import MatchKind

from emulator.p4rt import (
    INSERT,
    MODIFY,
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
from sliceportal.p4rt.p4info import ActionScope, P4InfoIndex, TableInfo

PROGRAM = P4InfoIndex.from_file(DEFAULT_P4INFO)


@pytest.fixture
def client(tmp_path: Path) -> Iterator[P4RuntimeClient]:
    """A primary p4runtime-shell client of an emulator serving the default program."""
    with EmulatorServer("127.0.0.1:0") as emulator:
        device_config = tmp_path / "device_config.bin"
        device_config.write_bytes(b"")
        shell = P4RuntimeClient(1, emulator.address, (0, 1))
        shell.set_fwd_pipe_config(str(DEFAULT_P4INFO), str(device_config))
        yield shell
        shell.tear_down()


def some_entry(table: TableInfo, n: int = 1) -> Any:
    """A valid entry of `table` in canonical form, the n-th of a family of distinct ones."""
    matches = []
    for field in table.match_fields:
        top = (1 << field.bitwidth) - 1
        if field.kind == MatchKind.EXACT:
            matches.append(exact(field.id, canonical(n)))
        elif field.kind == MatchKind.LPM:
            prefix = min(field.bitwidth, max(1, n.bit_length()))
            matches.append(lpm(field.id, canonical(n << (field.bitwidth - prefix)), prefix))
        elif field.kind == MatchKind.TERNARY:
            matches.append(ternary(field.id, canonical(n & top), canonical(top)))
        elif field.kind == MatchKind.RANGE:
            matches.append(range_(field.id, canonical(n), canonical(n + 1)))
        else:
            matches.append(optional(field.id, canonical(n)))
    action_id = next(a for a, s in table.action_scopes.items() if s != ActionScope.DEFAULT_ONLY)
    params = {p.id: canonical((1 << p.bitwidth) - 1) for p in PROGRAM.actions[action_id].params}
    return table_entry(
        table.id, matches, action_id, params, priority=n if table.needs_priority else 0
    )


def read(client: P4RuntimeClient, message: Any) -> list[Any]:
    return [e for response in client.read_one(entity(message)) for e in response.entities]


def test_the_default_program_is_served(client: P4RuntimeClient) -> None:
    assert client.get_p4info() == PROGRAM.message
    assert PROGRAM.tables and PROGRAM.counters and PROGRAM.registers


@pytest.mark.parametrize("table", PROGRAM.tables.values(), ids=lambda t: t.name)
def test_every_table_takes_entries_and_reads_them_back(
    client: P4RuntimeClient, table: TableInfo
) -> None:
    entries = [some_entry(table, n) for n in (1, 2, 3)]
    request = p4r.WriteRequest()
    request.updates.extend(update(INSERT, e) for e in entries)
    client.write(request)
    assert [e.table_entry for e in read(client, table_entry(table.id))] == entries


def test_all_tables_at_once(client: P4RuntimeClient) -> None:
    request = p4r.WriteRequest()
    request.updates.extend(update(INSERT, some_entry(t)) for t in PROGRAM.tables.values())
    client.write(request)
    read_back = read(client, table_entry(0))
    assert [e.table_entry.table_id for e in read_back] == list(PROGRAM.tables)


@pytest.mark.parametrize("counter", PROGRAM.counters.values(), ids=lambda c: c.name)
def test_every_counter_reads_whole_and_by_index(client: P4RuntimeClient, counter: Any) -> None:
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
def test_every_register_holds_its_full_width(client: P4RuntimeClient, register: Any) -> None:
    top = canonical((1 << register.bitwidth) - 1)
    request = p4r.WriteRequest()
    request.updates.append(update(MODIFY, register_entry(register.id, register.size - 1, top)))
    client.write(request)
    (cell,) = read(client, register_entry(register.id, register.size - 1))
    assert cell.register_entry.data.bitstring == top


def test_meters_take_configs_by_modify_and_read_them_back(client: P4RuntimeClient) -> None:
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
    client: P4RuntimeClient, kind: int, message: dict[str, Any], code: str
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
