"""The process's engines: one per dataset content and text analysis, shared by every caller (the app's sessions),
at most ENGINES of them (and DERIVED engines of other judgements), admitted under the server's memory budget
(budget.py) and dropped when idle by a janitor thread.

`for_dataset` is the way in: it builds an engine once per fingerprint and analysis, or derives one from an engine of
the same texts (`Engine.derived`), and keeps it. `admit` makes room under the budget before anything is indexed,
dropping idle engines, then the least recently used; `start_janitor`'s thread drops engines no one used for
`budget.idle_seconds()` and hands the freed heap back (heap.py).
"""

from __future__ import annotations

import gc
import threading
import time
import weakref
from collections.abc import Callable

from ..core.memo import Memo
from ..core.params import Params
from ..corpus.dataset import Dataset, TrecRun
from ..corpus.text import ARTICLE_ANALYSIS, Analysis
from ..evaluation import metrics
from ..evaluation.experiment import Evaluation
from . import budget
from .budget import check_size
from .heap import release_free_memory

# The Engine class, handed over by engine.py as it is imported: engine.py imports this module (to keep the names
# importable from it, as before the split), so this module does not import engine.py back (no import cycle).
Engine = None

ENGINES = 4  # engines kept per process (one per dataset fingerprint), most recently used
DERIVED = 4  # engines derived from another of the same documents and questions (other judgements), kept besides

_ENGINES = Memo({"engine": ENGINES, "derived": DERIVED})
_ROOTS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # corpus fingerprint -> a built engine alive


def for_dataset(
    dataset: Dataset,
    progress: Callable[[str, float], None] | None = None,
    limit: int | None = None,
    analysis: Analysis = ARTICLE_ANALYSIS,
    budgeted: bool = False,
) -> Engine:
    """The engine of a dataset's content and text analysis, built once per fingerprint and analysis (at most
    ENGINES kept: coming back to an analysis still kept costs nothing); `limit`: the most characters a dataset
    may hold to be built (checked only when it is); `budgeted` (the app's server): a new engine is admitted under the
    server's memory budget first (`admit`: refused, or older engines dropped).

    A dataset whose documents and questions an engine alive already holds, with other judgements (a person
    grading documents), gets an engine derived from that one (`Engine.derived`: nothing re-tokenised), kept
    apart (at most DERIVED), so grading never pushes other datasets' engines out."""

    def key(fingerprint: str):  # the article's analysis keyed by the fingerprint alone, as before analyses existed
        return fingerprint if analysis.is_article else (fingerprint, analysis)

    start_janitor()
    corpus = key(dataset.corpus_fingerprint)
    root = _ROOTS.get(corpus)
    if root is not None and root.fingerprint != dataset.fingerprint:
        # the root counts among the ENGINES kept while a derived engine of it is in use (it shares its index)
        _ENGINES.get("engine", key(root.fingerprint), lambda: root).last_used = time.monotonic()
        engine = _ENGINES.get("derived", key(dataset.fingerprint), lambda: Engine.derived(root, dataset))
    else:
        engine = _ENGINES.get(
            "engine", key(dataset.fingerprint), lambda: root or _admitted(dataset, progress, limit, analysis, budgeted)
        )
        _ROOTS[corpus] = engine
    engine.last_used = time.monotonic()
    return engine


def _admitted(dataset: Dataset, progress, limit: int | None, analysis: Analysis, budgeted: bool) -> Engine:
    """A new engine, admitted first under the server's memory budget when `budgeted` (`admit`)."""
    if limit is not None:
        check_size(dataset, limit)
    if budgeted:
        admit(dataset)
    return Engine(dataset, progress, limit, analysis)


def held() -> int:
    """The bytes the kept engines hold by the cost model (derived engines share their root's)."""
    return sum(e.cost for _, e in _ENGINES.items("engine"))


def admit(dataset: Dataset) -> int:
    """Make room for the dataset's engine under the memory budget (budget.py) before anything is indexed: refuse it
    when it would not fit with every other engine dropped, else drop idle engines, then the least recently used,
    until it fits. Returns its cost (the bytes it will hold)."""
    cost, limit = budget.COST.of(dataset), budget.budget()
    budget.refuse_above(dataset, cost, limit)
    drop_idle()
    for key, e in _ENGINES.items("engine"):  # least recently used first
        if held() + cost <= limit:
            break
        drop(key, e)
    release_free_memory()
    return cost


def drop(key, engine: Engine) -> None:
    """Stop keeping an engine and the engines derived from it (they hold its index)."""
    _ENGINES.discard("engine", key)
    for k, d in _ENGINES.items("derived"):
        if d.root is engine:
            _ENGINES.discard("derived", k)


def drop_idle(now: float | None = None) -> int:
    """Drop the engines no one used for budget.idle_seconds() (their derived engines with them); how many."""
    now = time.monotonic() if now is None else now
    limit = budget.idle_seconds()
    dropped = 0
    for k, d in _ENGINES.items("derived"):
        if now - d.last_used > limit:
            dropped += _ENGINES.discard("derived", k)
    for k, e in _ENGINES.items("engine"):
        if now - e.last_used > limit and not any(d.root is e for _, d in _ENGINES.items("derived")):
            drop(k, e)
            dropped += 1
    return dropped


IDLE_HOOKS: list[Callable[[], None]] = []  # called after the janitor dropped idle engines (the app clears its caches)
_JANITOR: list[threading.Thread] = []
_JANITOR_LOCK = threading.Lock()


def start_janitor() -> None:
    """Once per process, a daemon thread that drops idle engines (`drop_idle`) and hands the freed heap back to the
    system, every quarter of the idle time (at most a minute)."""
    with _JANITOR_LOCK:
        if _JANITOR and _JANITOR[0].is_alive():
            return

        def work() -> None:
            while True:
                time.sleep(min(60.0, budget.idle_seconds() / 4))
                if drop_idle():
                    for hook in list(IDLE_HOOKS):
                        hook()
                    gc.collect()
                    release_free_memory()

        t = threading.Thread(target=work, name="retrieval-janitor", daemon=True)
        _JANITOR[:] = [t]
        t.start()


def built(dataset: Dataset, analysis: Analysis = ARTICLE_ANALYSIS) -> bool:
    """Whether the engine of this dataset and analysis is kept (`for_dataset` would return it without building)."""
    key = dataset.fingerprint if analysis.is_article else (dataset.fingerprint, analysis)
    corpus = dataset.corpus_fingerprint if analysis.is_article else (dataset.corpus_fingerprint, analysis)
    return _ENGINES.ready("engine", key) or _ENGINES.ready("derived", key) or corpus in _ROOTS


def evaluate(
    dataset: Dataset,
    params: Params = Params(),
    metric_names: str | list[str] = metrics.DEFAULT_METRICS,
    runs: tuple[TrecRun, ...] = (),
) -> Evaluation:
    """The whole evaluation of every system with the given parameters, on the dataset's engine for their text
    analysis (built once per content and analysis and kept: `for_dataset`)."""
    return for_dataset(dataset, analysis=Analysis(*params.analysis)).evaluate(params, metric_names, runs)
