"""The Data page, entered through app.py as a person would: uploads, preview, statistics, downloads.

AppTest in Streamlit 1.67 uploads files (`file_uploader.set_value((name, bytes, mime))`), so the page's
own upload callbacks run, then app.py draws the sidebar and the page.
"""

from __future__ import annotations

import csv
import io
import json
import shlex
import zipfile

import numpy as np
import pytest
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1 import app_test as app_test_module

from apptest import frame_with, large_corpus, shown
from conftest import ROOT
from retrieval import cli
from retrieval.corpus import dataset
from retrieval.engine.engine import evaluate
from retrieval.evaluation import experiment

pytestmark = pytest.mark.app

DOCS = [
    ("d1", "apple pie with cinnamon"),
    ("d2", "an apple tree in the orchard"),
    ("d3", "pear tree pruning"),
    ("d4", "banana bread recipe"),
    ("d5", "cherry jam and apple jelly"),
    ("d6", "<b>bold</b> tags <script>x</script>"),
]
QUERIES = [("q1", "apple tree"), ("q2", "bread"), ("q3", "jam")]
QRELS = [("q1", "d2", 2), ("q1", "d1", 1), ("q2", "d4", 1), ("q3", "d5", 1), ("q3", "ghost", 1)]


def beir_zip(docs=DOCS, queries=QUERIES, qrels=QRELS, broken_line: int | None = None) -> bytes:
    """A small BEIR zip (inside a folder), optionally with a broken JSON line in corpus.jsonl at `broken_line`."""
    lines = [json.dumps({"_id": i, "title": "", "text": t}) for i, t in docs]
    if broken_line is not None:
        lines.insert(broken_line - 1, '{"_id": "x", "text": ')
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w") as z:
        z.writestr("fruit/corpus.jsonl", "\n".join(lines) + "\n")
        z.writestr("fruit/queries.jsonl", "\n".join(json.dumps({"_id": i, "text": t}) for i, t in queries) + "\n")
        z.writestr(
            "fruit/qrels/test.tsv", "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{g}\n" for q, d, g in qrels)
        )
    return b.getvalue()


def open_data() -> AppTest:
    """app.py, then the Data page."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    at.switch_page("pages/data.py").run()
    assert not at.exception
    return at


def upload(at: AppTest, key: str, files) -> AppTest:
    at.file_uploader(key=key).set_value(files).run()
    assert not at.exception
    return at


def to_overview(at: AppTest) -> AppTest:
    """From the Data page to the Overview."""
    at.switch_page("pages/overview.py").run()
    assert not at.exception and at.title[0].value == "Overview"
    return at


def means(at: AppTest) -> dict[str, dict[str, float]]:
    df = at.dataframe[0].value
    return {s: {c: float(df.loc[s, c]) for c in df.columns} for s in df.index}


def report_downloads(at: AppTest) -> list:
    """The page's download buttons of the dataset's results (the workspace's export left out)."""
    return [d for d in at.get("download_button") if d.key != "ws_export"]


def metric_values(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


@pytest.fixture
def downloads(monkeypatch):
    """The data behind every deferred download button of the next runs, by deferred file id."""
    made: dict[str, tuple] = {}

    class Recording(MediaFileManager):
        def add_deferred(self, data_callable, mimetype, coordinates, file_name=None, *, element_id=""):
            file_id = super().add_deferred(data_callable, mimetype, coordinates, file_name, element_id=element_id)
            made[file_id] = (data_callable, file_name)
            return file_id

    monkeypatch.setattr(app_test_module, "MediaFileManager", Recording)
    return made


def test_the_page_shows_the_invented_corpus():
    at = open_data()
    assert at.title[0].value == "Data"
    assert "**invented**, 28 documents, 14 questions" in at.caption[0].value
    m = metric_values(at)
    assert m["documents"] == "28" and m["questions"] == "14" and int(m["vocabulary"]) > 100
    preview = frame_with(at, "text")
    assert list(preview.columns) == ["id", "text"] and preview.iloc[0]["id"] == "pricing1"
    unjudged = frame_with(at, "share unjudged")
    assert list(unjudged["system"]) == ["BM25", "LSA", "dense", "weighted", "RRF"]
    assert ((unjudged["share unjudged"] >= 0) & (unjudged["share unjudged"] <= 1)).all()
    labels = [d.proto.label for d in report_downloads(at)]
    assert labels == ["Metrics (CSV)", "Per question (CSV)", "JSON report", "BM25", "LSA", "dense", "weighted", "RRF"]
    assert not at.error


def test_a_beir_zip_upload_replaces_the_dataset_everywhere():
    at = open_data()
    before = means(to_overview(AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()))
    upload(at, "data_zip", ("fruit.zip", beir_zip(), "application/zip"))
    assert "Loaded fruit: 6 documents, 3 questions, 5 judgements" in shown(at.success[0].value)
    assert any(
        "1 judgement names 1 document that is not in" in shown(w.value) and "ghost" in shown(w.value)
        for w in at.warning
    )
    assert "**fruit**, 6 documents, 3 questions" in at.caption[0].value
    assert metric_values(at)["documents"] == "6"
    assert at.sidebar.markdown[0].value == "**Dataset:** fruit — 6 documents, 3 questions"  # in the same run
    # the text is shown as plain text in a table, never as HTML
    assert frame_with(at, "text").iloc[5]["text"] == "<b>bold</b> tags <script>x</script>"
    to_overview(at)
    assert at.sidebar.markdown[0].value == "**Dataset:** fruit — 6 documents, 3 questions"
    after = means(at)
    assert after != before
    ds = dataset.load_beir_zip(beir_zip(), "fruit.zip")
    ev = evaluate(ds, experiment.Params(dims=5), ["ndcg@5"])
    assert after["BM25"]["nDCG@5"] == pytest.approx(ev.mean("BM25", "ndcg@5"), abs=1e-6)


def test_a_broken_upload_names_file_and_line_and_the_old_dataset_stays():
    at = open_data()
    upload(at, "data_zip", ("broken.zip", beir_zip(broken_line=3), "application/zip"))
    assert len(at.error) == 1
    assert "broken.zip/fruit/corpus.jsonl:3: broken JSON" in shown(at.error[0].value)
    assert "Still using invented" in shown(at.info[0].value)
    assert "**invented**, 28 documents" in at.caption[0].value
    # a good upload, then a broken one: the good one stays
    upload(at, "data_zip", ("fruit.zip", beir_zip(), "application/zip"))
    upload(at, "data_zip", ("worse.zip", b"not a zip at all", "application/zip"))
    assert shown(at.error[0].value) == "worse.zip: not a zip file"
    assert "**fruit**, 6 documents" in at.caption[0].value
    at.run()  # a rerun neither re-processes the upload nor forgets the message
    assert shown(at.error[0].value) == "worse.zip: not a zip file"
    assert to_overview(at).sidebar.markdown[0].value.startswith("**Dataset:** fruit")


def test_an_upload_that_fails_inside_the_app_is_not_blamed_on_the_file(monkeypatch):
    """A failure of the app's own (here the EOFError a damaged numba cache raised) while loading a good upload: the
    message says the app failed, never that the user's file "could not be read"."""
    from ui import in_use

    built = in_use.for_dataset

    def broken(ds, *args, **kwargs):
        if ds.n_docs == 5:  # the upload's (the invented corpus the page opened with is built as before)
            raise EOFError("Ran out of input")
        return built(ds, *args, **kwargs)

    monkeypatch.setattr(in_use, "for_dataset", broken)
    at = upload(open_data(), "data_zip", ("good.zip", beir_zip(docs=DOCS[:5]), "application/zip"))
    said = shown(at.error[0].value)
    assert said.startswith("good.zip: not loaded: the app failed while loading it (EOFError: Ran out of input)"), said
    assert "could not be read" not in said and "not a fault found in the file" in said


def test_a_dataset_of_one_question_and_one_judgement_is_said_in_the_singular():
    """'1 question, 1 judgement' on the Data page, its sidebar and the statistics' notices (it said '1 questions')."""
    import re

    one = re.compile(r"(?<![\d,.])1 (?:documents|questions|judgements|lines|terms)\b")
    at = upload(
        open_data(),
        "data_zip",
        (
            "one.zip",
            beir_zip(docs=DOCS[:2], queries=[("q1", "apple tree")], qrels=[("q1", "d2", 1)]),
            "application/zip",
        ),
    )
    said = [shown(e.value) for kind in ("success", "info", "caption", "markdown", "warning") for e in getattr(at, kind)]
    said += [shown(e.value) for e in at.sidebar.markdown]
    text = "\n".join(said)
    assert "Loaded one: 2 documents, 1 question, 1 judgement" in text
    assert "2 documents, 1 question" in shown(at.sidebar.markdown[0].value)
    assert not one.findall(text), one.findall(text)


def test_an_upload_is_processed_once_not_on_every_rerun():
    at = open_data()
    upload(at, "data_zip", ("fruit.zip", beir_zip(), "application/zip"))
    at.session_state["dataset"] = None  # what the sidebar's "Back to the invented corpus" does
    at.run()
    assert "**invented**" in at.caption[0].value  # the file still in the uploader did not come back
    assert not at.success  # and its messages are not shown for the invented corpus
    at.file_uploader(key="data_zip").set_value(None).run()
    upload(at, "data_zip", ("fruit.zip", beir_zip(), "application/zip"))  # the same file, uploaded again
    assert "**fruit**" in at.caption[0].value


def test_three_files_make_a_dataset():
    at = open_data()
    docs_csv = "id,title,text\n" + "".join(f'{i},,"{t}"\n' for i, t in DOCS[:5])
    queries = "".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in QUERIES)
    qrels = "".join(f"{q} 0 {d} {g}\n" for q, d, g in QRELS[:4])
    upload(at, "data_docs", ("docs.csv", docs_csv.encode(), "text/csv"))
    assert "Waiting for: questions, judgements." in [c.value for c in at.caption]
    assert "**invented**" in at.caption[0].value
    upload(at, "data_queries", ("questions.jsonl", queries.encode(), "application/json"))
    upload(at, "data_qrels", ("qrels.txt", qrels.encode(), "text/plain"))
    assert "**uploaded**, 5 documents, 3 questions, 4 judgements" in at.caption[0].value
    upload(at, "data_qrels", ("qrels2.txt", b"q1 d1\n", "text/plain"))
    assert "qrels2.txt:1: expected 'qid 0 docid grade'" in shown(at.error[0].value)
    assert "**uploaded**, 5 documents" in at.caption[0].value


INVENTED_RUN = (
    b"q01 Q0 pricing1 1 9.5 mysys\nq01 Q0 refund1 2 3 mysys\nq02 Q0 refund1 1 4 mysys\nq02 Q0 refund2 2 4 mysys\n"
)


def test_a_run_upload_adds_a_system_which_can_be_renamed_and_removed():
    at = open_data()
    upload(
        at,
        "data_runs",
        [("mine.run", INVENTED_RUN, "text/plain"), ("bad.run", b"q01 Q0 pricing1 1 high x\n", "text/plain")],
    )
    assert "Added the run mysys from mine.run: 2 questions, 4 lines." in [shown(s.value) for s in at.success]
    assert any(shown(e.value) == "bad.run:1: the score 'high' is not a number" for e in at.error)
    assert any("12 questions have no line in the run" in shown(w.value) for w in at.warning)
    assert at.text_input(key="data_run_name:mysys").value == "mysys"
    assert [d.proto.label for d in report_downloads(at)][-1] == "mysys"
    at.text_input(key="data_run_name:mysys").set_value("my system").run()
    assert at.text_input(key="data_run_name:my system").value == "my system"
    at.text_input(key="data_run_name:my system").set_value("BM25").run()  # taken: refused
    assert (
        "keeps its name" in shown(at.error[0].value)
        and at.text_input(key="data_run_name:my system").value == "my system"
    )
    m = means(to_overview(at))
    assert list(m) == ["BM25", "LSA", "dense", "weighted", "RRF", "my system"]
    run = dataset.parse_run(INVENTED_RUN, "mine.run")
    inv = dataset.load("invented")
    ev = evaluate(inv, experiment.Params(), ["mrr"], runs=(run,))
    assert m["my system"]["MRR"] == pytest.approx(ev.mean("mysys", "mrr"), abs=1e-6)
    at.switch_page("pages/data.py").run()
    assert at.text_input(key="data_run_name:my system").value == "my system"  # runs outlive the uploader's files
    upload(at, "data_runs", [("copy.run", INVENTED_RUN.replace(b"mysys", b"BM25"), "text/plain")])
    assert at.text_input(key="data_run_name:copy").value == "copy"  # its tag is a built-in system's name: the file stem
    at.button(key="data_run_remove:my system").click().run()
    assert "my system" not in [d.proto.label for d in report_downloads(at)]


def test_a_run_that_does_not_fit_is_refused_and_a_new_dataset_drops_old_runs():
    at = open_data()
    upload(at, "data_runs", [("other.run", b"x1 Q0 d1 1 1 t\n", "text/plain")])
    assert shown(at.error[0].value).startswith("other.run: not added: none of its 1 question (x1")
    upload(at, "data_runs", [("mine.run", INVENTED_RUN, "text/plain")])
    upload(at, "data_zip", ("fruit.zip", beir_zip(), "application/zip"))
    assert any(shown(w.value).startswith("Run mysys was removed: none of its 2 questions") for w in at.warning)
    assert [d.proto.label for d in report_downloads(at)][3:] == ["BM25", "LSA", "weighted", "RRF"]  # fruit: no vectors


def cached_bytes(name: str | None = None) -> int:
    """The bytes Streamlit's data cache holds for the function `name` (e.g. "parse_beir_zip"; None: every function),
    as its own statistics count them (what a refused 40 M-character upload left behind: +170 MB)."""
    from streamlit.runtime.caching import cache_data_api

    stats = cache_data_api._data_caches.get_stats().get("cache_memory_bytes", [])
    return sum(s.byte_length for s in stats if name is None or s.cache_name.endswith(f".{name}"))


@pytest.fixture
def no_parse_cached():
    """Streamlit's cached parses emptied before and after the test."""
    from ui import in_use

    parses = (in_use.parse_beir_zip, in_use.parse_files, in_use.parse_run)
    for parse in parses:
        parse.clear()
    yield
    for parse in parses:
        parse.clear()


def test_an_upload_refused_by_the_text_limit_leaves_nothing_cached(monkeypatch, no_parse_cached):
    monkeypatch.setenv("RETRIEVAL_LAB_MAX_CHARS", "5000")  # this zip holds 10,800 characters
    at = open_data()
    big = [(f"d{i}", "apple " * 600) for i in range(1, 4)]
    upload(at, "data_zip", ("big.zip", beir_zip(docs=big, qrels=[("q1", "d1", 1)]), "application/zip"))
    assert "characters of text" in shown(at.error[0].value) and "**invented**" in at.caption[0].value
    assert cached_bytes("parse_beir_zip") == 0
    docs = "id,text\n" + "".join(f"{d},{t}\n" for d, t in big)
    upload(at, "data_docs", ("docs.csv", docs.encode(), "text/csv"))
    upload(at, "data_queries", ("questions.jsonl", b'{"_id": "q1", "text": "apple"}\n', "application/json"))
    upload(at, "data_qrels", ("qrels.txt", b"q1 0 d1 1\n", "text/plain"))
    assert "characters of text" in shown(at.error[0].value) and "**invented**" in at.caption[0].value
    assert cached_bytes("parse_files") == 0
    monkeypatch.delenv("RETRIEVAL_LAB_MAX_CHARS")
    upload(at, "data_zip", ("fruit.zip", beir_zip(), "application/zip"))  # accepted: its parse is kept, and counted
    assert "**fruit**" in at.caption[0].value and cached_bytes("parse_beir_zip") > 0


def test_an_upload_refused_after_parsing_leaves_nothing_cached(monkeypatch, no_parse_cached):
    """Refused when its engine is built (as a memory budget would refuse it): the parse kept is dropped."""
    from retrieval.core.errors import InputError
    from ui import in_use

    build = in_use.for_dataset

    def refuse(ds, *args, **kwargs):
        if ds.name == "fruit":
            raise InputError("fruit: refused by the engine")
        return build(ds, *args, **kwargs)

    monkeypatch.setattr(in_use, "for_dataset", refuse)
    at = open_data()
    upload(at, "data_zip", ("fruit.zip", beir_zip(), "application/zip"))
    assert [shown(e.value) for e in at.error] == ["fruit: refused by the engine"]
    assert cached_bytes("parse_beir_zip") == 0


def test_a_run_or_embeddings_refused_leave_nothing_cached(no_parse_cached):
    at = open_data()
    upload(at, "data_runs", [("other.run", b"x1 Q0 d1 1 1 t\n", "text/plain")])
    assert shown(at.error[0].value).startswith("other.run: not added: none of its 1 question ")
    assert cached_bytes("parse_run") == 0
    upload(at, "data_runs", [("mine.run", INVENTED_RUN, "text/plain")])  # accepted: kept, and counted
    assert cached_bytes("parse_run") > 0
    from ui import dense as ui_dense

    before = cached_bytes()
    wide = io.BytesIO()
    np.savez(
        wide,
        doc_ids=np.array([f"d{i}" for i in range(28)]),
        doc_vectors=np.ones((28, 5000), np.float32),
        query_ids=np.array(["q01"]),
        query_vectors=np.ones((1, 5000), np.float32),
    )
    upload(at, ui_dense.KEY_UPLOAD, [("wide.npz", wide.getvalue(), "application/octet-stream")])
    next(b for b in at.button if b.label == "Use these embeddings").click().run()
    assert "wide.npz: array doc_vectors: vectors of 5,000 dimensions" in shown(at.error[-1].value)
    assert cached_bytes() == before  # embeddings are never cached by Streamlit: nothing to drop


def test_downloads_hold_the_metrics_the_runs_and_the_command_line_report(downloads, capsys, tmp_path):
    at = open_data()
    upload(at, "data_runs", [("mine.run", INVENTED_RUN, "text/plain")])
    files = {}
    for d in report_downloads(at):
        make, name = downloads[d.proto.deferred_file_id]
        files[name] = make()
    assert sorted(files) == sorted(
        [
            "invented_metrics.csv",
            "invented_per_question.csv",
            "invented_report.json",
            "invented_BM25.run",
            "invented_LSA.run",
            "invented_dense.run",
            "invented_weighted.run",
            "invented_RRF.run",
            "invented_mysys.run",
        ]
    )
    rows = list(csv.DictReader(io.StringIO(files["invented_metrics.csv"])))
    assert [r["system"] for r in rows] == ["BM25", "LSA", "dense", "weighted", "RRF", "mysys"]
    assert list(rows[0]) == ["system", "hit@5", "recall@5", "mrr", "ndcg@5"]
    assert round(float(rows[0]["ndcg@5"]), 6) == 0.691171  # the article's BM25 nDCG@5
    per_q = list(csv.DictReader(io.StringIO(files["invented_per_question.csv"])))
    assert len(per_q) == 6 * 14 and list(per_q[0])[:3] == ["system", "qid", "first_relevant_rank"]
    bm25_run = files["invented_BM25.run"].splitlines()
    assert bm25_run[0].split()[:4] == ["q01", "Q0", "pricing1", "1"] and bm25_run[0].split()[5] == "BM25"
    assert files["invented_mysys.run"].splitlines()[0] == "q01 Q0 pricing1 1 9.5 mysys"
    # the JSON report is what the command line shown on the page prints (run file written where it says)
    report = json.loads(files["invented_report.json"])
    assert list(report) == ["dataset", "params", "metrics", "systems", "per_query", "bootstrap", "warnings"]
    assert report["bootstrap"]["metric"] == "ndcg@5" and (report["bootstrap"]["a"], report["bootstrap"]["b"]) == (
        "BM25",
        "LSA",
    )
    command = at.code[0].value
    args = shlex.split(command)
    assert args[:4] == ["python", "-m", "retrieval", "evaluate"] and args[-1] == "--json"
    assert args[args.index("--run") + 1] == "mysys=mine.run"
    capsys.readouterr()
    tmp_run = tmp_path / "mine.run"
    tmp_run.write_bytes(INVENTED_RUN)
    args[args.index("--run") + 1] = f"mysys={tmp_run}"
    assert cli.main(args[3:]) == 0
    assert json.loads(capsys.readouterr().out) == report


def test_downloads_follow_the_sliders(downloads):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["k"] = "3"
    at.query_params["metric"] = "MRR"
    at.run()
    assert at.sidebar.slider(key="k").value == 3 and at.sidebar.selectbox(key="metric").value == "MRR"
    at.switch_page("pages/data.py").run()
    report = None
    for d in report_downloads(at):
        make, name = downloads[d.proto.deferred_file_id]
        if name.endswith(".json"):
            report = json.loads(make())
    assert report["metrics"] == ["hit@3", "recall@3", "mrr", "ndcg@3"]
    assert report["bootstrap"]["metric"] == "mrr"
    assert "--metrics hit@3,recall@3,mrr,ndcg@3 --bootstrap mrr" in at.code[0].value


def test_a_large_upload_fits_lsa_in_the_background_and_says_so(monkeypatch):
    """A corpus on the prefix path (PREFIX_ABOVE lowered, fresh engines): the upload evaluates the systems that need no
    SVD, starts LSA's fit in the engine's thread and says so; the Overview then shows every system, BM25's as the
    plain evaluation gives it."""
    large_corpus(monkeypatch)
    at = upload(open_data(), "data_zip", ("fruit.zip", beir_zip(), "application/zip"))
    assert "Loaded fruit: 6 documents" in shown(at.success[0].value)
    note = shown(at.info[0].value)
    assert "LSA's SVD on 6 documents started in the background at upload" in note and "LSA, weighted, RRF" in note
    after = means(to_overview(at))
    assert {"BM25", "LSA", "weighted", "RRF"} <= set(after)
    ds = dataset.load_beir_zip(beir_zip(), "fruit.zip")
    ev = evaluate(ds, experiment.Params(dims=5), ["ndcg@5"])
    assert after["BM25"]["nDCG@5"] == pytest.approx(ev.mean("BM25", "ndcg@5"), abs=1e-6)


@pytest.mark.slow
def test_while_lsa_is_fitted_the_data_page_is_drawn_with_the_systems_that_need_no_fit_then_every_system(monkeypatch):
    """A large upload (the prefix path forced) whose SVD is held back: the Data page does not wait for it. Its table
    of unjudged documents lists the systems that need no fit, a caption names the others, the downloads say they
    follow; once the fit is in, the next run shows every system and the download buttons."""
    import threading

    from retrieval.retrievers import lsa

    large_corpus(monkeypatch)
    release, real = threading.Event(), lsa.fit

    def held(*a, **k):
        if k.get("block"):
            assert threading.current_thread().name.startswith("lsa-fit"), "the page itself fitted"
            release.wait(60)
        return real(*a, **k)

    monkeypatch.setattr(lsa, "fit", held)
    at = upload(open_data(), "data_zip", ("fruit.zip", beir_zip(), "application/zip"))
    at.run()  # the page as it is drawn after the upload's run, the fit still held
    assert not at.exception
    unjudged = at.dataframe[-1].value
    assert "BM25" in set(unjudged["system"]) and not {"LSA", "weighted", "RRF"} & set(unjudged["system"])
    assert any(
        c.value.startswith("LSA, weighted, RRF follow here once LSA's SVD on 6 documents is fitted") for c in at.caption
    )
    assert any("The downloads" in i.value and "follow here" in i.value for i in at.info)
    assert not report_downloads(at)
    release.set()
    for t in [t for t in threading.enumerate() if t.name.startswith("lsa-fit")]:
        t.join(60)
    at.run()
    assert not at.exception
    assert {"BM25", "LSA", "weighted", "RRF"} <= set(at.dataframe[-1].value["system"])
    assert not any("The downloads" in i.value for i in at.info) and report_downloads(at)


def test_a_data_page_drawn_while_lsa_was_fitted_runs_again_even_when_the_fit_ends_before_the_page_does(monkeypatch):
    """The page asks `cache.waiting` once and passes it to its parts and to `follow_fit`: a fit ending between two
    parts (here: right after the page asked) leaves no table waiting for a poller that was never set. The poller
    finds the fit in and runs the page again at once: every system in the table, the download buttons."""
    from ui import cache

    asked = []

    def ends_after_the_first_question(ds=None, params=None):
        asked.append(1)
        return ("LSA", "weighted", "RRF") if len(asked) == 1 else ()

    at = open_data()
    monkeypatch.setattr(cache, "waiting", ends_after_the_first_question)
    at.run()
    assert not at.exception
    assert {"BM25", "LSA", "weighted", "RRF"} <= set(at.dataframe[-1].value["system"])
    assert not any("The downloads" in i.value for i in at.info) and report_downloads(at)
