"""The Compare page, entered through app.py: two systems, the paired bootstrap on the sidebar's metric, a plain verdict."""

from __future__ import annotations

import pytest

from apptest import large_corpus, move, open_app

pytestmark = pytest.mark.app

PAGE = "pages/compare.py"
MINUS = "\u2212"


def figures(at) -> dict[str, str]:
    """The page's headline figures, label -> shown value."""
    return {m.label: m.value for m in at.metric}


def verdict(at) -> str:
    """The verdict line (an info when the systems can't be told apart, a success when one wins)."""
    shown = [e.value for e in (*at.info, *at.success)]
    assert len(shown) == 1, shown
    return shown[0]


@pytest.fixture(scope="module")
def at():
    return open_app(PAGE)


def test_opens_without_exception_with_bm25_and_lsa(at):
    assert not at.exception
    assert at.title[0].value == "Compare"
    assert at.selectbox(key="cmp_a").value == "BM25"
    assert at.selectbox(key="cmp_b").value == "LSA"
    assert at.selectbox(key="cmp_a").options == ["BM25", "LSA", "dense", "weighted", "RRF"]


def test_defaults_show_the_articles_bootstrap(at):
    shown = figures(at)
    assert shown[f"mean difference, A {MINUS} B"] == "+0.012"
    assert shown["95% interval"] == f"[{MINUS}0.081, +0.107]"
    assert shown["A: BM25"] == "0.691" and shown["B: LSA"] == "0.679"
    text = verdict(at)
    assert "can't be told apart" in text and "nDCG@5" in text
    assert f"[{MINUS}0.081, +0.107]" in text and "holds zero" in text
    assert len(at.info) == 1 and not at.success


def test_both_charts_are_drawn(at):
    assert len(at.get("arrow_vega_lite_chart") or at.get("vega_lite_chart")) == 2


def test_moving_k_changes_the_figures():
    at = open_app(PAGE)
    move(at, "k", 10)
    assert not at.exception
    shown = figures(at)
    assert shown[f"mean difference, A {MINUS} B"] != "+0.012"
    assert shown["95% interval"] != f"[{MINUS}0.081, +0.107]"
    assert "nDCG@10" in verdict(at)


def test_changing_the_metric_changes_the_figures():
    at = open_app(PAGE)
    move(at, "metric", "MRR")
    assert not at.exception
    shown = figures(at)
    assert (shown[f"mean difference, A {MINUS} B"], shown["95% interval"]) != ("+0.012", f"[{MINUS}0.081, +0.107]")
    assert "MRR" in verdict(at)


def test_a_clear_winner_gets_a_plain_verdict():
    at = open_app(PAGE)
    move(at, "k", 10)
    at.selectbox(key="cmp_a").set_value("RRF").run()
    assert not at.exception
    assert at.success and not at.info
    text = verdict(at)
    assert "RRF is better than LSA" in text and "by 0.038" in text and "nDCG@10" in text
    low, high = figures(at)["95% interval"].strip("[]").split(", ")
    assert low.startswith("+") and high.startswith("+")


def test_the_same_system_twice_is_an_info_not_an_exception():
    at = open_app(PAGE)
    at.selectbox(key="cmp_b").set_value("BM25").run()
    assert not at.exception
    assert "two different systems" in verdict(at)
    assert not at.metric and not (at.get("arrow_vega_lite_chart") or at.get("vega_lite_chart"))


def test_the_verdict_names_the_better_system_whichever_side_it_is_on():
    at = open_app(PAGE)
    move(at, "k", 10)
    at.selectbox(key="cmp_a").set_value("LSA").run()
    at.selectbox(key="cmp_b").set_value("RRF").run()
    assert not at.exception
    assert "RRF is better than LSA" in verdict(at) and "by 0.038" in verdict(at)
    assert figures(at)[f"mean difference, A {MINUS} B"] == f"{MINUS}0.038"


def test_an_uploaded_run_can_be_compared():
    from retrieval.corpus import dataset

    at = open_app(PAGE)
    ds = dataset.load("invented")
    lines = [f"{q} Q0 {ds.doc_ids[0]} 1 1.0 mine" for q in ds.query_ids]
    at.session_state["runs"] = {"mine": dataset.parse_run("\n".join(lines).encode(), "mine.run", "mine")}
    at.run()
    assert at.selectbox(key="cmp_a").options == ["BM25", "LSA", "dense", "weighted", "RRF", "mine"]
    at.selectbox(key="cmp_b").set_value("mine").run()
    assert not at.exception
    assert "BM25 is better than mine" in verdict(at)


def test_while_lsa_s_svd_is_slow_to_fit_the_page_says_so_then_compares(monkeypatch):
    """A large corpus's first LSA fit (the prefix path forced, fresh engines): the page waits for it under a spinner
    naming it, then shows its figures."""
    import streamlit

    said = []
    real = streamlit.spinner

    def spinner(text="", **kw):
        said.append(text)
        return real(text, **kw)

    at = open_app(
        PAGE, before=lambda _: (large_corpus(monkeypatch), monkeypatch.setattr(streamlit, "spinner", spinner))
    )
    assert not at.exception and figures(at)
    assert any(t.startswith("Fitting LSA's SVD at d = 6 on 28 documents") for t in said), said


# ------------------------------------------------------------------ every system at once: the published table


def table_of(at) -> list[list[str]]:
    """The comparison table's rows as a person reads them (escapes removed), cells split on the unescaped pipes."""
    import re

    from apptest import shown

    body = next(m.value for m in at.markdown if m.value.startswith("| | system |"))
    rows = [line for i, line in enumerate(body.splitlines()) if i != 1]  # the alignment row left out
    split = [re.split(r"(?<!\\)\|", line)[1:-1] for line in rows]
    return [[shown(cell).strip() for cell in row] for row in split]


def statement(at) -> str:
    return next(c.value for c in at.caption if c.value.startswith("Bold: the best mean"))


def test_the_table_lists_every_system_on_the_sidebar_s_metric(at):
    rows = table_of(at)
    assert rows[0] == ["", "system", "nDCG@5"]
    assert [r[:2] for r in rows[1:]] == [["a", "BM25"], ["b", "LSA"], ["c", "dense"], ["d", "weighted"], ["e", "RRF"]]
    assert [r[2] for r in rows[1:]] == [
        "0.6912",
        "0.6791",
        "**0.9313**",
        "0.7340",
        "0.7374",
    ]  # 14 questions: no p < 0.05
    said = statement(at)
    assert "Fisher's randomization test (two-sided, all 16,384 sign flips" in said
    assert "Holm's step-down, over all 10 pairs of systems" in said and "p < 0.05" in said
    assert at.selectbox(key="cmp_test").value == "randomization" and at.selectbox(key="cmp_level").value == 0.05
    assert at.multiselect(key="cmp_more_metrics").value == []


def test_the_test_the_level_and_more_metrics_are_chosen_and_kept_across_a_cutoff():
    at = open_app(PAGE)
    at.selectbox(key="cmp_test").set_value("t-test").run()
    at.selectbox(key="cmp_level").set_value(0.1).run()
    at.multiselect(key="cmp_more_metrics").set_value(["hit@5", "mrr"]).run()
    assert not at.exception
    assert table_of(at)[0] == ["", "system", "nDCG@5", "hit@5", "MRR"]
    assert "paired t-test (two-sided" in statement(at) and "p < 0.1" in statement(at)
    move(at, "k", 10)
    assert not at.exception
    assert at.multiselect(key="cmp_more_metrics").value == ["hit@10", "mrr"]
    assert table_of(at)[0] == ["", "system", "nDCG@10", "hit@10", "MRR"]
    at.selectbox(key="cmp_b").set_value("BM25").run()  # the pair's info: the table stays
    assert not at.exception and "two different systems" in verdict(at) and table_of(at)[0][2] == "nDCG@10"


def test_a_run_named_with_markup_is_escaped_and_beaten_by_every_system():
    from retrieval.corpus import dataset

    name = "*x* | <b>run</b> $1$"
    at = open_app(PAGE)
    ds = dataset.load("invented")
    lines = [f"{q} Q0 {ds.doc_ids[0]} 1 1.0 mine" for q in ds.query_ids]
    at.session_state["runs"] = {name: dataset.parse_run("\n".join(lines).encode(), "mine.run", name)}
    at.run()
    assert not at.exception
    body = next(m.value for m in at.markdown if m.value.startswith("| | system |"))
    assert r"\*x\* \| \<b\>run\<\/b\> \$1\$" in body
    rows = table_of(at)
    assert all(len(r) == 3 for r in rows)  # the | in the name split no cell
    assert rows[-1][:2] == ["f", name]
    assert all(r[2].endswith("ᶠ") for r in rows[1:-1]), rows  # each built-in system beats the run
    assert "over all 15 pairs of systems" in statement(at)


def test_the_t_test_of_a_single_question_is_a_warning_not_an_exception(tmp_path):
    import json

    from retrieval.corpus import dataset

    (tmp_path / "qrels").mkdir()
    (tmp_path / "corpus.jsonl").write_text(
        "".join(
            json.dumps({"_id": f"d{i}", "text": t}) + "\n"
            for i, t in enumerate(["refunds and money back", "nightly backups", "export notes"])
        )
    )
    (tmp_path / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "money back"}) + "\n")
    (tmp_path / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td0\t1\n")
    at = open_app(PAGE)
    at.session_state["dataset"] = dataset.load(str(tmp_path))
    at.run()
    at.selectbox(key="cmp_test").set_value("t-test").run()
    assert not at.exception
    from apptest import shown

    assert any("t-test: needs at least 2 questions" in shown(w.value) for w in at.warning)


# ------------------------------------------------------- any metric the command line takes, and the table's files


@pytest.fixture
def downloads(monkeypatch):
    """The data behind every deferred download button of the next runs, by deferred file id."""
    from streamlit.runtime.media_file_manager import MediaFileManager
    from streamlit.testing.v1 import app_test as app_test_module

    made: dict[str, tuple] = {}

    class Recording(MediaFileManager):
        def add_deferred(self, data_callable, mimetype, coordinates, file_name=None, *, element_id=""):
            file_id = super().add_deferred(data_callable, mimetype, coordinates, file_name, element_id=element_id)
            made[file_id] = (data_callable, file_name)
            return file_id

    monkeypatch.setattr(app_test_module, "MediaFileManager", Recording)
    return made


def test_every_metric_the_command_line_takes_is_offered(at):
    from retrieval.evaluation import metrics
    from ui import compare

    options = at.multiselect(key="cmp_more_metrics").options
    offered = [m for m in metrics.names_at((*compare.CUTOFFS, 5)) if m != "ndcg@5"]
    assert len(options) == len(offered) and "MAP@100" in options and "nDCG@10" in options and "bpref" in options
    for name in offered:
        metrics.parse(name)  # each one the parser takes


def test_the_page_makes_the_command_line_s_table_and_its_files(downloads, capsys):
    """Unticking the sidebar's metric and choosing nDCG@10 and MAP@100 gives `compare --metrics ndcg@10,map@100`:
    the same rows on the page, and the same LaTeX, Markdown and CSV, byte for byte, in the downloads."""
    from retrieval import cli

    at = open_app(PAGE)
    at.checkbox(key="cmp_with_sidebar").uncheck().run()
    assert any("Choose a metric for the table" in i.value for i in at.info)
    at.multiselect(key="cmp_more_metrics").set_value(["ndcg@10", "map@100"]).run()
    at.selectbox(key="cmp_test").set_value("t-test").run()
    assert not at.exception
    assert table_of(at)[0] == ["", "system", "nDCG@10", "MAP@100"]
    page_rows = next(m.value for m in at.markdown if m.value.startswith("| | system |")).splitlines()[2:]
    files = {}
    for d in at.get("download_button"):
        make, name = downloads[d.proto.deferred_file_id]
        files[name] = make()
    assert sorted(files) == ["invented_comparison.csv", "invented_comparison.md", "invented_comparison.tex"]
    said = next(c.value for c in at.caption if c.value.startswith("Each file is what"))
    assert "`python -m retrieval compare --metrics ndcg@10,map@100 --test t-test --alpha 0.05`" in said
    capsys.readouterr()
    for form, ext in (("--latex", "tex"), ("--markdown", "md"), ("--csv", "csv")):
        assert (
            cli.main(["compare", "--metrics", "ndcg@10,map@100", "--test", "t-test", "--embeddings", "e5-small", form])
            == 0
        )
        out = capsys.readouterr().out
        assert files[f"invented_comparison.{ext}"] == out, form
    cli_rows = files["invented_comparison.md"].splitlines()[2 : 2 + len(page_rows)]
    assert page_rows == cli_rows  # the page's rows are the command line's: means, bold, superscripts
    assert r"\begin{tabular}{llr@{}lr@{}l}" in files["invented_comparison.tex"]


def test_a_typed_metric_is_taken_and_a_wrong_one_refused_in_one_message():
    from apptest import shown

    at = open_app(PAGE)
    at.multiselect(key="cmp_more_metrics").set_value(["NDCG@15"]).run()
    assert not at.exception and at.multiselect(key="cmp_more_metrics").value == ["ndcg@15"]
    assert table_of(at)[0] == ["", "system", "nDCG@5", "nDCG@15"]
    at.multiselect(key="cmp_more_metrics").set_value(["ndcg@15", "rprec@5", "nonsense"]).run()
    assert not at.exception
    errors = [shown(e.value) for e in at.error]
    assert errors == [
        (
            "More metrics: metric 'rprec@5' takes no cutoff (its depth is the question's number of "
            "relevant documents): write rprec"
        )
    ]
    assert at.multiselect(key="cmp_more_metrics").value == ["ndcg@15"]
    assert table_of(at)[0] == ["", "system", "nDCG@5", "nDCG@15"]  # the table as it was
    at.run()
    assert not at.error  # said once


def test_a_metric_at_its_own_cutoff_stays_when_k_moves():
    at = open_app(PAGE)
    at.multiselect(key="cmp_more_metrics").set_value(["hit@5", "map@100", "ndcg@10"]).run()
    move(at, "k", 10)
    assert not at.exception
    assert at.multiselect(key="cmp_more_metrics").value == ["hit@10", "map@100"]  # ndcg@10 is now the sidebar's
    assert table_of(at)[0] == ["", "system", "nDCG@10", "hit@10", "MAP@100"]


def test_the_cutoff_follows_and_the_typed_names_are_checked_without_streamlit():
    from ui import compare

    assert compare.follow_cutoff(["hit@5", "mrr", "map@100", "rprec"], 5, 10) == ["hit@10", "mrr", "map@100", "rprec"]
    assert compare.follow_cutoff(["hit@5", "hit@10"], 5, 10) == ["hit@10"]
    assert compare.follow_cutoff(["hit@5"], None, 10) == ["hit@5"]
    assert compare.checked(["NDCG@10", "ndcg@10", "map"]) == (["ndcg@10", "map"], None)
    assert compare.checked(["P@10", "R-prec", "MAP@100", "nDCG_exp@3"]) == (
        ["precision@10", "rprec", "map@100", "ndcg_exp@3"],
        None,
    )
    good, refused = compare.checked(["mrr", "hit", "x@1"])
    assert good == ["mrr"] and refused == "metric 'hit' needs a cutoff, e.g. hit@10"
    assert compare.table_names("ndcg@5", False, ["mrr"]) == ("mrr",)
    assert compare.table_names("ndcg@5", True, ["ndcg@5", "mrr"]) == ("ndcg@5", "mrr")
    assert "ndcg@37" in compare.more_metrics("ndcg@5", 5, ["ndcg@37"])
