"""One memory budget per server (retrieval/engine/budget.py): an upload is admitted by what its engine will cost
before anything is indexed, refused when it cannot fit, and makes room by dropping the least recently used engines;
engines no one uses are dropped after the idle time and their memory handed back."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap
import weakref
import zlib

import numpy as np
import pytest

from conftest import ROOT
from retrieval.core.errors import InputError
from retrieval.core.memo import Memo
from retrieval.corpus.dataset import assemble
from retrieval.engine import budget, registry
from retrieval.engine import engine as engine_mod


@pytest.fixture
def fresh(monkeypatch):
    """Engines kept anew for this test only."""
    monkeypatch.setattr(registry, "_ENGINES", Memo({"engine": registry.ENGINES, "derived": registry.DERIVED}))
    monkeypatch.setattr(registry, "_ROOTS", weakref.WeakValueDictionary())


def corpus(name: str, n_docs: int = 200, words: int = 8, n_judged: int = 20):
    rng = np.random.default_rng(zlib.crc32(name.encode()))  # the same corpus in every process
    docs = [(f"d{i}", " ".join(f"w{x}" for x in rng.integers(0, 500, words))) for i in range(n_docs)]
    return assemble(name, docs, [("q1", "w1 w2"), ("q2", "w3")], [("q1", f"d{i}", 1) for i in range(n_judged)])


def test_the_cost_grows_with_documents_words_and_judgements():
    small = corpus("a")
    assert budget.tokens(small) == 200 * 8 + 2 + 1  # the spaces plus one per text
    c = budget.COST
    assert c.of(corpus("b", n_docs=400)) - c.of(small) == pytest.approx(200 * (c.per_document + 8 * c.per_token), abs=1)
    assert c.of(corpus("c", words=16)) - c.of(small) == pytest.approx(200 * 8 * c.per_token, abs=1)
    assert c.of(corpus("d", n_judged=120)) - c.of(small) == pytest.approx(100 * c.per_judgement, abs=1)


def test_an_upload_that_cannot_fit_is_refused_naming_the_budget_and_its_setting(fresh, monkeypatch):
    ds = corpus("big")
    monkeypatch.setenv(budget.BUDGET_ENV, str(budget.COST.of(ds) - 1))
    with pytest.raises(
        InputError,
        match=r"big: 200 documents, about 1,603 words and 20 judgements .* the server's "
        r"memory budget is .* \(RETRIEVAL_LAB_MEMORY_BUDGET",
    ):
        engine_mod.for_dataset(ds, budgeted=True)
    assert not engine_mod.built(ds)  # nothing indexed, nothing kept
    engine_mod.for_dataset(ds)  # the library and the command line are not the server: no budget there


def test_an_upload_that_fits_once_others_are_dropped_drops_the_least_recently_used(fresh, monkeypatch):
    a, b, c = corpus("a"), corpus("b"), corpus("c")
    monkeypatch.setenv(budget.BUDGET_ENV, str(int(budget.COST.of(a) * 2.5)))  # room for two
    ea = engine_mod.for_dataset(a, budgeted=True)
    engine_mod.for_dataset(b, budgeted=True)
    assert engine_mod.for_dataset(a, budgeted=True) is ea  # a used again: b is now the least recently used
    engine_mod.for_dataset(c, budgeted=True)
    assert engine_mod.built(a) and engine_mod.built(c) and not engine_mod.built(b)
    assert engine_mod.held() <= budget.budget()


def test_engines_no_one_uses_are_dropped_after_the_idle_time(fresh, monkeypatch):
    monkeypatch.setenv(budget.IDLE_ENV, "30")
    a, b = corpus("a"), corpus("b")
    engine_mod.for_dataset(a).last_used -= 31  # no session holds it: idle for 31 s
    engine_mod.for_dataset(b)
    assert engine_mod.drop_idle() == 1
    gc.collect()
    assert not engine_mod.built(a) and engine_mod.built(b)
    monkeypatch.setenv(budget.IDLE_ENV, "soon")
    with pytest.raises(InputError, match="RETRIEVAL_LAB_IDLE_SECONDS='soon': expected a number of seconds > 0"):
        budget.idle_seconds()


@pytest.mark.slow
def test_memory_returns_when_the_work_ends():
    """In a child process: a 300,000-document engine built and evaluated, then no longer used; once the janitor's idle
    time has passed, resident memory falls back to within 15% of what the engine added (or 60 MiB) above the baseline."""
    code = textwrap.dedent("""
        import gc, os, sys, time
        sys.path.insert(0, os.getcwd()); sys.path.insert(0, os.path.join(os.getcwd(), "bench"))
        import memory
        from retrieval.core.params import Params
        from retrieval.corpus import dataset
        from retrieval.engine import engine
        def rss():
            return int([l for l in open("/proc/self/status") if l.startswith("VmRSS:")][0].split()[1]) * 1024
        engine.for_dataset(dataset.load("invented"), budgeted=True).evaluate(Params())
        ds = memory.make(300_000, 3, 100, 300)
        gc.collect(); engine.release_free_memory(); base = rss()
        engine.for_dataset(ds, budgeted=True).evaluate(Params())
        gc.collect(); engine.release_free_memory(); busy = rss()
        time.sleep(4)  # the idle time (2 s) and the janitor's round (0.5 s) pass
        print(base, busy, rss())
    """)
    env = {**os.environ, budget.IDLE_ENV: "2"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    base, busy, after = map(int, out.stdout.split()[-3:])
    added = busy - base
    assert added > 50 * 2**20  # the engine took real memory
    assert after - base <= max(0.15 * added, 60 * 2**20), (base / 2**20, busy / 2**20, after / 2**20)
