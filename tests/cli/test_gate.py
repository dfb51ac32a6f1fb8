"""`python -m retrieval gate`: exit 1 on a loss beyond noise (naming the questions), 0 otherwise, 2 on bad input."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

from conftest import run_cli, run_process
from retrieval.core.errors import InputError
from retrieval.evaluation import gate, stats


def _cli(*args: str) -> subprocess.CompletedProcess:
    """The command in this process (`conftest.run_cli`); `test_the_command_s_process_says_what_main_says` runs it as
    its own process."""
    return run_cli(*args)


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """Two real reports of the invented corpus: the article's parameters, and LSA cut to 1 dimension."""
    d = tmp_path_factory.mktemp("reports")
    out = {}
    for name, extra in (("base", []), ("dims1", ["--dims", "1"]), ("k1zero", ["--k1", "0", "--b", "0"])):
        run = _cli("evaluate", "--json", *extra)
        assert run.returncode == 0, run.stderr
        (d / f"{name}.json").write_text(run.stdout)
        out[name] = d / f"{name}.json"
    return out


def _edit(src, dst, change):
    report = json.loads(src.read_text())
    change(report)
    dst.write_text(json.dumps(report))
    return dst


def _gate(baseline, current, *extra):
    return _cli("gate", "--baseline", str(baseline), "--current", str(current), *extra)


def test_unchanged_report_passes(reports):
    out = _gate(reports["base"], reports["base"])
    assert out.returncode == 0, out.stderr
    assert "PASS" in out.stdout and "[+0.000000, +0.000000]" in out.stdout


def test_a_change_within_noise_passes(reports):
    # k1 = 0, b = 0 moves one question up and one down: the interval holds zero
    out = _gate(reports["base"], reports["k1zero"])
    assert out.returncode == 0, out.stderr
    assert "PASS" in out.stdout and "q14" in out.stdout


def test_improved_report_passes(reports):
    out = _gate(reports["dims1"], reports["base"], "--system", "LSA")
    assert out.returncode == 0, out.stderr
    assert "PASS" in out.stdout and "11 got better" in out.stdout


def test_worse_report_fails_and_names_the_questions(reports):
    out = _gate(reports["base"], reports["dims1"], "--system", "LSA", "--metric", "ndcg@5")
    assert out.returncode == 1, out.stderr
    first = out.stdout.splitlines()[2]
    assert first.startswith("FAIL: LSA is worse beyond noise") and "11 questions got worse" in first
    for q in ("q01", "q03", "q04", "q05", "q07", "q08", "q09", "q11", "q12", "q13", "q14"):
        assert q in first
    assert "q06" not in first and "q10" not in first
    assert "  q09: 1.000000 -> 0.000000 (-1.000000)" in out.stdout


def test_worse_bm25_by_editing_the_report(reports, tmp_path):
    drop = ["q03", "q04", "q05", "q06", "q07", "q08", "q09"]

    def worse(report):
        for q in drop:
            report["per_query"]["BM25"][q]["mrr"] = 0.0

    current = _edit(reports["base"], tmp_path / "worse.json", worse)
    out = _gate(reports["base"], current, "--metric", "mrr")
    assert out.returncode == 1
    assert f"7 questions got worse: {', '.join(drop)}" in out.stdout
    # the same loss on LSA's column leaves BM25 untouched: the default system passes
    out = _gate(reports["base"], reports["dims1"])
    assert out.returncode == 0


def test_gate_json_verdict(reports):
    out = _gate(reports["base"], reports["dims1"], "--system", "LSA", "--json")
    assert out.returncode == 1
    v = json.loads(out.stdout)
    assert v["failed"] is True and v["ci_high"] < 0 and v["system"] == "LSA" and v["metric"] == "ndcg@5"
    assert len(v["worse"]) == 11 and v["worse"][0]["current"] == 0.0
    base = json.loads(reports["base"].read_text())
    cur = json.loads(reports["dims1"].read_text())
    qids = list(base["per_query"]["LSA"])
    a = np.array([base["per_query"]["LSA"][q]["ndcg@5"] for q in qids])
    b = np.array([cur["per_query"]["LSA"][q]["ndcg@5"] for q in qids])
    iv = stats.paired_bootstrap(b, a)
    assert (v["mean_diff"], v["ci_low"], v["ci_high"]) == pytest.approx((iv.mean, iv.low, iv.high), abs=1e-15)


def _renamed(report):
    report["dataset"]["name"] = "other"


def _dropped(report):
    for rows in report["per_query"].values():
        rows.pop("q14")


def _nulled(report):
    report["per_query"]["BM25"]["q01"]["ndcg@5"] = None


@pytest.mark.parametrize(
    "case, needle",
    [
        ("missing", "no such file"),
        ("broken", "line 3: broken JSON"),
        ("not a report", "not an `evaluate --json` report"),
        ("metric", "metric 'ndcg@10' is not in the report"),
        ("bad metric", "metric 'ndcg'"),
        ("system", "unknown system 'Elastic'"),
        ("dataset", "different datasets"),
        ("questions", "different questions"),
        ("null", "not a number"),
    ],
)
def test_bad_input_exits_2_with_one_line(reports, tmp_path, case, needle):
    base, current, extra = reports["base"], reports["base"], []
    if case == "missing":
        current = tmp_path / "nope.json"
    elif case == "broken":
        current = tmp_path / "broken.json"
        current.write_text('{\n  "dataset": {"name": "invented"},\n  "per_query": {,\n}')
    elif case == "not a report":
        current = tmp_path / "list.json"
        current.write_text("[1, 2, 3]")
    elif case == "metric":
        extra = ["--metric", "ndcg@10"]
    elif case == "bad metric":
        extra = ["--metric", "ndcg"]
    elif case == "system":
        extra = ["--system", "Elastic"]
    elif case == "dataset":
        current = _edit(base, tmp_path / "other.json", _renamed)
    elif case == "questions":
        current = _edit(base, tmp_path / "fewer.json", _dropped)
    elif case == "null":
        current = _edit(base, tmp_path / "null.json", _nulled)
    out = _gate(base, current, *extra)
    assert out.returncode == 2, out.stdout
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("retrieval: error:") and needle in lines[0], out.stderr
    if case in ("missing", "broken", "not a report", "null"):
        assert str(current) in lines[0]


def test_gate_requires_both_files():
    out = _cli("gate", "--baseline", "a.json")
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1


def test_compare_in_the_library(reports):
    base = gate.load_report(reports["base"])
    worse = gate.load_report(reports["dims1"])
    r = gate.compare(base, worse, "NDCG@5", "LSA")
    assert r.metric == "ndcg@5" and r.failed and r.exit_code == 1
    assert [q for q, _, _ in r.worse()][:4] == ["q09", "q11", "q12", "q13"]  # the largest drops first, ties by id
    assert not gate.compare(base, base, "ndcg@5").failed
    with pytest.raises(InputError):
        gate.compare(base, {"dataset": {"name": "invented"}, "per_query": {}}, "ndcg@5")


@pytest.mark.slow
def test_the_command_s_process_says_what_main_says(reports):
    """`python -m retrieval gate` as its own process: the exit status (1 on a loss beyond noise, 2 on bad input) and
    the streams are `main`'s."""
    for args in (
        ("gate", "--baseline", str(reports["base"]), "--current", str(reports["dims1"]), "--system", "LSA"),
        ("gate", "--baseline", str(reports["base"])),
    ):
        launched, in_process = run_process(*args), run_cli(*args)
        assert launched.returncode == in_process.returncode and launched.returncode in (1, 2)
        assert (launched.stdout, launched.stderr) == (in_process.stdout, in_process.stderr)
