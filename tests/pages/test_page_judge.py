"""The Judge page, entered through app.py: the holes in the judgements of every system's top k, grading one,
the means that follow on this page and on the others, the qrels downloads read back by the project's parser."""

from __future__ import annotations

import pytest
from test_page_bounded import PAGE_BYTES, long_docs, longest_cell, page_bytes  # noqa: F401 - a fixture, its checks
from test_page_data import downloads  # noqa: F401 - the fixture recording the deferred downloads
from test_page_hostile import DOC_IDS, assert_inert, hostile  # noqa: F401 - the hostile upload and its check

from apptest import frame_with, move, open_app, shown
from retrieval.core.params import Params
from retrieval.corpus import embeddings
from retrieval.corpus.dataset import load, parse_qrels
from retrieval.engine.engine import Engine
from retrieval.retrievers import dense
from ui import judge as ui
from ui import state, workspace
from ui.format import FULL_CHARS, clip

pytestmark = pytest.mark.app

K = 5  # the sidebar's default cutoff


@pytest.fixture(scope="module")
def invented_rankings():
    """Every system the app ranks on the invented corpus at the defaults (BM25, LSA, dense, the fusions)."""
    ds = load("invented")
    aligned = embeddings.align(dense.embeddings_of(ds), ds)
    return ds, Engine(ds).rankings(Params(), (aligned,))


def expected_holes(ds, ranks, k=K) -> dict[tuple[str, str], dict[str, int]]:
    """(question, document) -> {system: rank} for each corpus document in a top k that no judgement names."""
    judged = {(q, d) for q, d, _ in ds.judgements()}
    out: dict = {}
    for name, r in ranks.items():
        for q, qid in enumerate(ds.query_ids):
            for rank, did in enumerate(r.top_ids(ds, q, k), 1):
                if (qid, did) not in judged:
                    out.setdefault((qid, did), {})[name] = rank
    return out


def recall(ds, ranking, qid, k=K) -> float:
    rel = {d for q, d, g in ds.judgements() if q == qid and g > 0}
    return len(rel & set(ranking.top_ids(ds, ds.query_index[qid], k))) / len(rel)


def grade_widgets(at):
    return [w for w in at.get("button_group") if w.key and w.key.startswith(ui.KEY_GRADE)]


def as_rater(at, name: str = "Ana"):
    """Type the rater's name, as a person does once per session before grading."""
    at.text_input(key=state.RATER).set_value(name).run()
    assert not at.exception
    return at


def in_use(at, ds) -> dict[tuple[str, str], int]:
    """The workspace raters' grades of the dataset as the session holds them, (question, document) -> grade."""
    return {(g.query_id, g.doc_id): g.grade for g in at.session_state[state.GRADES].get(ds.fingerprint, ())}


def test_the_holes_of_every_system_s_top_k_are_listed_the_most_first(invented_rankings):
    ds, ranks = invented_rankings
    at = open_app("pages/judge.py")
    holes = expected_holes(ds, ranks)
    assert holes  # the invented corpus's judgements leave documents of the top 5 unjudged
    assert shown(at.caption[0].value).startswith(f"invented: {len(holes)} unjudged documents in some system's top {K}")
    summary = at.dataframe[0].value.set_index("system")
    assert list(summary.index) == list(ranks) == ["BM25", "LSA", "dense", "weighted", "RRF"]
    for s in ranks:
        assert summary.loc[s, "unjudged in the top k"] == sum(s in by for by in holes.values())
    per_q = {qid: sum(q == qid for q, _ in holes) for qid in ds.query_ids}
    most = max(per_q.values())
    first = min((qid for qid in ds.query_ids if per_q[qid] == most), key=ds.query_index.get)
    assert ds.query_ids[at.selectbox(key=ui.KEY_Q).value] == first
    listed = {w.key.rsplit(":", 1)[1] for w in grade_widgets(at)}
    mine = {d for q, d in holes if q == first}
    assert listed == mine if len(mine) <= ui.PER_PAGE else listed < mine
    bodies = [shown(m.value) for m in at.markdown]
    for d in listed:  # each with the systems that rank it, at their ranks
        by = " · ".join(f"{s} #{r}" for s, r in sorted(holes[(first, d)].items(), key=lambda x: (x[1], x[0])))
        assert any(b.endswith(f". {d}** · ranked by {by}") for b in bodies), (d, by)


def test_a_grade_changes_the_means_here_and_on_every_page_by_the_formula(invented_rankings):
    ds, ranks = invented_rankings
    at = as_rater(open_app("pages/judge.py"))
    move(at, state.METRIC, "recall")
    widget = grade_widgets(at)[0]
    qid = ds.query_ids[at.selectbox(key=ui.KEY_Q).value]
    did = widget.key.rsplit(":", 1)[1]
    by = expected_holes(ds, ranks)[(qid, did)]
    widget.set_value(2).run()
    assert not at.exception
    assert in_use(at, ds) == {(qid, did): 2}
    # recall@5 of the question: (relevant found + 1) / (relevant + 1) for a system ranking it in its top 5,
    # found / (relevant + 1) for another; the mean over the 14 questions moves by the difference / 14
    rel = sum(1 for q, _, g in ds.judgements() if q == qid and g > 0)
    table = at.dataframe[-2].value.set_index("system")
    judged = at.dataframe[-1].value.set_index(
        "system"
    )  # judged@5: one more judged place in the top 5 of those ranking it
    for s in ranks:
        assert judged.loc[s, "after"] - judged.loc[s, "before"] == pytest.approx(
            (s in by) / K / ds.evaluated.size, abs=1e-12
        )
    for s, r in ranks.items():
        found = recall(ds, r, qid) * rel
        change = ((found + (s in by)) / (rel + 1) - found / rel) / ds.evaluated.size
        before = sum(recall(ds, r, q) for q in ds.query_ids) / ds.evaluated.size
        assert table.loc[s, "before"] == pytest.approx(before, abs=1e-12)
        assert table.loc[s, "after"] == pytest.approx(before + change, abs=1e-12)
        assert change != 0
    at.switch_page("pages/overview.py").run()
    overview = at.dataframe[0].value
    for s in ranks:
        assert overview.loc[s, f"recall@{K}"] == pytest.approx(table.loc[s, "after"], abs=1e-12)
    at.switch_page("pages/judge.py").run()  # taken back: the loaded judgements' means again
    next(w for w in grade_widgets(at) if w.key == widget.key).set_value(None).run()
    assert in_use(at, ds) == {}
    for table in (at.dataframe[-2].value, at.dataframe[-1].value):
        assert (table["before"] == table["after"]).all()


def test_the_downloads_read_back_to_the_loaded_judgements_and_the_new_ones(downloads):  # noqa: F811
    ds = load("invented")
    at = as_rater(open_app("pages/judge.py"))
    widgets = grade_widgets(at)
    qid = ds.query_ids[at.selectbox(key=ui.KEY_Q).value]
    given = {}
    for w, g in zip(widgets[:3], (2, 0, 1)):
        key = w.key
        next(x for x in grade_widgets(at) if x.key == key).set_value(g).run()
        given[(qid, key.rsplit(":", 1)[1])] = g
    files = {}
    for d in at.get("download_button"):
        make, name = downloads[d.proto.deferred_file_id]
        files[name] = make()
    assert set(files) == {"invented_qrels.txt", "invented_new_qrels.txt", "invented_Ana_qrels.txt"}
    new = [(q, d, g) for (q, d), g in given.items()]
    assert sorted(parse_qrels(files["invented_new_qrels.txt"].encode(), "new")) == sorted(new)
    assert sorted(parse_qrels(files["invented_Ana_qrels.txt"].encode(), "Ana")) == sorted(new)  # one rater: the same
    every = parse_qrels(files["invented_qrels.txt"].encode(), "all")
    assert sorted(every) == sorted(ds.judgements() + new) and len(every) == len(ds.qrels) + 3


def test_the_session_s_bound_on_new_grades_is_said_and_kept(monkeypatch):
    monkeypatch.setattr(workspace, "MAX_GIVEN", 1)
    at = as_rater(open_app("pages/judge.py"))
    grade_widgets(at)[0].set_value(1).run()
    assert any("has given 1 grades, the most it may" in shown(w.value) for w in at.warning)
    rest = grade_widgets(at)[1:]
    assert rest and all(w.disabled for w in rest) and not grade_widgets(at)[0].disabled


def test_the_judge_page_is_inert_with_hostile_names(hostile):  # noqa: F811
    at = hostile
    at.switch_page("pages/judge.py").run()
    assert_inert(at, "judge")
    bodies = [shown(m.value) for m in at.markdown]
    assert any(b.split("** · ")[0].split(". ", 1)[-1] in DOC_IDS for b in bodies)  # a hostile id, read as text
    as_rater(at, "**bold** <b>x</b> [link](http://x)")
    grade_widgets(at)[0].set_value(2).run()
    assert_inert(at, "judge")


def test_the_judge_page_stays_bounded_with_long_documents(long_docs):  # noqa: F811
    at = long_docs
    at.switch_page("pages/judge.py").run()
    assert not at.exception
    assert all(len(m.value) <= 2 * ui.SNIPPET_CHARS + 200 for m in at.markdown)
    assert longest_cell(at) <= 600 and page_bytes(at) < PAGE_BYTES / 2 and not at.text  # every full text closed
    ds = at.session_state[state.DATASET]
    qid = ds.query_ids[at.selectbox(key=ui.KEY_Q).value]
    did = grade_widgets(at)[0].key.rsplit(":", 1)[1]
    at.session_state[f"{ui.KEY_FULL}{ds.fingerprint}:{qid}:{did}"] = True  # a person opens one
    at.run()
    assert [t.value for t in at.text] == [clip(ds.doc_texts[ds.doc_index[did]], FULL_CHARS)]
    assert f"{len(ds.doc_texts[ds.doc_index[did]]):,} characters; only the first {FULL_CHARS:,} are shown." in [
        shown(c.value) for c in at.caption
    ]
    assert page_bytes(at) < PAGE_BYTES


def test_the_data_page_counts_the_new_grade_and_says_its_command_line_leaves_it_out(invented_rankings):
    ds, ranks = invented_rankings
    at = open_app("pages/data.py")
    before = frame_with(at, "unjudged").set_index("system")["unjudged"]
    at.switch_page("pages/judge.py").run()
    as_rater(at)
    widget = grade_widgets(at)[0]
    qid, did = ds.query_ids[at.selectbox(key=ui.KEY_Q).value], widget.key.rsplit(":", 1)[1]
    widget.set_value(1).run()
    at.switch_page("pages/data.py").run()
    assert not at.exception
    after = frame_with(at, "unjudged").set_index("system")["unjudged"]
    by = expected_holes(ds, ranks)[(qid, did)]
    assert (before - after).to_dict() == {s: int(s in by) for s in ranks}  # one unjudged fewer where it was
    captions = [shown(c.value) for c in at.caption]
    assert (
        "It measures the loaded judgements: the 1 grades given on the Judge page are not in its files "
        "(download them there, as qrels)." in captions
    )


def test_every_page_opens_with_new_grades():
    from ui.router import PAGES

    at = as_rater(open_app("pages/judge.py"))
    for w, g in zip(grade_widgets(at)[:2], (2, 1)):
        key = w.key
        next(x for x in grade_widgets(at) if x.key == key).set_value(g).run()
    n = len(load("invented").qrels) + 2
    for path, _, _ in PAGES:
        at.switch_page(path).run()
        assert not at.exception, (path, [e.value for e in at.exception])
        assert len(at.session_state[state.JUDGED_DATASET][2].qrels) == n


def test_pages_of_a_question_s_documents_and_taking_every_grade_back():
    """At k = 20 the question with the most holes has more than a page of them: the second page lists the rest;
    at k = 5 one page is left, listed from its first document. Taking every grade back empties the store and
    the controls."""
    ds = load("invented")
    at = as_rater(open_app("pages/judge.py", query={"k": "20"}))
    first = {w.key for w in grade_widgets(at)}
    assert len(first) == ui.PER_PAGE
    at.number_input(key=ui.KEY_PAGE).set_value(2).run()
    second = {w.key for w in grade_widgets(at)}
    assert second and not second & first
    grade_widgets(at)[0].set_value(0).run()
    move(at, state.K, 5)  # one page now: its documents from the first
    assert not at.exception and any(shown(m.value).startswith("**1. ") for m in at.markdown)
    at.button(key="judge_forget").click().run()
    assert in_use(at, ds) == {}
    assert grade_widgets(at) and all(w.value is None for w in grade_widgets(at))


def test_after_a_grade_every_page_naming_the_dataset_says_it_was_edited():
    """The issue: after a grade the sidebar, the Overview and Tour step 1 still said "invented — 28 documents", and
    step 1 counted 28 judgements without saying one was a grade given here."""
    at = as_rater(open_app("pages/judge.py"))
    grade_widgets(at)[0].set_value(1).run()
    loaded = len(load("invented").qrels)
    edited = "invented · edited: 1 grade"
    for path in ("pages/overview.py", "pages/per_question.py", "pages/diagnosis.py", "pages/tour.py"):
        at.switch_page(path).run()
        assert not at.exception, (path, [e.value for e in at.exception])
        assert shown(at.sidebar.markdown[0].value).startswith(f"**Dataset:** {edited} — 28 documents"), path
        said = "\n".join(shown(x.value) for x in (*at.caption, *at.markdown))
        assert f"**{edited}**" in said, path
    # Tour step 1: the judgements in use, and how many of them were given here
    assert {m.label: m.value for m in at.metric}["judgements"] == str(loaded + 1)
    assert (
        f"Of the {loaded + 1} judgements in use, {loaded} came with the data and 1 is a grade given on the Judge page."
        in "\n".join(shown(m.value) for m in at.markdown)
    )
    at.switch_page("pages/judge.py").run()  # taken back: the name is the loaded dataset's again
    next(w for w in grade_widgets(at) if w.value is not None).set_value(None).run()
    at.switch_page("pages/overview.py").run()
    assert shown(at.sidebar.markdown[0].value).startswith("**Dataset:** invented — 28 documents")
    assert "edited" not in "\n".join(shown(c.value) for c in at.caption)
