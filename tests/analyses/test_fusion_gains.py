"""retrieval/analyses/fusion_gains.py (what a fusion gains over its members; where two systems part) and `python -m
retrieval fusion`, without Streamlit: the numbers against a plain count written out here, on a generated collection
and on the invented corpus; each sentence from its numbers, plain (the app's escapes and bold: tests/ui/test_ui_tour.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_perf_equivalence import random_dataset

from retrieval import cli
from retrieval.analyses import fusion_gains as fg
from retrieval.core.params import Params
from retrieval.engine.engine import Engine

BIG = 10**9


def _plain_picks(f, members):
    """(questions where the members differ, fusion = better, fusion better than both, fusion behind the better)."""
    differ = [i for i in range(len(f)) if len({m[i] or BIG for m in members}) > 1]
    better = {i: min(m[i] or BIG for m in members) for i in differ}
    return (
        len(differ),
        sum((f[i] or BIG) == better[i] for i in differ),
        sum((f[i] or BIG) < better[i] for i in differ),
        sum((f[i] or BIG) > better[i] for i in differ),
    )


@pytest.fixture(scope="module")
def generated():
    ds = random_dataset(7, n_docs=60, n_q=12)
    ev = Engine(ds).evaluate(Params(), ["ndcg@5", "recall@10"])
    return ds, ev, [ds.query_ids[q] for q in ds.evaluated]


@pytest.mark.parametrize("metric", ["ndcg@5", "recall@10"])
def test_each_fusion_is_explained_from_its_members_numbers(generated, metric):
    ds, ev, qids = generated
    members = ["BM25", "LSA"]
    for f in ("weighted", "RRF"):
        said = fg.explain_fusion(ev, f, metric, metric, members, qids)
        values, firsts = ev.values[f][metric], ev.first_rank[f]
        assert said.standing.value == ev.mean(f, metric)
        assert dict(said.standing.members) == {m: ev.mean(m, metric) for m in members}
        p = said.picks
        assert (p.differ, p.matches, p.beats, p.behind) == _plain_picks(
            list(firsts), [list(ev.first_rank[m]) for m in members]
        )
        above = [i for i in range(len(qids)) if values[i] > max(ev.values[m][metric][i] for m in members) + 1e-12]
        assert list(said.gains.above) == above
        later = [i for i in above if (firsts[i] or BIG) >= min(ev.first_rank[m][i] or BIG for m in members)]
        assert list(said.gains.later) == later
        j = said.to_json()
        assert j["above_every_member"] == [qids[i] for i in above] and j["sentence"] == said.sentence
        assert said.sentence.startswith(f"{f} scores {ev.mean(f, metric):.3f} on mean {metric}, {said.standing.where}")


def test_where_a_fusion_stands_is_said_from_the_means():
    two = (("BM25", 0.691171), ("LSA", 0.679138))
    assert fg.Standing("RRF", 0.737, two, "nDCG@5").sentence == (
        "RRF scores 0.737 on mean nDCG@5, above both its members (BM25 0.691 and LSA 0.679)."
    )
    assert fg.Standing("RRF", 0.691171, two, "x").where == "level with its better member"
    assert fg.Standing("RRF", 0.68, two, "x").where == "between its members"
    assert fg.Standing("RRF", 0.1, (*two, ("dense", 0.5)), "x").where == "below every member"
    assert fg.Standing("RRF", 0.7, (("BM25", 0.7),), "x").where == "level with its only member"
    stressed = fg.Standing("R*F", 0.7, two, "x").text(name=lambda s: s.replace("*", "\\*"), stress=lambda s: f"<{s}>")
    assert stressed.startswith("<R\\*F> scores 0.700")


def test_the_split_of_two_systems_and_its_sentence():
    qids = ["q1", "q2", "q3", "q4"]
    a, b = np.array([1, 3, 0, 0]), np.array([2, 1, 0, 9])
    s = fg.split("A", "B", a, b, qids, 1)
    assert (s.only_a, s.only_b, s.neither, s.parts_at) == (("q1",), ("q2",), ("q3", "q4"), 1)
    assert s.sentence == (
        "At k = 1, A alone finds 1 question in its top 1 (q1) and B alone 1 (q2): they fail on different questions, "
        "which is what a fusion can use. Neither finds q3, q4 in its top 1."
    )
    same = fg.split("A", "B", np.array([3, 0]), np.array([5, 0]), ["x", "y"], 10)
    assert (
        same.parts_at == 3 and "They part lower down: at k = 3 one finds a question the other misses." in same.sentence
    )
    never = fg.split("A", "B", np.array([1, 0]), np.array([1, 0]), ["x", "y"], 5)
    assert never.parts_at is None and "find the same questions at every cutoff from 1 to 20" in never.sentence
    many = fg.id_list([f"q{i}" for i in range(9)])
    assert many == "q0, q1, q2, q3, q4, q5 and 3 more"


def test_the_gains_sentence_is_plain_by_default():
    g = fg.Gains("RRF", (0, 1), (1,))
    said = fg.gains_text(g, ["a", "b"], "MRR", 2)
    assert "the gain comes from the later relevant documents: past the first" in said and "**" not in said
    assert said.endswith("On 1 (a) it puts the first relevant document higher.")


def test_the_fusion_command_prints_the_findings(invented, capsys):
    assert cli.main(["fusion", "--json", "--k", "1"]) == 0
    report = json.loads(capsys.readouterr().out)
    ev = Engine(invented).evaluate(Params(), ["ndcg@5"])
    qids = [invented.query_ids[q] for q in invented.evaluated]
    assert report["metric"] == "ndcg@5" and report["members"] == ["BM25", "LSA"]
    for got in report["fusions"]:
        want = fg.explain_fusion(ev, got["fusion"], "ndcg@5", "ndcg@5", ["BM25", "LSA"], qids)
        assert got == json.loads(json.dumps(want.to_json()))
        assert "q03" in got["gain_from_later_documents"]  # the Tour's worked example (tests/ui/test_ui_tour.py)
    split = report["split"]
    assert split["parts_at"] == fg.split_k(ev.first_rank["BM25"], ev.first_rank["LSA"])
    assert cli.main(["fusion", "--k", "5"]) == 0
    text = capsys.readouterr().out
    assert "where BM25 and LSA fail: At k = 5 they fail on the same questions" in text
    assert cli.main(["fusion", "--metric", "nope@3"]) == 2
