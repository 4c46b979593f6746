"""The `sliceportal analyze-network` contract: a network document in, every slice's per-hop and
end-to-end bounds out (JSON, input order), one-line errors naming the field, exit 2.

The expected numbers are docs/analysis.md's worked example, computed by hand there and in
tests/unit/domain/test_domain_paths.py.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sliceportal.cli.main import main

SCRIPT = Path(sys.executable).parent / "sliceportal"
MS = 1e-3

EXAMPLE: dict[str, Any] = {
    "mtu_bytes": 1482,
    "links": [
        {"name": "X", "capacity_bps": 100e6, "propagation_s": 0.0005},
        {"name": "A", "capacity_bps": 100e6, "propagation_s": 0.001},
        {"name": "B", "capacity_bps": 100e6, "propagation_s": 0.002},
    ],
    "slices": [
        {"name": "video", "rate_bps": 20e6, "priority": 7, "burst_limit_s": 0.005,
         "delay_target_s": 0.005, "path": ["X", "B"]},
        {"name": "voice", "rate_bps": 10e6, "priority": 6, "burst_limit_s": 0.01,
         "delay_target_s": 0.0078, "path": ["A", "B"]},
        {"name": "iot", "rate_bps": 30e6, "priority": 6, "burst_limit_s": 0.002,
         "delay_target_s": 0.01, "path": ["B"]},
    ],
}  # fmt: skip


def _call(argv: list[str], stdin: str = "") -> tuple[int, str, str]:
    """Run the command in-process: exit status, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()))
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(argv)
    finally:
        sys.stdin = saved
    return status, out.getvalue(), err.getvalue()


def _network(doc: object, *options: str) -> dict[str, Any]:
    status, out, err = _call(["analyze-network", *options, "-"], json.dumps(doc))
    assert (status, err) == (0, ""), err
    result: dict[str, Any] = json.loads(out)
    return result


def test_the_document_follows_the_contract_in_input_order() -> None:
    doc = _network(EXAMPLE)
    assert list(doc) == ["model", "admissible", "slices"]
    assert doc["model"] == "netcalc" and doc["admissible"] is True  # the sound bound by default
    assert [s["name"] for s in doc["slices"]] == ["video", "voice", "iot"]
    for item, given_slice in zip(doc["slices"], EXAMPLE["slices"], strict=True):
        assert list(item) == [
            "name", "path", "hops", "end_to_end_s", "delay_target_s", "meets_target",
        ]  # fmt: skip
        assert item["path"] == given_slice["path"]
        assert [hop["link"] for hop in item["hops"]] == given_slice["path"]
        assert all(list(hop) == ["link", "bound_s"] for hop in item["hops"])
        assert item["delay_target_s"] == given_slice["delay_target_s"]
    video, voice, iot = doc["slices"]
    # Worked by hand (docs/analysis.md): per-hop bounds, and the concatenation for the
    # two-hop slices, propagation included.
    assert [h["bound_s"] for h in voice["hops"]] == pytest.approx([1.1201 * MS, 3.8208125 * MS])
    assert [h["bound_s"] for h in video["hops"]] == pytest.approx([1.1202 * MS, 1.34424 * MS])
    assert video["end_to_end_s"] == pytest.approx(3.8602 * MS)
    assert voice["end_to_end_s"] == pytest.approx(7.670875 * MS)
    assert iot["end_to_end_s"] == pytest.approx(5.8208125 * MS)


def test_harkous_and_unmet_targets() -> None:
    doc = _network(EXAMPLE, "--model", "harkous")
    assert doc["model"] == "harkous"
    assert [s["end_to_end_s"] for s in doc["slices"]] == pytest.approx(
        [4.7 * MS, 7.325 * MS, 5.325 * MS]
    )
    tight = json.loads(json.dumps(EXAMPLE))
    tight["slices"][1]["delay_target_s"] = 0.0075  # below voice's 7.670875 ms
    doc = _network(tight)
    assert doc["admissible"] is False
    assert [s["meets_target"] for s in doc["slices"]] == [True, False, True]


def test_unbounded_paths_print_null() -> None:
    """B cannot carry 120 Mbit/s: voice and iot (priority 6) are unbounded there, video
    (priority 7, 20 Mbit/s) still fits."""
    doc = json.loads(json.dumps(EXAMPLE))
    doc["slices"][2]["rate_bps"] = 90e6
    out = _network(doc)
    video, voice, iot = out["slices"]
    assert video["end_to_end_s"] is not None and video["meets_target"] is True
    assert voice["hops"][0]["bound_s"] is not None and voice["hops"][1]["bound_s"] is None
    assert voice["end_to_end_s"] is None and iot["end_to_end_s"] is None
    assert not voice["meets_target"] and not iot["meets_target"] and out["admissible"] is False


def test_defaults_follow_analyze() -> None:
    """mtu_bytes 1500, no propagation, the target defaults to the burst limit."""
    doc = {
        "links": [{"name": "a", "capacity_bps": 1e9}],
        "slices": [{"name": "s", "rate_bps": 1e8, "priority": 3, "burst_limit_s": 0.001,
                    "path": ["a"]}],
    }  # fmt: skip
    out = _network(doc)["slices"][0]
    # (12,500 bytes + 100 bits of tick + a 1518-byte frame) / 1 Gbit/s
    assert out["end_to_end_s"] == pytest.approx((100_000 + 100 + 1518 * 8) / 1e9, rel=1e-12)
    assert out["delay_target_s"] == 0.001 and out["meets_target"] is True


@st.composite
def one_hop_documents(draw: st.DrawFn) -> dict[str, Any]:
    """1-3 links, each slice on one of them, slice fields as `analyze` takes them."""
    links = [
        {"name": f"link{i}", "capacity_bps": draw(st.floats(1e6, 1e10))}
        for i in range(draw(st.integers(1, 3)))
    ]
    slices = []
    for i in range(draw(st.integers(0, 6))):
        item: dict[str, Any] = {
            "name": f"s{i}",
            "rate_bps": draw(st.floats(1e3, 1e9)),
            "priority": draw(st.integers(1, 7)),
            "path": [draw(st.sampled_from(links))["name"]],
        }
        if draw(st.booleans()):
            item["burst_limit_s"] = draw(st.floats(0.0, 0.05))
        else:
            item["burst_bytes"] = draw(st.floats(0.0, 1e6))
            item["delay_target_s"] = draw(st.floats(0.0, 0.1))
        if draw(st.booleans()):
            item["delay_target_s"] = draw(st.floats(0.0, 0.1))
        if draw(st.booleans()):
            item["max_packet_bytes"] = draw(st.integers(64, 9000))
        slices.append(item)
    doc: dict[str, Any] = {"links": links, "slices": slices}
    if draw(st.booleans()):
        doc["mtu_bytes"] = draw(st.integers(64, 9000))
    return doc


@pytest.mark.parametrize("model", ["netcalc", "harkous"])
@settings(max_examples=60, deadline=None)
@given(doc=one_hop_documents())
def test_a_one_hop_path_prints_exactly_what_analyze_prints(model: str, doc: dict[str, Any]) -> None:
    network = _network(doc, "--model", model)
    results = {item["name"]: item for item in network["slices"]}
    admissible = True
    for link in doc["links"]:
        on_link = [s for s in doc["slices"] if s["path"] == [link["name"]]]
        single = {
            "capacity_bps": link["capacity_bps"],
            "slices": [{k: v for k, v in s.items() if k != "path"} for s in on_link],
        }
        if "mtu_bytes" in doc:
            single["mtu_bytes"] = doc["mtu_bytes"]
        status, out, err = _call(["analyze", "--model", model, "-"], json.dumps(single))
        assert (status, err) == (0, "")
        analyzed = json.loads(out)
        admissible = admissible and analyzed["admissible"]
        for given_slice, expected in zip(on_link, analyzed["slices"], strict=True):
            got = results[given_slice["name"]]
            above = sum(s["rate_bps"] for s in on_link if s["priority"] >= expected["priority"])
            overflow = above > link["capacity_bps"]
            assert got["hops"] == [
                {"link": link["name"], "bound_s": expected["worst_case_delay_s"]}
            ]
            assert got["end_to_end_s"] == (None if overflow else expected["worst_case_delay_s"])
            assert got["delay_target_s"] == expected["delay_target_s"]
            assert got["meets_target"] == expected["meets_target"]
    assert network["admissible"] == admissible


def _bad(**changes: Any) -> str:
    doc = json.loads(json.dumps(EXAMPLE))
    for key, value in changes.items():
        if key.startswith("slice1_"):
            doc["slices"][1][key.removeprefix("slice1_")] = value
        elif key.startswith("link0_"):
            doc["links"][0][key.removeprefix("link0_")] = value
        else:
            doc[key] = value
    return json.dumps(doc)


BAD_INPUTS: list[tuple[str, str]] = [
    (_bad(slice1_path=["x"]), "slices[1].path[0]: unknown link 'x'"),
    (_bad(slice1_path=["A", "B", "A"]),
     "slices[1].path[2]: link 'A' appears twice (already path[0]): a path crosses each link once"),
    (_bad(slice1_path=[]), "slices[1].path: must name at least one link"),
    (_bad(slice1_path="A"), "slices[1].path: must be a list of link names"),
    (_bad(slice1_path=["A", 2]), "slices[1].path[1]: must be a link name (a string)"),
    (_bad(slice1_path=None), "slices[1].path: is required"),
    (_bad(slice1_priority=0), "slices[1].priority: must be an integer from 1 to 7"),
    (_bad(slice1_rate_bps=-1), "slices[1].rate_bps: must be greater than 0"),
    (_bad(slice1_burst_limit_s=None, slice1_delay_target_s=None, slice1_burst_bytes=None),
     "slices[1].burst_limit_s: is required unless burst_bytes is given"),
    (_bad(slice1_burst_bytes=10),
     "slices[1].burst_bytes: disagrees with slices[1].burst_limit_s: rate × burst_limit_s / 8 "
     "is 12500 bytes, not 10; give one of the two"),
    (_bad(slice1_scheme="codel"),
     "slices[1].scheme: unknown field (expected one of name, rate_bps, priority, burst_limit_s, "
     "burst_bytes, delay_target_s, max_packet_bytes, path)"),
    (_bad(slice1_name="video"),
     "slices[1].name: duplicate name 'video' (already used by slices[0])"),
    (_bad(link0_name="A"), "links[1].name: duplicate name 'A' (already used by links[0])"),
    (_bad(link0_propagation_s=-0.001), "links[0].propagation_s: must be at least 0"),
    (_bad(link0_propagation_s="1 ms"), "links[0].propagation_s: must be a number"),
    (_bad(link0_capacity_bps=None), "links[0].capacity_bps: is required"),
    (_bad(link0_capacity_bps=0), "links[0].capacity_bps: must be greater than 0"),
    (_bad(link0_colour="red"),
     "links[0].colour: unknown field (expected one of name, capacity_bps, propagation_s)"),
    (_bad(link0_name=""), "links[0].name: must be a non-empty string"),
    (_bad(link0_capacity_bps=float("nan")), "links[0].capacity_bps: must be a finite number"),
    (_bad(link0_propagation_s=float("inf")), "links[0].propagation_s: must be a finite number"),
    (_bad(link0_propagation_s=1e7), "links[0].propagation_s: must be at most 1e+06"),
    (_bad(slice1_rate_bps=float("nan")), "slices[1].rate_bps: must be a finite number"),
    (_bad(slice1_delay_target_s=float("-inf")),
     "slices[1].delay_target_s: must be a finite number"),
    (_bad(link0_name=5), "links[0].name: must be a non-empty string"),
    (_bad(slice1_path=[None]), "slices[1].path[0]: must be a link name (a string)"),
    (_bad(slices=[7]), "slices[0]: must be an object"),
    (_bad(slices=None), "slices: is required"),
    (_bad(links=None), "links: is required"),
    (_bad(links={"A": 1e8}), "links: must be a list of link objects"),
    (_bad(links=[7]), "links[0]: must be an object"),
    (_bad(slices="all"), "slices: must be a list of slice objects"),
    (_bad(mtu_bytes=0), "mtu_bytes: must be an integer from 1 to 1000000"),
    (_bad(capacity_bps=1e9),
     "capacity_bps: unknown field (expected one of mtu_bytes, links, slices)"),
    ("[1]", "input: must be a JSON object with links and slices"),
    ("null", "input: must be a JSON object with links and slices"),
    ('"A"', "input: must be a JSON object with links and slices"),
    ('{"links": [], "links": []}', "stdin: not valid JSON: duplicate key 'links' in an object"),
    ("{links}", "stdin: not valid JSON: Expecting property name enclosed in double quotes "
     "(line 1, column 2)"),
]  # fmt: skip


@pytest.mark.parametrize(("stdin", "message"), BAD_INPUTS)
def test_bad_input_is_one_line_naming_the_field(stdin: str, message: str) -> None:
    assert _call(["analyze-network", "-"], stdin) == (2, "", f"sliceportal: {message}\n")


def test_an_empty_network_is_admissible() -> None:
    assert _network({"links": [], "slices": []}) == {
        "model": "netcalc",
        "admissible": True,
        "slices": [],
    }


def test_bursts_that_grow_past_the_largest_float_are_unbounded_not_an_internal_error() -> None:
    """32 links in a ring, one slice entering at each and crossing all 32 at 99 % of the
    capacity in total: the growth has no finite fixed point, and on its way to infinity the
    grown bursts of a level summed beyond the largest float (an OverflowError in fsum, exit
    1). They are unbounded: exit 0, every end-to-end bound null."""
    count = 32
    doc = {
        "links": [{"name": f"L{i}", "capacity_bps": 1e15} for i in range(count)],
        "slices": [
            {"name": f"s{i}", "rate_bps": 0.99e15 / count, "priority": 3, "burst_bytes": 1e21,
             "delay_target_s": 1.0, "path": [f"L{(i + k) % count}" for k in range(count)]}
            for i in range(count)
        ],
    }  # fmt: skip
    out = _network(doc)
    assert out["admissible"] is False
    assert all(item["end_to_end_s"] is None for item in out["slices"])


def test_usage_errors_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["analyze-network", "--model", "best", "-"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "argument --model: invalid choice: 'best'" in err


def _script(argv: list[str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *argv], input=stdin, capture_output=True, text=True, timeout=120
    )


def test_installed_script() -> None:
    """What other tools run: the console script, a file argument, and bad input."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "network.json"
        path.write_text(json.dumps(EXAMPLE))
        cases = [
            ["analyze-network", str(path)],
            ["analyze-network", "--model", "harkous", str(path)],
            ["analyze-network", str(Path(folder) / "missing.json")],
        ]
        with ThreadPoolExecutor(max_workers=3) as pool:
            netcalc, harkous, missing = pool.map(_script, cases)
        bad = _script(["analyze-network", "-"], BAD_INPUTS[0][0])
    assert (netcalc.returncode, netcalc.stderr) == (0, "")
    assert json.loads(netcalc.stdout) == _network(EXAMPLE)
    assert json.loads(harkous.stdout)["model"] == "harkous"
    assert missing.returncode == 2 and missing.stdout == ""
    assert missing.stderr.count("\n") == 1 and "cannot read" in missing.stderr
    assert (bad.returncode, bad.stdout) == (2, "")
    assert bad.stderr == f"sliceportal: {BAD_INPUTS[0][1]}\n"
