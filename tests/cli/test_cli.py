"""`python -m retrieval evaluate`: exit 2 and one line naming the file:line or the parameter on bad input; the JSON contract."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, run_cli, run_process

CORPUS = [
    {"_id": "d1", "title": "Refunds", "text": "Money back within 30 days of purchase."},
    {"_id": "d2", "title": "", "text": "Backups run every night at midnight."},
    {"_id": "d3", "title": "", "text": "Export your notes as Markdown files."},
    {"_id": "d4", "title": "", "text": "The Pro plan costs 49 euros a month."},
    {"_id": "d5", "title": "", "text": "Single sign-on needs the Enterprise plan."},
]
QUERIES = [
    {"_id": "q1", "text": "money back"},
    {"_id": "q2", "text": "nightly backups"},
    {"_id": "q3", "text": "export notes"},
    {"_id": "q4", "text": "price of the Pro plan"},
]
QRELS = "query-id\tcorpus-id\tscore\nq1\td1\t2\nq2\td2\t1\nq3\td3\t2\nq4\td4\t1\nq4\td5\t0\n"


def beir(root: Path, corpus: str | None = None, queries: str | None = None, qrels: str | None = None) -> Path:
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text(corpus if corpus is not None else "".join(json.dumps(r) + "\n" for r in CORPUS))
    (root / "queries.jsonl").write_text(
        queries if queries is not None else "".join(json.dumps(r) + "\n" for r in QUERIES)
    )
    (root / "qrels" / "test.tsv").write_text(qrels if qrels is not None else QRELS)
    return root


class Cases:
    """The bad-input and contract cases of `python -m retrieval evaluate`, each run when a test first reads it: in this
    process through `main` (the same code `python -m retrieval` runs, without an interpreter's start of ~2 s each),
    its stdout and stderr captured; `launched` runs one as its own process (exit status and streams of the real
    command)."""

    def __init__(self, base: Path):
        self.base = base
        self.paths: dict[str, Path] = {}
        self.args: dict[str, tuple[str, ...]] = {}
        self.done: dict[str, subprocess.CompletedProcess] = {}

    def add(self, name: str, *args: str) -> None:
        self.args[name] = args

    def __getitem__(self, name: str) -> subprocess.CompletedProcess:
        if name not in self.done:
            self.done[name] = run_cli(*self.args[name])
        return self.done[name]

    def launched(self, name: str) -> subprocess.CompletedProcess:
        return run_process(*self.args[name])


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("cli")
    L = Cases(base)
    P = L.paths

    P["missing"] = base / "nowhere"
    L.add("missing", "evaluate", "--data", str(P["missing"]))

    lines = [json.dumps(r) for r in CORPUS]
    lines[2] = lines[2][:-2]  # line 3 cut short
    P["broken"] = beir(base / "broken", corpus="\n".join(lines) + "\n")
    L.add("broken", "evaluate", "--data", str(P["broken"]))

    lines = [json.dumps(r) for r in CORPUS] + [json.dumps({"_id": "d2", "text": "again"})]
    P["dup"] = beir(base / "dup", corpus="\n".join(lines) + "\n")
    L.add("dup", "evaluate", "--data", str(P["dup"]))

    P["grade"] = beir(base / "grade", qrels=QRELS.replace("q3\td3\t2", "q3\td3\t2.5"))
    L.add("grade", "evaluate", "--data", str(P["grade"]))

    P["empty"] = beir(base / "empty", corpus="")
    L.add("empty", "evaluate", "--data", str(P["empty"]))

    L.add("k1", "evaluate", "--k1", "-1")
    L.add("b", "evaluate", "--b", "1.5")
    L.add("metrics", "evaluate", "--metrics", "foo")

    P["badrun"] = base / "mine.run"
    P["badrun"].write_text("q01 Q0 pricing1 1 3.0 mine\nq01 Q0 pricing2 2 mine\n")
    L.add("badrun", "evaluate", "--run", f"mine={P['badrun']}")

    P["unknown"] = beir(base / "unknown", qrels=QRELS + "q9\td1\t1\nq9\td2\t1\nq1\tghost\t1\n")
    P["unknown_run"] = base / "ext.run"
    P["unknown_run"].write_text("q1 Q0 d1 1 2.0 ext\nq1 Q0 nodoc 2 1.0 ext\nqX Q0 d2 1 1.0 ext\nq2 Q0 d2 1 1.0 ext\n")
    L.add("unknown", "evaluate", "--data", str(P["unknown"]), "--run", f"ext={P['unknown_run']}", "--json")

    P["good"] = beir(base / "mini")
    P["good_run"] = base / "good.run"
    # q1: d1 first; q2: d2 second; q3: d3 absent; q4 not answered
    P["good_run"].write_text(
        "q1 Q0 d1 1 2.0 tag\nq1 Q0 d2 2 1.0 tag\nq2 Q0 d3 1 2.0 tag\nq2 Q0 d2 2 1.0 tag\nq3 Q0 d1 1 1.0 tag\n"
    )
    L.add(
        "contract",
        "evaluate",
        "--data",
        str(P["good"]),
        "--run",
        f"ext={P['good_run']}",
        "--json",
        "--metrics",
        "hit@1,mrr,ndcg@3",
        "--dims",
        "2",
    )
    return L


def assert_bad_input(out: subprocess.CompletedProcess, *needles: str) -> str:
    """Exit 2, nothing on stdout, exactly one line on stderr holding every needle, no traceback."""
    assert out.returncode == 2, (out.returncode, out.stderr)
    assert "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    for n in needles:
        assert re.search(n, lines[0]), (n, lines[0])
    assert out.stdout == ""
    return lines[0]


@pytest.fixture(scope="module")
def good(tmp_path_factory) -> Path:
    return beir(tmp_path_factory.mktemp("good") / "mini")


# ------------------------------------------------------------------ bad input, through `python -m retrieval`


def test_missing_data_path(runs):
    assert_bad_input(runs["missing"], re.escape(str(runs.paths["missing"])))


@pytest.mark.slow
@pytest.mark.parametrize("case", ["missing", "broken", "k1", "contract"])
def test_the_command_s_process_says_what_main_says(runs, case):
    """`python -m retrieval` as its own process: its exit status and streams are `main`'s (bad input: exit 2 and one
    line; a good run: exit 0 and the same JSON report)."""
    launched, in_process = runs.launched(case), runs[case]
    assert launched.returncode == in_process.returncode and "Traceback" not in launched.stderr
    if case == "contract":
        assert json.loads(launched.stdout) == json.loads(in_process.stdout)
    else:
        assert (launched.stdout, launched.stderr) == (in_process.stdout, in_process.stderr)


def test_broken_corpus_line(runs):
    assert_bad_input(runs["broken"], re.escape(f"{runs.paths['broken'] / 'corpus.jsonl'}:3") + r"(?!\d)")


def test_duplicate_ids(runs):
    assert_bad_input(runs["dup"], re.escape(str(runs.paths["dup"] / "corpus.jsonl")) + r":6(?!\d)", "d2")


def test_non_integer_grade(runs):
    assert_bad_input(runs["grade"], re.escape(str(runs.paths["grade"] / "qrels" / "test.tsv")) + r":4(?!\d)", "2.5")


def test_empty_corpus(runs):
    assert_bad_input(runs["empty"], re.escape(str(runs.paths["empty"] / "corpus.jsonl")), "empty")


@pytest.mark.parametrize("case, param", [("k1", r"\bk1\b"), ("b", r"(^|[^\w-])b\b"), ("metrics", r"foo")])
def test_bad_parameter_names_it(runs, case, param):
    assert_bad_input(runs[case], param)


def test_malformed_run_line(runs):
    assert_bad_input(runs["badrun"], re.escape(f"{runs.paths['badrun']}:2") + r"(?!\d)")


# the same checks in-process (same code path as `python -m retrieval`, without paying an interpreter start each)


def run_main(capsys, *args: str) -> tuple[int, str, str]:
    from retrieval.cli import main

    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize(
    "args, param",
    [
        (("--alpha", "2"), r"\balpha\b"),
        (("--alpha", "nan"), r"\balpha\b"),
        (("--rrf-k", "-3"), r"rrf"),
        (("--dims", "0"), r"\bdims\b"),
        (("--dims", "2.5"), r"dims"),
        (("--metrics", "hit@3,ndcg"), r"ndcg"),
        (("--metrics", ""), r"metrics"),
        (("--k1", "abc"), r"k1"),
        (("--k1", "nan"), r"\bk1\b"),
        (("--b", "-0.1"), r"(^|[^\w-])b\b"),
        (("--compare", "BM25,nobody"), r"nobody"),
        (("--bootstrap", "err@5"), r"err@5"),
        (("--bootstrap", "bpref@5"), r"bpref@5.*no cutoff"),
        (("--metrics", "map,rprec@10"), r"rprec@10.*no cutoff"),
        (("--metrics", "judged"), r"judged.*cutoff"),
        (("--threshold", "-1"), r"threshold"),
    ],
)
def test_bad_parameter_in_process(capsys, args, param):
    code, out, err = run_main(capsys, "evaluate", *args)
    assert code == 2 and out == "" and "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and re.search(param, lines[0]), err


def test_missing_zip_and_run_file_in_process(capsys, tmp_path):
    for args, path in (
        (("--data", str(tmp_path / "data.zip")), tmp_path / "data.zip"),
        (("--run", f"mine={tmp_path / 'none.run'}"), tmp_path / "none.run"),
    ):
        code, _, err = run_main(capsys, "evaluate", *args)
        assert code == 2 and len(err.strip().splitlines()) == 1 and str(path) in err, err


def _main_within(capsys, seconds: float, *args: str, unblock: Path | None = None) -> tuple[int, str, str, float]:
    """`main(args)` in a thread; if it has not returned within `seconds`, the FIFO `unblock` is opened for writing
    and closed (its reader then sees the end and the call can end), and the test fails: it hung."""
    import threading
    import time

    from retrieval.cli import main

    result: dict = {}

    def call() -> None:
        try:
            result["code"] = main(list(args))
        except BaseException as e:  # noqa: BLE001 - a traceback is what the test reports
            result["error"] = e

    t0 = time.monotonic()
    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    thread.join(seconds)
    elapsed = time.monotonic() - t0
    if thread.is_alive() and unblock is not None:
        os.close(os.open(unblock, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(30)
    out = capsys.readouterr()
    assert elapsed < seconds, f"{args}: still running after {seconds} s (it hangs)"
    assert "error" not in result, f"{args}: {result.get('error')!r} escaped main"
    return result["code"], out.out, out.err, elapsed


def _one_line_naming(code: int, out: str, err: str, path: Path) -> str:
    assert code == 2 and out == "" and "Traceback" not in err, (code, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0], err
    return lines[0]


@pytest.mark.parametrize("flag", ["--data", "--run"])
def test_a_fifo_is_one_line_and_exit_2_within_a_second(capsys, tmp_path, flag):
    fifo = tmp_path / ("data.zip" if flag == "--data" else "mine.run")
    os.mkfifo(fifo)
    code, out, err, _ = _main_within(capsys, 1.0, "evaluate", flag, str(fifo), unblock=fifo)
    assert "named pipe" in _one_line_naming(code, out, err, fifo)


@pytest.mark.slow
def test_a_zip_linked_to_dev_zero_is_one_line_and_exit_2_without_reading_it(tmp_path):
    """Run as `python -m retrieval` with its memory bounded to 1 GiB: before, it read /dev/zero until MemoryError."""
    import resource
    import time

    link = tmp_path / "zero.zip"
    link.symlink_to("/dev/zero")
    run = tmp_path / "zero.run"
    run.symlink_to("/dev/zero")

    def bounded():
        resource.setrlimit(resource.RLIMIT_DATA, (1 << 30, 1 << 30))

    for flag, path in (("--data", link), ("--run", run)):
        t0 = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "retrieval", "evaluate", flag, str(path)],
            check=False,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            preexec_fn=bounded,
        )
        assert "character device" in _one_line_naming(done.returncode, done.stdout, done.stderr, path)
        print(f"{flag} -> /dev/zero: exit 2 after {time.monotonic() - t0:.2f} s (with the interpreter's start)")


class _As:
    """Within it, this process's effective user is `nobody` (root's read override dropped; restored on exit)."""

    def __enter__(self):
        os.seteuid(65534)

    def __exit__(self, *exc):
        os.seteuid(0)


def test_a_folder_or_file_it_may_not_read_is_one_line_and_exit_2(capsys):
    """chmod 000 on a BEIR folder, on its qrels/ and on a run file; as root (the suite's usual user), for whom
    chmod 000 blocks nothing, the reads are made as `nobody` (the effective user, dropped and restored)."""
    import shutil
    import tempfile

    import retrieval.cli  # noqa: F401 - imported before the user changes

    base = Path(tempfile.mkdtemp(dir="/tmp"))  # /tmp, not pytest's root-only tmp_path: nobody must reach it
    try:
        base.chmod(0o755)
        hidden, qrels_hidden = beir(base / "hidden"), beir(base / "qrels_hidden")
        run = base / "mine.run"
        run.write_text("q1 Q0 d1 1 2.0 tag\n")
        for p in (hidden, qrels_hidden / "qrels", run):
            p.chmod(0)
        as_nobody = _As() if os.geteuid() == 0 else contextlib.nullcontext()
        for args, path in (
            (("--data", str(hidden)), hidden),
            (("--data", str(qrels_hidden)), qrels_hidden / "qrels"),
            (("--run", str(run)), run),
        ):
            with as_nobody:
                code, out, err, _ = _main_within(capsys, 1.0, "evaluate", *args)
            assert "Permission denied" in _one_line_naming(code, out, err, path)
    finally:
        for p in base.rglob("*"):
            p.chmod(0o700)
        shutil.rmtree(base)


def test_unknown_subcommand_is_one_line(capsys):
    code, _, err = run_main(capsys, "evaluat")
    assert code == 2 and len(err.strip().splitlines()) == 1, err


# ------------------------------------------------------------------ warnings and the JSON contract


def test_unknown_ids_are_warned_with_counts_and_exit_0(runs):
    out = runs["unknown"]
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    warnings = [line for line in out.stderr.splitlines() if line.startswith("warning")]
    text = "\n".join(warnings)
    assert re.search(r"\b2 judgements\b.*\b1 question\b.*q9", text), text
    assert re.search(r"\b1 judgement\b.*\b1 document\b.*ghost", text), text
    assert re.search(r"ext.*\b1 question\b.*qX", text), text
    assert re.search(r"ext.*\b1 line names a document\b", text), text
    report = json.loads(out.stdout)
    assert report["warnings"] and any("q9" in w for w in report["warnings"])


def test_json_contract_and_run_as_a_system(runs):
    out = runs["contract"]
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert {"dataset", "params", "metrics", "systems", "per_query", "bootstrap"} <= set(report)
    assert report["dataset"] == {"name": "mini", "documents": 5, "queries": 4}
    assert {"k1", "b", "dims", "rrf_k", "alpha"} <= set(report["params"]) and report["params"]["dims"] == 2
    assert report["metrics"] == ["hit@1", "mrr", "ndcg@3"]
    assert list(report["systems"]) == ["BM25", "LSA", "weighted", "RRF", "ext"]
    for s, row in report["systems"].items():
        assert set(row) == {"hit@1", "mrr", "ndcg@3"}, s
        assert set(report["per_query"][s]) == {"q1", "q2", "q3", "q4"}
        for q, cell in report["per_query"][s].items():
            assert set(cell) == {"first_relevant_rank", "hit@1", "mrr", "ndcg@3"}, (s, q)
            fr = cell["first_relevant_rank"]
            assert fr is None or (isinstance(fr, int) and fr >= 1)
            assert cell["mrr"] == (1 / fr if fr else 0.0)
    ext = report["per_query"]["ext"]
    assert [ext[q]["first_relevant_rank"] for q in ("q1", "q2", "q3", "q4")] == [1, 2, None, None]
    assert report["systems"]["ext"]["mrr"] == pytest.approx((1 + 1 / 2 + 0 + 0) / 4)
    assert report["systems"]["ext"]["hit@1"] == pytest.approx(1 / 4)
    b = report["bootstrap"]
    assert set(b) >= {"metric", "a", "b", "mean_diff", "ci_low", "ci_high", "resamples", "seed"}
    assert (b["metric"], b["a"], b["b"], b["resamples"], b["seed"]) == ("ndcg@5", "BM25", "LSA", 5000, 0)
    assert b["ci_low"] <= b["mean_diff"] <= b["ci_high"]


def test_parameters_reach_the_report(capsys, good):
    code, out, err = run_main(
        capsys,
        "evaluate",
        "--data",
        str(good),
        "--json",
        "--k1",
        "0.9",
        "--b",
        "0.4",
        "--alpha",
        "0.25",
        "--rrf-k",
        "10",
        "--dims",
        "3",
    )
    assert code == 0, err
    p = json.loads(out)["params"]
    assert (p["k1"], p["b"], p["alpha"], p["rrf_k"], p["dims"]) == (0.9, 0.4, 0.25, 10, 3)


def test_default_dims_lowered_on_a_small_corpus_is_a_warning(capsys, good):
    code, _, err = run_main(capsys, "evaluate", "--data", str(good), "--json")
    assert code == 0, err
    assert re.search(r"warning: .*6 dimensions asked, \d+ used", err), err


def test_text_output_on_a_beir_folder(capsys, good):
    code, out, err = run_main(capsys, "evaluate", "--data", str(good), "--dims", "2")
    assert code == 0, err
    assert "dataset mini: 5 documents, 4 questions" in out
    for system in ("BM25", "LSA", "weighted", "RRF"):
        assert re.search(rf"^{system}\s+(\d\.\d{{6}}\s+){{3}}\d\.\d{{6}}$", out, re.M), system
    assert "bootstrap interval" in out and "diagnosis" in out


def test_help_explains_run_ties(capsys):
    from retrieval.cli import main

    with pytest.raises(SystemExit) as e:
        main(["evaluate", "--help"])
    assert e.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "ties" in text and "document id" in text and "ascending" in text


# ------------------------------------------------------------------ dense and hybrid


def _npz(path: Path, **arrays) -> Path:
    import numpy as np

    np.savez(path, **arrays)
    return path


def test_embeddings_from_an_npz_make_the_system_dense_and_fuse_with_bm25(capsys, good, tmp_path):
    import numpy as np

    docs = np.eye(5, 8, dtype=np.float32)  # d1..d5: one axis each
    queries = np.zeros((4, 8), dtype=np.float32)
    queries[0, 0] = queries[1, 1] = queries[2, 3] = queries[3, 3] = 1.0  # q1 -> d1, q2 -> d2, q3 and q4 -> d4
    f = _npz(
        tmp_path / "e.npz",
        doc_ids=np.array(["d1", "d2", "d3", "d4", "d5"]),
        doc_vectors=docs,
        query_ids=np.array(["q1", "q2", "q3", "q4"]),
        query_vectors=queries,
    )
    code, out, err = run_main(
        capsys,
        "evaluate",
        "--data",
        str(good),
        "--embeddings",
        str(f),
        "--fuse",
        "BM25,dense",
        "--metrics",
        "mrr",
        "--json",
    )
    assert code == 0, err
    report = json.loads(out)
    assert list(report["systems"]) == ["BM25", "LSA", "dense", "weighted", "RRF"]
    ranks = {q: c["first_relevant_rank"] for q, c in report["per_query"]["dense"].items()}
    assert ranks == {"q1": 1, "q2": 1, "q3": None, "q4": 1}  # q3's vector points at d4, which is not relevant to it
    assert report["params"]["members"] == ["BM25", "dense"]
    assert report["systems"]["dense"]["mrr"] == pytest.approx(3 / 4)


@pytest.mark.parametrize(
    "bad, says",
    [
        ({"doc_vectors": [[1.0, 0.0]] * 5, "query_vectors": [[1.0, 0.0, 0.0]] * 4}, "dimension"),
        ({"doc_vectors": [[float("nan"), 1.0]] + [[1.0, 0.0]] * 4}, "NaN"),
        ({"doc_vectors": [[0.0, 0.0]] + [[1.0, 0.0]] * 4}, "zero"),
        ({"doc_ids": ["d1", "d1", "d3", "d4", "d5"]}, "d1"),
        ({"doc_vectors": [["a", "b"]] * 5}, "dtype|numbers|numeric"),
        (
            {"doc_vectors": [[1.0] * 4097] * 5, "query_vectors": [[1.0] * 4097] * 4},
            r"array doc_vectors: vectors of 4,097 dimensions, above the 4,096 limit \(embeddings\.MAX_DIM\)",
        ),
        (
            {"query_ids": ["q1", "q2", "q3", "q4", "q5"], "query_vectors": [[1.0, 0.0]] * 5},
            r"array query_ids: 5 rows, more than the dataset's 4 questions \(one vector a question at most\)",
        ),
    ],
)
def test_bad_embeddings_exit_2_with_one_line_naming_the_file(capsys, good, tmp_path, bad, says):
    import numpy as np

    arrays = {
        "doc_ids": ["d1", "d2", "d3", "d4", "d5"],
        "doc_vectors": [[1.0, 0.0]] * 5,
        "query_ids": ["q1", "q2", "q3", "q4"],
        "query_vectors": [[1.0, 0.0]] * 4,
    }
    arrays.update(bad)
    f = _npz(tmp_path / "bad.npz", **{k: np.array(v) for k, v in arrays.items()})
    code, out, err = run_main(capsys, "evaluate", "--data", str(good), "--embeddings", str(f))
    lines = err.strip().splitlines()
    assert code == 2 and out == "" and len(lines) == 1 and "bad.npz" in lines[0], err
    assert re.search(says, lines[0], re.IGNORECASE), lines[0]


def test_tune_sweeps_alpha_for_the_members_it_is_given(capsys, good, tmp_path):
    run = tmp_path / "ext.run"
    run.write_text("q1 Q0 d1 1 2.0 ext\nq1 Q0 d2 2 1.0 ext\nq2 Q0 d2 1 1.0 ext\n")
    code, out, err = run_main(
        capsys,
        "tune",
        "--data",
        str(good),
        "--params",
        "alpha",
        "--folds",
        "2",
        "--run",
        f"ext={run}",
        "--fuse",
        "BM25,ext",
        "--json",
    )
    assert code == 0, err
    report = json.loads(out)
    assert report["system"] == "weighted" and report["base"]["members"] == ["BM25", "ext"]
    code, _, err = run_main(capsys, "tune", "--data", str(good), "--params", "alpha", "--fuse", "BM25,LSA,nope")
    assert code == 2 and len(err.strip().splitlines()) == 1, err


# ------------------------------------------------------------------ map, rprec, bpref, judged@k on the command line

NEW_METRICS = "map,map@1,rprec,bpref,judged@10,judged@2"


def _strict_json(text: str) -> dict:
    """The report as a strict parser reads it: NaN or Infinity anywhere is an error."""

    def refuse(name):
        raise AssertionError(f"non-standard JSON constant {name}")

    return json.loads(text, parse_constant=refuse)


def test_new_metrics_in_the_json_report_by_name_with_their_values(capsys, good, tmp_path):
    run = tmp_path / "ext.run"
    # q1 (relevant d1): d1, d2 (d2 not judged for q1); q2 (relevant d2): d3, d2; q3 (relevant d3): d1; q4 not answered
    run.write_text(
        "q1 Q0 d1 1 2.0 ext\nq1 Q0 d2 2 1.0 ext\nq2 Q0 d3 1 2.0 ext\nq2 Q0 d2 2 1.0 ext\nq3 Q0 d1 1 1.0 ext\n"
    )
    code, out, err = run_main(
        capsys,
        "evaluate",
        "--data",
        str(good),
        "--run",
        f"ext={run}",
        "--dims",
        "2",
        "--json",
        "--metrics",
        NEW_METRICS,
        "--bootstrap",
        "bpref",
        "--compare",
        "ext,BM25",
    )
    assert code == 0, err
    report = _strict_json(out)
    assert report["metrics"] == NEW_METRICS.split(",")
    ext = report["systems"]["ext"]
    # each question has R = 1; q4 also judges d5 non-relevant (grade 0)
    assert ext["map"] == pytest.approx((1 / 1 + (1 / 2) / 1 + 0 + 0) / 4)
    assert ext["map@1"] == pytest.approx((1 + 0 + 0 + 0) / 4)
    assert ext["rprec"] == pytest.approx((1 + 0 + 0 + 0) / 4)  # q2's top 1 is d3
    assert ext["bpref"] == pytest.approx((1 + 1 + 0 + 0) / 4)  # no judged non-relevant document above d1 or d2
    assert ext["judged@10"] == pytest.approx((1 / 10 + 1 / 10 + 0 + 0) / 4)
    assert ext["judged@2"] == pytest.approx((1 / 2 + 1 / 2 + 0 + 0) / 4)
    q = report["per_query"]["ext"]
    assert (q["q2"]["map"], q["q2"]["rprec"], q["q3"]["bpref"], q["q4"]["judged@10"]) == (0.5, 0.0, 0.0, 0.0)
    for system, row in report["systems"].items():
        assert set(row) == set(NEW_METRICS.split(",")), system
        assert all(isinstance(v, float) and 0.0 <= v <= 1.0 for v in row.values()), (system, row)
    b = report["bootstrap"]
    assert (b["metric"], b["a"], b["b"]) == ("bpref", "ext", "BM25")


def test_new_metrics_in_the_text_table(capsys, good):
    code, out, err = run_main(
        capsys, "evaluate", "--data", str(good), "--dims", "2", "--metrics", "map,rprec,bpref,judged@10"
    )
    assert code == 0, err
    assert re.search(r"^system\s+map\s+rprec\s+bpref\s+judged@10$", out, re.M), out
    for system in ("BM25", "LSA", "weighted", "RRF"):
        assert re.search(rf"^{system}\s+(\d\.\d{{6}}\s+){{3}}\d\.\d{{6}}$", out, re.M), system


def test_tune_and_gate_take_the_new_metrics(capsys, good, tmp_path):
    code, out, err = run_main(
        capsys, "tune", "--data", str(good), "--params", "k1,b", "--metric", "bpref", "--folds", "2", "--json"
    )
    assert code == 0, err
    tuned = _strict_json(out)
    assert tuned["metric"] == "bpref"
    code, out, err = run_main(capsys, "tune", "--data", str(good), "--metric", "map@3", "--folds", "2")
    assert code == 0 and "map@3" in out, err
    code, _, err = run_main(capsys, "tune", "--data", str(good), "--metric", "rprec@3")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "rprec@3" in err, err

    report = tmp_path / "now.json"
    code, out, err = run_main(
        capsys, "evaluate", "--data", str(good), "--dims", "2", "--json", "--metrics", "map,judged@10"
    )
    assert code == 0, err
    report.write_text(out)
    for metric in ("map", "judged@10"):
        code, out, err = run_main(
            capsys, "gate", "--baseline", str(report), "--current", str(report), "--metric", metric
        )
        assert code == 0 and "PASS" in out and metric in out, (metric, err)
    code, _, err = run_main(capsys, "gate", "--baseline", str(report), "--current", str(report), "--metric", "bpref")
    assert code == 2 and "bpref" in err and "not in the report" in err, err


# ------------------------------------------------------------------ compare: the table of every system


ODD_NAME = "a_b & 50% {x}$"  # a run name that LaTeX and Markdown would read as markup


@pytest.fixture(scope="module")
def poor_run(tmp_path_factory) -> str:
    """--run NAME=FILE of a run on the invented corpus that puts the same document first for every question: every
    other system beats it."""
    from retrieval.corpus import dataset

    ds = dataset.load("invented")
    path = tmp_path_factory.mktemp("compare") / "poor.run"
    path.write_text("".join(f"{q} Q0 {ds.doc_ids[0]} 1 1.0 poor\n" for q in ds.query_ids))
    return f"{ODD_NAME}={path}"


SYSTEMS = ["BM25", "LSA", "weighted", "RRF", ODD_NAME]


def test_compare_prints_the_aligned_table_and_its_statement(capsys, poor_run):
    code, out, err = run_main(capsys, "compare", "--run", poor_run, "--metrics", "ndcg@10,mrr")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "dataset invented: 28 documents, 14 questions, 14 with a relevant document"
    assert re.search(r"^\s+system\s+ndcg@10\s+mrr$", lines[2])
    for letter, system in zip("abcd", SYSTEMS):  # every built-in system beats the poor run (e) on both metrics
        assert re.search(rf"^{letter}\s+{system}\s+\d\.\d{{4}}\*?\s+\[e\]\s+\d\.\d{{4}}\*?\s+\[e\]$", out, re.M), system
    assert re.search(rf"^e\s+{re.escape(ODD_NAME)}\s+0\.0543\s+0\.0714$", out, re.M), out
    assert re.search(r"^d\s+RRF\s+0\.7512\*", out, re.M)  # the best nDCG@10
    said = " ".join(lines[9:])
    assert "Fisher's randomization test (two-sided, all 16,384 sign flips" in said
    assert "Holm's step-down, over all 10 pairs of systems, for each metric separately" in said and "p < 0.05" in said


def test_compare_json_is_strict_and_names_every_system(capsys, poor_run):
    code, out, err = run_main(
        capsys,
        "compare",
        "--run",
        poor_run,
        "--metrics",
        "ndcg@10,map@100",
        "--json",
        "--test",
        "t-test",
        "--alpha",
        "0.01",
        "--fusion-alpha",
        "0.25",
    )
    assert code == 0, err
    report = _strict_json(out)
    assert report["dataset"] == {"name": "invented", "documents": 28, "queries": 14}
    assert report["params"]["alpha"] == 0.25 and report["alpha"] == 0.01  # the fusion's, the significance level
    assert (report["test"], report["correction"], report["metrics"]) == ("t-test", "holm", ["ndcg@10", "map@100"])
    assert [s["name"] for s in report["systems"]] == SYSTEMS
    assert [s["letter"] for s in report["systems"]] == list("abcde")
    assert report["systems"][0]["beats"] == {"ndcg@10": [ODD_NAME], "map@100": [ODD_NAME]}
    assert len(report["pairs"]) == 20 and "p < 0.01" in report["statement"]


def test_compare_latex_is_booktabs_with_every_name_escaped(capsys, poor_run):
    code, out, err = run_main(
        capsys, "compare", "--run", poor_run, "--metrics", "ndcg_exp@5", "--latex", "--test", "bootstrap"
    )
    assert code == 0, err
    assert out.startswith("\\begin{table}") and out.endswith("\\end{table}\n")
    assert [line for line in out.splitlines() if line in ("\\toprule", "\\midrule", "\\bottomrule")] == [
        "\\toprule",
        "\\midrule",
        "\\bottomrule",
    ]
    assert " & System & ndcg\\_exp@5 \\\\" in out
    assert "e & a\\_b \\& 50\\% \\{x\\}\\$ & 0.0" in out
    assert "0.6" in out and "$^{e}$" in out and "\\textbf{" in out and "paired bootstrap test" in out


def test_compare_markdown_escapes_the_run_name(capsys, poor_run):
    code, out, err = run_main(capsys, "compare", "--run", poor_run, "--metrics", "ndcg@10", "--markdown")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[:2] == ["| | system | ndcg\\@10 |", "|---|---|---|"]
    assert lines[2].startswith("| a | BM25 | 0.6912ᵉ |")
    assert lines[6] == "| e | a\\_b \\& 50\\% \\{x\\}\\$ | 0.0543 |"
    assert "Holm's step-down" in lines[-1]


COMPARE_BAD_INPUT = {  # the arguments after `compare` -> what the one line on stderr says
    "--test wilcoxon": r"^retrieval: error: test: unknown test 'wilcoxon'; choose randomization, t-test or bootstrap$",
    "--alpha 0": r"alpha must be in \(0, 1\), got 0\.0",
    "--alpha 1.5": r"alpha must be in \(0, 1\), got 1\.5",
    "--alpha nan": r"alpha must be in \(0, 1\), got nan",
    "--alpha x": r"argument --alpha: invalid float value: 'x'",
    "--fusion-alpha 3": r"argument --fusion-alpha: alpha must be in \[0, 1\], got 3\.0",
    "--metrics ndcg@10,foo": r"unknown metric 'foo'",
    "--json --latex": r"argument --latex: not allowed with argument --json",
    "--markdown --json": r"argument --json: not allowed with argument --markdown",
}


@pytest.mark.parametrize("args", COMPARE_BAD_INPUT)
def test_compare_bad_input_is_one_line_naming_the_parameter(capsys, args):
    code, out, err = run_main(capsys, "compare", *args.split())
    assert_bad_input(subprocess.CompletedProcess(args, code, out, err), COMPARE_BAD_INPUT[args])


def test_the_text_reports_diagnosis_lists_a_bounded_number_of_relevant_documents(capsys, tmp_path):
    """A question judged against 40 documents, none of which BM25 finds: the report lists RELEVANT_LISTED of them
    and counts the rest (before, it listed every one: 1.4 M lines for a 10 M-line qrels)."""
    from retrieval.analyses.diagnosis import RELEVANT_LISTED

    corpus = "".join(json.dumps({"_id": f"d{i}", "text": f"plain words number {i}"}) + "\n" for i in range(60))
    queries = json.dumps({"_id": "q1", "text": "zebra"}) + "\n" + json.dumps({"_id": "q2", "text": "number 7"}) + "\n"
    qrels = "query-id\tcorpus-id\tscore\n" + "".join(f"q1\td{i}\t1\n" for i in range(40)) + "q2\td7\t1\n"
    code, out, err = run_main(
        capsys, "evaluate", "--data", str(beir(tmp_path / "many", corpus, queries, qrels)), "--dims", "2"
    )
    assert code == 0, err
    block = out[out.index("\ndiagnosis") :]
    listed = re.findall(r"^    d\d+ \(grade 1\)", block, re.MULTILINE)
    assert len(listed) == RELEVANT_LISTED < 40
    assert (
        f"    ... and {40 - RELEVANT_LISTED} more relevant documents (the first {RELEVANT_LISTED} are listed)" in block
    )
    assert "vocabulary gap" in block  # the class still looks at every relevant document


ONE_PLURAL = re.compile(
    r"(?<![\d,.])1 (?:more )?(?:relevant )?(?:documents|questions|judgements|lines|terms|settings|"
    r"resamples|kernels|signatures|vectors|ids)\b"
)


def test_a_count_of_one_meets_its_noun_in_the_singular(capsys, tmp_path):
    """One question with one judgement, and a run naming one question the dataset lacks and one unknown document:
    '1 question', '1 judgement names 1 question that is not in', never '1 questions'."""
    corpus = "".join(json.dumps({"_id": f"d{i}", "text": t}) + "\n" for i, t in enumerate(["apple pie", "pear tart"]))
    queries = json.dumps({"_id": "q1", "text": "zebra"}) + "\n"
    qrels = "query-id\tcorpus-id\tscore\nq1\td0\t1\nq9\td1\t1\n"
    run = tmp_path / "one.run"
    run.write_text("q1 Q0 d0 1 2.0 one\nq1 Q0 ghost 2 1.0 one\nq7 Q0 d1 1 1.0 one\n")
    code, out, err = run_main(
        capsys,
        "evaluate",
        "--data",
        str(beir(tmp_path / "one", corpus, queries, qrels)),
        "--dims",
        "1",
        "--run",
        str(run),
    )
    assert code == 0, err
    assert "2 documents, 1 question, 1 with a relevant document" in out
    assert "1 judgement names 1 question that is not in" in err and "it is left out" in err
    assert "1 question is not in the dataset" in err and "1 line names a document that is not in the corpus" in err
    assert "): 1 question\n" in out  # the diagnosis's count
    assert not ONE_PLURAL.search(out + err), ONE_PLURAL.findall(out + err)
