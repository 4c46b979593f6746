"""Importing many slices at once, NetBox's bulk import: one transaction, all or nothing.

Every row is validated as a single creation is (`SliceCreate`, then `slices.prepare`); then the
switches and links of the whole batch are locked once (`queries.lock_batch`), names, classifier
entries, ABC memories and DP_SIDs checked row by row against what is stored and against the
rows before, the slices inserted in a few statements, and admission run once per link with all
of the batch's slices on it together with the link's stored ones. Every offending row found is
reported (`RowsRejectedError`: row, field, reason); nothing is stored unless all rows are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError
from sqlalchemy.orm import Session

from sliceportal.db import changes, outbox
from sliceportal.db.changes import Change, ChangeContext
from sliceportal.db.models import Slice, SliceSla
from sliceportal.db.queries import links as link_queries
from sliceportal.db.queries import slices as queries
from sliceportal.domain.dataplane import ROUTE_TABLE, SlicePolicy
from sliceportal.domain.matchclash import PlacedMatch, first_clash
from sliceportal.domain.reconcile import describe
from sliceportal.domain.spec import MAX_DP_SID
from sliceportal.schemas.choices import ChangeAction, SliceState
from sliceportal.schemas.slices import SliceCreate
from sliceportal.services import admission, slices
from sliceportal.services.errors import (
    AdmissionRejectedError,
    ConflictError,
    InvalidFieldError,
    RowError,
    RowsRejectedError,
)


@dataclass
class _Row:
    number: int
    data: SliceCreate
    values: dict[str, Any]
    policy: SlicePolicy
    switch_ids: set[int] = field(default_factory=set)
    dp_sids: dict[int, int] = field(default_factory=dict)
    """The DP_SID it gets on each switch it crosses, by switch id."""
    order: list[int] | None = None
    """Its links in path order (`slices.path_order`), or None for an unordered set."""


def _location(loc: Sequence[int | str]) -> str | None:
    return ".".join(str(part) for part in loc) or None


def _rejected(errors: list[RowError], *, invalid: bool) -> RowsRejectedError:
    rows = sorted({error.row for error in errors})
    what = "invalid" if invalid else "in conflict with the stored slices or each other"
    listed = ", ".join(str(row) for row in rows[:10]) + (", …" if len(rows) > 10 else "")
    return RowsRejectedError(
        f"nothing was imported: {len(rows)} row(s) {what} (row {listed}); first: "
        f"row {errors[0].row}, {errors[0].field or 'the row'}: {errors[0].message}",
        errors,
        invalid=invalid,
    )


def import_slices(
    session: Session, context: ChangeContext, documents: Sequence[object]
) -> list[int]:
    """Create a slice for each of `documents` (what a `SliceCreate` validates) or none; the
    new slices' ids in the order of the documents. RowsRejectedError lists every offending
    row: 422 when a row is invalid on its own, 409 when it conflicts with the stored slices,
    with another row, or when admission refuses the batch."""
    errors: list[RowError] = []
    rows: list[_Row] = []
    for number, document in enumerate(documents, start=1):
        try:
            data = SliceCreate.model_validate(document)
            values, policy = slices.prepare(data)
        except ValidationError as exc:
            errors += [
                RowError(number, _location(error["loc"]), error["msg"]) for error in exc.errors()
            ]
        except InvalidFieldError as exc:
            errors += [RowError(number, each, exc.detail) for each in (exc.field, *exc.also)]
        else:
            rows.append(_Row(number, data, values, policy))
    if errors:
        raise _rejected(errors, invalid=True)
    if not rows:
        return []
    return admission.retrying(session, lambda: _import(session, context, rows))


def _import(session: Session, context: ChangeContext, rows: list[_Row]) -> list[int]:
    link_ids = {link_id for row in rows for link_id in row.data.link_ids}
    batch = queries.lock_batch(
        session,
        link_ids,
        [row.values["name"] for row in rows],
        sorted({row.values["vlan_id"] for row in rows if row.values["vlan_id"] is not None}),
        sorted({str(p) for row in rows for p in row.values["ipv4_prefixes"]}),
        {link_id for row in rows if row.policy.abc is not None for link_id in row.data.link_ids},
    )
    locked = batch.locked
    missing = [
        RowError(row.number, "link_ids", f"link {min(gone)} does not exist")
        for row in rows
        if (gone := set(row.data.link_ids) - locked.links.keys())
    ]
    if missing:
        session.rollback()
        raise _rejected(missing, invalid=True)
    errors = []
    for row in rows:
        row.switch_ids = {locked.links[link_id].switch_id for link_id in row.data.link_ids}
        try:
            row.order = slices.path_order(row.data.link_ids, row.data.path, locked.links)
        except InvalidFieldError as exc:
            errors.append(RowError(row.number, exc.field, exc.detail))
    if errors:
        session.rollback()
        raise _rejected(errors, invalid=True)
    errors = _check_names(rows, batch)
    errors += _check_matches(rows, batch)
    errors += _check_abc_memories(rows, batch)
    errors += _give_dp_sids(rows, batch)
    if errors:
        session.rollback()
        raise _rejected(sorted(errors, key=lambda e: e.row), invalid=False)
    return _store(session, context, rows, locked)


def _check_names(rows: list[_Row], batch: queries.Batch) -> list[RowError]:
    errors = []
    first: dict[str, int] = {}
    for row in rows:
        name = row.values["name"]
        if name in batch.taken:
            errors.append(RowError(row.number, "name", f"slice name {name!r} is already taken"))
        elif name in first:
            errors.append(RowError(row.number, "name", f"row {first[name]} has the name {name!r}"))
        else:
            first[name] = row.number
    return errors


def _check_matches(rows: list[_Row], batch: queries.Batch) -> list[RowError]:
    """Each row's classifier entries and routes against the stored slices
    (`slices.refuse_clash`, as a single creation) and against the rows before it
    (`matchclash.first_clash`), each narrowed to the slices sharing its VLAN or a prefix on
    one of its switches."""
    stored: dict[tuple[int, object], list[Any]] = {}
    for clash in batch.clashing:
        switch_id, _, _, _, vlan_id, prefixes = clash
        for key in (vlan_id, *prefixes):
            stored.setdefault((switch_id, key), []).append(clash)
    placed: dict[tuple[int, object], list[PlacedMatch]] = {}
    errors = []
    for row in rows:
        vlan_id, prefixes = row.values["vlan_id"], list(row.values["ipv4_prefixes"])
        exits = [batch.exits[link_id] for link_id in row.data.link_ids]
        keys = [(switch_id, key) for switch_id in row.switch_ids for key in (vlan_id, *prefixes)]
        keys = [key for key in keys if key[1] is not None]
        candidates = {id(c): c for key in keys for c in stored.get(key, ())}.values()
        match = queries.Match(0, vlan_id, prefixes, set(row.data.link_ids))
        locked = queries.Locked(
            batch.locked.switches, clashing=sorted(candidates, key=lambda c: c[2]), exits=exits
        )
        try:
            slices.refuse_clash(match, locked)
        except ConflictError as exc:
            errors.append(RowError(row.number, exc.field, exc.detail))
            continue
        before = {id(p): p for key in keys for p in placed.get(key, ())}.values()
        ordered = sorted(before, key=lambda p: p.slice_id)
        clash = first_clash(vlan_id, prefixes, exits, ordered)
        if clash is not None:
            what = "route" if clash.key[0] == ROUTE_TABLE else "classifier entry"
            errors.append(
                RowError(
                    row.number,
                    clash.field,
                    f"row {clash.other.slice_id} ({clash.other.name!r}) holds the entry "
                    f"{describe(clash.key)} on switch "
                    f"{batch.locked.switches[clash.other.switch_id]!r} too: a switch takes one "
                    f"{what} per key",
                )
            )
            continue
        for switch_id, port in exits:
            mine = PlacedMatch(
                row.number, row.values["name"], switch_id, port, vlan_id, tuple(prefixes)
            )
            for key in (vlan_id, *prefixes):
                if key is not None:
                    placed.setdefault((switch_id, key), []).append(mine)
    return errors


def _check_abc_memories(rows: list[_Row], batch: queries.Batch) -> list[RowError]:
    """`slices.refuse_new_memory` for each abc row, on the memories stored on its switches
    and those of the abc rows before it (one per switch and pair of memories)."""
    held: dict[tuple[int, float, float], dict[str, Any]] = {
        (r["switch_id"], r["abc_meter_memory_s"], r["abc_average_memory_s"]): r
        for r in batch.abc_held
    }
    errors = []
    for row in rows:
        if row.policy.abc is None:
            continue
        mine = [r for key, r in held.items() if key[0] in row.switch_ids]
        try:
            slices.refuse_new_memory(
                queries.Locked(batch.locked.switches, abc_held=mine), row.policy
            )
        except ConflictError as exc:
            errors.append(RowError(row.number, exc.field, exc.detail))
            continue
        memories = (row.values["abc_meter_memory_s"], row.values["abc_average_memory_s"])
        for switch_id in row.switch_ids:
            held.setdefault((switch_id, *memories), row.values | {"switch_id": switch_id})
    return errors


def _give_dp_sids(rows: list[_Row], batch: queries.Batch) -> list[RowError]:
    """A DP_SID on each switch of each row: the one it asks for, else the lowest free one
    (as `queries.set_links` gives them one slice at a time)."""
    held = batch.dp_sids
    lowest = dict.fromkeys(held, 1)
    switches = batch.locked.switches
    errors = []
    for row in rows:
        wanted = row.data.dp_sid
        for switch_id in sorted(row.switch_ids):
            taken = held[switch_id]
            if wanted is not None:
                if wanted in taken:
                    message = f"DP_SID {wanted} is taken on switch {switches[switch_id]!r}"
                    errors.append(RowError(row.number, "dp_sid", message))
                    break
                dp_sid = wanted
            else:
                dp_sid = lowest[switch_id]
                while dp_sid in taken:
                    dp_sid += 1
                lowest[switch_id] = dp_sid
                if dp_sid > MAX_DP_SID:
                    message = f"switch {switches[switch_id]!r} has no free DP_SID left"
                    errors.append(RowError(row.number, "link_ids", message))
                    break
            taken.add(dp_sid)
            row.dp_sids[switch_id] = dp_sid
    return errors


def _store(
    session: Session, context: ChangeContext, rows: list[_Row], locked: queries.Locked
) -> list[int]:
    """Insert the rows, admit every link they cross at once, log and commit."""
    inserts = [row.values | {"state": SliceState.PENDING} for row in rows]
    created = {slice_["name"]: slice_ for slice_ in queries.insert_slices(session, inserts)}
    ids = [created[row.values["name"]]["id"] for row in rows]
    slas, switch_rows, link_rows = [], [], []
    for row, slice_id in zip(rows, ids, strict=True):
        slas.append(row.data.sla.model_dump() | {"slice_id": slice_id})
        switch_rows += [
            {"slice_id": slice_id, "switch_id": switch_id, "dp_sid": dp_sid}
            for switch_id, dp_sid in row.dp_sids.items()
        ]
        position = {link_id: index for index, link_id in enumerate(row.order or ())}
        link_rows += [
            {
                "slice_id": slice_id,
                "link_id": link_id,
                "switch_id": locked.links[link_id].switch_id,
                "position": position.get(link_id),
            }
            for link_id in row.data.link_ids
        ]
    queries.insert_relations(session, slas, switch_rows, link_rows)
    _admit(session, rows, locked)
    entries = [
        Change(
            ChangeAction.CREATE,
            Slice.entity_type,
            slice_id,
            row.values["name"],
            None,
            Slice.snapshot_of(created[row.values["name"]])
            | {"sla": SliceSla.snapshot_of(row.data.sla.model_dump())}
            | {
                "link_ids": sorted(row.data.link_ids),
                "path": row.order,
                "dp_sids": {str(switch): dp_sid for switch, dp_sid in sorted(row.dp_sids.items())},
            },
        )
        for row, slice_id in zip(rows, ids, strict=True)
    ]
    switch_ids = {switch_id for row in rows for switch_id in row.switch_ids}
    changes.write(session, context, entries, messages=outbox.reconcile(switch_ids))
    session.commit()
    return ids


def _admit(session: Session, rows: list[_Row], locked: queries.Locked) -> None:
    """Admission once per link, with the batch's slices stored on it (not committed): every
    link of the batch is changed, and the slices with an end-to-end target among the rows
    are checked on their paths with the stored ones crossing those links. A refusal names
    the rows at fault: those of the slices outside their bounds, or, when only stored slices
    are, every row on the links that refused."""
    params = {link_id: link.params for link_id, link in locked.links.items()}
    changed = {link_id for row in rows for link_id in row.data.link_ids}
    loads = link_queries.read_loads(session, params.values())
    by_link: dict[int, list[_Row]] = {}
    for row in rows:
        for link_id in row.data.link_ids:
            by_link.setdefault(link_id, []).append(row)
    for link_id in sorted(changed):
        try:
            admission.check_queues(params[link_id], loads.links[link_id], field="priority")
        except ConflictError as exc:
            session.rollback()
            errors = [RowError(row.number, "priority", exc.detail) for row in by_link[link_id]]
            raise _rejected(errors, invalid=False) from None
    try:
        admission.admit(
            session, f"the import of {len(rows)} slice(s)", params, loads, changed=changed
        )
    except AdmissionRejectedError as exc:
        raise _admission_rejected(exc, rows, by_link) from None


def _admission_rejected(
    exc: AdmissionRejectedError, rows: list[_Row], by_link: dict[int, list[_Row]]
) -> RowsRejectedError:
    number = {row.values["name"]: row.number for row in rows}
    errors: dict[tuple[int, str], RowError] = {}
    for link in exc.links:
        for violation in link["violations"]:
            end_to_end = violation["kind"] == "end-to-end"
            where = "along its path" if end_to_end else f"on link {violation['link']!r}"
            message = f"{violation['reason']} {where}"
            field_name = "e2e_delay_target_s" if end_to_end else "delay_target_s"
            if violation["slice"] in number:
                found = [number[violation["slice"]]]
            else:  # a stored slice pushed out of its bound by the rows on that link
                message = f"stored slice {violation['slice']!r}: {message}"
                found = [row.number for row in by_link.get(violation["link_id"], ())]
            for row_number in found:
                errors.setdefault(
                    (row_number, field_name), RowError(row_number, field_name, message)
                )
    listed = sorted(errors.values(), key=lambda e: e.row)
    rows_at_fault = sorted({error.row for error in listed})
    return RowsRejectedError(
        f"nothing was imported: {exc.detail} ({len(rows_at_fault)} row(s) at fault)",
        listed,
        invalid=False,
        links=exc.links,
    )
