"""Judgements alone in the app: a qrels file and run files uploaded on the Data page with no documents. The pages
that need only judgements and runs score the runs as `evaluate --qrels --run` scores them; the pages that read text
say in one sentence that they need documents."""

from __future__ import annotations

import json
import shlex

import numpy as np
import pytest
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1 import app_test as app_test_module

from apptest import shown
from conftest import ROOT
from retrieval import cli
from ui import state

pytestmark = pytest.mark.app

N_QUESTIONS = 12


def qrels_and_runs(seed: int = 7) -> tuple[bytes, dict[str, bytes]]:
    """Invented TREC qrels (a few judged documents per question, grades 0-2) and two runs with distinct scores over
    judged and unjudged documents; no document text anywhere."""
    rng = np.random.default_rng(seed)
    qrels, runs = [], {"alpha": [], "beta": []}
    for q in range(N_QUESTIONS):
        judged = rng.choice(40, size=6, replace=False)
        qrels += [f"Q{q} 0 D{d} {int(rng.integers(0, 3)) if i else 2}" for i, d in enumerate(judged)]
        for name in runs:
            docs = rng.choice(40, size=15, replace=False)
            scores = (rng.permutation(15) + rng.random() / 2).tolist()
            runs[name] += [f"Q{q} Q0 D{d} {r} {s!r} {name}" for r, (d, s) in enumerate(zip(docs, scores), 1)]
    return ("\n".join(qrels) + "\n").encode(), {n: ("\n".join(x) + "\n").encode() for n, x in runs.items()}


def judged_app(said: list[str] | None = None) -> AppTest:
    """app.py, the Data page, the qrels uploaded alone, then both runs (each upload's messages added to `said`)."""
    qrels, runs = qrels_and_runs()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    at.switch_page("pages/data.py").run()
    said = [] if said is None else said
    at.file_uploader(key="data_qrels_alone").set_value([("judged.qrels", qrels, "text/plain")]).run()
    assert not at.exception, [e.value for e in at.exception]
    said += [shown(m.value) for m in (*at.success, *at.info, *at.error)]
    at.file_uploader(key="data_runs").set_value([(f"{n}.run", b, "text/plain") for n, b in runs.items()]).run()
    assert not at.exception, [e.value for e in at.exception]
    said += [shown(m.value) for m in (*at.success, *at.info, *at.error)]
    return at


def write_files(tmp_path) -> None:
    """The qrels and both runs written under tmp_path, as the command line reads them."""
    qrels, runs = qrels_and_runs()
    (tmp_path / "judged.qrels").write_bytes(qrels)
    for n, b in runs.items():
        (tmp_path / f"{n}.run").write_bytes(b)


@pytest.mark.slow
def test_qrels_and_runs_without_documents_score_on_the_overview_as_the_command_line(capsys, tmp_path):
    said: list[str] = []
    at = judged_app(said)
    assert any(s.startswith("Loaded judged: judgements alone, 12 questions") for s in said), said
    assert any(s.startswith("Added the run alpha from alpha.run: 12 questions, 180 lines") for s in said), said
    assert not any("error" in s or "not added" in s for s in said), said
    assert any("needs documents" in shown(i.value) for i in at.info)  # the dense section and the corpus's figures

    at.switch_page("pages/overview.py").run()
    assert not at.exception, [e.value for e in at.exception]
    table = at.dataframe[0].value
    assert list(table.index) == ["alpha", "beta"]
    assert any(c.value.startswith("Judgements alone: the runs are scored as they are") for c in at.sidebar.caption)

    write_files(tmp_path)
    labels = {state.metric_label(m): m for m in ("hit@5", "recall@5", "mrr", "ndcg@5", "map@5", "precision@5")}
    shown_metrics = [labels[c] for c in table.columns if c in labels]
    assert len(shown_metrics) >= 3, list(table.columns)
    capsys.readouterr()
    argv = ["evaluate", "--qrels", str(tmp_path / "judged.qrels"), "--metrics", ",".join(shown_metrics), "--json"]
    argv += [x for n in ("alpha", "beta") for x in ("--run", f"{n}={tmp_path / n}.run")]
    assert cli.main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    for system in ("alpha", "beta"):
        for label, m in labels.items():
            if label in table.columns:
                assert float(table.loc[system, label]) == pytest.approx(report["systems"][system][m], abs=1e-9)


@pytest.mark.parametrize(
    "page, title",
    [
        ("pages/playground.py", "Playground"),
        ("pages/diagnosis.py", "Diagnosis"),
        ("pages/tour.py", "Tour"),
        ("pages/tuning.py", "Tuning"),
        ("pages/judge.py", "Judge"),
    ],
)
def test_a_page_that_reads_text_says_it_needs_documents(page, title):
    at = judged_app()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == title
    said = [shown(i.value) for i in at.info]
    assert (
        len(said) == 1 and "needs documents: the dataset in use, judged, is judgements alone (12 questions" in said[0]
    )
    assert said[0].endswith("2 runs); upload a corpus (a BEIR zip or three files) on the Data page to use it.")


@pytest.mark.slow
@pytest.mark.parametrize(
    "page", ["pages/compare.py", "pages/per_question.py", "pages/experiments.py", "pages/metrics_lab.py"]
)
def test_the_pages_that_need_only_runs_work_without_documents(page):
    at = judged_app()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    said = [shown(i.value) for i in at.info if "needs documents" in shown(i.value)]
    if page == "pages/per_question.py":  # the ranks shown; a document's text said to need documents
        assert len(said) == 1 and said[0].startswith("Reading a document in full needs documents")
        assert len(at.dataframe) >= 1
    else:
        assert not said
    if page == "pages/compare.py":  # the two runs compared, as the systems A and B
        assert [(s.options, s.value) for s in at.main.selectbox][:2] == [
            (["alpha", "beta"], "alpha"),
            (["alpha", "beta"], "beta"),
        ]
        assert any("| a | alpha |" in m.value and "| b | beta |" in m.value for m in at.markdown)


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


@pytest.mark.slow
def test_the_json_report_of_runs_alone_is_what_the_command_line_shown_prints(downloads, capsys, tmp_path):
    at = judged_app()
    files = {}
    for d in at.get("download_button"):
        if d.key != "ws_export":
            make, name = downloads[d.proto.deferred_file_id]
            files[name] = make()
    assert {"judged_report.json", "judged_alpha.run", "judged_beta.run"} <= set(files)
    first = files["judged_alpha.run"].splitlines()[0].split()
    assert first[1] == "Q0" and first[3] == "1" and first[5] == "alpha"
    report = json.loads(files["judged_report.json"])
    assert (report["bootstrap"]["a"], report["bootstrap"]["b"]) == ("alpha", "beta")
    args = shlex.split(at.code[0].value)
    assert args[:6] == ["python", "-m", "retrieval", "evaluate", "--qrels", "judged.qrels"] and args[-1] == "--json"
    write_files(tmp_path)
    args[5] = str(tmp_path / "judged.qrels")
    for i, a in enumerate(args):
        if i and args[i - 1] == "--run":
            name, _, path = a.partition("=")
            args[i] = f"{name}={tmp_path / path}"
    capsys.readouterr()
    assert cli.main(args[3:]) == 0
    assert json.loads(capsys.readouterr().out) == report


def test_a_bad_qrels_line_is_named_and_the_dataset_in_use_stays():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    at.switch_page("pages/data.py").run()
    at.file_uploader(key="data_qrels_alone").set_value([("bad.qrels", b"Q1 0 D1 1\nQ2 0 D2\n", "text/plain")]).run()
    assert not at.exception, [e.value for e in at.exception]
    assert [shown(e.value).split(":")[:2] for e in at.error] == [["bad.qrels", "2"]]
    assert any(shown(i.value).startswith("Still using invented") for i in at.info)
    at.switch_page("pages/tour.py").run()
    assert not at.exception and not any("needs documents" in shown(i.value) for i in at.info)
