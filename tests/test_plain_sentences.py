"""Sentences a student alone would misread (issue 43, §4) and what must draw on any machine (§5): each sentence
checked against numbers computed another way, on the invented corpus and on the held-out collection that
tests/ui/test_tour_claims.py builds (300 documents, judgements naming relevant documents only, unjudged documents at
the top, late ranks).

- Tour 5 and the Diagnosis: the failing questions whose first result no judgement names, counted by the class each
  is in (a late rank has one too), so the counts and the classes agree.
- The stemmer: what it does to the mean, beside what it fixes and breaks; the Tour never points to the lower mean;
  each rank of a stemmer's line says whether it is with the stemmer or without.
- The Overview: whenever more than one result in five of a system's top k is unjudged, it says so (the Data page's
  share), on judgements naming relevant documents only too.
"""

from __future__ import annotations

import doctest
import json
import re
import tomllib

import numpy as np
import pandas as pd
import pytest
from streamlit import config
from streamlit.elements.lib.image_utils import image_to_url
from streamlit.elements.lib.layout_utils import LayoutConfig
from streamlit.proto.NewSession_pb2 import Config
from streamlit.runtime.app_session import _get_show_error_links
from streamlit.string_util import validate_material_icon
from test_tour_claims import held_out

from apptest import open_app, shown
from conftest import ROOT
from retrieval import cli
from retrieval.analyses import coverage, diagnosis, stemming
from retrieval.core.params import Params
from retrieval.corpus import dataset as datasets
from retrieval.corpus.dataset import assemble
from retrieval.corpus.text import Analysis
from retrieval.engine.engine import evaluate
from retrieval.evaluation.report import Unjudged
from ui import charts, overview, router, tour

K = 5


@pytest.fixture(scope="module")
def collection(tmp_path_factory):
    """The held-out collection: (its folder, its dataset)."""
    path = held_out(tmp_path_factory.mktemp("held-out") / "held-out")
    return str(path), datasets.load(str(path))


def _report(capsys, data: str, *more: str) -> dict:
    assert cli.main(["evaluate", "--data", data, "--metrics", f"ndcg@{K}", "--json", *more]) == 0
    return json.loads(capsys.readouterr().out)


def _both(invented, collection):
    return [("invented", invented), collection]


# ------------------------------------------------------------------------------------------ unjudged first results


@pytest.mark.parametrize("module", [diagnosis, coverage, stemming])
def test_the_worked_examples_of_the_sentences_hold(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.slow  # its first engine (about 4 s on a busy machine)
def test_a_late_rank_with_an_unjudged_first_result_is_counted_as_such_and_said_so():
    docs = [("u1", "alpha beta gamma"), ("u2", "alpha beta"), ("r1", "alpha"), ("r2", "delta words"), ("x", "other")]
    ds = assemble("late", docs, [("q1", "alpha beta"), ("q2", "zeta")], [("q1", "r1", 1), ("q2", "r2", 1)])
    ranking = evaluate(ds, Params(), ["ndcg@1"]).rankings["BM25"]
    cases = diagnosis.diagnose(ds, ranking, 1)
    late = next(c for c in cases if c.qid == "q1")
    assert late.kind == "late rank" and late.rank == 3 and late.first_grade is None  # u1 or u2 first: unjudged
    f = diagnosis.failures(cases, "BM25", 2, 1)
    assert dict(f.unjudged_first) == {"late rank": 1} and dict(f.by_class)["unjudged at the top"] == 0
    said = diagnosis.failures_sentence(f)
    assert "On 1 of them its first result is a document no judgement names (1 late rank)" in said
    assert tour.first_result_note(late) == "BM25's first result, unjudged; the first relevant document is at rank 3"
    case = tour.case_sentence(late, 1)
    assert "A **late rank**." in case and f"Its first result, {late.first_result}, is unjudged" in case


def test_the_counts_of_unjudged_first_results_agree_with_the_judgements(invented, collection):
    for name, ds in _both(invented, collection):
        ranking = evaluate(ds, Params(), [f"ndcg@{K}"]).rankings["BM25"]
        cases = diagnosis.diagnose(ds, ranking, K)
        judged = {(q, d) for q, d, _ in ds.judgements()}
        firsts = {ds.query_ids[q]: (ranking.top_ids(ds, q, 1) or [None])[0] for q in ds.evaluated}
        unjudged = [c for c in cases if firsts[c.qid] is not None and (c.qid, firsts[c.qid]) not in judged]
        f = diagnosis.failures(cases, "BM25", int(ds.evaluated.size), K)
        assert f.unjudged == len(unjudged), name
        assert dict(f.unjudged_first).get("late rank", 0) == sum(c.rank > K for c in unjudged), name
        assert dict(f.unjudged_first).get("unjudged at the top", 0) == dict(f.by_class)["unjudged at the top"], name
        said = diagnosis.failures_sentence(f)
        assert f"on {f.failing} question" in said and (("no judgement names" in said) == bool(unjudged)), name
    assert f.unjudged and dict(f.unjudged_first).get(
        "late rank"
    )  # the collection has late ranks under unjudged documents


# ------------------------------------------------------------------------------------------ the stemmer


def test_the_stemmer_s_mean_and_ranks_are_what_evaluate_says_with_and_without_it(capsys, invented, collection):
    for data, ds in (("invented", invented), collection):
        e = stemming.stemmer_effect(ds, Params(), K)
        plain_run, stemmed = _report(capsys, data), _report(capsys, data, "--stemmer", "snowball")
        before, after = plain_run["systems"]["BM25"][f"ndcg@{K}"], stemmed["systems"]["BM25"][f"ndcg@{K}"]
        assert e.metric == f"ndcg@{K}" and e.mean_without == pytest.approx(before, abs=1e-12)
        assert e.mean_with == pytest.approx(after, abs=1e-12)
        said = stemming.effect_sentence(e)
        if before != after:
            assert (
                f"Its mean nDCG@{K} {'rises' if after > before else 'falls'} from {before:.4f} to {after:.4f}" in said
            )
        ranks = {q: r["first_relevant_rank"] or 0 for q, r in stemmed["per_query"]["BM25"].items()}
        ranks0 = {q: r["first_relevant_rank"] or 0 for q, r in plain_run["per_query"]["BM25"].items()}
        for c in e.changes:
            line = stemming.describe(e, c)
            m = re.search(
                r"with the Snowball English stemmer BM25 (rank (\d+)|not found), without a stemmer (rank (\d+)|not found)$",
                line,
            )
            assert m, line
            assert int(m.group(2) or 0) == ranks[c.change.qid] and int(m.group(4) or 0) == ranks0[c.change.qid], line


def _effect(before: float, after: float, fails_without: int = 30, fails_with: int = 26) -> stemming.StemmerEffect:
    return stemming.StemmerEffect(
        Analysis(), Analysis("snowball"), 5, fails_without, fails_with, (), (), (), "ndcg@5", before, after
    )


def test_the_mean_is_said_against_the_failures_when_they_point_the_other_way():
    falls = stemming.effect_sentence(_effect(0.3508, 0.3473))
    assert (
        "falls from 0.3508 to 0.3473 (-0.0035): it misses fewer questions at the cutoff, yet the mean is lower" in falls
    )
    rises = stemming.effect_sentence(_effect(0.30, 0.31, 20, 22))
    assert (
        "rises from 0.3000 to 0.3100 (+0.0100): it misses more questions at the cutoff, yet the mean is higher" in rises
    )
    assert "stays at 0.3000." in stemming.effect_sentence(_effect(0.30, 0.30))
    plain = stemming.effect_sentence(_effect(0.30, 0.32))
    assert plain.endswith("rises from 0.3000 to 0.3200 (+0.0200).")


@pytest.mark.parametrize("stems", [False, True])
def test_the_tour_never_points_to_the_lower_mean(stems):
    lower = tour.stemmer_advice(_effect(0.3508, 0.3473), stems)
    higher = tour.stemmer_advice(_effect(0.3473, 0.3508), stems)
    assert "higher without it" in lower and "raises" not in lower
    assert ("no stemmer is the better setting" in lower) != stems and ("turns it off" in lower) == stems
    assert "raises the mean" in higher and "without it" not in higher


# ------------------------------------------------------------------------------------------ unjudged top k


def test_much_unjudged_is_more_than_one_result_in_five():
    at, above = Unjudged("at", 10, 50, 10), Unjudged("above", 10, 50, 11)
    c = coverage.Coverage(5, (at, above, Unjudged("empty", 10, 0, 0)), False)
    assert [u.system for u in c.much_unjudged] == ["above"]
    said = coverage.coverage_sentence(c)
    assert said.startswith("22% of above's top 5 is unjudged") and "relevant documents only" in said
    graded = coverage.coverage_sentence(coverage.Coverage(5, (above,), True))
    assert "relevant documents only" not in graded and "reorder two systems" in graded
    assert coverage.coverage_sentence(coverage.Coverage(5, (at,), False)) is None
    assert [coverage.percent(x) for x in (0.004, 0.667, 0.996, 1.0, 0.0)] == ["<1%", "67%", ">99%", "100%", "0%"]
    assert overview.JUDGED_FLOOR == 1 - coverage.UNJUDGED_LIMIT  # one rule, read on judged@k or on the share


def test_the_unjudged_shares_are_counted_result_by_result(invented, collection):
    for name, ds in _both(invented, collection):
        ranks = evaluate(ds, Params(), [f"ndcg@{K}"]).rankings
        c = coverage.coverage(ds, ranks, K)
        judged = {(q, d) for q, d, _ in ds.judgements()}
        for u in c.systems:
            listed = [(ds.query_ids[q], d) for q in ds.evaluated for d in ranks[u.system].top_ids(ds, q, K)]
            assert (u.results, u.unjudged) == (len(listed), sum(x not in judged for x in listed)), (name, u.system)
        assert not c.names_non_relevant and c.much_unjudged  # relevant documents only, and most of each top 5 unjudged


@pytest.mark.app
def test_the_overview_says_how_much_of_each_top_k_is_unjudged_on_relevant_only_judgements(invented, collection):
    for name, ds in _both(invented, collection):
        before = (
            None if name == "invented" else (lambda a, ds=ds: (a.session_state.__setitem__("dataset", ds), a.run()))
        )
        at = open_app("pages/overview.py", before=before)
        assert not at.exception, [e.value for e in at.exception]
        c = coverage.coverage(ds, evaluate(ds, Params(), [f"ndcg@{K}"]).rankings, K)  # the systems but dense
        said = next(
            shown(i.value) for i in at.info if f"of BM25's top {K}" in shown(i.value)
        )  # an information: expected here
        for u in c.systems:  # each share as counted by the library, which the Data page shows too
            assert f"{coverage.percent(u.share)} of {u.system}'s top {K}" in said, (name, u.system, said)
        assert said.endswith(coverage.coverage_sentence(c).split(" are unjudged: ", 1)[1]), said
        assert ("dense's" in said) == (name == "invented")  # the invented corpus ships its vectors


# ------------------------------------------------------------------------------------------ on any machine


def test_every_page_icon_is_a_material_symbol_and_the_favicon_an_inline_svg():
    for _, title, icon in router.PAGES:
        assert icon.startswith(":material/") and validate_material_icon(icon) == icon, title
    url = image_to_url(router.FAVICON, LayoutConfig(width="stretch"), False, "RGB", "auto", "favicon")
    assert url.startswith("data:image/svg+xml;base64,")  # drawn in place: no request, no font


def test_an_error_shows_no_links_to_other_sites_from_the_app_nor_from_the_package():
    with open(ROOT / ".streamlit" / "config.toml", "rb") as f:
        value = tomllib.load(f)["client"]["showErrorLinks"]
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert ".streamlit/config.toml" in pyproject["tool"]["setuptools"]["package-data"]["retrieval._app"]
    old = config.get_option("client.showErrorLinks")
    try:
        config.set_option("client.showErrorLinks", value)
        assert _get_show_error_links() == Config.ShowErrorLinks.SHOW_ERROR_LINKS_FALSE
    finally:
        config.set_option("client.showErrorLinks", old)


def test_the_relevant_documents_histogram_is_binned_on_a_quantitative_axis():
    hist = {"relevant documents": [1, 13, 29, 44, 56, 89, 155], "questions": [40, 10, 8, 6, 5, 3, 1]}
    spec = charts.relevant_histogram(pd.DataFrame(hist)).to_dict()
    x = spec["encoding"]["x"]
    assert x["type"] == "quantitative" and x["bin"]["step"] == 6 and x["bin"]["extent"] == [1, 157]
    assert spec["encoding"]["y"]["aggregate"] == "sum"
    small = charts.relevant_histogram(pd.DataFrame({"relevant documents": [1, 2, 3], "questions": [4, 7, 3]})).to_dict()
    assert small["encoding"]["x"]["bin"]["step"] == 1 and small["encoding"]["x"]["bin"]["extent"] == [
        1,
        4,
    ]  # 1 and 2 apart


def test_the_fusion_chart_writes_each_note_under_its_label_never_past_the_bar():
    df = pd.DataFrame(
        {
            "row": ["#1 · d1", "#1 · d1", "#2 · d2", "#2 · d2"],
            "retriever": ["BM25", "LSA"] * 2,
            "contribution": [0.5, 0.4, 0.0, 0.3],
            "total": [0.9, 0.9, 0.3, 0.3],
            "note": ["in both top 10s"] * 2 + ["in neither top 10: the sum put it here"] * 2,
            "doc_id": ["d1", "d1", "d2", "d2"],
            "grade": [1, 1, 0, 0],
            "fused_rank": ["1", "1", "2", "2"],
            "rank": ["1", "2", "—", "3"],
        }
    )
    spec = charts.fusion_contributions(df, "score", ("BM25", "LSA")).to_dict()
    assert "layer" not in spec and spec["mark"]["type"] == "bar"  # no text after the bar to be cut at the edge
    y = spec["encoding"]["y"]
    assert y["sort"] == ["#1 · d1\nin both top 10s", "#2 · d2\nin neither top 10: the sum put it here"]
    assert "split(datum.label" in y["axis"]["labelExpr"]
    assert np.isclose(spec["height"], 40 * 2 + 50)
