"""Capabilities, Set/GetForwardingPipelineConfig, and what a switch without a pipeline says."""

from __future__ import annotations

import json

import grpc
import pytest

from emulator.p4rt import (
    INSERT,
    P4INFO,
    SLICE_BY_ID,
    Code,
    Controller,
    load_p4info,
    slice_entry,
    table_entry,
    update,
)
from sliceportal.emulator.server import EmulatorServer
from sliceportal.p4rt.proto import p4r

Action = p4r.SetForwardingPipelineConfigRequest
Response = p4r.GetForwardingPipelineConfigRequest
BMV2_JSON = json.dumps({"header_types": [], "pipelines": [{"name": "ingress"}]}).encode()


def test_capabilities_reports_the_p4runtime_version(server: EmulatorServer) -> None:
    controller = Controller(server.address, 1)
    reply = controller.stub.Capabilities(p4r.CapabilitiesRequest())
    assert reply.p4runtime_api_version == "1.4.1"
    controller.close()


def test_a_controller_sets_and_gets_the_pipeline(server: EmulatorServer) -> None:
    controller = Controller(server.address, 1)
    controller.set_pipeline(device_config=BMV2_JSON)
    reply = controller.get_pipeline(Response.P4INFO_AND_COOKIE)
    assert reply.config.p4info == load_p4info()
    controller.close()


def test_a_new_switch_has_no_pipeline(server: EmulatorServer) -> None:
    controller = Controller(server.address, 1)
    assert not controller.get_pipeline().HasField("config")
    with pytest.raises(grpc.RpcError) as caught:
        controller.write(update(INSERT, slice_entry(1)))
    assert caught.value.code() == Code.FAILED_PRECONDITION
    with pytest.raises(grpc.RpcError) as caught:
        controller.read(table_entry(0))
    assert caught.value.code() == Code.FAILED_PRECONDITION
    controller.close()


def test_get_with_each_response_type(controller: Controller) -> None:
    controller.set_pipeline(device_config=BMV2_JSON, cookie=42)
    full = controller.get_pipeline(Response.ALL).config
    assert full.p4info == load_p4info()
    assert full.p4_device_config == BMV2_JSON
    assert full.cookie.cookie == 42

    cookie_only = controller.get_pipeline(Response.COOKIE_ONLY).config
    assert cookie_only.cookie.cookie == 42
    assert not cookie_only.HasField("p4info")
    assert cookie_only.p4_device_config == b""

    p4info_only = controller.get_pipeline(Response.P4INFO_AND_COOKIE).config
    assert p4info_only.HasField("p4info") and p4info_only.p4_device_config == b""

    device_only = controller.get_pipeline(Response.DEVICE_CONFIG_AND_COOKIE).config
    assert device_only.p4_device_config == BMV2_JSON and not device_only.HasField("p4info")


def test_get_for_an_unknown_device_is_not_found(controller: Controller) -> None:
    request = p4r.GetForwardingPipelineConfigRequest(device_id=3)
    with pytest.raises(grpc.RpcError) as caught:
        controller.stub.GetForwardingPipelineConfig(request)
    assert caught.value.code() == Code.NOT_FOUND


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda p: setattr(p.tables[0].preamble, "name", "ingress.other"), "table 33554433"),
        (lambda p: setattr(p.tables[0].match_fields[0], "bitwidth", 13), "hdr.vlan.vid"),
        (lambda p: setattr(p.tables[2], "size", 16384), "size"),
        (lambda p: setattr(p.actions[0].params[1], "bitwidth", 10), "action 16777217"),
        (lambda p: setattr(p.counters[0], "size", 8), "counter 302006785"),
        (lambda p: setattr(p.registers[0].type_spec.bitstring.bit, "bitwidth", 64), "register"),
        (lambda p: setattr(p.pkg_info, "arch", "psa"), "architecture"),
        (lambda p: p.tables.pop(), "table 33554435"),
    ],
)
def test_another_program_is_refused_naming_the_difference(
    controller: Controller, change: object, named: str
) -> None:
    p4info = load_p4info()
    change(p4info)  # type: ignore[operator]
    with pytest.raises(grpc.RpcError) as caught:
        controller.set_pipeline(p4info=p4info)
    assert caught.value.code() == Code.INVALID_ARGUMENT
    assert named in caught.value.details()
    assert "models only its own program" in caught.value.details()


@pytest.mark.parametrize(
    "device_config",
    [b"\x00\x01garbage", b"[1, 2]", json.dumps({"program": "x.p4"}).encode()],
    ids=["binary", "not-an-object", "no-pipelines"],
)
def test_a_device_config_that_is_not_bmv2_json_is_refused(
    controller: Controller, device_config: bytes
) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        controller.set_pipeline(device_config=device_config)
    assert caught.value.code() == Code.INVALID_ARGUMENT
    assert "BMv2 JSON" in caught.value.details()


def test_set_without_config_or_action_is_invalid(server: EmulatorServer) -> None:
    controller = Controller(server.address, 1)
    with pytest.raises(grpc.RpcError) as caught:
        controller.set_pipeline(with_config=False)
    assert caught.value.code() == Code.INVALID_ARGUMENT
    with pytest.raises(grpc.RpcError) as caught:
        controller.set_pipeline(Action.UNSPECIFIED)
    assert caught.value.code() == Code.INVALID_ARGUMENT
    controller.close()


def test_set_from_a_backup_is_permission_denied(
    controller: Controller, server: EmulatorServer
) -> None:
    backup = Controller(server.address, 0)
    with pytest.raises(grpc.RpcError) as caught:
        backup.set_pipeline()
    assert caught.value.code() == Code.PERMISSION_DENIED
    backup.close()


def test_verify_changes_nothing(server: EmulatorServer) -> None:
    controller = Controller(server.address, 1)
    controller.set_pipeline(Action.VERIFY, cookie=1)
    assert not controller.get_pipeline().HasField("config")
    controller.close()


def test_verify_and_commit_clears_the_forwarding_state(controller: Controller) -> None:
    controller.write(update(INSERT, slice_entry(1)))
    controller.set_pipeline(cookie=2)
    assert controller.read(table_entry(SLICE_BY_ID)) == []
    assert controller.get_pipeline(Response.COOKIE_ONLY).config.cookie.cookie == 2


def test_reconcile_and_commit_keeps_the_forwarding_state(controller: Controller) -> None:
    controller.write(update(INSERT, slice_entry(1)))
    controller.set_pipeline(Action.RECONCILE_AND_COMMIT, cookie=3)
    assert len(controller.read(table_entry(SLICE_BY_ID))) == 1
    assert controller.get_pipeline(Response.COOKIE_ONLY).config.cookie.cookie == 3


def test_verify_and_save_then_commit(server: EmulatorServer) -> None:
    controller = Controller(server.address, 1)
    with pytest.raises(grpc.RpcError) as caught:
        controller.set_pipeline(Action.COMMIT, with_config=False)
    assert caught.value.code() == Code.NOT_FOUND  # nothing saved yet
    controller.set_pipeline(Action.VERIFY_AND_SAVE, cookie=4)
    controller.write(update(INSERT, slice_entry(1)))  # refers to the saved config
    with pytest.raises(grpc.RpcError) as caught:
        controller.set_pipeline(Action.COMMIT)  # a COMMIT carries no config
    assert caught.value.code() == Code.INVALID_ARGUMENT
    controller.set_pipeline(Action.COMMIT, with_config=False)
    assert len(controller.read(table_entry(SLICE_BY_ID))) == 1
    assert controller.get_pipeline(Response.COOKIE_ONLY).config.cookie.cookie == 4
    controller.close()


def test_state_is_lost_on_restart(server: EmulatorServer) -> None:
    controller = Controller(server.address, 1)
    controller.set_pipeline()
    controller.write(update(INSERT, slice_entry(1)))
    controller.close()
    host, port = server.address.rsplit(":", 1)
    server.stop(grace=0)
    restarted = EmulatorServer(f"{host}:{port}", 1, P4INFO)
    restarted.start()
    try:
        controller = Controller(restarted.address, 1)
        assert not controller.get_pipeline().HasField("config")
        controller.set_pipeline()
        assert controller.read(table_entry(SLICE_BY_ID)) == []
        controller.close()
    finally:
        restarted.stop(grace=0)


def test_load_pipeline_starts_with_the_program_committed() -> None:
    with EmulatorServer("127.0.0.1:0", 7, P4INFO, load_pipeline=True) as emulator:
        controller = Controller(emulator.address, 1, device_id=7)
        assert controller.get_pipeline().config.p4info == load_p4info()
        controller.write(update(INSERT, slice_entry(1)))
        controller.close()


def test_a_refused_pipeline_says_why(server: EmulatorServer) -> None:
    other = load_p4info()
    other.tables[0].preamble.name = "ingress.renamed"
    controller = Controller(server.address, 1)
    with pytest.raises(grpc.RpcError) as caught:
        controller.set_pipeline(p4info=other)
    assert caught.value.code() == Code.INVALID_ARGUMENT
    assert "ingress.renamed" in (caught.value.details() or "")
    controller.close()


@pytest.mark.parametrize(
    ("method", "response"),
    [
        ("SetForwardingPipelineConfig", p4r.SetForwardingPipelineConfigResponse),
        ("GetForwardingPipelineConfig", p4r.GetForwardingPipelineConfigResponse),
    ],
)
def test_malformed_pipeline_request_bytes_are_invalid_argument(
    server: EmulatorServer, method: str, response: type
) -> None:
    with grpc.insecure_channel(server.address) as channel:
        call = channel.unary_unary(
            f"/p4.v1.P4Runtime/{method}",
            request_serializer=lambda raw: raw,
            response_deserializer=response.FromString,
        )
        with pytest.raises(grpc.RpcError) as caught:
            call(b"\x22\x05\x0a")  # a config whose length runs past the end
    assert caught.value.code() == Code.INVALID_ARGUMENT
    assert "malformed" in caught.value.details()
