"""Client arbitration over StreamChannel, and who may write (P4Runtime spec, section 5)."""

from __future__ import annotations

import time

import grpc
import pytest

from emulator.p4rt import (
    INSERT,
    SLICE_BY_ID,
    Code,
    Controller,
    entity,
    slice_entry,
    table_entry,
    update,
)
from sliceportal.emulator.server import EmulatorServer
from sliceportal.p4rt.proto import p4r

OK, ALREADY_EXISTS, NOT_FOUND = 0, 6, 5


def arbitration_status(message: p4r.StreamMessageResponse) -> int:
    assert message.HasField("arbitration"), message
    return int(message.arbitration.status.code)


def election_id(message: p4r.StreamMessageResponse) -> int:
    return (message.arbitration.election_id.high << 64) | message.arbitration.election_id.low


def assert_write_denied(controller: Controller, slice_id: int) -> None:
    """Writing a slice entry through `controller` is refused: it is not the primary."""
    with pytest.raises(grpc.RpcError) as caught:
        controller.write(update(INSERT, slice_entry(slice_id)))
    assert caught.value.code() == Code.PERMISSION_DENIED


def test_first_controller_becomes_primary(server: EmulatorServer) -> None:
    primary = Controller(server.address, 5, arbitrate=False)
    response = primary.arbitrate()
    assert arbitration_status(response) == OK
    assert response.arbitration.device_id == 1
    assert election_id(response) == 5
    primary.close()


def test_lower_election_id_is_backup(server: EmulatorServer) -> None:
    primary = Controller(server.address, 10)
    backup = Controller(server.address, 3, arbitrate=False)
    response = backup.arbitrate()
    assert arbitration_status(response) == ALREADY_EXISTS
    assert election_id(response) == 10  # the primary's
    assert not primary.has_message()  # a new backup is news to itself only
    backup.close()
    primary.close()


def test_higher_election_id_takes_over_and_everybody_is_told(server: EmulatorServer) -> None:
    old = Controller(server.address, 1)
    new = Controller(server.address, 2, arbitrate=False)
    assert arbitration_status(new.arbitrate()) == OK
    demoted = old.next_message()
    assert arbitration_status(demoted) == ALREADY_EXISTS
    assert election_id(demoted) == 2
    old.close()
    new.close()


def test_uint128_election_ids_compare_by_high_word(server: EmulatorServer) -> None:
    low = Controller(server.address, (1 << 64) - 1)
    high = Controller(server.address, 1 << 64, arbitrate=False)
    response = high.arbitrate()
    assert arbitration_status(response) == OK
    assert response.arbitration.election_id.high == 1
    assert response.arbitration.election_id.low == 0
    low.close()
    high.close()


def test_duplicate_election_id_ends_the_stream_invalid_argument(server: EmulatorServer) -> None:
    first = Controller(server.address, 7)
    second = Controller(server.address, 7, arbitrate=False)
    with pytest.raises(grpc.RpcError) as caught:
        second.arbitrate()
    assert caught.value.code() == Code.INVALID_ARGUMENT
    assert "already used" in caught.value.details()
    first.close()
    second.close()


def test_unknown_device_id_ends_the_stream_not_found(server: EmulatorServer) -> None:
    controller = Controller(server.address, 1, arbitrate=False)
    with pytest.raises(grpc.RpcError) as caught:
        controller.arbitrate(device_id=2)
    assert caught.value.code() == Code.NOT_FOUND
    controller.close()


def test_a_stream_cannot_change_device_or_role(server: EmulatorServer) -> None:
    controller = Controller(server.address, 1)
    with pytest.raises(grpc.RpcError) as caught:
        controller.arbitrate(device_id=9)
    assert caught.value.code() == Code.FAILED_PRECONDITION
    controller.close()

    controller = Controller(server.address, 1)
    controller.role = "other"
    with pytest.raises(grpc.RpcError) as caught:
        controller.arbitrate()
    assert caught.value.code() == Code.FAILED_PRECONDITION
    controller.close()


def test_role_config_is_refused(server: EmulatorServer) -> None:
    controller = Controller(server.address, 1, arbitrate=False)
    request = p4r.StreamMessageRequest()
    request.arbitration.device_id = 1
    request.arbitration.role.name = "r"
    request.arbitration.role.config.type_url = "example.com/RoleConfig"
    controller.send(request)
    with pytest.raises(grpc.RpcError) as caught:
        controller.next_message()
    assert caught.value.code() == Code.INVALID_ARGUMENT
    controller.close()


def test_primary_leaving_leaves_no_primary_until_someone_arbitrates_high_enough(
    server: EmulatorServer,
) -> None:
    primary = Controller(server.address, 10)
    primary.set_pipeline()
    backup = Controller(server.address, 5)
    primary.close()
    notice = backup.next_message()
    assert arbitration_status(notice) == NOT_FOUND
    assert election_id(notice) == 10  # the highest ever seen
    assert_write_denied(backup, 1)

    backup.election_id = 10  # equal to the highest seen is enough
    assert arbitration_status(backup.arbitrate()) == OK
    backup.write(update(INSERT, slice_entry(1)))
    backup.close()


def test_primary_lowering_its_id_becomes_backup_and_all_are_told(server: EmulatorServer) -> None:
    primary = Controller(server.address, 10)
    other = Controller(server.address, 5)
    primary.election_id = 4
    assert arbitration_status(primary.arbitrate()) == NOT_FOUND
    assert arbitration_status(other.next_message()) == NOT_FOUND
    primary.close()
    other.close()


def test_unset_election_id_is_a_backup_forever(server: EmulatorServer) -> None:
    standby = Controller(server.address, None, arbitrate=False)
    response = standby.arbitrate()
    assert arbitration_status(response) == NOT_FOUND
    assert not response.arbitration.HasField("election_id")  # nobody was ever primary
    standby.close()


def test_roles_have_their_own_primaries(server: EmulatorServer) -> None:
    default = Controller(server.address, 1)
    default.set_pipeline()
    other = Controller(server.address, 1, role="monitor", arbitrate=False)
    response = other.arbitrate()
    assert arbitration_status(response) == OK  # same id, different role: no conflict
    assert response.arbitration.role.name == "monitor"
    other.write(update(INSERT, slice_entry(1)))
    default.write(update(INSERT, slice_entry(2)))
    default.close()
    other.close()


def test_a_backup_reads_everything_and_disturbs_nothing(
    controller: Controller, server: EmulatorServer
) -> None:
    """`sliceportal shell`'s role: a controller with a lower election id (0 here, below the
    primary's 1: zero is a valid id) is a backup; it reads while the primary writes, the primary
    hears nothing of it, keeps writing while it is connected and after it left."""
    controller.write(update(INSERT, slice_entry(1)))
    backup = Controller(server.address, 0, arbitrate=False)
    response = backup.arbitrate()
    assert arbitration_status(response) == ALREADY_EXISTS
    assert election_id(response) == 1  # the primary's
    assert backup.read(table_entry(SLICE_BY_ID)) == [entity(slice_entry(1))]
    controller.write(update(INSERT, slice_entry(2)))
    assert len(backup.read(table_entry(SLICE_BY_ID))) == 2
    assert_write_denied(backup, 3)
    backup.close()
    controller.write(update(INSERT, slice_entry(3)))
    assert not controller.has_message()  # no arbitration news for the primary, ever
    assert len(controller.read(table_entry(SLICE_BY_ID))) == 3


def test_write_from_a_backup_is_permission_denied(
    controller: Controller, server: EmulatorServer
) -> None:
    controller.election_id = 2
    assert arbitration_status(controller.arbitrate()) == OK
    backup = Controller(server.address, 1)
    assert_write_denied(backup, 1)
    backup.close()


def test_write_needs_the_primary_election_id_not_just_any(controller: Controller) -> None:
    controller.election_id = 99  # lie in the request, without arbitrating
    assert_write_denied(controller, 1)


def test_write_to_an_unknown_device_or_role_is_not_found(controller: Controller) -> None:
    request = controller.write_request(update(INSERT, slice_entry(1)))
    request.device_id = 2
    with pytest.raises(grpc.RpcError) as caught:
        controller.stub.Write(request)
    assert caught.value.code() == Code.NOT_FOUND
    request.device_id = 1
    request.role = "nobody"
    with pytest.raises(grpc.RpcError) as caught:
        controller.stub.Write(request)
    assert caught.value.code() == Code.NOT_FOUND


def test_too_many_streams_is_resource_exhausted(server: EmulatorServer) -> None:
    """Streams that never arbitrate count too: each holds a server thread."""
    controllers = [Controller(server.address, i) for i in range(1, 9)]
    for _ in range(8):
        idle = Controller(server.address, arbitrate=False)
        idle.send(p4r.StreamMessageRequest(packet=p4r.PacketOut(payload=b"x")))
        idle.next_message()  # the stream is open on the server once it has answered
        controllers.append(idle)
    extra = Controller(server.address, 100, arbitrate=False)
    with pytest.raises(grpc.RpcError) as caught:
        extra.arbitrate()
    assert caught.value.code() == Code.RESOURCE_EXHAUSTED
    extra.close()

    controllers.pop().close()
    deadline = time.monotonic() + 5
    while True:  # the server notices the closed stream asynchronously
        retry = Controller(server.address, 100, arbitrate=False)
        try:
            assert arbitration_status(retry.arbitrate()) == OK
            break
        except grpc.RpcError:
            retry.close()
            assert time.monotonic() < deadline
            time.sleep(0.05)
    for controller in [*controllers, retry]:
        controller.close()


def test_packet_out_gets_a_stream_error(controller: Controller) -> None:
    request = p4r.StreamMessageRequest()
    request.packet.payload = b"\x00" * 64
    controller.send(request)
    response = controller.next_message()
    assert response.error.canonical_code == Code.UNIMPLEMENTED.value[0]
    assert response.error.packet_out.packet_out.payload == b"\x00" * 64
