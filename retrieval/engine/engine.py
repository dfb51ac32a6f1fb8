"""The engine: one object per dataset that builds the index once and owns every cache of what the sliders reuse.

    data (dataset.py) -> retrievers (systems.py: bm25.py, lsa.py, TREC runs) -> fusion.py -> metrics.py,
    stats.py, significance.py -> Engine (here) -> cli.py and ui/ -> pages/

The pages and the command line talk to an Engine only. Every value it caches sits in its one `Memo` (bounded per
kind, thread-safe), keyed by values: a retriever's run by (its name, the values of the parameters it reads,
the list depth); a TREC run by its content fingerprint; a fusion by its members' keys and its own parameters.
So a k1 change re-scores BM25 and the fusions, never LSA; a d change refits LSA only; an alpha or RRF change
recomputes that fusion only. Engines themselves are kept per dataset fingerprint (registry.py, `for_dataset`), at
most `ENGINES` of them, so the app's sessions on one dataset share one index.

The package's other modules: ahead (the rankings a few d steps away, computed in the background), kinds (what the memo holds, each kind's bound), rejudge (a run re-judged for a derived
engine), registry (the engines kept, their admission under the memory budget, the idle janitor), budget (the cost
model and the text limits), warmup (the compiled kernels warmed, in a child process in the app), heap (malloc_trim),
adhoc (a typed question). Their names are importable from here too, as before the split.

Over 500 lines (about 560): the Engine class is one method per cached value (each a memo kind and its key); split,
one cache's key would be read in one file and made in another. The work ahead on the d slider is its own part
(ahead.py, `WorkAhead`).

Worked example: `Engine(load("invented")).evaluate(Params(), "ndcg@5").mean("BM25", "ndcg@5")` is the article's
0.691171 (tests/test_article.py has its tables to the digit).
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

import retrieval.fusion as fusion

from ..core.errors import InputError
from ..core.memo import Memo, SharedMemo
from ..core.params import Params
from ..core.words import plural
from ..corpus.dataset import Dataset, TrecRun
from ..corpus.statistics import DatasetStats, dataset_stats
from ..corpus.text import ARTICLE_ANALYSIS, Analysis, TermIndex, build_index, query_counts
from ..evaluation import metrics, stats
from ..evaluation.experiment import Evaluation, score
from ..retrievers import bm25, lsa
from ..retrievers.base import Context
from ..retrievers.ranking import BestLists, Ranking, judged_layout
from ..retrievers.systems import FUSIONS, REGISTRY, Retriever, Run, Sources, system_of
from . import adhoc, budget, registry, warmup
from .ahead import (  # noqa: F401 - importable from here, as before the split
    PREFETCH_ABOVE,
    PREFETCH_AFTER_OTHER,
    PREFETCH_BUDGET,
    PREFETCH_DELAY,
    PREFETCH_REACH,
    WorkAhead,
    reach_for,
)

# The names that lived here before the engine's package was split (callers import them from here): the memory
# budget's text limits, the heap handed back, the registry of engines with its admission and janitor, the warm-up.
from .budget import APP_MAX_CHARS, CLI_MAX_CHARS, MAX_CHARS_ENV, check_size, max_chars  # noqa: F401
from .heap import release_free_memory
from .kinds import (  # noqa: F401
    BUNDLED,
    CACHE_SIZES,
    CHANGES,
    CORPUS_KINDS,
    DIAGNOSIS,
    STEMMER,
    TUNING,
    VERDICTS,
)
from .registry import (  # noqa: F401
    _ENGINES,
    _ROOTS,
    DERIVED,
    ENGINES,
    IDLE_HOOKS,
    admit,
    built,
    drop,
    drop_idle,
    evaluate,
    for_dataset,
    held,
    start_janitor,
)
from .rejudge import rejudged
from .warmup import (  # noqa: F401
    _WARMING,
    WARM_UP_THREAD,
    _warm_up_in_child,
    compiled_dispatchers,
    repair_compiled_cache,
    start_warm_up,
    warm_up,
    warm_up_and_calibrate,
)


class LsaFit(NamedTuple):
    """A fitted LSA and the questions projected into it."""

    model: lsa.LsaModel
    qvec: np.ndarray


class Engine(WorkAhead):
    """Everything about one dataset: the term index, BM25's columns and question plan (built once), and one
    bounded cache of the runs, fits and fusions the parameters select.

    `progress(stage, fraction)` receives the build's stages and the fraction done (0 to 1), for a progress
    bar: tokenising takes about 85% of the time. With `limit`, a dataset of more characters is refused first.
    `analysis` (`text.Analysis`: stemmer, stop words) is the index's: an engine answers for the parameters of its
    analysis only (`for_dataset` keeps one engine per dataset and analysis).
    """

    def __init__(
        self,
        dataset: Dataset,
        progress: Callable[[str, float], None] | None = None,
        limit: int | None = None,
        analysis: Analysis = ARTICLE_ANALYSIS,
    ):
        def step(share0: float, share1: float):
            if progress is None:
                return None
            return lambda stage, f: progress(stage, share0 + (share1 - share0) * f)

        if limit is not None:
            check_size(dataset, limit)  # before the expensive step, and only when it is about to be paid
        self.cost = budget.COST.of(dataset)  # what it holds once evaluated, by the cost model (budget.py)
        self.last_used = time.monotonic()
        self.dataset = dataset
        self.fingerprint = dataset.fingerprint
        self.analysis = analysis
        self.index: TermIndex = build_index(dataset.doc_texts, step(0.0, 0.85), analysis=analysis)
        release_free_memory()
        if progress is not None:
            progress("preparing BM25", 0.85)
        self.bm25 = bm25.prepare(self.index)
        if progress is not None:
            progress("tokenising questions", 0.95)
        self.qcounts: sp.csr_matrix = query_counts(self.index, dataset.query_texts)
        self.plan = bm25.plan(self.bm25, self.qcounts)
        if progress is not None:
            progress("ready", 1.0)
        self.memo = Memo(CACHE_SIZES)
        self._own_state()

    def _own_state(self, latest: dict[str, BestLists] | None = None) -> None:
        """What every engine holds for itself, a derived one too (`latest`: its base's hints)."""
        self._judged: np.ndarray | None = None
        self._latest: dict[str, BestLists] = dict(latest or {})  # each retriever's latest run: a hint for its next
        self._lock = threading.Lock()
        self._fitting: dict[int, threading.Thread] = {}  # fit_in_background's threads, by d
        self._ahead: threading.Thread | None = None  # prefetch's thread, while it works
        self._ahead_next: tuple | None = None  # the request it takes next: (the parameters to compute, sources)
        self._ahead_params: Params | None = (
            None  # what prefetch was last asked about (which way d moves, whether alone)
        )
        self._ahead_wake = threading.Event()  # set by each request, ending the wait of the one it replaces

    # what a derived engine shares with its base, all built from the texts alone; everything else is its own (an
    # attribute added to __init__ is then never shared by mistake)
    _SHARED = ("analysis", "index", "bm25", "qcounts", "plan")
    _root: Engine | None = None  # a derived engine's first engine of the same texts (whose runs it re-judges)

    @classmethod
    def derived(cls, base: Engine, dataset: Dataset) -> Engine:
        """The engine of `dataset`, which holds the same documents and questions as `base.dataset` with other
        judgements (e.g. `Dataset.with_judgements`), built from `base`'s parts without tokenising anything: the
        term index, BM25's columns, the questions' counts and plan are shared, and so are the cached values
        that depend on the texts only (`CORPUS_KINDS`: LSA fits, dense vectors, run files' systems). Runs,
        fusions and the judged documents' positions are its own, computed for its judgements. Its results equal
        those of `Engine(dataset)` (tests/engine/test_engine.py). A retriever's run is its root engine's (the first
        engine of these texts, kept alive by it) with the judged ranks re-read (`rejudged`): no retriever runs
        again for a new judgement; a TREC run, cheap to align, is aligned again."""
        if dataset.corpus_fingerprint != base.dataset.corpus_fingerprint:
            raise ValueError(
                f"{dataset.name}: not the documents and questions of {base.dataset.name}; build its own engine"
            )
        engine = cls.__new__(cls)
        engine.__dict__.update({k: base.__dict__[k] for k in cls._SHARED})
        engine.cost, engine.last_used = 0, time.monotonic()  # its index is its root's (counted there)
        engine.dataset, engine.fingerprint = dataset, dataset.fingerprint
        corpus = base.memo.corpus if isinstance(base.memo, SharedMemo) else base.memo
        engine.memo = SharedMemo(Memo(CACHE_SIZES), corpus, CORPUS_KINDS)
        with base._lock:
            engine._own_state(base._latest)  # hints for the next run's cut: lists of the same texts
        engine._root = base._root or base
        return engine

    @property
    def root(self) -> Engine:
        """The first engine of the same documents and questions: this one, or the one a derived engine was made
        from (`derived` keeps it, so it lives as long as any engine derived from it)."""
        return self._root or self

    def __repr__(self) -> str:
        return f"Engine({self.dataset.name!r}, {plural(self.dataset.n_docs, 'document')}, {plural(self.dataset.n_queries, 'question')})"

    # --------------------------------------------------------------------------------------- what is built once

    def context(self) -> Context:
        """What a retriever's run reads of this engine (`base.Context`): the dataset, its term index and question
        counts, BM25's columns and plan, the judged positions, LSA's fits, the latest runs and the probes."""
        return Context(
            self.dataset,
            self.index,
            self.qcounts,
            self.bm25,
            self.plan,
            self.judged_positions,
            self.lsa_fit,
            self.latest_run,
            self.probe_for,
            self.bm25_plan,
        )

    def bm25_plan(self, params: Params) -> bm25.QuestionPlan:
        """BM25's question plan for the parameters' rule for repeated question words: the plan built with the
        engine for "once" (the article's), else one that counts them (built on first use, then shared by every
        rule) with its idf weighed for this rule and k3 (`bm25.weighed`: a k3 change shares the postings). Each
        question's documents lie at the same layout positions in every plan, so the judged positions serve all."""
        if params.query_words == "once":
            return self.plan
        counted = self.memo.get("plan", "counted", lambda: bm25.plan(self.bm25, self.qcounts, counted=True))
        return self.memo.get(
            "plan", (params.query_words, params.k3), lambda: bm25.weighed(counted, params.query_words, params.k3)
        )

    def answers_for(self, params: Params) -> None:
        """Raise ValueError unless the parameters' text analysis is this engine's (its index was built with it)."""
        if Analysis(*params.analysis) != self.analysis:
            raise ValueError(
                f"these parameters analyse text with {Analysis(*params.analysis).describe()}; this engine's "
                f"index has {self.analysis.describe()}: use for_dataset(dataset, analysis=...)"
            )

    def judged_positions(self) -> np.ndarray:
        """The judged documents' positions in BM25's question layout: they change with neither k1 nor b."""
        with self._lock:
            if self._judged is None:
                j_ptr, j_doc = judged_layout(self.dataset)
                self._judged = bm25.locate(self.plan, j_doc, j_ptr)
            return self._judged

    def max_dims(self) -> int:
        """The largest LSA dimension this corpus allows: min(documents, terms) - 1."""
        return lsa.max_dims(self.index)

    # --------------------------------------------------------------------------------------- per parameter

    def lsa_fit(self, dims: int) -> LsaFit:
        """LSA with d dimensions and the questions projected into it (cached per d). On a large corpus every d is the
        prefix of its block's fit (lsa.block_for), so a d slider step after the first costs no SVD."""
        block = lsa.block_for(self.index, dims)

        def make() -> LsaFit:
            if block is None:
                model = lsa.fit(self.index, dims, by_term=self.bm25.counts)
            else:
                base = self.memo.get(
                    "block", block, lambda: lsa.fit(self.index, block, block=True, by_term=self.bm25.counts)
                )
                model = lsa.truncate(base, dims)
                projected = self.memo.get("block questions", block, lambda: lsa.project(base, self.qcounts))
                return LsaFit(model, lsa.query_vectors(model, self.qcounts, projected))
            return LsaFit(model, lsa.query_vectors(model, self.qcounts))

        return self.memo.get("fit", int(dims), make)

    def slow_fit(self, dims: int) -> bool:
        """Whether LSA at d waits on an SVD not fitted yet on a large corpus (its block's: seconds at 100,000
        documents; a small corpus's direct fit takes milliseconds and never counts)."""
        block = lsa.block_for(self.index, dims)
        return block is not None and not self.memo.ready("block", block)

    def fit_in_background(self, dims: int) -> threading.Thread | None:
        """Start LSA's fit at d in a thread when it is slow (`slow_fit`); a page asking for it meanwhile waits for
        this fit (the memo makes a key once) instead of fitting again. Returns the thread (the one already fitting
        that d, when a rerun asks again), or None."""
        if not self.slow_fit(dims):
            return None

        def work() -> None:
            try:
                self.lsa_fit(dims)
            except Exception:  # noqa: BLE001 - a page asking for the fit makes it again and shows its error
                pass

        with self._lock:
            t = self._fitting.get(dims)
            if t is None or not t.is_alive():
                t = self._fitting[dims] = threading.Thread(target=work, name=f"lsa-fit-{dims}", daemon=True)
                t.start()
        return t

    def waiting(self, params: Params) -> tuple[str, ...]:
        """The built-in systems whose runs at `params` wait on a slow fit (LSA while its SVD is fitted, and the
        fusions of it), in display order; empty when every run is at most a pass over the corpus away."""
        if "LSA" in REGISTRY and self.slow_fit(params.dims):
            return ("LSA", *(FUSIONS if "LSA" in params.members else ()))
        return ()

    def first_rankings(self, params: Params = Params(), sources: Sources = ()) -> dict[str, Ranking]:
        """The rankings of every system that does not wait (`waiting`): what a page can show at once while LSA is
        fitted. Each run is the one `rankings` uses (the same cache key: a run's lists do not depend on the fusion's
        members; BM25 then scores LSA's lists by look-up when the fusion comes)."""
        skip = set(self.waiting(params))
        names = [n for n in REGISTRY if n not in skip] + [x.name for x in sources]
        return {n: self._run_tracked(n, replace(params, members=(n,), weights=None), sources).ranking for n in names}

    def bm25_scores(self, k1: float, b: float) -> sp.csr_matrix:
        """BM25 scores of every question as a sparse matrix: the reference algebra (the sliders use `run`)."""
        return bm25.score(self.bm25, self.qcounts, k1, b)

    def bm25_reference(self, params: Params) -> sp.csr_matrix:
        """BM25 scores at the parameters (k1, b, the repeated question words' rule and k3) by the reference algebra."""
        self.answers_for(params)
        return bm25.score(self.bm25, self.qcounts, params.k1, params.b, params.query_words, params.k3)

    def explain_bm25(self, terms: list[str], doc: int, params: Params) -> list[dict]:
        """Per-term contributions of one document to its BM25 score at the parameters (bm25.explain): `terms` as the
        index analyses a question (`TermIndex.analyse`), repeats included."""
        self.answers_for(params)
        return bm25.explain(self.bm25, self.index, terms, doc, params.k1, params.b, params.query_words, params.k3)

    def in_vocabulary(self, term: str) -> bool:
        """Whether a term occurs in the corpus."""
        return term in self.index.vocabulary

    @property
    def n_terms(self) -> int:
        """The corpus's vocabulary size."""
        return int(self.index.terms.size)

    def doc_length(self, doc: int) -> tuple[int, float]:
        """A document's length in tokens and the corpus's average (what BM25's b normalises by)."""
        return int(self.bm25.doc_len[doc]), float(self.bm25.avg_len)

    def stats(self) -> DatasetStats:
        """The dataset's statistics (`corpus.statistics.dataset_stats`): sizes, vocabulary, judgements per question."""
        return dataset_stats(self.dataset, self.index)

    def system(self, name: str, sources: Sources = ()) -> Retriever:
        """A system by name: a registered retriever, or the system of one of the `sources` (a TREC run,
        embeddings), made once per source content; an error lists the known ones."""
        if name in REGISTRY:
            return REGISTRY[name]
        source = self._source(name, sources)
        kind = "run file" if isinstance(source, TrecRun) else "vectors"
        return self.memo.get(kind, (name, source.fingerprint), lambda: system_of(source))

    @staticmethod
    def _source(name: str, sources: Sources):
        for source in sources:
            if source.name == name:
                return source
        known = [*REGISTRY, *(s.name for s in sources)]
        raise InputError(f"unknown system {name!r}: known are {', '.join(known)}")

    def key(self, name: str, params: Params, sources: Sources = ()) -> tuple:
        """The cache key of a system's run: its name, the values of the parameters it reads and the list depth,
        and for a source (a run, embeddings) the fingerprint of its whole content."""
        system = self.system(name, sources)
        content = () if name in REGISTRY else (self._source(name, sources).fingerprint,)
        return (name, *content, params.of(system.params), params.list_depth)

    def run(self, name: str, params: Params, sources: Sources = ()) -> BestLists:
        """One system's run at the given parameters (cached on what it reads); in a derived engine, a retriever's
        is its root's run under the same key, re-judged."""
        self.answers_for(params)
        system = self.system(name, sources)
        root = self._root
        if root is not None and not isinstance(system, Run):

            def make() -> BestLists:
                base = root.run(name, params, sources)
                return rejudged(base, system.member(base).row, root.dataset, self.dataset)

            return self.memo.get("run", self.key(name, params, sources), make)
        return self.memo.get(
            "run", self.key(name, params, sources), lambda: system.run(self.context(), params, params.list_depth)
        )

    def latest_run(self, name: str) -> BestLists | None:
        """The most recently used run of a retriever (a hint for its next run), if any."""
        with self._lock:
            return self._latest.get(name)

    def _remember(self, name: str, run: BestLists) -> None:
        with self._lock:
            self._latest[name] = run

    def probe_for(self, name: str, params: Params) -> tuple[np.ndarray, np.ndarray, bm25.ProbeSites] | None:
        """For a postings retriever (BM25) fused with another member: that member's best lists, their lengths
        and their sites in BM25's layout (`bm25.probe_sites`), so BM25's own pass scores them too (the fusion
        reads them)."""
        others = [m for m in params.members if m != name]
        if name not in params.members or not others or others[0] not in REGISTRY:
            return None
        other = self.run(others[0], params)
        at = self.memo.get(
            "probe",
            (self.key(others[0], params), params.query_words != "once"),
            lambda: bm25.probe_sites(self.bm25_plan(params), other.top_d, other.n_top),
        )
        return other.top_d, other.n_top, at

    # --------------------------------------------------------------------------------------- all systems

    def _members(self, params: Params, sources: Sources) -> tuple[list, tuple]:
        members = [self.system(m, sources).member(self._run_tracked(m, params, sources)) for m in params.members]
        return members, tuple(self.key(m, params, sources) for m in params.members)

    def _run_tracked(self, name: str, params: Params, sources: Sources) -> BestLists:
        r = self.run(name, params, sources)
        if name in REGISTRY:
            self._remember(name, r)
        return r

    def _fusion_keys(self, params: Params, sources: Sources) -> tuple[tuple, tuple]:
        """The cache keys of the weighted fusion and of RRF at `params`: their members' run keys and their own
        parameters."""
        keys = tuple(self.key(m, params, sources) for m in params.members)
        return (keys, params.fusion_weights(), params.fusion_depth), (keys, params.rrf_k, params.fusion_depth)

    def weighted(self, params: Params, sources: Sources = ()) -> fusion.WeightedRun:
        """The weighted fusion of params.members with params.fusion_weights()."""
        members, keys = self._members(params, sources)
        lists = self.memo.get("lists", keys, lambda: fusion.gather(members))
        weights = params.fusion_weights()
        return self.memo.get(
            "weighted",
            self._fusion_keys(params, sources)[0],
            lambda: fusion.weighted(self.dataset, members, weights, params.fusion_depth, lists),
        )

    def rrf(self, params: Params, sources: Sources = ()) -> Ranking:
        """Reciprocal Rank Fusion of params.members' top fusion_depth."""
        return self.memo.get(
            "rrf",
            self._fusion_keys(params, sources)[1],
            lambda: fusion.rrf(
                self.dataset,
                [self._run_tracked(m, params, sources).ranking for m in params.members],
                params.rrf_k,
                params.fusion_depth,
            ),
        )

    def cached(self, params: Params, sources: Sources = ()) -> bool:
        """Whether `rankings(params, sources)` would only read the cache: every system's run and both fusions."""
        names = [*REGISTRY, *(x.name for x in sources)]
        w_key, r_key = self._fusion_keys(params, sources)
        return (
            all(self.memo.ready("run", self.key(n, params, sources)) for n in names)
            and self.memo.ready("weighted", w_key)
            and self.memo.ready("rrf", r_key)
        )

    def ranking_key(self, ranking: Ranking) -> tuple | None:
        """The cache key under which this engine holds `ranking` (a run's or a fusion's, with its kind: from the
        parameters and sources it was computed from), or None when it holds no such object: the key under which a
        result computed from that ranking (an analysis of it) is kept in this engine's memo, never its content's digest."""
        for kind, of in (("run", lambda v: v.ranking), ("weighted", lambda v: v.ranking), ("rrf", lambda v: v)):
            for key, value in self.memo.items(kind):
                if of(value) is ranking:
                    return kind, key
        return None

    def rankings(self, params: Params = Params(), sources: Sources = ()) -> dict[str, Ranking]:
        """Every system's ranking: the registered retrievers, the `sources`' retrievers (embeddings), the
        two fusions, then each TREC run, by name."""
        names = [x.name for x in sources]
        taken = [n for n in names if n in REGISTRY or n in FUSIONS]
        if taken or len(set(names)) != len(names):
            clash = taken[0] if taken else next(n for n in names if names.count(n) > 1)
            raise InputError(
                f"system name {clash!r} is already taken (built-in systems: {', '.join((*REGISTRY, *FUSIONS))})"
            )
        for m in params.members:
            self.system(m, sources)
        w = self.weighted(params, sources)
        runs = [x.name for x in sources if isinstance(x, TrecRun)]
        out = {name: self._run_tracked(name, params, sources).ranking for name in REGISTRY}
        out.update({n: self.run(n, params, sources).ranking for n in names if n not in runs})
        out["weighted"] = w.ranking
        out["RRF"] = self.rrf(params, sources)
        out.update({n: self.run(n, params, sources).ranking for n in runs})
        return out

    def evaluate(
        self,
        params: Params = Params(),
        metric_names: str | list[str] | tuple[str, ...] = metrics.DEFAULT_METRICS,
        sources: Sources = (),
    ) -> Evaluation:
        """Per-question values of the metrics for every system."""
        metric_list = metrics.parse_list(metric_names)
        ranks = self.rankings(params, sources)
        notes = tuple(w for r in ranks.values() for w in r.warnings)
        return score(self.dataset, ranks, metric_list, notes)

    def intervals(self, values: np.ndarray) -> np.ndarray:
        """stats.intervals of each row of `values` (rows x questions: one system's values of one metric), each
        row's two ends cached on the row's whole content (its bytes' digest and length), the rows not cached
        computed together. A slider step changes some systems' rows only: a k1 step leaves LSA's, an alpha step
        every system's but the weighted fusion's."""
        v = np.atleast_2d(np.asarray(values, dtype=np.float64))
        keys = [(hashlib.blake2b(np.ascontiguousarray(row).tobytes(), digest_size=16).digest(), row.size) for row in v]
        todo = [i for i, key in enumerate(keys) if not self.memo.ready("interval", key)]
        made = dict(zip(todo, stats.intervals(v[todo]))) if todo else {}
        ends = [
            self.memo.get("interval", key, lambda i=i: made[i] if i in made else stats.intervals(v[i]))
            for i, key in enumerate(keys)
        ]  # (a row dropped since it was found computes alone)
        return np.array(ends).reshape(-1, 2)

    def intervals_ahead(self) -> threading.Thread:
        """`stats.prepare` for this dataset's evaluated questions in a thread: the bootstrap's draws made before a
        page asks for its first intervals (an upload starts it once its first evaluation is done)."""
        t = threading.Thread(
            target=stats.prepare, args=(int(self.dataset.evaluated.size),), name="intervals-ahead", daemon=True
        )
        t.start()
        return t

    # --------------------------------------------------------------------------------------- a typed question

    def adhoc(
        self,
        text: str,
        params: Params = Params(),
        sources: Sources = (),
        judgements: tuple = (),
        qid: str = adhoc.QUESTION_ID,
    ) -> tuple[Dataset, dict[str, Ranking], adhoc.Scores]:
        """A typed question scored by every system that can (adhoc.py): its one-question dataset (judged by
        `judgements`, (document id, grade) pairs), every system's ranking and the scores of every document.
        The rows of scores are cached per (text, what they read: k1, b, d, dense vectors), so a fusion slider
        re-fuses without re-scoring; the scores as read at the full parameters, and the rankings per judgements too."""
        vectors = tuple(x.fingerprint for x in sources if not isinstance(x, TrecRun))
        rows = self.memo.get(
            "adhoc rows",
            (text, params.k1, params.b, params.query_words, params.k3, params.dims, vectors),
            lambda: adhoc.score_text(self, text, params, sources),
        )
        key = (text, params, vectors)
        scores = self.memo.get("adhoc", key, lambda: adhoc.for_params(rows, params))
        judged = tuple((str(d), g) for d, g in judgements)
        one, ranks = self.memo.get(
            "adhoc ranks", (key, judged, qid), lambda: adhoc.rankings(self.dataset, scores, judged, qid)
        )
        return one, ranks, scores


# registry.py and warmup.py build engines but do not import this module (it imports them): they are handed the class.
registry.Engine = warmup.Engine = Engine
