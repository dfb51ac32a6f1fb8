"""retrieval.evaluation.report: dataset statistics, unjudged results, the CSV and TREC writers and the JSON report."""

from __future__ import annotations

import csv
import io
import json
import math
import shlex

import numpy as np
import pytest

from retrieval import cli
from retrieval.core.params import Params
from retrieval.corpus import statistics
from retrieval.corpus.dataset import assemble, parse_run
from retrieval.engine.engine import Engine, evaluate
from retrieval.evaluation import metrics, report
from retrieval.evaluation.experiment import score
from retrieval.retrievers.ranking import from_lists, from_run


@pytest.fixture(scope="module")
def tiny():
    """Four documents, three questions (q3 without a relevant document), one judgement outside the corpus."""
    docs = [("d1", "apple pie recipe"), ("d2", "apple apple tree"), ("d3", "the of and"), ("d4", "pear tree garden")]
    queries = [("q1", "apple"), ("q2", "tree"), ("q3", "garden")]
    qrels = [("q1", "d1", 2), ("q1", "d2", 0), ("q1", "ghost", 1), ("q2", "d4", 1), ("q3", "d4", 0)]
    return assemble("tiny", docs, queries, qrels)


@pytest.fixture(scope="module")
def ev_invented(invented):
    return evaluate(invented, Params(), ["hit@3", "recall@5", "mrr", "ndcg@5"])


def test_dataset_stats_of_a_hand_checked_dataset(tiny):
    st = statistics.dataset_stats(tiny, Engine(tiny).index)
    assert (st.documents, st.questions, st.judgements, st.relevant_judgements) == (4, 3, 5, 3)
    assert (st.questions_evaluated, st.questions_without_relevant, st.judgements_outside_corpus) == (2, 1, 1)
    # tokens after stop words: [apple pie recipe] [apple apple tree] [] [pear tree garden]
    assert st.vocabulary == 6
    assert st.doc_len_mean == pytest.approx(9 / 4) and st.doc_len_median == 3 and st.doc_len_max == 3
    assert st.empty_documents == 1


def test_dataset_stats_of_the_invented_corpus(invented):
    st = statistics.dataset_stats(invented, Engine(invented).index)
    assert (st.documents, st.questions) == (28, 14)
    assert st.questions_without_relevant == 0 and st.judgements_outside_corpus == 0
    assert st.vocabulary == len(Engine(invented).index.vocabulary) > 0


def test_judgements_per_question_and_histogram(tiny):
    judged, relevant = statistics.judgements_per_question(tiny)
    assert judged.tolist() == [3, 1, 1] and relevant.tolist() == [2, 1, 0]
    assert statistics.histogram(relevant) == [(0, 1), (1, 1), (2, 1)]
    assert statistics.histogram(np.array([3, 3, 1])) == [(1, 1), (3, 2)]


def test_unjudged_share_counts_top_k_results_without_a_judgement(tiny):
    # q1 ranks d3 d2 d1 d4: d3 and d4 unjudged for q1; q2 ranks d1 d4: d1 unjudged; q3 has no relevant doc (skipped)
    r = from_lists(
        "sys",
        tiny,
        [np.array([2, 1, 0, 3]), np.array([0, 3]), np.array([1])],
        [np.array([4.0, 3.0, 2.0, 1.0]), np.array([2.0, 1.0]), np.array([1.0])],
    )
    u = report.unjudged_at_k(tiny, r, 3)
    assert (u.questions, u.results, u.unjudged) == (2, 5, 2)  # top 3 of q1: d3 d2 d1 (d3 unjudged); q2: d1 d4 (d1)
    assert u.share == pytest.approx(2 / 5)
    u1 = report.unjudged_at_k(tiny, r, 1)
    assert (u1.results, u1.unjudged) == (2, 2)
    empty = from_lists("none", tiny, [np.zeros(0, dtype=np.int64)] * 3, [np.zeros(0)] * 3)
    assert math.isnan(report.unjudged_at_k(tiny, empty, 5).share)


def test_unjudged_share_matches_run_documents_outside_the_corpus_by_id(tiny):
    run = parse_run(b"q1 Q0 ghost 1 9 t\nq1 Q0 other 2 8 t\nq1 Q0 d1 3 7 t\nq2 Q0 d4 1 1 t\n", "r.txt")
    u = report.unjudged_at_k(tiny, from_run(run, tiny), 10)
    assert (u.results, u.unjudged) == (4, 1)  # ghost is judged (by id), 'other' is not


def test_unjudged_share_by_brute_force_on_the_invented_corpus(invented, ev_invented):
    judged = {(int(q), d) for q, d in zip(invented.qrels.query, invented.qrels.doc_id)}
    for name, ranking in ev_invented.rankings.items():
        expected_res = expected_un = 0
        for q in invented.evaluated:
            ids = ranking.top_ids(invented, int(q), 5)
            expected_res += len(ids)
            expected_un += sum((int(q), d) not in judged for d in ids)
        u = report.unjudged_at_k(invented, ranking, 5, name)
        assert (u.system, u.results, u.unjudged) == (name, expected_res, expected_un)


def test_run_fits(tiny):
    ok = parse_run(b"q1 Q0 d1 1 1 t\n", "a.txt")
    assert report.run_fits(ok, tiny) == (True, "")
    other_q = parse_run(b"x1 Q0 d1 1 1 t\n", "b.txt")
    fits, why = report.run_fits(other_q, tiny)
    assert not fits and "none of its 1 question (x1" in why and "tiny" in why
    other_d = parse_run(b"q1 Q0 zz 1 1 t\n", "c.txt")
    fits, why = report.run_fits(other_d, tiny)
    assert not fits and "documents" in why


def test_metrics_csv_holds_every_mean(ev_invented):
    rows = list(csv.DictReader(io.StringIO(report.metrics_csv(ev_invented))))
    assert [r["system"] for r in rows] == ["BM25", "LSA", "weighted", "RRF"]
    assert list(rows[0]) == ["system", "hit@3", "recall@5", "mrr", "ndcg@5"]
    for r in rows:
        for m in ("hit@3", "recall@5", "mrr", "ndcg@5"):
            assert float(r[m]) == ev_invented.mean(r["system"], m)  # exact, not rounded
    assert round(float(rows[0]["ndcg@5"]), 6) == 0.691171


def test_per_question_csv_one_row_per_system_and_question(invented, ev_invented):
    rows = list(csv.DictReader(io.StringIO(report.per_question_csv(ev_invented))))
    assert len(rows) == 4 * invented.evaluated.size
    bm = [r for r in rows if r["system"] == "BM25"]
    assert [r["qid"] for r in bm] == [invented.query_ids[q] for q in invented.evaluated]
    assert np.allclose([float(r["ndcg@5"]) for r in bm], ev_invented.values["BM25"]["ndcg@5"], rtol=0, atol=0)
    ranks = [int(r["first_relevant_rank"]) if r["first_relevant_rank"] else 0 for r in bm]
    assert ranks == ev_invented.first_rank["BM25"].tolist()


def test_trec_run_reads_back_as_the_same_ranking(invented, ev_invented):
    for name, ranking in ev_invented.rankings.items():
        text = report.trec_run(ranking, invented)
        first = text.splitlines()[0].split()
        assert len(first) == 6 and first[1] == "Q0" and first[3] == "1" and first[5] == name
        back = from_run(parse_run(text.encode(), f"{name}.run"), invented)
        assert np.array_equal(back.judged_rank, ranking.judged_rank), name
        for q in range(invented.n_queries):
            assert back.top_ids(invented, q) == ranking.top_ids(invented, q)
            assert np.array_equal(back.top(q)[1], ranking.top(q)[1])


def test_trec_run_of_an_uploaded_run_keeps_ids_outside_the_corpus(tiny):
    run = parse_run(b"q1 Q0 ghost 1 9 my run\n".replace(b"my run", b"my_run"), "r.txt")
    text = report.trec_run(from_run(run, tiny), tiny, "my run")
    assert text == "q1 Q0 ghost 1 9.0 my_run\n"


def test_json_report_is_what_the_command_line_prints(invented, capsys):
    params = Params(k1=0.9, b=0.4, dims=5, rrf_k=20.0, alpha=0.3)
    names = report.report_metrics(3, "ndcg_exp@3")
    ev = evaluate(invented, params, names)
    mine = report.json_report(ev, params, names, "ndcg_exp@3")
    assert cli.main(shlex.split(report.cli_command("invented", params, names, "ndcg_exp@3"))[3:]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert json.loads(json.dumps(mine)) == printed
    assert list(printed) == ["dataset", "params", "metrics", "systems", "per_query", "bootstrap", "warnings"]


def test_json_report_leaves_out_a_bootstrap_metric_not_listed(invented, capsys):
    ev = evaluate(invented, Params(), ["hit@3", "mrr", "ndcg@10"])
    mine = report.json_report(ev, Params(), ["hit@3", "mrr"], "ndcg@10")
    assert mine["metrics"] == ["hit@3", "mrr"] and mine["bootstrap"]["metric"] == "ndcg@10"
    assert set(mine["systems"]["BM25"]) == {"hit@3", "mrr"}
    assert set(next(iter(mine["per_query"]["LSA"].values()))) == {"first_relevant_rank", "hit@3", "mrr"}
    cli.main(shlex.split(report.cli_command("invented", Params(), ["hit@3", "mrr"], "ndcg@10"))[3:])
    assert json.loads(json.dumps(mine)) == json.loads(capsys.readouterr().out)


def test_bpref_without_judged_non_relevant_documents_warns_in_the_json_and_the_text_header(invented, capsys):
    # the invented corpus's judgements name relevant documents only: bpref is the whole list's recall there
    ev = evaluate(invented, Params(), ["ndcg@5", "bpref", "judged@5"])
    said = metrics.meaning_warnings(invented.qrels, invented.n_queries, ["bpref", "judged@5"])
    assert (
        len(said) == 2 and said[0].startswith("bpref: 14 of the 14 questions") and said[1].startswith("judged@k: 14 of")
    )
    mine = report.json_report(ev, Params(), ["ndcg@5", "bpref", "judged@5"], "ndcg@5")
    assert mine["warnings"] == said
    assert report.json_report(ev, Params(), ["ndcg@5"], "bpref")["warnings"] == said[:1]  # the bootstrap's metric too
    assert report.json_report(ev, Params(), ["ndcg@5"], "ndcg@5")["warnings"] == []  # nDCG: nothing to say
    assert cli.main(["evaluate", "--metrics", "ndcg@5,bpref,judged@5", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["warnings"] == said
    assert cli.main(["evaluate", "--metrics", "ndcg@5,bpref"]) == 0
    header = capsys.readouterr().out.split("\n\n")[0].splitlines()
    assert header[3:] == [f"warning: {said[0]}"]  # under the dataset, analysis and parameter lines, before the tables
    assert cli.main(["compare", "--metrics", "bpref"]) == 0
    assert f"warning: {said[0]}" in capsys.readouterr().out.split("\n\n")[0]
    assert cli.main(["evaluate"]) == 0
    assert "warning" not in capsys.readouterr().out  # the default metrics: no warning, the output as before


def test_cli_command_quotes_and_keeps_inexact_numbers():
    cmd = report.cli_command("my data.zip", Params(b=0.35000000000000003), ["mrr"], "mrr", {"my run": "a b.txt"})
    args = shlex.split(cmd)
    assert args[:6] == ["python", "-m", "retrieval", "evaluate", "--data", "my data.zip"]
    assert args[args.index("--b") + 1] == "0.35000000000000003" and args[args.index("--k1") + 1] == "1.2"
    assert args[args.index("--run") + 1] == "my run=a b.txt" and args[-1] == "--json"


def test_json_report_and_csvs_carry_map_rprec_bpref_and_judged_by_name(tiny):
    # q1 (relevant d1 and ghost, d2 judged non-relevant): d1 d2 d3 d4; q2 (relevant d4): d1 d4; q3: no relevant document
    r = from_lists(
        "sys",
        tiny,
        [np.array([0, 1, 2, 3]), np.array([0, 3]), np.array([1])],
        [np.array([4.0, 3.0, 2.0, 1.0]), np.array([2.0, 1.0]), np.array([1.0])],
    )
    names = ["map", "rprec", "bpref", "judged@3"]
    ev = score(tiny, {"sys": r, "same": r}, metrics.parse_list(names))
    out = report.json_report(ev, Params(), names, "map", ("sys", "same"))
    strict = json.loads(json.dumps(out, allow_nan=False))
    assert strict["metrics"] == names
    per_q = strict["per_query"]["sys"]
    assert set(per_q) == {"q1", "q2"}  # q3 has no relevant document: it has no value and is not listed
    # R = 2 for q1 (ghost is never retrieved), 1 for q2
    assert per_q["q1"] == {
        "first_relevant_rank": 1,
        "map": (1 / 1) / 2,
        "rprec": 1 / 2,
        "bpref": 1 / 2,
        "judged@3": 2 / 3,
    }
    assert per_q["q2"] == {"first_relevant_rank": 2, "map": (1 / 2) / 1, "rprec": 0.0, "bpref": 1.0, "judged@3": 1 / 3}
    assert strict["systems"]["sys"] == pytest.approx({"map": 0.5, "rprec": 0.25, "bpref": 0.75, "judged@3": 0.5})
    assert strict["bootstrap"]["metric"] == "map" and strict["bootstrap"]["mean_diff"] == 0.0
    rows = list(csv.DictReader(io.StringIO(report.metrics_csv(ev))))
    assert list(rows[0]) == ["system", *names] and float(rows[0]["bpref"]) == 0.75
    rows = list(csv.DictReader(io.StringIO(report.per_question_csv(ev))))
    assert [float(r["judged@3"]) for r in rows if r["system"] == "sys"] == [2 / 3, 1 / 3]


@pytest.mark.parametrize("chosen", ["map@5", "rprec", "bpref", "judged@5"])
def test_the_apps_report_with_a_new_metric_chosen_is_what_the_command_line_prints(invented, capsys, chosen):
    names = report.report_metrics(5, chosen)
    assert names[-1] == chosen
    ev = evaluate(invented, Params(), names)
    mine = report.json_report(ev, Params(), names, chosen)
    assert cli.main(shlex.split(report.cli_command("invented", Params(), names, chosen))[3:]) == 0
    assert json.loads(json.dumps(mine, allow_nan=False)) == json.loads(capsys.readouterr().out)
    assert set(mine["systems"]["BM25"]) == set(names)
