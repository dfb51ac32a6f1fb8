"""`python -m retrieval experiments list|show|compare`: the experiments the app saved, read by a script."""

from __future__ import annotations

import json
import re
from dataclasses import fields

import pytest

import retrieval
from retrieval import cli
from retrieval.analyses.experiments import record
from retrieval.corpus import dataset as datasets
from retrieval.evaluation import stats
from retrieval.store.workspace import ZIP, StoredFile, open_workspace


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A store holding two experiments of the invented corpus: the article's k1, and k1 = 0.5."""
    url = f"sqlite:///{tmp_path_factory.mktemp('store') / 'ws.sqlite'}"
    ws = open_workspace(url)
    ds = retrieval.load("invented")
    ws.add_dataset(ds, ZIP, [StoredFile("invented.zip", datasets.beir_zip(ds))], "ana")
    ids = []
    for name, k1 in (("defaults", 1.2), ("k1 low <b>*x*</b>", 0.5)):
        p = retrieval.Params(k1=k1)
        ids.append(
            ws.save_experiment(ds.fingerprint, name, record(retrieval.evaluate(ds, p, ["ndcg@5", "mrr"]), p), "ana").id
        )
    return url, ids, ds


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def strict(text: str):
    def refuse(name):
        raise ValueError(name)

    return json.loads(text, parse_constant=refuse)


def test_list_and_show_read_the_saved_experiments(saved, capsys):
    url, (a, b), ds = saved
    code, out, _ = run(capsys, "experiments", "list", "--store", url)
    assert code == 0 and "defaults" in out and "k1 low <b>*x*</b>" in out and "2 experiments" in out
    code, out, _ = run(capsys, "experiments", "list", "--store", url, "--json", "--dataset", ds.fingerprint)
    listed = strict(out)["experiments"]
    assert [e["id"] for e in listed] == [a, b] and {e["dataset"] for e in listed} == {ds.fingerprint}
    code, out, _ = run(capsys, "experiments", "show", str(b), "--store", url)
    bm25 = retrieval.evaluate(ds, retrieval.Params(k1=0.5), ["ndcg@5"]).mean("BM25", "ndcg@5")
    row = next(line.split() for line in out.splitlines() if line.startswith("BM25 "))
    assert code == 0 and "k1 = 0.5" in out and row[1] == f"{bm25:.4f}"
    code, out, _ = run(capsys, "experiments", "show", str(b), "--store", url, "--json")
    assert strict(out)["record"]["report"]["params"]["k1"] == 0.5


def test_list_and_show_carry_every_setting_and_say_which_differ(saved, capsys):
    url, (_, b), _ = saved
    code, out, _ = run(capsys, "experiments", "list", "--store", url, "--json")
    got = strict(out)
    assert code == 0 and got["differing"] == ["k1"]
    first, second = got["experiments"]
    assert set(first) == {"id", "dataset", "name", "saved", "by", "settings"}  # the keys it had, and the settings
    for f in fields(retrieval.Params):  # every parameter, from Params itself
        assert f.name in first["settings"], f.name
    assert (first["settings"]["k1"], second["settings"]["k1"]) == (1.2, 0.5)
    assert second["settings"]["stemmer"] == "none" and second["settings"]["members"] == ["BM25", "LSA"]
    assert second["settings"]["grades_rule"] == "original" and second["settings"]["metrics"] == ["ndcg@5", "mrr"]
    code, out, _ = run(capsys, "experiments", "list", "--store", url)
    header = out.splitlines()[0].split()
    assert header[-1] == "k1" and "differ in 1 setting of" in out
    assert [line.split()[-1] for line in out.splitlines()[1:3]] == ["1.2", "0.5"]
    code, out, _ = run(capsys, "experiments", "show", str(b), "--store", url, "--json")
    shown = strict(out)
    assert shown["settings"] == second["settings"] and set(shown) == {
        "id",
        "dataset",
        "name",
        "saved",
        "by",
        "record",
        "settings",
    }
    code, out, _ = run(capsys, "experiments", "show", str(b), "--store", url)
    assert "embeddings: none; cutoff k: 5; the view's metric: not recorded" in out


def test_compare_is_the_paired_bootstrap_of_the_two_experiments(saved, capsys):
    url, (a, b), ds = saved
    x = retrieval.evaluate(ds, retrieval.Params(), ["ndcg@5"]).values["BM25"]["ndcg@5"]
    y = retrieval.evaluate(ds, retrieval.Params(k1=0.5), ["ndcg@5"]).values["BM25"]["ndcg@5"]
    iv = stats.paired_bootstrap(x, y)
    code, out, _ = run(capsys, "experiments", "compare", str(a), str(b), "--store", url, "--json")
    got = strict(out)
    assert code == 0 and got["questions"] == ds.evaluated.size
    assert got["interval"] == pytest.approx([iv.low, iv.high], abs=1e-12) and got["told_apart"] is (not iv.holds_zero)
    code, out, _ = run(capsys, "experiments", "compare", str(a), str(b), "--store", url)
    assert ("can't be told apart" in out) is iv.holds_zero and f"{x.mean():.4f}" in out


def test_bad_requests_get_one_line(saved, capsys):
    url, (a, b), _ = saved
    for argv, said in (
        (("show", "999"), "no experiment 999"),
        (("compare", str(a), str(b), "--metric", "map@3"), "no metric 'map@3'"),
        (("compare", str(a), str(b), "--system", "nope"), "no system 'nope'"),
    ):
        code, out, err = run(capsys, "experiments", *argv, "--store", url)
        assert code == 2 and not out and len(err.strip().splitlines()) == 1 and said in err, err


def test_workspace_export_then_import_into_an_empty_store(saved, capsys, tmp_path):
    url, (a, b), ds = saved
    target = tmp_path / "ws.zip"
    code, out, _ = run(capsys, "workspace", "export", str(target), "--store", url)
    assert code == 0 and out.startswith(f"wrote {target}") and target.is_file()
    fresh = f"sqlite:///{tmp_path / 'fresh.sqlite'}"
    code, out, _ = run(capsys, "workspace", "import", str(target), "--store", fresh)
    assert code == 0 and out.strip() == f"imported 1 dataset from {target}"
    code, out, _ = run(capsys, "experiments", "compare", "1", "2", "--store", fresh, "--json")
    again = strict(out)
    code, out, _ = run(capsys, "experiments", "compare", str(a), str(b), "--store", url, "--json")
    first = strict(out)
    assert again["interval"] == first["interval"] and again["a"]["mean"] == first["a"]["mean"]
    code, out, err = run(capsys, "workspace", "import", str(target), "--store", fresh)
    assert code == 2 and "into an empty store only" in err and not out


def test_a_stored_body_that_is_not_a_saved_view_is_named_never_a_traceback(tmp_path, capsys):
    """Experiments saved through the store's own functions whose bodies are not saved views (one by hand, `{"x": 1}`;
    one of an older shape, its report without per-question values): `show` and `compare` of one exit 2 with one line
    naming it and the key; `list` lists the others and says on stderr which is left out and why."""
    url = f"sqlite:///{tmp_path / 'ws.sqlite'}"
    ws = open_workspace(url)
    ds = retrieval.load("invented")
    ws.add_dataset(ds, ZIP, [StoredFile("invented.zip", datasets.beir_zip(ds))], "ana")
    p = retrieval.Params()
    good = record(retrieval.evaluate(ds, p, ["ndcg@5"]), p)
    older = json.loads(json.dumps(good))
    del older["report"]["per_query"]
    ids = [
        ws.save_experiment(ds.fingerprint, name, body, "ana").id
        for name, body in (("kept", good), ("by hand", {"x": 1}), ("older <b>x</b>", older))
    ]
    for argv, which, what in (
        (("show", str(ids[1])), ids[1], r"'by hand': not a saved experiment: no 'version' \(it has x\)"),
        (
            ("show", str(ids[2]), "--json"),
            ids[2],
            (
                r"'older <b>x</b>': not a saved experiment: no "
                r"report.'per_query'"
            ),
        ),
        (("compare", str(ids[0]), str(ids[1]), "--metric", "ndcg@5"), ids[1], "'by hand'"),
        (("compare", str(ids[2]), str(ids[0]), "--metric", "ndcg@5"), ids[2], "'older"),
    ):
        code, out, err = run(capsys, "experiments", *argv, "--store", url)
        (line,) = err.strip().splitlines()
        assert code == 2 and out == "" and "Traceback" not in err, err
        assert re.fullmatch(rf"retrieval: error: experiment #{which} {what}.*", line), line
    code, out, err = run(capsys, "experiments", "list", "--store", url, "--json")
    assert code == 0 and [e["id"] for e in strict(out)["experiments"]] == [ids[0]]
    assert err.splitlines() == [
        f"warning: experiment #{ids[1]} 'by hand': not a saved experiment: no 'version' (it has x); left out",
        (
            f"warning: experiment #{ids[2]} 'older <b>x</b>': not a saved experiment: no report.'per_query' "
            "(it has dataset, params, metrics, systems, bootstrap, warnings); left out"
        ),
    ]
    code, out, err = run(capsys, "experiments", "list", "--store", url)
    assert code == 0 and "kept" in out and "by hand" not in out and "1 experiment" in out and len(err.splitlines()) == 2
