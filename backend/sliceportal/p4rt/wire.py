"""Protobuf wire format of P4Runtime, by hand, for the hot paths of the switch and its client.

Shared by the emulator (which decodes Write/Read requests) and the control plane's adapter
(`sliceportal.switches.p4runtime`, which encodes them and decodes Read responses and the
per-update errors of a failed Write). The emulator's fast Read-response encoders stay in
`sliceportal.emulator.wire`, next to the server that needs them.

Why not the generated classes: p4runtime-shell pins `protobuf<3.21`, whose only wheel for
Python 3.11 is the pure-Python implementation. On these machines it needs ~180 ms to parse one
`WriteRequest` of 1,000 table entries, ~0.8 s to build one, and ~3 s to parse a `ReadResponse`
of 32,768 counter cells. Encoding and decoding the few message types involved straight from and
to bytes (and slotted dataclasses) costs a few tens of milliseconds instead. Field numbers are
those of `p4/v1/p4runtime.proto` (P4Runtime 1.4) and `google/rpc/status.proto`;
`tests/emulator/test_wire.py`, `tests/emulator/test_cells.py` and
`tests/controlplane/test_wire_client.py` check both directions against the generated classes.
Counter and register cells, tens of thousands per poll, are decoded by a compiled scanner
(`sliceportal.p4rt.scan`) into numpy columns: `counter_cells`, `register_cells`.

Decoding is lenient where protobuf is (unknown fields are skipped, the last value of a repeated
scalar wins) and raises `WireError` on bytes that are not a protobuf message at all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np
import numpy.typing as npt

from sliceportal.p4rt import scan


class WireError(ValueError):
    """The bytes are not a well-formed protobuf message."""


class MatchKind(IntEnum):
    """A `FieldMatch` kind; the numbers are P4Info's `MatchField.MatchType`."""

    UNSET = 0
    EXACT = 2
    LPM = 3
    TERNARY = 4
    RANGE = 5
    OPTIONAL = 6
    OTHER = 100


# FieldMatch oneof field number -> kind
_MATCH_KIND_BY_FIELD = {
    2: MatchKind.EXACT,
    3: MatchKind.TERNARY,
    4: MatchKind.LPM,
    6: MatchKind.RANGE,
    7: MatchKind.OPTIONAL,
    100: MatchKind.OTHER,
}
_MATCH_FIELD_BY_KIND = {kind: number for number, kind in _MATCH_KIND_BY_FIELD.items()}


class EntityKind(IntEnum):
    """The `Entity` oneof field numbers."""

    EXTERN_ENTRY = 1
    TABLE_ENTRY = 2
    ACTION_PROFILE_MEMBER = 3
    ACTION_PROFILE_GROUP = 4
    METER_ENTRY = 5
    DIRECT_METER_ENTRY = 6
    COUNTER_ENTRY = 7
    DIRECT_COUNTER_ENTRY = 8
    PACKET_REPLICATION_ENGINE_ENTRY = 9
    VALUE_SET_ENTRY = 10
    REGISTER_ENTRY = 11
    DIGEST_ENTRY = 12


class UpdateType(IntEnum):
    UNSPECIFIED = 0
    INSERT = 1
    MODIFY = 2
    DELETE = 3


# ---------------------------------------------------------------------------------------------
# Decoded messages (only the fields the emulator looks at)


@dataclass(slots=True)
class FieldMatch:
    field_id: int = 0
    kind: MatchKind = MatchKind.UNSET
    value: bytes = b""  # exact, lpm, ternary, optional; range: low
    mask: bytes = b""  # ternary; range: high
    prefix_len: int = 0


@dataclass(slots=True)
class Action:
    action_id: int = 0
    params: list[tuple[int, bytes]] = field(default_factory=list)


class TableActionKind(IntEnum):
    """The `TableAction` oneof; UNSET when the message is present but empty."""

    UNSET = 0
    ACTION = 1
    MEMBER = 2
    GROUP = 3
    ACTION_SET = 4


@dataclass(slots=True)
class CounterData:
    byte_count: int = 0
    packet_count: int = 0


@dataclass(slots=True)
class TableEntry:
    table_id: int = 0
    match: list[FieldMatch] = field(default_factory=list)
    action_kind: TableActionKind | None = None  # None: `action` not set
    action: Action | None = None
    priority: int = 0
    controller_metadata: int = 0
    metadata: bytes = b""
    counter_data: CounterData | None = None
    has_meter_config: bool = False
    has_meter_counter_data: bool = False
    is_default_action: bool = False
    idle_timeout_ns: int = 0
    has_time_since_last_hit: bool = False
    is_const: bool = False


@dataclass(slots=True)
class CounterEntry:
    counter_id: int = 0
    index: int | None = None
    data: CounterData | None = None


@dataclass(slots=True)
class DirectCounterEntry:
    table_entry: TableEntry | None = None
    data: CounterData | None = None


@dataclass(slots=True)
class MeterConfig:
    """A trTCM's rates (units per second) and bursts (units) (P4Runtime `MeterConfig`)."""

    cir: int = 0
    cburst: int = 0
    pir: int = 0
    pburst: int = 0


@dataclass(slots=True)
class MeterEntry:
    meter_id: int = 0
    index: int | None = None
    config: MeterConfig | None = None  # None: unset, the cell's default (no policing)
    has_counter_data: bool = False


@dataclass(slots=True)
class RegisterEntry:
    register_id: int = 0
    index: int | None = None
    has_data: bool = False
    bitstring: bytes | None = None  # None when `data` holds another P4Data kind


EntityBody = TableEntry | CounterEntry | DirectCounterEntry | RegisterEntry | MeterEntry


@dataclass(slots=True)
class Entity:
    kind: EntityKind | None = None  # None: the oneof is not set
    body: EntityBody | None = None  # None for kinds the emulator does not decode


@dataclass(slots=True)
class Update:
    type: int = 0
    entity: Entity | None = None


@dataclass(slots=True)
class WriteRequest:
    device_id: int = 0
    role: str = ""
    election_id: int | None = None
    updates: list[Update] = field(default_factory=list)
    atomicity: int = 0


@dataclass(slots=True)
class ReadRequest:
    device_id: int = 0
    role: str = ""
    entities: list[Entity] = field(default_factory=list)


# ---------------------------------------------------------------------------------------------
# Decoding


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = 0
    shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise WireError("varint longer than 10 bytes")


def _fields(buf: bytes) -> tuple[dict[int, int], list[tuple[int, bytes]]]:
    """A message's varint fields (last value wins) and its length-delimited fields, in order.

    A field whose wire type is not the one the schema expects ends up in the other collection,
    where the decoders do not look for it: protobuf treats it as an unknown field too.
    """
    ints: dict[int, int] = {}
    blobs: list[tuple[int, bytes]] = []
    append = blobs.append
    pos = 0
    end = len(buf)
    try:
        while pos < end:
            tag = buf[pos]
            pos += 1
            if tag >= 0x80:
                tag, pos = _varint(buf, pos - 1)
            wire_type = tag & 7
            if wire_type == 2:
                size = buf[pos]
                pos += 1
                if size >= 0x80:
                    size, pos = _varint(buf, pos - 1)
                if pos + size > end:
                    raise WireError("length-delimited field runs past the end of the message")
                append((tag >> 3, buf[pos : pos + size]))
                pos += size
            elif wire_type == 0:
                value = buf[pos]
                pos += 1
                if value >= 0x80:
                    value, pos = _varint(buf, pos - 1)
                ints[tag >> 3] = value
            elif wire_type == 1:
                pos += 8
            elif wire_type == 5:
                pos += 4
            else:
                raise WireError(f"unsupported wire type {wire_type}")
    except IndexError:
        raise WireError("message ends inside a field") from None
    if pos != end:
        raise WireError("message ends inside a fixed-width field")
    return ints, blobs


def _only_field(buf: bytes, start: int) -> bytes | None:
    """The payload of the length-delimited field at `start` if it fills the rest of `buf`.

    For the fast paths: messages that wrap exactly one sub-message, as serializers write them.
    """
    try:
        size, pos = _varint(buf, start + 1)
    except IndexError:
        return None
    return buf[pos:] if pos + size == len(buf) else None


def _signed(number: int) -> int:
    """An int32/int64 field: negative numbers arrive as 64-bit two's complement."""
    return number - (1 << 64) if number >= 1 << 63 else number


def _last(blobs: list[tuple[int, bytes]], number: int) -> bytes | None:
    found = None
    for blob_number, blob in blobs:
        if blob_number == number:
            found = blob
    return found


def _uint128(buf: bytes) -> int:
    ints, _ = _fields(buf)
    return (ints.get(1, 0) << 64) | ints.get(2, 0)


# FieldMatch oneof tag byte -> kind, for the fast path below
_MATCH_KIND_BY_TAG = {(number << 3) | 2: kind for number, kind in _MATCH_KIND_BY_FIELD.items()}


def _field_match(buf: bytes) -> FieldMatch:
    # Fast path for the layout protobuf serializers write: field_id, then the kind's message
    # with its value (and prefix length), all short.
    size = len(buf)
    if 6 <= size < 128 and buf[0] == 0x08 and buf[1] < 0x80 and buf[3] == size - 4:
        kind = _MATCH_KIND_BY_TAG.get(buf[2])
        if kind in (MatchKind.EXACT, MatchKind.OPTIONAL):
            if buf[4] == 0x0A and buf[5] == size - 6:
                return FieldMatch(buf[1], kind, buf[6:])
        elif kind == MatchKind.LPM:
            if buf[4] == 0x0A and buf[5] == size - 8 and buf[-2] == 0x10 and buf[-1] < 0x80:
                return FieldMatch(buf[1], kind, buf[6:-2], b"", buf[-1])
    ints, blobs = _fields(buf)
    match = FieldMatch(ints.get(1, 0))
    for number, blob in blobs:
        kind = _MATCH_KIND_BY_FIELD.get(number)
        if kind is None:
            continue
        sub_ints, sub_blobs = _fields(blob)
        match.kind = kind
        match.value = match.mask = b""
        for sub_number, sub_blob in sub_blobs:
            if sub_number == 1:
                match.value = sub_blob
            elif sub_number == 2:
                match.mask = sub_blob
        match.prefix_len = _signed(sub_ints.get(2, 0)) if kind == MatchKind.LPM else 0
    return match


def _action(buf: bytes) -> Action:
    ints, blobs = _fields(buf)
    action = Action(ints.get(1, 0))
    params = action.params
    for number, blob in blobs:
        if number == 4:
            # Fast path: a short param_id then a short value, as serializers write them.
            if 4 <= len(blob) < 128 and blob[0] == 0x10 and blob[1] < 0x80 and blob[2] == 0x1A:
                if blob[3] == len(blob) - 4:
                    params.append((blob[1], blob[4:]))
                    continue
            param_ints, param_blobs = _fields(blob)
            params.append((param_ints.get(2, 0), _last(param_blobs, 3) or b""))
    return action


def _counter_data(buf: bytes) -> CounterData:
    ints, _ = _fields(buf)
    return CounterData(_signed(ints.get(1, 0)), _signed(ints.get(2, 0)))


def _index(buf: bytes) -> int:
    ints, _ = _fields(buf)
    return _signed(ints.get(1, 0))


def decode_table_entry(buf: bytes) -> TableEntry:
    ints, blobs = _fields(buf)
    entry = TableEntry(ints.get(1, 0))
    if ints:
        entry.priority = _signed(ints.get(4, 0))
        entry.controller_metadata = ints.get(5, 0)
        entry.is_default_action = ints.get(8, 0) != 0
        entry.idle_timeout_ns = _signed(ints.get(9, 0))
        entry.is_const = ints.get(13, 0) != 0
    for number, blob in blobs:
        if number == 2:
            entry.match.append(_field_match(blob))
        elif number == 3:
            entry.action_kind = TableActionKind.UNSET
            entry.action = None
            action_ints, action_blobs = _fields(blob)
            for action_number, action_blob in action_blobs:
                if action_number == 1:
                    entry.action_kind = TableActionKind.ACTION
                    entry.action = _action(action_blob)
                elif action_number == 4:
                    entry.action_kind = TableActionKind.ACTION_SET
                    entry.action = None
            for action_number in action_ints:
                if action_number in (2, 3):
                    entry.action_kind = TableActionKind(action_number)
                    entry.action = None
        elif number == 6:
            entry.has_meter_config = True
        elif number == 7:
            entry.counter_data = _counter_data(blob)
        elif number == 10:
            entry.has_time_since_last_hit = True
        elif number == 11:
            entry.metadata = blob
        elif number == 12:
            entry.has_meter_counter_data = True
    return entry


def _counter_entry(buf: bytes) -> CounterEntry:
    ints, blobs = _fields(buf)
    entry = CounterEntry(ints.get(1, 0))
    for number, blob in blobs:
        if number == 2:
            entry.index = _index(blob)
        elif number == 3:
            entry.data = _counter_data(blob)
    return entry


def _direct_counter_entry(buf: bytes) -> DirectCounterEntry:
    entry = DirectCounterEntry()
    for number, blob in _fields(buf)[1]:
        if number == 1:
            entry.table_entry = decode_table_entry(blob)
        elif number == 2:
            entry.data = _counter_data(blob)
    return entry


def _register_entry(buf: bytes) -> RegisterEntry:
    ints, blobs = _fields(buf)
    entry = RegisterEntry(ints.get(1, 0))
    for number, blob in blobs:
        if number == 2:
            entry.index = _index(blob)
        elif number == 3:
            _, data_blobs = _fields(blob)
            entry.has_data = True
            entry.bitstring = None
            if data_blobs and data_blobs[-1][0] == 1:
                entry.bitstring = data_blobs[-1][1]
    return entry


def decode_meter_config(buf: bytes) -> MeterConfig:
    ints, _ = _fields(buf)
    return MeterConfig(*(_signed(ints.get(n, 0)) for n in (1, 2, 3, 4)))


def _meter_entry(buf: bytes) -> MeterEntry:
    ints, blobs = _fields(buf)
    entry = MeterEntry(ints.get(1, 0))
    for number, blob in blobs:
        if number == 2:
            entry.index = _index(blob)
        elif number == 3:
            entry.config = decode_meter_config(blob)
        elif number == 4:
            entry.has_counter_data = True
    return entry


_BODY_DECODERS: dict[EntityKind, Callable[[bytes], EntityBody]] = {
    EntityKind.METER_ENTRY: _meter_entry,
    EntityKind.TABLE_ENTRY: decode_table_entry,
    EntityKind.COUNTER_ENTRY: _counter_entry,
    EntityKind.DIRECT_COUNTER_ENTRY: _direct_counter_entry,
    EntityKind.REGISTER_ENTRY: _register_entry,
}
_ENTITY_KINDS = {kind.value: kind for kind in EntityKind}
_ENTITY_KINDS_BY_TAG = {(kind.value << 3) | 2: kind for kind in EntityKind}


def _entity(buf: bytes) -> Entity:
    if buf:  # fast path: the one field of the oneof
        kind = _ENTITY_KINDS_BY_TAG.get(buf[0])
        body = _only_field(buf, 0) if kind is not None else None
        if kind is not None and body is not None:
            decoder = _BODY_DECODERS.get(kind)
            return Entity(kind, decoder(body) if decoder is not None else None)
    entity = Entity()
    for number, blob in _fields(buf)[1]:
        kind = _ENTITY_KINDS.get(number)
        if kind is not None:
            decoder = _BODY_DECODERS.get(kind)
            entity.kind = kind
            entity.body = decoder(blob) if decoder is not None else None
    return entity


def decode_write_request(buf: bytes) -> WriteRequest:
    ints, blobs = _fields(buf)
    request = WriteRequest(ints.get(1, 0), atomicity=ints.get(5, 0))
    for number, blob in blobs:
        if number == 4:
            # Fast path: the update type, then the entity.
            if len(blob) > 3 and blob[0] == 0x08 and blob[1] < 0x80 and blob[2] == 0x12:
                entity = _only_field(blob, 2)
                if entity is not None:
                    request.updates.append(Update(blob[1], _entity(entity)))
                    continue
            update_ints, update_blobs = _fields(blob)
            entity_blob = _last(update_blobs, 2)
            request.updates.append(
                Update(update_ints.get(1, 0), None if entity_blob is None else _entity(entity_blob))
            )
        elif number == 3:
            request.election_id = _uint128(blob)
        elif number == 6:
            request.role = blob.decode("utf-8", errors="replace")
    return request


def decode_read_request(buf: bytes) -> ReadRequest:
    ints, blobs = _fields(buf)
    request = ReadRequest(ints.get(1, 0))
    for number, blob in blobs:
        if number == 2:
            request.entities.append(_entity(blob))
        elif number == 3:
            request.role = blob.decode("utf-8", errors="replace")
    return request


# ---------------------------------------------------------------------------------------------
# Encoding

_SMALL_VARINTS = [bytes([n]) for n in range(128)]


def varint(number: int) -> bytes:
    """A non-negative int as a varint (negative ones are encoded as 64-bit two's complement)."""
    if 0 <= number < 128:
        return _SMALL_VARINTS[number]
    if 0 < number < 1 << 21:  # unrolled: counters and indices are mostly this small
        if number < 1 << 14:
            return bytes((number & 0x7F | 0x80, number >> 7))
        return bytes((number & 0x7F | 0x80, number >> 7 & 0x7F | 0x80, number >> 14))
    if number < 0:
        number += 1 << 64
    out = bytearray()
    while number >= 0x80:
        out.append((number & 0x7F) | 0x80)
        number >>= 7
    out.append(number)
    return bytes(out)


# Tags of fields 0..15 (all the encoder writes), by wire type: varint and length-delimited.
_INT_TAGS = [bytes([number << 3]) for number in range(16)]
_LEN_TAGS = [bytes([(number << 3) | 2]) for number in range(16)]


def int_field(number: int, value: int) -> bytes:
    """A varint field, omitted when 0 as proto3 does."""
    return _INT_TAGS[number] + varint(value) if value else b""


def len_field(number: int, payload: bytes) -> bytes:
    size = len(payload)
    return _LEN_TAGS[number] + (_SMALL_VARINTS[size] if size < 128 else varint(size)) + payload


def canonical_bytes(value: int) -> bytes:
    """The shortest big-endian byte string of a non-negative int (`b"\\x00"` for 0)."""
    return value.to_bytes((value.bit_length() + 7) // 8 or 1, "big")


def encode_field_match(field_id: int, kind: MatchKind, value: int, extra: int = 0) -> bytes:
    """One FieldMatch; `extra` is the LPM prefix length, the ternary mask or the range high."""
    body = len_field(1, canonical_bytes(value))
    if kind == MatchKind.LPM:
        body += int_field(2, extra)
    elif kind == MatchKind.TERNARY or kind == MatchKind.RANGE:
        body += len_field(2, canonical_bytes(extra))
    return int_field(1, field_id) + len_field(_MATCH_FIELD_BY_KIND[kind], body)


def encode_table_action(action_id: int, param_ids: Iterable[int], args: Iterable[int]) -> bytes:
    """A TableAction holding a direct Action."""
    params = [
        len_field(4, int_field(2, param_id) + len_field(3, canonical_bytes(value)))
        for param_id, value in zip(param_ids, args, strict=True)
    ]
    return len_field(1, int_field(1, action_id) + b"".join(params))


def encode_table_entry(
    table_id: int,
    matches: Iterable[bytes],
    table_action: bytes | None,
    *,
    priority: int = 0,
    controller_metadata: int = 0,
    metadata: bytes = b"",
    is_default_action: bool = False,
    idle_timeout_ns: int = 0,
) -> bytes:
    """A TableEntry body from pre-encoded FieldMatch and TableAction bodies."""
    out = int_field(1, table_id) + b"".join(len_field(2, match) for match in matches)
    if table_action is not None:
        out += len_field(3, table_action)
    out += int_field(4, priority) + int_field(5, controller_metadata)
    out += int_field(8, int(is_default_action)) + int_field(9, idle_timeout_ns)
    if metadata:
        out += len_field(11, metadata)
    return out


# ---------------------------------------------------------------------------------------------
# The client's side: requests out, responses and error details in

ERROR_TYPE_URL = "type.googleapis.com/p4.v1.Error"
_LOW_64 = (1 << 64) - 1


def encode_uint128(value: int) -> bytes:
    """A `p4.v1.Uint128` body (election ids)."""
    return int_field(1, value >> 64) + int_field(2, value & _LOW_64)


def encode_entity(kind: EntityKind, body: bytes) -> bytes:
    """An `Entity` body wrapping one serialized entity (`TableEntry`, `CounterEntry`, ...)."""
    return len_field(kind, body)


def encode_update(kind: UpdateType, entity_kind: EntityKind, body: bytes) -> bytes:
    """An `Update` body: `kind` of the entity `body`."""
    return int_field(1, kind) + len_field(2, encode_entity(entity_kind, body))


def encode_write_request(
    device_id: int, election_id: int, updates: Iterable[bytes], *, role: str = ""
) -> bytes:
    """A `WriteRequest` of serialized `Update`s, atomicity CONTINUE_ON_ERROR (the default and
    the only one BMv2 supports): every update is tried and each gets its own error."""
    out = int_field(1, device_id) + len_field(3, encode_uint128(election_id))
    out += b"".join(len_field(4, update) for update in updates)
    if role:
        out += len_field(6, role.encode())
    return out


def encode_read_request(device_id: int, entities: Iterable[bytes], *, role: str = "") -> bytes:
    """A `ReadRequest` of serialized `Entity` bodies (see `encode_entity`)."""
    out = int_field(1, device_id) + b"".join(len_field(2, entity) for entity in entities)
    if role:
        out += len_field(3, role.encode())
    return out


def encode_cell_entry(entry_id: int, index: int | None) -> bytes:
    """A `CounterEntry` or `RegisterEntry` body (same layout) naming one cell, or every cell of
    the array when `index` is None."""
    if index is None:
        return int_field(1, entry_id)
    return int_field(1, entry_id) + len_field(2, int_field(1, index))


def encode_meter_config(config: MeterConfig) -> bytes:
    """A `MeterConfig` body."""
    return (
        int_field(1, config.cir)
        + int_field(2, config.cburst)
        + int_field(3, config.pir)
        + int_field(4, config.pburst)
    )


def encode_meter_entry(meter_id: int, index: int | None, config: MeterConfig | None) -> bytes:
    """A `MeterEntry` body: one cell (or every cell, `index` None) and its config (None:
    unset, which resets the cell to no policing)."""
    out = encode_cell_entry(meter_id, index)
    if config is not None:
        out += len_field(3, encode_meter_config(config))
    return out


def decode_read_response(buf: bytes) -> list[Entity]:
    """The entities of one serialized `ReadResponse`."""
    return [_entity(blob) for number, blob in _fields(buf)[1] if number == 1]


@dataclass(frozen=True, slots=True)
class UpdateError:
    """One `p4.v1.Error` of a failed Write: `code` is a `google.rpc.Code` (0: the update
    succeeded)."""

    code: int
    message: str


@dataclass(frozen=True, slots=True)
class Status:
    """A `google.rpc.Status`, as P4Runtime servers put it in the `grpc-status-details-bin`
    trailer of a failed Write: one `UpdateError` per update of the batch, in order."""

    code: int
    message: str
    errors: list[UpdateError]


def decode_status(buf: bytes) -> Status:
    """Decode a `google.rpc.Status` whose details are all `p4.v1.Error`s (else WireError)."""
    ints, blobs = _fields(buf)
    errors: list[UpdateError] = []
    for number, blob in blobs:
        if number != 3:
            continue
        _, any_blobs = _fields(blob)
        type_url = (_last(any_blobs, 1) or b"").decode("utf-8", errors="replace")
        if type_url.rpartition("/")[2] != "p4.v1.Error":
            raise WireError(f"a status detail of type {type_url!r}, not p4.v1.Error")
        error_ints, error_blobs = _fields(_last(any_blobs, 2) or b"")
        message = (_last(error_blobs, 2) or b"").decode("utf-8", errors="replace")
        errors.append(UpdateError(_signed(error_ints.get(1, 0)), message))
    message = (_last(blobs, 2) or b"").decode("utf-8", errors="replace")
    return Status(_signed(ints.get(1, 0)), message, errors)


@dataclass(frozen=True, slots=True)
class CounterCells:
    """The `CounterEntry`s of a Read, one array element per entity, in the order received.

    Values are the 64 bits sent: P4Runtime's int64 counters hold a switch's uint64 ones, so a
    count past 2^63 arrives as a negative int64 and is read back here as the uint64 it was.
    """

    counter_ids: npt.NDArray[np.int64]
    indices: npt.NDArray[np.uint64]
    """A negative index (malformed) arrives as a number above 2^63."""
    packets: npt.NDArray[np.uint64]
    bytes: npt.NDArray[np.uint64]


@dataclass(frozen=True, slots=True)
class RegisterCells:
    """The `RegisterEntry`s of a Read (a `P4Data` other than a bitstring reads as 0)."""

    register_ids: npt.NDArray[np.int64]
    indices: npt.NDArray[np.uint64]
    values: npt.NDArray[np.uint64]


def _scan(responses: Iterable[bytes], kind: EntityKind) -> npt.NDArray[np.uint64]:
    buf = np.frombuffer(b"".join(responses), dtype=np.uint8)
    # An entity holding one entry takes 4 bytes at least: one row per 4 bytes is enough.
    out = np.empty((len(buf) // 4 + 1, 4), dtype=np.uint64)
    found, status = scan.scan(buf, int(kind), out)
    if status < 0:
        raise WireError(f"{scan.ERRORS[status]} (at byte {found})")
    return out[:found]


def counter_cells(responses: Iterable[bytes]) -> CounterCells:
    """The counter cells of serialized `ReadResponse`s (one Read's stream); other entities
    are skipped. The poller's hot path: see `sliceportal.p4rt.scan`."""
    rows = _scan(responses, EntityKind.COUNTER_ENTRY)
    return CounterCells(
        rows[:, 0].astype(np.int64), rows[:, 1].copy(), rows[:, 2].copy(), rows[:, 3].copy()
    )


def register_cells(responses: Iterable[bytes]) -> RegisterCells:
    """The register cells of serialized `ReadResponse`s; other entities are skipped."""
    rows = _scan(responses, EntityKind.REGISTER_ENTRY)
    return RegisterCells(rows[:, 0].astype(np.int64), rows[:, 1].copy(), rows[:, 2].copy())


def decode_counter_cells(buf: bytes) -> list[tuple[int, int, int, int]]:
    """(counter id, index, packets, bytes) of the `CounterEntry`s of one serialized
    `ReadResponse`, as Python ints (`counter_cells` gives arrays)."""
    cells = counter_cells((buf,))
    columns = (cells.counter_ids, cells.indices, cells.packets, cells.bytes)
    return list(zip(*(column.tolist() for column in columns), strict=True))
