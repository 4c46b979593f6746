"""BMv2 needs the program's device config: the portal never pushes a pipeline without it to a
target that needs one, and does not take a matching cookie for a working pipeline. Against the
emulator behaving as BMv2 (`like_bmv2`: an empty device config is accepted with its cookie, then
every read and write fails UNKNOWN), over real gRPC."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from controlplane.network import make_link, make_slice, make_switch, state_of
from sliceportal.controlplane.reconciler import Outcome, Reconciler
from sliceportal.controlplane.scheduling import Breaker
from sliceportal.core.config import Settings
from sliceportal.db.changes import ChangeContext
from sliceportal.db.models import Switch
from sliceportal.emulator.server import EmulatorServer
from sliceportal.p4rt.connection import SwitchTarget
from sliceportal.p4rt.pipeline import MissingDeviceConfig, Pipeline
from sliceportal.p4rt.session import SessionPool, connect
from sliceportal.schemas.choices import SwitchKind

COMPILED = b'{"pipelines": []}'
"""Stands in for p4c's BMv2 JSON (the emulator checks its shape and models the program)."""


@pytest.fixture
def bmv2(device_id: int) -> Iterator[EmulatorServer]:
    server = EmulatorServer("127.0.0.1:0", device_id, like_bmv2=True)
    server.start()
    yield server
    server.stop(grace=0)


def pipeline_with(settings: Settings, path: Path, device_config: bytes | None) -> Pipeline:
    if device_config is not None:
        path.write_bytes(device_config)
    return Pipeline.load(settings.p4info_path, path)


@contextlib.contextmanager
def reconciler_for(
    engine: sa.Engine, settings: Settings, pipeline: Pipeline, breaker: Breaker
) -> Iterator[Reconciler]:
    """A reconciler deploying `pipeline`; its switch sessions close at the end."""
    context = ChangeContext(user_id=None, request_id=f"worker:test-{uuid.uuid4().hex}")
    reconciler = Reconciler(engine, SessionPool(settings, pipeline), pipeline, context, breaker)
    try:
        yield reconciler
    finally:
        reconciler.pool.close()


def bmv2_switch(
    db: sessionmaker[Session], settings: Settings, switch: EmulatorServer
) -> tuple[int, int]:
    with db() as session:
        row = make_switch(session, switch.address, switch.service.device_id, kind="bmv2")
        link = make_link(session, settings, row.id)
        return row.id, make_slice(session, [link.id], 1).id


def leave_an_unserved_pipeline(
    switch: EmulatorServer, settings: Settings, cookie: int, missing: Path
) -> None:
    """What the adapter did before: push `cookie` with an empty device config."""
    empty = Pipeline.load(settings.p4info_path, missing)
    target = SwitchTarget(0, switch.address, switch.service.device_id, 1)
    session = connect(target, settings=settings, pipeline=empty)
    try:
        session.push_pipeline(cookie)
        assert session.pipeline_cookie() == cookie
        assert session.pipeline_problem() is not None
    finally:
        session.close()


Deploying = Callable[
    [bytes | None], contextlib.AbstractContextManager[tuple[Reconciler, Pipeline, int, int]]
]


@pytest.fixture
def over_an_unserved_pipeline(
    breaker: Breaker,
    db: sessionmaker[Session],
    settings: Settings,
    engine: sa.Engine,
    bmv2: EmulatorServer,
    tmp_path: Path,
) -> Deploying:
    """BMv2 in the state a fresh checkout left it (our cookie, an empty device config) with one
    slice crossing it: given the device config to deploy (None: not compiled), a reconciler
    deploying it, its pipeline, and the ids of the switch and the slice."""

    @contextlib.contextmanager
    def deploying(
        device_config: bytes | None,
    ) -> Iterator[tuple[Reconciler, Pipeline, int, int]]:
        pipeline = pipeline_with(settings, tmp_path / "sliceportal.json", device_config)
        leave_an_unserved_pipeline(bmv2, settings, pipeline.cookie, tmp_path / "missing.json")
        switch_id, slice_id = bmv2_switch(db, settings, bmv2)
        with reconciler_for(engine, settings, pipeline, breaker) as reconciler:
            yield reconciler, pipeline, switch_id, slice_id

    return deploying


def test_nothing_is_pushed_to_bmv2_without_its_device_config_and_the_api_says_how_to_get_it(
    breaker: Breaker,
    db: sessionmaker[Session],
    settings: Settings,
    engine: sa.Engine,
    bmv2: EmulatorServer,
    tmp_path: Path,
    client: TestClient,
    operator_headers: dict[str, str],
) -> None:
    missing = tmp_path / "sliceportal.json"
    pipeline = pipeline_with(settings, missing, None)
    switch_id, slice_id = bmv2_switch(db, settings, bmv2)
    with reconciler_for(engine, settings, pipeline, breaker) as reconciler:
        assert reconciler.run(switch_id).outcome is Outcome.NO_DEVICE_CONFIG
    shown = client.get(f"/api/v1/switches/{switch_id}", headers=operator_headers).json()
    assert shown["state"] == "reachable" and not shown["sync"]["pipeline_in_sync"]
    error = shown["sync"]["last_error"]
    assert str(missing) in error and "make -C p4 compile" in error
    assert "SLICEPORTAL_P4_DEVICE_CONFIG_PATH" in error
    with db() as session:
        state, detail = state_of(session, slice_id)
        assert state == "pending" and detail is not None and "make -C p4 compile" in detail
    target = SwitchTarget(0, bmv2.address, bmv2.service.device_id, 1, kind=SwitchKind.BMV2)
    controller = connect(target, settings=settings, pipeline=pipeline)
    try:
        assert controller.pipeline_cookie() is None  # nothing was pushed
        with pytest.raises(MissingDeviceConfig):
            controller.push_pipeline(pipeline.cookie)
        assert controller.pipeline_cookie() is None
    finally:
        controller.close()


def test_our_cookie_on_a_switch_that_cannot_serve_the_pipeline_is_not_in_sync(
    over_an_unserved_pipeline: Deploying, db: sessionmaker[Session]
) -> None:
    """The state a fresh checkout left a BMv2 in: our cookie, an empty device config."""
    with over_an_unserved_pipeline(None) as (reconciler, pipeline, switch_id, _):
        assert reconciler.run(switch_id).outcome is Outcome.NO_DEVICE_CONFIG
    with db() as session:
        switch = session.get(Switch, switch_id)
        assert switch is not None and switch.sync is not None
        assert not switch.sync.pipeline_in_sync
        assert switch.sync.pipeline_cookie == f"{pipeline.cookie:016x}"
        error = switch.sync.last_error or ""
        assert "cannot serve it" in error and "UNKNOWN" in error and "make -C p4 compile" in error


def test_a_switch_that_lost_the_device_config_behind_our_cookie_gets_the_pipeline_again(
    over_an_unserved_pipeline: Deploying, db: sessionmaker[Session]
) -> None:
    with over_an_unserved_pipeline(COMPILED) as (reconciler, _, switch_id, slice_id):
        report = reconciler.run(switch_id)
        assert report.outcome is Outcome.APPLIED and report.pipeline_pushed
        assert report.inserted == 3
        again = reconciler.run(switch_id)  # a switch that serves it: one read, no push
        assert again.outcome is Outcome.IN_SYNC and not again.pipeline_pushed
    with db() as session:
        assert state_of(session, slice_id) == ("active", None)


def test_the_read_back_check_passes_on_a_switch_that_serves_the_pipeline(
    settings: Settings, bmv2: EmulatorServer, tmp_path: Path
) -> None:
    pipeline = pipeline_with(settings, tmp_path / "sliceportal.json", COMPILED)
    target = SwitchTarget(0, bmv2.address, bmv2.service.device_id, 1, kind=SwitchKind.BMV2)
    session = connect(target, settings=settings, pipeline=pipeline)
    try:
        session.push_pipeline(pipeline.cookie)
        assert session.pipeline_problem() is None
    finally:
        session.close()
