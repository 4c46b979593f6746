"""Switches: created `unknown`; the control-plane workers move their state. Creating or changing
a switch has it reconciled (contacted, deployed) once the transaction commits.

A switch names what the workers will open: its address (a connection) and its TLS files (read
from the workers' file system). Both are held to what the settings allow, here, for every
caller (API, `serve`'s bootstrap): the address to `switch_networks`, the files to regular,
readable PEM files inside `tls_dirs`, after symbolic links (docs/security.md).
"""

from __future__ import annotations

import re
import stat
import uuid
from pathlib import Path
from typing import Any

from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from sliceportal.core.config import Settings
from sliceportal.db import changes, outbox
from sliceportal.db.changes import ChangeContext
from sliceportal.db.models import Link, Switch
from sliceportal.db.outbox import Sender
from sliceportal.schemas.switches import SwitchCreate, SwitchUpdate, check_switch_network
from sliceportal.services import crud
from sliceportal.services.errors import ConflictError, InvalidFieldError

_CERTIFICATE = re.compile(rb"-----BEGIN CERTIFICATE-----")
_PRIVATE_KEY = re.compile(rb"-----BEGIN [A-Z ]*PRIVATE KEY-----")
TLS_FILES = {
    "tls_ca_path": (_CERTIFICATE, "a PEM certificate"),
    "tls_cert_path": (_CERTIFICATE, "a PEM certificate"),
    "tls_key_path": (_PRIVATE_KEY, "a PEM private key"),
}
"""The path fields of a switch, and what their file must hold."""
MAX_TLS_FILE_BYTES = 1 << 20


def check_switch_values(values: dict[str, Any], settings: Settings) -> None:
    """Refuse an address outside `switch_networks` and TLS files the portal must not read."""
    address = values.get("address")
    if address is not None:
        try:
            check_switch_network(address, settings.switch_networks)
        except ValueError as exc:
            raise InvalidFieldError(f"address: {exc}", field="address") from None
    for field, (pattern, kind) in TLS_FILES.items():
        given = values.get(field)
        if given is not None:
            check_tls_file(field, given, settings.tls_directories(), pattern, kind)


def check_tls_file(
    field: str, given: str, directories: tuple[Path, ...], pattern: re.Pattern[bytes], kind: str
) -> None:
    """`given` is an absolute path that, symbolic links resolved, is a regular file inside one
    of `directories`, readable, and holding `kind`. Outside the directories, nothing about the
    file is said (not even whether it exists)."""

    def refuse(why: str) -> InvalidFieldError:
        return InvalidFieldError(f"{field}: {given} {why}", field=field)

    path = Path(given)
    if not path.is_absolute():
        raise refuse("is not an absolute path")
    resolved = path.resolve()
    roots = [directory.resolve() for directory in directories]
    if not any(resolved.is_relative_to(root) for root in roots):
        listed = ",".join(str(root) for root in roots)
        raise refuse(f"is not inside the TLS directories (SLICEPORTAL_TLS_DIRS: {listed})")
    try:
        if not stat.S_ISREG(resolved.stat().st_mode):  # a FIFO would block the open below
            raise refuse("is not a regular file")
        with resolved.open("rb") as stream:
            head = stream.read(MAX_TLS_FILE_BYTES + 1)
    except FileNotFoundError:
        raise refuse("does not exist") from None
    except OSError as exc:
        raise refuse(f"cannot be read by the portal ({exc.strerror or exc})") from None
    if len(head) > MAX_TLS_FILE_BYTES:
        raise refuse(f"is larger than {MAX_TLS_FILE_BYTES} bytes, too large for {kind}")
    if not pattern.search(head):
        raise refuse(f"does not hold {kind}")


def create_switch(
    session: Session, context: ChangeContext, data: SwitchCreate, settings: Settings
) -> Switch:
    check_switch_values(data.model_dump(), settings)
    switch = Switch(**data.model_dump())
    session.add(switch)
    session.flush()
    return crud.create(session, context, switch, messages=outbox.reconcile([switch.id]))


def update_switch(
    session: Session,
    context: ChangeContext,
    switch_id: int,
    data: SwitchUpdate,
    settings: Settings,
) -> Switch:
    values = data.model_dump(exclude_unset=True)
    check_switch_values(values, settings)
    switch = crud.get(session, Switch, switch_id, lock=True)
    return crud.update(session, context, switch, values, messages=outbox.reconcile([switch_id]))


def delete_switch(session: Session, context: ChangeContext, switch_id: int) -> None:
    switch = crud.get(session, Switch, switch_id, lock=True)
    if session.scalar(select(exists().where(Link.switch_id == switch_id))):
        raise ConflictError(f"switch {switch.name!r} still has links; delete them first")
    crud.delete(session, context, switch)


def queue_reconcile(session: Session, switch_id: int, *, deploy: bool, send: Sender) -> str:
    """Queue a reconciliation (with `deploy`: a deploy) of the switch through the outbox and
    send it now with `send` (the API's broker); its task id, which the task runs under.

    The task id is chosen here, so the answer can name it before it is sent. When `send`
    fails, its error propagates and the message is withdrawn (`outbox.send_now`): nothing is
    queued, as the caller will report."""
    crud.get(session, Switch, switch_id)
    message = outbox.reconcile_switch(switch_id, deploy=deploy, task_id=str(uuid.uuid4()))
    changes.write(session, None, messages=[message])
    session.commit()
    assert message.task_id is not None
    outbox.send_now(session, message.task_id, send)
    return message.task_id
