"""Proposing slice paths: the shortest path on which a slice is admitted end to end
(`domain.paths.propose_path`), each candidate judged by the admission the services run
(`domain.admission.route`: every link of the path admits its slices with this one, and every
end-to-end target crossing them, this slice's too, is met, propagation included).

A proposal is advice, read without locks: creating or moving the slice onto it runs admission
again under the links' locks, which decides.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from sliceportal.db.models import Link, Slice, Switch
from sliceportal.db.queries import links as link_queries
from sliceportal.db.queries.links import LockedLink
from sliceportal.domain.admission import (
    LinkLoad,
    Loads,
    PathBound,
    PathSlice,
    route,
    summary,
    too_many_levels,
)
from sliceportal.domain.paths import PortLink, Proposal, Verdict, propose_path
from sliceportal.schemas.slices import PathProposalRequest
from sliceportal.services.errors import InvalidFieldError, NoPathError
from sliceportal.services.slices import link_specs, resolve_burst_limit

ANALYSED = ("name", "rate_bps", "burst_limit_s", "delay_target_s", "priority", "max_packet_bytes")
"""What admission reads of a slice on a link (`services.slices.link_specs`)."""


class _Candidates:
    """Judges candidate paths for one slice, reading the links (and the paths of the slices
    with an end-to-end target crossing them) as candidates reach them, each once."""

    def __init__(self, session: Session, values: dict[str, Any], slice_id: int) -> None:
        self.session = session
        self.values = values
        self.slice_id = slice_id
        self.links: dict[int, LockedLink] = {}
        self.loads = Loads({}, {})
        self.bounds: dict[tuple[int, ...], PathBound] = {}

    def _read(self, link_ids: set[int]) -> None:
        """Read `link_ids`, then the links of the end-to-end paths crossing them, until every
        path that a candidate's check reads is known."""
        while missing := link_ids - self.links.keys():
            found = link_queries.read_links(self.session, missing)
            self.links |= found
            read = link_queries.read_loads(
                self.session,
                [link.params for link in found.values()],
                exclude_slice_id=self.slice_id,
            )
            self.loads.links |= read.links
            self.loads.paths |= read.paths
            link_ids = {link_id for path in read.paths.values() for link_id in path.link_ids}

    def check(self, path: tuple[int, ...]) -> Verdict:
        self._read(set(path))
        params = {link_id: link.params for link_id, link in self.links.items()}
        trial: dict[int, LinkLoad] = dict(self.loads.links)
        try:
            specs = link_specs(self.values, params, path)
        except InvalidFieldError as exc:  # say, a packet larger than a link's MTU
            return Verdict(None, exc.detail)
        for link_id, spec in specs.items():
            trial[link_id] = trial[link_id].plus(spec)
            crowded = too_many_levels(params[link_id], trial[link_id])
            if crowded is not None:
                return Verdict(None, crowded.message)
        candidate = PathSlice(
            self.slice_id,
            self.values["name"],
            self.values["priority"],
            self.values["e2e_delay_target_s"],
            path,
        )
        bound, found = route(params, Loads(trial, self.loads.paths), candidate)
        self.bounds[path] = bound
        if found is not None:
            return Verdict(bound.total_s, summary(found))
        return Verdict(bound.total_s)


def _proposal(
    session: Session,
    ports: dict[int, PortLink],
    values: dict[str, Any],
    ingress_switch_id: int,
    egress_link_id: int,
    *,
    slice_id: int = 0,
    avoid: frozenset[int] = frozenset(),
) -> tuple[Proposal, dict[str, Any] | None]:
    """The proposal, and its public document when it found a path."""
    candidates = _Candidates(session, values, slice_id)
    found = propose_path(ports, ingress_switch_id, egress_link_id, candidates.check, avoid=avoid)
    if found.path is None:
        return found, None
    bound = candidates.bounds[found.path]
    return found, {
        "path": list(found.path),
        "end_to_end_s": bound.total_s,
        "e2e_delay_target_s": values["e2e_delay_target_s"],
        "hops": [
            {
                "link_id": hop.link_id,
                "link": hop.link,
                "bound_s": hop.bound_s,
                "propagation_s": hop.propagation_s,
            }
            for hop in bound.hops
        ],
    }


def refusal(proposal: Proposal, ingress_switch_id: int, egress_link_id: int) -> str:
    """Why `proposal` found no path, in one sentence."""
    where = f"from switch {ingress_switch_id} out of link {egress_link_id}"
    if not proposal.refused:
        return f"no route {where}: no chain of cables joins them"
    first, reason = proposal.refused[0]
    checked = len(proposal.refused)
    more = " (more paths exist, longer or beyond the ones checked)" if proposal.truncated else ""
    return (
        f"none of the {checked} path(s) {where} admits the slice{more}; the shortest, "
        f"{list(first)}: {reason}"
    )


def propose(session: Session, data: PathProposalRequest) -> dict[str, Any]:
    """The proposal for a slice not stored yet: 422 naming an ingress or egress that does
    not exist (or an egress that is a cable's end), NoPathError (409) with every refusal when
    no path admits it."""
    values = data.model_dump(exclude={"burst_bytes", "ingress_switch_id", "egress_link_id"})
    resolve_burst_limit(values, data.burst_bytes, given_limit=data.burst_limit_s is not None)
    if values["burst_limit_s"] is None:
        raise InvalidFieldError(
            "burst_limit_s is required unless burst_bytes is given", field="burst_limit_s"
        )
    if values["delay_target_s"] is None:
        values["delay_target_s"] = values["burst_limit_s"]
    if session.get(Switch, data.ingress_switch_id) is None:
        raise InvalidFieldError(
            f"switch {data.ingress_switch_id} does not exist", field="ingress_switch_id"
        )
    egress = session.get(Link, data.egress_link_id)
    if egress is None:
        raise InvalidFieldError(
            f"link {data.egress_link_id} does not exist", field="egress_link_id"
        )
    if egress.cable_id is not None:
        raise InvalidFieldError(
            f"link {egress.name!r} is an end of cable {egress.cable_id}: a path leaves the "
            "network by a link that faces hosts",
            field="egress_link_id",
        )
    ports = link_queries.read_ports(session)
    found, document = _proposal(session, ports, values, data.ingress_switch_id, data.egress_link_id)
    if document is None:
        raise NoPathError(
            refusal(found, data.ingress_switch_id, data.egress_link_id),
            [{"path": list(path), "reason": reason} for path, reason in found.refused],
            truncated=found.truncated,
        )
    return document


def detour(
    session: Session, ports: dict[int, PortLink], row: Slice, avoid: frozenset[int]
) -> tuple[dict[str, Any] | None, str | None]:
    """A stored slice's shortest admissible path from its ingress switch out of its egress
    link that crosses none of the links `avoid`, judged without its own rows (`ports`: the
    network, `link_queries.read_ports`); (None, why) when there is none, or when its links
    are an unordered set (no ingress or egress)."""
    path = row.path
    if path is None:
        return None, "its links are an unordered set: give it a path first"
    ingress, egress = ports[path[0]].switch_id, path[-1]
    values = {key: getattr(row, key) for key in (*ANALYSED, "e2e_delay_target_s")}
    found, document = _proposal(
        session, ports, values, ingress, egress, slice_id=row.id, avoid=avoid
    )
    if document is None:
        return None, refusal(found, ingress, egress)
    return document, None
