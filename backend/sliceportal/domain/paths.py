"""Slice paths through the network: what makes an ordered list of links a path, and the search
for the shortest admissible one. Pure: the topology and the admission check come in as
arguments.

A path is the links (egress ports) a slice leaves its switches by, in order: each link but the
last is a cable's end whose far switch is the switch of the next link, and no switch is crossed
twice (a loop). The last link usually faces the slice's hosts. docs/api.md ("Slice paths").
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

MAX_CANDIDATES = 64
"""Paths the proposal checks at most: it enumerates simple paths fewest hops first, and in a
dense fabric their number grows exponentially with the length, while each check analyses every
link of the path."""


@dataclass(frozen=True, slots=True)
class PortLink:
    """A link as paths see it: the switch it leaves, and the switch its cable reaches (None
    when it is no cable's end: it faces hosts, or nothing yet)."""

    id: int
    name: str
    switch_id: int
    far_switch_id: int | None


class PathError(ValueError):
    """Why a list of links is no path; `index` is the position of the offending link (None
    for the list as a whole)."""

    def __init__(self, index: int | None, message: str) -> None:
        super().__init__(message)
        self.index = index
        self.message = message


def check_path(path: Sequence[int], links: Mapping[int, PortLink]) -> None:
    """PathError unless `path` is a path: at least one known link, each one's cable reaching
    the next one's switch, no switch twice (nor a last link leading back to one)."""
    if not path:
        raise PathError(None, "a path names at least one link")
    seen: dict[int, int] = {}
    for index, link_id in enumerate(path):
        link = links.get(link_id)
        if link is None:
            raise PathError(index, f"link {link_id} does not exist")
        if index:
            before = links[path[index - 1]]
            if before.far_switch_id != link.switch_id:
                reach = (
                    "is no cable's end"
                    if before.far_switch_id is None
                    else f"leads to switch {before.far_switch_id}"
                )
                raise PathError(
                    index,
                    f"link {before.name!r} {reach}, not to switch {link.switch_id} of link "
                    f"{link.name!r}: consecutive links of a path are joined by a cable",
                )
        first = seen.setdefault(link.switch_id, index)
        if first != index:
            raise PathError(
                index,
                f"link {link.name!r} leaves switch {link.switch_id} again (already at index "
                f"{first}): a path crosses each switch once",
            )
    last = links[path[-1]]
    if last.far_switch_id in seen:
        raise PathError(
            len(path) - 1,
            f"link {last.name!r} leads back to switch {last.far_switch_id} (index "
            f"{seen[last.far_switch_id]}): a path crosses each switch once",
        )


def is_path(path: Sequence[int], links: Mapping[int, PortLink]) -> bool:
    try:
        check_path(path, links)
    except PathError:
        return False
    return True


def simple_paths(
    links: Mapping[int, PortLink],
    ingress_switch_id: int,
    egress_link_id: int,
    *,
    avoid: frozenset[int] = frozenset(),
) -> Iterator[tuple[int, ...]]:
    """Every path from `ingress_switch_id` out of `egress_link_id`, fewest hops first (a
    breadth-first search over partial paths), never through the links `avoid`."""
    egress = links.get(egress_link_id)
    if egress is None or egress_link_id in avoid:
        return
    leaving: dict[int, list[PortLink]] = {}
    for link in sorted(links.values(), key=lambda link: link.id):
        if link.far_switch_id is not None and link.id not in avoid:
            leaving.setdefault(link.switch_id, []).append(link)
    Partial = tuple[tuple[int, ...], int, frozenset[int]]  # links, switch reached, crossed
    frontier: list[Partial] = [((), ingress_switch_id, frozenset({ingress_switch_id}))]
    while frontier:
        grown: list[Partial] = []
        for partial, switch_id, crossed in frontier:
            if switch_id == egress.switch_id:
                yield (*partial, egress_link_id)
                continue  # going on would cross the egress switch twice
            for link in leaving.get(switch_id, ()):
                far = link.far_switch_id
                assert far is not None
                if far not in crossed:
                    grown.append(((*partial, link.id), far, crossed | {far}))
        frontier = grown


@dataclass(frozen=True, slots=True)
class Verdict:
    """What admission says of a slice on one candidate path: its end-to-end bound there (None:
    unbounded) and, when it does not fit, why."""

    bound_s: float | None
    refusal: str | None = None


@dataclass(frozen=True, slots=True)
class Proposal:
    """The proposed path and its bound, or (path None) why there is none: each candidate
    checked with the reason it was refused."""

    path: tuple[int, ...] | None
    bound_s: float | None
    refused: tuple[tuple[tuple[int, ...], str], ...]
    truncated: bool = False
    """True when more candidates existed than were checked (`MAX_CANDIDATES`)."""


def propose_path(
    links: Mapping[int, PortLink],
    ingress_switch_id: int,
    egress_link_id: int,
    check: Callable[[tuple[int, ...]], Verdict],
    *,
    avoid: frozenset[int] = frozenset(),
    max_candidates: int = MAX_CANDIDATES,
) -> Proposal:
    """The shortest path on which the slice is admitted (fewest hops, then the lowest
    end-to-end bound), each candidate judged by `check`; else no path, with every refusal."""
    refused: list[tuple[tuple[int, ...], str]] = []
    best: tuple[int, ...] | None = None
    best_bound: float | None = None
    truncated = False
    for checked, path in enumerate(
        simple_paths(links, ingress_switch_id, egress_link_id, avoid=avoid)
    ):
        if best is not None and len(path) > len(best):
            break  # the shortest admissible length is decided
        if checked == max_candidates:
            truncated = True
            break
        verdict = check(path)
        if verdict.refusal is not None:
            refused.append((path, verdict.refusal))
        elif best is None or _lower(verdict.bound_s, best_bound):
            best, best_bound = path, verdict.bound_s
    return Proposal(best, best_bound, tuple(refused), truncated)


def _lower(bound: float | None, than: float | None) -> bool:
    """`bound` is strictly below `than`, None meaning unbounded."""
    return bound is not None and (than is None or bound < than)
