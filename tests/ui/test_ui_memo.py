"""ui/memo.py: the app's own caches, one bounded Memo per engine that dies with it (the corpus kinds shared by the
engines of the same texts), and ui/dense.py's encoding jobs: one per corpus for the server, bounded."""

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
from ui import memo


def test_the_app_s_kinds_are_its_own_and_bounded():
    assert set(memo.SIZES) == {memo.TUNING, memo.VERDICTS, memo.DENSE} and all(n > 0 for n in memo.SIZES.values())
    for kind in memo.SIZES:  # not the engine's any more
        assert kind not in engine_mod.CACHE_SIZES and kind not in engine_mod.CORPUS_KINDS
    assert set(memo.CORPUS_KINDS) <= set(memo.SIZES)


def test_one_memo_per_engine_bounded_per_kind(invented):
    e, other = Engine(invented), Engine(invented)
    m = memo.for_engine(e)
    assert memo.for_engine(e) is m and memo.for_engine(other) is not m
    for i in range(memo.SIZES[memo.VERDICTS] + 5):
        m.get(memo.VERDICTS, i, lambda i=i: i)
    assert m.size(memo.VERDICTS) == memo.SIZES[memo.VERDICTS]


def test_the_memo_dies_with_its_engine(invented):
    e = Engine(invented)
    m = memo.for_engine(e)
    sweep = tuning.sweep(invented, "dims", "ndcg@5", Params(), e)
    m.get(memo.TUNING, "landscape", lambda: sweep)
    m.get(memo.DENSE, "tokens", lambda: 123)
    gone, held = weakref.ref(e), weakref.ref(m)
    del e, m
    gc.collect()
    assert gone() is None and held() is None  # nothing kept refers back to the engine


def test_a_derived_engine_shares_the_corpus_kinds_with_its_root(invented):
    base = Engine(invented)
    graded = invented.with_judgements([(invented.query_ids[0], invented.doc_ids[-1], 1)])
    derived = Engine.derived(base, graded)
    own, root = memo.for_engine(derived), memo.for_engine(base)
    made = []
    vectors = root.get(memo.DENSE, ("bundled", "m", ()), lambda: made.append(1) or object())
    assert own.get(memo.DENSE, ("bundled", "m", ()), lambda: made.append(2) or object()) is vectors and made == [1]
    # what depends on the judgements is each engine's own
    root.get(memo.TUNING, "landscape", lambda: "the base's")
    assert own.get(memo.TUNING, "landscape", lambda: "the derived one's") == "the derived one's"
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
