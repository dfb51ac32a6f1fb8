"""The public API (`import retrieval`): its documented example runs as written, and what it reads and writes
round-trips."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

import retrieval


def test_the_documented_example_runs_as_written():
    result = doctest.testmod(retrieval, verbose=False)
    assert result.attempted >= 4 and result.failed == 0


def test_every_public_name_is_there_and_nothing_private():
    assert all(hasattr(retrieval, name) for name in retrieval.__all__)
    assert not [name for name in retrieval.__all__ if name.startswith("_")]


def test_a_run_written_then_read_back_ranks_as_the_system_did(tmp_path, invented):
    ev = retrieval.evaluate(invented, retrieval.Params(), ["ndcg@10", "mrr"])
    path = tmp_path / "bm25.trec"
    path.write_text(retrieval.write_run(ev.rankings["BM25"], invented, tag="mine"))
    run = retrieval.read_run(path)
    assert run.name == "mine"
    again = retrieval.evaluate(invented, retrieval.Params(), ["ndcg@10", "mrr"], runs=(run,))
    for metric in ("ndcg@10", "mrr"):
        np.testing.assert_array_equal(again.values["mine"][metric], ev.values["BM25"][metric])


def test_reading_a_missing_run_file_names_it(tmp_path):
    with pytest.raises(retrieval.InputError, match="nothing.trec"):
        retrieval.read_run(tmp_path / "nothing.trec")


def test_compare_holm_adjusts_every_pair_of_the_family(invented):
    ev = retrieval.evaluate(invented, retrieval.Params(), ["ndcg@5"])
    rows = retrieval.compare(ev, "ndcg@5")
    n = len(ev.systems)
    assert len(rows) == n * (n - 1) // 2
    assert all(r["p_holm"] >= r["p_value"] for r in rows)
    assert all(r["significant"] == (r["p_holm"] <= 0.05) for r in rows)
