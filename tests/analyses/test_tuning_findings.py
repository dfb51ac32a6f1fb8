"""Tuning's findings without Streamlit (retrieval.analyses.tuning: edges, verdict, wording): the library says them in
plain words (no Markdown), each with its numbers; `python -m retrieval tune` prints each sentence and reports each
finding in its JSON. Checked against the edge rule written again here, on constructed sweeps (every end), on the
invented corpus and on a real-shaped collection (bench/synthetic.py)."""

from __future__ import annotations

import json
import math
import sys

import numpy as np
import pytest

from conftest import ROOT
from retrieval import cli
from retrieval.analyses import tuning
from retrieval.core.params import SPECS, Params
from retrieval.corpus import dataset as datasets

sys.path.insert(0, str(ROOT / "bench"))
import synthetic  # bench/ is not a package: on the path just above

N_Q = 6


def swept(names: tuple[str, ...], axes: tuple[np.ndarray, ...], best: tuple[int, ...]) -> tuple[tuning.Sweep, int]:
    """A sweep over `axes` whose best setting sits at the positions `best` (0.5 there, 0.3 elsewhere, every
    question), and that setting's index."""
    shape = tuple(a.size for a in axes)
    means = np.full(shape, 0.3)
    means[best] = 0.5
    values = np.repeat(means.reshape(-1, 1), N_Q, axis=1) + np.linspace(-0.01, 0.01, N_Q)
    sw = tuning.Sweep("LSA", "ndcg@5", names, axes, values, tuple(f"q{i}" for i in range(N_Q)), Params())
    return sw, int(np.ravel_multi_index(best, shape))


def expected_edges(sw: tuning.Sweep, best: int, dims_limit: int) -> list[tuple[str, float, str, float]]:
    """The edge rule, written again: per swept parameter, the best's place among the sorted values searched; an end
    when within the outer tenth of them (the end one at least) and the parameter's range goes on past it."""
    if "analysis" in sw.names:
        return []
    setting = sw.setting(best)
    out = []
    for name, axis in zip(sw.names, sw.axes):
        values = sorted(float(x) for x in axis)
        at = values.index(float(setting[name]))
        zone = max(1, int(len(values) / 10))
        lo, hi = SPECS[name].valid
        hi = dims_limit if name == "dims" else hi
        if at < zone and values[0] > lo:
            out.append((name, float(setting[name]), "low", values[0]))
        if at >= len(values) - zone and values[-1] < hi:
            out.append((name, float(setting[name]), "high", values[-1]))
    return out


def sentence(name: str, value: float, side: str, end: float) -> str:
    """The sentence an edge must say, from its numbers."""
    if side == "high":
        return (
            f"The best is at the edge of the range searched ({name} = {value:g}; the range searched ends at {end:g}): "
            "the optimum may lie beyond it."
        )
    return (
        f"The best is at the edge of the range searched ({name} = {value:g}; the range searched starts at {end:g}): "
        "the optimum may lie below it."
    )


def check_edges(found: tuple[tuning.Edge, ...], sw: tuning.Sweep, best: int, dims_limit: int) -> None:
    want = expected_edges(sw, best, dims_limit)
    assert [(e.name, e.value, e.side, e.end) for e in found] == want
    for e in found:
        assert e.sentence == sentence(e.name, e.value, e.side, e.end) and "*" not in e.sentence
        assert [p.text for p in e.words if p.stressed] == ["The best is at the edge of the range searched"]
        hi = float(SPECS[e.name].hi)
        assert e.slider_end == (hi if e.side == "high" and e.end >= hi else None)
        assert e.to_json() == {
            "param": e.name,
            "value": int(e.value) if e.name == "dims" else e.value,
            "side": e.side,
            "end": int(e.end) if e.name == "dims" else e.end,
            "text": e.sentence,
        }


@pytest.mark.parametrize(
    "names, axes, best, limit, sides",
    [
        (("dims",), (np.arange(1.0, 201.0),), (195,), 1399, [("dims", "high")]),  # d may go on to 1,399
        (("dims",), (np.arange(1.0, 201.0),), (199,), 200, []),  # the corpus allows no more
        (("dims",), (np.arange(1.0, 201.0),), (0,), 1399, []),  # d = 1 is d's own bound
        (("rrf_k",), (np.arange(1.0, 201.0),), (0,), 1399, [("rrf_k", "low")]),  # RRF k may be below 1
        (("k1", "b"), (np.linspace(0, 3, 16), np.linspace(0, 1, 11)), (15, 10), 9, [("k1", "high")]),  # b = 1: bound
        (("k1", "b"), (np.linspace(0, 3, 16), np.linspace(0, 1, 11)), (14, 5), 9, []),
        (("alpha", "dims"), (np.linspace(0, 1, 21), np.array([1.0, 2.0, 5.0, 27.0])), (20, 3), 40, [("dims", "high")]),
        (("k1", "dims"), (np.linspace(0, 3, 4), np.array([1.0, 3.0])), (3, 1), 3, [("k1", "high")]),
    ],
)
def test_an_edge_is_found_where_the_rule_says(names, axes, best, limit, sides):
    sw, at = swept(names, axes, best)
    found = tuning.edge_findings(sw, at, limit)
    assert [(e.name, e.side) for e in found] == sides
    check_edges(found, sw, at, limit)


def test_the_analysis_sweep_has_no_edge_finding():
    """Its coarse grid's ends are said beside the finer k1 x b sweep's (analyses/grids.py), not as edges."""
    choices = ("none/article", "porter/article")
    axes = (np.arange(2.0), np.array([0.0, 3.0]), np.array([0.0, 1.0]))
    values = np.full((8, N_Q), 0.3)
    values[3] = 0.5  # k1 = 3 at none/article
    sw = tuning.Sweep("BM25", "ndcg@5", ("analysis", "k1", "b"), axes, values, ("q",) * N_Q, Params(), choices=choices)
    assert tuning.edge_findings(sw, 3, 9) == ()


def test_the_verdict_is_plain_words_with_a_stressed_headline():
    s = tuning.Signals(176, 3, False, False, False, -0.03, 0.004, 0.132, 176, 0.041)
    words = tuning.verdict_words(s, "k1 and b", "k1 = 2.2, b = 0.7", "nDCG@10")
    assert tuning.plain(words) == tuning.verdict_text(s, "k1 and b", "k1 = 2.2, b = 0.7", "nDCG@10")
    assert "*" not in tuning.plain(words) and words[0].stressed
    assert [p.text for p in words if p.stressed] == [
        "Tuning k1 and b may gain about +0.041 nDCG@10 on unseen questions",
        "but no single setting beats the current one once 176 comparisons are corrected for",
    ]


@pytest.fixture(scope="module")
def real_shaped():
    """A real-shaped collection: Zipfian words, 400 documents, 40 questions (bench/synthetic.py)."""
    return synthetic.generate(400, n_queries=40)


@pytest.mark.slow
@pytest.mark.parametrize(
    "which, what", [("invented", "k1,b"), ("invented", "rrf_k"), ("real-shaped", "dims"), ("real-shaped", "rrf_k")]
)
def test_tune_says_its_findings_with_their_numbers(which, what, invented, real_shaped):
    ds = invented if which == "invented" else real_shaped
    engine = tuning.engine_for(ds, Params())
    t = tuning.tune(ds, what, "ndcg@5", engine=engine)
    check_edges(t.edges, t.sweep, t.best, engine.max_dims())
    v, s = t.verdict, t.verdict.signals
    # the verdict's numbers are the sweep's, and its words are plain
    assert s.n_settings == t.sweep.means.size and s.n_tied == t.ties.size
    assert s.diff == pytest.approx(t.current_values.mean() - t.sweep.means[t.best], abs=1e-12)
    assert s.gain == pytest.approx(t.cv.cross_validated - t.current_values.mean(), abs=1e-12)
    assert v.kind == tuning.verdict_kind(s) and "*" not in v.plain and v.words[0].stressed
    report = tuning.to_json(t)
    assert report["verdict"] == {"kind": v.kind, "text": v.plain}
    assert report["signals"] == s._asdict() and report["edges"] == [e.to_json() for e in t.edges]
    assert json.loads(json.dumps(report)) == report


@pytest.mark.slow
@pytest.mark.parametrize("which", ["invented", "real-shaped"])
def test_the_command_line_prints_and_reports_the_edges(which, capsys, tmp_path, invented, real_shaped):
    """`python -m retrieval tune` prints each edge's sentence after the best and reports it under "edges" in JSON."""
    ds = invented if which == "invented" else real_shaped
    data = []
    if which == "real-shaped":
        zipped = tmp_path / "shaped.zip"
        zipped.write_bytes(datasets.beir_zip(ds))
        data = ["--data", str(zipped)]
    args = ["tune", *data, "--params", "rrf_k", "--metric", "ndcg@5"]
    assert cli.main([*args, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    loaded = datasets.load(zipped) if data else ds
    engine = tuning.engine_for(loaded, Params())
    t = tuning.tune(loaded, "rrf_k", "ndcg@5", engine=engine)
    want = expected_edges(t.sweep, t.best, engine.max_dims())
    assert [(e["param"], e["value"], e["side"], e["end"]) for e in report["edges"]] == want
    assert [e["text"] for e in report["edges"]] == [sentence(*w) for w in want]
    assert cli.main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [x[len("edge: ") :] for x in lines if x.startswith("edge: ")] == [sentence(*w) for w in want]
    best = next(i for i, x in enumerate(lines) if x.startswith("best: "))
    assert all(lines[best + 1 + i].startswith("edge: ") for i in range(len(want)))
    assert not math.isnan(report["signals"]["diff"])
