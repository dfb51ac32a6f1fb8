"""ui/judge.py: the Judge page's builders, checked against the definitions written out here (the judging pool
itself: tests/analyses/test_holes.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest
from test_perf_equivalence import random_dataset

from retrieval.core.params import Params
from retrieval.corpus.dataset import assemble, parse_qrels
from retrieval.engine.engine import Engine
from retrieval.evaluation import metrics
from retrieval.evaluation.experiment import score
from retrieval.store.workspace import Grade
from ui import judge as ui


@pytest.fixture(scope="module")
def case():
    ds = random_dataset(4, n_docs=40, n_q=8)
    ranks = Engine(ds).rankings(Params())
    return ds, ranks


def test_pages_of_documents():
    items = list(range(23))
    assert ui.page_of(items, 1, 10) == (1, list(range(10)))
    assert ui.page_of(items, 3, 10) == (3, [20, 21, 22])
    assert ui.page_of(items, 9, 10) == (3, [20, 21, 22])  # beyond the last: the last
    assert ui.page_of([], 1, 10) == (1, [])


def test_each_rater_s_grades_and_the_others_and_their_qrels():
    t = datetime(2026, 12, 4, tzinfo=UTC)
    grades = (
        Grade("q1", "d1", "ana", 2, t),
        Grade("q1", "d1", "ben", 0, t),
        Grade("q1", "d2", "ben", 1, t),
        Grade("q2", "d1", "cy", 1, t),
    )
    assert ui.mine(grades, "ben") == {("q1", "d1"): 0, ("q1", "d2"): 1}
    assert ui.others(grades, "ben") == {("q1", "d1"): {"ana": 2}, ("q2", "d1"): {"cy": 1}}
    assert parse_qrels(ui.rater_qrels(grades, "ben").encode(), "ben") == [("q1", "d1", 0), ("q1", "d2", 1)]
    frame = ui.agreement_frame(grades)
    assert list(frame["raters"]) == ["ana and ben", "ana and cy", "ben and cy"]
    assert list(frame["pairs both graded"]) == [1, 0, 0] and set(frame["Cohen's kappa"]) == {"undefined"}
    rows = ui.disagreement_frame(grades)
    assert rows.to_dict("records") == [{"question": "q1", "document": "d1", "spread": 2, "grades": "ana 2; ben 0"}]


def test_before_and_after_is_each_system_s_mean_with_and_without_the_new_grades(case):
    ds, ranks = case
    pool = ui.find_pool(ds, ranks, 5)
    pairs = list(dict.fromkeys((q, d) for q, d, _, _ in pool.entries()))
    new = [(ds.query_ids[q], ds.doc_ids[d], 2) for q, d in pairs[:5]]
    amended = ds.with_judgements(new)
    m = metrics.parse_list(["recall@5"])
    before = score(ds, ranks, m)
    after = score(amended, Engine(amended).rankings(Params()), m)
    table = ui.before_after(before, after, "recall@5").set_index("system")
    for s in ranks:
        # recall@5 per question: relevant documents in the top 5 over the relevant documents, plainly
        def recall(data, qid):
            rel = {d for q, d, g in data.judgements() if q == qid and g > 0}
            top = set(ranks[s].top_ids(ds, data.query_index[qid], 5))
            return len(rel & top) / len(rel)

        def mean(data):
            qs = [qid for qid in data.query_ids if any(q == qid and g > 0 for q, _, g in data.judgements())]
            return float(np.mean([recall(data, qid) for qid in qs]))

        assert table.loc[s, "before"] == pytest.approx(mean(ds), abs=1e-12)
        assert table.loc[s, "after"] == pytest.approx(mean(amended), abs=1e-12)
    assert any(table["before"] != table["after"])


def test_the_downloads_read_back_with_the_project_s_qrels_parser():
    ds = assemble("my data/set: *x*", [("d1", "a"), ("d2", "b")], [("q1", "a"), ("q2", "b")], [("q1", "d1", 1)])
    grades = {("q2", "d2"): 2, ("q1", "d2"): 0}
    amended = ds.with_judgements((q, d, g) for (q, d), g in grades.items())
    assert parse_qrels(ui.all_qrels(amended).encode(), "all.txt") == [("q1", "d1", 1), ("q1", "d2", 0), ("q2", "d2", 2)]
    assert parse_qrels(ui.new_qrels(grades).encode(), "new.txt") == [("q1", "d2", 0), ("q2", "d2", 2)]
    assert ui.file_names(ds.name) == (
        "my_data_set_x__qrels.txt",
        "my_data_set_x__new_qrels.txt",
    )  # [^A-Za-z0-9._-]+ as _
    assert ui.file_names("../../etc/passwd")[0] == ".._.._etc_passwd_qrels.txt"  # no folder in a name
    assert ui.graded_pairs(ds, grades) == {(1, 1), (0, 1)}
