"""Run files (retrieval/corpus/runs.py): the streamed parser reads TREC (plain and gzipped), JSON and Parquet runs to
the same ranking, names every bad line with its file, ranks ties by the rule asked, and with `trec_eval`'s rule
every metric equals pytrec_eval's on tie-heavy random runs."""

from __future__ import annotations

import gzip
import json
import math
import re

import numpy as np
import pytest

from retrieval.core.errors import InputError
from retrieval.corpus.dataset import assemble
from retrieval.corpus.runs import TrecRun, parse_run, read_run
from retrieval.evaluation import metrics
from retrieval.retrievers.ranking import from_run


def names_line(err: pytest.ExceptionInfo, source: str, line: int) -> None:
    """The message holds `source:line`, the line as a whole number."""
    assert re.search(re.escape(f"{source}:{line}") + r"(?!\d)", str(err.value)), str(err.value)


def _lines(rng, n_q: int, depth: int, values: int | None = None) -> list[tuple[str, str, float]]:
    """(question, document, score) of a random run; `values`: that many distinct scores (ties), else distinct."""
    out = []
    for q in range(n_q):
        docs = rng.choice(400, size=depth, replace=False)
        scores = rng.integers(0, values, size=depth) if values else rng.permutation(depth) + rng.random()
        out += [(f"q{q}", f"doc{d}", float(s)) for d, s in zip(docs, scores)]
    return out


def _trec(rows, shuffle_rng=None) -> bytes:
    order = shuffle_rng.permutation(len(rows)) if shuffle_rng is not None else range(len(rows))
    return "".join(f"{rows[i][0]} Q0 {rows[i][1]} {n} {rows[i][2]!r} tag\n" for n, i in enumerate(order)).encode()


def _reference(rows, ties: str) -> dict[str, list[str]]:
    """Each question's documents by score descending, ties by id ascending or (trec_eval) descending, written
    independently of the parser."""
    per: dict[str, list[tuple[float, str]]] = {}
    for q, d, s in rows:
        per.setdefault(q, []).append((s, d))
    out = {}
    for q, items in per.items():
        items.sort(key=lambda t: t[1], reverse=ties == "trec_eval")
        items.sort(key=lambda t: -t[0])  # stable: the id order stays within equal scores
        out[q] = [d for _, d in items]
    return out


@pytest.mark.parametrize("ties", ["docid-asc", "trec_eval"])
def test_a_shuffled_tie_heavy_run_is_ranked_by_score_then_the_tie_rule(ties):
    rng = np.random.default_rng(1)
    rows = _lines(rng, 30, 40, values=4)
    run = parse_run(_trec(rows, rng), "x.run", ties=ties)
    want = _reference(rows, ties)
    assert dict(zip(run.query_ids, [list(x) for x in run.doc_ids])) == want
    assert run.ties == ties and run.tied_questions == 30
    assert all(np.all(np.diff(s) <= 0) for s in run.scores)


def test_a_run_with_distinct_scores_has_no_tied_question_and_reads_the_same_under_both_rules():
    rng = np.random.default_rng(2)
    rows = _lines(rng, 10, 20)
    a, b = parse_run(_trec(rows, rng), "x.run"), parse_run(_trec(rows, rng), "x.run", ties="trec_eval")
    assert a.tied_questions == 0 and dict(zip(a.query_ids, a.doc_ids)) == dict(zip(b.query_ids, b.doc_ids))


def test_pieces_beyond_the_first_mib_keep_their_line_numbers_and_a_non_ascii_piece_reads_the_same():
    rng = np.random.default_rng(3)
    rows = _lines(rng, 300, 150)  # 45,000 lines, about 1.4 MiB: two pieces
    data = _trec(rows)
    fast = parse_run(data, "x.run")
    slow = parse_run(data.replace(b"doc1 ", "döc1 ".encode()), "x.run")  # every piece holding it read line by line
    assert fast.n_lines == slow.n_lines == 45_000
    renamed = [[("döc1" if d == "doc1" else d) for d in x] for x in fast.doc_ids]
    assert renamed == [list(x) for x in slow.doc_ids] and np.array_equal(fast.score, slow.score)
    bad = data.splitlines()
    bad[40_000] = b"q1 Q0 x 1 high tag"
    with pytest.raises(InputError, match="the score 'high' is not a number") as e:
        parse_run(b"\n".join(bad), "big.run")
    names_line(e, "big.run", 40_001)
    bad[40_000] = b"q1 Q0 x 1 inf tag"
    with pytest.raises(InputError, match="the score 'inf' is not a finite number") as e:
        parse_run(b"\n".join(bad), "big.run")
    names_line(e, "big.run", 40_001)
    bad[40_000] = "q1 Q0 déjà 1 1e400 tag".encode()  # a non-ASCII piece: read line by line, same message
    with pytest.raises(InputError, match="the score '1e400' is not a finite number") as e:
        parse_run(b"\n".join(bad), "big.run")
    names_line(e, "big.run", 40_001)
    bad[40_000] = bad[39_999]  # the same question and document twice
    with pytest.raises(InputError, match="listed twice") as e:
        parse_run(b"\n".join(bad), "big.run")
    names_line(e, "big.run", 40_001)


def test_crlf_tabs_and_a_byte_order_mark_read_as_plain_lines():
    data = b"\xef\xbb\xbfq1\tQ0\td1\t1\t2.0\tt\r\nq1\tQ0\td2\t2\t1.0\tt\r\n\r\nq2 Q0 d1 1 3 t\r\n"
    run = parse_run(data, "x.run")
    assert run.query_ids == ("q1", "q2") and list(run.doc_ids) == [("d1", "d2"), ("d1",)]
    with pytest.raises(InputError, match="5 fields") as e:
        parse_run(data + b"q3 Q0 d1 1 3\r\n", "x.run")
    names_line(e, "x.run", 5)
    with pytest.raises(InputError, match="5 fields") as e:  # a lone carriage return ends a line, as in the text reader
        parse_run(b"q1 Q0 d1 1 1 t\rq1 Q0 d2 1 1\n", "x.run")
    names_line(e, "x.run", 2)


# ------------------------------------------------------------------ gzip, JSON and Parquet: the same run, the same errors


def _as_json(rows) -> bytes:
    per: dict[str, dict[str, float]] = {}
    for q, d, s in rows:
        per.setdefault(q, {})[d] = s
    return json.dumps(per, indent=1).encode()


def test_gzipped_json_and_parquet_runs_read_to_the_same_ranking_as_the_trec_file(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rng = np.random.default_rng(4)
    rows = _lines(rng, 20, 30, values=5)
    trec = parse_run(_trec(rows), "x.run", name="sys", ties="trec_eval")
    (tmp_path / "r.trec.gz").write_bytes(gzip.compress(_trec(rows)))
    (tmp_path / "r.json").write_bytes(_as_json(rows))
    (tmp_path / "r.json.gz").write_bytes(gzip.compress(_as_json(rows)))
    table = pa.table({"qid": [r[0] for r in rows], "docid": [r[1] for r in rows], "score": [r[2] for r in rows]})
    pq.write_table(table, tmp_path / "r.parquet", row_group_size=100)
    for name in ("r.trec.gz", "r.json", "r.json.gz", "r.parquet"):
        other = read_run(tmp_path / name, "sys", ties="trec_eval")
        assert other.query_ids == trec.query_ids, name
        assert list(other.doc_ids) == list(trec.doc_ids), name
        assert np.array_equal(other.score, trec.score), name
    uploaded = parse_run((tmp_path / "r.parquet").read_bytes(), "r.parquet", "sys", ties="trec_eval")  # the app's
    assert list(uploaded.doc_ids) == list(trec.doc_ids)
    assert read_run(tmp_path / "r.trec.gz").name == "tag"
    assert read_run(tmp_path / "r.json").name == "r"


def test_bad_lines_in_every_format_are_named_with_file_and_line(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    gz = tmp_path / "r.run.gz"
    gz.write_bytes(gzip.compress(b"q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2 nan t\n"))
    with pytest.raises(InputError, match="not a finite number") as e:
        read_run(gz)
    names_line(e, str(gz), 2)
    cut = tmp_path / "cut.run.gz"
    cut.write_bytes(gzip.compress(b"q1 Q0 d1 1 1.0 t\n" * 1000)[:-30])
    with pytest.raises(InputError, match=re.escape(str(cut)) + ".*(cut short|gzip)"):
        read_run(cut)
    js = tmp_path / "r.json"
    js.write_text('{\n "q1": {\n  "d1": 1.0,\n  "d2": "high"\n }\n}\n')
    with pytest.raises(InputError, match="the score '\"high\"' is not a number") as e:
        read_run(js)
    names_line(e, str(js), 4)
    js.write_text('{\n "q1": {\n  "d1": 1.0,\n  "d1": 2.0\n }\n}\n')
    with pytest.raises(InputError, match="'d1' is listed twice for question 'q1'") as e:
        read_run(js)
    names_line(e, str(js), 4)
    js.write_text('{\n "q1": {\n  "d1": 1.0,\n  "d2": 2.0,\n }\n}\n')
    with pytest.raises(InputError, match="not valid JSON") as e:
        read_run(js)
    names_line(e, str(js), 5)
    js.write_text('[["q1", "d1", 1.0]]')
    with pytest.raises(InputError, match="expected a JSON object") as e:
        read_run(js)
    names_line(e, str(js), 1)
    pqf = tmp_path / "r.parquet"
    pq.write_table(
        pa.table({"qid": ["q1", "q1", "q2"], "docid": ["d1", "d2", "d1"], "score": [1.0, math.inf, 2.0]}), pqf
    )
    with pytest.raises(InputError, match="not a finite number") as e:
        read_run(pqf)
    names_line(e, str(pqf), 2)
    pq.write_table(pa.table({"qid": ["q1"], "doc": ["d1"], "score": [1.0]}), pqf)
    with pytest.raises(InputError, match="no column docid"):
        read_run(pqf)
    pq.write_table(pa.table({"qid": ["q1", "q1"], "docid": ["d1", "d1"], "score": [1.0, 2.0]}), pqf)
    with pytest.raises(InputError, match="listed twice") as e:
        read_run(pqf)
    names_line(e, str(pqf), 2)
    (tmp_path / "x.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(InputError, match="not a readable Parquet file"):
        read_run(tmp_path / "x.parquet")


def test_a_run_made_from_lists_is_ranked_as_a_parsed_one():
    made = TrecRun.from_lists("m", ("q1",), (("b", "a", "c"),), (np.array([1.0, 1.0, 2.0]),))
    assert list(made.doc_ids) == [("c", "a", "b")]
    parsed = parse_run(b"q1 Q0 b 1 1 m\nq1 Q0 a 2 1 m\nq1 Q0 c 3 2 m\n", "m.run")
    assert made.fingerprint == parsed.fingerprint


# ------------------------------------------------------------------ --ties trec_eval equals pytrec_eval on ties

TREC_MEASURES = {  # trec_eval measure (at k) -> the lab's metric
    "ndcg_cut_{k}": "ndcg@{k}",
    "recall_{k}": "recall@{k}",
    "success_{k}": "hit@{k}",
    "P_{k}": "precision@{k}",
    "map_cut_{k}": "map@{k}",
}
WHOLE = {"recip_rank": "mrr", "map": "map", "Rprec": "rprec", "bpref": "bpref"}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_with_the_trec_eval_tie_rule_every_metric_equals_pytrec_eval_on_tie_heavy_runs(seed):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = np.random.default_rng(seed)
    n_docs, n_q = 80, 25
    docs = [(f"d{i:03d}", f"text {i}") for i in rng.permutation(n_docs)]
    queries = [(f"q{i:02d}", f"question {i}") for i in range(n_q)]
    judgements = []
    for qid, _ in queries:
        judged = rng.choice(n_docs, size=int(rng.integers(2, 20)), replace=False)
        judgements += [(qid, f"d{d:03d}", int(g)) for d, g in zip(judged, rng.integers(0, 4, size=judged.size))]
    judgements.append(("q01", "x900", 2))  # judged, outside the corpus, retrieved
    ds = assemble("tied", docs, queries, judgements)
    rows = []
    for qid, _ in queries[:-1]:  # the last question is not answered: zero here, skipped by trec_eval
        picked = rng.choice(n_docs, size=int(rng.integers(5, 40)), replace=False)
        rows += [(qid, f"d{d:03d}", float(s)) for d, s in zip(picked, rng.integers(0, 4, size=picked.size))]
    rows.append(("q01", "x900", 3.0))
    run_bytes = _trec(rows, rng)
    qrels: dict[str, dict[str, int]] = {}
    for q, d, g in judgements:
        qrels.setdefault(q, {})[d] = g
    run: dict[str, dict[str, float]] = {}
    for q, d, s in rows:
        run.setdefault(q, {})[d] = s
    ks = (1, 3, 5, 10, 20)
    cut = ",".join(map(str, ks))
    names = {t.split("_{")[0].rstrip("_") for t in TREC_MEASURES}
    measures = {f"{n}.{cut}" for n in names} | set(WHOLE)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    every_judged = {q: {d: 1 for d in x} for q, x in qrels.items()}
    judged_oracle = pytrec_eval.RelevanceEvaluator(every_judged, {f"P.{cut}"}).evaluate(run)
    pairs = [(t.format(k=k), o.format(k=k), theirs) for t, o in TREC_MEASURES.items() for k in ks]
    pairs += [(t, o, theirs) for t, o in WHOLE.items()] + [(f"P_{k}", f"judged@{k}", judged_oracle) for k in ks]

    def differing(ties: str) -> int:
        ranking = from_run(parse_run(run_bytes, "x.run", ties=ties), ds)
        wrong = 0
        for trec_name, our_name, oracle in pairs:
            ours = metrics.per_query(ds.qrels, ds.n_queries, ranking.judged_rank, our_name)
            for qi, qid in enumerate(ds.query_ids):
                if ds.n_relevant[qi] == 0:
                    assert math.isnan(ours[qi]) or our_name.startswith("judged")
                elif qid not in oracle:
                    assert ours[qi] == 0.0
                elif abs(ours[qi] - oracle[qid][trec_name]) > 1e-12:
                    wrong += 1
        return wrong

    assert differing("trec_eval") == 0
    assert differing("docid-asc") > 0  # the ties matter in this collection: the article's rule differs
