"""The speed benchmark of issue 4: index build, slider tick and peak memory, beside bm25s and rank_bm25, in one run.

    .venv/bin/python bench/speed.py [--sizes 10000,100000,1000000] [--cranfield PATH] [--ticks 7] [--no-peers]

For Cranfield (if its folder is given or found at ../shared/datasets/cranfield) and for each synthetic size
(bench/synthetic.py: 1,000 questions), every measurement runs in its own subprocess, so that each peak memory
is that work's alone: the peak resident set (VmHWM) is reset after the dataset is loaded and read after the
ticks, so it counts the dataset held in memory plus everything the app's path built on top of it (the scipy
reference product measured afterwards is reported apart: `peak_rss_with_reference_gib` in the JSON).

* **ours**: `engine.Engine(dataset)` (tokenise, count matrix, BM25 columns, question plan; "index" is the
  tokenise + count matrix part alone), the LSA fit at d = 6, then slider ticks: each tick is a new k1
  (1.25, 1.30, ...), so BM25 is re-weighted and re-scored for every question, both fusions recomputed and
  every metric computed for every system (`Engine.evaluate`, 8 metrics), the median
  reported. Also: an alpha tick, an RRF-constant tick, a d tick (LSA refit), the parts of a k1 tick, and the
  scipy sparse product alone (`bm25.score`, the reference algebra, without any ranking), which the compiled
  kernel is measured against. On Cranfield also the 16 x 11 (k1, b) grid: BM25 ranked and nDCG@10 per cell.
* **before**: the same tick with the code before this change (retrieval/ at `--before-commit`, default 4fce076,
  read from git).
* **bm25s** (0.3.16): tokenise and index, then the tick it can do: re-index at a new k1/b and retrieve the top
  100 for every question (no metric). Its numba backend is used when numba is installed (`backend_selection`
  auto), the best it offers.
* **rank_bm25** (0.2.2): BM25Okapi built once, then `get_scores` + top 100 for a sample of questions (all of
  them up to 10k documents), the time for all 1,000 questions extrapolated from the sample.

`--round2` (issue 15) measures, alternating the code before (`--round2-before`, default 7a04e34, a `git archive`
of that commit under bench/out/) and ours, each in fresh processes: the first `python -m retrieval evaluate` after
a fresh clone (numba's cache empty: a new NUMBA_CACHE_DIR) against the second one, and ours after `python -m
retrieval warmup`; and on a synthetic corpus given as a BEIR zip, the upload's stages (parse, engine build, first
evaluation with its LSA fit), d slider ticks (the LSA fit alone and the whole evaluation) and k1 ticks. Medians.
`--pairs N` (issue 15, twelfth round) measures our k1 tick and the code before's, each in its own process, the
processes alternated N times per dataset. `--passes` (issue 15, third round) measures LSA's and the dense
retriever's exact pass alone at d = 6, 40, 200 and 384, before and ours alternated, beside a plain numpy float32
top-100; `--scale N`, ours alone at N documents. `--sweep` (issue 45): the k1 x b sweep (`tuning.sweep_bm25`), ours
and `--before-commit` alternated, beside bm25s's cost per setting (bench/sweep.py).

Peers are benchmark-only dependencies: `pip install -r bench/requirements.txt`. Machine: 2 cores; set
RETRIEVAL_THREADS to change the threads our kernels use.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = Path(__file__).resolve().parent
OUT = BENCH / "out"
for p in (str(ROOT), str(BENCH)):
    if p not in sys.path:
        sys.path.insert(0, p)

METRICS = "hit@3,recall@5,recall@100,precision@10,mrr,ndcg@5,ndcg@10,ndcg_exp@10"
BEFORE_COMMIT = os.environ.get("BENCH_BEFORE_COMMIT", "4fce076")  # the code before this change (--before-commit)
DEFAULT_CRANFIELD = ROOT.parent / "shared" / "datasets" / "cranfield"


# ------------------------------------------------------------------------------------------- helpers


def _status(field: str) -> int:
    """A field of /proc/self/status in bytes (VmHWM, VmRSS), 0 where unavailable."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _reset_peak() -> bool:
    """Reset the peak resident set to the current one (Linux: clear_refs 5)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def _load(target: str):
    """The dataset of a target: 'cranfield:PATH' or a synthetic size."""
    from retrieval.corpus import dataset as datasets

    if target.startswith("cranfield:"):
        return datasets.load(target.split(":", 1)[1])
    import synthetic

    return synthetic.load(int(target))


def _median(xs: list[float]) -> float:
    return float(statistics.median(xs)) if xs else float("nan")


def _timed(fn, *args, **kw):
    t = time.perf_counter()
    out = fn(*args, **kw)
    return time.perf_counter() - t, out


# ------------------------------------------------------------------------------------------- children


def child_ours(target: str, ticks: int) -> dict:
    """Our build, ticks and memory on one dataset."""
    import numpy as np

    from retrieval.core.params import Params
    from retrieval.corpus import text
    from retrieval.engine.engine import Engine
    from retrieval.evaluation import metrics
    from retrieval.evaluation.experiment import score
    from retrieval.retrievers import bm25, lsa

    ds = _load(target)
    gc.collect()
    rss_loaded = _status("VmRSS")
    peak_ok = _reset_peak()
    out: dict = {"target": target, "docs": ds.n_docs, "queries": ds.n_queries, "judgements": len(ds.qrels)}

    out["index_s"], index = _timed(text.build_index, ds.doc_texts)
    del index
    gc.collect()
    out["prepare_s"], prep = _timed(Engine, ds)
    idx = prep.index
    df = idx.doc_freq
    q = prep.qcounts
    per_q = np.add.reduceat(df[q.indices], q.indptr[:-1]) if q.nnz else np.zeros(q.shape[0])
    per_q = np.where(np.diff(q.indptr) > 0, per_q, 0)
    out.update(
        vocab=len(idx.vocabulary),
        nnz=int(idx.counts.nnz),
        avg_len=float(idx.avg_len),
        terms_per_q=float(np.diff(q.indptr).mean()),
        postings_per_q_over_n=float(per_q.mean() / ds.n_docs),
    )

    mlist = metrics.parse_list(METRICS)
    p0 = Params()
    out["lsa_fit_s"], fit = _timed(prep.lsa_fit, p0.dims)
    out["lsa_note"] = fit.model.note
    out["lsa_rank_s"], _ = _timed(lsa.run, ds, fit.model, fit.qvec, max(p0.depth, p0.fusion_depth))
    out["first_tick_s"], ranks = _timed(prep.evaluate, p0, METRICS)
    out["matched_fraction"] = float(ranks.rankings["BM25"].n_results.mean() / ds.n_docs)
    out["means"] = {s: {m: round(v, 6) for m, v in row.items()} for s, row in ranks.means().items()}

    def tick(params):
        return prep.evaluate(params, METRICS)

    k1s = [round(1.25 + 0.05 * i, 2) for i in range(ticks)]
    times, rescans, fallbacks = [], [], []
    for k1 in k1s:
        t, ev = _timed(tick, Params(k1=k1))
        times.append(t)
        w = prep.weighted(Params(k1=k1))  # cached by the tick: its counts of second tries
        rescans.append(w.rescans)
        fallbacks.append(w.fallbacks)
    out.update(
        tick_s=_median(times),
        tick_all=[round(t, 4) for t in times],
        tick_k1s=k1s,
        rescans=int(max(rescans)),
        fallbacks=int(max(fallbacks)),
    )
    # a tick's parts (fresh k1 values again)
    parts = {"bm25": [], "fusions": [], "metrics": []}
    for i in range(ticks):
        p = Params(k1=round(2.05 + 0.05 * i, 2))
        t, _ = _timed(prep.run, "BM25", p)
        parts["bm25"].append(t)
        t, _ = _timed(lambda: (prep.weighted(p), prep.rrf(p)))
        parts["fusions"].append(t)
        ranked = prep.rankings(p)
        t, _ = _timed(score, ds, ranked, mlist)
        parts["metrics"].append(t)
    out.update({f"part_{k}_s": _median(v) for k, v in parts.items()})
    alphas = [0.3, 0.4, 0.6, 0.7, 0.2, 0.8, 0.1][:ticks]
    out["alpha_tick_s"] = _median([_timed(tick, Params(alpha=a))[0] for a in alphas])
    out["rrf_tick_s"] = _median([_timed(tick, Params(rrf_k=float(k)))[0] for k in range(40, 40 + ticks)])
    out["d_tick_s"] = _timed(tick, Params(dims=8))[0]
    out["peak_rss_gib"] = _status("VmHWM") / 2**30 if peak_ok else float("nan")  # the product's path, up to here
    # the reference algebra alone: scipy's sparse product, no ranking (skipped where its matrix gets huge)
    if ds.n_docs <= 200_000:
        out["scipy_score_s"] = _median(
            [_timed(bm25.score, prep.bm25, prep.qcounts, k1, 0.75)[0] for k1 in (1.1, 1.3, 1.5)]
        )
        out["kernel_bm25_s"] = _median(
            [_timed(bm25.run, prep.bm25, prep.plan, ds, k1, 0.75, 100)[0] for k1 in (1.1, 1.3, 1.5)]
        )
    if target.startswith("cranfield:"):
        out.update(_grid(ds, prep))
    out["peak_rss_with_reference_gib"] = _status("VmHWM") / 2**30 if peak_ok else float("nan")  # + scipy's product
    out["dataset_rss_gib"] = rss_loaded / 2**30
    return out


def _grid(ds, prep) -> dict:
    """The 16 x 11 (k1, b) grid on one dataset: BM25 re-ranked and nDCG@10 per question at every cell."""
    import numpy as np

    from retrieval.evaluation import metrics
    from retrieval.retrievers import bm25

    m = metrics.parse("ndcg@10")
    k1s, bs = np.arange(16) * 3 / 15, np.arange(11) / 10
    t = time.perf_counter()
    best = -1.0
    for k1 in k1s:
        for b in bs:
            run = bm25.run(prep.bm25, prep.plan, ds, float(k1), float(b), 100)
            v = metrics.per_query(ds.qrels, ds.n_queries, run.ranking.judged_rank, m)[ds.evaluated]
            best = max(best, float(v.mean()))
    out = {"grid_s": time.perf_counter() - t, "grid_best_ndcg10": round(best, 6)}
    try:
        from retrieval.analyses import tuning

        t = time.perf_counter()
        tuning.sweep_bm25(ds, "ndcg@10", engine=prep)
        out["grid_tuning_sweep_s"] = time.perf_counter() - t
    except Exception as e:  # noqa: BLE001 - another module's function, reported, never fatal
        out["grid_tuning_sweep_error"] = repr(e)[:200]
    return out


DENSE_DIM = 384  # multilingual-e5-small's width
DENSE_SEED = 0


def child_dense(target: str, ticks: int) -> dict:
    """The dense system on a corpus: seeded random unit vectors (DENSE_DIM wide, float32; the bundled model
    would take hours to encode 100,000 documents on 2 cores), ranked exactly by ours (best 1,000 raw cosines and
    every judged document's rank) and by a plain numpy top-k (float32 BLAS product in blocks of 100 questions,
    argpartition, then the top 100 sorted by score and id: no judged ranks); then fusion-only ticks of
    BM25 + dense; the bundled model's encoding rate on real text (Cranfield's first 64 documents if the target
    is Cranfield, else the invented corpus)."""
    import numpy as np

    from retrieval.core.params import Params
    from retrieval.corpus import embeddings
    from retrieval.engine.engine import Engine
    from retrieval.retrievers import dense
    from retrieval.retrievers.systems import system_of

    ds = _load(target)
    rng = np.random.default_rng(DENSE_SEED)
    unit = lambda x: x / np.linalg.norm(x, axis=1, keepdims=True)  # noqa: E731
    docs = unit(rng.standard_normal((ds.n_docs, DENSE_DIM)).astype(np.float32))
    queries = unit(rng.standard_normal((ds.n_queries, DENSE_DIM)).astype(np.float32))
    aligned = embeddings.align(embeddings.from_arrays("random", ds.doc_ids, docs, ds.query_ids, queries), ds)
    gc.collect()
    peak_ok = _reset_peak()
    out: dict = {"target": target, "docs": ds.n_docs, "queries": ds.n_queries, "dim": DENSE_DIM}
    engine = Engine(ds)
    system = system_of(aligned)
    system.run(engine.context(), Params(), 100)  # compiled once, outside the timing
    out["ours_topk_s"] = _median([_timed(system.run, engine.context(), Params(), 100)[0] for _ in range(min(ticks, 3))])

    def numpy_topk(k: int = 100) -> None:
        for start in range(0, queries.shape[0], 100):
            s = queries[start : start + 100] @ docs.T
            top = np.argpartition(-s, k - 1, axis=1)[:, :k]
            vals = np.take_along_axis(s, top, axis=1)
            keys = ds.tie_key[top]
            order = np.lexsort((keys, -vals), axis=1)
            np.take_along_axis(top, order, axis=1)

    out["numpy_topk_s"] = _median([_timed(numpy_topk)[0] for _ in range(min(ticks, 3))])
    members = Params(members=("BM25", "dense"))
    engine.evaluate(members, METRICS, (aligned,))
    out["fusion_alpha_tick_s"] = _median(
        [
            _timed(engine.evaluate, Params(members=("BM25", "dense"), alpha=a), METRICS, (aligned,))[0]
            for a in (0.3, 0.4, 0.6, 0.7, 0.2, 0.8, 0.1)[:ticks]
        ]
    )
    out["fusion_rrf_tick_s"] = _median(
        [
            _timed(engine.evaluate, Params(members=("BM25", "dense"), rrf_k=float(k)), METRICS, (aligned,))[0]
            for k in range(40, 40 + ticks)
        ]
    )
    out["rescans"] = engine.weighted(members, (aligned,)).rescans
    out["peak_rss_gib"] = _status("VmHWM") / 2**30 if peak_ok else float("nan")
    sample = _load(target) if target.startswith("cranfield:") else _load_invented()
    texts = list(sample.doc_texts[:64])
    dense.encode_passages(texts[:2])  # the model's load is not part of the rate
    t, _ = _timed(dense.encode_passages, texts)
    out["encode_docs_per_s"] = len(texts) / t
    out["encode_sample"] = f"{'Cranfield' if target.startswith('cranfield:') else 'invented'}, {len(texts)} documents"
    return out


def _load_invented():
    from retrieval.corpus import dataset as datasets

    return datasets.load("invented")


def _before_package() -> Path | None:
    """The retrieval package as it was at BEFORE_COMMIT (every file of it, subpackages too), extracted from git into
    bench/out/."""
    dest = OUT / f"before-{BEFORE_COMMIT}" / "retrieval"
    if (dest / "__init__.py").exists():
        return dest.parent
    try:
        names = subprocess.run(
            ["git", "ls-tree", "-r", "--name-only", BEFORE_COMMIT, "retrieval/"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        for n in (n for n in names if n.endswith(".py")):
            src = subprocess.run(
                ["git", "show", f"{BEFORE_COMMIT}:{n}"], cwd=ROOT, capture_output=True, text=True, check=True
            ).stdout
            target = dest.parent / n
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(src)
    except (OSError, subprocess.CalledProcessError):
        return None
    return dest.parent


def _module(*names: str):
    """The first of `names` that imports: one module under the layout of whichever tree is on the path (the
    package split into layers, or the flat package before it)."""
    for name in names:
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    raise ImportError(f"none of {', '.join(names)}")


def child_before(target: str, ticks: int) -> dict:
    """The tick of the code before this change (its own package, same dataset)."""
    pkg = _before_package()
    if pkg is None:
        return {"error": f"git could not give retrieval/ at {BEFORE_COMMIT}"}
    ds = _load(target)
    sys.path.insert(0, str(pkg))
    for name in [m for m in sys.modules if m == "retrieval" or m.startswith("retrieval.")]:
        del sys.modules[name]
    experiment = _module("retrieval.evaluation.experiment", "retrieval.experiment")  # the old package now
    metrics = _module("retrieval.evaluation.metrics", "retrieval.metrics")

    gc.collect()
    peak_ok = _reset_peak()
    out = {"target": target}
    if not hasattr(experiment, "prepare"):  # a tree of the engine's days: the k1 ticks of `child_ours`
        Params = _module("retrieval.core.params", "retrieval.params").Params
        Engine = _module("retrieval.engine.engine", "retrieval.engine").Engine

        out["prepare_s"], prep = _timed(Engine, ds)
        prep.evaluate(Params(), METRICS)  # its LSA fit, and numba's compiling in a fresh cache
        out["tick_s"] = _median(
            [_timed(prep.evaluate, Params(k1=round(1.25 + 0.05 * i, 2)), METRICS)[0] for i in range(ticks)]
        )
        out["peak_rss_gib"] = _status("VmHWM") / 2**30 if peak_ok else float("nan")
        return out
    out["prepare_s"], prep = _timed(experiment.prepare, ds)
    mlist = metrics.parse_list(METRICS)
    times = []
    for i in range(min(ticks, 3)):
        t, _ = _timed(
            lambda: experiment.score(
                ds, experiment.rankings(ds, experiment.Params(k1=1.25 + 0.05 * i), prep=prep), mlist
            )
        )
        times.append(t)
    out["tick_s"] = _median(times)  # includes its LSA refit (the old code had no LSA cache)
    out["peak_rss_gib"] = _status("VmHWM") / 2**30 if peak_ok else float("nan")
    return out


def child_bm25s(target: str, ticks: int) -> dict:
    """bm25s: index, then re-index at new k1/b and retrieve the top 100 of every question."""
    import bm25s
    import numpy as np

    from retrieval.corpus.text import tokenize

    ds = _load(target)
    gc.collect()
    peak_ok = _reset_peak()
    out = {"target": target, "version": getattr(bm25s, "__version__", "?")}
    t = time.perf_counter()
    corpus = [tokenize(x) for x in ds.doc_texts]
    queries = [tokenize(x) for x in ds.query_texts]
    out["tokenise_s"] = time.perf_counter() - t
    k = min(100, ds.n_docs)

    def index(k1, b):
        r = bm25s.BM25(k1=k1, b=b, method="lucene")
        r.index(corpus, show_progress=False)
        return r

    out["index_s"], retriever = _timed(index, 1.2, 0.75)
    vocab = retriever.vocab_dict
    qs = [[w for w in qt if w in vocab] or [next(iter(vocab))] for qt in queries]  # bm25s needs a known token
    out["retrieve_s"], _ = _timed(retriever.retrieve, qs, k=k, show_progress=False)
    try:
        out["backend"] = (
            str(getattr(retriever, "backend", "?")) + "/" + ("numba" if "numba" in sys.modules else "numpy")
        )
    except Exception:  # noqa: BLE001
        out["backend"] = "?"
    times = []
    n = max(1, ticks if ds.n_docs <= 200_000 else 1)
    for i in range(n):
        t = time.perf_counter()
        r = index(1.25 + 0.05 * i, 0.75)
        r.retrieve(qs, k=k, show_progress=False)
        times.append(time.perf_counter() - t)
        del r
    out["tick_s"] = _median(times)
    out["tick_all"] = [round(x, 3) for x in times]
    out["peak_rss_gib"] = _status("VmHWM") / 2**30 if peak_ok else float("nan")
    del np
    return out


def child_rank_bm25(target: str, ticks: int, sample: int) -> dict:
    """rank_bm25: BM25Okapi built once, get_scores + top 100 on a sample of questions, extrapolated to all."""
    import numpy as np
    from rank_bm25 import BM25Okapi

    from retrieval.corpus.text import tokenize

    ds = _load(target)
    gc.collect()
    peak_ok = _reset_peak()
    out = {"target": target}
    corpus = [tokenize(x) for x in ds.doc_texts]
    queries = [tokenize(x) for x in ds.query_texts]
    out["index_s"], bm = _timed(BM25Okapi, corpus, k1=1.25, b=0.75)
    del corpus
    n = min(sample, len(queries))
    pick = np.linspace(0, len(queries) - 1, n).astype(int)
    k = min(100, ds.n_docs)
    t = time.perf_counter()
    for i in pick:
        s = bm.get_scores(queries[i])
        top = np.argpartition(-s, k - 1)[:k]
        top[np.lexsort((top, -s[top]))]
    per_q = (time.perf_counter() - t) / n
    out.update(sample=int(n), per_question_s=per_q, tick_s=per_q * len(queries), extrapolated=n < len(queries))
    out["peak_rss_gib"] = _status("VmHWM") / 2**30 if peak_ok else float("nan")
    return out


# ------------------------------------------------------------------------------------------- issue 15: round 2

ROUND2_BEFORE = "7a04e34"
D_TICKS = (7, 8, 5, 4, 3, 2)  # after the first fit at d = 6: within its block on a large corpus
D_NEW_BLOCK = 12  # the next block's first fit
D_SCALE_AHEAD = (3, 2, 1)  # --scale: steps after a pause down from D_TICKS' fourth (4), at values not visited yet
D_AHEAD_QUICK = (11, 10, 9)  # steps down from it, each taken at once
D_AHEAD_PAUSED = (13, 14, 15, 16)  # then steps up from it, each after the step computed ahead is done


def _tree(commit: str) -> Path:
    """The whole repository at `commit` (git archive) under bench/out/, for running its own command line."""
    dest = OUT / f"tree-{commit}"
    if not (dest / "retrieval" / "__main__.py").exists():
        dest.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "archive", commit], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


def _zip_of(n_docs: int) -> Path:
    """bench/synthetic.py's corpus as a BEIR zip under bench/out/ (what the Data page receives)."""
    sys.path.insert(0, str(BENCH))
    import browser_latency

    return browser_latency.synthetic_zip(n_docs, OUT)


def first_run(tree: Path, warm_up: bool = False) -> dict:
    """`python -m retrieval evaluate` in `tree` with an empty numba cache, then again (the cache written by the
    first); with `warm_up`, `python -m retrieval warmup` first (what an install step would run)."""
    import tempfile

    out = {}
    with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache, "PYTHONPATH": str(tree)}
        if warm_up:
            t = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "retrieval", "warmup", "--quiet"],
                cwd=tree,
                env=env,
                check=True,
                capture_output=True,
            )
            out["warmup_s"] = time.perf_counter() - t
        for key in ("cold_s", "warm_s"):
            t = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "retrieval", "evaluate"], cwd=tree, env=env, check=True, capture_output=True
            )
            out[key] = time.perf_counter() - t
    return out


def _steps_after_a_pause(e, start: int, steps) -> tuple[list[float], list[float]]:
    """d steps from `start`, each after the person's pause: what the app computes ahead of the step (ours:
    Engine.prefetch, as ui/cache.rankings calls it) is done first. The steps' times and the pauses they needed
    (before: no pause, every step computed when taken)."""
    from retrieval.core.params import Params

    times, pauses, prev = [], [], start
    for d in steps:
        t = time.perf_counter()
        thread = e.prefetch(Params(dims=prev)) if hasattr(e, "prefetch") else None
        if thread is not None:
            thread.join()
        pauses.append(time.perf_counter() - t)
        times.append(_timed(e.evaluate, Params(dims=d), METRICS)[0])
        prev = d
    return times, pauses


def child_stages(target: str, ticks: int) -> dict:
    """The upload's stages and the slider ticks of the package first on sys.path (ours or a tree's)."""
    from retrieval.core.params import Params
    from retrieval.corpus import dataset as datasets
    from retrieval.engine.engine import Engine

    data = _zip_of(int(target)).read_bytes()
    out = {"package": str(Path(datasets.__file__).parent)}
    out["parse_s"], ds = _timed(datasets.load_beir_zip, data, "synthetic.zip")
    out["engine_s"], e = _timed(Engine, ds)
    if hasattr(e, "first_rankings"):  # ours: what the app does, the SVD in the engine's thread, the rest at once
        from retrieval.evaluation.experiment import score
        from retrieval.evaluation.metrics import parse_list

        t = time.perf_counter()
        e.fit_in_background(Params().dims)
        score(ds, e.first_rankings(Params()), parse_list(METRICS))
        out["first_look_s"] = time.perf_counter() - t
        e.evaluate(Params(), METRICS)  # waits for the background fit
        out["first_evaluation_s"] = time.perf_counter() - t
    else:
        out["first_evaluation_s"], _ = _timed(e.evaluate, Params(), METRICS)
        out["first_look_s"] = out["first_evaluation_s"]  # the first chart is the full one
    out["upload_total_s"] = out["parse_s"] + out["engine_s"] + out["first_evaluation_s"]
    out["upload_first_chart_s"] = out["parse_s"] + out["engine_s"] + out["first_look_s"]
    fits, d_ticks = [], []
    for d in D_TICKS[:ticks]:
        fits.append(_timed(e.lsa_fit, d)[0])
        d_ticks.append(_timed(e.evaluate, Params(dims=d), METRICS)[0])
    totals = [f + t for f, t in zip(fits, d_ticks)]
    out.update(
        d_fit_s=_median(fits),
        d_fit_all=[round(x, 4) for x in fits],
        d_tick_s=_median(d_ticks),
        d_tick_all=[round(x, 4) for x in d_ticks],
        d_total_s=_median(totals),
    )
    out["d_new_block_fit_s"] = _timed(e.lsa_fit, D_NEW_BLOCK)[0]
    out["d_new_block_note"] = e.lsa_fit(D_NEW_BLOCK).model.note
    # the d steps the app computes ahead (ours: Engine.prefetch after each evaluation, as ui/cache.rankings does), at d
    # values no tick above visited: a person who steps at once (within engine.PREFETCH_DELAY: the step is computed
    # when taken, nothing ahead has started), then one who pauses between steps (the step computed ahead is done).
    # Before: every step is computed when taken.
    ahead = hasattr(e, "prefetch")
    e.evaluate(Params(dims=D_NEW_BLOCK), METRICS)
    quick, prev = [], D_NEW_BLOCK
    for d in D_AHEAD_QUICK[:ticks]:
        if ahead:
            e.prefetch(Params(dims=prev))
        quick.append(_timed(e.evaluate, Params(dims=d), METRICS)[0])
        prev = d
    paused, _ = _steps_after_a_pause(e, D_NEW_BLOCK, D_AHEAD_PAUSED[:ticks])
    out.update(
        d_ahead_s=_median(paused),
        d_ahead_all=[round(x, 4) for x in paused],
        d_quick_s=_median(quick),
        d_quick_all=[round(x, 4) for x in quick],
    )
    k1 = [_timed(e.evaluate, Params(k1=round(1.25 + 0.05 * i, 2)), METRICS)[0] for i in range(ticks)]
    out.update(k1_tick_s=_median(k1), k1_tick_all=[round(x, 4) for x in k1])
    alpha = [_timed(e.evaluate, Params(k1=1.25, alpha=round(0.05 + 0.1 * i, 2)), METRICS)[0] for i in range(ticks)]
    out.update(alpha_tick_s=_median(alpha), alpha_tick_all=[round(x, 4) for x in alpha])
    return out


PASS_DIMS = (6, 40, 200, 384)  # LSA at the default, a middle and the largest d; 384: the dense retriever's width


def _pass_dims() -> tuple[int, ...]:
    """--pass-dims (the children read it from the environment), else PASS_DIMS."""
    return tuple(int(x) for x in os.environ.get("BENCH_PASS_DIMS", "").split(",") if x.strip()) or PASS_DIMS


def child_passes(target: str, ticks: int) -> dict:
    """LSA's and the dense retriever's exact pass alone (`lsa_rank`: every question against every document, the best
    1,000 raw cosines and every judged document's rank) at each of PASS_DIMS or --pass-dims (LSA fits; 384: seeded
    random unit vectors, the width of the bundled model's), best of `ticks`; and the peer on the last d's vectors,
    a plain numpy float32 top-100 (BLAS product in blocks of 100 questions, argpartition, sorted by score and id;
    no judged ranks)."""
    import numpy as np

    from retrieval import kernels as _kernels
    from retrieval.engine.engine import Engine
    from retrieval.retrievers.ranking import THRESHOLD, PassOutputs, Selection

    _kernels.mark_ready()
    ds = _load(target)
    engine = Engine(ds)
    rng = np.random.default_rng(DENSE_SEED)
    unit = lambda x: x / np.linalg.norm(x, axis=1, keepdims=True)  # noqa: E731
    out: dict = {"package": str(Path(_kernels.__file__).parent)}
    for d in _pass_dims():
        if d == 384:
            vt = np.ascontiguousarray(unit(rng.standard_normal((ds.n_docs, d))).T)
            qv = unit(rng.standard_normal((ds.n_queries, d)))
        else:
            fit = engine.lsa_fit(d)
            vt, qv = fit.model.vt, np.ascontiguousarray(fit.qvec, dtype=np.float64)

        def one() -> None:
            o = PassOutputs.empty(ds, 1000)
            _kernels.parallel(
                _kernels.lsa_rank, ds.n_queries, 10**9, qv, vt, Selection(ds.tie_key, THRESHOLD, 1000), o, 0
            )

        one()  # compiled or loaded once, outside the timing
        out[f"pass_{d}_s"] = min(_timed(one)[0] for _ in range(max(1, min(ticks, 3))))
    docs32, q32 = np.ascontiguousarray(vt.T, dtype=np.float32), qv.astype(np.float32)

    def numpy_topk(k: int = 100) -> None:
        for start in range(0, q32.shape[0], 100):
            sc = q32[start : start + 100] @ docs32.T
            top = np.argpartition(-sc, k - 1, axis=1)[:, :k]
            vals = np.take_along_axis(sc, top, axis=1)
            np.take_along_axis(top, np.lexsort((ds.tie_key[top], -vals), axis=1), axis=1)

    out["peer_dims"] = d
    out["numpy_top100_s"] = min(_timed(numpy_topk)[0] for _ in range(max(1, min(ticks, 3))))
    return out


def child_scale(target: str, ticks: int) -> dict:
    """Ours alone on a large synthetic corpus (from bench/synthetic.py's arrays, no zip): engine build, first
    evaluation, d steps within the first block (fit, evaluation), d steps after a pause (computed ahead: the pause
    each needed, then the step), k1 ticks, peak RSS."""
    from retrieval import kernels as _kernels
    from retrieval.core.params import Params
    from retrieval.engine.engine import Engine

    _kernels.mark_ready()
    ds = _load(target)
    out: dict = {}
    out["engine_s"], e = _timed(Engine, ds)
    out["first_evaluation_s"], _ = _timed(e.evaluate, Params(), METRICS)
    fits, evals = [], []
    for d in D_TICKS[: max(1, min(ticks, 4))]:
        fits.append(_timed(e.lsa_fit, d)[0])
        evals.append(_timed(e.evaluate, Params(dims=d), METRICS)[0])
    out.update(d_fit_all=[round(x, 3) for x in fits], d_tick_all=[round(x, 3) for x in evals])
    if hasattr(e, "prefetch"):
        ahead, waited = _steps_after_a_pause(e, d, D_SCALE_AHEAD[: max(1, min(ticks, 3))])
        out.update(d_ahead_all=[round(x, 4) for x in ahead], d_ahead_pause_all=[round(x, 3) for x in waited])
    k1 = [_timed(e.evaluate, Params(dims=d, k1=round(1.25 + 0.05 * i, 2)), METRICS)[0] for i in range(ticks)]
    out.update(k1_tick_all=[round(x, 3) for x in k1], k1_tick_s=_median(k1[1:] or k1))
    out["peak_rss_gib"] = _status("VmHWM") / 2**30
    return out


def passes(args) -> str:
    """`child_passes` in the 'before' tree and ours, alternated `args.repeats` times; the best of each as a table."""
    before = _tree(args.round2_before)
    size = str(int(args.round2_size))
    runs: dict[str, list[dict]] = {"before": [], "ours": []}
    for _ in range(args.repeats):
        for kind, tree in (("before", before), ("ours", ROOT)):
            cmd = [sys.executable, __file__, "--child", "passes", "--target", size, "--ticks", str(args.ticks)]
            proc = subprocess.run(
                cmd,
                capture_output=True,
                text=True,
                timeout=args.timeout,
                env={**os.environ, "BENCH_PACKAGE": str(tree)},
            )
            lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
            if proc.returncode or not lines:
                print(proc.stderr[-2000:], file=sys.stderr)
                continue
            runs[kind].append(json.loads(lines[-1]))
            print(f"[passes] {kind}: {lines[-1]}", file=sys.stderr, flush=True)
    best = {k: {f: min(r[f] for r in rs) for f in rs[0] if f != "package"} for k, rs in runs.items() if rs}
    b, o = best.get("before", {}), best.get("ours", {})
    lines = [
        f"the exact pass (lsa_rank), {int(size):,} synthetic documents x 1,000 questions, best of "
        f"{args.repeats} alternated runs x 3; before = {args.round2_before}",
        "",
        "| d | before | ours | ratio |",
        "|---|---|---|---|",
    ]
    for d in _pass_dims():
        key = f"pass_{d}_s"
        lines.append(f"| {d} | {_fmt_s(b.get(key))} | {_fmt_s(o.get(key))} | {_ratio(b.get(key), o.get(key))} |")
    lines.append(
        f"| numpy float32 top-100, {o.get('peer_dims', b.get('peer_dims'))}-d (the peer) | "
        f"{_fmt_s(b.get('numpy_top100_s'))} | {_fmt_s(o.get('numpy_top100_s'))} | |"
    )
    return "\n".join(lines)


def round2(args) -> str:
    """Before and ours alternated, `args.repeats` times each; the medians as a table."""
    before = _tree(args.round2_before)
    size = int(args.round2_size)
    _zip_of(size)  # written once, outside the measurements
    for tree in (before, ROOT):  # each tree's own numba cache written once, so that the stages measure no compiling
        subprocess.run(
            [sys.executable, "-m", "retrieval", "evaluate"],
            cwd=tree,
            capture_output=True,
            env={k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"} | {"PYTHONPATH": str(tree)},
        )
    rows: dict[str, dict[str, list]] = {"before": {}, "ours": {}, "ours + warmup": {}}

    def add(kind: str, res: dict) -> None:
        for k, v in res.items():
            if isinstance(v, (int, float)):
                rows[kind].setdefault(k, []).append(v)
        print(f"[round2] {kind}: {json.dumps(res)[:600]}", file=sys.stderr, flush=True)

    for _ in range(args.repeats):
        if not args.no_first_runs:
            add("before", first_run(before))
            add("ours", first_run(ROOT))
            add("ours + warmup", first_run(ROOT, warm_up=True))
        for kind, tree in (("before", before), ("ours", ROOT)):
            cmd = [sys.executable, __file__, "--child", "stages", "--target", str(size), "--ticks", str(args.ticks)]
            proc = subprocess.run(
                cmd,
                capture_output=True,
                text=True,
                timeout=args.timeout,
                env={**os.environ, "BENCH_PACKAGE": str(tree)},
            )
            lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
            add(kind, json.loads(lines[-1]) if proc.returncode == 0 and lines else {})
            if proc.returncode:
                print(proc.stderr[-2000:], file=sys.stderr)
    (OUT / "round2.json").write_text(json.dumps(rows, indent=1))  # every run's figures, not only the medians
    med = {kind: {k: _median(v) for k, v in r.items()} for kind, r in rows.items()}
    b, o, w = med["before"], med["ours"], med["ours + warmup"]
    lines = [
        f"round 2 (issue 15): medians of {args.repeats} alternated runs, before = {args.round2_before}; "
        f"synthetic {size:,} documents as a BEIR zip; load average at the end "
        + " / ".join(f"{x:.1f}" for x in os.getloadavg()),
        "",
        "| what a person waits for | before | ours |",
        "|---|---|---|",
    ]

    def row(label, key, fmt=_fmt_s):
        lines.append(f"| {label} | {fmt(b.get(key))} | {fmt(o.get(key))} |")

    row("first `python -m retrieval evaluate` after a fresh clone (empty numba cache)", "cold_s")
    row("the second run (cache written)", "warm_s")
    lines.append(
        f"| ours after `python -m retrieval warmup` ({_fmt_s(w.get('warmup_s'))}): first run, second | - | "
        f"{_fmt_s(w.get('cold_s'))}, {_fmt_s(w.get('warm_s'))} |"
    )
    lines.append(
        f"| first run / second run | {_ratio(b.get('cold_s'), b.get('warm_s'))} | {_ratio(o.get('cold_s'), o.get('warm_s'))} |"
    )
    row("upload: parse the zip", "parse_s")
    row("upload: engine build (tokenise, index, BM25 plan)", "engine_s")
    row("upload: the systems that need no SVD evaluated (ours; before: every system)", "first_look_s")
    row("upload: every system evaluated (with the LSA fit at d = 6)", "first_evaluation_s")
    row("upload to the first chart, total", "upload_first_chart_s")
    row("upload to every system's chart, total", "upload_total_s")
    row("d tick: the LSA fit alone (d = 7, 8, 5, 4, 3, 2 after 6)", "d_fit_s")
    row("d tick: the evaluation with that fit (LSA ranked, both fusions, the metrics)", "d_tick_s")
    row("d tick: fit + evaluation, what a person waits for", "d_total_s")
    row(f"d = {D_NEW_BLOCK}: the LSA fit (ours: a new block)", "d_new_block_fit_s")
    row(
        f"d step after a pause (d = {', '.join(map(str, D_AHEAD_PAUSED))} from {D_NEW_BLOCK}; ours: computed ahead)",
        "d_ahead_s",
    )
    row(
        f"d step taken at once (d = {', '.join(map(str, D_AHEAD_QUICK))} from {D_NEW_BLOCK}; ours: computed when taken, "
        "before the step ahead starts)",
        "d_quick_s",
    )
    row("k1 tick", "k1_tick_s")
    row("alpha tick (the weighted fusion alone: 0.05, 0.15, ... at k1 = 1.25)", "alpha_tick_s")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------- parent


def _run_child(kind: str, target: str, args, env: dict | None = None) -> dict:
    cmd = [
        sys.executable,
        __file__,
        "--child",
        kind,
        "--target",
        target,
        "--ticks",
        str(args.ticks),
        "--sample",
        str(args.sample if not target.isdigit() or int(target) < 1_000_000 else args.sample_1m),
    ]
    t = time.perf_counter()
    proc = subprocess.run(
        cmd, capture_output=True, text=True, timeout=args.timeout, env=None if env is None else os.environ | env
    )
    wall = time.perf_counter() - t
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        err = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {"target": target, "error": f"{kind} exited {proc.returncode}: {err}", "wall_s": wall}
    res = json.loads(lines[-1])
    res["wall_s"] = wall
    return res


def pairs(args, targets: list[tuple[str, str]]) -> str:
    """`--pairs N`: our k1 tick and the code before's (`--before-commit`), each in its own process, the processes
    alternated N times per dataset (ours, before, before, ours, ...), every median printed. Two engines ticked in
    turn in one process lean towards the one built first (the same code on both sides: 33.3 against 37.6 ms at
    100k; bench/RESULTS.md, twelfth round), and one pair of processes does not tell a few ms apart on this machine."""
    lines = [
        f"k1 ticks, each code in its own process, {args.pairs} alternated pairs per dataset (medians of "
        f"{args.ticks} ticks each); before = {args.before_commit}",
        "",
        "| dataset | ours | before | median of ours / of before |",
        "|---|---|---|---|",
    ]
    for label, target in targets:
        got: dict[str, list[float]] = {"ours": [], "before": []}
        for i in range(args.pairs):
            for kind in ("ours", "before") if i % 2 == 0 else ("before", "ours"):
                res = _run_child(kind, target, args)
                print(f"[{label}] {kind}: {json.dumps(res)[:200]}", file=sys.stderr, flush=True)
                got[kind].append(res.get("tick_s", float("nan")))
        o, b = got["ours"], got["before"]
        lines.append(
            f"| {label} | {', '.join(_fmt_s(x) for x in o)} | {', '.join(_fmt_s(x) for x in b)} | "
            f"{_fmt_s(_median(o))} / {_fmt_s(_median(b))} |"
        )
    return "\n".join(lines)


def _fmt_s(x) -> str:
    if x is None or x != x:
        return "-"
    if x >= 100:
        return f"{x:.0f} s"
    if x >= 1:
        return f"{x:.2f} s"
    return f"{x * 1000:.1f} ms"


def _ratio(a, b) -> str:
    if not a or not b or a != a or b != b:
        return "-"
    return f"{a / b:,.0f}x" if a / b >= 10 else f"{a / b:.1f}x"


def report(results: list[dict], grid: dict | None) -> str:
    """The tables printed at the end (also what RESULTS.md quotes)."""
    lines = []
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    lines.append(
        f"machine: {os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}; "
        f"threads for our kernels: {results[0]['ours'].get('threads', '?') if results else '?'}; "
        f"load average at the end (1/5/15 min): {load}"
    )
    lines.append("")
    lines.append(
        "| dataset | docs | questions | vocabulary | postings/q / N | matched/q | index build | prepare | LSA fit (d=6) | peak RSS |"
    )
    lines.append("|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        o = r["ours"]
        if "error" in o:
            lines.append(f"| {r['label']} | error: {o['error']} |||||||||")
            continue
        lines.append(
            f"| {r['label']} | {o['docs']:,} | {o['queries']:,} | {o['vocab']:,} | {o['postings_per_q_over_n']:.3f} | "
            f"{o['matched_fraction']:.3f} | {_fmt_s(o['index_s'])} | {_fmt_s(o['prepare_s'])} | {_fmt_s(o['lsa_fit_s'])} | "
            f"{o['peak_rss_gib']:.2f} GiB |"
        )
    lines.append("")
    lines.append(
        "| dataset | k1 tick (median) | parts: BM25 / fusions / metrics | alpha tick | RRF tick | d tick | weighted rescans / full scans |"
    )
    lines.append("|---|---|---|---|---|---|---|")
    for r in results:
        o = r["ours"]
        if "error" in o:
            continue
        lines.append(
            f"| {r['label']} | {_fmt_s(o['tick_s'])} | {_fmt_s(o['part_bm25_s'])} / {_fmt_s(o['part_fusions_s'])} / "
            f"{_fmt_s(o['part_metrics_s'])} | {_fmt_s(o['alpha_tick_s'])} | {_fmt_s(o['rrf_tick_s'])} | {_fmt_s(o['d_tick_s'])} | "
            f"{o['rescans']} / {o['fallbacks']} of {o['queries']} |"
        )
    lines.append("")
    lines.append(
        f"| dataset | our tick | before ({BEFORE_COMMIT}) | bm25s re-index + retrieve | ratio | rank_bm25 (all questions) | ratio | scipy product alone / our BM25 kernel |"
    )
    lines.append("|---|---|---|---|---|---|---|---|")
    for r in results:
        o, bf, bs, rb = r["ours"], r.get("before", {}), r.get("bm25s", {}), r.get("rank_bm25", {})
        if "error" in o:
            continue
        ours = o["tick_s"]
        bft = _fmt_s(bf.get("tick_s")) if bf and "error" not in bf else ("-" if not bf else "error")
        bst = _fmt_s(bs.get("tick_s")) if bs and "error" not in bs else ("-" if not bs else "error")
        rbt = "-"
        if rb and "error" not in rb:
            rbt = _fmt_s(rb["tick_s"]) + (f" (from {rb['sample']} questions)" if rb.get("extrapolated") else "")
        elif rb:
            rbt = "error"
        sc = "-"
        if o.get("scipy_score_s"):
            sc = f"{_fmt_s(o['scipy_score_s'])} / {_fmt_s(o['kernel_bm25_s'])} ({_ratio(o['scipy_score_s'], o['kernel_bm25_s'])})"
        lines.append(
            f"| {r['label']} | {_fmt_s(ours)} | {bft} | {bst} | {_ratio(bs.get('tick_s'), ours) if bs and 'error' not in bs else '-'} | "
            f"{rbt} | {_ratio(rb.get('tick_s'), ours) if rb and 'error' not in rb else '-'} | {sc} |"
        )
    peers = [(r["label"], k, r[k]) for r in results for k in ("bm25s", "rank_bm25", "before") if r.get(k)]
    if peers:
        lines.append("")
        lines.append(
            "peers' own figures: "
            + "; ".join(
                f"{lab} {k}: "
                + (
                    v["error"]
                    if "error" in v
                    else ", ".join(
                        f"{f} {_fmt_s(v[f])}" for f in ("tokenise_s", "index_s", "prepare_s", "retrieve_s") if f in v
                    )
                    + f", peak RSS {v.get('peak_rss_gib', float('nan')):.2f} GiB"
                )
                for lab, k, v in peers
            )
        )
    dense_rows = [(r["label"], r["dense"]) for r in results if r.get("dense")]
    if dense_rows:
        lines.append("")
        lines.append(
            f"| dataset (dense: {DENSE_DIM}-d random unit vectors) | our exact top 1,000 + judged ranks | numpy top 100 "
            "(float32 BLAS, argpartition) | ratio | alpha tick, BM25 + dense | RRF tick, BM25 + dense | rescans | "
            "encoding (bundled model) | peak RSS |"
        )
        lines.append("|---|---|---|---|---|---|---|---|---|")
        for lab, d in dense_rows:
            if "error" in d:
                lines.append(f"| {lab} | {d['error']} | | | | | | | |")
                continue
            lines.append(
                f"| {lab} | {_fmt_s(d['ours_topk_s'])} | {_fmt_s(d['numpy_topk_s'])} | "
                f"{d['ours_topk_s'] / d['numpy_topk_s']:.1f}x slower | {_fmt_s(d['fusion_alpha_tick_s'])} | "
                f"{_fmt_s(d['fusion_rrf_tick_s'])} | {d['rescans']} of {d['queries']:,} | "
                f"{d['encode_docs_per_s']:.1f} documents/s ({d['encode_sample']}) | {d['peak_rss_gib']:.2f} GiB |"
            )
    if any(v.get("reused") for r in results for v in r.values() if isinstance(v, dict)):
        lines.append("")
        lines.append(
            "(peers and 'before' reused from an earlier run of this script: "
            + ", ".join(
                sorted({v["reused"] for r in results for v in r.values() if isinstance(v, dict) and v.get("reused")})
            )
            + ")"
        )
    if grid:
        lines.append("")
        g = f"Cranfield k1 x b grid (16 x 11 = 176 settings, BM25 ranked + nDCG@10 per question each): {_fmt_s(grid['grid_s'])}"
        if "grid_tuning_sweep_s" in grid:
            g += f"; retrieval.analyses.tuning.sweep_bm25 on the same grid: {_fmt_s(grid['grid_tuning_sweep_s'])}"
        lines.append(g)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    global BEFORE_COMMIT
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--sizes", default="10000,100000", help="synthetic corpus sizes, comma-separated (default 10000,100000)"
    )
    ap.add_argument(
        "--cranfield",
        default=str(DEFAULT_CRANFIELD) if DEFAULT_CRANFIELD.exists() else "",
        help="a Cranfield BEIR folder ('' to skip)",
    )
    ap.add_argument("--ticks", type=int, default=7, help="slider ticks per measurement (median reported)")
    ap.add_argument(
        "--sample", type=int, default=100, help="rank_bm25: questions scored below 1M documents (all up to 10k)"
    )
    ap.add_argument("--sample-1m", type=int, default=10, help="rank_bm25: questions scored at 1M documents")
    ap.add_argument("--no-peers", action="store_true", help="skip bm25s and rank_bm25")
    ap.add_argument(
        "--dense", action="store_true", help="also the dense rows (exact top-k beside numpy's, fusion ticks, encoding)"
    )
    ap.add_argument("--no-before", action="store_true", help="skip the code before this change")
    ap.add_argument(
        "--before-commit", default=BEFORE_COMMIT, help=f"the commit measured as 'before' (default {BEFORE_COMMIT})"
    )
    ap.add_argument("--timeout", type=float, default=7200)
    ap.add_argument("--json", default=str(OUT / "speed.json"), help="where to keep the raw results")
    ap.add_argument(
        "--reuse",
        default="",
        metavar="JSON",
        help="take bm25s, rank_bm25 and 'before' from an earlier run's raw results instead of running them",
    )
    ap.add_argument(
        "--round2",
        action="store_true",
        help="issue 15's rows only: first runs, upload stages, d ticks, before and ours alternated",
    )
    ap.add_argument(
        "--round2-before", default=ROUND2_BEFORE, help=f"round 2's 'before' commit (default {ROUND2_BEFORE})"
    )
    ap.add_argument(
        "--no-first-runs",
        action="store_true",
        help="round 2: skip the fresh-clone first runs (the upload stages and ticks only)",
    )
    ap.add_argument("--round2-size", default="100000", help="round 2's synthetic corpus size (default 100000)")
    ap.add_argument("--repeats", type=int, default=3, help="round 2: alternated runs of each (default 3)")
    ap.add_argument(
        "--passes",
        action="store_true",
        help="the exact LSA / dense pass alone at d = 6, 40, 200, 384, "
        "before (--round2-before) and ours alternated, beside numpy's float32 top-100",
    )
    ap.add_argument(
        "--pass-dims", default="", help="--passes at these d instead (comma-separated; 384: random unit vectors)"
    )
    ap.add_argument(
        "--scale",
        default="",
        metavar="N",
        help="ours alone on N synthetic documents: engine, first evaluation, d steps, k1 ticks, peak RSS",
    )
    ap.add_argument(
        "--pairs",
        type=int,
        default=0,
        metavar="N",
        help="ours and before (--before-commit) only, "
        "each k1 tick in its own process, the processes alternated N times per dataset",
    )
    ap.add_argument(
        "--paths",
        action="store_true",
        help="every path chosen by name (bm25.run, lsa.run) beside the "
        "plainest compiled path, on Cranfield and --sizes (bench/paths.py)",
    )
    ap.add_argument(
        "--sweep",
        action="store_true",
        help="the k1 x b sweep row: tuning.sweep_bm25 ours and before (--before-commit) alternated (--pairs, at "
        "least 1), beside bm25s's cost per setting (bench/sweep.py)",
    )
    ap.add_argument(
        "--sweep-grid", default="", choices=("", "full", "thin"), help="--sweep's grid (default: full below 50k)"
    )
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--target", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    BEFORE_COMMIT = os.environ["BENCH_BEFORE_COMMIT"] = a.before_commit  # the children read it from the environment
    if a.pass_dims:
        os.environ["BENCH_PASS_DIMS"] = a.pass_dims

    if a.child:
        if os.environ.get("BENCH_PACKAGE"):  # round 2: the package of another tree first
            sys.path.insert(0, os.environ["BENCH_PACKAGE"])
        if a.child == "paths":
            import paths

            print(json.dumps(paths.child(_load(a.target), a.ticks)))
            return 0
        if a.child == "sweep":
            import sweep

            print(json.dumps(sweep.child(_load(a.target), os.environ["BENCH_SWEEP_GRID"], _status, _reset_peak)))
            return 0
        if a.child in ("stages", "passes", "scale"):
            child = {"stages": child_stages, "passes": child_passes, "scale": child_scale}[a.child]
            print(json.dumps(child(a.target, a.ticks)))
            return 0
        if a.child == "ours":
            res = child_ours(a.target, a.ticks)
            from retrieval.core import workers

            res["threads"] = workers.threads()
        elif a.child == "before":
            res = child_before(a.target, a.ticks)
        elif a.child == "dense":
            res = child_dense(a.target, a.ticks)
        elif a.child == "bm25s":
            res = child_bm25s(a.target, a.ticks)
        elif a.child == "rank_bm25":
            sample = a.sample if not a.target.isdigit() or int(a.target) > 10_000 else 10**9
            res = child_rank_bm25(a.target, a.ticks, sample)
        else:
            raise SystemExit(f"unknown child {a.child}")
        print(json.dumps(res))
        return 0

    if a.round2:
        print(round2(a))
        return 0
    if a.passes:
        print(passes(a))
        return 0
    if a.scale:
        print(json.dumps(_run_child("scale", str(int(a.scale)), a)))
        return 0
    targets = []
    if a.cranfield:
        targets.append(("Cranfield", f"cranfield:{a.cranfield}"))
    for s in (x.strip() for x in a.sizes.split(",") if x.strip()):
        targets.append((f"synthetic {int(s):,}", str(int(s))))
    OUT.mkdir(parents=True, exist_ok=True)
    import synthetic

    if a.paths:
        results = []
        for label, target in targets:
            if target.isdigit():
                synthetic.load(int(target))  # generated and cached once, outside the measured processes
            res = _run_child("paths", target, a)
            print(f"[paths] {label}: {json.dumps(res)}", file=sys.stderr, flush=True)
            results.append((label, res))
        import paths

        print(paths.table(results))
        return 0
    if a.sweep:
        import sweep

        for _label, target in targets:
            if target.isdigit():
                synthetic.load(int(target))  # generated and cached once, outside the measured processes
        print(sweep.run(a, targets, _run_child, _tree(a.before_commit), _fmt_s))
        return 0
    if a.pairs:
        for _label, target in targets:
            if target.isdigit():
                synthetic.load(int(target))  # generated and cached once, outside the measured processes
        print(pairs(a, targets))
        return 0
    results = []
    grid = None
    earlier = {r["target"]: r for r in json.loads(Path(a.reuse).read_text())} if a.reuse else {}
    for label, target in targets:
        if target.isdigit():
            t = time.perf_counter()
            synthetic.load(int(target))  # generate and cache once, outside the measured processes
            print(f"[{label}] corpus ready ({time.perf_counter() - t:.0f} s)", file=sys.stderr, flush=True)
        row = {"label": label, "target": target}
        kinds = ["ours"]
        big = target.isdigit() and int(target) >= 1_000_000
        if not a.no_before and not big:
            kinds.append("before")
        if not a.no_peers:
            kinds += ["bm25s", "rank_bm25"]
        if a.dense:
            kinds.append("dense")
        for kind in kinds:
            if kind != "ours" and kind in earlier.get(target, {}):
                row[kind] = dict(earlier[target][kind], reused=a.reuse)
                continue
            print(f"[{label}] {kind} ...", file=sys.stderr, flush=True)
            row[kind] = _run_child(kind, target, a)
            print(f"[{label}] {kind}: {json.dumps(row[kind])[:400]}", file=sys.stderr, flush=True)
        if target.startswith("cranfield:") and "grid_s" in row["ours"]:
            grid = row["ours"]
        results.append(row)
        Path(a.json).write_text(json.dumps(results, indent=1))
    print(report(results, grid))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
