"""ui/data.py: the Data page's pure helpers, with the values their definitions give."""

from __future__ import annotations

from types import SimpleNamespace

from retrieval.corpus.dataset import assemble
from retrieval.corpus.runs import TrecRun
from retrieval.evaluation.report import Unjudged
from ui import data as ui
from ui import format as format_
from ui import workspace


def test_sizes_read_in_kilobytes_then_megabytes():
    assert format_.mb(0) == "0.0 kB"
    assert format_.mb(99_949) == "99.9 kB"
    assert format_.mb(100_000) == "0.1 MB"
    assert format_.mb(12_345_678) == "12.3 MB"


def test_file_stem_drops_only_the_last_extension():
    assert workspace.file_stem("mine.run") == "mine"
    assert workspace.file_stem("bm25.k1.trec") == "bm25.k1"
    assert workspace.file_stem("noext") == "noext"


def test_unique_name_prefers_the_tag_then_the_stem_then_numbers():
    taken = {"BM25", "LSA", "weighted", "RRF"}
    assert workspace.unique_name("mysys", "mine", taken) == "mysys"
    assert workspace.unique_name("BM25", "copy", taken) == "copy"  # the tag is a built-in system's name
    assert workspace.unique_name("", "copy", taken) == "copy"
    assert workspace.unique_name("BM25", "LSA", taken) == "LSA-2"
    assert workspace.unique_name("x", "run", taken | {"x", "run", "run-2", "run-3"}) == "run-4"


def test_download_stem_keeps_safe_characters_only():
    assert ui.download_stem("invented") == "invented"
    assert ui.download_stem("my data/set (v2).zip") == "my_data_set_v2_.zip"
    assert ui.download_stem("***") == "_"
    assert ui.download_stem("") == "dataset"


def test_the_command_lines_data_argument():
    assert ui.cli_data_arg(False, None, "f1") == "invented"
    assert ui.cli_data_arg(True, ("f1", "fruit.zip"), "f1") == "fruit.zip"
    assert ui.cli_data_arg(True, ("f1", None), "f1") is None  # three files: no single path to name
    assert ui.cli_data_arg(True, ("f0", "old.zip"), "f1") is None  # the zip was another dataset
    assert ui.cli_data_arg(True, None, "f1") is None


def test_stat_notes_say_only_what_is_there():
    none = SimpleNamespace(questions_without_relevant=0, judgements_outside_corpus=0, empty_documents=0)
    assert ui.stat_notes(none) == []
    some = SimpleNamespace(questions_without_relevant=1_200, judgements_outside_corpus=3, empty_documents=1)
    assert ui.stat_notes(some) == [
        "1,200 questions have no relevant document: they are left out of every mean.",
        "3 judgements name documents that are not in the corpus: no system can find them.",
        "1 document holds no token after the tokeniser: no lexical system can find it.",
    ]


def test_run_lines_count_every_result():
    run = TrecRun.from_lists("r", ("q1", "q2", "q3"), (("a", "b"), (), ("c",)), ([2.0, 1.0], [], [1.0]))
    assert ui.run_lines(run) == 3


def test_previews_and_the_unjudged_table():
    ds = assemble(
        "t",
        [("d1", "apple pie"), ("d2", "pear tart"), ("d3", "plum jam")],
        [("q1", "apple"), ("q2", "pear")],
        [("q1", "d1", 2), ("q2", "d2", 1), ("q2", "dx", 0)],
    )
    texts = ui.texts_preview(ds.doc_ids, ds.doc_texts, 2)
    assert texts.to_dict("list") == {"id": ["d1", "d2"], "text": ["apple pie", "pear tart"]}
    judged = ui.judgements_preview(ds, 3)
    assert judged["question"].tolist() == ["q1", "q2", "q2"]
    assert judged["document"].tolist() == ["d1", "d2", "dx"]
    assert judged["grade"].tolist() == [2, 1, 0]
    assert judged["in corpus"].tolist() == [True, True, False]
    rows = [Unjudged("BM25", 2, 10, 4), Unjudged("LSA", 2, 10, 0)]  # shares 4 / 10 and 0 / 10
    table = ui.unjudged_frame(rows, 5)
    assert list(table.columns) == ["system", "results in the top 5", "unjudged", "share unjudged"]
    assert table["unjudged"].tolist() == [4, 0] and table["share unjudged"].tolist() == [0.4, 0.0]
    # shown under short headings (the long ones were cut at 1024 px), their meaning in each column's help
    shown = ui.unjudged_columns(5)
    assert list(shown) == list(table.columns)
    assert [c.get("label") for c in shown.values()] == [None, "top 5", "unjudged", "share"]
    assert "Results in the top 5" in shown["results in the top 5"]["help"]
    assert shown["share unjudged"]["help"] == "Unjudged results / results in the top 5."
    assert shown["share unjudged"]["type_config"]["format"] == "percent"
    assert shown["unjudged"]["type_config"]["format"] == "localized"  # 1,125 as the statistics write it, not 1125
