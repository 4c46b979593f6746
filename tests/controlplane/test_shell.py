"""`sliceportal shell SWITCH`: p4runtime-shell (in .venv-shell) on a switch the portal manages.

The command runs as an operator would start it (a subprocess, DATABASE_URL set), against an
emulated switch that the portal deployed through the reconciler. Needs `.venv-shell/`
(`make setup`): under CI=true its absence fails these tests instead of skipping them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import grpc
import pytest
from sqlalchemy.orm import Session, sessionmaker

from controlplane import test_adapter
from controlplane.network import ELECTION_ID, held, make_link, make_slice, make_switch
from sliceportal.cli.shell import DEFAULT_SHELL_VENV, SHELL_VENV_VARIABLE
from sliceportal.controlplane.reconciler import Outcome, Reconciler
from sliceportal.core.config import Settings
from sliceportal.core.embedded import free_tcp_port
from sliceportal.domain import dataplane as dp
from sliceportal.emulator.server import EmulatorServer

SLICEPORTAL = Path(sys.executable).with_name("sliceportal")
TIMEOUT_S = 60
pki = test_adapter.pki  # the fixture: a CA, a server and a client certificate

READ_TABLES = """
    import json

    tables = {t.preamble.id: t for t in p4info.tables}
    actions = {a.preamble.id: a for a in p4info.actions}


    def number(data):
        return int.from_bytes(data, "big")


    def canonical(entry):
        msg = entry.msg()
        table = tables[msg.table_id]
        fields = {f.id: f.name for f in table.match_fields}
        match = {}
        for field in msg.match:
            kind = field.WhichOneof("field_match_type")
            if kind == "exact":
                match[fields[field.field_id]] = [number(field.exact.value), None]
            elif kind == "lpm":
                match[fields[field.field_id]] = [number(field.lpm.value), field.lpm.prefix_len]
            else:
                raise SystemExit(f"unexpected match kind {kind}")
        action = actions[msg.action.action.action_id]
        names = {p.id: p.name for p in action.params}
        params = {names[p.param_id]: number(p.value) for p in msg.action.action.params}
        return {"table": table.preamble.name, "match": match,
                "action": action.preamble.name, "params": params}


    def read_all():
        return [canonical(entry) for table in tables.values()
                for entry in TableEntry(table.preamble.name).read()]
"""


@pytest.fixture(scope="module")
def shell_venv() -> Path:
    """p4runtime-shell's environment, made by `make setup`."""
    python = DEFAULT_SHELL_VENV / "bin" / "python"
    if not os.access(python, os.X_OK):
        message = f"{python} is missing: run `make setup` (it creates .venv-shell/)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return DEFAULT_SHELL_VENV


@pytest.fixture
def environment(settings: Settings, shell_venv: Path) -> dict[str, str]:
    return os.environ | {"DATABASE_URL": settings.database_url}


def sliceportal_shell(
    environment: dict[str, str], *args: str, **popen: Any
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SLICEPORTAL), "shell", *args],
        env=environment,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        stdin=subprocess.DEVNULL,
        **popen,
    )


def script(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(READ_TABLES) + textwrap.dedent(body))
    return path


def canonical(entries: list[dp.TableEntry]) -> list[dict[str, Any]]:
    """The portal's entries in the form the script prints."""
    return sorted(
        (
            {
                "table": entry.table,
                "match": {m.field: [m.value, m.prefix_len] for m in entry.match},
                "action": entry.action,
                "params": dict(entry.params),
            }
            for entry in entries
        ),
        key=json.dumps,
    )


def deployed_switch(
    db: sessionmaker[Session], settings: Settings, emulator: EmulatorServer, slices: int
) -> tuple[int, str, int]:
    """A switch with `slices` slices in the database: (id, name, link id)."""
    with db() as session:
        switch = make_switch(session, emulator.address, emulator.service.device_id)
        link = make_link(session, settings, switch.id)
        for n in range(1, slices + 1):
            make_slice(session, [link.id], n)
        return switch.id, switch.name, link.id


def test_the_shell_reads_what_the_portal_deployed(
    db: sessionmaker[Session],
    settings: Settings,
    emulator: EmulatorServer,
    reconciler: Reconciler,
    environment: dict[str, str],
    tmp_path: Path,
) -> None:
    switch_id, name, _ = deployed_switch(db, settings, emulator, slices=3)
    assert reconciler.run(switch_id).outcome is Outcome.APPLIED
    path = script(
        tmp_path,
        """
        import sys

        import p4runtime_sh.shell as sh
        print(json.dumps({"entries": read_all(), "primary": sh.client.is_primary,
                          "election_id": list(sh.client.election_id)}))
        sys.exit(7)  # the command exits with the script's status
        """,
    )
    for handle in (name, str(switch_id)):
        done = sliceportal_shell(environment, handle, "--exec", str(path))
        assert done.returncode == 7, done.stderr
        out = json.loads(done.stdout)
        portal = canonical(held(emulator, settings))
        assert sorted(out["entries"], key=json.dumps) == portal
        slice_table = [e for e in out["entries"] if e["table"] == dp.SLICE_POLICY]
        assert sorted(e["match"]["dp_sid"][0] for e in slice_table) == [1, 2, 3]
        assert out["primary"] is False  # the portal arbitrated with a higher id before
        assert out["election_id"] == [0, ELECTION_ID - 1]


def test_the_shell_as_backup_does_not_disturb_the_portal(
    db: sessionmaker[Session],
    settings: Settings,
    emulator: EmulatorServer,
    reconciler: Reconciler,
    environment: dict[str, str],
    tmp_path: Path,
) -> None:
    """The shell connects first to a fresh switch (no pipeline, no controller ever): the portal
    still pushes the pipeline and writes while the shell is connected, then writes again after
    the shell left; the shell cannot write."""
    switch_id, name, link_id = deployed_switch(db, settings, emulator, slices=2)
    path = script(
        tmp_path,
        """
        import sys

        print("connected", flush=True)
        sys.stdin.readline()  # the portal deploys meanwhile
        entries = read_all()
        try:
            entry = next(iter(TableEntry("SliceportalIngress.vqueue.slice_policy").read()))
            entry.match["dp_sid"] = "999"  # a copy of a slice's policy under another DP_SID
            entry.insert()
            written = "inserted"
        except Exception as exc:  # P4RuntimeWriteException or grpc.RpcError
            written = str(exc)
        print(json.dumps({"entries": entries, "write": written}), flush=True)
        """,
    )
    with subprocess.Popen(
        [str(SLICEPORTAL), "shell", name, "--exec", str(path)],
        env=environment,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as shell:
        try:
            assert shell.stdout is not None and shell.stdin is not None
            assert shell.stdout.readline() == "connected\n"
            report = reconciler.run(switch_id)  # while the shell is connected
            assert report.outcome is Outcome.APPLIED and report.pipeline_pushed
            assert report.failed == 0
            shell.stdin.write("go\n")
            shell.stdin.flush()
            out = json.loads(shell.stdout.readline())
            assert shell.wait(TIMEOUT_S) == 0, shell.stderr.read() if shell.stderr else ""
        finally:
            shell.kill()
    assert sorted(out["entries"], key=json.dumps) == canonical(held(emulator, settings))
    assert "PERMISSION_DENIED" in out["write"]
    assert not any(e.match[0].value == 999 for e in held(emulator, settings))

    with db() as session:  # after the shell left, the portal still writes
        make_slice(session, [link_id], 3)
    report = reconciler.run(switch_id)
    assert report.outcome is Outcome.APPLIED and report.failed == 0 and report.inserted > 0


def test_one_line_errors(
    db: sessionmaker[Session],
    settings: Settings,
    emulator: EmulatorServer,
    environment: dict[str, str],
    tmp_path: Path,
) -> None:
    path = tmp_path / "noop.py"
    path.write_text("pass\n")

    unknown = sliceportal_shell(environment, "no-such-switch", "--exec", str(path))
    assert unknown.returncode == 2
    assert unknown.stderr.startswith("sliceportal: no managed switch named 'no-such-switch'")
    assert unknown.stderr.count("\n") == 1

    port = free_tcp_port()
    with db() as session:
        dead = make_switch(session, f"127.0.0.1:{port}", 1).name
        alive = make_switch(session, emulator.address, emulator.service.device_id).name
    unreachable = sliceportal_shell(
        environment | {"SLICEPORTAL_P4RT_CONNECT_TIMEOUT_S": "1"}, dead, "--exec", str(path)
    )
    assert unreachable.returncode == 1
    assert unreachable.stderr == (
        f"sliceportal: the switch at 127.0.0.1:{port} does not answer within 1 s\n"
    )

    missing = sliceportal_shell(
        environment | {SHELL_VENV_VARIABLE: str(tmp_path / "nowhere")}, alive, "--exec", str(path)
    )
    assert missing.returncode == 2
    assert "run `make setup`" in missing.stderr and missing.stderr.count("\n") == 1

    too_high = sliceportal_shell(environment, alive, "--election-id", str(ELECTION_ID))
    assert too_high.returncode == 2
    assert f"below the portal's election id {ELECTION_ID}" in too_high.stderr

    negative = sliceportal_shell(environment, alive, "--election-id", "-1")
    assert negative.returncode == 2 and negative.stderr.count("\n") == 1

    no_script = sliceportal_shell(environment, alive, "--exec", str(tmp_path / "none.py"))
    assert no_script.returncode == 2
    assert no_script.stderr == f"sliceportal: {tmp_path / 'none.py'}: no such file\n"

    no_database = sliceportal_shell(
        environment | {"DATABASE_URL": "postgresql+psycopg://postgres@127.0.0.1:1/none"},
        alive,
        "--exec",
        str(path),
    )
    assert no_database.returncode == 2 and no_database.stderr.count("\n") == 1
    assert "cannot reach the database" in no_database.stderr

    ok = sliceportal_shell(environment, alive, "--exec", str(path))
    assert (ok.returncode, ok.stdout, ok.stderr) == (0, "", "")


def test_the_shell_uses_the_switchs_mutual_tls_settings(
    db: sessionmaker[Session],
    settings: Settings,
    device_id: int,
    pki: Path,
    environment: dict[str, str],
    tmp_path: Path,
) -> None:
    server = EmulatorServer("127.0.0.1:0", device_id, load_pipeline=True)
    credentials = grpc.ssl_server_credentials(
        [((pki / "server.key").read_bytes(), (pki / "server.pem").read_bytes())],
        root_certificates=(pki / "ca.pem").read_bytes(),
        require_client_auth=True,
    )
    port = server._server.add_secure_port("127.0.0.1:0", credentials)  # the emulator is plain
    server.start()
    path = tmp_path / "count.py"
    path.write_text('print(sum(1 for _ in CounterEntry("forwarded").read()))\n')
    try:
        with db() as session:
            tls_settings = settings.model_copy(update={"tls_dirs": (pki,)})
            tls = make_switch(
                session,
                f"127.0.0.1:{port}",
                device_id,
                tls_settings,
                tls_ca_path=str(pki / "ca.pem"),
                tls_cert_path=str(pki / "client.pem"),
                tls_key_path=str(pki / "client.key"),
            ).name
            ca_only = make_switch(
                session,
                f"127.0.0.1:{port}",
                device_id + 1,
                tls_settings,
                tls_ca_path=str(pki / "ca.pem"),
            ).name
        done = sliceportal_shell(environment, tls, "--exec", str(path))
        assert (done.returncode, done.stdout, done.stderr) == (0, "4096\n", "")
        refused = sliceportal_shell(
            environment | {"SLICEPORTAL_P4RT_CONNECT_TIMEOUT_S": "1"}, ca_only, "--exec", str(path)
        )
        assert refused.returncode == 1
        assert refused.stderr.endswith("does not answer within 1 s (check its TLS settings)\n")
    finally:
        server.stop(grace=0)
