"""The Playground, entered through app.py: a typed question's top 10 for every system, q02 edited with
"refund", documents judged on the fly, hostile and empty text."""

from __future__ import annotations

import math

import pytest
from test_page_data import upload
from test_page_hostile import HOSTILE_ZIP, QUERIES, QUERY_IDS, assert_inert, hostile_zip, live_markup

from apptest import move, open_app, shown
from retrieval.core.params import Params
from retrieval.corpus import dataset, embeddings
from retrieval.engine import adhoc, engine
from retrieval.retrievers import dense
from ui import state

pytestmark = pytest.mark.app

PAGE = "pages/playground.py"
SYSTEMS = ["BM25", "LSA", "dense", "weighted", "RRF"]  # on the invented corpus (its vectors ship)


@pytest.fixture(scope="module")
def invented_engine():
    ds = dataset.load("invented")
    return ds, engine.for_dataset(ds), (embeddings.align(dense.embeddings_of(ds), ds),)


def typed(at, text: str):
    at.text_input(key=state.PG_TEXT).set_value(text).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def frame_with(at, *columns):
    found = [d.value for d in at.dataframe if set(columns) <= set(d.value.columns)]
    assert found, columns
    return found[0]


def judged_ranks(at):
    """The ranks of the judged documents: an HTML table (st.table), by document."""
    found = [t.value for t in at.table if {"document", "grade", "BM25", "LSA"} <= set(t.value.columns)]
    assert len(found) == 1, [t.value.columns for t in at.table]
    return found[0].set_index("document")


def top_grid(at):
    return next(d.value for d in at.dataframe if list(d.value.columns) == SYSTEMS)


def cards(at) -> dict[str, tuple[str, str | None]]:
    return {m.label: (m.value, m.proto.delta or None) for m in at.metric}


def test_a_typed_question_shows_every_system_s_top_10(invented_engine):
    ds, eng, sources = invented_engine
    at = open_app(PAGE)
    assert at.title[0].value == "Playground"
    assert any("Type a question" in i.value for i in at.info)
    typed(at, "support order days")
    grid = top_grid(at)
    one, ranks, _ = eng.adhoc("support order days", Params(), sources)
    assert list(ranks) == SYSTEMS
    for s in SYSTEMS:
        ids = ranks[s].top_ids(one, 0, 10)
        assert [c for c in grid[s] if c] == ids, s
    assert [t.label for t in at.tabs] == SYSTEMS
    bodies = [shown(m.value) for m in at.markdown]
    first = ranks["BM25"].top_ids(one, 0, 1)[0]
    assert any(b.startswith(f"**1. {first}** · BM25 ") for b in bodies)  # the BM25 tab's first document, its scores
    assert {v for v, _ in cards(at).values()} == {"—"}  # nothing judged: no metric yet, the cards there all the same
    assert any(c.value.startswith("— : no document is judged relevant yet") for c in at.caption)


def test_the_sidebar_moves_the_typed_question_s_lists(invented_engine):
    ds, eng, sources = invented_engine
    at = open_app(PAGE)
    typed(at, "refund support order")
    move(at, state.K1, 0.0)
    move(at, state.ALPHA, 1.0)
    one, ranks, _ = eng.adhoc("refund support order", Params(k1=0.0, alpha=1.0), sources)
    grid = top_grid(at)
    for s in SYSTEMS:
        assert [c for c in grid[s] if c] == ranks[s].top_ids(one, 0, 10), s


def ndcg(ranks_grades: dict[str, tuple[int, int]], k: int) -> float:
    """nDCG@k with linear gain written out: (document -> (rank, grade)); the ideal from every judged grade."""
    dcg = sum(g / math.log2(r + 1) for r, g in ranks_grades.values() if 0 < r <= k and g > 0)
    ideal = sorted((g for _, g in ranks_grades.values() if g > 0), reverse=True)[:k]
    return dcg / sum(g / math.log2(i + 2) for i, g in enumerate(ideal))


@pytest.fixture(scope="module")
def q02():
    at = open_app(PAGE)
    at.selectbox(key=state.PG_FROM).set_value("q02").run()
    assert not at.exception
    return at


def test_q02_with_refund_changes_the_ranks_as_the_ad_hoc_scoring_says(q02, invented_engine):
    ds, eng, sources = invented_engine
    at = q02
    assert at.text_input(key=state.PG_TEXT).value == "can I get my money back"
    assert any("None of its words" in w.value and "vocabulary gap" in w.value for w in at.warning)
    judged = judged_ranks(at)
    assert judged.loc["refund1", "BM25"] == "not found"  # the same for the typed text and q02: written once
    assert cards(at)["BM25"] == ("0.0000", "0.0000")
    typed(at, "can I get my money back refund")
    one, ranks, _ = eng.adhoc("can I get my money back refund", Params(), sources, adhoc.judgements_of(ds, 1), "q02")
    judged = judged_ranks(at)
    for s in SYSTEMS:
        for d in ("refund1", "refund2", "refund3"):
            r = int(ranks[s].judged_rank[list(one.qrels.doc_id).index(d)])
            assert judged.loc[d, s].split(" ← ")[0] == (str(r) if r else "not found"), (s, d)
    assert judged.loc["refund1", "BM25"] == "1 ← not found"
    value = ndcg({"refund1": (1, 2), "refund2": (0, 2), "refund3": (0, 1)}, 5)
    assert cards(at)["BM25"] == (f"{value:.4f}", f"+{value:.4f}")
    metrics = frame_with(at, "system", "question", "nDCG@5")
    bm = metrics[metrics["system"] == "BM25"].set_index("question")
    assert bm.loc["typed", "nDCG@5"] == pytest.approx(value, abs=1e-12) and bm.loc["original", "nDCG@5"] == 0.0


def test_marking_a_document_relevant_changes_the_metric_by_the_formula(q02, invented_engine):
    ds, eng, sources = invented_engine
    at = q02
    if at.text_input(key=state.PG_TEXT).value != "can I get my money back refund":
        typed(at, "can I get my money back refund")
    editor = at.data_editor[0]
    rows = list(editor.value["document"])
    one, ranks, _ = eng.adhoc("can I get my money back refund", Params(), sources, adhoc.judgements_of(ds, 1), "q02")
    lsa_top = ranks["LSA"].top_ids(one, 0, 5)
    new = next(d for d in lsa_top if d not in ("refund1", "refund2", "refund3"))  # a wrong document in LSA's top 5
    before = {
        d: (int(ranks["LSA"].judged_rank[i]), int(g)) for i, (d, g) in enumerate(zip(one.qrels.doc_id, one.qrels.grade))
    }
    assert float(cards(at)["LSA"][0]) == pytest.approx(ndcg(before, 5), abs=5e-5)
    at.session_state[editor.key] = {
        "edited_rows": {rows.index(new): {"relevant": True}},
        "added_rows": [],
        "deleted_rows": [],
    }
    at.run()
    assert not at.exception
    assert at.session_state[state.PG_JUDGED][new] == 1
    after = {**before, new: (lsa_top.index(new) + 1, 1)}
    expected = ndcg(after, 5)
    assert expected != pytest.approx(ndcg(before, 5))
    metrics = frame_with(at, "system", "question", "nDCG@5")
    lsa = metrics[metrics["system"] == "LSA"].set_index("question")
    assert lsa.loc["typed", "nDCG@5"] == pytest.approx(expected, abs=1e-12)
    editor = at.data_editor[0]
    assert bool(editor.value.set_index("document").loc[new, "relevant"]) is True  # the table shows the mark
    assert f"{new} ✓ 1" in list(top_grid(at)["LSA"])
    at.button(key="pg_reset").click().run()  # back to q02's own judgements
    assert new not in at.session_state[state.PG_JUDGED]
    lsa = frame_with(at, "system", "question", "nDCG@5")
    assert lsa[lsa["system"] == "LSA"].set_index("question").loc["typed", "nDCG@5"] == pytest.approx(
        ndcg(before, 5), abs=1e-12
    )


def test_hostile_text_is_shown_escaped_and_nothing_breaks():
    at = open_app(PAGE)
    typed(at, "**zzx** <script>alert(1)</script> \x1b[31mred\x1b[0m [l](http://e.x) $k$ :red[r] refund")
    assert_inert(at, "playground, hostile text")
    assert any("script" in shown(c.value) and "alert" in shown(c.value) for c in at.caption)  # named, as text


def test_an_empty_or_unknown_or_too_long_question_says_so():
    at = open_app(PAGE)
    typed(at, "zyzzyva quux")
    assert any("None of its words" in w.value and "zyzzyva" in w.value for w in at.warning)
    assert any("returns nothing" in c.value for c in at.caption)
    typed(at, "what is it")
    assert any("No word is left after the stop words" in w.value for w in at.warning)
    typed(at, "   ")
    assert any("Type a question" in i.value for i in at.info)
    at.session_state[state.PG_TEXT] = "refund " * 200  # 1,400 characters: the text box keeps its first 1,000
    at.run()
    assert not at.exception
    assert len(at.text_input(key=state.PG_TEXT).value) == adhoc.MAX_CHARS
    assert any(f"at its limit of {adhoc.MAX_CHARS:,} characters" in shown(w.value) for w in at.warning)
    assert [c for c in top_grid(at)["BM25"] if c]  # and it is ranked


def test_a_hostile_dataset_s_questions_in_the_playground_are_inert():
    at = open_app("pages/data.py")
    upload(at, "data_zip", (HOSTILE_ZIP, hostile_zip(), "application/zip"))
    at.switch_page(PAGE).run()
    assert not at.exception
    for qid, text in zip(QUERY_IDS, QUERIES):
        at.selectbox(key=state.PG_FROM).set_value(qid).run()
        assert at.text_input(key=state.PG_TEXT).value == text
        assert_inert(at, f"playground, question {qid}")
        ranks = next(t.value for t in at.table if "document" in t.value.columns)  # the ranks of the judged documents
        cells = [*map(str, ranks.columns), *(v for c in ranks.columns for v in ranks[c] if isinstance(v, str))]
        assert not [c for c in cells if live_markup(c)], cells
    assert [t.label for t in at.tabs] == ["BM25", "LSA", "weighted", "RRF"]  # no vectors for an upload
    assert any("dense once its vectors are there" in shown(c.value) for c in at.caption)


def above_the_judging_table(at) -> list[str]:
    """The kinds of the page's elements above the judging table, in order (a metric card counted as one)."""
    editor = at.data_editor[0].proto.id
    out = []

    def walk(node) -> bool:
        if getattr(getattr(node, "proto", None), "id", None) == editor:
            return True
        out.append(node.type)
        return any(walk(node.children[i]) for i in sorted(getattr(node, "children", {}) or {}))

    assert walk(at.main)
    return out


def test_a_first_tick_changes_nothing_above_the_judging_table():
    """A typed question has no judgement: the cards are there with a dash, and the first tick fills them in
    without adding anything above the table (the table once jumped some 560 px under the pointer)."""
    at = open_app(PAGE)
    typed(at, "refund after two weeks")
    before = above_the_judging_table(at)
    assert {v for v, _ in cards(at).values()} == {"—"} and before.count("metric") == len(SYSTEMS)
    rows = list(at.data_editor[0].value["document"])
    at.session_state[at.data_editor[0].key] = {
        "edited_rows": {0: {"relevant": True}},
        "added_rows": [],
        "deleted_rows": [],
    }
    at.run()
    assert not at.exception and at.session_state[state.PG_JUDGED] == {rows[0]: 1}
    assert above_the_judging_table(at) == before
    assert any(v[0].isdigit() for v, _ in cards(at).values())
    assert any(c.value == "1 document judged relevant: tick or untick in the table below." for c in at.caption)
    assert "table" not in before and list(judged_ranks(at).index) == [
        rows[0]
    ]  # the ranks of the judged: below the table


def test_marks_beyond_the_bound_are_refused_with_a_message(monkeypatch):
    from ui import playground

    monkeypatch.setattr(playground, "MAX_MARKS", 1)
    at = open_app(PAGE)
    typed(at, "support order days")
    for attempt in range(2):
        editor = at.data_editor[0]
        rows = list(editor.value["document"])
        at.session_state[editor.key] = {
            "edited_rows": {attempt: {"relevant": True}},
            "added_rows": [],
            "deleted_rows": [],
        }
        at.run()
        assert not at.exception
    assert at.session_state[state.PG_JUDGED] == {rows[0]: 1}  # the second mark is refused, the first kept
    assert any("At most 1 documents can be judged here" in w.value for w in at.warning)


def test_the_typed_question_and_its_judgements_are_there_after_another_page(q02):
    at = q02
    typed(at, "can I get my money back refund")
    judged = dict(at.session_state[state.PG_JUDGED])
    at.switch_page("pages/overview.py").run()
    at.switch_page(PAGE).run()
    assert not at.exception
    assert at.text_input(key=state.PG_TEXT).value == "can I get my money back refund"
    assert at.selectbox(key=state.PG_FROM).value == "q02" and dict(at.session_state[state.PG_JUDGED]) == judged
    assert cards(at)["BM25"][0] != "0.0000"  # ranked again, with q02's judgements


def test_long_documents_are_shown_cut(monkeypatch):
    """2 MB documents: the Playground's texts are cut (tables at TEXT_CHARS, up close at CLOSE_CHARS) and the page stays small."""
    from test_page_bounded import DOCS, PAGE_BYTES, QRELS, QUERIES, beir_zip, page_bytes

    from ui import playground

    monkeypatch.setattr(dense, "corpus_tokens", lambda ds, sample=None: 3600.0)  # the Data page's estimate: an hour
    monkeypatch.setattr(dense, "_RATE", [1.0])  # the rate in force: 1 s a token
    at = open_app("pages/data.py")
    upload(at, "data_zip", ("long.zip", beir_zip(DOCS, QUERIES, QRELS), "application/zip"))
    at.switch_page(PAGE).run()
    at.selectbox(key=state.PG_FROM).set_value("q3").run()
    assert not at.exception
    cells = [str(v) for df in at.dataframe for col in df.value.columns for v in df.value[col]]
    assert max(map(len, cells)) <= playground.TEXT_CHARS
    bodies = [m.value for m in at.markdown]
    assert any("cherry" in b for b in bodies) and max(map(len, bodies)) < 4 * playground.CLOSE_CHARS
    assert page_bytes(at) < PAGE_BYTES


@pytest.mark.parametrize("k", [5, 3])
def test_the_metrics_are_at_the_sidebar_s_k(k, invented_engine):
    """The issue: the Playground showed hit@3 beside nDCG@5 while the sidebar said k = 5."""
    ds, eng, sources = invented_engine
    at = open_app(PAGE, query={"k": str(k)})
    at.selectbox(key=state.PG_FROM).set_value("q12").run()  # BM25 puts misc4 second: every metric says something
    assert not at.exception, [e.value for e in at.exception]
    frame = frame_with(at, "system", "question")
    assert [c for c in frame.columns if "@" in c] == [f"nDCG@{k}", f"hit@{k}", f"recall@{k}"]
    one, ranks, _ = eng.adhoc(
        ds.query_texts[ds.query_index["q12"]], Params(), sources, adhoc.judgements_of(ds, ds.query_index["q12"]), "q12"
    )
    typed_ = adhoc.evaluate(one, ranks, [f"hit@{k}", f"ndcg@{k}"])
    bm = frame[frame["system"] == "BM25"].set_index("question")
    assert bm.loc["typed", f"hit@{k}"] == typed_.values["BM25"][f"hit@{k}"][0]
    assert bm.loc["typed", f"nDCG@{k}"] == pytest.approx(typed_.values["BM25"][f"ndcg@{k}"][0], abs=1e-12)
