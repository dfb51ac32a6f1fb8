"""Judgements alone are a dataset: `evaluate --qrels FILE --run NAME=PATH` and `compare --qrels` score run files with
no corpus, to the same numbers as with the corpus; what needs text says it needs documents; `--ties` is said in
the header and in the JSON."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from conftest import ROOT
from retrieval import cli
from retrieval.corpus import dataset
from retrieval.corpus.judged import judgements_only

QRELS = ROOT / "data" / "invented" / "qrels" / "test.tsv"


def main(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(scope="module")
def runs(tmp_path_factory, invented):
    """Two runs of the invented corpus: A with tied scores (three values), B with distinct ones; each names one
    document outside the corpus."""
    d = tmp_path_factory.mktemp("runs")
    rng = np.random.default_rng(0)
    paths = {}
    for name, values in (("A", 3), ("B", None)):
        lines = []
        for q in invented.query_ids:
            pick = rng.choice(invented.n_docs, size=12, replace=False)
            scores = rng.integers(0, values, size=12) if values else rng.random(12)
            lines += [
                f"{q} Q0 {invented.doc_ids[i]} {r + 1} {float(s)!r} {name}"
                for r, (i, s) in enumerate(zip(pick, scores))
            ]
            lines.append(f"{q} Q0 elsewhere9 13 -5.0 {name}")
        paths[name] = d / f"{name}.run"
        paths[name].write_text("\n".join(lines) + "\n")
    return paths


def test_runs_on_judgements_alone_score_what_they_score_with_the_corpus(capsys, runs):
    metrics = "ndcg@10,map,mrr,recall@10,precision@5,bpref,rprec"
    args = ["--run", f"A={runs['A']}", "--run", f"B={runs['B']}", "--metrics", metrics, "--compare", "A,B", "--json"]
    code, out, _ = main(capsys, "evaluate", "--qrels", str(QRELS), *args)
    assert code == 0
    alone = json.loads(out)
    code, out, _ = main(capsys, "evaluate", "--data", "invented", *args)
    assert code == 0
    with_corpus = json.loads(out)
    for s in ("A", "B"):
        assert alone["systems"][s] == with_corpus["systems"][s]
        assert alone["per_query"][s] == with_corpus["per_query"][s]
    assert alone["bootstrap"] == with_corpus["bootstrap"] and alone["bootstrap"]["a"] == "A"
    assert alone["dataset"]["documents"] == 0 and set(alone["systems"]) == {"A", "B"}
    # the tied run: the rule and the questions it touches, in both reports
    assert alone["params"]["ties"] == with_corpus["params"]["ties"] == "docid-asc"
    assert alone["params"]["tied_questions"] == with_corpus["params"]["tied_questions"] == {"A": 14}
    assert (
        list(alone)
        == list(with_corpus)
        == ["dataset", "params", "metrics", "systems", "per_query", "bootstrap", "warnings"]
    )
    assert not any("not in the corpus" in w for w in alone["warnings"])  # no corpus: nothing to warn about


def test_the_tie_rule_changes_only_the_tied_run_and_is_said_in_the_header(capsys, runs):
    base = [
        "evaluate",
        "--qrels",
        str(QRELS),
        "--run",
        f"A={runs['A']}",
        "--run",
        f"B={runs['B']}",
        "--metrics",
        "ndcg@10,map",
    ]
    reports = {}
    for ties in ("docid-asc", "trec_eval"):
        code, out, _ = main(capsys, *base, "--ties", ties, "--json")
        assert code == 0
        reports[ties] = json.loads(out)
    assert reports["trec_eval"]["params"]["ties"] == "trec_eval"
    assert reports["docid-asc"]["systems"]["B"] == reports["trec_eval"]["systems"]["B"]
    assert reports["docid-asc"]["systems"]["A"] != reports["trec_eval"]["systems"]["A"]
    code, out, _ = main(capsys, *base)
    assert code == 0
    assert "ties: tied scores ranked by document id ascending" in out and "A: 14 questions of 14" in out
    assert re.search(r"^B\s+0\.\d{6}", out, re.M)


def test_one_run_alone_has_no_bootstrap_and_compare_makes_its_table(capsys, runs):
    code, out, _ = main(capsys, "evaluate", "--qrels", str(QRELS), "--run", f"B={runs['B']}", "--json")
    assert code == 0 and json.loads(out)["bootstrap"] is None
    code, out, _ = main(
        capsys, "compare", "--qrels", str(QRELS), "--run", f"A={runs['A']}", "--run", f"B={runs['B']}", "--json"
    )
    assert code == 0
    table = json.loads(out)
    assert [s["name"] for s in table["systems"]] == ["A", "B"] and table["dataset"]["documents"] == 0


@pytest.mark.parametrize(
    "extra, said",
    [
        (["--k1", "1.0"], "--k1 needs documents"),
        (["--embeddings", "e5-small"], "--embeddings needs documents"),
        (["--systems", "BM25"], "--systems BM25 needs documents"),
        (["--data", "invented"], "give one"),
        ([], "at least one --run"),
    ],
)
def test_what_needs_text_says_it_needs_documents(capsys, runs, extra, said):
    argv = ["evaluate", "--qrels", str(QRELS), *(["--run", str(runs["B"])] if extra else []), *extra]
    code, out, err = main(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("retrieval: error: ") and said in err and len(err.strip().splitlines()) == 1


def test_a_bad_run_line_or_qrels_line_is_named_with_its_file_and_line(capsys, tmp_path, runs):
    bad = tmp_path / "bad.run"
    bad.write_text("q01 Q0 refund1 1 2.0 t\nq01 Q0 pricing1 2 many t\n")
    code, _, err = main(capsys, "evaluate", "--qrels", str(QRELS), "--run", str(bad))
    assert code == 2 and f"{bad}:2: the score 'many' is not a number" in err
    qrels = tmp_path / "q.tsv"
    qrels.write_text("q01 0 refund1 1\nq01 0 pricing1 high\n")
    code, _, err = main(capsys, "evaluate", "--qrels", str(qrels), "--run", str(runs["B"]))
    assert code == 2 and f"{qrels}:2" in err and "grade" in err


def test_the_qrels_alone_dataset_keeps_questions_in_first_named_order():
    ds = judgements_only([("q2", "a", 1), ("q1", "b", 0), ("q2", "c", 2)], "j.tsv", "j")
    assert ds.query_ids == ("q2", "q1") and ds.n_docs == 0 and ds.evaluated.tolist() == [0]
    assert ds.qrels.doc.tolist() == [-1, -1, -1]
    with pytest.raises(dataset.InputError, match="judges document 'a' twice"):
        judgements_only([("q2", "a", 1), ("q2", "a", 2)], "j.tsv", "j")


def test_gate_compares_two_reports_of_runs_on_judgements_alone(capsys, tmp_path, runs):
    paths = []
    for ties in ("docid-asc", "trec_eval"):
        code, out, _ = main(
            capsys, "evaluate", "--qrels", str(QRELS), "--run", f"A={runs['A']}", "--ties", ties, "--json"
        )
        assert code == 0
        paths.append(tmp_path / f"{ties}.json")
        paths[-1].write_text(out)
    code, out, _ = main(
        capsys, "gate", "--baseline", str(paths[0]), "--current", str(paths[1]), "--system", "A", "--json"
    )
    verdict = json.loads(out)
    assert code in (0, 1) and verdict["system"] == "A" and verdict["dataset"] == "test"
