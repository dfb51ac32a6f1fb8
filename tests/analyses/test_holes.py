"""retrieval/analyses/holes.py, the judging pool (unjudged documents in some system's top k), and `python -m retrieval
holes`: checked against the definition written out here from the ids, on a generated collection and the invented
corpus, without Streamlit."""

from __future__ import annotations

import json

import pytest
from test_perf_equivalence import random_dataset

from retrieval import cli
from retrieval.analyses import holes
from retrieval.core.params import Params
from retrieval.engine.engine import Engine, evaluate


@pytest.fixture(scope="module")
def case():
    ds = random_dataset(4, n_docs=40, n_q=8)
    ranks = Engine(ds).rankings(Params())
    return ds, ranks


def _expected_holes(ds, ranks, k):
    """(question id, document id) -> {system: rank}: the documents of the corpus in a top k that no judgement
    of the question names, from the ids, plainly."""
    judged = {(q, d) for q, d, _ in ds.judgements()}
    out: dict = {}
    for name, r in ranks.items():
        for q, qid in enumerate(ds.query_ids):
            for rank, did in enumerate(r.top_ids(ds, q, k), 1):
                if did in ds.doc_index and (qid, did) not in judged:
                    out.setdefault((qid, did), {})[name] = rank
    return out


@pytest.mark.parametrize("k", [1, 5, 10])
def test_the_holes_are_the_unjudged_documents_of_every_top_k(case, k):
    ds, ranks = case
    pool = holes.judging_pool(ds, ranks, k)
    found: dict = {}
    for q, d, s, r in pool.entries():
        found.setdefault((ds.query_ids[q], ds.doc_ids[d]), {})[s] = r
    expected = _expected_holes(ds, ranks, k)
    assert found == expected and expected  # there are holes to find
    assert pool.pairs == len(expected) and pool.k == k
    assert pool.questions == len({qid for qid, _ in expected})
    for share in pool.per_system():
        n = sum(share.system in systems for systems in expected.values())
        assert share.unjudged == n == share.still_unjudged


def test_graded_holes_are_counted_as_judged_in_the_summary(case):
    ds, ranks = case
    pool = holes.judging_pool(ds, ranks, 5)
    q, d, _, _ = pool.entries()[0]
    ranked_it = {s for q_, d_, s, _ in pool.entries() if (q_, d_) == (q, d)}
    shares = {x.system: x for x in pool.per_system({(q, d)})}
    assert {s: x.unjudged - x.still_unjudged for s, x in shares.items()} == {s: int(s in ranked_it) for s in ranks}
    graded = next(x for x in shares.values() if x.system in ranked_it)
    assert graded.sentence == (
        f"{graded.system}: {graded.unjudged:,} unjudged documents in its top 5, 1 of them graded since."
        if graded.unjudged != 1
        else f"{graded.system}: 1 unjudged document in its top 5, 1 of them graded since."
    )


def test_questions_go_by_number_of_holes_then_question_order(case):
    ds, ranks = case
    pool = holes.judging_pool(ds, ranks, 5)
    expected = _expected_holes(ds, ranks, 5)
    n = {q: sum(qid == ds.query_ids[q] for qid, _ in expected) for q in range(ds.n_queries)}
    order = pool.question_order()
    assert order == sorted((q for q in n if n[q]), key=lambda q: (-n[q], q))
    assert pool.counts() == {q: c for q, c in n.items() if c}


def test_a_question_s_holes_most_systems_first_then_best_rank_then_id(case):
    ds, ranks = case
    pool = holes.judging_pool(ds, ranks, 5)
    q = pool.question_order()[0]
    listed = pool.holes_of(ds, q)
    expected = {d: s for (qid, d), s in _expected_holes(ds, ranks, 5).items() if qid == ds.query_ids[q]}
    assert {ds.doc_ids[h.doc]: dict(h.ranked_by) for h in listed} == expected
    keys = [(-len(h.ranked_by), h.best, ds.doc_ids[h.doc]) for h in listed]
    assert keys == sorted(keys)
    h = listed[0]
    assert [r for _, r in h.ranked_by] == sorted(r for _, r in h.ranked_by)
    assert holes.ranked_by_text(holes.Hole(3, (("BM25", 1), ("dense", 4)))) == "BM25 #1 · dense #4"


def test_a_document_judged_not_relevant_is_no_hole_and_a_full_pool_says_so(invented):
    ranks = Engine(invented).rankings(Params())
    pool = holes.judging_pool(invented, ranks, 5)
    graded_zero = {(q, d) for q, d, g in invented.judgements() if g <= 0}
    assert not {(invented.query_ids[q], invented.doc_ids[d]) for q, d, _, _ in pool.entries()} & graded_zero
    expected = _expected_holes(invented, ranks, 5)
    assert pool.sentence == (
        f"{len(expected)} unjudged documents in some system's top 5, over "
        f"{len({q for q, _ in expected})} of {invented.n_queries} questions."
    )
    filled = invented.with_judgements([(q, d, 0) for q, d in expected])  # every hole graded not relevant
    full = holes.judging_pool(filled, ranks, 5)
    assert full.pairs == 0 and full.question_order() == [] and full.entries() == []
    assert full.sentence.startswith("Every document in every system's top 5 is judged: nothing to grade")
    assert holes.most_unjudged_sentence(full.per_system()) == ""


def test_the_system_with_the_most_holes_is_named_from_the_counts():
    one = (holes.SystemHoles("BM25", 5, 12, 12), holes.SystemHoles("LSA", 5, 49, 40))
    assert holes.most_unjudged_sentence(one).startswith("LSA has the most unjudged documents in its top 5 (40, ")
    tie = (*one, holes.SystemHoles("RRF", 5, 41, 40))
    assert holes.most_unjudged_sentence(tie).startswith("LSA and RRF have the most unjudged documents in their top 5")


def test_a_cutoff_below_one_is_refused(case):
    ds, ranks = case
    with pytest.raises(ValueError, match="k must be at least 1"):
        holes.judging_pool(ds, ranks, 0)


# ------------------------------------------------------------------------------------------ the command line


def test_the_holes_command_prints_the_pool_as_json_and_text(invented, capsys):
    assert cli.main(["holes", "--json", "--k", "3"]) == 0
    report = json.loads(capsys.readouterr().out)
    ev = evaluate(invented, Params(), ["judged@3"])
    pool = holes.judging_pool(invented, ev.rankings, 3)
    expected = _expected_holes(invented, ev.rankings, 3)
    assert report["k"] == 3 and report["unjudged"] == len(expected) == pool.pairs
    assert report["sentence"] == pool.sentence
    assert [s["system"] for s in report["systems"]] == list(ev.rankings)
    for s in report["systems"]:
        assert s["unjudged"] == sum(s["system"] in by for by in expected.values())
        assert s["judged@3"] == pytest.approx(ev.mean(s["system"], "judged@3"))
    got = {
        (h["query"], d["doc"]): {x["system"]: x["rank"] for x in d["ranked_by"]}
        for h in report["holes"]
        for d in h["documents"]
    }
    assert got == expected
    assert [h["unjudged"] for h in report["holes"]] == sorted((h["unjudged"] for h in report["holes"]), reverse=True)

    assert cli.main(["holes", "--k", "3", "--questions", "2"]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[1] == pool.sentence
    assert text[2] == holes.most_unjudged_sentence(pool.per_system())
    first = report["holes"][0]
    assert f"  {first['query']} ({first['unjudged']} unjudged): " in "\n".join(text)
    assert sum(line.startswith("  q") for line in text) == 2  # --questions 2: the two with the most holes


def test_the_holes_command_refuses_bad_values_in_one_line(capsys):
    assert cli.main(["holes", "--questions", "-1"]) == 2
    assert capsys.readouterr().err.strip() == "retrieval: error: --questions must be >= 0, got -1"
    assert cli.main(["holes", "--k", "0"]) == 2
    assert "argument --k: k must be a whole number" in capsys.readouterr().err


def test_a_run_s_document_outside_the_corpus_is_no_hole_and_names_reach_the_terminal_inert(invented, tmp_path, capsys):
    judged = {(q, d) for q, d, _ in invented.judgements()}
    unjudged = next(d for d in invented.doc_ids if ("q01", d) not in judged)
    run = tmp_path / "run.trec"
    run.write_text(f"q01 Q0 nosuch 1 9.0 tag\nq01 Q0 {unjudged} 2 8.0 tag\n")
    assert cli.main(["holes", "--k", "2", "--json", "--run", f"r\x1b[31m={run}"]) == 0
    report = json.loads(capsys.readouterr().out)
    mine = {
        (h["query"], d["doc"])
        for h in report["holes"]
        for d in h["documents"]
        for x in d["ranked_by"]
        if x["system"].startswith("r")
    }
    assert mine == {("q01", unjudged)}  # "nosuch" is not in the corpus: nothing to read, no hole
    assert cli.main(["holes", "--k", "2", "--run", f"r\x1b[31m={run}"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "r\\x1b[31m #2" in out
