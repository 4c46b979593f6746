"""`like_bmv2`: where BMv2 differs from the specification in ways a client could come to rely
on the emulator for, the emulator can behave as BMv2 does, so the portal is tested against both
(docs/emulator.md, "Like BMv2"). Over real gRPC, as every emulator test."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import pytest

from emulator.p4rt import (
    INSERT,
    P4INFO,
    SLICE_BY_ID,
    VQ_DELAY,
    Code,
    Controller,
    register_entry,
    slice_entry,
    table_entry,
    update,
)
from emulator.test_arbitration import arbitration_status, assert_write_denied, election_id
from sliceportal.emulator.server import EmulatorServer

OK, ALREADY_EXISTS, NOT_FOUND = 0, 6, 5
BMV2_JSON = b'{"pipelines": []}'
"""The shape of a BMv2 JSON, which the emulator checks (it models the program itself)."""


@pytest.fixture
def bmv2() -> Iterator[EmulatorServer]:
    emulator = EmulatorServer("127.0.0.1:0", 1, P4INFO, like_bmv2=True)
    emulator.start()
    yield emulator
    emulator.stop(grace=0)


def test_the_highest_remaining_controller_is_promoted_when_the_primary_leaves(
    bmv2: EmulatorServer,
) -> None:
    primary = Controller(bmv2.address, 10)
    primary.set_pipeline(device_config=BMV2_JSON)
    second = Controller(bmv2.address, 5)
    third = Controller(bmv2.address, 3)
    primary.close()
    # Everybody is told, with the new primary's election id.
    demoted, promoted = third.next_message(), second.next_message()
    assert (arbitration_status(promoted), election_id(promoted)) == (OK, 5)
    assert (arbitration_status(demoted), election_id(demoted)) == (ALREADY_EXISTS, 5)
    second.write(update(INSERT, slice_entry(1)))
    assert_write_denied(third, 2)
    second.close()
    promoted = third.next_message()
    assert (arbitration_status(promoted), election_id(promoted)) == (OK, 3)
    third.write(update(INSERT, slice_entry(2)))
    third.close()


def test_a_backup_that_leaves_changes_nothing(bmv2: EmulatorServer) -> None:
    primary = Controller(bmv2.address, 10)
    backup = Controller(bmv2.address, 5)
    backup.close()
    assert not primary.has_message()
    primary.close()


@pytest.mark.parametrize("like_bmv2", [False, True], ids=["spec", "bmv2"])
def test_writes_without_a_primary_stream_are_permission_denied(like_bmv2: bool) -> None:
    """Before any stream and after every stream closed (BMv2: "Not primary"), in both modes."""
    with EmulatorServer("127.0.0.1:0", 1, P4INFO, like_bmv2=like_bmv2) as switch:
        loner = Controller(switch.address, 1, arbitrate=False)
        assert_write_denied(loner, 1)
        loner.close()

        primary = Controller(switch.address, 1)
        primary.set_pipeline(device_config=BMV2_JSON)
        primary.write(update(INSERT, slice_entry(1)))
        primary.close()
        after = Controller(switch.address, 1, arbitrate=False)
        assert_write_denied(after, 2)
        after.close()


def test_an_empty_device_config_is_taken_with_its_cookie_and_then_every_request_fails(
    bmv2: EmulatorServer,
) -> None:
    controller = Controller(bmv2.address, 1)
    controller.set_pipeline(cookie=77)
    assert controller.get_pipeline().config.cookie.cookie == 77
    for request in (
        lambda: controller.read(table_entry(SLICE_BY_ID)),
        lambda: controller.write(update(INSERT, slice_entry(1))),
    ):
        with pytest.raises(grpc.RpcError) as caught:
            request()
        assert caught.value.code() == Code.UNKNOWN
    controller.set_pipeline(device_config=BMV2_JSON, cookie=78)  # the compiled program
    controller.write(update(INSERT, slice_entry(1)))
    assert len(controller.read(table_entry(SLICE_BY_ID))) == 1
    controller.close()


def test_the_emulator_itself_needs_no_device_config(server: EmulatorServer) -> None:
    controller = Controller(server.address, 1)
    controller.set_pipeline(cookie=77)
    controller.write(update(INSERT, slice_entry(1)))
    assert len(controller.read(table_entry(SLICE_BY_ID))) == 1
    controller.close()


def test_register_reads_are_unimplemented(bmv2: EmulatorServer) -> None:
    controller = Controller(bmv2.address, 1)
    controller.set_pipeline(device_config=BMV2_JSON)
    with pytest.raises(grpc.RpcError) as caught:
        controller.read(register_entry(VQ_DELAY, 3))
    assert caught.value.code() == Code.UNIMPLEMENTED
    controller.close()
