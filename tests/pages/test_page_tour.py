"""The Tour (the landing page), used as a person would: stepped from 1 to 10 with Next, each step's figures checked
against the engine's own evaluation or independent arithmetic (scikit-learn, the article's tables), the step in the
URL (?step=4, a bad value clamped), Previous, and the tour on a small uploaded dataset with hostile names."""

from __future__ import annotations

import re

import numpy as np
import pytest
from sklearn.metrics import ndcg_score

from apptest import move, open_app, shown
from retrieval.core.params import Params
from retrieval.corpus.dataset import assemble
from retrieval.engine.engine import evaluate
from retrieval.evaluation import stats
from ui import tour
from ui.format import interval_text, signed

pytestmark = pytest.mark.app

NOT_LIVE = ("<b>", "<script>", "<img", "](http", "](javascript", ":streamlit:", "**now**", "$y$")


def metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def deltas(at) -> dict[str, str]:
    return {m.label: m.delta for m in at.metric}


def bodies(at) -> str:
    """Everything the page says in Markdown, as read."""
    return "\n".join(shown(m.value) for m in at.markdown)


def at_step(at, n: int) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["step"] == n
    assert at.subheader[0].value == f"{n}. {tour.STEPS[n - 1]}"
    assert any(p.proto.text == tour.progress_text(n) for p in at.get("progress"))


def test_the_tour_steps_from_1_to_10_with_next_each_figure_computed(invented):
    at = open_app()
    assert at.title[0].value == "Tour"
    ev = evaluate(invented, Params(), ["hit@5", "recall@5", "mrr", "ndcg@5"])  # the engine's own (no dense: not needed)
    ranks = {s: ev.first_rank[s] for s in ev.systems}
    qids = [invented.query_ids[q] for q in invented.evaluated]

    at_step(at, 1)  # the corpus: sizes and judgements
    m = metrics(at)
    assert m == {"documents": "28", "questions": "14", "evaluated": "14", "judgements": str(len(invented.qrels))}
    assert list(at.dataframe[0].value["question"]) == qids[:5]
    assert at.button(key="tour_prev").disabled

    at.button(key="tour_next").click().run()
    at_step(at, 2)  # one question: the first found inside the top 5 but not first (q12: BM25 rank 2)
    i = next(j for j, r in enumerate(ranks["BM25"]) if 1 < r <= 5)
    assert at.selectbox(key="tour_question").value == qids[i] == "q12"
    m = metrics(at)
    assert m["RR"] == f"{1 / ranks['BM25'][i]:.3f}" == "0.500"
    assert (
        m["hit@5"] == f"{ev.values['BM25']['hit@5'][i]:.3f}"
        and m["recall@5"] == f"{ev.values['BM25']['recall@5'][i]:.3f}"
    )
    assert (
        m["nDCG@5"] == f"{ev.values['BM25']['ndcg@5'][i]:.3f}" == f"{(1 / np.log2(3)):.3f}"
    )  # grade 2 at rank 2 over grade 2 at 1
    docs = list(at.dataframe[0].value["document"])
    assert len(docs) == 5 and docs[1] == "misc4" and docs[0] not in invented.relevant_of(invented.query_index["q12"])

    at.button(key="tour_next").click().run()
    at_step(at, 3)  # the means side by side, and the article's interval
    m = metrics(at)
    assert m["BM25, nDCG@5"] == f"{ev.mean('BM25', 'ndcg@5'):.6f}" == "0.691171"
    assert m["LSA, nDCG@5"] == f"{ev.mean('LSA', 'ndcg@5'):.6f}" == "0.679138"
    boot = stats.paired_bootstrap(ev.values["BM25"]["ndcg@5"], ev.values["LSA"]["ndcg@5"])
    assert deltas(at)["BM25 \u2212 LSA"] == "95%: " + interval_text(boot.low, boot.high) == "95%: [\u22120.081, +0.107]"
    assert m["BM25 \u2212 LSA"] == signed(boot.mean) == "+0.012"
    assert "they **tie**" in bodies(at)
    table = at.dataframe[0].value
    assert list(table.index) == ["BM25", "LSA"] and table.loc["LSA", "recall@5"] == pytest.approx(
        ev.mean("LSA", "recall@5")
    )

    at.button(key="tour_next").click().run()
    at_step(at, 4)  # the disagreements: none at k = 5, so the questions whose first ranks differ; they part at k = 1
    found = {s: (ranks[s] > 0) & (ranks[s] <= 5) for s in ("BM25", "LSA")}
    m = metrics(at)
    assert m["neither, top 5"] == str(int((~found["BM25"] & ~found["LSA"]).sum())) == "2"
    assert m["BM25 alone, top 5"] == m["LSA alone, top 5"] == "0"
    differ = [qids[j] for j in np.flatnonzero(ranks["BM25"] != ranks["LSA"])]
    assert list(at.dataframe[0].value["question"]) == differ == ["q01", "q10", "q12"]
    assert "at **k = 1**" in bodies(at)

    at.button(key="tour_next").click().run()
    at_step(at, 5)  # why: the article's failures as the judgements allow: export1 is unjudged for q10
    said = bodies(at)
    assert "Question q02, “can I get my money back”" in said and "**vocabulary gap**" in said
    assert "Question q10, “I want my data from yesterday back”: BM25 puts export1 first on “data”" in said
    assert "**unjudged at the top**" in said and "No judgement names export1" in said
    assert any(
        "no failure can be called a **surface homonymy**" in shown(i.value) for i in at.info
    )  # none says "not relevant"
    assert "Judge: grade export1" in [p.value for p in at.get("page_link")]

    at.button(key="tour_next").click().run()
    at_step(at, 6)  # the fusions against their members: the article's table
    table = at.dataframe[0].value
    assert list(table.index) == ["BM25", "LSA", "weighted", "RRF"]
    assert {s: round(float(table.loc[s, "nDCG@5"]), 6) for s in table.index} == {
        "BM25": 0.691171,
        "LSA": 0.679138,
        "weighted": 0.733993,
        "RRF": 0.737367,
    }
    assert {s: round(float(table.loc[s, "recall@5"]), 6) for s in ("weighted", "RRF")} == {
        "weighted": 0.738095,
        "RRF": 0.738095,
    }
    assert "**RRF** scores 0.737 on mean nDCG@5, above both its members" in bodies(at)
    # where the gain comes from: the questions a fusion beats both members on, q03 among them, by its later documents
    assert "**the gain comes from the later relevant documents**" in bodies(at)
    long = at.dataframe[1].value  # after the means: the questions a fusion beats both members on, a row per system
    gains = long.assign(cell=[f"{x:.3f} · {r}" for x, r in zip(long["nDCG@5"], long[tour.GAIN_RANKS])]).pivot(
        index="question", columns="system", values="cell"
    )
    assert (
        "q03" in gains.index
        and gains.loc["q03", "RRF"] == f"{ev.values['RRF']['ndcg@5'][qids.index('q03')]:.3f} · 1 (2), 3 (1)"
    )
    for q, row in gains.iterrows():
        for s in ("BM25", "LSA", "weighted", "RRF"):
            assert row[s].split(" · ")[0] == f"{float(ev.values[s]['ndcg@5'][qids.index(q)]):.3f}"

    at.button(key="tour_next").click().run()
    at_step(at, 7)  # the best fusion (RRF) against the best member (BM25): the paired bootstrap
    boot = stats.paired_bootstrap(ev.values["RRF"]["ndcg@5"], ev.values["BM25"]["ndcg@5"])
    m = metrics(at)
    assert m["RRF \u2212 BM25"] == signed(ev.mean("RRF", "ndcg@5") - ev.mean("BM25", "ndcg@5"))
    assert deltas(at)["RRF \u2212 BM25"] == "95%: " + interval_text(boot.low, boot.high)
    assert m["RRF, nDCG@5"] == "0.737367"
    assert boot.holds_zero and "can't be told apart" in bodies(at) + "\n".join(i.value for i in at.info)

    at.button(key="tour_next").click().run()
    at_step(at, 8)  # the trap, against scikit-learn called here
    universe, ranking, rel = list("abcxyzwv"), list("xyabz"), {"a": 2, "b": 1, "c": 1}
    whole = ndcg_score(
        [[rel.get(d, 0) for d in universe]], [[5 - ranking.index(d) if d in ranking else 0 for d in universe]], k=5
    )
    only = ndcg_score([[rel.get(d, 0) for d in ranking]], [[5, 4, 3, 2, 1]], k=5)
    m = metrics(at)
    assert m["sklearn, universe"] == f"{whole:.6f}" == m["ours, nDCG@5"] == "0.456949"
    assert m["sklearn, retrieved"] == f"{only:.6f}" == "0.543791"
    # q03: a relevant document at rank 1 and recall@5 = 0.5, but BM25 lists two documents: the tour names it, truly
    assert ev.values["BM25"]["recall@5"][qids.index("q03")] == 0.5 and ev.first_rank["BM25"][qids.index("q03")] == 1
    assert "no question has" not in bodies(at) and "(q03" in bodies(at) and "lists fewer than 5 documents" in bodies(at)

    at.button(key="tour_next").click().run()
    at_step(at, 9)  # dense: on, q02 and q10 fixed, computed
    full = open_app("pages/overview.py").dataframe[0].value  # the engine's means with dense, as the app has them
    m = metrics(at)
    assert m["dense, nDCG@5"] == f"{float(full.loc['dense', 'nDCG@5']):.6f}" and m["BM25, nDCG@5"] == "0.691171"
    said = bodies(at)
    assert "Question q02 (BM25: not found, a vocabulary gap): dense puts its first relevant document at rank 1" in said
    assert "Question q10 (BM25: not found, its first result unjudged)" in said and said.count("**fixed**") == 2

    at.button(key="tour_next").click().run()
    at_step(at, 10)  # the pages to go on to
    links = [p.value for p in at.get("page_link")]
    assert links[:1] == ["Data"] and "Tuning" in links and "Per question" in links
    assert at.button(key="tour_next").disabled


def test_a_link_with_step_4_opens_step_4_and_previous_goes_back():
    at = open_app(query={"step": "4"})
    at_step(at, 4)
    at.button(key="tour_prev").click().run()
    at_step(at, 3)
    assert at.query_params["step"] == "3"  # the address bar follows
    at.button(key="tour_next").click().run()
    at.button(key="tour_next").click().run()
    at_step(at, 5)
    assert at.query_params["step"] == "5"


def test_the_step_picker_jumps_and_the_sidebar_moves_the_figures(invented):
    at = open_app(query={"step": "3", "metric": "MRR"})
    at_step(at, 3)
    ev = evaluate(invented, Params(), ["mrr", "hit@3"])
    assert metrics(at)["BM25, MRR"] == f"{ev.mean('BM25', 'mrr'):.6f}" == "0.821429"  # the article's MRR
    assert metrics(at)["LSA, MRR"] == f"{ev.mean('LSA', 'mrr'):.6f}"
    move(at, "k", 3)
    assert list(at.dataframe[0].value.columns) == ["hit@3", "recall@3", "MRR", "nDCG@3"]
    assert float(at.dataframe[0].value.loc["BM25", "hit@3"]) == pytest.approx(ev.mean("BM25", "hit@3"))
    at.segmented_control(key="step").set_value(8).run()
    at_step(at, 8)  # (the browser writes a picked value into the URL itself; AppTest has no browser)


def test_the_trap_on_the_data_agrees_with_scikit_learn_given_every_document(invented):
    """At k = 2, q01 (pricing1 2, pricing2 1): BM25's top 2 holds pricing1 and not pricing2, so the trap shows."""
    at = open_app(query={"step": "8", "k": "2"})
    at_step(at, 8)
    ev = evaluate(invented, Params(), ["ndcg@2"])
    q = invented.query_index["q01"]
    top = ev.rankings["BM25"].top_ids(invented, q, 2)
    rel = invented.relevant_of(q)
    assert top[0] == "pricing1" and "pricing2" not in top
    truth = [[rel.get(d, 0) for d in invented.doc_ids]]  # the whole corpus, as the article says to pass it
    scores = [[2 - top.index(d) if d in top else 0 for d in invented.doc_ids]]
    whole, only = ndcg_score(truth, scores, k=2), ndcg_score([[rel.get(d, 0) for d in top]], [[2, 1]], k=2)
    ours = ev.values["BM25"]["ndcg@2"][list(invented.evaluated).index(q)]
    assert (
        [m.value for m in at.metric[3:6]]
        == [f"{ours:.6f}", f"{whole:.6f}", f"{only:.6f}"]
        == ["0.760188", "0.760188", "1.000000"]
    )
    assert "question q01 and BM25's top 2" in bodies(at) and "never sees pricing2" in bodies(at)


def test_at_k_1_bm25_and_lsa_part_on_q01_and_q12(invented):
    """The article: BM25 puts q12 second, LSA puts q01 second; at k = 1 each finds one question the other misses."""
    at = open_app(query={"step": "4"})
    move(at, "k", 1)
    at_step(at, 4)
    ranks = evaluate(invented, Params(), ["hit@1"]).first_rank
    qids = np.array([invented.query_ids[q] for q in invented.evaluated])
    only_bm25, only_lsa = (
        qids[(ranks["BM25"] == 1) & (ranks["LSA"] != 1)],
        qids[(ranks["LSA"] == 1) & (ranks["BM25"] != 1)],
    )
    assert list(only_bm25) == ["q01"] and list(only_lsa) == ["q12"]
    m = metrics(at)
    assert (m["BM25 alone, top 1"], m["LSA alone, top 1"]) == ("1", "1")
    assert list(at.dataframe[0].value["question"]) == ["q01", "q12"]
    assert "BM25 alone finds 1 question in its top 1 (q01) and LSA alone 1 (q12)" in bodies(at)


@pytest.mark.parametrize("raw, step", [("99", 10), ("abc", 1), ("0", 1), ("-2", 1), ("6.9", 6)])
def test_a_bad_step_in_the_link_is_clamped_without_an_exception(raw, step):
    at = open_app(query={"step": raw})
    at_step(at, step)


def hostile():
    """A small dataset: one question found, one a vocabulary gap (no surface homonymy), markup in every name."""
    docs = [
        ("d<1>", "Apple pie **stars** recipe with apples."),
        ("d2", "Apple juice, fresh."),
        ("d3", "Restore the backups at night."),
        ("d4", "Printers need toner $y$."),
        ("d5", "Windows open at dawn :streamlit:."),
    ]
    queries = [
        ("q<1>", "apple pie <script>x</script>"),
        ("q*2*", "<img src=x onerror=alert(1)> money **now** [x](javascript:alert(1))"),
    ]
    return assemble("<b>fruit</b>", docs, queries, [("q<1>", "d2", 1), ("q<1>", "d<1>", 2), ("q*2*", "d3", 2)])


def test_the_tour_on_a_small_uploaded_dataset_adapts_and_escapes_every_name():
    ds = hostile()
    at = open_app(before=lambda a: (a.session_state.__setitem__("dataset", ds), a.run()))
    assert "fruit" in at.sidebar.markdown[0].value and "5 documents" in at.sidebar.markdown[0].value
    ev = evaluate(ds, Params(dims=4), ["hit@5", "ndcg@5"])
    for n in range(1, tour.N_STEPS + 1):
        at_step(at, n)
        for b in (m.value for m in at.markdown):
            for live in NOT_LIVE:
                assert not re.search(r"(?<!\\)" + re.escape(live), b), (n, live, b)
        assert all(not m.proto.allow_html for m in at.markdown)
        said = bodies(at)
        if n == 1:
            assert metrics(at)["documents"] == "5" and metrics(at)["judgements"] == "3"
        if n == 3:
            assert metrics(at)["BM25, nDCG@5"] == f"{ev.mean('BM25', 'ndcg@5'):.6f}"
        if n == 5:  # the examples adapt: q*2* is BM25's vocabulary gap, and no question is a surface homonymy
            assert "Question q*2*, “" in said and "**vocabulary gap**" in said
            assert any("no failure can be called a **surface homonymy**" in shown(i.value) for i in at.info)
        if n == 9:  # no vectors for this corpus: how to turn dense on, and the link to the Data page
            assert any("Data page" in i.value for i in at.info)
            assert [p.value for p in at.get("page_link")] == ["Data: turn the dense retriever on"]
        if n < tour.N_STEPS:
            at.button(key="tour_next").click().run()
