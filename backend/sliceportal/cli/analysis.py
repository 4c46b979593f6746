"""``analyze``, ``min-capacity`` and ``plan-priorities``: the analytics on a JSON link document;
``analyze-network``: end-to-end bounds along ordered paths through several links.

Input (FILE or ``-`` for stdin)::

    {"capacity_bps": 1e9, "mtu_bytes": 1500, "frame_overhead_bytes": 0,
     "slices": [{"name": "DC", "rate_bps": 48e6, "priority": 7, "burst_limit_s": 0.02,
                 "delay_target_s": 0.005, "scheme": "codel",
                 "codel": {"target_s": 0.002, "interval_s": 0.05}}]}

Priorities are 1 to 7 (0 is best effort's); ``frame_overhead_bytes`` is 0 (the default) when
the capacity counts frame bytes as the data plane does, 24 when it is the line rate. A slice
may name its queue-management scheme (``scheme``: tail_drop, the default, ecn_step with
``marking_threshold_s``, codel with ``codel``: target_s, interval_s, ecn_mark, or meter); it
is checked as a deployment would check it and does not change the bounds. Each
command prints one JSON document on stdout; bad input gives exit status 2 and one line on
stderr naming the field. These documents are a stable contract for other tools.

``analyze-network`` reads a network instead (docs/analysis.md, "End to end")::

    {"mtu_bytes": 1500,
     "links": [{"name": "A", "capacity_bps": 1e8, "propagation_s": 0.001}, ...],
     "slices": [{"name": "voice", "rate_bps": 1e7, "priority": 6, "burst_limit_s": 0.01,
                 "delay_target_s": 0.008, "path": ["A", "B"]}, ...]}

and prints ``{"model", "admissible", "slices": [{"name", "path", "hops": [{"link",
"bound_s"}], "end_to_end_s", "delay_target_s", "meets_target"}]}`` in input order. A slice's
fields mean what they mean for ``analyze``; its ``delay_target_s`` is its end-to-end target.
"""

from __future__ import annotations

import argparse

from sliceportal.cli import read_json, write_json
from sliceportal.domain import (
    LinkInput,
    Model,
    analyze,
    dataplane,
    min_capacity,
    parse_link_input,
    plan_priorities,
)
from sliceportal.domain.admission.endtoend import analyze_paths
from sliceportal.domain.planning import DEFAULT_TIME_BUDGET_S
from sliceportal.domain.spec import (
    DEFAULT_MODEL,
    MAX_DELAY_TARGET_S,
    SLICE_LEVELS,
    parse_network_input,
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    analyze_parser = subparsers.add_parser(
        "analyze",
        help="worst-case delay of every slice on a link, and whether all fit",
        description="Worst-case queuing delay of every slice on one link and the verdict.",
    )
    _common(analyze_parser)
    analyze_parser.set_defaults(handler=run_analyze)

    capacity_parser = subparsers.add_parser(
        "min-capacity",
        help="smallest link capacity meeting every target with the given priorities",
        description="Smallest capacity (bit/s) that admits the slices; capacity_bps is ignored.",
    )
    _common(capacity_parser)
    capacity_parser.set_defaults(handler=run_min_capacity)

    plan_parser = subparsers.add_parser(
        "plan-priorities",
        help="priorities that meet every target, or a proof that none exist",
        description="Find priorities (7 downwards) meeting every delay target, or prove none do.",
    )
    _common(plan_parser)
    plan_parser.add_argument(
        "--levels",
        type=_levels,
        default=SLICE_LEVELS,
        metavar="L",
        help=f"priority levels the slices may use, 1 to {SLICE_LEVELS}: a link's queues but "
        f"best effort's (default {SLICE_LEVELS})",
    )
    plan_parser.add_argument(
        "--time-budget",
        type=_seconds,
        default=DEFAULT_TIME_BUDGET_S,
        metavar="SECONDS",
        help=f"search time limit (default {DEFAULT_TIME_BUDGET_S:g})",
    )
    plan_parser.set_defaults(handler=run_plan_priorities)

    network_parser = subparsers.add_parser(
        "analyze-network",
        help="end-to-end worst-case delay of every slice along its path through several links",
        description="Per-hop and end-to-end worst-case delay of every slice along its ordered "
        "path (bursts grow hop by hop; under netcalc the tighter of the per-hop sum and the "
        "concatenation of the hops), against its delay target.",
    )
    _common(network_parser, "network document (JSON), or - for stdin")
    network_parser.set_defaults(handler=run_analyze_network)


def _common(
    parser: argparse.ArgumentParser, document: str = "link document (JSON), or - for stdin"
) -> None:
    parser.add_argument("file", metavar="FILE", help=document)
    parser.add_argument(
        "--model",
        choices=[model.value for model in Model],
        default=DEFAULT_MODEL.value,
        help="delay bound: network calculus (netcalc, the sound one, default) or the paper's "
        "eq. 3 (harkous, not an upper bound)",
    )


def _levels(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= SLICE_LEVELS:
        raise argparse.ArgumentTypeError(f"must be an integer from 1 to {SLICE_LEVELS}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= MAX_DELAY_TARGET_S:
        raise argparse.ArgumentTypeError(
            f"must be a number of seconds in (0, {MAX_DELAY_TARGET_S:g}]"
        )
    return value


def _load(args: argparse.Namespace, *, require_capacity: bool, require_slices: bool) -> LinkInput:
    """The link document, each slice's queue-management scheme checked against the slice
    (`dataplane.check_scheme`): the bounds do not depend on it, a deployment would refuse it."""
    doc = read_json(args.file)
    link = parse_link_input(
        doc,
        require_capacity=require_capacity,
        require_slices=require_slices,
        other_slice_keys=dataplane.SCHEME_KEYS,
    )
    assert isinstance(doc, dict)  # parse_link_input checked it
    for i, (item, spec) in enumerate(zip(doc["slices"], link.slices, strict=True)):
        if any(key in item for key in dataplane.SCHEME_KEYS):
            dataplane.check_scheme(item, spec, f"slices[{i}].")
    return link


def _capacity(link: LinkInput) -> float:
    assert link.capacity_bps is not None  # parse_link_input(require_capacity=True) checked it
    return link.capacity_bps


def run_analyze(args: argparse.Namespace) -> int:
    link = _load(args, require_capacity=True, require_slices=False)
    write_json(analyze(link.slices, _capacity(link), Model(args.model), link.framing).to_dict())
    return 0


def run_min_capacity(args: argparse.Namespace) -> int:
    link = _load(args, require_capacity=False, require_slices=True)
    model = Model(args.model)
    needed = min_capacity(link.slices, model, link.framing)
    write_json({"model": model.value, "min_capacity_bps": needed})
    return 0


def run_plan_priorities(args: argparse.Namespace) -> int:
    link = _load(args, require_capacity=True, require_slices=False)
    model = Model(args.model)
    plan = plan_priorities(
        link.slices,
        _capacity(link),
        args.levels,
        model,
        framing=link.framing,
        time_budget_s=args.time_budget,
    )
    write_json({"model": model.value, **plan.to_dict()})
    return 0


def run_analyze_network(args: argparse.Namespace) -> int:
    network = parse_network_input(read_json(args.file))
    write_json(analyze_paths(network.links, network.slices, Model(args.model)).to_dict())
    return 0
