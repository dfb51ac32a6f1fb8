"""Every setting of a saved experiment, and which of them differ among several (retrieval.analyses.experiments):
derived from the parameter table and `Params`, so a parameter added later is listed without a change; then the
runs, dense vectors, grades rule and metric. No Streamlit here."""

from __future__ import annotations

import copy
from dataclasses import fields

import numpy as np
import pytest

import retrieval
from retrieval.analyses import experiments
from retrieval.analyses.experiments import (
    NOT_RECORDED,
    compare_settings,
    record,
    settings_of,
)
from retrieval.core.params import SPECS, Params
from retrieval.corpus.dataset import parse_run
from retrieval.corpus.embeddings import Aligned


@pytest.fixture(scope="module")
def base() -> dict:
    ds = retrieval.load("invented")
    return record(retrieval.evaluate(ds, Params(), ["ndcg@5", "mrr"]), Params(), k=5, metric="ndcg@5")


def with_params(rec: dict, params: Params) -> dict:
    """The record as if saved with these parameters (the settings read the report's parameters only)."""
    out = copy.deepcopy(rec)
    out["report"]["params"] = params.to_json()
    return out


def another(name: str):
    """A valid value of a `Params` field other than its default: the next option of a choice, a step up a number."""
    spec = SPECS.get(name)
    if spec is not None and spec.options:
        return spec.options[1]
    if spec is not None:
        v = spec.cast(spec.default) + spec.step
        return spec.cast(v if v <= spec.valid[1] else spec.cast(spec.default) - spec.step)
    if name == "members":
        return ("BM25",)
    if name == "weights":
        return (0.25, 0.75)
    pytest.fail(f"Params has a field {name!r} outside the parameter table: give this test a value of it")


def test_every_parameter_is_a_setting_and_differs_alone_when_only_it_changed(base):
    """Enumerated from Params' fields, not a hand list: a parameter added later is covered here too."""
    keys = settings_of(base)
    for f in fields(Params):
        assert f.name in keys, f.name
        changed = with_params(base, Params(**{f.name: another(f.name)}))
        found = compare_settings([base, changed])
        assert found.differing == (f.name,), (f.name, found.differing)
        assert [c.key for c in found.shown_columns()] == [f.name]
        assert len(found.rows(every=True)[0]) == len(found.columns) > len(fields(Params))


def test_the_columns_follow_the_parameter_table_then_the_other_settings(base):
    columns = compare_settings([base]).columns
    keys = [c.key for c in columns]
    in_table = [k for k in keys if k in SPECS]
    assert in_table == [k for k in SPECS if k in in_table] and keys[0] == "k"
    assert keys[-6:] == ["runs", "embeddings", "grades_rule", "workspace_grades", "metric", "metrics"]
    labels = {c.key: c.label for c in columns}
    assert (labels["k1"], labels["dims"], labels["stemmer"], labels["query_words"]) == (
        "k1",
        "d",
        "stemmer",
        "repeated question words",
    )
    assert {c.key: c.help for c in columns}["stopwords"] == SPECS["stopwords"].help


def test_a_record_older_than_a_parameter_reads_as_its_default(base):
    old = copy.deepcopy(base)
    for name in ("stemmer", "stopwords", "query_words", "k3"):
        del old["report"]["params"][name]
    del old["embeddings"], old["view"]
    values = settings_of(old)
    assert (values["stemmer"], values["stopwords"], values["query_words"], values["k3"]) == (
        "none",
        "article",
        "once",
        8.0,
    )
    assert values["k"] == 5  # the cutoff of its metrics
    assert values["embeddings"] == NOT_RECORDED and values["metric"] == NOT_RECORDED
    found = compare_settings([old, base])
    assert found.differing == ("embeddings", "metric")  # not said then; every parameter is the same
    stemmed = with_params(base, Params(stemmer="porter"))
    assert compare_settings([old, stemmed]).differing == ("stemmer", "embeddings", "metric")


def test_runs_embeddings_grades_and_the_metric_are_settings(base):
    ds = retrieval.load("invented")
    lines = "\n".join(f"{q} Q0 {ds.doc_ids[0]} 1 1.0 x" for q in ds.query_ids).encode()
    one = parse_run(lines, "a.run", "mine <b>*x*</b>")
    other = parse_run(lines.replace(b" 1.0 ", b" 2.0 "), "a.run", "mine <b>*x*</b>")
    vectors = Aligned(
        "some-model",
        np.zeros((1, 2), np.float32),
        np.zeros((1, 2), np.float32),
        np.ones(1, bool),
        ds.fingerprint,
        "0123456789abcdef",
    )
    ev = retrieval.evaluate(ds, Params(), ["ndcg@5", "mrr"])
    a = record(ev, Params(), (one,), "mean", 3, vectors, 5, "ndcg@5")
    b = record(ev, Params(), (other,), "majority", 4, None, 5, "mrr")
    found = compare_settings([a, b])
    assert found.differing == ("runs", "embeddings", "grades_rule", "workspace_grades", "metric")
    rows = found.rows()
    assert rows[0]["runs"] == f"mine <b>*x*</b> ({one.fingerprint[:8]})" != rows[1]["runs"]  # same name, other content
    assert (rows[0]["embeddings"], rows[1]["embeddings"]) == ("some-model (01234567)", "none")
    assert (rows[0]["grades rule"], rows[1]["grades rule"]) == ("mean", "majority")
    assert (rows[0]["raters' grades"], rows[1]["raters' grades"]) == (3, 4)  # a number column stays numbers
    assert (rows[0]["metric"], rows[1]["metric"]) == ("ndcg@5", "mrr")
    assert settings_of(a)["runs"] == [{"name": one.name, "fingerprint": one.fingerprint}]


def test_a_column_of_numbers_and_words_is_text_throughout(base):
    old = copy.deepcopy(base)
    old["view"] = None
    old["report"]["metrics"] = ["mrr"]  # no cutoff to read k from
    rows = compare_settings([old, base]).rows()
    assert [r["k"] for r in rows] == [NOT_RECORDED, "5"]


def test_the_sentence_says_what_differs(base):
    assert compare_settings([]).sentence == "No experiment is listed."
    n = len(compare_settings([base]).columns)
    assert compare_settings([base]).sentence == f"One experiment: each of its {n} settings is shown."
    assert compare_settings([base]).shown_columns() == compare_settings([base]).columns
    same = compare_settings([base, copy.deepcopy(base), copy.deepcopy(base)])
    assert same.sentence == f"The 3 experiments share each of their {n} settings: only their names and times differ."
    assert same.shown_columns() == () and len(same.shown_columns(every=True)) == n
    one = compare_settings([base, with_params(base, Params(k1=0.5))])
    assert one.sentence == f"The 2 experiments differ in 1 setting of {n}: k1; the other {n - 1} are the same in all."
    two = compare_settings([base, with_params(base, Params(k1=0.5, stemmer="porter", dims=7))])
    assert two.sentence == (
        f"The 2 experiments differ in 3 settings of {n}: k1, d and stemmer; the other {n - 3} are the same in all."
    )


def test_numbers_are_one_value_whatever_their_type(base):
    other = copy.deepcopy(base)
    other["report"]["params"]["dims"] = 6.0
    assert compare_settings([base, other]).differing == ()


def test_the_module_s_names_are_its_interface():
    assert (
        experiments.shown(None) == "none"
        and experiments.shown([]) == "none"
        and experiments.shown(["a", "b"]) == "a, b"
    )


def test_a_body_of_any_shape_reads_without_an_error(base):
    """A saved experiment's body is any JSON object (a workspace zip imported may hold one the lab did not write)."""
    odd = [
        {},
        {"report": []},
        {
            "report": {"params": {"k1": "x", "new": {"a": 1}}, "metrics": "ndcg@5"},
            "runs": [1],
            "grades": None,
            "view": {"k": None},
        },
    ]
    found = compare_settings([base, *odd])
    assert len(found.rows(every=True)) == 4
    assert settings_of({})["k1"] == 1.2 and settings_of({})["metrics"] == [] and settings_of({})["k"] == NOT_RECORDED
    assert settings_of(odd[2])["k1"] == "x" and found.rows(every=True)[3]["new"] == '{"a": 1}'
