"""Several raters' grades: the combining rules, Cohen's kappa and Krippendorff's alpha, checked against textbook
examples and independent implementations (scikit-learn's kappa; Krippendorff's published worked example)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from retrieval.core.errors import InputError
from retrieval.evaluation.agreement import RULES, agreement, combine, disagreements


def _rows(table: dict[tuple[str, str], dict[str, int]]):
    return [(q, d, r, g) for (q, d), rs in table.items() for r, g in rs.items()]


def test_the_rules_combine_each_pair_s_grades_as_stated():
    table = {("q", "a"): {"r1": 0, "r2": 1}, ("q", "b"): {"r1": 2, "r2": 1, "r3": 1}, ("q", "c"): {"r1": 0, "r2": 2, "r3": 2},
             ("q", "d"): {"r1": 1}, ("q", "e"): {"r1": 0, "r2": 2}}
    rows = _rows(table)
    assert combine(rows, "mean") == {("q", "a"): 1, ("q", "b"): 1, ("q", "c"): 1, ("q", "d"): 1, ("q", "e"): 1}  # .5 up
    assert combine(rows, "median") == {("q", "a"): 1, ("q", "b"): 1, ("q", "c"): 2, ("q", "d"): 1, ("q", "e"): 1}
    assert combine(rows, "majority") == {("q", "a"): 0, ("q", "b"): 1, ("q", "c"): 2, ("q", "d"): 1, ("q", "e"): 0}
    assert combine(rows, "original") == {}
    for rule in RULES:  # what each rule gives, computed the plain way
        for pair, rs in table.items():
            gs = sorted(rs.values())
            want = {"mean": math.floor(sum(gs) / len(gs) + 0.5), "median": math.floor(float(np.median(gs)) + 0.5),
                    "majority": min(g for g in gs if gs.count(g) == max(map(gs.count, gs))), "original": None}[rule]
            assert combine(rows, rule).get(pair) == want
    with pytest.raises(InputError, match="grades rule 'avg'"):
        combine(rows, "avg")


def test_cohen_s_kappa_is_the_textbook_value_and_scikit_learn_s():
    """The textbook case (50 items; both yes 20, both no 15, A yes B no 5, A no B yes 10): p_o = 0.7, p_e = 0.5,
    kappa = 0.4."""
    pairs = [(1, 1)] * 20 + [(0, 0)] * 15 + [(1, 0)] * 5 + [(0, 1)] * 10
    rows = [(f"q{i}", "d", "A", a) for i, (a, _) in enumerate(pairs)] + [(f"q{i}", "d", "B", b) for i, (_, b) in enumerate(pairs)]
    a = agreement(rows)
    assert a.raters == ("A", "B") and a.shared == {("A", "B"): 50}
    assert a.cohen[("A", "B")] == pytest.approx(0.4, abs=1e-12)
    rng = np.random.default_rng(3)
    x = rng.integers(0, 3, 80)
    y = np.where(rng.random(80) < 0.6, x, rng.integers(0, 3, 80))
    rows = [(f"q{i}", "d", "A", int(v)) for i, v in enumerate(x)] + [(f"q{i}", "d", "B", int(v)) for i, v in enumerate(y)]
    assert agreement(rows).cohen[("A", "B")] == pytest.approx(cohen_kappa_score(x, y), abs=1e-12)


def test_krippendorff_s_alpha_is_his_published_worked_example():
    """Krippendorff (2011), Computing Krippendorff's Alpha-Reliability, the example with missing data: 4 observers,
    12 units; ordinal alpha = 0.815 (nominal 0.743, interval 0.849 in the paper)."""
    nan = None
    data = [[1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
            [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
            [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
            [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan]]
    rows = [(f"u{j}", "d", f"obs{i}", v) for i, row in enumerate(data) for j, v in enumerate(row) if v is not None]
    assert round(agreement(rows).alpha, 3) == 0.815


def test_agreement_is_undefined_where_it_cannot_mean_anything():
    one = agreement([("q1", "d", "A", 1), ("q1", "d", "B", 1), ("q2", "d", "A", 1), ("q2", "d", "B", 1)])
    assert one.cohen == {("A", "B"): None} and one.alpha is None  # one grade throughout
    assert agreement([("q1", "d", "A", 1)]).raters == ("A",) and agreement([]).alpha is None
    both_once = agreement([("q1", "d", "A", 1), ("q1", "d", "B", 0)])
    assert both_once.cohen == {("A", "B"): None} and both_once.pairs_graded_twice == 1


def test_the_largest_disagreements_come_first():
    rows = _rows({("q1", "a"): {"r1": 0, "r2": 2}, ("q1", "b"): {"r1": 1, "r2": 2, "r3": 2}, ("q2", "a"): {"r1": 1, "r2": 2},
                  ("q2", "b"): {"r1": 2, "r2": 2}})
    assert [(d.query_id, d.doc_id, d.spread) for d in disagreements(rows)] == [("q1", "a", 2), ("q1", "b", 1), ("q2", "a", 1)]
    assert len(disagreements(rows, limit=1)) == 1
