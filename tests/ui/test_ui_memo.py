"""The one cache of what depends on a dataset and the parameters: its engine's memo, the app's kinds among its own
(bounded per kind, dying with the engine, the corpus kinds shared by the engines of the same texts); and ui/dense.py's
encoding jobs: one per corpus for the server, bounded."""

from __future__ import annotations

import gc
import threading
import weakref
from types import SimpleNamespace

import pytest

from retrieval.analyses import tuning
from retrieval.core.errors import InputError
from retrieval.core.params import Params
from retrieval.engine import engine as engine_mod
from retrieval.engine.engine import Engine
from ui import dense as ui_dense
from ui import diagnosis as ui_diagnosis
from ui import tuning as ui_tuning

APP_KINDS = (
    engine_mod.TUNING,
    engine_mod.VERDICTS,
    engine_mod.BUNDLED,
    engine_mod.DIAGNOSIS,
    engine_mod.CHANGES,
    engine_mod.STEMMER,
)


def test_the_app_s_kinds_are_the_engine_s_and_bounded():
    for kind in APP_KINDS:
        assert engine_mod.CACHE_SIZES[kind] > 0
    assert (ui_tuning.MEMO, ui_tuning.VERSUS) == (engine_mod.TUNING, engine_mod.VERDICTS)
    assert {ui_diagnosis.DIAGNOSIS, ui_diagnosis.CHANGES, ui_diagnosis.STEMMER} <= set(engine_mod.CACHE_SIZES)
    assert engine_mod.BUNDLED in engine_mod.CORPUS_KINDS  # the bundled model's vectors: the texts' alone
    assert set(engine_mod.CORPUS_KINDS) <= set(engine_mod.CACHE_SIZES)


def test_one_memo_per_engine_bounded_per_kind(invented):
    e, other = Engine(invented), Engine(invented)
    m = e.memo
    assert other.memo is not m
    for i in range(engine_mod.CACHE_SIZES[engine_mod.VERDICTS] + 5):
        m.get(engine_mod.VERDICTS, i, lambda i=i: i)
    assert m.size(engine_mod.VERDICTS) == engine_mod.CACHE_SIZES[engine_mod.VERDICTS]


def test_the_memo_dies_with_its_engine(invented):
    e = Engine(invented)
    m = e.memo
    sweep = tuning.sweep(invented, "dims", "ndcg@5", Params(), e)
    m.get(engine_mod.TUNING, "landscape", lambda: sweep)
    m.get(engine_mod.BUNDLED, "tokens", lambda: 123)
    gone, held = weakref.ref(e), weakref.ref(m)
    del e, m
    gc.collect()
    assert gone() is None and held() is None


def test_a_derived_engine_shares_the_corpus_kinds_with_its_root(invented):
    base = Engine(invented)
    graded = invented.with_judgements([(invented.query_ids[0], invented.doc_ids[-1], 1)])
    derived = Engine.derived(base, graded)
    own, root = derived.memo, base.memo
    made = []
    vectors = root.get(engine_mod.BUNDLED, ("bundled", "m", ()), lambda: made.append(1) or object())
    assert own.get(engine_mod.BUNDLED, ("bundled", "m", ()), lambda: made.append(2) or object()) is vectors
    assert made == [1]
    # what depends on the judgements is each engine's own
    root.get(engine_mod.TUNING, "landscape", lambda: "the base's")
    assert own.get(engine_mod.TUNING, "landscape", lambda: "the derived one's") == "the derived one's"
    assert derived.root is base and base.root is base


# ------------------------------------------------------------------------------------------- encoding jobs


@pytest.fixture
def encoder(monkeypatch):
    """Jobs over stand-in corpora (`key`, `n_docs`) whose encoding waits until released."""
    from retrieval.retrievers import dense

    release = threading.Event()

    def encode(job, ds):
        release.wait(30)
        if ds.fail:
            job.error = "RuntimeError: no"
        else:
            job.result = f"vectors of {ds.key}"

    monkeypatch.setattr(dense, "corpus_key", lambda ds: ds.key)
    monkeypatch.setattr(ui_dense, "_encode", encode)
    return release


def corpus(key: str, fail: bool = False) -> SimpleNamespace:
    return SimpleNamespace(key=key, n_docs=3, fail=fail)


def _finish(job) -> None:
    job.thread.join(10)
    assert not job.thread.is_alive()


def test_one_job_per_corpus_at_most_max_running(encoder):
    jobs = ui_dense.Jobs(max_running=1, keep=2)
    a = jobs.start(corpus("a" * 12))
    assert (
        a.running and jobs.start(corpus("a" * 12)) is a and jobs.get(corpus("a" * 12)) is a
    )  # a second session follows it
    assert a.thread.daemon and a.thread.name == "encode-aaaaaaaa"
    with pytest.raises(InputError, match="1 encoding is running on this server already"):
        jobs.start(corpus("b"))
    encoder.set()
    _finish(a)
    assert a.result == "vectors of " + "a" * 12 and jobs.start(corpus("a" * 12)) is a  # done: kept, not encoded again


def test_finished_jobs_are_dropped_earliest_first_and_a_failed_one_is_started_again(encoder):
    jobs = ui_dense.Jobs(max_running=2, keep=2)
    encoder.set()
    first = {}
    for key in ("a", "b", "c"):
        first[key] = jobs.start(corpus(key, fail=key == "b"))
        _finish(first[key])
    assert len(jobs) == 3  # the third job's start found two finished: within `keep`
    d = jobs.start(corpus("d"))
    _finish(d)
    assert jobs.get(corpus("a")) is None and len(jobs) == 3  # four finished: the earliest started dropped
    assert first["b"].error and jobs.get(corpus("b")) is first["b"]  # a failure stays, to be said on the page
    again = jobs.start(corpus("b"))
    assert again is not first["b"]
    _finish(again)
    jobs.clear()
    assert len(jobs) == 0 and jobs.get(corpus("c")) is None


def test_a_cancelled_job_is_over_at_once_counts_until_its_batch_ends_and_is_started_again(encoder):
    jobs = ui_dense.Jobs(max_running=1, keep=2)
    a = jobs.start(corpus("a"), estimate=30.0)
    assert a.estimate == 30.0
    a.cancel()
    assert a.cancelled and not a.running and a.stopping  # over for the page; its thread still in its batch
    with pytest.raises(InputError, match="1 encoding is running on this server already"):
        jobs.start(corpus("b"))  # the cores are still taken
    encoder.set()
    _finish(a)
    assert not a.stopping
    again = jobs.start(corpus("a"))
    assert again is not a and jobs.get(corpus("a")) is again  # a new encoding, not the cancelled one
    _finish(again)


def test_the_page_s_jobs_are_the_server_s_one_instance():
    assert isinstance(ui_dense.JOBS, ui_dense.Jobs)
    assert (ui_dense.JOBS.max_running, ui_dense.JOBS.keep) == (ui_dense.MAX_JOBS, ui_dense.KEEP_FINISHED)
