"""The compiled kernels warmed up: numba's cache on disk repaired once per process, every kernel compiled (or loaded
from that cache) with the argument types the app and the command line pass, and, in the app's server, all of it
done in a child process (`python -m retrieval warmup`, on another core, without this process's lock) while small
corpora are served by the kernels' plain-Python twins; the child is ended and reaped when the server exits.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np

import retrieval.fusion as fusion
import retrieval.kernels as _kernels

from ..core.params import Params
from ..corpus import dataset as datasets
from ..corpus import text
from ..corpus.embeddings import align, from_arrays
from ..kernels import disk_cache
from ..retrievers import bm25, dense, lsa

# The Engine class, handed over by engine.py as it is imported (engine.py imports this module; no import back).
Engine = None

WARM_UP_THREAD = "retrieval-warm-up"  # the name of start_warm_up's thread
log = logging.getLogger("retrieval")

_REPAIRED: list[str] = []  # repair_compiled_cache's warnings, once its one pass of the process is done ("" if none)
_REPAIR_LOCK = threading.Lock()


def repair_compiled_cache() -> list[str]:
    """Numba's cache on disk of every compiled kernel (the library's and the tokeniser's) checked once per process,
    before any kernel is loaded from it: a damaged one (an empty `.nbi` index, a cut data file) is cleared and
    compiled again rather than ending the first call in EOFError (`kernels.disk_cache`). Returns the
    warnings of this process's first call, each naming a cleared index file; later calls return nothing."""
    with _REPAIR_LOCK:
        if _REPAIRED:
            return []
        said = disk_cache.repair_disk_cache(disk_cache.cached_dispatchers([*_kernels.MODULES, text]))
        _REPAIRED.extend(said or [""])
        return said


def warm_up() -> dict[str, int]:
    """Compile every kernel with the argument types the app and the command line pass, or load it from numba's
    cache on disk (`cache=True`: `__pycache__` beside the module, or $NUMBA_CACHE_DIR): an engine on the invented
    corpus evaluated as the sliders do (a first run, a run with the previous one as a hint, both fusions over BM25 +
    LSA and over BM25 + dense vectors, a TREC run, the reference rankings). Returns each kernel's number of
    signatures. `python -m retrieval warmup` runs it, once after installing, so no first visit waits for numba.
    A damaged cache is cleared first (`repair_compiled_cache`)."""

    for w in repair_compiled_cache():
        log.warning("%s", w)

    with _kernels.compiled_here():
        ds = datasets.load("invented")
        # what a large corpus's index runs, its table grown past its first 256 terms (so _rehash is compiled too),
        # a batch tokenised in two halves (what a batch above text.BATCHING.split_above bytes takes: _merge too)
        words = " ".join(f"warm{i}" for i in range(300))
        text.build_index(ds.doc_texts + (words,) * 4, method="compiled", batching=text.Batching(split_above=0))
        e = Engine(ds)
        e.evaluate(Params())
        e.evaluate(Params(k1=1.3, b=0.5, alpha=0.3, rrf_k=20.0))  # BM25 with the previous run as its hint
        e.evaluate(Params(k1=1.3, b=0.5, dims=5))  # a d move: BM25's scores of LSA's new lists looked up
        rng = np.random.default_rng(0)
        vectors = align(
            from_arrays(
                "warm-up", ds.doc_ids, rng.normal(size=(ds.n_docs, 8)), ds.query_ids, rng.normal(size=(ds.n_queries, 8))
            ),
            ds,
        )
        e.evaluate(Params(members=("BM25", vectors.name)), sources=(vectors,))
        e.evaluate(Params(members=(vectors.name, "LSA", "BM25"), weights=(0.5, 0.3, 0.2)), sources=(vectors,))
        top = e.run("BM25", Params())
        lines = [
            f"{ds.query_ids[q]} Q0 {ds.doc_ids[d]} {r + 1} {float(s)!r} warm"
            for q in range(ds.n_queries)
            for r, (d, s) in enumerate(zip(top.top_d[q, : top.n_top[q]], top.top_s[q, : top.n_top[q]]))
        ]
        run = datasets.parse_run("\n".join(lines).encode(), "warm-up.trec", "warm")
        e.evaluate(Params(members=("BM25", "warm")), sources=(run,))
        bm25.search(ds, e.bm25_scores(1.2, 0.75))
        f = e.lsa_fit(6)
        lsa.search(ds, f.model, f.qvec)
        lsa.fit(e.index, 6, "randomized", by_term=e.bm25.counts)  # a large corpus's solver: lsa.Tfidf's kernels
        p = Params()
        bm, ls = e.run("BM25", p), e.run("LSA", p)
        none = np.zeros(0, dtype=np.int64)
        ls.at(none, none)
        nq, depth = ds.n_queries, p.fusion_depth  # the weighted fusion's second try (rare: ties at its bound)
        top = fusion.FusedTop(
            np.zeros((nq, depth), dtype=np.int64),
            np.zeros((nq, depth)),
            np.zeros(nq, dtype=np.int64),
            np.zeros(nq, dtype=np.bool_),
        )
        _kernels.weighted_scan(
            none,
            False,
            ds.n_docs,
            ds.tie_key,
            0.5,
            0.5,
            depth,
            fusion.PostingsSide(bm.plan.by_term, bm.norm, bm.k1 + 1.0, bm.lo, bm.hi),
            fusion.VectorSide(ls.qvec, ls.vecs, ls.top_d, ls.top_s, ls.n_top, ls.lo, ls.hi),
            top,
        )
    _kernels.mark_ready()
    return {name: len(d.signatures) for name, d in compiled_dispatchers().items()}


def compiled_dispatchers() -> dict:
    """Every compiled kernel's numba dispatcher by name, the library's and the tokeniser's (empty with
    NUMBA_DISABLE_JIT=1)."""
    return {**_kernels.dispatchers(), **text.dispatchers()}


_WARMING: list[threading.Thread] = []
_WARMING_LOCK = threading.Lock()


def start_warm_up(background_process: bool = True) -> threading.Thread:
    """Serve small corpora from the kernels' plain-Python twin, and the kernels numba's cache lacks from their numpy
    or plain-Python twins where that pays (`kernels.serve_uncompiled`; the same numbers), while a thread warms the
    compiled kernels up, once per process: first `python -m retrieval warmup` in a child process (numba compiles there, on
    another core, without holding this process's lock, and writes its cache), then `warm_up` here, which loads
    what the child wrote (or compiles, if it could not), then times the bundled encoder (`warm_up_and_calibrate`). Returns
    the thread (started at the first call only)."""

    with _WARMING_LOCK:
        if _WARMING:
            return _WARMING[0]
        for w in repair_compiled_cache():  # before the child's warm-up and any kernel of this process reads it
            log.warning("%s", w)
        dense.sweep_temporary_files()  # the vectors cache's orphan temporary files, at the app's start
        _kernels.serve_small_from_python()
        _kernels.serve_uncompiled()  # a medium corpus too: its kernels' twins rather than a compile in this process
        t = threading.Thread(target=warm_up_and_calibrate, args=(background_process,), name=WARM_UP_THREAD, daemon=True)
        _WARMING.append(t)
        t.start()
        return t


def warm_up_and_calibrate(background_process: bool) -> None:
    """The warm-up thread's work: the compiled kernels (in a child process first, when asked), then the bundled
    encoder's time per token (`dense.calibrate_when_idle`), timed once the machine is idle rather than on the Data
    page after the first upload, where it shared the cores with that upload's SVD: 0.9 s instead of 0.13 s in the
    browser, and every encoding estimate then about seven times too long."""

    if background_process:
        _warm_up_in_child()
    try:
        warm_up()
    except RuntimeError as e:  # the process is exiting while the thread warms: the thread pools take no more work
        if "shutdown" not in str(e):
            raise
        return
    finally:
        _kernels.mark_ready()  # whatever happened, the compiled kernels now compile on demand
    try:
        dense.calibrate_when_idle()
    except Exception:  # noqa: BLE001 - no encoder here: the Data page says so when it asks for an estimate
        pass


_CHILDREN: list[subprocess.Popen] = []  # the warm-up child while it runs: ended and reaped when this process exits


def _end_children() -> None:
    """At this process's exit (a server stopped, SIGTERM included): end the warm-up child and reap it, so it is not
    left a zombie under an init that reaps nothing. A server killed with SIGKILL runs nothing: its child sees its
    parent gone and exits, and only the process that adopts it (init, or `docker run --init`) can reap it."""
    for child in list(_CHILDREN):
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            child.kill()
            child.wait(timeout=10)


atexit.register(_end_children)


def _warm_up_in_child(timeout: float = 900.0) -> bool:
    """`python -m retrieval warmup` in a child process with this package importable; False if it failed."""

    root = str(Path(__file__).resolve().parents[2])  # the folder holding the package `retrieval`
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)}
    try:
        child = subprocess.Popen(
            [sys.executable, "-m", "retrieval", "warmup", "--quiet", "--with-parent"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    except OSError:
        return False
    _CHILDREN.append(child)
    try:
        return child.wait(timeout=timeout) == 0
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
        return False
    finally:
        _CHILDREN.remove(child)
