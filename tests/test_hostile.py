"""Hostile and malformed input: zip bombs, damaged zips, huge or odd grades, deep JSON, terminal escapes in ids,
ids with whitespace, unbalanced CSV quotes, over-long texts, a folder that is not a BEIR dataset, and JSON output
that a strict parser reads. Each is one clear message: an `InputError` naming the file and line (or the parameter),
on the command line exit status 2 and one line on stderr."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest
from test_dataset import CORPUS, QUERIES, jsonl, names_line, write_tree
from test_dataset import QRELS_TSV as QRELS

from conftest import ROOT
from retrieval import cli
from retrieval.core.errors import InputError
from retrieval.corpus import dataset
from retrieval.corpus.dataset import (
    MAX_GRADE,
    MAX_TEXT_CHARS,
    ZipLimits,
    assemble,
    load,
    load_beir_zip,
    parse_jsonl,
    parse_qrels,
    parse_run,
    parse_table,
    zip_limits,
)

MB = 2**20
PADDED = jsonl(CORPUS) + (" " * 99 + "\n") * 60  # blank lines, skipped: a corpus big enough to damage


def beir_files(corpus: str | None = None, queries: str | None = None, qrels: str | None = None) -> dict[str, str]:
    return {
        "corpus.jsonl": jsonl(CORPUS) if corpus is None else corpus,
        "queries.jsonl": jsonl(QUERIES) if queries is None else queries,
        "qrels/test.tsv": QRELS if qrels is None else qrels,
    }


def zip_bytes(files: dict[str, str | bytes], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as zf:
        for name, content in files.items():
            zf.writestr(name, content)
    return buf.getvalue()


def bomb(path: Path, zeros: int, member: str = "corpus.jsonl") -> Path:
    """A small zip whose `member` expands to `zeros` zero bytes, beside tiny queries and qrels."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        with zf.open(member, "w", force_zip64=True) as f:
            chunk = bytes(MB)
            for _ in range(zeros // MB):
                f.write(chunk)
        for name, content in beir_files().items():
            if name != member:
                zf.writestr(name, content)
    return path


def run_main(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(code: int, out: str, err: str, *needles: str) -> str:
    assert code == 2, (code, err)
    assert out == "" and "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    for n in needles:
        assert re.search(n, lines[0]), (n, lines[0])
    return lines[0]


def refused(parse, data: bytes, source: str, line: int, match: str) -> str:
    """`parse(data, source)` raises an InputError matching `match` that names `source:line`; its message."""
    with pytest.raises(InputError, match=match) as e:
        parse(data, source)
    names_line(e, source, line)
    return str(e.value)


# ------------------------------------------------------------------ 1. zip bombs and damaged zips


def test_a_member_declaring_more_than_the_limit_is_refused_naming_it_the_limit_and_the_variable():
    data = zip_bytes(beir_files(corpus=jsonl(CORPUS) + " " * (3 * MB)))
    with pytest.raises(InputError) as e:
        load_beir_zip(data, "up.zip", ZipLimits(member=MB, total=10 * MB))
    msg = str(e.value)
    assert msg.startswith("up.zip/corpus.jsonl:") and "1,048,576 bytes" in msg and "RETRIEVAL_LAB_MAX_BYTES" in msg, msg


def test_the_members_together_are_bound_by_the_total():
    data = zip_bytes(beir_files(corpus=jsonl(CORPUS) + " " * 600_000, queries=jsonl(QUERIES) + " " * 600_000))
    with pytest.raises(InputError, match=r"up\.zip.*1,000,000 bytes in all.*RETRIEVAL_LAB_MAX_BYTES"):
        load_beir_zip(data, "up.zip", ZipLimits(member=MB, total=1_000_000))
    assert load_beir_zip(data, "up.zip", ZipLimits(member=MB, total=2 * MB)).n_docs == 3


def _lie_about_size(data: bytes, member: str, size: int) -> bytes:
    """The zip with `member`'s declared uncompressed size (local header and central directory) replaced."""
    buf = bytearray(data)
    name = member.encode()
    for sig, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):  # uncompressed-size field of each header
        at = 0
        while (at := buf.find(sig, at)) >= 0:
            name_at = at + (30 if sig == b"PK\x03\x04" else 46)
            if buf[name_at : name_at + len(name)] == name:
                buf[at + offset : at + offset + 4] = size.to_bytes(4, "little")
            at += 4
    return bytes(buf)


def test_a_member_lying_about_its_size_is_one_error_naming_it():
    data = _lie_about_size(zip_bytes(beir_files(corpus=jsonl(CORPUS) + " " * (2 * MB))), "corpus.jsonl", 100)
    with pytest.raises(InputError, match=r"^up\.zip/corpus\.jsonl: "):
        load_beir_zip(data, "up.zip", ZipLimits(member=MB, total=10 * MB))


def _corrupt(data: bytes, member: str) -> bytes:
    """The zip with bytes in the middle of `member`'s compressed data flipped."""
    info = zipfile.ZipFile(io.BytesIO(data)).getinfo(member)
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    buf = bytearray(data)
    for i in range(start + info.compress_size // 3, start + info.compress_size // 3 + 4):
        buf[i] ^= 0xFF
    return bytes(buf)


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED], ids=["bad-crc", "bad-deflate"])
def test_a_damaged_member_is_one_error_naming_it(compression):
    data = _corrupt(zip_bytes(beir_files(corpus=PADDED), compression), "corpus.jsonl")
    with pytest.raises(InputError, match=r"^up\.zip/corpus\.jsonl: damaged zip member"):
        load_beir_zip(data, "up.zip")


def test_a_truncated_deflate_stream_is_one_error_naming_the_member():
    data = zip_bytes(beir_files(corpus=PADDED))
    info = zipfile.ZipFile(io.BytesIO(data)).getinfo("corpus.jsonl")
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    # the deflate stream cut in half, padded with stored-block garbage, sizes left as declared
    buf = bytearray(data)
    half = start + info.compress_size // 2
    buf[half : start + info.compress_size] = b"\x00" * (start + info.compress_size - half)
    with pytest.raises(InputError, match=r"^up\.zip/corpus\.jsonl: damaged zip member"):
        load_beir_zip(bytes(buf), "up.zip")


def test_the_damaged_member_on_the_command_line_exits_2_with_one_line(capsys, tmp_path):
    path = tmp_path / "up.zip"
    path.write_bytes(_corrupt(zip_bytes(beir_files(corpus=PADDED), zipfile.ZIP_STORED), "corpus.jsonl"))
    one_line_error(*run_main(capsys, "evaluate", "--data", str(path)), re.escape(f"{path}/corpus.jsonl"), "damaged")


def test_the_limits_come_from_the_caller_or_the_environment_variable(monkeypatch):
    monkeypatch.delenv("RETRIEVAL_LAB_MAX_BYTES", raising=False)
    assert zip_limits() == dataset.APP_LIMITS == ZipLimits(dataset.MAX_MEMBER_BYTES, dataset.MAX_TOTAL_BYTES)
    assert zip_limits(dataset.CLI_LIMITS) == dataset.CLI_LIMITS
    assert dataset.CLI_LIMITS.member > dataset.APP_LIMITS.member and dataset.CLI_LIMITS.total > dataset.APP_LIMITS.total
    for value, n in (("123", 123), ("2M", 2 * MB), ("3g", 3 * 2**30), ("10kb", 10 * 1024)):
        monkeypatch.setenv("RETRIEVAL_LAB_MAX_BYTES", value)
        assert zip_limits() == zip_limits(dataset.CLI_LIMITS) == ZipLimits(n, n)
    monkeypatch.setenv("RETRIEVAL_LAB_MAX_BYTES", "lots")
    with pytest.raises(InputError, match="RETRIEVAL_LAB_MAX_BYTES"):
        zip_limits()
    monkeypatch.setenv("RETRIEVAL_LAB_MAX_BYTES", "2000")
    with pytest.raises(InputError, match=r"2,000 bytes"):  # the app's loader reads it by default
        load_beir_zip(zip_bytes(beir_files(corpus=PADDED)), "up.zip")


def test_the_command_line_passes_its_own_higher_limits(capsys, monkeypatch, tmp_path):
    monkeypatch.delenv("RETRIEVAL_LAB_MAX_BYTES", raising=False)
    path = tmp_path / "up.zip"
    path.write_bytes(zip_bytes(beir_files(corpus=PADDED)))
    monkeypatch.setattr(dataset, "CLI_LIMITS", ZipLimits(member=1234, total=5678))
    one_line_error(*run_main(capsys, "evaluate", "--data", str(path)), r"corpus\.jsonl", "1,234 bytes")
    monkeypatch.setattr(dataset, "CLI_LIMITS", ZipLimits(member=MB, total=MB))
    code, out, err = run_main(capsys, "evaluate", "--data", str(path), "--dims", "2", "--json")
    assert code == 0, err


@pytest.mark.slow
def test_a_zip_bomb_fails_fast_in_little_memory_on_the_command_line(tmp_path):
    path = bomb(tmp_path / "bomb.zip", 512 * MB)
    assert path.stat().st_size < 2 * MB
    env = {"RETRIEVAL_LAB_MAX_BYTES": "8M", "PATH": "/usr/bin:/bin"}
    # VmHWM, the peak of this process's own memory (ru_maxrss would carry the parent's peak across exec)
    probe = (
        "import re, sys\nfrom retrieval import cli\ncode = cli.main(sys.argv[1:])\n"
        "hwm = re.search(r'VmHWM:\\s*(\\d+)', open('/proc/self/status').read()).group(1)\n"
        "sys.stderr.write('\\npeak=%s\\n' % hwm)\nsys.exit(code)\n"
    )
    t = time.monotonic()
    out = subprocess.run(
        [sys.executable, "-c", probe, "evaluate", "--data", str(path)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert time.monotonic() - t < 30
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    msg, peak = [line for line in out.stderr.splitlines() if line]
    assert "bomb.zip/corpus.jsonl" in msg and "8,388,608 bytes" in msg and "RETRIEVAL_LAB_MAX_BYTES" in msg, msg
    peak_mb = int(peak.split("=")[1]) / 1024  # in KiB; the imports alone take ~190 MB
    assert peak_mb < 400, f"peak RSS {peak_mb:.0f} MB for a 512 MB member"


# ------------------------------------------------------------------ 2. grades


@pytest.mark.parametrize("grade", ["1024", "101", "1" + "0" * 40, "-101", "-" + "9" * 30])
def test_a_grade_beyond_the_maximum_is_refused_naming_file_and_line(grade):
    refused(parse_qrels, f"q1 0 d1 1\nq1 0 d2 {grade}\n".encode(), "t.qrels", 2, rf"\+-{MAX_GRADE}")


@pytest.mark.parametrize("grade", ["10**40", "2.0", "1e3", "inf", "9" * 5000])
def test_a_grade_that_is_no_integer_is_refused_naming_file_and_line(grade):
    msg = refused(
        parse_qrels, f"query-id\tcorpus-id\tscore\nq1\td1\t{grade}\n".encode(), "test.tsv", 2, "not an integer"
    )
    assert len(msg) < 300


def test_negative_grades_within_the_maximum_mean_not_relevant():
    rows = parse_qrels(f"q1 0 d1 2\nq1 0 d2 -{MAX_GRADE}\nq1 0 d3 {MAX_GRADE}\n".encode(), "t.qrels")
    ds = assemble("x", [("d1", "a"), ("d2", "b"), ("d3", "c")], [("q1", "a")], rows)
    assert ds.relevant_of(0) == {"d1": 2, "d3": MAX_GRADE}


def test_assemble_refuses_a_grade_beyond_the_maximum():
    with pytest.raises(InputError, match=r"judgements.*q1.*d1"):
        assemble("x", [("d1", "a")], [("q1", "a")], [("q1", "d1", 1024)])


def test_the_maximum_grade_keeps_ndcg_exp_finite(capsys, tmp_path):
    root = write_tree(tmp_path / "mini", beir_files(qrels=f"q1\td1\t{MAX_GRADE}\nq2\td2\t{MAX_GRADE}\nq2\td3\t1\n"))
    code, out, err = run_main(
        capsys, "evaluate", "--data", str(root), "--dims", "2", "--json", "--metrics", "ndcg_exp@3"
    )
    assert code == 0, err
    report = json.loads(out)
    assert all(isinstance(r["ndcg_exp@3"], float) for r in report["per_query"]["BM25"].values())


def test_a_huge_grade_on_the_command_line_exits_2_naming_file_and_line(capsys, tmp_path):
    root = write_tree(tmp_path / "mini", beir_files(qrels=QRELS.replace("q2\td2\t1", "q2\td2\t" + "1" + "0" * 40)))
    one_line_error(*run_main(capsys, "evaluate", "--data", str(root)), re.escape(f"{root / 'qrels' / 'test.tsv'}:3"))


# ------------------------------------------------------------------ 3. the JSON output is strict JSON


def _strict(text: str):
    def refuse(name):
        raise ValueError(f"not strict JSON: {name}")

    return json.loads(text, parse_constant=refuse)


def test_print_json_cleans_every_float_and_escapes_beyond_ascii(capsys):
    cli.print_json(
        {
            "a": float("nan"),
            "b": [np.float64("inf"), -np.inf, (np.float32(0.5), np.int64(3))],
            "c": {"d": np.array([1.0, np.nan])},
            "e": "x\x9by\u00e9",
        }
    )
    out = capsys.readouterr().out
    assert _strict(out) == {"a": None, "b": [None, None, [0.5, 3]], "c": {"d": [1.0, None]}, "e": "x\x9by\u00e9"}
    assert out.isascii()


def test_evaluate_tune_and_gate_json_parse_strictly_on_a_dataset_with_an_unanswerable_question(capsys, tmp_path):
    queries = jsonl(QUERIES + [{"_id": "q3", "text": "nothing relevant"}])
    root = write_tree(tmp_path / "mini", beir_files(queries=queries, qrels=QRELS + "q3\td1\t0\n"))
    code, out, err = run_main(
        capsys, "evaluate", "--data", str(root), "--dims", "2", "--json", "--metrics", "ndcg@5,ndcg_exp@5,mrr,recall@5"
    )
    assert code == 0, err
    report = _strict(out)
    assert "q3" not in report["per_query"]["BM25"]
    path = tmp_path / "report.json"
    path.write_text(out)
    code, out, err = run_main(capsys, "gate", "--baseline", str(path), "--current", str(path), "--json")
    assert code == 0, err
    assert _strict(out)["failed"] is False
    code, out, err = run_main(capsys, "tune", "--data", str(root), "--params", "dims", "--folds", "2", "--json")
    assert code == 0, err
    _strict(out)


# ------------------------------------------------------------------ 4. deep JSON


def test_jsonl_nested_too_deep_names_file_and_line():
    deep = b'{"_id": "d2", "text": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    refused(parse_jsonl, b'{"_id": "d1", "text": "a"}\n' + deep + b"\n", "corpus.jsonl", 2, "nested too deep")


def test_deep_json_on_the_command_line_exits_2(capsys, tmp_path):
    root = write_tree(
        tmp_path / "mini", beir_files(queries='{"_id": "q1", "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    )
    one_line_error(
        *run_main(capsys, "evaluate", "--data", str(root)), re.escape(f"{root / 'queries.jsonl'}:1"), "nested too deep"
    )
    report = tmp_path / "deep.json"
    report.write_text("[" * 100_000 + "]" * 100_000)
    one_line_error(
        *run_main(capsys, "gate", "--baseline", str(report), "--current", str(report)),
        re.escape(str(report)),
        "nested too deep",
    )


# ------------------------------------------------------------------ 5. terminal escapes


_RAW_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")  # every control character but the newline ending a line


def test_ids_holding_terminal_escapes_are_printed_escaped(capsys, tmp_path):
    red, title, csi = "d\x1b[31mred", "q\x1b]0;owned\x07", "q\x9b2J"
    corpus = [{"_id": red, "text": "Money back within 30 days."}, *CORPUS[1:]]
    queries = [{"_id": title, "text": "money back"}, {"_id": csi, "text": "nightly backup"}]
    qrels = f"{title}\t{red}\t2\n{csi}\td2\t1\n{csi}\tghost\x1b[2J\t1\n"
    root = write_tree(tmp_path / "mini", beir_files(corpus=jsonl(corpus), queries=jsonl(queries), qrels=qrels))
    code, out, err = run_main(capsys, "evaluate", "--data", str(root), "--dims", "2", "--threshold", "0")
    assert code == 0, err
    assert not _RAW_CONTROL.search(out) and not _RAW_CONTROL.search(err), (out, err)
    assert r"q\x1b]0;owned\x07" in out and r"q\x9b2J" in out and r"d\x1b[31mred" in out
    assert r"ghost\x1b[2J" in err  # the warning about the unknown document
    code, out, err = run_main(capsys, "evaluate", "--data", str(root), "--dims", "2", "--json")
    assert code == 0 and out.isascii() and not _RAW_CONTROL.search(out)
    assert set(json.loads(out)["per_query"]["BM25"]) == {title, csi}


def test_an_error_message_is_printed_escaped(capsys, tmp_path):
    one_line_error(*run_main(capsys, "evaluate", "--data", str(tmp_path / "x\x1b[31m\nnope")), r"x\\x1b\[31m\\x0anope")


def test_gate_prints_the_report_ids_escaped(capsys, tmp_path):
    rows = {f"q{i}\x1b[3{i}m": {"ndcg@5": v} for i, v in enumerate((1.0, 0.5, 0.0))}
    base = {"dataset": {"name": "n\x1b]0;t\x07"}, "metrics": ["ndcg@5"], "per_query": {"BM25": rows}}
    cur = json.loads(json.dumps(base))
    cur["per_query"]["BM25"]["q0\x1b[30m"]["ndcg@5"] = 0.0
    (tmp_path / "a.json").write_text(json.dumps(base))
    (tmp_path / "b.json").write_text(json.dumps(cur))
    code, out, err = run_main(
        capsys, "gate", "--baseline", str(tmp_path / "a.json"), "--current", str(tmp_path / "b.json")
    )
    assert code in (0, 1) and not _RAW_CONTROL.search(out + err), out
    assert r"q0\x1b[30m" in out and r"n\x1b]0;t\x07" in out


# ------------------------------------------------------------------ 6. ids with whitespace


@pytest.mark.parametrize("rid", ["a b", "a\tb", "a\u00a0b", "a\u2028b", "a\x1fb"])
def test_a_jsonl_id_with_whitespace_is_refused_naming_file_and_line(rid):
    refused(
        parse_jsonl,
        ('{"_id": "ok", "text": "a"}\n' + json.dumps({"_id": rid, "text": "b"}) + "\n").encode(),
        "c.jsonl",
        2,
        "whitespace",
    )


def test_a_csv_id_with_whitespace_is_refused_naming_file_and_line():
    refused(parse_table, b"id,text\nd1,a\nd 2,b\n", "docs.csv", 3, "whitespace")
    assert parse_table(b"id,text\n d1 ,a\n", "docs.csv") == [("d1", "a")]  # spaces around an id are trimmed, as before


def test_a_tab_separated_qrels_or_run_field_with_a_space_is_refused_naming_file_and_line():
    refused(
        parse_qrels, b"query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\tdoc one\t1\n", "test.tsv", 3, "'doc one'.*whitespace"
    )
    refused(parse_run, b"q1\tQ0\td1\t1\t2.0\ttag\nq1\tQ0\td 2\t2\t1.0\ttag\n", "sys.run", 2, "whitespace")
    assert parse_qrels(b"q1 0\td1 1\n", "t.qrels") == [("q1", "d1", 1)]  # spaces and tabs mixed between fields: fine


def test_assemble_refuses_an_id_with_whitespace_so_the_trec_export_always_reads_back():
    with pytest.raises(InputError, match=r"documents: record 2: .*'d 2'"):
        assemble("x", [("d1", "a"), ("d 2", "b")], [("q1", "a")], [("q1", "d1", 1)])
    with pytest.raises(InputError, match=r"questions: record 1: .*'q\\t1'"):
        assemble("x", [("d1", "a")], [("q\t1", "a")], [("q\t1", "d1", 1)])


def test_a_document_id_with_whitespace_is_refused_in_a_folder(capsys, tmp_path):
    corpus = jsonl([{"_id": "d 1", "text": "Money back."}, *CORPUS[1:]])
    root = write_tree(tmp_path / "mini", beir_files(corpus=corpus))
    one_line_error(
        *run_main(capsys, "evaluate", "--data", str(root)), re.escape(f"{root / 'corpus.jsonl'}:1"), "whitespace"
    )


# ------------------------------------------------------------------ 7. CSV quotes and one text limit


def test_an_unbalanced_quote_is_refused_naming_the_line_it_opened_on():
    refused(parse_table, b'id,text\nd1,fine\nd2,"swallows\nd3,everything\nd4,after\n', "docs.csv", 3, "never closed")
    refused(parse_table, b'id\ttext\nd1\t"no end', "docs.tsv", 2, "never closed")
    # records starting on line 2 whose first quoted field closes on line 3; the quote left open is on line 3, then 4
    refused(parse_table, b'id,title,text\nd1,"multi\nline ""quoted""","open\nrest\n', "docs.csv", 3, "never closed")
    refused(parse_table, b'id,title,text\nd1,"multi\nline ""quoted"" x",\n"open\nrest\n', "docs.csv", 4, "never closed")


def test_quoted_newlines_that_close_are_kept():
    assert parse_table(b'id,text\nd1,"two\nlines"\nd2,"last\n""quoted"" one"\n', "docs.csv") == [
        ("d1", "two\nlines"),
        ("d2", 'last\n"quoted" one'),
    ]


def test_one_text_limit_for_csv_and_jsonl():
    long = "x" * 200_000  # beyond the csv module's default field limit of 131,072
    assert parse_table(f"id,text\nd1,{long}\n".encode(), "docs.csv") == [("d1", long)]
    too_long = "x" * (MAX_TEXT_CHARS + 1)
    refused(parse_table, f"id,text\nd0,a\nd1,{too_long}\n".encode(), "docs.csv", 3, f"{MAX_TEXT_CHARS:,}")
    refused(
        parse_table,
        f"id,title,text\nd0,t,a\nd1,{'y' * (MAX_TEXT_CHARS // 2)},{'z' * (MAX_TEXT_CHARS // 2)}\n".encode(),
        "docs.csv",
        3,
        f"{MAX_TEXT_CHARS:,}",
    )
    refused(
        parse_jsonl,
        ('{"_id": "d0", "text": "a"}\n' + json.dumps({"_id": "d1", "text": too_long}) + "\n").encode(),
        "c.jsonl",
        2,
        f"{MAX_TEXT_CHARS:,}",
    )
    assert parse_jsonl(json.dumps({"_id": "d1", "text": long}).encode(), "c.jsonl") == [("d1", long)]


# ------------------------------------------------------------------ 8. a folder that is not a BEIR dataset


def test_a_folder_without_the_beir_files_at_its_top_is_refused_naming_what_is_missing(tmp_path):
    write_tree(tmp_path / "outer" / "deep" / "mini", beir_files())
    with pytest.raises(InputError) as e:
        load(tmp_path / "outer")
    msg = str(e.value)
    assert msg.startswith(str(tmp_path / "outer")) and "corpus.jsonl, queries.jsonl, qrels/" in msg, msg
    files = beir_files()
    del files["qrels/test.tsv"]
    with pytest.raises(InputError, match=r"no qrels/ "):
        load(write_tree(tmp_path / "noqrels", files))


def test_the_root_folder_is_refused_at_once(capsys):
    t = time.monotonic()
    one_line_error(
        *run_main(capsys, "evaluate", "--data", "/"), r"^retrieval: error: /: not a BEIR folder", "corpus.jsonl"
    )
    assert time.monotonic() - t < 5


# ------------------------------------------------------------------ the cost of indexing, refused before it is paid


def test_a_corpus_above_the_text_limit_is_refused_before_indexing_naming_the_limit_and_its_setting(monkeypatch):
    from retrieval.corpus.dataset import load
    from retrieval.engine import engine

    ds = load("invented")
    chars = sum(map(len, ds.doc_texts)) + sum(map(len, ds.query_texts))
    engine.check_size(ds, chars)  # exactly at the limit: accepted
    with pytest.raises(InputError) as e:
        engine.check_size(ds, chars - 1)
    assert f"{chars:,} characters of text" in str(e.value) and f"limit here is {chars - 1:,}" in str(e.value)
    assert "RETRIEVAL_LAB_MAX_CHARS" in str(e.value)
    monkeypatch.setenv("RETRIEVAL_LAB_MAX_CHARS", "1_000")
    assert engine.max_chars(engine.APP_MAX_CHARS) == engine.max_chars(engine.CLI_MAX_CHARS) == 1000
    monkeypatch.setenv("RETRIEVAL_LAB_MAX_CHARS", "lots")
    with pytest.raises(InputError, match="RETRIEVAL_LAB_MAX_CHARS"):
        engine.max_chars()
    assert engine.APP_MAX_CHARS < engine.CLI_MAX_CHARS  # the command line serves one person


def test_the_app_refuses_an_upload_above_the_limit_and_keeps_the_dataset(monkeypatch):
    from test_page_data import beir_zip, open_data, upload

    from apptest import shown

    monkeypatch.setenv("RETRIEVAL_LAB_MAX_CHARS", "5000")  # the invented corpus holds 2,446 characters, this zip 10,800
    at = open_data()
    big = [(f"d{i}", "apple " * 600) for i in range(1, 4)]
    upload(at, "data_zip", ("big.zip", beir_zip(docs=big, qrels=[("q1", "d1", 1)]), "application/zip"))
    errors = [shown(e.value) for e in at.error]
    assert len(errors) == 1 and "characters of text" in errors[0] and "RETRIEVAL_LAB_MAX_CHARS" in errors[0], errors
    assert "**invented**" in at.caption[0].value


# ------------------------------------------------------------------ the tokeniser's memory, bounded by its batches


def test_batches_hold_at_most_so_many_documents_and_characters_unless_one_document_is_longer():
    from retrieval.corpus.text import Batching, batches

    texts = ["a" * 3, "b" * 3, "c" * 10, "d", "e", "f"]
    assert list(batches(texts, Batching(max_docs=4, max_chars=6))) == [(0, 2), (2, 3), (3, 6)]  # c alone exceeds 6
    assert list(batches(texts, Batching(max_docs=2, max_chars=100))) == [(0, 2), (2, 4), (4, 6)]
    assert list(batches([], Batching(max_docs=2, max_chars=100))) == []


@pytest.mark.parametrize("method", ["python", "compiled"])
def test_the_index_is_the_same_however_the_corpus_is_batched(method):
    from retrieval.corpus import text

    docs = tuple(f"alpha beta {'gamma ' * i} delta{i % 3} the of" for i in range(40))
    whole = text.build_index(docs, method=method)
    parts = text.build_index(docs, method=method, batching=text.Batching(max_docs=3, max_chars=50))  # a few a batch
    assert whole.terms.tolist() == parts.terms.tolist()
    assert (whole.counts != parts.counts).nnz == 0 and (whole.doc_len == parts.doc_len).all()


@pytest.mark.slow
def test_indexing_a_corpus_of_long_documents_stays_within_a_few_bytes_per_token(tmp_path):
    """20 documents of a million characters (3.4 million tokens kept): tokenised in batches of characters, the
    index build added 109 MB here (measured after the imports); in one batch it added 446 MB (138 bytes a token)."""
    probe = (
        "import re, random\nfrom pathlib import Path\n"
        "random.seed(0)\nwords = [f'w{i}' for i in range(5000)]\n"
        "doc = ' '.join(random.choice(words) for _ in range(170_000))\n"
        "texts = tuple(doc for _ in range(20))\n"
        "rss = lambda f: int(re.search(f + r':\\s*(\\d+)', open('/proc/self/status').read()).group(1))\n"
        "from retrieval.corpus.text import build_index\n"
        "base = rss('VmRSS'); Path('/proc/self/clear_refs').write_text('5')\nidx = build_index(texts)\n"
        "print((rss('VmHWM') - base) // 1024, int(idx.counts.sum()))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    added_mb, tokens = map(int, out.stdout.split())
    assert tokens > 3_000_000 and added_mb < 300, f"the index build added {added_mb} MB for {tokens:,} tokens"


@pytest.mark.parametrize(
    "lines, line, match",
    [
        (
            ['{"_id": "a b", "text": "x"}', '{"_id": "c"}'],
            1,
            "whitespace",
        ),  # the id's fault on line 1 before line 2's text
        (['{"_id": "a", "text": "x"}', '{"_id": "b"}', '{"_id": "a", "text": "y"}'], 2, "no 'text'"),
        (
            ['{"_id": "a", "text": "x"}', '{"_id": "b", "text": "y"}', '{"_id": "a", "text": "z"}', '{"_id": "c d"}'],
            3,
            r"duplicate id 'a' \(first on line 1\)",
        ),
        (['{"_id": "a", "text": "x"}', '{"_id": "b c", "text": "y"}', "{broken"], 2, "whitespace"),
        (['{"_id": 7, "text": "x"}', '{"_id": "7", "text": "y"}'], 2, r"duplicate id '7' \(first on line 1\)"),
    ],
)
def test_of_several_faults_in_a_jsonl_file_the_first_lines_is_named(lines, line, match):
    """The ids are checked together (one set, one search) and one by one only when one fails: the message is still
    the first faulty line's, its id's fault before its text's, as when each line was checked in turn."""
    refused(parse_jsonl, "\n".join(lines).encode(), "c.jsonl", line, match)
