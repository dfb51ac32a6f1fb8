"""Loaders: every accepted format, and every bad input reported as `file:line: what is wrong`."""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path

import numpy as np
import pytest

from retrieval.core.errors import InputError
from retrieval.corpus import dataset
from retrieval.corpus.dataset import (
    assemble,
    from_files,
    load,
    load_beir_dir,
    load_beir_zip,
    parse_jsonl,
    parse_qrels,
    parse_records,
    parse_run,
    parse_table,
)
from retrieval.retrievers.ranking import from_run

CORPUS = [
    {"_id": "d1", "title": "Refunds", "text": "Money back within 30 days."},
    {"_id": "d2", "title": "", "text": "Backups run every night."},
    {"_id": "d3", "text": "Export your notes as Markdown."},
]
QUERIES = [{"_id": "q1", "text": "money back"}, {"_id": "q2", "text": "nightly backup"}]
QRELS_TSV = "query-id\tcorpus-id\tscore\nq1\td1\t2\nq2\td2\t1\nq2\td3\t0\n"


def jsonl(records: list[dict]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def beir_files(corpus=CORPUS, queries=QUERIES, qrels=QRELS_TSV) -> dict[str, str]:
    return {"corpus.jsonl": jsonl(corpus), "queries.jsonl": jsonl(queries), "qrels/test.tsv": qrels}


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    for name, content in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content if isinstance(content, bytes) else content.encode())
    return root


def zip_bytes(files: dict[str, str | bytes], prefix: str = "") -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        if prefix:
            zf.writestr(prefix, "")  # a folder entry, as zip tools write them
        for name, content in files.items():
            zf.writestr(prefix + name, content)
    return buf.getvalue()


def names_line(err: pytest.ExceptionInfo, source: str, line: int) -> None:
    """The message starts with (or holds) `source:line`, the line as a whole number."""
    assert re.search(re.escape(f"{source}:{line}") + r"(?!\d)", str(err.value)), str(err.value)


def check_small(ds: dataset.Dataset) -> None:
    assert ds.doc_ids == ("d1", "d2", "d3")
    assert ds.doc_texts == (
        "Refunds Money back within 30 days.",
        "Backups run every night.",
        "Export your notes as Markdown.",
    )
    assert ds.query_ids == ("q1", "q2") and ds.query_texts == ("money back", "nightly backup")
    assert ds.relevant_of(0) == {"d1": 2} and ds.relevant_of(1) == {"d2": 1}
    assert len(ds.qrels) == 3 and ds.warnings == ()
    assert ds.evaluated.tolist() == [0, 1]


# ------------------------------------------------------------------ loaders


def test_builtin_invented():
    ds = load("invented")
    assert (ds.name, ds.n_docs, ds.n_queries, len(ds.qrels)) == ("invented", 28, 14, 27)
    assert ds.warnings == ()
    assert ds.evaluated.size == 14
    assert ds.relevant_of(ds.query_index["q02"]) == {"refund1": 2, "refund2": 2, "refund3": 1}


def test_beir_folder(tmp_path):
    root = write_tree(tmp_path / "mini", beir_files())
    ds = load(root)
    check_small(ds)
    assert ds.name == "mini"
    assert load(str(root)).fingerprint == ds.fingerprint == load_beir_dir(root).fingerprint


def test_beir_folder_with_the_only_qrels_file_not_named_test(tmp_path):
    files = beir_files()
    files["qrels/dev.tsv"] = files.pop("qrels/test.tsv")
    check_small(load(write_tree(tmp_path / "mini", files)))


def test_beir_folder_with_two_qrels_files_but_no_test_is_an_error(tmp_path):
    files = beir_files()
    files["qrels/dev.tsv"] = files.pop("qrels/test.tsv")
    files["qrels/train.tsv"] = QRELS_TSV
    with pytest.raises(InputError, match="test.tsv"):
        load(write_tree(tmp_path / "mini", files))


def test_title_and_text_joined_by_one_space():
    recs = parse_jsonl(
        b'{"_id": "a", "title": "T", "text": "body"}\n{"_id": "b", "title": "", "text": "only"}\n', "c.jsonl"
    )
    assert recs == [("a", "T body"), ("b", "only")]


@pytest.mark.parametrize("prefix", ["", "mini/"], ids=["top", "one-folder"])
def test_beir_zip(tmp_path, prefix):
    data = zip_bytes(beir_files(), prefix)
    check_small(load_beir_zip(data, "mini.zip"))
    path = tmp_path / "mini.zip"
    path.write_bytes(data)
    ds = load(path)
    check_small(ds)
    assert ds.name == "mini"


def test_beir_zip_ignores_macos_metadata():
    files = beir_files()
    files["__MACOSX/._corpus.jsonl"] = b"\x00\x05\x16\x07 not json"
    check_small(load_beir_zip(zip_bytes(files), "mini.zip"))


@pytest.mark.parametrize(
    "name, content",
    [
        ("docs.csv", 'id,text\nd1,"Refunds Money back within 30 days."\nd2,"Backups run every night."\n'),
        ("docs.tsv", "id\ttext\nd1\tRefunds Money back within 30 days.\nd2\tBackups run every night.\n"),
        ("docs.csv", 'text,id\n"Refunds Money back within 30 days.",d1\n"Backups run every night.",d2\n'),
        ("docs.csv", 'id,title,text\nd1,Refunds,"Money back within 30 days."\nd2,,"Backups run every night."\n'),
        (
            "docs.jsonl",
            '{"id": "d1", "text": "Refunds Money back within 30 days."}\n\n{"id": "d2", "text": "Backups run every night."}\n',
        ),
    ],
    ids=["csv", "tsv", "columns-swapped", "csv-title", "jsonl-id"],
)
def test_records_in_every_format(name, content):
    assert parse_records(content.encode(), name) == [
        ("d1", "Refunds Money back within 30 days."),
        ("d2", "Backups run every night."),
    ]


def test_csv_with_quoted_comma_and_newline():
    data = b'id,text\nd1,"one, two"\nd2,"three\nfour"\n'
    assert parse_table(data, "x.csv") == [("d1", "one, two"), ("d2", "three\nfour")]


def test_utf8_bom_is_accepted():
    assert parse_table("\ufeffid,text\nd1,été\n".encode(), "x.csv") == [("d1", "été")]


def test_trec_qrels_and_beir_tsv_agree():
    trec = b"q1 0 d1 2\nq2 0 d2 1\n\nq2 0 d3 0\n"
    beir = QRELS_TSV.encode()
    want = [("q1", "d1", 2), ("q2", "d2", 1), ("q2", "d3", 0)]
    assert parse_qrels(trec, "x.qrels") == want
    assert parse_qrels(beir, "test.tsv") == want


def test_negative_grade_is_not_relevant():
    ds = assemble("g", [("d1", "x"), ("d2", "y")], [("q1", "x")], [("q1", "d1", 1), ("q1", "d2", -1)])
    assert ds.relevant_of(0) == {"d1": 1}
    assert ds.n_relevant.tolist() == [1]


def test_from_files_mixes_formats():
    ds = from_files(
        (
            b'id,text\nd1,"Refunds Money back within 30 days."\nd2,Backups run every night.\nd3,Export your notes as Markdown.\n',
            "docs.csv",
        ),
        (b'{"id": "q1", "text": "money back"}\n{"id": "q2", "text": "nightly backup"}\n', "questions.jsonl"),
        (b"q1 0 d1 2\nq2 0 d2 1\nq2 0 d3 0\n", "judgements.qrels"),
        name="up",
    )
    check_small(ds)
    assert ds.name == "up"


def test_run_file_ranks_by_score_then_doc_id_whatever_the_rank_column():
    data = b"q1 Q0 dC 1 0.5 sys\nq1 Q0 dA 2 0.5 sys\nq1 Q0 dZ 3 0.9 sys\nq1 Q0 dB 9 0.5 sys\nq2 Q0 dX 1 -1.5 sys\nq2 Q0 dY 2 2e-1 sys\n"
    run = parse_run(data, "x.run")
    assert run.name == "sys"  # the tag when there is one
    assert run.query_ids == ("q1", "q2")
    assert run.doc_ids == (("dZ", "dA", "dB", "dC"), ("dY", "dX"))
    assert run.scores[0].tolist() == [0.9, 0.5, 0.5, 0.5]
    assert run.scores[1].tolist() == [0.2, -1.5]
    assert parse_run(data, "x.run", name="mine").name == "mine"


def test_run_name_from_file_when_tags_differ():
    assert parse_run(b"q1 Q0 d1 1 1 a\nq1 Q0 d2 2 0.5 b\n", "dir/my_run.txt").name == "my_run"


# ------------------------------------------------------------------ bad input: file and line named


def test_missing_file(tmp_path):
    missing = tmp_path / "nope.zip"
    with pytest.raises(InputError, match=re.escape(str(missing))):
        load(missing)
    with pytest.raises(InputError, match=re.escape(str(tmp_path / "nothing"))):
        load(tmp_path / "nothing")


def test_beir_folder_missing_queries(tmp_path):
    files = beir_files()
    del files["queries.jsonl"]
    with pytest.raises(InputError, match="queries.jsonl"):
        load(write_tree(tmp_path / "mini", files))


def test_not_utf8_names_file_and_line():
    data = "id,text\nd1,ok\nd2,caf\xe9\n".encode("latin-1")
    with pytest.raises(InputError, match="UTF-8") as e:
        parse_table(data, "docs.csv")
    names_line(e, "docs.csv", 3)


def test_broken_json_line_number(tmp_path):
    lines = jsonl(CORPUS).splitlines()
    lines.insert(1, "")  # a blank line does not shift the count
    lines[2] = lines[2][:-1]  # line 3 loses its closing brace
    files = beir_files()
    files["corpus.jsonl"] = "\n".join(lines) + "\n"
    root = write_tree(tmp_path / "mini", files)
    with pytest.raises(InputError) as e:
        load(root)
    names_line(e, str(root / "corpus.jsonl"), 3)


def test_broken_json_line_number_inside_a_zip():
    files = beir_files()
    files["queries.jsonl"] = '{"_id": "q1", "text": "money back"}\n{"_id": "q2", "text": \n'
    with pytest.raises(InputError) as e:
        load_beir_zip(zip_bytes(files, "mini/"), "up.zip")
    names_line(e, "up.zip/mini/queries.jsonl", 2)


@pytest.mark.parametrize(
    "line, why",
    [
        ('["a", "b"]', "object"),
        ('{"text": "no id"}', "id"),
        ('{"_id": "x"}', "text"),
        ('{"_id": "x", "text": 3}', "string"),
    ],
)
def test_jsonl_record_without_id_or_text(line, why):
    with pytest.raises(InputError, match=why) as e:
        parse_jsonl(('{"_id": "ok", "text": "fine"}\n' + line + "\n").encode(), "c.jsonl")
    names_line(e, "c.jsonl", 2)


def test_tsv_row_with_wrong_column_count():
    data = b"id\ttext\nd1\tfine\nd2\ttoo\tmany\n"
    with pytest.raises(InputError, match="column") as e:
        parse_table(data, "docs.tsv")
    names_line(e, "docs.tsv", 3)


@pytest.mark.parametrize("header", ["id,body", "doc,text", "text", ""])
def test_missing_id_or_text_column(header):
    with pytest.raises(InputError, match="id and text") as e:
        parse_table((header + "\nx,y\n").encode(), "docs.csv")
    names_line(e, "docs.csv", 1)


def test_duplicate_document_ids_name_file_and_line():
    data = b'{"_id": "d1", "text": "a"}\n{"_id": "d2", "text": "b"}\n\n{"_id": "d1", "text": "c"}\n'
    with pytest.raises(InputError, match="d1") as e:
        from_files((data, "corpus.jsonl"), (b'{"_id": "q1", "text": "a"}\n', "q.jsonl"), (b"q1 0 d1 1\n", "r.qrels"))
    names_line(e, "corpus.jsonl", 4)


def test_duplicate_question_ids_in_a_csv_name_file_and_line():
    data = b"id,text\nq1,a\nq2,b\nq1,c\n"
    with pytest.raises(InputError, match="q1") as e:
        from_files((b"id,text\nd1,a\n", "d.csv"), (data, "questions.csv"), (b"q1 0 d1 1\n", "r.qrels"))
    names_line(e, "questions.csv", 4)


@pytest.mark.parametrize("grade", ["1.5", "high", "2e0"])
def test_non_integer_grade(grade):
    data = f"q1 0 d1 1\nq1 0 d2 {grade}\n".encode()
    with pytest.raises(InputError, match=re.escape(grade)) as e:
        parse_qrels(data, "j.qrels")
    names_line(e, "j.qrels", 2)


def test_qrels_line_with_wrong_field_count():
    with pytest.raises(InputError) as e:
        parse_qrels(b"q1 0 d1 1\nq1 d2\n", "j.qrels")
    names_line(e, "j.qrels", 2)


@pytest.mark.parametrize("content", [b"", b"\n\n", b"id,text\n"])
def test_empty_corpus_names_the_file(content):
    name = "docs.csv" if content.startswith(b"id") else "corpus.jsonl"
    with pytest.raises(InputError, match=re.escape(name)):
        from_files((content, name), (b'{"_id": "q1", "text": "a"}\n', "q.jsonl"), (b"q1 0 d1 1\n", "r.qrels"))


def test_no_positive_judgement_is_an_error():
    with pytest.raises(InputError, match="r.qrels"):
        from_files((b"id,text\nd1,a\n", "d.csv"), (b"id,text\nq1,a\n", "q.csv"), (b"q1 0 d1 0\n", "r.qrels"))


@pytest.mark.parametrize(
    "line, what",
    [
        ("q1 Q0 d2 2 0.5", "fields"),
        ("q1 Q0 d2 2 0.5 tag extra", "fields"),
        ("q1 Q0 d2 2 high tag", "score"),
        ("q1 Q0 d2 2 nan tag", "score"),
        ("q1 Q0 d2 two 0.5 tag", "rank"),
    ],
)
def test_malformed_run_line(line, what):
    data = f"q1 Q0 d1 1 1.0 tag\n{line}\n".encode()
    with pytest.raises(InputError, match=what) as e:
        parse_run(data, "sys.run")
    names_line(e, "sys.run", 2)


def test_document_listed_twice_in_a_run():
    data = b"q1 Q0 d1 1 1.0 t\nq2 Q0 d1 1 1.0 t\nq1 Q0 d1 2 0.5 t\n"
    with pytest.raises(InputError, match="d1") as e:
        parse_run(data, "sys.run")
    names_line(e, "sys.run", 3)


def test_empty_run():
    with pytest.raises(InputError, match="sys.run"):
        parse_run(b"\n", "sys.run")


def test_not_a_zip(tmp_path):
    path = tmp_path / "data.zip"
    path.write_bytes(b"PK but not really a zip")
    with pytest.raises(InputError, match=re.escape(str(path)) + ".*zip"):
        load(path)


def test_zip_without_corpus():
    files = beir_files()
    del files["corpus.jsonl"]
    with pytest.raises(InputError, match=r"up\.zip.*corpus\.jsonl"):
        load_beir_zip(zip_bytes(files), "up.zip")


# ------------------------------------------------------------------ unknown ids: counted, never dropped in silence


def test_judgements_naming_unknown_questions_and_documents_warn_with_counts(tmp_path):
    qrels = QRELS_TSV + "q9\td1\t1\nq9\td2\t1\nq8\td1\t1\nq1\tghost\t1\n"
    ds = load(write_tree(tmp_path / "mini", beir_files(qrels=qrels)))
    assert len(ds.warnings) == 2
    unknown_q = next(w for w in ds.warnings if "question" in w)
    unknown_d = next(w for w in ds.warnings if "document" in w)
    assert re.search(r"\b3 judgements\b", unknown_q) and re.search(r"\b2 questions\b", unknown_q), unknown_q
    assert "q8" in unknown_q and "q9" in unknown_q
    assert re.search(r"\b1 judgements?\b", unknown_d) and "ghost" in unknown_d, unknown_d
    assert "test.tsv" in unknown_q and "test.tsv" in unknown_d
    # the unknown document still counts in recall's denominator
    assert ds.n_relevant.tolist() == [2, 1]
    assert ds.relevant_of(0) == {"d1": 2, "ghost": 1}


def test_judging_the_same_pair_twice_is_an_error():
    with pytest.raises(InputError, match="d1"):
        assemble("x", [("d1", "a")], [("q1", "a")], [("q1", "d1", 1), ("q1", "d1", 2)])


def test_run_naming_unknown_questions_and_documents_warns_in_the_ranking():
    ds = assemble(
        "x",
        [("d1", "a"), ("d2", "b"), ("d3", "c")],
        [("q1", "a"), ("q2", "b"), ("q3", "c")],
        [("q1", "d1", 1), ("q2", "d2", 1), ("q3", "d3", 1)],
    )
    run = parse_run(
        b"q1 Q0 ghost 1 9 t\nq1 Q0 d1 2 5 t\nq1 Q0 spook 3 1 t\nqX Q0 d1 1 1 t\nqY Q0 d2 1 1 t\nq2 Q0 d2 1 3 t\n",
        "t.run",
    )
    r = from_run(run, ds)
    text = " | ".join(r.warnings)
    assert re.search(r"\b2 questions\b", text) and "qX" in text and "qY" in text, text
    assert re.search(r"\b2 lines\b", text), text
    assert re.search(r"\b1 questions?\b.*no line", text), text  # q3 is not answered
    # an unknown document keeps its place (as in trec_eval): d1 is second
    assert r.top_ids(ds, 0) == ["ghost", "d1", "spook"]
    first = {ds.qrels.doc_id[j]: int(r.judged_rank[j]) for j in range(len(ds.qrels))}
    assert first == {"d1": 2, "d2": 1, "d3": 0}


def test_fingerprint_changes_with_content():
    a = assemble("x", [("d1", "a"), ("d2", "b")], [("q1", "a")], [("q1", "d1", 1)])
    b = assemble("x", [("d1", "a"), ("d2", "c")], [("q1", "a")], [("q1", "d1", 1)])
    c = assemble("x", [("d1", "a"), ("d2", "b")], [("q1", "a")], [("q1", "d1", 2)])
    assert len({a.fingerprint, b.fingerprint, c.fingerprint}) == 3
    assert a.fingerprint == assemble("y", [("d1", "a"), ("d2", "b")], [("q1", "a")], [("q1", "d1", 1)]).fingerprint


def test_tie_key_is_the_ascending_id_order():
    ds = assemble("x", [("b", "1"), ("c", "2"), ("a", "3")], [("q1", "a")], [("q1", "a", 1)])
    assert ds.tie_key.tolist() == [1, 2, 0]
    assert np.array_equal(np.argsort(ds.tie_key), [2, 0, 1])


# --------------------------------------------------------------------------------------------- new judgements

DOCS3 = [("b", "beta text"), ("a", "alpha text"), ("c", "gamma text")]
QUERIES2 = [("q2", "beta"), ("q1", "alpha")]
QRELS3 = [("q1", "a", 2), ("q2", "b", 1), ("q1", "ghost", 1)]


def test_with_judgements_is_the_dataset_assembled_with_them():
    """Adding judgements gives the dataset `assemble` makes from the old ones followed by the new: the same
    qrels arrays and fingerprint; the texts' hash, ids and tie key carried over, not recomputed."""
    ds = assemble("x", DOCS3, QUERIES2, QRELS3)
    new = [("q2", "c", 2), ("q1", "b", 0), ("q2", "a", 1)]
    out = ds.with_judgements(new)
    expected = assemble("x", DOCS3, QUERIES2, QRELS3 + new)
    for f in ("query", "doc", "doc_id", "grade"):
        np.testing.assert_array_equal(getattr(out.qrels, f), getattr(expected.qrels, f))
    assert out.fingerprint == expected.fingerprint != ds.fingerprint
    assert out.corpus_fingerprint == ds.corpus_fingerprint == expected.corpus_fingerprint
    assert out.doc_texts is ds.doc_texts and out.tie_key is ds.tie_key and out.doc_index is ds.doc_index
    assert out.relevant_of(0) == {"b": 1, "c": 2, "a": 1}  # q2's own, then the new ones
    assert len(ds.qrels) == 3 and ds.relevant_of(0) == {"b": 1}  # the base dataset is unchanged
    assert ds.with_judgements([]) is ds


def test_a_question_without_a_relevant_document_is_evaluated_once_one_is_added():
    ds = assemble("x", DOCS3, [*QUERIES2, ("q3", "gamma")], QRELS3)
    assert ds.evaluated.tolist() == [0, 1]
    assert ds.with_judgements([("q3", "c", 1)]).evaluated.tolist() == [0, 1, 2]
    assert ds.with_judgements([("q3", "c", 0)]).evaluated.tolist() == [0, 1]


@pytest.mark.parametrize(
    "new, message",
    [
        ([("q1", "a", 1)], "'q1'.*judged already.*never overwritten"),
        ([("q1", "c", 1), ("q1", "c", 2)], "judged already"),
        ([("q9", "a", 1)], "'q9'.*no such question"),
        ([("q1", "zz", 1)], "'zz'.*no such document"),
        ([("q1", "c", 101)], "grade 101 is not an integer within"),
        ([("q1", "c", "2")], "grade '2' is not an integer"),
        ([("q1", "c", True)], "grade True"),
    ],
)
def test_with_judgements_refuses_overwriting_unknown_ids_and_bad_grades(new, message):
    ds = assemble("x", DOCS3, QUERIES2, QRELS3)
    with pytest.raises(InputError, match=message):
        ds.with_judgements(new)


def test_qrels_written_are_read_back_to_the_same_judgements():
    ds = assemble("x", DOCS3, QUERIES2, QRELS3).with_judgements([("q2", "c", 2), ("q1", "b", -1)])
    text = dataset.format_qrels(ds.judgements())
    assert text.splitlines()[0] == "q2 0 b 1" and text.endswith("\n")
    assert parse_qrels(text.encode(), "qrels.txt") == ds.judgements()
    again = assemble("x", DOCS3, QUERIES2, parse_qrels(text.encode(), "qrels.txt"))
    assert again.fingerprint == ds.fingerprint
    assert dataset.format_qrels([]) == ""


@pytest.mark.parametrize(
    "line",
    [
        '{"_id": "d1", "text": "plain"}',
        '{"_id": "d1", "_id": "d2", "text": "the last of two keys"}',
        '{"id": 12345678901234567890123, "text": "an integer past 64 bits"}',
        '{"id": -9223372036854775809, "text": "below int64"}',
        '{"_id": "d1", "text": NaN}',
        '{"_id": "d1", "x": Infinity, "y": -Infinity, "z": 1e400}',
        '{"_id": "d1", "text": "\\ud800 a lone surrogate"}',
        '{"_id": "d1", "text": "\\u0000 \\" \\\\ \\/ \\b\\f\\n\\r\\t é 中 \\ud83d\\ude00"}',
        '  {"_id": "d1", "v": [0.1, -0.0, 5e-324, 1.7976931348623157e308, 2.2250738585072014e-308, 1, -0, 1E2]}  ',
        "[1, 2]",
        '"a string"',
    ],
)
def test_a_line_reads_as_the_json_module_reads_it(line):
    """orjson reads the lines (3x faster); what it refuses, json reads: the objects, types and float bits are json's
    (`json_objects`, what every JSONL loader reads through); a line that is not an object is refused, named."""
    want = json.loads(line)
    if not isinstance(want, dict):
        with pytest.raises(InputError, match=r"x\.jsonl:1: a line must be a JSON object"):
            list(dataset.json_objects(line.encode(), "x.jsonl"))
        return
    ((n, got),) = dataset.json_objects(line.encode(), "x.jsonl")
    assert n == 1 and repr(got) == repr(want) and type(got) is type(want)


@pytest.mark.parametrize(
    "line",
    [
        '{"_id": "d1", "text": "unclosed}',
        '{"_id": "d1",}',
        '{"_id" "d1"}',
        "{'_id': 1}",
        '{"a": 1} {"b": 2}',
        '{"text": "a\tb"}',
        "",
    ],
)
def test_a_broken_line_fails_with_the_json_module_s_message(line):
    """The message names the file and line, with the json module's own words and column (a blank line, which json
    refuses too, is skipped)."""
    with pytest.raises(json.JSONDecodeError) as want:
        json.loads(line)
    if not line.strip():
        assert [n for n, _ in dataset.json_objects(f'{{"_id": "d0"}}\n{line}'.encode(), "c.jsonl")] == [1]
        return
    with pytest.raises(InputError) as got:
        list(dataset.json_objects(f'{{"_id": "d0"}}\n{line}'.encode(), "c.jsonl"))
    assert str(got.value) == f"c.jsonl:2: broken JSON ({want.value.msg} at column {want.value.colno})"


def test_floats_read_to_the_same_bits_as_the_json_module():
    rng = np.random.default_rng(7)
    x = np.concatenate(
        [
            rng.standard_normal(3000),
            rng.random(3000) * 10.0 ** rng.integers(-300, 300, 3000),
            rng.integers(-(2**53), 2**53, 1000) / 3.0,
        ]
    )
    texts = [repr(float(v)) for v in x] + [f"{v:.25e}" for v in x[:2000]] + [f"{v:.12g}" for v in x[:2000]]
    line = '{"_id": "d1", "vector": [' + ", ".join(texts) + "]}"
    ((_, got),) = dataset.json_objects(line.encode(), "v.jsonl")
    want = json.loads(line)["vector"]
    assert np.array_equal(np.array(got["vector"]).view(np.int64), np.array(want).view(np.int64))


# A file is read a piece of about a MiB at a time (`dataset.text_pieces`): a fault past several pieces of blank lines,
# or one whose line straddles where a piece would end, is named on the line `str.splitlines` of the whole text gives.
_BLANKS = b"\n" * (3 * 2**20 + 7) + b"\r\n" * 5 + b" \t\n\r"  # ends on a lone \r: one more line, \r\n counted once


def _blank_lines() -> int:
    return len(_BLANKS.decode().splitlines())


@pytest.mark.parametrize(
    "parse, head, bad, message",
    [
        (
            dataset.parse_jsonl,
            b'{"_id": "d1", "text": "a"}\n',
            b'{"_id": "d2", "text": 1}\n',
            "'title' and 'text' must be strings",
        ),
        (dataset.parse_table, b"id\ttext\nd1\ta\n", b"d2\ta\tb\n", "3 columns, the header has 2"),
        (dataset.parse_qrels, b"q1 0 d1 1\n", b"q1 0 d2 x\n", "the grade 'x' is not an integer"),
        (dataset.parse_run, b"q1 Q0 d1 1 2.0 t\n", b"q1 Q0 d2 2 nan t\n", "the score 'nan' is not a finite number"),
    ],
)
def test_a_fault_after_megabytes_of_blank_lines_is_named_on_its_line(parse, head, bad, message):
    data = head + _BLANKS + bad
    line = head.count(b"\n") + _blank_lines() + 1
    with pytest.raises(InputError, match=rf"^f:{line}: {re.escape(message)}"):
        parse(data, "f")
    before = head + _BLANKS  # a byte that is not UTF-8: its line counted in newlines, as a whole file's decoding says
    newlines = before.count(b"\n")
    with pytest.raises(InputError, match=rf"^f:{newlines + 1}: not UTF-8 text \(invalid start byte\)"):
        parse(before + b"\xff\n", "f")


def test_a_zip_member_is_parsed_as_it_is_decompressed_its_lines_numbered_as_a_file_s():
    """A BEIR zip whose corpus.jsonl holds megabytes of blank lines between its documents: the documents all read, and
    a broken line after them named on its line of the member."""
    docs = b'{"_id": "d1", "text": "alpha"}\n' + _BLANKS + b'{"_id": "d2", "text": "beta"}\n'

    def beir(corpus: bytes) -> bytes:
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("c/corpus.jsonl", corpus)
            zf.writestr("c/queries.jsonl", b'{"_id": "q1", "text": "alpha"}\n')
            zf.writestr("c/qrels/test.tsv", b"query-id\tcorpus-id\tscore\nq1\td1\t1\n")
        return buf.getvalue()

    ds = dataset.load_beir_zip(beir(docs), "c.zip")
    assert ds.doc_ids == ("d1", "d2") and ds.doc_texts == ("alpha", "beta")
    line = 1 + _blank_lines() + 2
    with pytest.raises(InputError, match=rf"^c\.zip/c/corpus\.jsonl:{line}: broken JSON"):
        dataset.load_beir_zip(beir(docs + b'{"_id": \n'), "c.zip")
