"""Write: table entries, the default entry, counters and registers, and every error code.

A failed batch answers UNKNOWN with one p4.v1.Error per update, so a single failing update is
checked through `write_error`.
"""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from emulator.p4rt import (
    ACL,
    CLASSIFIER,
    CLASSIFIER_HITS,
    DELAY_HISTOGRAM,
    DELETE,
    DROP,
    INSERT,
    MODIFY,
    NO_ACTION,
    SET_SLICE,
    SLICE_BY_ID,
    SLICE_FORWARDED,
    TO_DEFAULT_SLICE,
    VQ_DELAY,
    Code,
    Controller,
    batch_errors,
    classifier_entry,
    counter_entry,
    exact,
    lpm,
    optional,
    range_,
    register_entry,
    slice_entry,
    table_entry,
    ternary,
    update,
)
from sliceportal.p4rt.proto import p4r

OK = 0


def write_error(controller: Controller, *updates: Any) -> Any:
    """The p4.v1.Error of the last update of a batch expected to fail."""
    with pytest.raises(grpc.RpcError) as caught:
        controller.write(*updates)
    assert caught.value.code() == Code.UNKNOWN
    errors = batch_errors(caught.value)
    assert len(errors) == len(updates)
    return errors[-1]


def assert_refused(controller: Controller, code: grpc.StatusCode, *updates: Any) -> str:
    error = write_error(controller, *updates)
    assert error.canonical_code == code.value[0], error
    return str(error.message)


def acl_entry(priority: int = 10, **fields: Any) -> Any:
    return table_entry(
        ACL,
        [ternary(1, b"\x0a\x00\x00\x00", b"\xff\x00\x00\x00"), range_(2, b"\x00\x50", b"\x01\xbb")],
        DROP,
        priority=priority,
        **fields,
    )


# -- accepted writes --------------------------------------------------------------------------


def test_insert_modify_delete_round_trip(controller: Controller) -> None:
    controller.write(update(INSERT, slice_entry(7, port=1)))
    (read,) = controller.read(table_entry(SLICE_BY_ID))
    assert read.table_entry == slice_entry(7, port=1)

    controller.write(update(MODIFY, slice_entry(7, port=2)))
    (read,) = controller.read(table_entry(SLICE_BY_ID))
    assert read.table_entry == slice_entry(7, port=2)

    controller.write(update(DELETE, table_entry(SLICE_BY_ID, [exact(1, b"\x00\x07")])))
    assert controller.read(table_entry(SLICE_BY_ID)) == []


def test_values_are_read_back_canonical(controller: Controller) -> None:
    """Leading zero bytes are accepted (as on BMv2) and the shortest encoding is returned."""
    padded = table_entry(
        SLICE_BY_ID,
        [exact(1, b"\x00\x07")],
        SET_SLICE,
        {1: b"\x00\x00\x07", 2: b"\x00\x01", 3: b"\x00"},
    )
    controller.write(update(INSERT, padded))
    (read,) = controller.read(table_entry(SLICE_BY_ID))
    assert read.table_entry == slice_entry(7, port=1)


def test_the_same_key_in_another_encoding_is_the_same_entry(controller: Controller) -> None:
    controller.write(update(INSERT, slice_entry(7)))
    duplicate = slice_entry(7)
    duplicate.match[0].exact.value = b"\x00\x07"
    message = assert_refused(controller, Code.ALREADY_EXISTS, update(INSERT, duplicate))
    assert "exists" in message


def test_metadata_and_cookie_are_kept(controller: Controller) -> None:
    entry = slice_entry(1, controller_metadata=99, metadata=b"slice-a")
    controller.write(update(INSERT, entry))
    (read,) = controller.read(table_entry(SLICE_BY_ID))
    assert read.table_entry.controller_metadata == 99
    assert read.table_entry.metadata == b"slice-a"


def test_ternary_range_and_optional_entries_need_a_priority(controller: Controller) -> None:
    controller.write(update(INSERT, acl_entry(10)), update(INSERT, acl_entry(20)))
    controller.write(
        update(INSERT, table_entry(ACL, [optional(3, b"\x06")], DROP, priority=5)),
        update(INSERT, table_entry(ACL, [], DROP, priority=1)),  # all fields don't care
    )
    assert len(controller.read(table_entry(ACL))) == 4
    message = assert_refused(controller, Code.INVALID_ARGUMENT, update(INSERT, acl_entry(0)))
    assert "priority" in message


def test_priority_must_be_zero_for_exact_and_lpm_tables(controller: Controller) -> None:
    entry = slice_entry(1)
    entry.priority = 3
    assert "priority must be 0" in assert_refused(
        controller, Code.INVALID_ARGUMENT, update(INSERT, entry)
    )


def test_lpm_entries(controller: Controller) -> None:
    controller.write(
        update(INSERT, classifier_entry(10, b"\x0a\x00\x00\x00", 8)),
        update(INSERT, classifier_entry(10, b"\x0a\x01\x00\x00", 16)),
    )
    reads = controller.read(table_entry(CLASSIFIER))
    assert [e.table_entry.match[1].lpm.prefix_len for e in reads] == [8, 16]


def test_lpm_field_may_be_omitted_as_dont_care(controller: Controller) -> None:
    entry = table_entry(CLASSIFIER, [exact(1, b"\x00\x0a")], DROP)
    controller.write(update(INSERT, entry))
    (read,) = controller.read(table_entry(CLASSIFIER))
    assert len(read.table_entry.match) == 1


def test_modify_and_reset_the_default_entry(controller: Controller) -> None:
    default = table_entry(CLASSIFIER, [], TO_DEFAULT_SLICE, {1: b"\x03"}, is_default_action=True)
    controller.write(update(MODIFY, default))
    (read,) = controller.read(table_entry(CLASSIFIER, is_default_action=True))
    assert read.table_entry.is_default_action
    assert read.table_entry.action.action.action_id == TO_DEFAULT_SLICE
    assert read.table_entry.action.action.params[0].value == b"\x03"

    controller.write(update(MODIFY, table_entry(CLASSIFIER, is_default_action=True)))
    (read,) = controller.read(table_entry(CLASSIFIER, is_default_action=True))
    assert read.table_entry.action.action.params[0].value == b"\x00"  # the P4Info's initial value


def test_continue_on_error_applies_the_good_updates(controller: Controller) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        controller.write(
            update(INSERT, slice_entry(1)),
            update(INSERT, slice_entry(1)),
            update(INSERT, slice_entry(2)),
            update(DELETE, slice_entry(3)),
        )
    assert caught.value.code() == Code.UNKNOWN
    codes = [e.canonical_code for e in batch_errors(caught.value)]
    assert codes == [OK, Code.ALREADY_EXISTS.value[0], OK, Code.NOT_FOUND.value[0]]
    assert len(controller.read(table_entry(SLICE_BY_ID))) == 2


def test_only_continue_on_error_batches_as_on_bmv2(controller: Controller) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        controller.write(
            update(INSERT, slice_entry(1)), atomicity=p4r.WriteRequest.ROLLBACK_ON_ERROR
        )
    assert caught.value.code() == Code.UNIMPLEMENTED


# -- error codes ------------------------------------------------------------------------------


def test_modify_or_delete_a_missing_entry_is_not_found(controller: Controller) -> None:
    assert_refused(controller, Code.NOT_FOUND, update(MODIFY, slice_entry(1)))
    assert_refused(controller, Code.NOT_FOUND, update(DELETE, slice_entry(1)))


def test_a_full_table_is_resource_exhausted(controller: Controller) -> None:
    controller.write(
        *(update(INSERT, classifier_entry(vid, b"\x0a\x00\x00\x00", 8)) for vid in range(4))
    )
    message = assert_refused(
        controller,
        Code.RESOURCE_EXHAUSTED,
        update(INSERT, classifier_entry(4, b"\x0a\x00\x00\x00", 8)),
    )
    assert "full (4 entries)" in message
    # replacing an entry in a full table works
    controller.write(update(MODIFY, classifier_entry(3, b"\x0a\x00\x00\x00", 8, slice_id=9)))


def _with(entry: Any, change: Any) -> Any:
    change(entry)
    return entry


INVALID_INSERTS = {
    "unknown table": table_entry(12345, [exact(1, b"\x01")], DROP),
    "unknown match field": table_entry(SLICE_BY_ID, [exact(9, b"\x01")], DROP),
    "field given twice": table_entry(SLICE_BY_ID, [exact(1, b"\x01"), exact(1, b"\x02")], DROP),
    "missing exact field": table_entry(SLICE_BY_ID, [], DROP),
    "wrong match kind": table_entry(SLICE_BY_ID, [lpm(1, b"\x01", 8)], DROP),
    "value too wide": table_entry(SLICE_BY_ID, [exact(1, b"\x01\x00\x00")], DROP),
    "value too wide for 12 bits": table_entry(CLASSIFIER, [exact(1, b"\x10\x00")], DROP),
    "empty value": table_entry(SLICE_BY_ID, [exact(1, b"")], DROP),
    "lpm bits beyond prefix": classifier_entry(1, b"\x0a\x00\x00\x01", 24),
    "lpm prefix 0": classifier_entry(1, b"\x00", 0),
    "lpm prefix too long": classifier_entry(1, b"\x0a", 33),
    "ternary zero mask": table_entry(ACL, [ternary(1, b"\x00", b"\x00")], DROP, priority=1),
    "ternary value outside mask": table_entry(
        ACL, [ternary(1, b"\x0a\x01", b"\xff\x00")], DROP, priority=1
    ),
    "range low above high": table_entry(ACL, [range_(2, b"\x02", b"\x01")], DROP, priority=1),
    "range covers everything": table_entry(
        ACL, [range_(2, b"\x00", b"\xff\xff")], DROP, priority=1
    ),
    "unknown action": table_entry(SLICE_BY_ID, [exact(1, b"\x01")], 16777299),
    "action not in table": table_entry(SLICE_BY_ID, [exact(1, b"\x01")], NO_ACTION),
    "missing parameter": table_entry(
        SLICE_BY_ID, [exact(1, b"\x01")], SET_SLICE, {1: b"\x01", 2: b"\x01"}
    ),
    "unknown parameter": table_entry(
        SLICE_BY_ID,
        [exact(1, b"\x01")],
        SET_SLICE,
        {1: b"\x01", 2: b"\x01", 3: b"\x01", 4: b"\x01"},
    ),
    "parameter too wide": table_entry(
        SLICE_BY_ID, [exact(1, b"\x01")], SET_SLICE, {1: b"\x01", 2: b"\x02\x00", 3: b"\x01"}
    ),
    "one-byte parameter too wide": table_entry(
        SLICE_BY_ID, [exact(1, b"\x01")], SET_SLICE, {1: b"\x01", 2: b"\x01", 3: b"\x08"}
    ),
    "empty parameter": table_entry(
        SLICE_BY_ID, [exact(1, b"\x01")], SET_SLICE, {1: b"\x01", 2: b"\x01", 3: b""}
    ),
    "no action": table_entry(SLICE_BY_ID, [exact(1, b"\x01")]),
    "empty action": _with(
        table_entry(SLICE_BY_ID, [exact(1, b"\x01")]), lambda e: e.action.SetInParent()
    ),
    "action profile member": _with(
        table_entry(SLICE_BY_ID, [exact(1, b"\x01")]),
        lambda e: setattr(e.action, "action_profile_member_id", 1),
    ),
    "default entry": table_entry(SLICE_BY_ID, [], DROP, is_default_action=True),
    "is_const": slice_entry(1, is_const=True),
    "counter data without direct counter": _with(
        slice_entry(1), lambda e: e.counter_data.SetInParent()
    ),
    "meter config without meter": _with(slice_entry(1), lambda e: e.meter_config.SetInParent()),
    "idle timeout unsupported": slice_entry(1, idle_timeout_ns=1000),
    "time since last hit": _with(slice_entry(1), lambda e: e.time_since_last_hit.SetInParent()),
}


@pytest.mark.parametrize("entry", INVALID_INSERTS.values(), ids=INVALID_INSERTS.keys())
def test_invalid_inserts_are_invalid_argument(controller: Controller, entry: Any) -> None:
    assert_refused(controller, Code.INVALID_ARGUMENT, update(INSERT, entry))
    assert controller.read(table_entry(0)) == []


def test_bmv2_needs_an_action_to_modify_an_entry(controller: Controller) -> None:
    controller.write(update(INSERT, slice_entry(1)))
    bare = table_entry(SLICE_BY_ID, [exact(1, b"\x01")])
    assert_refused(controller, Code.INVALID_ARGUMENT, update(MODIFY, bare))


def test_delete_looks_only_at_the_key(controller: Controller) -> None:
    controller.write(update(INSERT, slice_entry(1)))
    nonsense = table_entry(SLICE_BY_ID, [exact(1, b"\x01")], 16777299)
    controller.write(update(DELETE, nonsense))


def test_default_entry_rules(controller: Controller) -> None:
    keyed = table_entry(CLASSIFIER, [exact(1, b"\x01")], DROP, is_default_action=True)
    assert_refused(controller, Code.INVALID_ARGUMENT, update(MODIFY, keyed))
    default = table_entry(CLASSIFIER, [], DROP, is_default_action=True)
    assert_refused(controller, Code.INVALID_ARGUMENT, update(DELETE, default))
    # the action scopes of the P4Info
    table_only = table_entry(SLICE_BY_ID, [], SET_SLICE, {1: b"\x01", 2: b"\x01", 3: b"\x01"})
    table_only.is_default_action = True
    assert_refused(controller, Code.PERMISSION_DENIED, update(MODIFY, table_only))
    default_only = table_entry(CLASSIFIER, [exact(1, b"\x01")], TO_DEFAULT_SLICE, {1: b"\x01"})
    assert_refused(controller, Code.PERMISSION_DENIED, update(INSERT, default_only))
    const_default = table_entry(ACL, [], NO_ACTION, is_default_action=True)
    assert_refused(controller, Code.PERMISSION_DENIED, update(MODIFY, const_default))


def test_update_without_type_or_entity_is_invalid(controller: Controller) -> None:
    assert_refused(controller, Code.INVALID_ARGUMENT, p4r.Update(entity=p4r.Entity()))
    typeless = update(INSERT, slice_entry(1))
    typeless.type = p4r.Update.UNSPECIFIED
    assert_refused(controller, Code.INVALID_ARGUMENT, typeless)


def test_unmodelled_entities_are_unimplemented(controller: Controller) -> None:
    direct_meter = p4r.Update(type=MODIFY)
    direct_meter.entity.direct_meter_entry.table_entry.table_id = 1
    assert_refused(controller, Code.UNIMPLEMENTED, direct_meter)


def test_a_meter_the_program_lacks_is_invalid(controller: Controller) -> None:
    meter = p4r.Update(type=MODIFY)
    meter.entity.meter_entry.meter_id = 1
    assert_refused(controller, Code.INVALID_ARGUMENT, meter)


def test_malformed_request_bytes_are_invalid_argument(controller: Controller) -> None:
    write = controller.channel.unary_unary(
        "/p4.v1.P4Runtime/Write",
        request_serializer=lambda raw: raw,
        response_deserializer=p4r.WriteResponse.FromString,
    )
    with pytest.raises(grpc.RpcError) as caught:
        write(b"\x22\x05\x0a")  # an update whose length runs past the end
    assert caught.value.code() == Code.INVALID_ARGUMENT
    assert "malformed" in caught.value.details()


# -- counters and registers -------------------------------------------------------------------


def test_counter_cells_can_be_set_one_or_all(controller: Controller) -> None:
    controller.write(
        update(MODIFY, counter_entry(SLICE_FORWARDED, 3, packet_count=5, byte_count=7))
    )
    (cell,) = controller.read(counter_entry(SLICE_FORWARDED, 3))
    assert (cell.counter_entry.data.packet_count, cell.counter_entry.data.byte_count) == (5, 7)
    controller.write(update(MODIFY, counter_entry(SLICE_FORWARDED, packet_count=1, byte_count=2)))
    cells = controller.read(counter_entry(SLICE_FORWARDED))
    assert {
        (c.counter_entry.data.packet_count, c.counter_entry.data.byte_count) for c in cells
    } == {(1, 2)}


def test_counter_write_errors(controller: Controller) -> None:
    assert_refused(
        controller, Code.INVALID_ARGUMENT, update(INSERT, counter_entry(SLICE_FORWARDED, 1))
    )
    assert_refused(
        controller, Code.INVALID_ARGUMENT, update(DELETE, counter_entry(SLICE_FORWARDED, 1))
    )
    assert_refused(controller, Code.INVALID_ARGUMENT, update(MODIFY, counter_entry(999, 1)))
    assert_refused(
        controller, Code.INVALID_ARGUMENT, update(MODIFY, counter_entry(CLASSIFIER_HITS, 1))
    )
    assert_refused(
        controller,
        Code.OUT_OF_RANGE,
        update(MODIFY, counter_entry(DELAY_HISTOGRAM, 32768, packet_count=1)),
    )
    assert_refused(
        controller,
        Code.INVALID_ARGUMENT,
        update(MODIFY, counter_entry(SLICE_FORWARDED, -1, packet_count=1)),
    )
    assert_refused(
        controller,
        Code.INVALID_ARGUMENT,
        update(MODIFY, counter_entry(SLICE_FORWARDED, 1, packet_count=-1)),
    )


def test_direct_counter_of_an_entry(controller: Controller) -> None:
    entry = classifier_entry(1, b"\x0a\x00\x00\x00", 8)
    entry.counter_data.packet_count = 4
    controller.write(update(INSERT, entry))
    direct = p4r.DirectCounterEntry()
    direct.table_entry.CopyFrom(classifier_entry(1, b"\x0a\x00\x00\x00", 8))
    direct.data.packet_count = 10
    direct.data.byte_count = 1000
    controller.write(p4r.Update(type=MODIFY, entity=p4r.Entity(direct_counter_entry=direct)))
    (read,) = controller.read(table_entry(CLASSIFIER, counter_data=p4r.CounterData()))
    assert (
        read.table_entry.counter_data.packet_count,
        read.table_entry.counter_data.byte_count,
    ) == (
        10,
        1000,
    )
    missing = p4r.DirectCounterEntry()
    missing.table_entry.CopyFrom(classifier_entry(2, b"\x0a\x00\x00\x00", 8))
    assert_refused(
        controller,
        Code.NOT_FOUND,
        p4r.Update(type=MODIFY, entity=p4r.Entity(direct_counter_entry=missing)),
    )
    assert_refused(
        controller,
        Code.INVALID_ARGUMENT,
        p4r.Update(type=INSERT, entity=p4r.Entity(direct_counter_entry=direct)),
    )


def test_register_cells_can_be_written_and_read(controller: Controller) -> None:
    controller.write(update(MODIFY, register_entry(VQ_DELAY, 5, b"\x00\x00\x12\x34")))
    (cell,) = controller.read(register_entry(VQ_DELAY, 5))
    assert cell.register_entry.data.bitstring == b"\x12\x34"
    assert_refused(
        controller,
        Code.INVALID_ARGUMENT,
        update(MODIFY, register_entry(VQ_DELAY, 5, b"\x01\x00\x00\x00\x00")),
    )
    assert_refused(
        controller, Code.OUT_OF_RANGE, update(MODIFY, register_entry(VQ_DELAY, 4096, b"\x01"))
    )
    assert_refused(controller, Code.INVALID_ARGUMENT, update(MODIFY, register_entry(VQ_DELAY, 1)))
    assert_refused(
        controller, Code.INVALID_ARGUMENT, update(MODIFY, register_entry(4242, 1, b"\x01"))
    )
