"""The workspace in the app, as a teacher and a search team use it: an upload is kept, a link names it, a fresh
session (another browser, or after a restart) opening the link shows the same numbers; a link the workspace cannot
follow says so and keeps its settings; the Data page lists the stored datasets to open, rename or delete."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest
from test_page_data import INVENTED_RUN, beir_zip, means, to_overview, upload

from apptest import open_app, shown
from conftest import ROOT
from retrieval.corpus import dataset
from retrieval.store.workspace import open_workspace

pytestmark = pytest.mark.app

FRUIT = dataset.load_beir_zip(beir_zip(), "fruit.zip")


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    """A store of each test's own (a new URL: the app opens it afresh)."""
    monkeypatch.setenv("RETRIEVAL_LAB_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def fresh(query: dict[str, str | list[str]], page: str = "pages/overview.py") -> AppTest:
    """A new session opening a link: app.py with these query parameters, then `page`."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def runs_in(at: AppTest) -> list[str]:
    """The runs the session's URL names (AppTest gives one value as a str, several as a list)."""
    value = at.query_params.get("run", [])
    return [value] if isinstance(value, str) else list(value)


def data_page() -> AppTest:
    return open_app("pages/data.py")


def test_an_upload_is_kept_and_its_link_reopens_it_with_the_same_numbers(home):
    at = data_page()
    upload(at, "data_zip", ("fruit.zip", beir_zip(), "application/zip"))
    assert any("Kept in the workspace as fruit" in shown(i.value) for i in at.info)
    assert at.query_params["data"] == FRUIT.fingerprint
    at.sidebar.slider(key="k1").set_value(1.6).run()
    link = {
        "data": at.query_params["data"],
        "k1": "1.6",
    }  # the browser writes the bound slider's value (AppTest does not)
    before = means(to_overview(at))
    assert at.query_params["data"] == FRUIT.fingerprint  # the page changed: the link still names it
    again = fresh(link)
    assert again.sidebar.markdown[0].value == "**Dataset:** fruit — 6 documents, 3 questions"
    assert means(again) == before and again.sidebar.slider(key="k1").value == 1.6
    (entry,) = open_workspace(f"sqlite:///{home / 'workspace.sqlite'}").datasets()
    assert (entry.id, entry.name, entry.added_by) == (FRUIT.fingerprint, "fruit", "anonymous")


def test_runs_are_kept_with_the_dataset_and_the_link_names_them():
    at = data_page()
    at.text_input(key="rater").set_value("Ana").run()
    upload(at, "data_runs", [("mine.run", INVENTED_RUN, "text/plain")])
    assert runs_in(at) == ["mysys"] and "data" not in at.query_params  # the invented corpus
    before = means(to_overview(at))
    again = fresh({"run": ["mysys"]})
    assert means(again) == before and "mysys" in before
    at.switch_page("pages/data.py").run()
    at.text_input(key="data_run_name:mysys").set_value("ana's system").run()
    assert runs_in(at) == ["ana's system"]
    assert "ana's system" in means(fresh({"run": ["ana's system"]}))


def test_a_link_to_a_dataset_the_workspace_does_not_hold_says_so_and_keeps_its_settings():
    at = fresh({"data": "0123456789abcdef", "k1": "1.6", "run": ["gone"], "dims": "48"})
    (warning,) = at.warning
    text = shown(warning.value)
    assert "names the dataset 0123456789abcdef, which this lab's workspace does not hold" in text
    assert "The link's d = 48 is more than invented allows: d = 27 here." in text  # said, not dropped silently
    assert at.sidebar.slider(key="dims").value == 27
    assert "Showing **invented** (28 documents, 14 questions); the link's other settings are kept." in text
    assert at.query_params["data"] == "0123456789abcdef" and runs_in(at) == ["gone"]
    assert at.query_params["k1"] == "1.6" and at.sidebar.slider(key="k1").value == 1.6
    at.switch_page("pages/tour.py").run()
    assert at.query_params["data"] == "0123456789abcdef" and at.warning  # said on every page, until it changes


def test_a_link_naming_a_run_the_workspace_does_not_hold_opens_the_rest():
    at = data_page()
    upload(at, "data_zip", ("fruit.zip", beir_zip(), "application/zip"))
    again = fresh({"data": FRUIT.fingerprint, "run": ["nowhere"]})
    assert again.sidebar.markdown[0].value == "**Dataset:** fruit — 6 documents, 3 questions"
    assert any("runs the workspace does not hold for fruit: nowhere" in shown(w.value) for w in again.warning)


def test_the_data_page_lists_the_stored_datasets_to_open_rename_and_delete(home):
    at = data_page()
    upload(at, "data_zip", ("fruit.zip", beir_zip(), "application/zip"))
    other = fresh({}, "pages/data.py")  # a second person, on the invented corpus
    table = next(d.value for d in other.dataframe if "by" in d.value.columns)
    assert list(table["name"]) == ["fruit"] and list(table["documents"]) == [6] and list(table["by"]) == ["anonymous"]
    other.button(key="ws_open").click().run()
    assert other.sidebar.markdown[0].value == "**Dataset:** fruit — 6 documents, 3 questions"
    assert other.query_params["data"] == FRUIT.fingerprint
    other.text_input(key=f"ws_rename:{FRUIT.fingerprint}").set_value("class of Monday").run()
    other.button(key="ws_rename_button").click().run()
    assert other.sidebar.markdown[0].value.startswith("**Dataset:** class of Monday")
    assert fresh({"data": FRUIT.fingerprint}).sidebar.markdown[0].value.startswith("**Dataset:** class of Monday")
    assert other.button(key="ws_delete").disabled
    other.checkbox(key=f"ws_sure:{FRUIT.fingerprint}").check().run()
    other.button(key="ws_delete").click().run()
    assert any(
        "Deleted class of Monday from the workspace: it stays in use in this session" in shown(i.value)
        for i in other.info
    )
    assert "data" not in other.query_params
    assert open_workspace(f"sqlite:///{home / 'workspace.sqlite'}").datasets() == []


def test_without_a_store_uploads_still_work_and_say_they_are_not_kept(monkeypatch):
    monkeypatch.setenv("RETRIEVAL_LAB_DATABASE_URL", "postgresql+psycopg://nobody@127.0.0.1:1/none")
    at = data_page()
    assert any("The workspace cannot be opened, so uploads are not kept" in shown(w.value) for w in at.warning)
    upload(at, "data_zip", ("fruit.zip", beir_zip(), "application/zip"))
    assert at.sidebar.markdown[0].value == "**Dataset:** fruit — 6 documents, 3 questions"
    assert any("Not kept in the workspace" in shown(w.value) for w in at.warning)
    assert "data" not in at.query_params


def test_two_raters_grade_the_same_documents_and_each_sees_their_agreement():
    from sklearn.metrics import cohen_kappa_score
    from test_page_judge import as_rater, grade_widgets

    ana = as_rater(open_app("pages/judge.py"), "Ana")
    keys = [w.key for w in grade_widgets(ana)[:3]]
    docs = [k.rsplit(":", 1)[1] for k in keys]
    for key, g in zip(keys, (2, 1, 0)):
        next(w for w in grade_widgets(ana) if w.key == key).set_value(g).run()
    ben = as_rater(open_app("pages/judge.py"), "Ben")
    assert any(shown(c.value) == "Graded by Ana 2." for c in ben.caption)  # read on entry; not counted by default
    for doc, g in zip(docs, (2, 0, 0)):
        next(w for w in grade_widgets(ben) if w.key.endswith(f":{doc}")).set_value(g).run()
    ana.switch_page("pages/overview.py").run()
    ana.switch_page("pages/judge.py").run()  # entering the page reads Ben's grades (a page's rerun reads nothing)
    table = next(d.value for d in ana.dataframe if "Cohen's kappa" in d.value.columns)
    assert list(table["raters"]) == ["Ana and Ben"] and list(table["pairs both graded"]) == [3]
    assert table["Cohen's kappa"][0] == f"{cohen_kappa_score([2, 1, 0], [2, 0, 0]):.3f}"
    spread = next(d.value for d in ana.dataframe if "spread" in d.value.columns)
    assert list(spread["document"]) == [docs[1]] and list(spread["grades"]) == ["Ana 1; Ben 0"]
    ana.switch_page("pages/overview.py").run()
    note = "3 of the 30 judgements in use come from this workspace's 2 raters, combined by the mean, rounded half up"
    assert any(note in shown(c.value) for c in ana.caption)
    ana.switch_page("pages/judge.py").run()
    assert ana.query_params["rule"] == "mean"  # grading turned the raters' grades on: the link says so
    ana.selectbox(key="rule").set_value("majority").run()  # ties: the lowest grade
    from ui import in_use

    assert sorted(g for (_, d), g in ana.session_state[in_use.state.JUDGED_DATASET][1].items()) == [0, 0, 2]


def test_the_workspace_exports_from_the_data_page_and_imports_into_an_empty_one(home, monkeypatch, tmp_path):
    at = data_page()
    upload(at, "data_zip", ("fruit.zip", beir_zip(), "application/zip"))
    button = next(d for d in at.get("download_button") if d.proto.label == "Export the workspace (zip)")
    assert not button.proto.disabled
    from retrieval.store.transfer import export_workspace

    data = export_workspace(open_workspace(f"sqlite:///{home / 'workspace.sqlite'}"))
    monkeypatch.setenv("RETRIEVAL_LAB_HOME", str(tmp_path / "elsewhere"))  # another server, its store empty
    other = data_page()
    upload(other, "ws_import", ("workspace.zip", data, "application/zip"))
    assert any("Imported 1 dataset from workspace.zip" in shown(s.value) for s in other.success)
    table = next(d.value for d in other.dataframe if "by" in d.value.columns)
    assert list(table["name"]) == ["fruit"] and list(table["id"]) == [FRUIT.fingerprint]


def test_uploaded_embeddings_are_kept_and_the_link_names_them():
    from test_page_data_dense import good_npz

    from ui import dense as ui_dense

    at = data_page()
    upload(at, "data_zip", ("fruit.zip", beir_zip(), "application/zip"))
    upload(at, ui_dense.KEY_UPLOAD, [("fruit.npz", good_npz(), "application/octet-stream")])
    next(b for b in at.button if b.label == "Use these embeddings").click().run()
    assert not at.exception and at.query_params["vectors"].startswith("fruit-")
    link = {"data": at.query_params["data"], "vectors": at.query_params["vectors"]}
    before = means(to_overview(at))
    assert "dense" in before
    again = fresh(link)
    assert means(again) == before and not [w for w in again.warning if "link" in shown(w.value)]
    wrong = fresh({**link, "vectors": "nothing-00000000"})
    assert any(
        "names the embeddings nothing-00000000, which could not be opened" in shown(w.value) for w in wrong.warning
    )
    assert "dense" not in means(wrong)


def test_a_link_to_runs_of_the_invented_corpus_no_workspace_holds_says_so():
    at = fresh({"run": ["elsewhere"]})
    assert any(
        "names runs or embeddings the workspace does not hold for invented: elsewhere" in shown(w.value)
        for w in at.warning
    )
    assert at.sidebar.markdown[0].value.startswith("**Dataset:** invented")


def test_a_slider_tick_never_touches_the_store(monkeypatch):
    """Moving the sidebar's sliders on the Overview, the Judge and the Experiments pages reads nothing from the store
    (it is read on a dataset's first use, on entering those pages, and after a write)."""
    import sqlalchemy as sa

    from apptest import move

    statements = []

    def count(conn, cursor, statement, *rest):
        statements.append(statement)

    for page in ("pages/overview.py", "pages/judge.py", "pages/experiments.py"):
        at = open_app(page)
        sa.event.listen(sa.engine.Engine, "before_cursor_execute", count)
        try:
            move(at, "k1", 1.5)
            move(at, "b", 0.5)
            move(at, "k", 3)
        finally:
            sa.event.remove(sa.engine.Engine, "before_cursor_execute", count)
        assert not at.exception and statements == [], (page, statements)


def _two_raters_grade(ana_grades=(2, 1, 2, 1, 0), ben_grades=(1, 2, 1, 1, 0)) -> tuple[AppTest, list[str]]:
    """Ana grades the first five documents the Judge page lists, Ben the same five; Ana's session and the documents."""
    from test_page_judge import as_rater, grade_widgets

    ana = as_rater(open_app("pages/judge.py"), "Ana")
    keys = [w.key for w in grade_widgets(ana)[: len(ana_grades)]]
    for key, g in zip(keys, ana_grades):
        next(w for w in grade_widgets(ana) if w.key == key).set_value(g).run()
    ben = as_rater(open_app("pages/judge.py"), "Ben")
    docs = [k.rsplit(":", 1)[1] for k in keys]
    for doc, g in zip(docs, ben_grades):
        next(w for w in grade_widgets(ben) if w.key.endswith(f":{doc}")).set_value(g).run()
    ana.switch_page("pages/overview.py").run()  # through the app, as the sidebar's page switch does: Ben's grades read
    assert not ana.exception
    return ana, docs


@pytest.mark.slow
def test_a_link_with_the_raters_grades_shows_the_session_s_numbers_in_a_fresh_session(home, capsys, tmp_path):
    """The issue: `judge?...&rule=mean` opened afresh said "mean ... In force" in the selector while the header said
    "0 pairs graded" and every change was +0.000000; the Overview showed the original numbers; and the page switch
    dropped `rule=mean` from the URL. Now the rule is in the link of every page, a fresh session (the server's store
    opened again, as after a restart) applies the workspace's grades by it at once, and its numbers are the making
    session's and the command line's on the dataset with the combined grades added."""
    import json

    from retrieval.cli import main
    from retrieval.evaluation.agreement import combine
    from ui import workspace as ui_workspace

    ana, docs = _two_raters_grade()
    assert ana.query_params["rule"] == "mean"  # the Overview's link keeps the rule the Judge page set
    made = means(ana)
    link = {key: ana.query_params[key] for key in ana.query_params}
    ui_workspace._opened.clear()  # as after a restart: the store opened again
    again = fresh(link)
    assert means(again) == made
    notes = [shown(c.value) for c in again.caption]
    assert (
        "5 of the 32 judgements in use come from this workspace's 2 raters, combined by the mean, rounded half up "
        "(the Judge page's choice, in this page's link)." in notes
    )
    again.switch_page("pages/tour.py").run()
    assert again.query_params["rule"] == "mean"  # every page's link says it

    # the library and the command line, on the invented corpus with the workspace's grades combined by the mean
    store = open_workspace(f"sqlite:///{home / 'workspace.sqlite'}")
    base = dataset.load("invented")
    grades = store.grades(base.fingerprint)
    assert {g.rater for g in grades} == {"Ana", "Ben"} and len(grades) == 10
    combined = combine(((g.query_id, g.doc_id, g.rater, g.grade) for g in grades), "mean")
    assert sorted(d for _, d in combined) == sorted(docs)
    with_grades = base.with_judgements((q, d, g) for (q, d), g in sorted(combined.items()))
    zipped = tmp_path / "graded.zip"
    zipped.write_bytes(dataset.beir_zip(with_grades))
    capsys.readouterr()
    assert main(["evaluate", "--data", str(zipped), "--json", "--metrics", "ndcg@5,recall@5,mrr"]) == 0
    cli = json.loads(capsys.readouterr().out)["systems"]
    for system in ("BM25", "LSA", "weighted", "RRF"):
        assert made[system]["nDCG@5"] == pytest.approx(cli[system]["ndcg@5"], abs=1e-12)
        assert made[system]["recall@5"] == pytest.approx(cli[system]["recall@5"], abs=1e-12)
        assert made[system]["MRR"] == pytest.approx(cli[system]["mrr"], abs=1e-12)
    capsys.readouterr()
    main(["evaluate", "--json", "--metrics", "ndcg@5"])
    original = json.loads(capsys.readouterr().out)["systems"]
    assert any(original[s]["ndcg@5"] != pytest.approx(cli[s]["ndcg@5"], abs=1e-9) for s in original)

    # the Judge page of the fresh session: header, selector and the means agree
    judge = fresh(link, "pages/judge.py")
    assert judge.selectbox(key="rule").value == "mean"
    header = shown(judge.caption[0].value)
    assert (
        "5 pairs graded in this workspace (10 grades by 2 raters); 5 in force, combined by the mean, rounded half "
        "up (the rule below, in the link)." in header
    )
    change = next(d.value for d in judge.dataframe if "change" in d.value.columns).set_index("system")
    for system in ("BM25", "LSA", "weighted", "RRF"):
        assert change.loc[system, "after"] == pytest.approx(cli[system]["ndcg@5"], abs=1e-12)
        assert change.loc[system, "before"] == pytest.approx(original[system]["ndcg@5"], abs=1e-12)
    assert any(d.proto.label == "The raters' combined (5)" for d in judge.get("download_button"))


def test_the_rule_the_link_names_rules_every_page_and_a_wrong_one_is_said():
    """A fresh Overview with `rule=median` says the raters' grades are asked for and that there are none; the
    Judge page's header and selector say the same rule; a rule there is none of is said, the default kept; the
    default leaves the rule out of the link."""
    median = fresh({"rule": "median"})
    assert (
        "The raters' grades are asked for, combined by the median, rounded half up (this page's link), but this "
        "workspace holds none for this dataset: the loaded judgements alone."
        in [shown(c.value) for c in median.caption]
    )
    median.switch_page("pages/judge.py").run()
    assert median.selectbox(key="rule").value == "median" and median.query_params["rule"] == "median"
    assert "0 pairs graded in this workspace (0 grades by 0 raters); 0 in force, combined by the median" in shown(
        median.caption[0].value
    )
    median.selectbox(key="rule").set_value("original").run()
    assert "rule" not in median.query_params
    assert "none counted: the rule below is the original judgements only" in shown(median.caption[0].value)
    wrong = fresh({"rule": "avg"})
    assert any(
        "The link's rule = avg is none of the grades rules (original, mean, median, majority): original here."
        in shown(w.value)
        for w in wrong.warning
    )
    assert means(wrong) == means(fresh({}))


def test_the_overview_says_grades_are_left_out_by_the_original_rule():
    ana, _ = _two_raters_grade((2,), (1,))
    ana.switch_page("pages/judge.py").run()
    ana.selectbox(key="rule").set_value("original").run()
    ana.switch_page("pages/overview.py").run()
    assert "rule" not in ana.query_params
    assert (
        "The loaded judgements alone: this workspace's 2 grades by 2 raters are left out, the rule being the "
        "original judgements only (the Judge page can count them)." in [shown(c.value) for c in ana.caption]
    )
