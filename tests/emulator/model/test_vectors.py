"""The shared test vectors (p4/tests/vectors/*.json) through both packet paths."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from emulator.model import codel_vector, vectors
from sliceportal.domain import dataplane as dp
from sliceportal.domain import p4constants as c
from sliceportal.emulator.layout import Outcome

PATHS = sorted(vectors.VECTOR_DIR.glob("*.json"))


def test_there_are_vectors() -> None:
    assert len(PATHS) >= 7


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_reference_pipeline_meets_the_vector(path: Path) -> None:
    vector = vectors.load(path)
    result = vectors.run_reference(vector)
    assert [d.outcome for d in result.decisions] == [s.expect for s in vector.packets]
    assert vectors.result_json(result) == vector.doc["expected"]


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_compiled_pipeline_meets_the_vector(path: Path) -> None:
    vector = vectors.load(path)
    assert vectors.result_json(vectors.run_engine(vector)) == vector.doc["expected"]


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_vector_entries_are_the_translation_of_its_slices(path: Path) -> None:
    """A BMv2 driver installs `entries`; they must be what the portal would push."""
    vector = vectors.load(path)
    entries = dp.dataplane_entries(vector.slices, vector.routes)
    assert vector.doc["entries"] == vectors.entries_json(entries)
    meters = vectors.meter_entries_json(dp.meter_configs(vector.slices))
    assert vector.doc.get("meter_entries", []) == meters


def test_vectors_cover_every_outcome_and_every_histogram_bucket() -> None:
    outcomes = set()
    buckets: dict[str, set[int]] = {"vq_delay_hist": set(), "real_delay_hist": set()}
    for path in PATHS:
        doc = json.loads(path.read_text())
        outcomes |= {d["outcome"] for d in doc["expected"]["decisions"]}
        for name, cells in buckets.items():
            cells |= {int(i) % c.HIST_BUCKETS for i in doc["expected"]["counters"][name]}
    assert outcomes == {o.name.lower() for o in Outcome if o != Outcome.PENDING}
    assert all(cells == set(range(c.HIST_BUCKETS)) for cells in buckets.values())


def test_regenerating_refuses_a_wrong_hand_written_outcome(tmp_path: Path) -> None:
    doc = json.loads(PATHS[0].read_text())
    step = next(s for s in doc["steps"] if s.get("expect") == "forwarded")
    step["expect"] = "vq_dropped"
    path = tmp_path / "wrong.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(SystemExit, match="expects vq_dropped"):
        vectors.regenerate(path)


def test_the_codel_vector_is_the_float_models() -> None:
    """codel.json's packets and hand outcomes come from the independent float model, in
    which a dropped packet gives its time back to the virtual queue: the pipelines meeting
    those outcomes (test_reference_pipeline_meets_the_vector) is the check of the give-back."""
    doc = json.loads((vectors.VECTOR_DIR / "codel.json").read_text())
    built = codel_vector.build()
    assert doc["steps"] == built["steps"] and doc["about"] == built["about"]
