"""Several raters' grades: the combining rules, Cohen's kappa and Krippendorff's alpha, checked against textbook
examples and independent implementations (scikit-learn's kappa; Krippendorff's published worked example)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from retrieval.core.errors import InputError
from retrieval.evaluation.agreement import (
    RULES,
    WEIGHTS,
    agreement,
    combine,
    disagreements,
    explain,
    kappa,
)


def _rows(table: dict[tuple[str, str], dict[str, int]]):
    return [(q, d, r, g) for (q, d), rs in table.items() for r, g in rs.items()]


def test_the_rules_combine_each_pair_s_grades_as_stated():
    table = {
        ("q", "a"): {"r1": 0, "r2": 1},
        ("q", "b"): {"r1": 2, "r2": 1, "r3": 1},
        ("q", "c"): {"r1": 0, "r2": 2, "r3": 2},
        ("q", "d"): {"r1": 1},
        ("q", "e"): {"r1": 0, "r2": 2},
    }
    rows = _rows(table)
    assert combine(rows, "mean") == {("q", "a"): 1, ("q", "b"): 1, ("q", "c"): 1, ("q", "d"): 1, ("q", "e"): 1}  # .5 up
    assert combine(rows, "median") == {("q", "a"): 1, ("q", "b"): 1, ("q", "c"): 2, ("q", "d"): 1, ("q", "e"): 1}
    assert combine(rows, "majority") == {("q", "a"): 0, ("q", "b"): 1, ("q", "c"): 2, ("q", "d"): 1, ("q", "e"): 0}
    assert combine(rows, "original") == {}
    for rule in RULES:  # what each rule gives, computed the plain way
        for pair, rs in table.items():
            gs = sorted(rs.values())
            want = {
                "mean": math.floor(sum(gs) / len(gs) + 0.5),
                "median": math.floor(float(np.median(gs)) + 0.5),
                "majority": min(g for g in gs if gs.count(g) == max(map(gs.count, gs))),
                "original": None,
            }[rule]
            assert combine(rows, rule).get(pair) == want
    with pytest.raises(InputError, match="grades rule 'avg'"):
        combine(rows, "avg")


def test_cohen_s_kappa_is_the_textbook_value_and_scikit_learn_s():
    """The textbook case (50 items; both yes 20, both no 15, A yes B no 5, A no B yes 10): p_o = 0.7, p_e = 0.5,
    kappa = 0.4."""
    pairs = [(1, 1)] * 20 + [(0, 0)] * 15 + [(1, 0)] * 5 + [(0, 1)] * 10
    rows = [(f"q{i}", "d", "A", a) for i, (a, _) in enumerate(pairs)] + [
        (f"q{i}", "d", "B", b) for i, (_, b) in enumerate(pairs)
    ]
    a = agreement(rows)
    assert a.raters == ("A", "B") and a.shared == {("A", "B"): 50}
    assert a.cohen[("A", "B")] == pytest.approx(0.4, abs=1e-12)
    rng = np.random.default_rng(3)
    x = rng.integers(0, 3, 80)
    y = np.where(rng.random(80) < 0.6, x, rng.integers(0, 3, 80))
    rows = [(f"q{i}", "d", "A", int(v)) for i, v in enumerate(x)] + [
        (f"q{i}", "d", "B", int(v)) for i, v in enumerate(y)
    ]
    assert agreement(rows).cohen[("A", "B")] == pytest.approx(cohen_kappa_score(x, y), abs=1e-12)


def test_krippendorff_s_alpha_is_his_published_worked_example():
    """Krippendorff (2011), Computing Krippendorff's Alpha-Reliability, the example with missing data: 4 observers,
    12 units; ordinal alpha = 0.815 (nominal 0.743, interval 0.849 in the paper)."""
    nan = None
    data = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
        [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
    ]
    rows = [(f"u{j}", "d", f"obs{i}", v) for i, row in enumerate(data) for j, v in enumerate(row) if v is not None]
    assert round(agreement(rows).alpha, 3) == 0.815


def test_agreement_is_undefined_where_it_cannot_mean_anything():
    one = agreement([("q1", "d", "A", 1), ("q1", "d", "B", 1), ("q2", "d", "A", 1), ("q2", "d", "B", 1)])
    assert one.cohen == {("A", "B"): None} and one.alpha is None  # one grade throughout
    assert agreement([("q1", "d", "A", 1)]).raters == ("A",) and agreement([]).alpha is None
    both_once = agreement([("q1", "d", "A", 1), ("q1", "d", "B", 0)])
    assert both_once.cohen == {("A", "B"): None} and both_once.pairs_graded_twice == 1


def test_the_largest_disagreements_come_first():
    rows = _rows(
        {
            ("q1", "a"): {"r1": 0, "r2": 2},
            ("q1", "b"): {"r1": 1, "r2": 2, "r3": 2},
            ("q2", "a"): {"r1": 1, "r2": 2},
            ("q2", "b"): {"r1": 2, "r2": 2},
        }
    )
    assert [(d.query_id, d.doc_id, d.spread) for d in disagreements(rows)] == [
        ("q1", "a", 2),
        ("q1", "b", 1),
        ("q2", "a", 1),
    ]
    assert len(disagreements(rows, limit=1)) == 1


@pytest.mark.parametrize("seed", range(6))
def test_weighted_kappa_is_scikit_learn_s_for_graded_relevance(seed):
    """Plain, linear and quadratic kappa against scikit-learn's cohen_kappa_score(weights=...) on random grades
    0 to 2 (one grade missing from a rater now and then), each pair of raters through `agreement`."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 60))
    x = rng.integers(0, 3, n)
    y = np.clip(x + rng.integers(-1, 2, n) * (rng.random(n) < 0.5), 0, 2)
    if seed == 0:
        x, y = np.where(x == 1, 2, x), np.where(y == 1, 2, y)  # no grade 1: the weights still read the grades' distance
    a = agreement(
        [(f"q{i}", "d", "A", int(v)) for i, v in enumerate(x)] + [(f"q{i}", "d", "B", int(v)) for i, v in enumerate(y)]
    )
    labels = [0, 1, 2]
    for name, got in (("plain", a.cohen), ("linear", a.linear), ("quadratic", a.quadratic)):
        want = cohen_kappa_score(x, y, labels=labels, weights=None if name == "plain" else name)
        assert got[("A", "B")] == pytest.approx(want, abs=1e-12), name
        assert kappa(x.tolist(), y.tolist(), name) == pytest.approx(want, abs=1e-12)
    assert set(WEIGHTS) == {"plain", "linear", "quadratic"}
    with pytest.raises(InputError, match="kappa weights 'cubic'"):
        kappa([0, 1], [1, 0], "cubic")


def test_weighted_kappa_is_undefined_where_plain_kappa_is():
    one = agreement([("q1", "d", "A", 1), ("q1", "d", "B", 1), ("q2", "d", "A", 1), ("q2", "d", "B", 1)])
    assert one.linear == one.quadratic == {("A", "B"): None}


def _grades(a: list[int], b: list[int]):
    return [(f"q{i}", "d", "ana", g) for i, g in enumerate(a)] + [(f"q{i}", "d", "ben", g) for i, g in enumerate(b)]


def test_each_measure_is_said_in_one_sentence_from_its_numbers():
    """The issue: kappa −0.250 beside ordinal alpha 0.375, no word on why. Here ana and ben never give the same grade
    to a document that chance would match (plain kappa below 0) while their differences are one grade apart (the
    weighted kappas and alpha above it): each sentence carries the numbers it rests on, computed here independently."""
    ana, ben = [1, 2, 1, 0, 1, 0], [2, 2, 2, 1, 2, 1]
    a = agreement(_grades(ana, ben))
    plain = cohen_kappa_score(ana, ben)
    linear, quadratic = (cohen_kappa_score(ana, ben, weights=w) for w in ("linear", "quadratic"))
    assert plain < 0 < linear < quadratic and a.alpha > plain
    same = sum(x == y for x, y in zip(ana, ben))
    chance = sum(ana.count(g) * ben.count(g) for g in (0, 1, 2)) / len(ana)
    said = {e.measure: e.sentence for e in explain(a)}
    assert list(said) == ["Cohen's kappa", "weighted kappa", "Krippendorff's alpha"]
    assert said["Cohen's kappa"] == (
        f"Cohen's kappa counts only identical grades, beyond what chance gives: ana and ben gave the same grade to "
        f"{same} of 6 documents, where their own mix of grades would match on {chance:.1f} by chance, so their kappa "
        f"is {plain:.3f} (less often than chance)."
    )
    assert said["weighted kappa"].endswith(
        f"{linear:.3f} and {quadratic:.3f} for ana and ben, above their plain kappa; "
        "5 of their 5 different grades are one apart and 0 further."
    )
    assert said["Krippendorff's alpha"].endswith(
        f"all 2 raters at once over the 6 documents graded twice or more, chance "
        f"from everyone's grades pooled: {a.alpha:.3f}, above ana and ben's "
        "plain kappa."
    )


def test_the_sentences_follow_the_numbers_the_other_way():
    """Far disagreements (0 against 2) pull the weighted kappas below the plain one; the words follow."""
    ana, ben = [0, 2, 1, 1, 0, 2, 2], [2, 0, 1, 1, 0, 2, 2]
    a = agreement(_grades(ana, ben))
    assert a.linear[("ana", "ben")] < a.cohen[("ana", "ben")]
    said = {e.measure: e.sentence for e in explain(a)}
    assert (
        "below their plain kappa; 0 of their 2 different grades are one apart and 2 further." in said["weighted kappa"]
    )
    assert "(more often than chance)" in said["Cohen's kappa"]
    undefined = {e.measure: e.sentence for e in explain(agreement(_grades([1, 1], [1, 1])))}
    assert "undefined here: no two raters share two documents with more than one grade" in undefined["Cohen's kappa"]
    assert (
        "Krippendorff's ordinal alpha, one figure for every rater at once, is undefined here: 2 documents graded "
        "twice or more" in undefined["Krippendorff's alpha"]
    )
    assert explain(agreement([("q", "d", "ana", 1)])) == ()
